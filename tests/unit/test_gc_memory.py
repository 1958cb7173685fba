"""What gc holds per file: the scan's record of each entry only, and its units made once.

Synthetic entries (tests/synth.py) beside generated code and a Triton layout: the
memory of a plan is fxcache's, not torch's, and the mix of kinds is one a CPU
compile here does not write (no Triton).
"""

from __future__ import annotations

import os
from dataclasses import replace

from fxcache_core.cache.inventory import ContentKind, take_inventory
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_artifacts, scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.prune import units as units_mod
from fxcache_core.prune.plan import plan_gc
from fxcache_core.prune.policy import GcPolicy
from tests.synth import (
    aot_entry_bytes,
    fake_key,
    fx_entry_bytes,
    install_triton_layout,
    write_entry,
)


def _cache(root):
    fx = fake_key(KeyKind.FX_GRAPH, "F")
    fp = write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] == 2", fx))
    write_entry(
        root,
        KeyKind.AOT_AUTOGRAD,
        fake_key(KeyKind.AOT_AUTOGRAD, "A"),
        aot_entry_bytes(None, (fx, "L['t0'] == 2")),
    )
    (fp.parent / ".tmp1234").write_bytes(b"half written")  # a temp file of an entry key dir
    os.link(fp, fp.parent.parent.parent / "linked")  # a second name: counted once either way
    code = root / "ab" / ("cab" + "c" * 49 + ".py")
    code.parent.mkdir()
    code.write_text("x = 1\n")
    install_triton_layout(root / "triton" / "0")


def test_gcs_inventory_keeps_no_record_of_the_entry_files_and_counts_them_all(tmp_path):
    _cache(tmp_path)
    full = take_inventory(tmp_path)
    lean = take_inventory(tmp_path, entries=False)
    assert lean.totals == full.totals and lean.entries_left_out and not full.entries_left_out
    in_key_dirs = [
        i for i in full.items if i.parts[0] in ("fxgraph", "aotautograd") and len(i.parts) > 2
    ]
    assert {i.kind for i in in_key_dirs} == {ContentKind.FX, ContentKind.AOT, ContentKind.TEMP}
    assert lean.items == tuple(i for i in full.items if i not in in_key_dirs)


def test_the_inventory_takes_the_records_it_is_given_for_files_unchanged_since(tmp_path):
    _cache(tmp_path)
    code = scan_artifacts(tmp_path)
    inv = take_inventory(tmp_path, records={a.file.where: a.file for a in code})
    by_path = {i.file.where: i.file for i in inv.items}
    assert code and all(by_path[a.file.where] is a.file for a in code)
    stale = {
        a.file.where: replace(a.file, size=a.file.size + 1) for a in code
    }  # not what lstat says now
    again = take_inventory(tmp_path, records=stale)
    assert again == take_inventory(tmp_path) and not any(
        i.file is stale.get(i.file.where) for i in again.items
    )


def test_a_plan_makes_the_inventorys_units_once(tmp_path, monkeypatch):
    _cache(tmp_path)
    calls = []
    real = units_mod.units
    monkeypatch.setattr(units_mod, "units", lambda inv: calls.append(inv) or real(inv))
    plan = plan_gc(Catalog(scan_cache(tmp_path)), GcPolicy(max_size_bytes=0))
    assert plan.removals and len(calls) == 1


def test_the_key_dirs_the_scan_read_whole_are_counted_from_its_lstat_of_their_files(tmp_path):
    _cache(tmp_path)
    aot = tmp_path / "aotautograd"
    odd = [fake_key(KeyKind.AOT_AUTOGRAD, s) for s in "BCDE"]
    for k in odd:
        write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, k, b"x" * 5000)
    (aot / odd[0] / "sub").mkdir()  # a dir in a key dir: its files are walked (kept as unknown)
    (aot / odd[0] / "sub" / "f").write_text("deeper")
    (aot / odd[1] / "link").symlink_to(
        aot / odd[1] / os.listdir(aot / odd[1])[0]
    )  # a symlinked entry
    os.mkfifo(aot / odd[2] / "fifo")
    os.link(
        aot / odd[3] / os.listdir(aot / odd[3])[0], aot / odd[0] / "second-name"
    )  # linked across key dirs
    (tmp_path / "aotautograd" / fake_key(KeyKind.AOT_AUTOGRAD, "L")).symlink_to(aot / odd[3])
    scan = scan_cache(tmp_path, tally=True)
    tallies = {k.where: k.tally for k in scan.keys if k.tally is not None}
    assert {k.key for k in scan.keys if k.tally is None} == {
        *odd[:3],
        fake_key(KeyKind.AOT_AUTOGRAD, "L"),
    }
    assert all(k.tally is None for k in scan_cache(tmp_path).keys)  # only when asked
    walked = take_inventory(tmp_path, entries=False)
    counted = take_inventory(tmp_path, entries=False, tallies=tallies)
    assert counted == walked and counted.totals == take_inventory(tmp_path).totals
    assert any(i.parts[-1] == "f" for i in counted.items)  # the key dir with a subdir was walked
    # A key dir replaced since the scan (another inode) is walked, not counted from the tally.
    k = scan.key(fake_key(KeyKind.AOT_AUTOGRAD, "A"))
    moved = str(tmp_path / "moved")
    os.rename(k.where, moved)
    os.mkdir(k.where)
    (tmp_path / "aotautograd" / k.key / "other").write_bytes(b"y" * 3)
    assert take_inventory(tmp_path, entries=False, tallies=tallies) == take_inventory(
        tmp_path, entries=False
    )
