"""An AOTAutograd key's function comes from the compiled frames of its forward FX
key's first readable entry (only FX entries record the op stacks; every entry of a
key holds the same graph, the rule ``first_readable`` rests on): ``key_origins``
reads them in the same round as the keys' own first entries, and reads only where
each graph came from.

Synthetic (layouts CI cannot produce from one compile: an FX key whose first entries
are damaged, AOTAutograd keys whose FX key is not listed)."""

from __future__ import annotations

import pytest

import fxcache_core.catalog.reader as reader_mod
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.functions.origin import key_origins
from tests.synth import aot_entry_with_sources, fake_key, local_source, stub_pickle, write_entry


def _fx_entry(key: str, guards: str, function: str) -> bytes:
    stack = f'  File "/src/m.py", line 3, in {function}\n    return x + 1\n'
    return stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": guards, "_fx_graph_cache_key": key, "_fx_graph_cache_debug_lines": [],
        "fx_kwargs": {"is_backward": False}, "cache_linemap": [(10, stack)]})


def _cache(tmp_path, n_fx: int, damaged: int):
    """An FX key of ``n_fx`` entries, the first ``damaged`` (in torch's order) not
    pickles, and an AOTAutograd key loading each entry."""
    fx = fake_key(KeyKind.FX_GRAPH, "shared")
    paths = [write_entry(tmp_path, KeyKind.FX_GRAPH, fx, _fx_entry(fx, f"L['t0'] == {j + 2}", f"fn{j}"))
             for j in range(n_fx)]
    for j in range(n_fx):
        a = fake_key(KeyKind.AOT_AUTOGRAD, f"a{j}")
        write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, a, aot_entry_with_sources(
            f"L['t0'] == {j + 2}", (fx, f"L['t0'] == {j + 2}"), [("f32[3][1]cpu", local_source("x"))],
            origin=("forward", "/src/m.py", 3)))
    for p in sorted(paths, key=lambda p: p.name)[:damaged]:
        p.write_bytes(b"not a pickle")
    return scan_cache(tmp_path)


@pytest.mark.parametrize(("n_fx", "damaged"), [(1, 0), (3, 0), (3, 2)])
def test_each_aot_key_takes_the_frames_of_its_fx_keys_first_readable_entry(tmp_path, n_fx, damaged):
    scan = _cache(tmp_path, n_fx, damaged)
    got = key_origins(Catalog(scan), scan.keys)
    cat = Catalog(scan)
    fx = next(k for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    first = cat.first_readable(fx)[1]
    for k in scan.keys:
        assert got[k.key].outer == first.origin.outer, k
    assert got[fx.key] == first.origin


def test_one_round_reads_one_entry_per_key_and_only_where_it_came_from(tmp_path, monkeypatch):
    scan = _cache(tmp_path, 3, 0)
    rounds = []
    real = reader_mod.decode_origins
    monkeypatch.setattr(reader_mod, "decode_origins",
                        lambda todo, *a: rounds.append(sorted(e.file.where for e in todo)) or real(todo, *a))
    monkeypatch.setattr(reader_mod, "decode_entries", lambda *a: pytest.fail("decoded whole entries"))
    monkeypatch.setattr(reader_mod, "decode_one", lambda *a: pytest.fail("decoded a whole entry"))
    key_origins(Catalog(scan), scan.keys)
    assert rounds == [sorted(k.entries[0].file.where for k in scan.keys)]


def test_a_forward_fx_key_not_listed_is_read_in_a_later_round(tmp_path, monkeypatch):
    scan = _cache(tmp_path, 2, 1)
    aot = [k for k in scan.keys if k.kind is KeyKind.AOT_AUTOGRAD]
    rounds = []
    real = reader_mod.decode_origins
    monkeypatch.setattr(reader_mod, "decode_origins",
                        lambda todo, *a: rounds.append(len(todo)) or real(todo, *a))
    got = key_origins(Catalog(scan), aot)
    fx = next(k for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    assert rounds == [2, 1, 1]  # the AOT keys; the FX key's first entry (damaged); its second
    assert {o.outer[-1][0] for o in got.values()} == {Catalog(scan).first_readable(fx)[1].origin.outer[-1][0]}


def test_the_entries_after_a_first_that_records_no_origin_are_read_in_one_more_round(tmp_path, monkeypatch):
    """Entries of one FX key may be compiled from different code (stack traces are not
    hashed into the key): the key's origin is the first entry's, in torch's order, that
    records one, and the rest of its entries are read in one round, not one per entry."""
    fx = fake_key(KeyKind.FX_GRAPH, "traced-twice")
    for j, name in enumerate(["e0", "e1", "e2", "e3"]):
        body = {"guards_expr": f"L['t0'] == {j + 2}", "_fx_graph_cache_key": fx,
                "_fx_graph_cache_debug_lines": [], "fx_kwargs": {"is_backward": False}, "cache_linemap": []}
        if j >= 2:
            body["cache_linemap"] = [(10, f'  File "/src/m.py", line 3, in fn{j}\n    return x + 1\n')]
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx,
                    stub_pickle("torch._inductor.output_code", "CompiledFxGraph", body), name=name)
    scan = scan_cache(tmp_path)
    rounds = []
    real = reader_mod.decode_origins
    monkeypatch.setattr(reader_mod, "decode_origins",
                        lambda todo, *a: rounds.append([e.name for e in todo]) or real(todo, *a))
    got = key_origins(Catalog(scan), scan.keys)
    assert rounds == [["e0"], ["e1", "e2", "e3"]]
    assert got[fx].function == "fn2"


def test_where_a_graph_came_from_reads_as_the_whole_entry_says(tmp_path):
    """The origin view crosses from the workers as a list of its own, not an index row:
    what it gives of each entry is what the whole entry's light form says."""
    scan = _cache(tmp_path, 3, 1)
    got = Catalog(scan).origins(scan.entries())
    whole = Catalog(scan)
    for e in scan.entries():
        d, o = whole.load(e), got[e.file.where]
        if isinstance(d, Unreadable):
            assert isinstance(o, Unreadable) and (o.reason, o.cause) == (d.reason, d.cause)
            continue
        assert (o.kind, o.type_name, o.guards_expr, o.forward, o.origin, o.foreign, o.absent) == \
            (d.kind, d.type_name, d.guards_expr, d.forward, d.origin, d.foreign, d.absent)
        assert o.origin is not None and (o.origin.outer or e.kind is KeyKind.AOT_AUTOGRAD)
