"""fit's rules for a symbol two dims share, on hand-made entries (the real caches of
tests/torch/test_oracle_suite.py check the same rules against torch: matmul_duck_off,
cat_cols_duck_off, xent_marked, two_tensors). Hand-made, because a fast tier needs
keys without a compile, and a sibling key that contradicts one is a layout the suite's
real cache has for one function only."""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import DecodedEntry, GraphInput
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.lookup.binding import DynamicMode, parse_shapes
from fxcache_core.lookup.fit import Sibling, fit
from fxcache_core.lookup.query import CallQuery


def _entry(*tensors: tuple[str, str], symints: tuple[tuple[str, str], ...] = ()) -> DecodedEntry:
    """An AOTAutograd entry whose graph takes SymInts (source, symbol) then tensors (source, type)."""
    inputs = [GraphInput(n, None, f"Sym({e})", expr=e, source=src) for n, (src, e) in enumerate(symints)]
    inputs += [GraphInput(len(inputs) + n, None, t, source=src) for n, (src, t) in enumerate(tensors)]
    return DecodedEntry(kind=KeyKind.AOT_AUTOGRAD, type_name="AOTAutogradResult", guards_expr=None,
                        inputs=tuple(inputs))


# x[m, k] @ w[k, n]: the key has one symbol for k (one graph input), as a forced
# equality and as duck sizing both give.
MATMUL = _entry(("L['x']", "f32[s0, s1][s1, 1]cpu"), ("L['w']", "f32[s1, s2][s2, 1]cpu"),
                symints=(("L['x'].size()[0]", "s0"), ("L['x'].size()[1]", "s1"), ("L['w'].size()[1]", "s2")))


def _fit(d, *shapes, mode=DynamicMode.TRUE, duck_shape=None, siblings=()):
    return fit(d, CallQuery(parse_shapes(shapes), mode=mode, duck_shape=duck_shape), siblings=lambda: siblings)


def test_a_shared_symbol_is_a_forced_equality_with_duck_sizing_off_or_marked_dims():
    assert not _fit(MATMUL, "x=[4,6]", "w=[6,3]", duck_shape=False).problems
    assert not _fit(MATMUL, "x=[4,6]:mark_dynamic=[0,1]", "w=[6,3]:mark_dynamic=[0,1]",
                    mode=DynamicMode.NONE).problems
    # m == k: with duck sizing off they keep two symbols, as the key has them.
    assert not _fit(MATMUL, "x=[5,5]", "w=[5,2]", duck_shape=False).problems
    # One symbol takes one value, in every mode.
    b = _fit(MATMUL, "x=[4,6]", "w=[7,3]", duck_shape=False)
    assert [p.code for p in b.problems] == ["symbol-conflict"]


def test_a_sibling_that_keeps_the_dims_apart_shows_the_sharing_is_duck_sizing():
    """two_tensors-like: one key shares a symbol between a and b (duck sizing), another
    key of the function keeps them apart: marked (or duck sizing off) the call traces
    the two-symbol graph."""
    shared = _entry(("L['a']", "f32[s0][1]cpu"), ("L['b']", "f32[s0][1]cpu"),
                    symints=(("L['a'].size()[0]", "s0"),))
    apart = _entry(("L['a']", "f32[s0][1]cpu"), ("L['b']", "f32[s1][1]cpu"),
                   symints=(("L['a'].size()[0]", "s0"), ("L['b'].size()[0]", "s1")))
    sib = Sibling("apartkey0000xyz", apart, (), same_function=True)
    b = _fit(shared, "a=[7]:mark_dynamic=[0]", "b=[7]:mark_dynamic=[0]", siblings=(sib,))
    assert [p.code for p in b.problems] == ["marked-dim-shared"]
    assert "apartkey0000" in b.problems[0] and "marked dims get a symbol each" in b.problems[0]
    # A key of another function is no evidence about this graph.
    other = Sibling("apartkey0000xyz", apart, (), same_function=False)
    assert not _fit(shared, "a=[7]:mark_dynamic=[0]", "b=[7]:mark_dynamic=[0]", siblings=(other,)).problems


def test_equal_hints_on_two_symbols_anywhere_make_a_duck_conflict_undecided():
    """Under dynamic=True with duck sizing not said, m == k is another graph (duck sizing
    on, torch's default) unless some key shows two symbols of equal hint (duck sizing
    off, or marked dims): then it is a note, not a decided problem."""
    assert {p.code for p in _fit(MATMUL, "x=[5,5]", "w=[5,2]").problems} == {"duck-sizing"}
    pair = _entry(("L['a']", "f32[s3][1]cpu"), ("L['b']", "f32[s4][1]cpu"))
    evidence = Sibling("pairkey00000abc", pair, (
        SymbolInfo("t0", "s3", "L['a'].size()[0]", 4), SymbolInfo("t1", "s4", "L['b'].size()[0]", 4)),
        same_function=False)
    b = _fit(MATMUL, "x=[5,5]", "w=[5,2]", siblings=(evidence,))
    assert not b.problems and {n.code for n in b.notes} == {"duck-sizing-off"}
    assert "pairkey00000 (another function)" in b.notes[0]
    # Said on: decided again, whatever the cache shows.
    b = _fit(MATMUL, "x=[5,5]", "w=[5,2]", duck_shape=True, siblings=(evidence,))
    assert {p.code for p in b.problems} == {"duck-sizing"}
    # An int argument equal to a size is never duck-sized with it: no evidence.
    ints = Sibling("intkey000000abc", pair, (
        SymbolInfo("t0", "s3", "L['a'].size()[0]", 4), SymbolInfo("t1", "s4", "L['n']", 4)),
        same_function=True)
    assert {p.code for p in _fit(MATMUL, "x=[5,5]", "w=[5,2]", siblings=(ints,)).problems} == {"duck-sizing"}
