"""Coverage sweeps: segments follow torch's lookup rule value by value."""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup.coverage import coverage
from fxcache_core.lookup.match import match
from tests.synth import fake_key, fx_entry_bytes, write_entry


@pytest.fixture
def key(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("2 <= L['t0'] and L['t0'] <= 7", k), name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("16 <= L['t0']", k), name="b")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] >= 5 and (100 // (L['t0'] - 30)) > 0", k), name="c")
    return tmp_path, k


def test_segments_follow_entry_order_gaps_and_errors(key):
    root, k = key
    scan = scan_cache(root)
    cov = coverage(Catalog(scan), scan.find(k), "t0", 0, 40)
    got = [(g.start, g.end, g.outcome, g.entry.name if g.entry else None) for g in cov.segments]
    assert got == [
        (0, 1, "miss", None), (2, 7, "hit", "a"), (8, 15, "miss", None), (16, 40, "hit", "b"),
    ]
    cov = coverage(Catalog(scan), scan.find(k), "s0", 25, 35)  # by symbol name; 'c' only matters past 'b'
    assert {g.outcome for g in cov.segments} == {"hit"}


def test_a_raising_guard_stops_the_lookup_at_that_value(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("(100 // (L['t0'] - 30)) > 0", k), name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] > 2", k), name="b")
    scan = scan_cache(tmp_path)
    cov = coverage(Catalog(scan), scan.find(k), "t0", 29, 31)
    assert [(g.start, g.outcome, g.entry.name) for g in cov.segments] == [
        (29, "hit", "b"), (30, "error", "a"), (31, "hit", "a")]
    assert "ZeroDivisionError" in cov.segments[1].note


def test_every_value_agrees_with_match(key):
    root, k = key
    scan = scan_cache(root)
    cat = Catalog(scan)
    cov = coverage(cat, scan.find(k), "t0", -3, 45)
    for g in cov.segments:
        for v in range(g.start, g.end + 1):
            (m,) = match(cat, {}, {"t0": v}, scan.find(k)).results
            assert (m.hit.name if m.hit else None) == (g.entry.name if g.outcome == "hit" else None), v


@pytest.mark.parametrize("name,lo,hi,match_", [
    ("t7", 1, 4, "not a placeholder"), ("t0", 5, 4, "empty range"), ("t0", 0, 10**7, "at most"),
])
def test_bad_ranges(key, name, lo, hi, match_):
    root, k = key
    scan = scan_cache(root)
    with pytest.raises(ShapeSpecError, match=match_):
        coverage(Catalog(scan), scan.find(k), name, lo, hi)


def test_a_sweep_stops_where_its_clause_budget_ends_and_says_so(key, monkeypatch):
    from fxcache_core.lookup import coverage as cov_mod

    root, k = key
    scan = scan_cache(root)
    whole = coverage(Catalog(scan), scan.find(k), "t0", 0, 40)
    assert whole.stopped is None and "stopped" not in whole.to_json()
    monkeypatch.setattr(cov_mod, "MAX_COVERAGE_CLAUSES", 20)
    part = coverage(Catalog(scan), scan.find(k), "t0", 0, 40)
    stop = part.segments[-1].end
    assert part.stopped is not None and part.stopped.code == "coverage-budget" and 2 <= stop < 40
    assert part.segments == tuple(g for g in whole.segments if g.end < stop) + (part.segments[-1],)
    doc = part.to_json()
    assert doc["covered"] == [0, stop] and doc["requested"] == [0, 40] and doc["stopped_code"] == "coverage-budget"
