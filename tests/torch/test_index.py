"""The persistent index of decoded entries: exact round trip, trusted only while the file is unchanged."""

from __future__ import annotations

import os

import pytest

from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog import pool as pool_mod
from fxcache_core.catalog import reader as catalog_mod
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.state.index import Index, default_index_path, from_json, light, to_json

pytestmark = pytest.mark.torch


def test_every_real_entry_round_trips_through_the_index_json(real_cache):
    cat = Catalog(scan_cache(real_cache.root))
    n = 0
    for e in cat.scan.entries():
        d = cat.load(e, full=True)
        assert isinstance(d, DecodedEntry)
        assert from_json(to_json(d)) == light(d)
        n += 1
    assert n >= 20


def test_a_warm_index_answers_without_reading_files_until_one_changes(cache_copy, tmp_path, monkeypatch):
    idx_path = tmp_path / "index.sqlite"
    scan = scan_cache(cache_copy)
    cold = Catalog(scan, Index(idx_path))
    first = {e.file.where: cold.load(e) for e in scan.entries()}
    cold._index.close()

    reads = []  # the entries sent to a decode worker, which reads them
    one, many = catalog_mod.decode_one, catalog_mod.decode_entries
    monkeypatch.setattr(catalog_mod, "decode_one", lambda e, *a: reads.append(e.path) or one(e, *a))
    monkeypatch.setattr(catalog_mod, "decode_entries",
                        lambda es, *a: reads.extend(e.path for e in es) or many(es, *a))
    warm = Catalog(scan_cache(cache_copy), Index(idx_path))
    assert {e.file.where: warm.load(e) for e in warm.scan.entries()} == first
    assert reads == []
    assert all(warm.name_matches_content(e) for e in warm.scan.entries())

    # A file changed in place (same name, other bytes, new mtime): the index is not trusted.
    e = next(iter(warm.scan.entries()))
    e.path.write_bytes(b"not a pickle")
    os.utime(e.path, ns=(e.file.mtime_ns + 10**9, e.file.mtime_ns + 10**9))
    again = Catalog(scan_cache(cache_copy), Index(idx_path))
    e2 = next(x for x in again.scan.entries() if x.file.where == e.file.where)
    assert isinstance(again.load(e2), Unreadable) and reads == [e.path]
    assert again.name_matches_content(e2) is False
    # full=True always has the debug lines (the index keeps the light form only).
    fx = next(x for x in again.scan.entries() if x.kind.value == "fxgraph" and x.file.where != e.file.where)
    assert again.load(fx).debug_lines == () and again.load(fx, full=True).debug_lines


def test_the_index_lives_outside_the_cache_and_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    p = default_index_path(tmp_path / "cache")
    assert p is not None and p.parent == tmp_path / "idx" and p.suffix == ".sqlite"
    monkeypatch.setenv("FXCACHE_NO_INDEX", "1")
    assert default_index_path(tmp_path / "cache") is None
    assert not Index(None).enabled
    bad = tmp_path / "file"
    bad.write_text("")
    assert not Index(bad / "sub" / "index.sqlite").enabled  # cannot create it: off, no error


def _plan_rows(plan):
    return [(r.file.where, r.reasons) for r in plan.removals]


def test_gc_plans_the_same_with_the_index_and_deletes_as_corrupt_only_what_the_bytes_prove(cache_copy, tmp_path):
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy

    scan = scan_cache(cache_copy)
    policy = GcPolicy(max_size_bytes=scan.size // 2, keep_last=1, now=scan.keys[0].mtime + 10)
    unindexed = _plan_rows(plan_gc(Catalog(scan), policy))
    assert unindexed
    idx_path = tmp_path / "index.sqlite"
    for _ in ("cold", "warm"):
        idx = Index(idx_path)
        assert _plan_rows(plan_gc(Catalog(scan_cache(cache_copy), idx), policy)) == unindexed
        idx.close()

    # A row that lies (the file unchanged on disk): the entry is corrupt, and its
    # bytes' hash is not its name. Reads may believe it; gc --unreadable does not.
    valid = next(e for e in scan.entries() if e.kind.value == "fxgraph")
    idx = Index(idx_path)
    idx.put(valid, "0" * 52, "not a pickle (a lying index row)")
    idx.close()
    cat = Catalog(scan_cache(cache_copy), Index(idx_path), hash_on_read=True)
    e = next(x for x in cat.scan.entries() if x.file.where == valid.file.where)
    assert isinstance(cat.load(e), Unreadable) and cat.name_matches_content(e) is False
    plan = plan_gc(cat, GcPolicy(unreadable=True))
    assert valid.file.where not in {r.file.where for r in plan.removals}
    assert isinstance(cat.load(e), DecodedEntry) and cat.name_matches_content(e) is True


def test_reading_ahead_in_worker_processes_gives_what_reading_one_by_one_gives(cache_copy, tmp_path, monkeypatch):
    fx = [e for e in scan_cache(cache_copy).entries() if e.kind.value == "fxgraph"]
    (fx[0].path.parent / "zz-corrupt").write_bytes(b"not a pickle")
    data = fx[1].path.read_bytes()
    (fx[1].path.parent / "zz-truncated").write_bytes(data[: len(data) // 2])
    scan = scan_cache(cache_copy)
    serial = Catalog(scan, hash_on_read=True)
    expected = {e.file.where: serial.load(e) for e in scan.entries()}
    assert sum(isinstance(d, Unreadable) for d in expected.values()) == 2

    monkeypatch.setattr(pool_mod, "PARALLEL_MIN_ENTRIES", 2)
    monkeypatch.setenv("FXCACHE_JOBS", "2")
    pools = []
    real = catalog_mod.decode_entries
    monkeypatch.setattr(catalog_mod, "decode_entries",
                        lambda todo, h, f, jobs, take: pools.append((len(todo), jobs)) or real(todo, h, f, jobs, take))
    par = Catalog(scan, Index(tmp_path / "index.sqlite"), hash_on_read=True)
    par.read_ahead(scan.entries())
    assert pools == [(scan.entry_count, 2)]
    assert {e.file.where: par.load(e) for e in scan.entries()} == expected
    assert [par.name_matches_content(e) for e in scan.entries()] == [
        serial.name_matches_content(e) for e in scan.entries()]
    par._index.close()

    # What the workers sent went into the index: a new run decodes no file.
    monkeypatch.setattr(catalog_mod, "decode_entries", lambda todo, *a: todo and pytest.fail(f"decoded {todo}"))
    monkeypatch.setattr(catalog_mod, "decode_one", lambda e, *a: pytest.fail(f"decoded {e}"))
    again = Catalog(scan_cache(cache_copy), Index(tmp_path / "index.sqlite"))
    again.read_ahead(again.scan.entries())
    assert {e.file.where: again.load(e) for e in again.scan.entries()} == expected


def test_an_index_row_that_lies_about_what_an_aot_entry_loads_does_not_get_it_removed(cache_copy, tmp_path):
    from dataclasses import replace

    from fxcache_core.decode.entries import FxRef
    from fxcache_core.prune import plan as gc_mod

    scan = scan_cache(cache_copy)
    truth = Catalog(scan)
    a = next(e for e in scan.entries() if e.kind.value == "aotautograd")
    da = truth.load(a)
    loaded = {r.key for r in (da.forward, da.backward) if r is not None}
    other = next(k for k in scan.keys if k.kind.value == "fxgraph" and k.key not in loaded)
    lie = replace(da, forward=FxRef(other.key, truth.load(other.entries[0]).guards_expr), backward=None)
    idx = Index(tmp_path / "index.sqlite")
    idx.put(a, a.name, lie)  # its true hash, a false body
    idx.close()

    def removed(plan):
        return {r.file.where for r in plan.removals}

    # Planned from the index alone, the lie would take `a` along with `other`'s entries...
    fooled = Catalog(scan_cache(cache_copy), Index(tmp_path / "index.sqlite"))
    assert a.file.where in removed(gc_mod._plan_rm(fooled, fooled.scan.key(other.key), ()))
    # ...but what a removal rests on is read again from the files.
    cat = Catalog(scan_cache(cache_copy), Index(tmp_path / "index.sqlite"))
    plan = gc_mod.plan_rm(cat, cat.scan.key(other.key))
    assert a.file.where not in removed(plan)
    assert {e.file.where for e in other.entries} <= removed(plan)
