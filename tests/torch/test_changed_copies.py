"""Copies of the real cache that fxcache or a hand edit changed, and torch's own lookups on them.

One background build, ``changed_copies``: three copies of the real cache, each changed
(``gc --keep-last 1``; every generated file but one made old, then ``gc --artifacts``;
an entry whose guard raises put first under a key), with what fxcache printed about
them, then torch asked about a call on each (a child of the fork server the builds
share, :func:`tests.harness.oracle.builds_server`), on a build thread: the tests check
fxcache's plans and verdicts, and that torch does what they say.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import cli_json as _json
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch

CALL = ("same_graph_two_regions", [[40, 3]])
"""The call torch is asked on every copy (x=[40,3]: a hit of the real cache)."""


def _after_gc(cache: Path, server: Any) -> dict[str, Any]:
    """gc --keep-last 1, match x=[40,3], then torch's call on a copy of what gc kept."""
    from tests.harness.oracle import torch_lookups

    d = ["--cache-dir", str(cache)]
    return {"gc": run_fxcache(*d, "gc", "--keep-last", "1", "--yes", "--json"),
            "match": run_fxcache(*d, "match", "--shapes", "x=[40,3]", "--json"),
            "torch": torch_lookups(cache, *CALL, on_copy=True, server=server)}


def _after_gc_artifacts(cache: Path, server: Any) -> dict[str, Any]:
    """All generated code but one file made three hours old, gc --artifacts --older-than 2h,
    then torch's call on the pruned cache itself (it writes the code again)."""
    from fxcache_core.cache.scan import scan_artifacts
    from tests.harness.oracle import torch_lookups

    def entries() -> list[str]:
        return sorted(str(p) for p in (cache / "fxgraph").rglob("*") if p.is_file())

    code = scan_artifacts(cache)
    old = time.time() - 3 * 3600
    aged, young = code[:-1], code[-1]
    for a in aged:
        os.utime(a.file.path, (old, old))
    out: dict[str, Any] = {"code": [(a.file.name, str(a.file.path), a.file.size) for a in code],
                           "young": str(young.file.path), "entries_before": entries()}
    out["gc"] = run_fxcache("--cache-dir", str(cache), "gc", "--artifacts", "--older-than", "2h", "--yes", "--json")
    out["entries_after"] = entries()
    out["code_after_gc"] = [str(a.file.path) for a in scan_artifacts(cache)]
    out["torch"] = torch_lookups(cache, *CALL, server=server)
    out["code_after_torch"] = len(scan_artifacts(cache))
    return out


def _raising_guard(cache: Path, server: Any) -> dict[str, Any]:
    """match x=[40,3]; then a copy of the AOTAutograd entry it hits, whose guard divides by
    zero, put first under that key; match of that key again; torch's call on a copy."""
    import torch  # noqa: F401  (pickle.loads needs torch's classes; tests only)

    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import torch_lookups

    d = ["--cache-dir", str(cache)]
    out: dict[str, Any] = {"match": run_fxcache(*d, "match", "--fn", "same_graph_two_regions",
                                                "--shapes", "x=[40,3]", "--json")}
    (aot,) = [r for r in _json(out["match"])["results"] if r["kind"] == "aotautograd"]
    if aot["status"] != "hit":
        return out  # the test says so
    victim = next(e for e in scan_cache(cache).key(aot["key"]).entries if e.name == aot["hit"])
    obj = pickle.loads(victim.path.read_bytes())
    obj.guards_expr = "(L['t0'] // 0) == 1"
    (victim.path.parent / ("0" * 51)).write_bytes(pickle.dumps(obj))  # sorts first
    out["match_key"] = run_fxcache(*d, "match", "--key", aot["key"], "--shapes", "x=[40,3]", "--json")
    out["torch"] = torch_lookups(cache, *CALL, on_copy=True, server=server)
    return out


@builder("changed_copies", needs=("real_cache",), order=4)
def _changed_copies() -> dict[str, Any]:
    import shutil

    from tests.harness.background import build_dir
    from tests.harness.oracle import builds_server

    real = prebuilt("real_cache")
    base = build_dir("changed-copies")
    out: dict[str, Any] = {}
    with builds_server() as server:
        for name, change in (("after_gc", _after_gc), ("after_gc_artifacts", _after_gc_artifacts),
                             ("raising_guard", _raising_guard)):
            cache = base / name
            shutil.copytree(real.root, cache, symlinks=True)
            out[name] = change(cache, server)
    return out


@pytest.fixture(scope="session")
def changed_copies() -> dict[str, Any]:
    return prebuilt("changed_copies")


def test_after_gc_torch_still_hits_kept_entries(changed_copies):
    """Prune everything but same_graph_two_regions' newest entries; torch still hits them."""
    built = changed_copies["after_gc"]
    assert _json(built["gc"])["removed"]
    rep = _json(built["match"])
    predicted = {r["key"]: r["hit"] for r in rep["results"] if r["kind"] == "aotautograd"}
    lookups = built["torch"]
    got = {lk["key"]: lk["hit"] for lk in lookups["lookups"] if lk["kind"] == "aotautograd"}
    compared = [key for key in predicted if key in got]
    assert compared, (predicted, got)  # torch looked up a key that gc kept
    for key in compared:
        assert got[key] == predicted[key]
    assert lookups["counters"]["autograd_cache_hit"] >= 1


def test_gc_artifacts_prunes_old_generated_code_and_torch_regenerates_it(changed_copies):
    """--artifacts --older-than removes old kernels/wrappers only; torch still hits and
    writes them again (they are derived). All code but one file is made old, so the
    files the hit needs (a wrapper module and its kernel library at least) are gone
    whichever they are, and torch must write some again."""
    built = changed_copies["after_gc_artifacts"]
    code = built["code"]
    assert {name.split(".", 1)[1] for name, _, _ in code} >= {"py", "cpp", "so"}
    aged = code[:-1]
    plan = _json(built["gc"])
    assert sorted(plan["removed"]) == sorted(path for _, path, _ in aged)
    assert {r["what"] for r in plan["removals"]} == {"code"}
    assert plan["bytes_freed"] == sum(size for _, _, size in aged)
    assert built["entries_after"] == built["entries_before"]
    assert built["code_after_gc"] == [built["young"]]
    run = built["torch"]
    assert run["error"] is None and run["counters"]["autograd_cache_hit"] >= 1
    assert built["code_after_torch"] > 1  # written again


def test_a_raising_guard_makes_torch_miss_and_match_says_so(changed_copies):
    """A guard that raises stops torch's AOTAutograd lookup (a miss), even with a later passing entry."""
    built = changed_copies["raising_guard"]
    (aot,) = [r for r in _json(built["match"])["results"] if r["kind"] == "aotautograd"]
    assert aot["status"] == "hit"
    (ours,) = _json(built["match_key"])["results"]
    assert ours["status"] == "miss" and ours["hit"] is None
    assert ours["entries"][0]["outcome"] == "error" and "ZeroDivisionError" in ours["entries"][0]["reason"]
    run = built["torch"]
    aot_lookups = [lk for lk in run["lookups"] if lk["key"] == aot["key"]]
    assert aot_lookups and aot_lookups[0]["status"] == "raised"
    assert aot_lookups[0]["raised"] == "ZeroDivisionError"
    assert run["counters"]["autograd_cache_hit"] == 0 and run["counters"]["autograd_cache_miss"] >= 1
