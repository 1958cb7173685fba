"""Review round 10 families: a failed size bound where the comparison hides from the
size-branch rule. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_rv10:"
_H = "tests.harness.evaluation.hf_rv10:"


def _f(name, fn, dyn, build, *queries, **kw):
    return Family(name, _F + fn, fn, dyn, build=(tuple(build),), queries=tuple(queries), **kw)


RV10_FAMILIES: list[Family] = [
    _f(
        "rv_helper_gate",
        "helper_gate",
        True,
        [{"x": [4, 8]}],
        _q("within", x=[4, 12]),
        _q("past 16", x=[4, 32]),
    ),
    _f(
        "rv_helper_gate_mark",
        "helper_gate",
        None,
        [{"x": _t([4, 8], mark=[1])}],
        _q("within", x=_t([4, 12], mark=[1])),
        _q("past 16", x=_t([4, 32], mark=[1])),
    ),
    _f(
        "rv_sub_gate",
        "sub_gate",
        True,
        [{"x": [6, 4]}],
        _q("within", x=[8, 4]),
        _q("below k", x=[3, 4]),
    ),
    _f(
        "rv_numel",
        "numel_gate",
        True,
        [{"x": [4, 4]}],
        _q("within", x=[4, 8]),
        _q("past 64", x=[4, 32]),
    ),
    _f("rv_in_tuple", "in_tuple", True, [{"x": [8, 4]}], _q("in", x=[3, 4]), _q("out", x=[5, 4])),
    _f(
        "rv_bool_var",
        "bool_var",
        True,
        [{"x": [4, 4]}],
        _q("within", x=[6, 4]),
        _q("past 8", x=[10, 4]),
    ),
    _f(
        "rv_index_cmp",
        "index_by_cmp",
        True,
        [{"x": [6, 4]}],
        _q("within", x=[8, 4]),
        _q("below", x=[3, 4]),
    ),
    _f(
        "rv_comp_filter",
        "comp_filter",
        True,
        [{"x": [6, 3], "y": [2, 3]}],
        _q("within", x=[7, 3], y=[3, 3]),
        _q("y past 4", x=[6, 3], y=[8, 3]),
        _q("x below 4", x=[3, 3], y=[2, 3]),
    ),
    _f(
        "rv_checked",
        "checked",
        True,
        [{"x": [6, 4]}],
        _q("within", x=[5, 4]),
        _q("below 4", x=[2, 4]),
    ),
    _f(
        "rv_halve_loop",
        "halve_loop",
        True,
        [{"x": [4, 32]}],
        _q("same trips", x=[4, 20]),
        _q("fewer trips", x=[4, 12]),
        _q("more trips", x=[4, 64]),
    ),
    _f(
        "rv_slice_fixed",
        "slice_fixed",
        True,
        [{"x": [4, 32]}],
        _q("within", x=[4, 20]),
        _q("below 16", x=[4, 8]),
    ),
    _f(
        "rv_pad_reflect",
        "pad_reflect",
        True,
        [{"x": [4, 8]}],
        _q("within", x=[4, 5]),
        _q("size 3", x=[4, 3]),
    ),
    _f(
        "rv_interp_down",
        "interp_down",
        True,
        [{"x": [1, 2, 16, 16]}],
        _q("within", x=[1, 2, 12, 12]),
        _q("upsample", x=[1, 2, 4, 4]),
    ),
    _f(
        "rv_unfold",
        "unfold_win",
        True,
        [{"x": [4, 16]}],
        _q("within", x=[4, 12]),
        _q("below window", x=[4, 3]),
    ),
    _f(
        "rv_bool_var2",
        "bool_var",
        True,
        [{"x": [4, 3]}],
        _q("within", x=[6, 3]),
        _q("past 8", x=[10, 3]),
    ),
    _f(
        "rv_numel2",
        "numel_gate",
        True,
        [{"x": [4, 3]}],
        _q("within", x=[4, 5]),
        _q("past 64", x=[4, 32]),
    ),
    _f(
        "rv_plain_gate",
        "plain_gate",
        True,
        [{"x": [6, 3]}],
        _q("within", x=[8, 3]),
        _q("below 5", x=[4, 3]),
        _q("below 5 b", x=[2, 3]),
    ),
    Family(
        "rv_mistral_sw",
        _H + "mistral_sw",
        "MistralForCausalLM",
        True,
        model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64")},),),
        queries=(
            _q("within", input_ids=_t([2, 10], dtype="int64")),
            _q("below window", input_ids=_t([2, 3], dtype="int64")),
        ),
    ),
]
