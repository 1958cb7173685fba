"""gc and torch on one cache: what gc frees, torch compiles again and hits what gc kept;
and gc while torch keeps compiling into the same cache: nothing outside the plan goes,
no exception escapes either side, and torch still loads what gc kept.

Each is a background build of its own (torch processes forked from the zygote, fxcache
forked from the CLI server: a process of its own that has not imported torch, as a fresh
one): they run on a build thread beside the torch tier's other tests.

gc prunes every kind meanwhile: entries (--keep-last), generated code,
compiled libraries, PGO state and Triton kernel dirs (--artifacts
--older-than, on files made two hours old), orphaned locks and temp files.
The Triton dirs are Triton's cache manager's layout (tests/data; no GPU here).
"""

from __future__ import annotations

import contextvars
import json
import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch


def _files(root: Path) -> set[str]:
    """Every file but temp files (torch renames and removes its own)."""
    from fxcache_core.cache.inventory import ContentKind, take_inventory

    return {i.file.where for i in take_inventory(root).items if i.kind is not ContentKind.TEMP}


def _age_all_but_entries(root: Path, seconds: float) -> None:
    t = time.time()
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            entry = p.relative_to(root).parts[0] in ("fxgraph", "aotautograd")
            os.utime(p, (t, t) if entry else (t - seconds, t - seconds))


@builder("gc_during_compiles", needs=("real_cache",), order=7)
def _gc_during_compiles() -> dict[str, Any]:
    """gc run again and again on a copy of the real cache while fresh torch processes
    compile new shapes into it, one after the other (a build of its own, on a build
    thread: it runs beside the tests of the torch tier, not before them)."""
    from tests.harness.background import build_dir
    from tests.harness.oracle import torch_lookups
    from tests.synth import install_triton_layout

    real = prebuilt("real_cache")
    cache = build_dir("gc-during-compiles") / "cache"
    shutil.copytree(real.root, cache, symlinks=True)
    install_triton_layout(cache / "triton" / "0")
    real.with_pgo(cache)
    _age_all_but_entries(cache, 2 * 3600)

    # Other processes compile new shapes into the cache (misses: new entries, temp files,
    # renames), one after the other, each a fresh process's call, asked from a thread of
    # their own...
    calls = [("same_graph_two_regions", [[10, 3]]), ("int_arg", [[7], 11]),
             ("branch_on_size", [[20, 5]])]
    rounds: list[dict[str, Any]] = []
    with ThreadPoolExecutor(1) as pool:
        # in this thread's context: its build options (the zygote, the build's environment)
        compiler = pool.submit(contextvars.copy_context().run,
                               lambda: [torch_lookups(cache, c, s, fresh=True) for c, s in calls])
        # ...while gc prunes it, again and again, down to one entry per key.
        while not compiler.done() or len(rounds) < 2:
            before = _files(cache)
            p = run_fxcache("--cache-dir", str(cache), "gc", "--keep-last", "1", "--artifacts",
                            "--older-than", "90m", "--locks", "--unreadable", "--yes", "--json")
            rounds.append({"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr,
                           "gone": sorted(before - _files(cache))})
            if p.returncode not in (0, 1):
                break
            # a pause between rounds: gc still lands at many points of each compile (its
            # temp files, renames, new entries), without a third core's worth of rounds
            time.sleep(1.0)
        results = compiler.result()  # a failed query raises here, with its traceback
    # What gc kept, torch loads: the newest entry (kept by --keep-last 1) is still a hit.
    match = run_fxcache("--cache-dir", str(cache), "match", "--fn", "branch_on_size",
                        "--shapes", "x=[20,5]", "--json")
    after = torch_lookups(cache, "branch_on_size", [[20, 5]], on_copy=True, fresh=True)
    return {"rounds": rounds, "results": results, "match": match.stdout, "after": after}


@pytest.fixture(scope="session")
def gc_during_compiles() -> dict[str, Any]:
    return prebuilt("gc_during_compiles")


def test_gc_during_compiles_removes_only_its_plan(gc_during_compiles):
    built = gc_during_compiles
    removed = 0
    kinds: set[str] = set()
    for r in built["rounds"]:
        assert r["returncode"] in (0, 1), r["stderr"]
        assert "Traceback" not in r["stderr"]
        res = json.loads(r["stdout"])
        planned = {x["path"] for x in res["removals"]}
        assert set(res["removed"]) <= planned
        assert set(r["gone"]) <= planned, set(r["gone"]) - planned  # torch never deletes entries; only the plan did
        removed += len(res["removed"])
        kinds |= {x["what"] for x in res["removals"] if x["path"] in set(res["removed"])}
    results = built["results"]
    assert all(r["error"] is None for r in results), [r["error"] for r in results]
    writes = sum(len(r["writes"]) for r in results)
    assert len(built["rounds"]) >= 2 and removed > 0
    assert {"entry", "code", "triton", "pgo"} <= kinds, kinds
    assert writes > 0, results  # torch really wrote while gc ran
    rep = json.loads(built["match"])
    predicted = {r["key"]: r["hit"] for r in rep["results"] if r["kind"] == "aotautograd" and r["status"] == "hit"}
    run = built["after"]
    assert run["error"] is None
    looked = {lk["key"]: lk["hit"] for lk in run["lookups"] if lk["kind"] == "aotautograd"}
    assert predicted and all(looked.get(k) == h for k, h in predicted.items()), (predicted, looked)
    assert run["counters"]["autograd_cache_hit"] >= 1


DAY = 86400.0


@builder("gc_then_compile", needs=("real_cache",), order=7)
def _gc_then_compile() -> dict[str, Any]:
    """Every gc rule on a copy of the real cache and on a copy of torch's default dir
    (its precompiled headers), then a fresh torch process compiling into both."""
    from demo.build_cache import build_options, use_build_options
    from fxcache_core.cache.inventory import take_inventory
    from fxcache_core.cache.location import default_cache_dir
    from tests.harness.background import build_dir
    from tests.harness.oracle import torch_lookups
    from tests.harness.real_cache import snapshot_default_dir
    from tests.helpers import age

    real = prebuilt("real_cache")
    options = build_options()
    base_env = dict(options.base_env if options.base_env is not None else os.environ)
    session_default = Path(base_env["TMPDIR"]) / default_cache_dir().name
    base = build_dir("gc-then-compile")
    cache = base / "cache"
    shutil.copytree(real.root, cache, symlinks=True)
    real.with_pgo(cache)
    # Torch's default dir for the compile below: a copy of the session's, with its
    # precompiled headers, as the only tempdir torch sees.
    tmp = base / "tmp"
    default = snapshot_default_dir(session_default, tmp)
    # All but the entries two days old, so that every rule has something to take.
    age([p for p in cache.rglob("*") if p.is_file()
         and p.relative_to(cache).parts[0] not in ("fxgraph", "aotautograd")], 2 * DAY)
    age([default], 2 * DAY)
    out: dict[str, Any] = {"kinds_before": sorted(i.kind.name for i in take_inventory(cache).items), "gc": []}
    for args in (["gc"], ["gc", "--older-than", "1d", "--artifacts", "--locks", "--unreadable", "--stale"]):
        for root in (cache, default):
            before = take_inventory(root).totals.bytes
            p = run_fxcache("--cache-dir", str(root), *args, "--yes", "--json", imports_torch="--stale" in args)
            out["gc"].append({"args": args, "returncode": p.returncode, "stderr": p.stderr, "stdout": p.stdout,
                              "freed": before - take_inventory(root).totals.bytes})
    out["kinds_left"] = sorted({i.kind.name for i in take_inventory(cache).items})
    out["gch_after_gc"] = [str(p) for p in (default / "precompiled_headers").glob("*.gch")]
    # Torch compiles into the pruned caches (the code, libraries and precompiled
    # header again) and hits the entries gc kept.
    with use_build_options(replace(options, base_env={**base_env, "TMPDIR": str(tmp)})):
        out["run"] = torch_lookups(cache, "train_mlp", [[3, 4], [3, 1]], fresh=True, timeout=900)
    out["gch_after_run"] = [str(p) for p in (default / "precompiled_headers").glob("*.gch")]
    return out


@pytest.fixture(scope="session")
def gc_then_compile() -> dict[str, Any]:
    return prebuilt("gc_then_compile")


def test_gc_frees_what_it_says_and_torch_compiles_and_hits_after(gc_then_compile):
    built = gc_then_compile
    assert {"CODE", "LIBRARY", "PGO", "LOCK"} <= set(built["kinds_before"])
    for g in built["gc"]:
        assert g["returncode"] == 0, g["stderr"]
        assert g["freed"] == json.loads(g["stdout"])["bytes_freed"], g["args"]
    assert not set(built["kinds_left"]) & {"CODE", "LIBRARY", "PGO"}, built["kinds_left"]
    assert not built["gch_after_gc"]
    run = built["run"]
    assert run["error"] is None
    assert run["counters"]["autograd_cache_hit"] >= 1 and run["counters"]["fxgraph_cache_miss"] == 0
    assert built["gch_after_run"]
