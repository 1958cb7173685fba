"""Evaluation families on data-dependent jumps and aliased inputs: a graph break at a test on
a tensor's value, after which Dynamo resumes in one of two frames of one name (which one is the
data's choice), under each mode, with sides making the same ops, in a ``while`` and a ``for``;
and one tensor passed for two parameters, built so and called with two, or the reverse
(``{"same": "a"}``, :mod:`tests.harness.evaluation.calls`).
:mod:`tests.harness.evaluation.families` adds them; nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q

_F = "tests.harness.evaluation.fns_r14fg:"
_A = {"same": "a"}


def _sign_queries() -> tuple:
    # Each tensor is randn of a seed fixed by its place: the sign of its sum goes with the shape.
    return (
        _q("the build's shape", x=[4, 8]),
        _q("batch 5", x=[5, 8]),
        _q("batch 6", x=[6, 8]),
        _q("[4,7]", x=[4, 7]),
        _q("[3,3]", x=[3, 3]),
    )


R14FG_FAMILIES: list[Family] = [
    Family(
        "branch_on_input_dyn",
        _F + "branch_on_input",
        "branch_on_input",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a test on the input's sum (a graph break), the frame resumed takes x (dynamic=True)",
        queries=_sign_queries(),
    ),
    Family(
        "branch_on_input_auto",
        _F + "branch_on_input",
        "branch_on_input",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a test on the input's sum (a graph break), the frame resumed takes x (dynamic=None)",
        queries=_sign_queries(),
    ),
    Family(
        "branch_on_input_both_sides",
        _F + "branch_on_input",
        "branch_on_input",
        True,
        build=(({"x": [4, 8]}, {"x": [5, 8]}),),
        positional=1,
        doc="a test on the input's sum, built with a call down each side (dynamic=True)",
        queries=_sign_queries(),
    ),
    Family(
        "same_sides_dyn",
        _F + "same_sides",
        "same_sides",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a test on the input's max whose sides make the same ops (dynamic=True)",
        queries=_sign_queries(),
    ),
    Family(
        "while_data_dyn",
        _F + "while_data",
        "while_data",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a while loop on the data (dynamic=True)",
        queries=_sign_queries()[:3],
    ),
    Family(
        "for_data_dyn",
        _F + "for_data",
        "for_data",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a test on the data inside a for loop (dynamic=True)",
        queries=_sign_queries()[:3],
    ),
    Family(
        "aliased_built_dyn",
        _F + "two_inputs",
        "two_inputs",
        True,
        build=(({"a": [4, 8], "b": _A},),),
        positional=2,
        doc="built with one tensor for both parameters (dynamic=True)",
        queries=(
            _q("one tensor for both, another batch", a=[6, 8], b=_A),
            _q("two tensors", a=[4, 8], b=[4, 8]),
            _q("two tensors, another batch", a=[6, 8], b=[6, 8]),
        ),
    ),
    Family(
        "aliased_built_static",
        _F + "two_inputs",
        "two_inputs",
        False,
        build=(({"a": [4, 8], "b": _A},),),
        positional=2,
        doc="built with one tensor for both parameters (dynamic=False)",
        queries=(
            _q("one tensor for both", a=[4, 8], b=_A),
            _q("two tensors", a=[4, 8], b=[4, 8]),
        ),
    ),
    Family(
        "distinct_built_dyn",
        _F + "two_inputs",
        "two_inputs",
        True,
        build=(({"a": [4, 8], "b": [4, 8]},),),
        positional=2,
        doc="built with two tensors (dynamic=True)",
        queries=(
            _q("two tensors, another batch", a=[6, 8], b=[6, 8]),
            _q("one tensor for both", a=[4, 8], b=_A),
            _q("one tensor for both, another batch", a=[6, 8], b=_A),
        ),
    ),
    Family(
        "aliased_three_dyn",
        _F + "three_inputs",
        "three_inputs",
        True,
        build=(({"a": [4, 8], "b": _A, "c": [4, 8]},),),
        positional=3,
        doc="three parameters, a and b one tensor (dynamic=True)",
        queries=(
            _q("a and b one tensor, another batch", a=[6, 8], b=_A, c=[6, 8]),
            _q("three tensors", a=[4, 8], b=[4, 8], c=[4, 8]),
        ),
    ),
]
