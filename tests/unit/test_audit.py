"""Shadowed and overlapping entries, decided exactly on range-only guards."""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.lookup.audit import audit, audit_key
from tests.synth import fake_key, fx_entry_bytes, write_entry


def _findings(tmp_path, *guards):
    k = fake_key(KeyKind.FX_GRAPH, "|".join(map(str, guards)))
    for i, g in enumerate(guards):
        write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(g, k), name=f"e{i}")
    scan = scan_cache(tmp_path)
    return [(f.kind, f.earlier.name, f.later.name) for f in audit_key(Catalog(scan), scan.key(k))]


def test_a_later_entry_inside_an_earlier_region_is_shadowed(tmp_path):
    assert _findings(tmp_path, "2 <= L['t0'] and L['t0'] <= 100", "L['t0'] >= 10 and L['t0'] <= 20") == [
        ("shadowed", "e0", "e1")]


def test_no_guards_shadows_everything_after_it(tmp_path):
    assert _findings(tmp_path, None, "L['t0'] > 5") == [("shadowed", "e0", "e1")]


def test_overlapping_and_disjoint_regions(tmp_path):
    assert _findings(tmp_path, "2 <= L['t0'] and L['t0'] <= 10", "8 <= L['t0']") == [("overlap", "e0", "e1")]
    assert _findings(tmp_path, "2 <= L['t0'] and L['t0'] <= 7", "16 <= L['t0']") == []


def test_exclusions_and_other_placeholders_count(tmp_path):
    # e0 excludes t0 == 5, the only value e1 accepts: neither shadowed nor overlapping.
    assert _findings(tmp_path, "L['t0'] != 5 and 0 <= L['t0']", "L['t0'] == 5") == []
    assert _findings(tmp_path, "2 <= L['t0']", "3 <= L['t0'] and L['t1'] <= 4") == [("shadowed", "e0", "e1")]
    assert _findings(tmp_path, "2 <= L['t0'] and L['t1'] <= 4", "3 <= L['t0']") == [("overlap", "e0", "e1")]


def test_guards_beyond_ranges_are_not_guessed(tmp_path):
    assert _findings(tmp_path, "(L['t0'] % 4) == 0", "8 <= L['t0']") == [("not-analysed", "e0", "e1")]


def test_audit_lists_only_keys_with_findings(tmp_path):
    _findings(tmp_path, "2 <= L['t0'] and L['t0'] <= 7", "16 <= L['t0']")
    rep = audit(Catalog(scan_cache(tmp_path)))
    assert rep.results == () and rep.keys_checked >= 1 and rep.to_json() == []


def test_a_spent_budget_counts_the_pairs_it_left_and_names_the_keys(tmp_path):
    from fxcache_core.lookup.audit import AuditBudget

    for seed in ("a", "b"):
        k = fake_key(KeyKind.FX_GRAPH, seed)
        for i in range(5):  # 10 overlapping pairs a key
            write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(f"{i + 2} <= L['t0'] and L['t0'] <= {100 + i}", k), name=f"e{i}")
    catalog = Catalog(scan_cache(tmp_path))
    whole = audit(catalog)
    assert whole.partial == () and whole.stopped is None and whole.count("overlap") == 20
    part = audit(catalog, AuditBudget(pairs=13))
    assert part.count("overlap") == 13 and part.not_compared() == 7
    assert [(k.key, n) for k, n in part.partial] == [(catalog.scan.keys[1].key, 7)]
    assert part.stopped is not None and part.stopped.code == "audit-budget"
    rows = part.to_json()
    assert [r.get("not_compared") for r in rows] == [None, 7]
    assert "not_compared" not in whole.to_json()[0]
