"""gc plans from index rows only where they prove the file's bytes, and never deletes on stale facts.

Synthetic entries (tests/synth.py): the trust model is fxcache's, not torch's, and an
AOTAutograd entry rewritten in place with its old size and mtime put back, a row
planted in the index, a network file system or a rewrite landing between plan and
execution are not what a compile here produces. In each case the AOTAutograd entry
`a`'s bytes load the FX key F, so `rm F` must take `a` along (else torch is left
with an entry whose FX entry is gone); a row saying it loads G instead is the lie
gc must not build on unless the row proves the bytes. The short sleeps let the
kernel's timestamp clock tick (10 ms at most), so that a change moves ctime and a
reading leaves the racily clean window; nothing here measures time.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import FxRef
from fxcache_core.prune.execute import MAX_REPLANS, execute_plan
from fxcache_core.prune.plan import plan_rm
from fxcache_core.state.index import Index
from fxcache_core.state.trust import identity_is_proof, mount_types
from tests.helpers import age, plan_gc_on
from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry

TICK_S = 0.05  # past the kernel's timestamp tick and RACY_FINE_NS
F, G = fake_key(KeyKind.FX_GRAPH, "F"), fake_key(KeyKind.FX_GRAPH, "G")
GUARDS = "L['t0'] == 2"


def _loads(key: str) -> bytes:
    """An AOTAutograd entry loading FX key ``key`` (the same length for F and G)."""
    return aot_entry_bytes(None, (key, GUARDS))


def _cache(root, a_loads: str):
    """FX keys F and G (one entry each) and an AOTAutograd entry `a` loading ``a_loads``;
    (F's entry, a's path)."""
    fp = write_entry(root, KeyKind.FX_GRAPH, F, fx_entry_bytes(GUARDS, F))
    write_entry(root, KeyKind.FX_GRAPH, G, fx_entry_bytes(GUARDS, G))
    ap = write_entry(root, KeyKind.AOT_AUTOGRAD, fake_key(KeyKind.AOT_AUTOGRAD, "A"), _loads(a_loads))
    return fp, ap


def _warm(root, idx) -> None:
    """Index every entry (each reading proven: the files were written a tick before)."""
    time.sleep(TICK_S)
    cat = Catalog(scan_cache(root), Index(idx))
    cat.read_ahead(cat.scan.entries())
    cat.index.close()


def _plan_rm_f(root, idx):
    cat = Catalog(scan_cache(root), Index(idx))
    try:
        return plan_rm(cat, cat.scan.find(F))
    finally:
        if cat.index is not None:
            cat.index.close()


def _removed(plan) -> set[str]:
    return {r.file.where for r in plan.removals}


def _plant(root, idx, ap, read_ns_after_change: int) -> None:
    """A row for `a` with its file's identity and true hash, saying it loads G, as of a
    reading that ended ``read_ns_after_change`` ns after the file's last change."""
    scan = scan_cache(root)
    a = next(e for e in scan.entries() if e.file.where == str(ap))
    truth = Catalog(scan).load(a)
    assert truth.forward is not None and truth.forward.key == F
    idx_ = Index(idx)
    idx_.put(a, a.name, replace(truth, forward=FxRef(G, GUARDS)),
             read_ns=max(a.file.mtime_ns, a.file.ctime_ns) + read_ns_after_change)
    idx_.close()


def test_a_row_proven_by_the_files_identity_is_what_gc_plans_from(tmp_path):
    """The control of the tests below: a row whose reading ended well after the file's
    last change, its identity the file's, on a local file system, is taken as the
    file's bytes (gc reads nothing again), even where it lies."""
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    fp, ap = _cache(root, a_loads=F)
    _plant(root, idx, ap, 10**9)
    assert _removed(_plan_rm_f(root, idx)) == {str(fp)}


def test_gc_does_not_trust_a_row_when_the_file_was_rewritten_with_its_old_size_and_mtime(tmp_path):
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    fp, ap = _cache(root, a_loads=G)
    _warm(root, idx)
    assert _removed(_plan_rm_f(root, idx)) == {str(fp)}  # a loads G: it stays
    before = os.stat(ap)
    time.sleep(TICK_S)
    with open(ap, "r+b") as f:  # in place: same inode, same size; now it loads F
        f.write(_loads(F))
    os.utime(ap, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(ap)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (before.st_ino, before.st_size, before.st_mtime_ns)
    assert after.st_ctime_ns != before.st_ctime_ns
    time.sleep(TICK_S)
    assert _removed(_plan_rm_f(root, idx)) == {str(fp), str(ap)}


def test_gc_does_not_trust_a_racily_clean_row(tmp_path):
    """A row whose reading ended within the timestamp granularity of the file's last
    change (one fxcache never writes: a reading is indexed only out of that window)."""
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    fp, ap = _cache(root, a_loads=F)
    _plant(root, idx, ap, 1_000_000)  # 1 ms after the change
    assert _removed(_plan_rm_f(root, idx)) == {str(fp), str(ap)}


def test_gc_does_not_trust_an_index_that_is_not_fxcaches(tmp_path):
    """The same proven-looking row, in an index file its group may write: not fxcache's."""
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    fp, ap = _cache(root, a_loads=F)
    _plant(root, idx, ap, 10**9)
    os.chmod(idx, 0o660)
    assert _removed(_plan_rm_f(root, idx)) == {str(fp), str(ap)}


def test_gc_reads_again_on_a_file_system_whose_identity_is_no_proof(tmp_path, monkeypatch):
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    fp, ap = _cache(root, a_loads=F)
    _plant(root, idx, ap, 10**9)
    monkeypatch.setattr("fxcache_core.prune.plan.identity_is_proof", lambda devs: dict.fromkeys(devs, False))
    assert _removed(_plan_rm_f(root, idx)) == {str(fp), str(ap)}


MOUNTINFO = """\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 0:40 / /mnt/nfs rw,relatime shared:5 - nfs4 server:/export rw,vers=4.2
41 27 0:41 / /mnt/sshfs rw,nosuid,nodev - fuse.sshfs user@host:/ rw
42 27 0:42 / /mnt/smb rw - cifs //host/share rw
43 27 0:43 / /var/lib/overlay rw master:1 - overlay overlay rw,lowerdir=/a
44 27 254:0 /srv /srv/again rw - nfs host:/srv rw
not a line of mountinfo
"""


def test_only_local_file_systems_let_an_identity_prove_a_files_bytes():
    mk = os.makedev
    assert mount_types(MOUNTINFO)[mk(0, 40)] == {"nfs4"}
    proof = identity_is_proof([mk(254, 0), mk(0, 40), mk(0, 41), mk(0, 42), mk(0, 43), mk(9, 9)], MOUNTINFO)
    assert proof == {mk(254, 0): False,  # also mounted as nfs: not sure, so no
                     mk(0, 40): False, mk(0, 41): False, mk(0, 42): False,
                     mk(0, 43): True,
                     mk(9, 9): False}  # not in the mount table: unsure
    assert identity_is_proof([mk(254, 0)], MOUNTINFO.replace("- nfs host", "- ext4 host")) == {mk(254, 0): True}
    assert identity_is_proof([mk(254, 0)], "") == {mk(254, 0): False}


def test_a_change_between_plan_and_execution_plans_again(tmp_path):
    """`a` is replaced (written aside and renamed over its name, as torch's write_atomic
    does) after a plan that keeps it: execution sees a file the plan read changed,
    and never deletes F's entry on the stale fact that nothing loads it."""
    root, idx = tmp_path / "c", tmp_path / "index.sqlite"
    fp, ap = _cache(root, a_loads=G)
    _warm(root, idx)
    plan = _plan_rm_f(root, idx)
    assert _removed(plan) == {str(fp)}
    tmp = ap.with_name(".tmp")
    tmp.write_bytes(_loads(F))
    os.replace(tmp, ap)

    stale = execute_plan(plan)  # no way to plan again: nothing goes
    assert stale.removed == () and fp.exists() and ap.exists()
    assert [w.code for _, w in stale.skipped] == ["facts-changed-since-plan"]
    busy = execute_plan(plan, replan=lambda: plan)  # every plan made rests on changed files
    assert busy.removed == () and busy.replanned == MAX_REPLANS and fp.exists()

    res = execute_plan(plan, replan=lambda: _plan_rm_f(root, idx))
    assert res.replanned == 1 and res.plan is not None
    assert {r.file.where for r in res.removed} == {str(fp), str(ap)}
    assert not fp.exists() and not ap.exists()


def test_execution_keeps_a_planned_file_rewritten_with_its_old_size_and_times(tmp_path):
    """An entry the plan removes (unused for days) is rewritten in place after the plan,
    its size, atime and mtime put back: only its ctime tells, and the check right before
    its deletion reads it, so the rewrite stays."""
    root = tmp_path / "c"
    old = write_entry(root, KeyKind.FX_GRAPH, F, fx_entry_bytes("L['t0'] > 100", F))
    age(old, 10 * 86400.0)
    plan = plan_gc_on(root, older_than_s=3 * 86400.0)
    assert _removed(plan) == {str(old)}
    before = os.stat(old)
    time.sleep(TICK_S)
    with open(old, "r+b") as f:  # in place: same inode, same size
        f.write(fx_entry_bytes("L['t0'] > 101", F))
    os.utime(old, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(old)
    assert (after.st_ino, after.st_size, after.st_mtime_ns, after.st_atime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns, before.st_atime_ns)
    res = execute_plan(plan)
    assert res.removed == () and old.exists()
    assert [(p, w.code) for p, w in res.skipped] == [(old, "changed-since-plan")]
