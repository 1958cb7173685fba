"""The last set of the tenth round of evaluation families: floats and ints that reach the
graph only through an expression (``1 / scale``, ``g * g``), or two arguments whose values
the call swaps, so the graph holds the same constants in other places. Compiled with
``dynamic=False`` or ``None``, where Dynamo specializes them.
:mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the comments say what
each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q

_F = "tests.harness.evaluation.fns_r10:"

R10D_FAMILIES: list[Family] = [
    Family(
        "inv_only_static",
        _F + "inv_only",
        "inv_only",
        False,
        build=(({"x": [4, 8], "scale": 4.0},),),
        positional=1,
        doc="x * (1 / scale), built with scale=4.0 (dynamic=False)",
        queries=(
            _q("as built", x=[4, 8], scale=4.0),
            _q("scale the reciprocal of the built one", x=[4, 8], scale=0.25),
            _q("scale left out", x=[4, 8]),
            _q("scale as the int 4", x=[4, 8], scale=4),
        ),
    ),
    Family(
        "affine_swap_auto",
        _F + "affine_ab",
        "affine_ab",
        None,
        build=(({"x": [4, 8], "a": 3.0, "b": 5.0},),),
        positional=1,
        doc="x * a + b, built with a=3.0, b=5.0 (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], a=3.0, b=5.0),
            _q("a and b swapped", x=[4, 8], a=5.0, b=3.0),
            _q("both the built a", x=[4, 8], a=3.0, b=3.0),
            _q("both left out", x=[4, 8]),
        ),
    ),
    Family(
        "tile_swap_static",
        _F + "tile_ab",
        "tile_ab",
        False,
        build=(({"x": [4, 8], "a": 2, "b": 3},),),
        positional=1,
        doc="x.repeat(a, b), built with a=2, b=3 (dynamic=False)",
        queries=(
            _q("as built", x=[4, 8], a=2, b=3),
            _q("a and b swapped", x=[4, 8], a=3, b=2),
            _q("another a", x=[4, 8], a=4, b=3),
            _q("a=1", x=[4, 8], a=1, b=3),
        ),
    ),
    Family(
        "square_gain_auto",
        _F + "square_gain",
        "square_gain",
        None,
        build=(({"x": [4, 8], "g": 2.0},),),
        positional=1,
        doc="x * (g * g) + g, built with g=2.0 (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], g=2.0),
            _q("g the square of the built one", x=[4, 8], g=4.0),
            _q("g negated", x=[4, 8], g=-2.0),
            _q("g left out", x=[4, 8]),
        ),
    ),
]


def _m(shape: list[int], **more) -> dict:
    """A tensor with dim 0 marked dynamic."""
    return {"t": shape, "mark": [0], **more}


R10E_FAMILIES: list[Family] = [
    Family(
        "ranged_edges",
        _F + "ranged_norm",
        "ranged_norm",
        None,
        build=(({"x": _m([4, 8], min=2, max=16)},),),
        positional=1,
        doc="dim 0 marked with min=2, max=16 when built, then its edges and past them (dynamic=None)",
        queries=(
            _q("the upper edge", x=_m([16, 8], min=2, max=16)),
            _q("the lower edge", x=_m([2, 8], min=2, max=16)),
            _q("past the range, the same range marked", x=_m([20, 8], min=2, max=16)),
            _q("size 1, marked without a range", x=_m([1, 8])),
            _q("size 1, marked with min=1", x=_m([1, 8], min=1, max=16)),
        ),
    ),
    Family(
        "marked_under_true",
        _F + "ranged_norm",
        "ranged_norm",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="built unmarked under dynamic=True, then marked with and without a range (dynamic=True)",
        queries=(
            _q("marked, no range", x=_m([6, 8])),
            _q("marked with a range", x=_m([6, 8], min=2, max=8)),
            _q("marked, size 1", x=_m([1, 8])),
            _q("dim 1 marked static", x={"t": [6, 8], "static": [1]}),
            _q("dim 0 marked static", x={"t": [6, 8], "static": [0]}),
        ),
    ),
    Family(
        "duck_marked_auto",
        _F + "pair_sums",
        "pair_sums",
        None,
        build=(({"x": _m([4, 8]), "y": _m([4, 8])},),),
        positional=2,
        doc="two inputs of equal batch, both marked dynamic when built (dynamic=None)",
        queries=(
            _q("both another batch, equal", x=_m([6, 8]), y=_m([6, 8])),
            _q("batches differ", x=_m([4, 8]), y=_m([5, 8])),
            _q("y unmarked, equal batch", x=_m([6, 8]), y=[6, 8]),
            _q("batches differ, y unmarked", x=_m([6, 8]), y=[5, 8]),
        ),
    ),
    Family(
        "int_scale_dyn",
        _F + "int_scale",
        "int_scale",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="x * n + n with an int n, built with n=3 (dynamic=True)",
        queries=(
            _q("another n", x=[4, 8], n=5),
            _q("n=1", x=[4, 8], n=1),
            _q("n=0", x=[4, 8], n=0),
            _q("a negative n", x=[4, 8], n=-2),
            _q("n=True", x=[4, 8], n=True),
        ),
    ),
]
