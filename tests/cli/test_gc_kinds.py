"""gc for what is not a cache entry: Triton kernel dirs, precompiled headers, compiled
libraries, PGO state, orphaned locks, temp files; --max-size over everything df counts.

The synthetic layouts say what they stand for: Triton's is written by Triton's
own cache manager (tools/make_triton_layout.py; no GPU here); precompiled
headers and libraries that record *another* torch's headers cannot be built
on this machine, so their bytes are made by hand, holding the header paths GCC
records. The real ones (conftest's ``real_cache`` and ``default_dir``) are
torch's, and torch compiles and hits again after gc.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from fxcache_core.cache.inventory import ContentKind, take_inventory
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.prune.plan import plan_gc
from fxcache_core.prune.policy import GcPolicy
from tests.helpers import age as _age
from tests.helpers import plan_gc_on as _plan
from tests.helpers import run_fxcache
from tests.synth import best_config_bytes, install_triton_layout

DAY = 86400.0
KEY = "c" + "ab" + "q" * 49
KEY2 = "c" + "cd" + "r" * 49


def _removed(plan) -> set[str]:
    return {os.path.relpath(r.file.where, plan.root) for r in plan.removals}


def _layout(tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    install_triton_layout(root / "triton" / "0")
    (root / "ab").mkdir()
    (root / "ab" / f"{KEY}.py").write_text("# kernel\n")
    (root / "ab" / f"{KEY}.best_config").write_bytes(best_config_bytes())
    (root / "locks").mkdir()
    (root / "locks" / f"{KEY}.lock").touch()      # its code is there: not an orphan
    (root / "locks" / f"{KEY2}.lock").touch()     # its code is gone: an orphan
    (root / "dynamo").mkdir()
    (root / "dynamo" / "code_state_job_None_.pkl").write_bytes(b"\x80\x04N.")
    (root / "dynamo" / "code_state_job_None_.pkl.lock").touch()
    (root / "dynamo" / "code_state_gone_None_.pkl.lock").touch()  # orphan
    (root / "dynamo" / "code_state_job_None_.pkl.tmp").write_bytes(b"half")
    return root


def test_triton_kernel_dirs_go_whole_by_last_use_never_within_the_hour(tmp_path):
    root = _layout(tmp_path)
    dirs = sorted((root / "triton" / "0").iterdir())
    _age(dirs[:2], 10 * DAY)
    _age(dirs[2:], 600)  # used ten minutes ago
    plan = _plan(root, older_than_s=0.0, artifacts=True, now=time.time())
    gone = _removed(plan)
    for d in dirs[:2]:
        files = {os.path.relpath(f, root) for f in d.iterdir()}
        assert files <= gone and len(files) == 8
        assert tuple(os.path.relpath(d, root).split(os.sep)) in plan.dirs
    assert not any(g.startswith(os.path.relpath(dirs[2], root)) for g in gone)
    assert {r.what for r in plan.removals if "triton" in r.file.where} == {"triton"}


def test_a_triton_dir_a_kept_group_file_names_stays(tmp_path):
    root = _layout(tmp_path)
    dirs = sorted((root / "triton" / "0").iterdir())
    _age(dirs[:1], 10 * DAY)
    # A kept (recent) kernel's group file names a file of the old dir: Triton loads it.
    grp = next(dirs[1].glob("__grp__*.json"))
    group = json.loads(grp.read_text())
    victim = next(dirs[0].glob("*.cubin"))
    group["child_paths"]["shared.cubin"] = str(victim)
    grp.write_text(json.dumps(group))
    _age([grp], 7200)
    plan = _plan(root, older_than_s=DAY, artifacts=True, now=time.time())
    assert not any(str(dirs[0]) in r.file.where for r in plan.removals)


def test_default_policy_takes_orphaned_locks_and_old_temp_files_only(tmp_path):
    root = _layout(tmp_path)
    tmpdir = root / "triton" / "0" / "tmp.5e1f"
    tmpdir.mkdir()
    (tmpdir / "k.ptx").write_text("half a bundle")
    everything = [p for p in root.rglob("*") if p.is_file()]
    _age(everything, 2 * 3600)
    fresh_orphan = root / "locks" / ("c" + "ef" + "s" * 49 + ".lock")
    fresh_orphan.touch()
    plan = plan_gc(Catalog(scan_cache(root)), GcPolicy.default())
    assert _removed(plan) == {
        f"locks/{KEY2}.lock", "dynamo/code_state_gone_None_.pkl.lock",
        "dynamo/code_state_job_None_.pkl.tmp", "triton/0/tmp.5e1f/k.ptx"}
    assert ("triton", "0", "tmp.5e1f") in plan.dirs
    by = {os.path.relpath(r.file.where, root): r for r in plan.removals}
    assert by[f"locks/{KEY2}.lock"].lock == ("locks", f"{KEY2}.lock")  # taken before it goes


def test_pgo_state_goes_by_age_with_older_than(tmp_path):
    root = _layout(tmp_path)
    pgo = root / "dynamo" / "code_state_job_None_.pkl"
    _age([pgo], 3 * DAY)
    assert "dynamo/code_state_job_None_.pkl" in _removed(_plan(root, older_than_s=DAY, now=time.time()))
    assert "dynamo/code_state_job_None_.pkl" not in _removed(_plan(root, older_than_s=5 * DAY))
    r = next(r for r in _plan(root, older_than_s=DAY).removals if r.file.name.endswith(".pkl"))
    assert r.lock == ("dynamo", "code_state_job_None_.pkl.lock") and r.what == "pgo"


def _pch(root: Path, key: str, recorded_include: str) -> Path:
    """A precompiled header as GCC leaves it: binary, with the header paths it read in it."""
    d = root / "precompiled_headers"
    (d / "locks").mkdir(parents=True, exist_ok=True)
    (d / f"{key}.h").write_text("#include <torch/csrc/inductor/cpp_prefix.h>\n")
    gch = d / f"{key}.h.gch"
    body = b"gpch+014" + os.urandom(64) + b"\0".join(
        f"{recorded_include}/{h}".encode() for h in ("ATen/ATen.h", "c10/util/Half.h")) + b"\0" * 64
    gch.write_bytes(body * 3)
    (d / "locks" / f"{key}.lock").touch()
    return gch


def test_stale_precompiled_headers_and_libraries_are_those_of_another_torch(tmp_path):
    mine = tmp_path / "venv" / "torch" / "include"
    (mine / "ATen").mkdir(parents=True)
    (mine / "c10" / "util").mkdir(parents=True)
    (mine / "ATen" / "ATen.h").write_text("//")
    (mine / "c10" / "util" / "Half.h").write_text("//")
    _age([mine], 5 * DAY)
    root = tmp_path / "default"
    other = _pch(root, KEY, "/old/venv/lib/python3.11/site-packages/torch/include")
    current = _pch(root, KEY2, str(mine))
    unknown = root / "precompiled_headers" / ("c" + "zz" + "t" * 49 + ".h.gch")
    unknown.write_bytes(b"gpch+014 no paths at all")
    (root / "ab").mkdir()
    lib = root / "ab" / f"{KEY}.so"
    lib.write_bytes(b"\x7fELF" + b"\0" * 32 + b"/old/venv/torch/include/c10/util/Exception.h\0")
    _age([root], 2 * DAY)
    stale = dict(stale_against=(), stale_include_dir=str(mine))
    plan = _plan(root, **stale)
    gone = _removed(plan)
    assert gone == {os.path.relpath(other, root), os.path.relpath(lib, root)}
    assert all(r.reasons[0].startswith("stale: built against another torch") for r in plan.removals)
    assert any("records no torch include dir" in why for _, why in plan.undecided)
    # A header of this torch changed after the precompiled header was built: torch's
    # name for it hashes the preprocessed headers, so it is never read again.
    os.utime(mine / "c10" / "util" / "Half.h")
    assert os.path.relpath(current, root) in _removed(_plan(root, **stale))
    # By age, the .gch goes and its 44-byte stub stays (a running torch may -include it).
    aged = _removed(_plan(root, older_than_s=DAY, artifacts=True))
    assert os.path.relpath(other, root) in aged and "precompiled_headers/" + KEY + ".h" not in aged


def test_max_size_counts_every_file_df_counts(tmp_path):
    root = _layout(tmp_path)
    _age([root], 2 * 3600)
    inv = take_inventory(root)
    budget = inv.totals.bytes // 2
    plan = _plan(root, max_size_bytes=budget)
    assert plan.all_bytes == inv.totals.bytes
    assert plan.all_bytes - plan.bytes_freed <= budget
    assert {r.what for r in plan.removals} & {"triton", "pgo", "autotune", "code"}


def test_gc_frees_what_it_says_it_frees(tmp_path):
    root = _layout(tmp_path)
    (root / "triton" / "0" / "tmp.5e1f").mkdir()
    (root / "triton" / "0" / "tmp.5e1f" / "k.ptx").write_text("x" * 300)
    _age([root], 3 * DAY)
    before = take_inventory(root).totals.bytes
    p = run_fxcache("--cache-dir", str(root), "gc", "--older-than", "1d", "--artifacts", "--locks",
                    "--unreadable", "--yes", "--json")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    after = take_inventory(root)
    assert res["bytes_freed"] > 0 and before - after.totals.bytes == res["bytes_freed"]
    left = {i.kind for i in after.items}
    assert not left & {ContentKind.TRITON, ContentKind.PGO, ContentKind.AUTOTUNE, ContentKind.TEMP}, left
    # The Triton kernel dirs (and Triton's temp dir) went whole: nothing is left of them.
    devdir = root / "triton" / "0"
    assert not devdir.exists() or not list(devdir.iterdir()), list(devdir.iterdir())


@pytest.mark.torch
def test_real_precompiled_headers_record_the_torch_that_built_them(default_dir, tmp_path):
    import torch

    from fxcache_core.cache.provenance import built_by_another_torch

    include = os.path.join(os.path.dirname(torch.__file__), "include")
    gch = [p for p in (default_dir / "precompiled_headers").iterdir() if p.name.endswith(".gch")]
    assert gch
    for p in gch:
        mtime = p.stat().st_mtime
        assert built_by_another_torch(str(p), mtime, include, pch=True) == (False, "")
        stale, why = built_by_another_torch(str(p), mtime, str(tmp_path / "torch" / "include"), pch=True)
        assert stale and why.startswith("built against another torch's headers")
        # Built before a header of this torch changed (an upgrade in place): never read again.
        stale, why = built_by_another_torch(str(p), 0.0, include, pch=True)
        assert stale and "changed since" in why


def test_a_lock_torch_holds_keeps_what_it_guards(tmp_path):
    from filelock import FileLock

    from fxcache_core.prune.execute import execute_plan

    root = _layout(tmp_path)
    gch = _pch(root, KEY2, "/old/venv/torch/include")
    _age([root], 3 * DAY)
    plan = _plan(root, older_than_s=DAY, artifacts=True, orphaned_locks=True)
    planned = {r.file.where for r in plan.removals}
    orphan = root / "locks" / f"{KEY2}.lock"
    assert {str(gch), str(orphan)} <= planned
    # A compile holds the header's lock and the orphaned lock (torch's FileLock is filelock's).
    with FileLock(str(root / "precompiled_headers" / "locks" / f"{KEY2}.lock")), FileLock(str(orphan)):
        res = execute_plan(plan)
    kept = {str(p): why for p, why in res.skipped}
    assert kept[str(gch)] == kept[str(orphan)] == "a compile holds its lock"
    assert gch.exists() and orphan.exists()


def test_a_stale_library_goes_with_its_load_ok_marker_first(tmp_path):
    root = tmp_path / "cache"
    (root / "ab").mkdir(parents=True)
    lib = root / "ab" / f"{KEY}.so"
    lib.write_bytes(b"\x7fELF" + b"\0" * 32 + b"/old/venv/torch/include/c10/util/Exception.h\0")
    marker = root / "ab" / f"{KEY}.so.load_ok"  # torch 2.14+: trusted without a load check
    marker.touch()
    _age([root], 2 * DAY)
    assert {i.kind for i in take_inventory(root).items} == {ContentKind.LIBRARY}
    plan = _plan(root, stale_against=(), stale_include_dir=str(tmp_path / "torch" / "include"))
    assert [r.file.where for r in plan.removals] == [str(marker), str(lib)]


def test_the_header_search_is_bounded_and_exact_across_chunks(tmp_path, monkeypatch):
    from fxcache_core.cache import provenance

    p = tmp_path / "x.so"
    path = b"/opt/venv/lib/python3.11/site-packages/torch/include/ATen/x.h"
    p.write_bytes(b"\0" * 70 + path + b"\0" * 70)
    for chunk in (16, 64, 4096):  # the path straddles chunk boundaries
        monkeypatch.setattr(provenance, "_CHUNK", chunk)
        rec = provenance.recorded_paths(str(p), headers=True)
        assert rec.include_dirs == {path[: -len(b"/ATen/x.h")].decode()} and rec.headers == {path.decode()}
    # A hostile file naming torch/include endlessly gets no verdict (kept), quickly.
    monkeypatch.setattr(provenance, "_CHUNK", 8 << 20)
    p.write_bytes(b"/torch/include\0" * (provenance.MAX_OCCURRENCES + 10))
    t = time.monotonic()
    with pytest.raises(OSError, match="more than"):
        provenance.recorded_paths(str(p), headers=True)
    assert time.monotonic() - t < 30
    root = tmp_path / "c"
    (root / "ab").mkdir(parents=True)
    shutil.move(p, root / "ab" / f"{KEY}.so")
    _age([root], 2 * DAY)
    plan = _plan(root, stale_against=(), stale_include_dir=str(tmp_path / "torch" / "include"))
    assert not plan.removals and "more than" in plan.undecided[0][1]


def test_a_hostile_group_file_names_nothing(tmp_path):
    root = _layout(tmp_path)
    dirs = sorted((root / "triton" / "0").iterdir())
    grps = [next(d.glob("__grp__*.json")) for d in dirs]
    grps[1].write_bytes(b"{" * (2 << 20))                  # over the read limit
    grps[2].write_bytes(b'{"child_paths": ["/etc/passwd"]}')  # not Triton's shape
    os.symlink("/etc/passwd", dirs[1] / "__grp__link.json")  # never followed
    _age(dirs[:1], 10 * DAY)
    _age(dirs[1:], 7200)
    plan = _plan(root, older_than_s=DAY, artifacts=True, now=time.time())
    gone = _removed(plan)
    assert {os.path.relpath(f, root) for f in dirs[0].iterdir()} <= gone
    assert not any(os.path.relpath(d, root) in g for d in dirs[1:] for g in gone)
