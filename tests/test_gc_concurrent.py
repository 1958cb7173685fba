"""gc while torch keeps compiling into the same cache: nothing outside the plan goes,
no exception escapes either side, and torch still loads what gc kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, run_fxcache

pytestmark = pytest.mark.torch


def _files(root: Path) -> set[str]:
    out = set()
    for sub in ("fxgraph", "aotautograd"):
        for dirpath, _dirs, files in os.walk(root / sub):
            out.update(str(Path(dirpath) / f) for f in files if not f.startswith("."))
    return out


def test_gc_during_compiles_removes_only_its_plan(cache_copy):
    from demo.build_cache import _child_env
    from demo.oracle import torch_lookups

    # Other processes compile new shapes into the cache (misses: new entries, temp files,
    # renames), one after the other...
    calls = [("same_graph_two_regions", [[10, 3]]), ("branch_on_size", [[16, 3]]),
             ("same_graph_two_regions", [[12, 5]]), ("int_arg", [[7], 11]),
             ("branch_on_size", [[20, 5]])]
    script = "; ".join(
        f"subprocess.run([sys.executable, '-m', 'demo.oracle', {str(cache_copy)!r}, {c!r}, {json.dumps(s)!r}], check=True)"
        for c, s in calls)
    compiler = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys; {script}"],
        cwd=REPO_ROOT, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    runs = removed = 0
    try:
        # ...while gc prunes it, again and again, down to one entry per key.
        while compiler.poll() is None or runs < 2:
            before = _files(cache_copy)
            p = run_fxcache("--cache-dir", str(cache_copy), "gc", "--keep-last", "1", "--yes", "--json")
            assert p.returncode in (0, 1), p.stderr
            assert "Traceback" not in p.stderr
            res = json.loads(p.stdout)
            planned = {r["path"] for r in res["removals"]}
            assert set(res["removed"]) <= planned
            gone = before - _files(cache_copy)
            assert gone <= planned, gone - planned  # torch never deletes entries; only the plan did
            removed += len(res["removed"])
            runs += 1
    finally:
        out, err = compiler.communicate(timeout=600)
    assert compiler.returncode == 0, err[-2000:]
    assert "Traceback" not in err
    writes = sum(len(json.loads(line)["writes"]) for line in out.splitlines() if line.startswith("{"))
    assert runs >= 2 and removed > 0
    assert writes > 0, out[-2000:]  # torch really wrote while gc ran
    # What gc kept, torch loads: the newest entry (kept by --keep-last 1) is still a hit.
    rep = json.loads(run_fxcache("--cache-dir", str(cache_copy), "match", "--fn", "branch_on_size",
                                 "--shapes", "x=[20,5]", "--json").stdout)
    predicted = {r["key"]: r["hit"] for r in rep["results"] if r["kind"] == "aotautograd" and r["status"] == "hit"}
    run = torch_lookups(cache_copy, "branch_on_size", [[20, 5]], on_copy=True)
    assert run["error"] is None
    looked = {lk["key"]: lk["hit"] for lk in run["lookups"] if lk["kind"] == "aotautograd"}
    assert predicted and all(looked.get(k) == h for k, h in predicted.items()), (predicted, looked)
    assert run["counters"]["autograd_cache_hit"] >= 1
