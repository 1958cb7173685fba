"""Commands whose work grows with what a hostile cache holds: audit, coverage, pack.

Synthetic on purpose (fast tier, no torch): no compile makes a key of 800 entries,
an entry of thousands of always-true clauses, or a wrapper source of a million
tiny tokens; an attacker writes them in seconds. Each command runs in a fresh
process, measured (:func:`tests.cli_run.run_measured`): it must stay under 4 s of
CPU (on a machine as fast as the one the limit was set on: a slower or busier one, as
a fixed piece of Python measures it, scales the limit up, never down) and 300 MB, and
say what it did not finish (a count and a reason code), never drop it silently nor
fail with a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from fxcache_core.cache.keys import KeyKind
from fxcache_core.lookup.audit import MAX_AUDIT_PAIRS
from tests.cli_run import Run, machine_slowdown, run_measured
from tests.synth import fake_key, fx_entry_bytes, stub_pickle, write_entry

# The budgeted work takes up to about 2 s of CPU on the reference machine (coverage's
# budget stops at about 130 of the 2,000 sizes; audit's compares 5,000 of 319,600
# pairs): twice that leaves room for a busy machine's noise and stays more than ten
# times below what the same commands would spend without their budgets.
CPU_LIMIT_S = 4.0
RSS_LIMIT_KB = 300 * 1024


def measured(cache: Path, *args: str) -> Run:
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(cache), *args],
                     env={"FXCACHE_JOBS": "1", "FXCACHE_NO_INDEX": "1", "COLUMNS": "200", "NO_COLOR": "1"},
                     timeout=120)
    assert "Traceback" not in r.stderr, r
    limit = CPU_LIMIT_S * machine_slowdown()
    assert r.cpu < limit and r.maxrss_kb < RSS_LIMIT_KB, (r, limit)
    return r


def _many_entries(root: Path, n: int, guards) -> str:
    key = fake_key(KeyKind.FX_GRAPH, "many")
    for i in range(n):
        write_entry(root, KeyKind.FX_GRAPH, key, fx_entry_bytes(guards(i), key), name=f"e{i:05d}")
    return key


def test_audit_of_a_key_of_800_overlapping_entries_stops_at_its_budget_and_says_so(tmp_path):
    key = _many_entries(tmp_path, 800, lambda i: f"{i + 2} <= L['t0'] and L['t0'] <= {100000 + i}")
    pairs = 800 * 799 // 2
    r = measured(tmp_path, "audit")
    assert r.returncode == 0, r
    assert f"{pairs - MAX_AUDIT_PAIRS} pairs not compared" in r.stdout and key[:16] in r.stdout, r


def test_audit_of_entries_beyond_ranges_is_bounded_too(tmp_path):
    _many_entries(tmp_path, 800, lambda i: f"L['t0'] % {i + 2} == 0")
    r = measured(tmp_path, "audit", "--json")
    assert r.returncode == 0, r
    (row,) = json.loads(r.stdout)
    assert {f["kind"] for f in row["findings"]} == {"not-analysed"}
    assert len(row["findings"]) == MAX_AUDIT_PAIRS and row["not_compared_code"] == "audit-budget"
    assert row["not_compared"] + len(row["findings"]) == 800 * 799 // 2


def test_coverage_of_thousands_of_passing_clauses_stops_where_its_budget_ends(tmp_path):
    key = fake_key(KeyKind.FX_GRAPH, "wide")
    write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes(" and ".join(["L['t0'] > 0"] * 3800), key))
    r = measured(tmp_path, "coverage", key, "--range", "t0=1:2000", "--json")
    assert r.returncode == 0, r
    doc = json.loads(r.stdout)
    assert doc["stopped_code"] == "coverage-budget" and doc["requested"] == [1, 2000], doc.keys()
    covered = doc["covered"]
    assert covered[0] == 1 and 1 < covered[1] < 2000
    assert doc["segments"][-1]["end"] == covered[1]


def test_pack_refuses_an_entry_whose_wrapper_source_is_a_million_tokens(tmp_path):
    cache = tmp_path / "cache"
    key = fake_key(KeyKind.FX_GRAPH, "big-wrapper")
    source = "x = [" + "a," * 500_000 + "]\n"  # 1 MB, a million tokens: 500 MB as an ast
    write_entry(cache, KeyKind.FX_GRAPH, key, stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": None, "_fx_graph_cache_key": key,
        "_fx_graph_cache_debug_lines": ["[aaaa] example_inputs[0]: ('s0',)"],
        "fx_kwargs": {"is_backward": False}, "cache_key": "c" + "0" * 51, "source_code": source}))
    r = measured(cache, "pack", "--all", str(tmp_path / "p.tar.gz"))
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) <= 3, r
    assert "more than 150,000 tokens" in r.stderr, r
    assert not (tmp_path / "p.tar.gz").exists()
