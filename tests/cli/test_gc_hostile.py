"""gc against an attacker with write access to the cache dir: nothing outside the plan goes.

Synthetic caches (tests/synth.py): these attacks swap dirs under a running gc,
which a cache torch wrote cannot stage by itself.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.prune.execute import execute_plan
from fxcache_core.prune.plan import plan_gc, plan_rm
from fxcache_core.prune.policy import GcPolicy
from tests.synth import fake_key, fx_entry_bytes, write_entry

DAY = 86400.0


def _old(path: Path, days: float = 10) -> None:
    t = time.time() - days * DAY
    os.utime(path, (t, t))


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (symlinks not followed): relative path -> sha256."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath, f)
            if p.is_symlink():
                out[str(p.relative_to(root))] = "symlink -> " + os.readlink(p)
            else:
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _twin(src: Path, dst: Path) -> None:
    """A different file (another inode) with the same name, size and mtime as ``src``."""
    dst.write_bytes(b"V" * src.stat().st_size)
    st = src.stat()
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def _fx_cache(root: Path, keys: int, per_key: int) -> dict[str, list[Path]]:
    """FX keys with old entries (their content is junk: decoding fails fast)."""
    out = {}
    for k in range(keys):
        key = fake_key(KeyKind.FX_GRAPH, f"key{k}")
        files = []
        for i in range(per_key):
            p = write_entry(root, KeyKind.FX_GRAPH, key, f"entry {k} {i}".encode().ljust(64, b"."))
            _old(p)
            files.append(p)
        out[key] = files
    return out


def test_a_key_dir_swapped_for_a_symlink_after_the_plan_loses_nothing_outside_the_plan(tmp_path):
    root = tmp_path / "cache"
    keys = _fx_cache(root, 2, 3)
    (victim_key, victims), (other_key, others) = keys.items()
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY))
    assert {r.file.path for r in plan.removals} == set(victims) | set(others)
    # After the plan: the victim key dir becomes a symlink to another dir inside
    # the cache, holding files of the same names, sizes and mtimes (never planned).
    decoy = root / "fxgraph" / "decoy"
    decoy.mkdir()
    for p in victims:
        _twin(p, decoy / p.name)
    key_dir = victims[0].parent
    os.rename(key_dir, tmp_path / "moved-away")
    os.symlink(decoy, key_dir)
    before = _tree(decoy)
    res = execute_plan(plan)
    assert _tree(decoy) == before  # nothing it holds was planned: nothing goes
    assert {r.file.path for r in res.removed} == set(others)
    assert {p for p, _ in res.skipped} == set(victims)
    assert all("not a directory" in why for _, why in res.skipped)
    assert res.failed == ()


def test_a_key_dir_replaced_by_another_dir_holding_the_same_file_is_refused(tmp_path):
    """The dir itself is checked, not only the file: a new dir holding a hard link
    to the planned file (same inode, size, mtime) is another dir than planned."""
    root = tmp_path / "cache"
    (key, files), = _fx_cache(root, 1, 2).items()
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY))
    key_dir = files[0].parent
    os.rename(key_dir, tmp_path / "moved-away")
    key_dir.mkdir()
    for p in files:
        os.link(tmp_path / "moved-away" / p.name, p)
    res = execute_plan(plan)
    assert res.removed == () and all(p.exists() for p in files)
    assert all("another dir than when the plan was made" in why for _, why in res.skipped)


def test_a_new_file_with_the_same_name_size_and_mtime_is_kept(tmp_path):
    root = tmp_path / "cache"
    (key, files), = _fx_cache(root, 1, 2).items()
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY))
    target = files[0]
    new = target.parent / ".new"
    _twin(target, new)
    os.rename(new, target)  # another inode under the planned name
    kept = target.read_bytes()
    res = execute_plan(plan)
    assert target.read_bytes() == kept
    assert [(p, why) for p, why in res.skipped] == [
        (target, "replaced since the plan (another file has its name now)")]
    assert [r.file.path for r in res.removed] == [files[1]]


def test_a_planned_file_swapped_for_a_symlink_is_not_followed(tmp_path):
    root = tmp_path / "cache"
    (key, files), = _fx_cache(root, 1, 1).items()
    outside = tmp_path / "precious"
    _twin(files[0], outside)
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY))
    files[0].unlink()
    os.symlink(outside, files[0])
    res = execute_plan(plan)
    assert outside.exists() and files[0].is_symlink()
    assert [why for _, why in res.skipped] == ["not a regular file"]


def test_a_cache_dir_that_cannot_be_opened_fails_every_path_without_raising(tmp_path):
    root = tmp_path / "cache"
    (key, files), = _fx_cache(root, 1, 2).items()
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY))
    os.rename(root, tmp_path / "elsewhere")
    res = execute_plan(plan)
    assert res.removed == () and len(res.failed) == 2
    assert all(why.startswith("cannot open the cache dir") for _, why in res.failed)


# --- the race: a second process swaps a key dir with a symlink while gc runs ------

_RENAME_EXCHANGE = 2
_ATTACKER = textwrap.dedent("""
    import ctypes, errno, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD = -100
    pairs = [(a.encode(), b.encode()) for a, b in zip(sys.argv[3::2], sys.argv[4::2])]
    stop, limit = sys.argv[1], int(sys.argv[2])
    swapped = [False] * len(pairs)
    live = [True] * len(pairs)
    n = 0

    def exchange(i, first=False):
        a, b = pairs[i]
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, 2) != 0:
            e = ctypes.get_errno()
            if first or e != errno.ENOENT:
                print("renameat2 failed:", os.strerror(e), flush=True)
                sys.exit(3)
            live[i] = False  # gc removed the emptied key dir (while it was in place)
            return
        swapped[i] = not swapped[i]

    exchange(0, True); exchange(0, True)
    print("ready", flush=True)
    while n < limit and not os.path.exists(stop) and any(live):
        for i in range(len(pairs)):
            if live[i]:
                exchange(i)
                n += 1
    for i in range(len(pairs)):
        if swapped[i]:
            exchange(i)
    print("swaps", n, flush=True)
""")


def _renameat2_available() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return hasattr(ctypes.CDLL(None), "renameat2")
    except OSError:
        return False


@pytest.mark.skipif(not _renameat2_available(),
                    reason="needs renameat2(RENAME_EXCHANGE) (Linux, glibc 2.28+) to swap dirs atomically")
def test_gc_racing_a_process_that_swaps_key_dirs_for_symlinks_never_deletes_outside(tmp_path, monkeypatch):
    """A second process swaps key dirs with symlinks to victim dirs outside the
    cache (renameat2 RENAME_EXCHANGE, in a bounded loop) while gc executes a plan
    of thousands of files (a synthetic cache: 8 keys x 500 entries). The victim
    dirs hold files of the same names, sizes and mtimes as the planned ones."""
    monkeypatch.setenv("FXCACHE_JOBS", "1")
    root = tmp_path / "cache"
    keys = _fx_cache(root, 8, 500)
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(older_than_s=DAY))
    planned = {str(r.file.path) for r in plan.removals}
    assert len(planned) == 4000
    pairs = []
    for n, files in enumerate(list(keys.values())[:4]):  # half the keys are attacked
        victim = tmp_path / f"victim{n}"
        victim.mkdir()
        for p in files:
            _twin(p, victim / p.name)
        link = tmp_path / f"link{n}"
        os.symlink(victim, link)
        pairs += [str(files[0].parent), str(link)]
    victims_before = {n: _tree(tmp_path / f"victim{n}") for n in range(4)}
    stop = tmp_path / "stop"
    attacker = subprocess.Popen([sys.executable, "-c", _ATTACKER, str(stop), "5000000", *pairs],
                                stdout=subprocess.PIPE, text=True)
    try:
        first = attacker.stdout.readline().strip()
        if first.startswith("renameat2 failed"):
            pytest.skip(f"this file system cannot exchange a dir and a symlink: {first}")
        assert first == "ready"
        t0 = time.perf_counter()
        res = execute_plan(plan)  # never raises: a refusal is a skipped path
        took = time.perf_counter() - t0
    finally:
        stop.touch()
        out, _ = attacker.communicate(timeout=60)
    assert attacker.returncode == 0, out
    swaps = int(out.split()[-1])
    assert swaps > 0, out  # the attack ran during the execution
    for n in range(4):
        assert _tree(tmp_path / f"victim{n}") == victims_before[n]  # nothing outside was touched
    removed = {str(r.file.path) for r in res.removed}
    assert removed <= planned
    # What is gone from the cache is exactly what gc says it removed.
    left = {str(root / p) for p in _tree(root)}
    assert planned - left == removed
    assert len(res.removed) + len(res.skipped) + len(res.failed) == len(planned)
    assert all("not a directory" in why or "another dir" in why or "is gone" in why
               for _, why in res.skipped), res.skipped[:5]
    assert took < 60


def test_rm_locates_what_it_removes(tmp_path):
    root = tmp_path / "cache"
    key = fake_key(KeyKind.FX_GRAPH, "k")
    p = write_entry(root, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 2", key))
    scan = scan_cache(root)
    plan = plan_rm(Catalog(scan), scan.find(key))
    (r,) = plan.removals
    assert r.at is not None and r.at.parts == ("fxgraph", key[1:3], key, p.name)
    assert len(r.at.dirs) == 4
    assert r.at.dirs[-1] == (os.stat(p.parent).st_dev, os.stat(p.parent).st_ino)
    res = execute_plan(plan)
    assert [x.file.path for x in res.removed] == [p]
    assert not (root / "fxgraph" / key[1:3]).exists() and (root / "fxgraph").is_dir()


# --- "could not look" is not "absent" ------------------------------------------------


class _Denied:
    """Makes a dir behave as if it had mode 000 for the current user, also for root
    (root ignores permission bits, and these tests run as root in CI): listing it, or
    stat'ing or opening anything in or below it, raises PermissionError."""

    def __init__(self, monkeypatch, path: Path):
        self.prefix = os.fspath(path)
        for name in ("scandir", "listdir", "lstat", "stat", "open"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, self._wrap(real, listing=name in ("scandir", "listdir")))

    def _hit(self, p, listing: bool) -> bool:
        if isinstance(p, int) or p is None:
            return False
        s = os.path.abspath(os.fspath(p))
        return (listing and s == self.prefix) or s.startswith(self.prefix + os.sep)

    def _wrap(self, real, listing: bool):
        def call(p=".", *a, **kw):
            if kw.get("dir_fd") is None and self._hit(p, listing):
                raise PermissionError(13, "Permission denied", os.fspath(p))
            return real(p, *a, **kw)
        return call


@pytest.fixture
def linked(tmp_path):
    """An FX entry and the AOTAutograd entry that loads it."""
    from tests.synth import aot_entry_bytes

    root = tmp_path / "cache"
    fx = fake_key(KeyKind.FX_GRAPH, "A")
    fp = write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx))
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "B")
    ap = write_entry(root, KeyKind.AOT_AUTOGRAD, aot, aot_entry_bytes("L['t0'] <= 8", (fx, "L['t0'] <= 8")))
    for p in (fp, ap):
        _old(p)
    return root, fx, fp, ap


@pytest.mark.parametrize("what", ["fxgraph", "bucket", "key dir"])
def test_an_fx_dir_that_cannot_be_listed_makes_no_aot_entry_dangling(linked, monkeypatch, what):
    """The default policy (--unreadable --dangling) keeps the AOTAutograd entry,
    with a note, when the dir its FX entry is in cannot be listed (emulated with a
    PermissionError from every listing and stat below it: tests run as root)."""
    root, fx, fp, ap = linked
    denied = {"fxgraph": root / "fxgraph", "bucket": root / "fxgraph" / fx[1:3],
              "key dir": fp.parent}[what]
    with monkeypatch.context() as m:
        _Denied(m, denied)
        scan = scan_cache(root)
        plan = plan_gc(Catalog(scan), GcPolicy.default())
    assert plan.removals == ()
    assert [p for p, _ in plan.kept] == [ap]
    assert "could not list or read" in plan.kept[0][1]
    assert any(str(s.path) == str(denied) for s in scan.skipped)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 dir anyway (see the emulated variant)")
def test_an_fx_dir_with_mode_000_makes_no_aot_entry_dangling(linked):
    root, fx, fp, ap = linked
    bucket = root / "fxgraph" / fx[1:3]
    bucket.chmod(0)
    try:
        plan = plan_gc(Catalog(scan_cache(root)), GcPolicy.default())
    finally:
        bucket.chmod(0o755)
    assert plan.removals == () and [p for p, _ in plan.kept] == [ap]


@pytest.mark.parametrize("gone", ["fxgraph", "bucket", "key dir"])
def test_an_fx_key_proven_gone_by_listings_makes_its_aot_entry_dangling(linked, gone):
    import shutil

    root, fx, fp, ap = linked
    shutil.rmtree({"fxgraph": root / "fxgraph", "bucket": root / "fxgraph" / fx[1:3],
                   "key dir": fp.parent}[gone])
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy.default())
    assert [r.file.path for r in plan.removals] == [ap]
    assert plan.removals[0].reasons[0].startswith("dangling: its forward FX entry")
    assert plan.kept == ()


# --- what a deletion rests on comes from the files, not the index ----------------------


def test_an_index_row_naming_no_fx_key_does_not_leave_its_aot_entry_dangling(linked, tmp_path, monkeypatch):
    """A doctored index row (the AOTAutograd entry's, with the file's own size, mtime
    and inode) says it loads no FX key: `rm FXKEY --yes` still removes it with the
    FX entry it loads, as with an honest index."""
    from dataclasses import replace

    from fxcache_core.prune import plan as gc_mod
    from fxcache_core.state.index import Index, default_index_path
    from tests.helpers import run_fxcache

    root, fx, fp, ap = linked
    env = {"FXCACHE_INDEX_DIR": str(tmp_path / "idx"), "FXCACHE_JOBS": "1"}
    assert run_fxcache("--cache-dir", str(root), "ls", "--check", env=env).returncode == 0  # fills the index
    scan = scan_cache(root)
    a = next(e for e in scan.entries() if e.path == ap)
    truth = Catalog(scan).load(a)
    assert truth.forward is not None and truth.forward.key == fx
    monkeypatch.setenv("FXCACHE_INDEX_DIR", env["FXCACHE_INDEX_DIR"])
    idx_path = default_index_path(root)
    idx = Index(idx_path)
    idx.put(a, a.name, replace(truth, forward=None, backward=None))  # its true hash, a false body
    idx.close()
    # Planned from the index alone, the FX entry would go and leave its loader dangling...
    fooled = Catalog(scan_cache(root), Index(idx_path))
    assert {r.file.path for r in gc_mod._plan_rm(fooled, fooled.scan.find(fx), ()).removals} == {fp}
    # ...but which AOTAutograd entries load a removed FX entry is read from their files.
    p = run_fxcache("--cache-dir", str(root), "rm", fx, "--yes", env=env)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert not fp.exists() and not ap.exists()


# --- file names that are not valid UTF-8 --------------------------------------------------


def test_a_file_name_that_is_not_utf8_stops_neither_the_index_nor_gc(linked, tmp_path):
    """POSIX names are bytes: printf x > "$KEYDIR/$(printf '\\xff')". The index
    skips such an entry, gc plans and deletes it like any other file."""
    from fxcache_core.state.index import Index

    root, fx, fp, ap = linked
    odd = os.fsdecode(os.fsencode(str(fp.parent)) + b"/\xff\x1b[31m")
    with open(os.fsencode(odd), "wb") as f:
        f.write(b"x")
    _old(Path(odd))
    idx = Index(tmp_path / "index.sqlite")
    cat = Catalog(scan_cache(root), idx)
    (e,) = [e for e in cat.scan.entries() if e.file.where == odd]
    assert cat.load(e).cause == "corrupt"
    idx.close()
    for policy in (GcPolicy.default(), GcPolicy(older_than_s=DAY), GcPolicy(max_size_bytes=0),
                   GcPolicy(keep_last=0), GcPolicy(unreadable=True)):
        idx = Index(tmp_path / "index.sqlite")
        plan = plan_gc(Catalog(scan_cache(root), idx), policy)
        idx.close()
        assert odd in {r.file.where for r in plan.removals}, policy
    res = execute_plan(plan_gc(Catalog(scan_cache(root)), GcPolicy.default()))
    assert [r.file.where for r in res.removed] == [odd] and not os.path.lexists(odd)
    assert fp.exists() and ap.exists()
