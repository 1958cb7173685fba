"""df's walk and gc's plan and delete against an attacker with write access to the cache dir.

Each test performs one attack of issue 23 (items 11 to 14) on a synthetic cache
(tests/synth.py, and Triton's own layout: tools/make_triton_layout.py). The
races are made deterministic: a hook swaps what the attacker swaps exactly
between the walk's look at a name and its use of it. Every test runs under an
alarm (a hang fails it), and checks that nothing outside the cache changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import pytest

from fxcache_core.cache.inventory import take_inventory
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.prune import rules
from fxcache_core.prune.disk_usage import measure
from fxcache_core.prune.execute import execute_plan
from fxcache_core.prune.plan import plan_gc
from fxcache_core.prune.policy import GcPolicy
from tests.cli_run import run_measured
from tests.helpers import age, alarm, plan_gc_on
from tests.synth import fake_key, fx_entry_bytes, install_triton_layout, write_entry

DAY = 86400.0


def tree(root: Path) -> dict[str, str]:
    """Every name under ``root`` (symlinks not followed) -> a checksum of a file, or what it is."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = Path(dirpath, n)
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "symlink -> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                st = p.stat()
                with open(p, "rb") as f:  # a sparse GB-sized victim: its first MiB, size and mtime
                    out[rel] = f"{hashlib.sha256(f.read(1 << 20)).hexdigest()} {st.st_size} {st.st_mtime_ns}"
    return out


def _triton_cache(tmp_path: Path) -> tuple[Path, list[Path]]:
    root = tmp_path / "cache"
    dirs = install_triton_layout(root / "triton" / "0")
    key = fake_key(KeyKind.FX_GRAPH, "walk")
    write_entry(root, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 1", key))
    age([root], 10 * DAY)
    return root, dirs


# --- 11. a Triton group file swapped for a FIFO between the walk and its read -------------


def test_a_group_file_swapped_for_a_fifo_after_the_walk_is_never_opened_blocking(tmp_path, monkeypatch):
    """The walk saw a regular group file in a kept Triton dir; right after it, the
    attacker puts a FIFO under its name. Reading it would block df and gc forever."""
    root, dirs = _triton_cache(tmp_path)
    age([dirs[1]], 600)  # used ten minutes ago: kept, so its group file is read
    grp = next(dirs[1].glob("__grp__*.json"))
    real = rules.take_inventory

    def walk_then_swap(*a, **kw):
        inv = real(*a, **kw)
        if not grp.is_fifo():
            grp.unlink()
            os.mkfifo(grp)
        return inv

    monkeypatch.setattr(rules, "take_inventory", walk_then_swap)
    with alarm(20):
        plan = plan_gc_on(root, older_than_s=DAY, artifacts=True)  # gc --dry-run
        assert grp.is_fifo()
        assert not any(str(dirs[1]) in r.file.where for r in plan.removals)
        assert any(str(dirs[0]) in r.file.where for r in plan.removals)
        grp.unlink()
        grp.write_text("{}")
        rep = measure(Catalog(scan_cache(root)))  # df
        assert grp.is_fifo() and rep.totals.files > 0
        res = execute_plan(plan_gc_on(root, older_than_s=DAY, artifacts=True))  # gc --yes
        assert res.failed == () and res.removed


def test_group_files_that_are_not_triton_json_name_nothing(tmp_path):
    """Nested 100,000 deep, a NUL byte in a path, 100,000 dirs: no traceback, bounded."""
    root, dirs = _triton_cache(tmp_path)
    age(dirs[1:], 600)
    named = {"child_paths": {f"k{i}": f"{dirs[0]}/../../{i}/x" for i in range(100_000)}}
    named["child_paths"]["nul"] = f"{dirs[0]}\0/x.cubin"
    for d, body in zip(dirs[1:], ("[" * 100_000, json.dumps(named)), strict=True):
        next(d.glob("__grp__*.json")).write_text(body)
    age(dirs[1:], 600)
    t = time.process_time()
    with alarm(20):
        plan = plan_gc_on(root, older_than_s=DAY, artifacts=True)
    assert time.process_time() - t < 2
    assert any(str(dirs[0]) in r.file.where for r in plan.removals)


# --- 12. a Triton dir exchanged with a symlink to an outside dir while the walk runs ------


class SwapOnVisit:
    """Swaps ``target`` for a symlink to ``outside`` the moment the walk comes to list
    it (after its parent's listing showed a dir): by path (``os.scandir(path)``) or by
    name relative to its parent's fd (``os.open(name, dir_fd=...)``)."""

    def __init__(self, monkeypatch, target: Path, outside: Path, parking: Path):
        self.target, self.outside, self.parking, self.swapped = target, outside, parking, 0
        self.armed = True
        real_scandir, real_open = os.scandir, os.open

        def scandir(p="."):
            if not isinstance(p, int) and os.fspath(p) == str(target):
                self.swap()
            return real_scandir(p)

        def open_(p, flags, mode=0o777, *, dir_fd=None):
            if dir_fd is not None and p == target.name:
                self.swap()
            return real_open(p, flags, mode, dir_fd=dir_fd)

        monkeypatch.setattr(os, "scandir", scandir)
        monkeypatch.setattr(os, "open", open_)

    def swap(self) -> None:
        if self.armed and not self.target.is_symlink():
            os.rename(self.target, self.parking)
            os.symlink(self.outside, self.target)
            self.swapped += 1

    def restore(self, disarm: bool = False) -> None:
        self.armed = not disarm
        if self.target.is_symlink():
            self.target.unlink()
            os.rename(self.parking, self.target)


@pytest.fixture
def outside(tmp_path) -> Path:
    """A dir outside the cache holding 8 GB (a sparse file: no disk used)."""
    d = tmp_path / "outside"
    d.mkdir()
    with open(d / "big.cubin", "wb") as f:
        f.truncate(8 << 30)
    (d / "small.json").write_text("{}")
    return d


def test_a_triton_dir_swapped_for_a_symlink_mid_walk_is_not_counted_and_the_walk_is_incomplete(
        tmp_path, monkeypatch, outside):
    root, dirs = _triton_cache(tmp_path)
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    before = tree(outside)
    hook = SwapOnVisit(monkeypatch, dirs[0], outside, tmp_path / "parked")
    with alarm(20):
        inv = take_inventory(root)
    assert hook.swapped == 1
    assert inv.totals.bytes < size and all("outside" not in i.file.where for i in inv.items)
    assert not inv.complete
    assert [(str(s.path), s.reason.code) for s in inv.unreadable] == [(str(dirs[0]), "changed-during-walk")]
    # df plans gc's default policy first, then walks for its own inventory: the plan is
    # made here (its walk is the next test's), so the swap comes on df's own walk.
    with alarm(20):
        default = plan_gc(Catalog(scan_cache(root)), GcPolicy.default())
    hook.restore()
    with alarm(20):
        rep = measure(Catalog(scan_cache(root)), default_plan=default)  # df --json
    assert hook.swapped == 2
    body = rep.to_json()
    assert body["complete"] is False and body["total"]["bytes"] < size
    assert [u["why_code"] for u in body["unreadable"]] == ["changed-during-walk"]
    hook.restore(disarm=True)
    assert tree(outside) == before


def test_gc_max_size_on_a_walk_that_changed_counts_nothing_outside_and_removes_nothing(
        tmp_path, monkeypatch, outside):
    """The issue's `gc --max-size 1G` on a 1 MB cache: had the walk counted the 8 GB
    outside, every entry would go."""
    from tests.cli_run import fxcache_in_process

    root, dirs = _triton_cache(tmp_path)
    before, inside = tree(outside), tree(root)
    hook = SwapOnVisit(monkeypatch, dirs[0], outside, tmp_path / "parked")
    with alarm(30):
        plan = plan_gc(Catalog(scan_cache(root)), GcPolicy(max_size_bytes=1 << 30))
        assert hook.swapped == 1 and plan.removals == () and plan.all_bytes < 1 << 20
        hook.restore()
        r = fxcache_in_process("--cache-dir", str(root), "gc", "--max-size", "1G", "--yes", "--json")
    assert hook.swapped == 2 and r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert json.loads(r.stdout)["removed"] == []
    hook.restore(disarm=True)
    assert tree(outside) == before and tree(root) == inside


# --- 13. gc removes only the dirs its plan names -------------------------------------------


def test_gc_removes_only_the_dirs_the_plan_names(tmp_path):
    """A Triton kernel dir goes once empty, but not the device dir above it; a temp
    file 300 dirs deep goes, the 300 dirs above it stay (no plan names them)."""
    root, dirs = _triton_cache(tmp_path)
    deep = root / "dynamo" / Path(*["d"] * 300)
    deep.mkdir(parents=True)
    (deep / "x.tmp").write_bytes(b"half")
    age([root], 10 * DAY)
    for d in dirs[1:]:
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    plan = plan_gc_on(root, older_than_s=DAY, artifacts=True, unreadable=True)
    assert ("triton", "0", dirs[0].name) in plan.dirs
    assert str(deep / "x.tmp") in {r.file.where for r in plan.removals}
    key = next((root / "fxgraph").glob("*/*"))  # the old FX entry goes too, and its key dir
    res = execute_plan(plan)
    assert not dirs[0].exists() and not (deep / "x.tmp").exists()
    assert (root / "triton" / "0").is_dir()  # empty, but not planned
    assert deep.is_dir()
    removed = {os.path.relpath(d, root) for d in res.dirs_removed}
    assert removed == {f"triton/0/{dirs[0].name}", os.path.relpath(key, root), os.path.relpath(key.parent, root)}


def test_entry_key_and_bucket_dirs_still_go_once_empty(tmp_path):
    root = tmp_path / "cache"
    fx, aot = fake_key(KeyKind.FX_GRAPH, "a"), fake_key(KeyKind.AOT_AUTOGRAD, "b")
    write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 1", fx))
    write_entry(root, KeyKind.AOT_AUTOGRAD, aot, b"junk")
    age([root], 10 * DAY)
    res = execute_plan(plan_gc_on(root, older_than_s=DAY))
    assert {os.path.relpath(d, root) for d in res.dirs_removed} == {
        f"fxgraph/{fx[1:3]}/{fx}", f"fxgraph/{fx[1:3]}", f"aotautograd/{aot}"}
    assert (root / "fxgraph").is_dir() and (root / "aotautograd").is_dir()


# --- 14. --stale on a library that records 99,000 distinct include dirs ---------------------

_STALE_RUN = r"""
import json, sys
from pathlib import Path
from tests.helpers import plan_gc_on
plan = plan_gc_on(Path(sys.argv[1]), stale_against=(), stale_include_dir=sys.argv[2])
print(json.dumps({"removed": [x.file.where for x in plan.removals],
                  "undecided": [[w, y] for w, y in plan.undecided]}))
"""


def test_stale_on_a_library_recording_99000_include_dirs_costs_what_a_normal_one_does(tmp_path):
    mine = tmp_path / "venv" / "torch" / "include"
    mine.mkdir(parents=True)
    key = "c" + "ab" + "q" * 49

    def cache(name: str, body: bytes) -> Path:
        root = tmp_path / name
        (root / "ab").mkdir(parents=True)
        (root / "ab" / f"{key}.so").write_bytes(b"\x7fELF" + b"\0" * 32 + body)
        age([root], 2 * DAY)
        return root

    normal = cache("normal", b"/old/venv/torch/include/c10/util/Exception.h\0")
    # 9.9 MB, as in the issue: 99,000 distinct dirs of 100 bytes, each a realpath of 14 names.
    hostile = cache("hostile", b"".join(b"/home/user/venvs/v%06d/a/b/c/d/e/f/g/h/lib/python3.11/site-packages/torch/"
                                        b"include/c10/x.h\0" % i for i in range(99_000)))
    assert hostile.joinpath("ab", f"{key}.so").stat().st_size > 9_000_000
    base = run_measured([sys.executable, "-c", _STALE_RUN, str(normal), str(mine)])
    hit = run_measured([sys.executable, "-c", _STALE_RUN, str(hostile), str(mine)])
    for r in (base, hit):
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert json.loads(base.stdout)["removed"]  # another torch's: stale
    got = json.loads(hit.stdout)
    assert got["removed"] == [] and got["undecided"]  # not judged, kept, and said
    assert "include dirs" in got["undecided"][0][1]
    assert hit.cpu - base.cpu < 2.0, (hit, base)
    assert hit.maxrss_kb < 300 * 1024
