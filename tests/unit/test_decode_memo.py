"""The entries of one FX key print the same graph: their inputs and hints are read once.

Synthetic entries (tests/synth.py), for counting parser calls: the fields themselves are
checked against real caches in tests/unit/test_projections.py and the torch tier.
"""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode import entries
from fxcache_core.decode.entries import LIGHT, decode_entry
from tests.synth import fx_entry_bytes


def _counting(monkeypatch) -> list[int]:
    calls = [0]
    real = entries.symbol_hints

    def counted(*a):
        calls[0] += 1
        return real(*a)

    monkeypatch.setattr(entries, "symbol_hints", counted)
    if hasattr(entries, "_fx_graph"):  # nothing remembered from an earlier test
        monkeypatch.setattr(entries, "_fx_graph", entries._LastAnswer(entries._fx_graph_fields))
    return calls


def test_siblings_of_one_graph_read_their_inputs_and_hints_once(monkeypatch):
    calls = _counting(monkeypatch)
    got = [decode_entry(fx_entry_bytes(f"{n} <= L['t0']", "fkey", ("s0", "s1")), KeyKind.FX_GRAPH, LIGHT)
           for n in (2, 3, 4)]
    assert calls[0] == 1
    assert {d.hints for d in got} == {(("s0", 8), ("s1", 8))}
    assert [d.guards_expr for d in got] == ["2 <= L['t0']", "3 <= L['t0']", "4 <= L['t0']"]


def test_an_entry_of_other_inputs_is_read_afresh(monkeypatch):
    calls = _counting(monkeypatch)
    a = decode_entry(fx_entry_bytes("2 <= L['t0']", "fkey", ("s0",)), KeyKind.FX_GRAPH, LIGHT)
    b = decode_entry(fx_entry_bytes("2 <= L['t0']", "fkey", ("s0", "s7")), KeyKind.FX_GRAPH, LIGHT)
    assert calls[0] == 2
    assert a.hints == (("s0", 8),) and b.hints == (("s0", 8), ("s7", 8))
    assert [i.expr for i in b.inputs] == ["s0", "s7"]
