"""fit's rule for a stride that is a symbol of its own (automatic dynamic makes one when a
call changes a stride at a recompile), on a hand-made entry; tests/torch/test_specialized_inputs.py
checks it against torch (strided_add)."""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import DecodedEntry, GraphInput
from fxcache_core.lookup.binding import DynamicMode, parse_shapes
from fxcache_core.lookup.fit import fit, stride_symbols
from fxcache_core.lookup.query import CallQuery
from fxcache_core.reasons import code_of

# (x * 2 + y).relu(), built with y contiguous then transposed: y.stride(1) is s91, a graph input.
STRIDED = DecodedEntry(
    kind=KeyKind.AOT_AUTOGRAD,
    type_name="AOTAutogradResult",
    guards_expr=None,
    inputs=(
        GraphInput(0, None, "f32[6, 4][4, 1]cpu", source="L['x']"),
        GraphInput(1, None, "Sym(s91)", expr="s91", source="L['y'].stride()[1]"),
        GraphInput(2, None, "f32[6, 4][1, s91]cpu", source="L['y']"),
    ),
)


def _codes(mode, auto=frozenset(), pgo=False):
    q = CallQuery(parse_shapes(["x=[6,4]", "y=[6,4]:stride=[1,6]"]), mode=mode, pgo=pgo)
    b = fit(STRIDED, q, auto=auto)
    return [code_of(r) for r in b.problems], [code_of(r) for r in b.notes]


def test_the_stride_symbols_are_those_with_a_stride_source():
    assert stride_symbols(STRIDED) == {"s91": "L['y'].stride()[1]"}


def test_a_first_call_under_dynamic_none_or_false_traces_the_stride_static():
    assert _codes(DynamicMode.NONE) == (["stride-traced-static"], [])
    assert _codes(DynamicMode.FALSE) == (["stride-traced-static"], [])
    # A saved profile could mark the stride dynamic: undecided, not ruled out.
    assert _codes(DynamicMode.NONE, pgo=True) == ([], ["pgo-state-unread"])


def test_after_a_recompile_the_stride_symbol_fits():
    assert _codes(DynamicMode.NONE, auto=frozenset({"L['y'].stride()[1]"})) == ([], [])
    assert _codes(DynamicMode.TRUE) == ([], [])  # left to the other rules, as before


# mlp(x), built with x = torch.randn(4, 1): its strides (1, 1) are in the key.
COLUMN = DecodedEntry(
    kind=KeyKind.AOT_AUTOGRAD,
    type_name="AOTAutogradResult",
    guards_expr=None,
    inputs=(GraphInput(0, None, "f32[4, 1][1, 1]cpu", source="L['x']"),),
)


def _column_codes(item):
    b = fit(COLUMN, CallQuery(parse_shapes([item]), mode=DynamicMode.NONE))
    return [code_of(r) for r in b.problems]


def test_a_size_one_dims_stride_is_part_of_the_key():
    # torch.randn(1, 4).t() is [4, 1] with strides (1, 4): Dynamo traces those strides, and the
    # call looks up another key (the evaluation family r14_stride_auto asks torch).
    assert _column_codes("x=[4,1]:stride=[1,4]") == ["stride-differs"]
    assert _column_codes("x=[4,1]") == []
    assert _column_codes("x=[4,1]:stride=[1,1]") == []
