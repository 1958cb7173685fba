"""gc while torch keeps compiling into the same cache: nothing outside the plan goes,
no exception escapes either side, and torch still loads what gc kept.

gc prunes every kind meanwhile: entries (--keep-last), generated code,
compiled libraries, PGO state and Triton kernel dirs (--artifacts
--older-than, on files made two hours old), orphaned locks and temp files.
The Triton dirs are Triton's cache manager's layout (tests/data; no GPU here).
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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


def test_gc_during_compiles_removes_only_its_plan(real_cache, cache_copy):
    from tests.harness.oracle import torch_lookups
    from tests.synth import install_triton_layout

    install_triton_layout(cache_copy / "triton" / "0")
    real_cache.with_pgo(cache_copy)
    _age_all_but_entries(cache_copy, 2 * 3600)

    # Other processes compile new shapes into the cache (misses: new entries, temp files,
    # renames), one after the other: children of the session's fork server (each a fresh
    # process's call), asked from a thread of their own...
    calls = [("same_graph_two_regions", [[10, 3]]), ("int_arg", [[7], 11]),
             ("branch_on_size", [[20, 5]])]
    with ThreadPoolExecutor(1) as pool:
        compiler = pool.submit(lambda: [torch_lookups(cache_copy, c, s) for c, s in calls])
        runs = removed = 0
        kinds: set[str] = set()
        # ...while gc prunes it, again and again, down to one entry per key.
        while not compiler.done() or runs < 2:
            before = _files(cache_copy)
            p = run_fxcache("--cache-dir", str(cache_copy), "gc", "--keep-last", "1", "--artifacts",
                            "--older-than", "90m", "--locks", "--unreadable", "--yes", "--json")
            assert p.returncode in (0, 1), p.stderr
            assert "Traceback" not in p.stderr
            res = json.loads(p.stdout)
            planned = {r["path"] for r in res["removals"]}
            assert set(res["removed"]) <= planned
            gone = before - _files(cache_copy)
            assert gone <= planned, gone - planned  # torch never deletes entries; only the plan did
            removed += len(res["removed"])
            kinds |= {r["what"] for r in res["removals"] if r["path"] in set(res["removed"])}
            runs += 1
        results = compiler.result()  # a failed query raises here, with its traceback
    assert all(r["error"] is None for r in results), [r["error"] for r in results]
    writes = sum(len(r["writes"]) for r in results)
    assert runs >= 2 and removed > 0
    assert {"entry", "code", "triton", "pgo"} <= kinds, kinds
    assert writes > 0, results  # torch really wrote while gc ran
    # What gc kept, torch loads: the newest entry (kept by --keep-last 1) is still a hit.
    rep = json.loads(run_fxcache("--cache-dir", str(cache_copy), "match", "--fn", "branch_on_size",
                                 "--shapes", "x=[20,5]", "--json").stdout)
    predicted = {r["key"]: r["hit"] for r in rep["results"] if r["kind"] == "aotautograd" and r["status"] == "hit"}
    run = torch_lookups(cache_copy, "branch_on_size", [[20, 5]], on_copy=True)
    assert run["error"] is None
    looked = {lk["key"]: lk["hit"] for lk in run["lookups"] if lk["kind"] == "aotautograd"}
    assert predicted and all(looked.get(k) == h for k, h in predicted.items()), (predicted, looked)
    assert run["counters"]["autograd_cache_hit"] >= 1
