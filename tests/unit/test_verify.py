"""verify: a check that did not run is not a pass (synthetic caches: damaged input)."""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog import reader as catalog_mod
from fxcache_core.catalog.reader import Catalog
from fxcache_core.catalog.verify import verify
from tests.synth import fake_key, fx_entry_bytes, write_entry


def test_an_entry_over_the_decoding_limit_is_not_checked_and_not_a_pass(tmp_path, monkeypatch):
    key = fake_key(KeyKind.FX_GRAPH, "v")
    good = write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 1", key))
    big = write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 2", key) + b"\0" * 4096)
    monkeypatch.setattr(catalog_mod, "MAX_ENTRY_BYTES", good.stat().st_size + 1)
    rep = verify(Catalog(scan_cache(tmp_path)))
    assert rep.entries == 2 and rep.checked == 1
    assert [u.entry.path for u in rep.unchecked] == [big] and "decoding limit" in rep.unchecked[0].reason
    assert rep.bad == () and not rep.all_checked and not rep.passed
    j = rep.to_json()
    assert (j["entries"], j["checked"], j["not_checked"], j["problems"]) == (2, 1, 1, [])
    assert j["unchecked"][0]["path"] == str(big) and j["unchecked"][0]["key"] == key


def test_a_bad_entry_is_reported_with_what_is_wrong(tmp_path):
    key = fake_key(KeyKind.FX_GRAPH, "v")
    other = fake_key(KeyKind.FX_GRAPH, "w")
    write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 1", key))
    misfiled = write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 1", other))
    rep = verify(Catalog(scan_cache(tmp_path)))
    assert rep.all_checked and not rep.passed
    assert [(b.entry.path, b.problems) for b in rep.bad] == [
        (misfiled, (f"it says it is an entry of key {other[:12]}, filed under {key[:12]}",))]
