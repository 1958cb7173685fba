"""The thirteenth round of evaluation families: premises of the rules that decide, attacked
(sides with the same ops or one constant apart, -0.0 and floats past float32's precision,
values that give one graph through abs/round/modulo, ints into repeat/slices/arange/range,
recompiles after warm-ups that changed other inputs, a data-dependent graph break, grad).
:mod:`tests.harness.evaluation.families` adds them; nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r13:"
_G = {"@grad": True}


def _l(*shapes) -> dict:
    return {"list": [list(s) for s in shapes]}


R13_FAMILIES: list[Family] = [
    Family(
        "elif_same_auto",
        _F + "elif_same",
        "elif_same",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an elif chain whose else side traces the 'a' side's ops (dynamic=None)",
        queries=(
            _q("mode 'c': the else side", x=[4, 8], mode="c"),
            _q("mode 'b'", x=[4, 8], mode="b"),
            _q("mode 'a' given", x=[4, 8], mode="a"),
        ),
    ),
    Family(
        "const_side_auto",
        _F + "const_side",
        "const_side",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="sides of a flag differing only in a float constant (dynamic=None)",
        queries=(
            _q("flag=False", x=[4, 8], flag=False),
            _q("flag=True given", x=[4, 8], flag=True),
        ),
    ),
    Family(
        "int_float_side_auto",
        _F + "int_float_side",
        "int_float_side",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="sides of a flag multiplying by 2 and by 2.0 (dynamic=None)",
        queries=(
            _q("flag=False", x=[4, 8], flag=False),
            _q("flag=False, another batch", x=[6, 8], flag=False),
        ),
    ),
    Family(
        "clamp_lo_auto",
        _F + "clamp_lo",
        "clamp_lo",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a float clamp bound left at 0.0 when built (dynamic=None)",
        queries=(
            _q("lo=-0.0", x=[4, 8], lo=-0.0),
            _q("lo=0 (an int)", x=[4, 8], lo=0),
            _q("lo=0.0 given", x=[4, 8], lo=0.0),
        ),
    ),
    Family(
        "detached_auto",
        _F + "detached",
        "detached",
        None,
        build=(({"x": [4, 8], "w": [8, 8], **_G},),),
        positional=2,
        states_grad=True,
        doc="x detached before use, built with grad enabled and nothing requiring grad (dynamic=None)",
        queries=(
            _q("x requires grad", x=_t([4, 8], rg=True), w=[8, 8], **_G),
            _q("w requires grad", x=[4, 8], w=_t([8, 8], rg=True), **_G),
            _q("no_grad", x=[4, 8], w=[8, 8]),
        ),
    ),
    Family(
        "ends_auto",
        _F + "ends",
        "ends",
        None,
        build=(({"xs": _l([4, 8], [4, 8], [4, 8])},),),
        positional=1,
        doc="a list read only at xs[0] and xs[-1], built with three (dynamic=None)",
        queries=(
            _q("two elements", xs=_l([4, 8], [4, 8])),
            _q("four elements", xs=_l([4, 8], [4, 8], [4, 8], [4, 8])),
            _q("three, the middle another shape", xs=_l([4, 8], [2, 3], [4, 8])),
        ),
    ),
    Family(
        "rep_dyn",
        _F + "rep",
        "rep",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="an int into repeat, built with n=3 (dynamic=True)",
        queries=(
            _q("n=5", x=[4, 8], n=5),
            _q("n=1", x=[4, 8], n=1),
            _q("n left at 2", x=[4, 8]),
            _q("n=0", x=[4, 8], n=0),
        ),
    ),
    Family(
        "head_dyn",
        _F + "head",
        "head",
        True,
        build=(({"x": [4, 8], "k": 3},),),
        positional=1,
        doc="an int into a slice, built with k=3 (dynamic=True)",
        queries=(
            _q("k=5", x=[4, 8], k=5),
            _q("k=8: the whole dim", x=[4, 8], k=8),
            _q("k=10: past the dim", x=[4, 8], k=10),
            _q("k=1", x=[4, 8], k=1),
        ),
    ),
    Family(
        "ar_two_auto",
        _F + "ar",
        "ar",
        None,
        build=(({"x": [4, 8], "n": 8}, {"x": [4, 6], "n": 6}),),
        positional=1,
        doc="an int into arange beside a dim of that size; two sizes in one process (dynamic=None)",
        queries=(
            _q("n=5, a fresh process", x=[4, 5], n=5),
            _q("n=5 after n=8", x=[4, 5], n=5, warm_up=({"x": [4, 8], "n": 8},)),
            _q("n=1 after n=8", x=[4, 1], n=1, warm_up=({"x": [4, 8], "n": 8},)),
            _q("n=6 after n=8", x=[4, 6], n=6, warm_up=({"x": [4, 8], "n": 8},)),
        ),
    ),
    Family(
        "kw_int_dyn",
        _F + "kw_int",
        "kw_int",
        True,
        build=(({"x": [4, 8], "a": 3},),),
        positional=1,
        doc="an int from **kwargs into arithmetic, built with a=3 (dynamic=True)",
        queries=(
            _q("a=4", x=[4, 8], a=4),
            _q("a=1", x=[4, 8], a=1),
            _q("a=3.0 (a float)", x=[4, 8], a=3.0),
        ),
    ),
    Family(
        "cast_auto",
        _F + "cast",
        "cast",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an optional cast left out when built (dynamic=None)",
        queries=(
            _q("dtype=float32: a no-op cast", x=[4, 8], dtype={"dtype": "float32"}),
            _q("dtype=float64", x=[4, 8], dtype={"dtype": "float64"}),
        ),
    ),
]

R13B_FAMILIES: list[Family] = [
    Family(
        "two_floats_auto",
        _F + "two_floats",
        "two_floats",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="two float constants, a=2.0 and b=3.0 when built (dynamic=None)",
        queries=(
            _q("a and b swapped", x=[4, 8], a=3.0, b=2.0),
            _q("both 2.0", x=[4, 8], a=2.0, b=2.0),
            _q("as built, given", x=[4, 8], a=2.0, b=3.0),
        ),
    ),
    Family(
        "float_sum_auto",
        _F + "float_sum",
        "float_sum",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="two floats reaching the graph as their sum, 3.0 when built (dynamic=None)",
        queries=(
            _q("a and b swapped: the same sum", x=[4, 8], a=2.0, b=1.0),
            _q("another sum", x=[4, 8], a=2.0, b=2.0),
        ),
    ),
    Family(
        "slice_end_auto",
        _F + "slice_end",
        "slice_end",
        None,
        build=(({"x": [4, 8], "b": 8},),),
        positional=1,
        doc="an int slice end at the dim's size when built (dynamic=None)",
        queries=(
            _q("b=100: past the dim", x=[4, 8], b=100),
            _q("b=9", x=[4, 8], b=9),
            _q("b=-1", x=[4, 8], b=-1),
            _q("b=8, another batch", x=[6, 8], b=8),
        ),
    ),
    Family(
        "loop_n_dyn",
        _F + "loop_n",
        "loop_n",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="an int read only by range(), built with n=3 (dynamic=True)",
        queries=(
            _q("n=4", x=[4, 8], n=4),
            _q("n=3, another batch", x=[6, 8], n=3),
        ),
    ),
    Family(
        "gt_n_dyn",
        _F + "gt_n",
        "gt_n",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="an int tested by `if n > 2:` and multiplied in, built with n=3 (dynamic=True)",
        queries=(
            _q("n=5", x=[4, 8], n=5),
            _q("n=2: the other side", x=[4, 8], n=2),
            _q("n=1", x=[4, 8], n=1),
        ),
    ),
    Family(
        "clamp_pair_dyn",
        _F + "clamp_pair",
        "clamp_pair",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="two float clamp bounds left at -1.0 and 1.0 when built (dynamic=True)",
        queries=(
            _q("bounds swapped", x=[4, 8], lo=1.0, hi=-1.0),
            _q("lo=-2.0", x=[4, 8], lo=-2.0),
            _q("lo=0.0", x=[4, 8], lo=0.0),
        ),
    ),
    Family(
        "mark_one_auto",
        _F + "rep",
        "rep",
        None,
        build=(({"x": _t([4, 8], mark=[0])},),),
        positional=1,
        doc="a marked batch, built at 4 (dynamic=None)",
        queries=(
            _q("batch 1, marked", x=_t([1, 8], mark=[0])),
            _q("batch 1, not marked", x=[1, 8]),
            _q("batch 6, not marked", x=[6, 8]),
            _q("batch 6, marked, n=3", x=_t([6, 8], mark=[0]), n=3),
        ),
    ),
]

R13C_FAMILIES: list[Family] = [
    Family(
        "abs_scale_auto",
        _F + "abs_scale",
        "abs_scale",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a float through abs() into a mul, s=2.0 when built (dynamic=None)",
        queries=(
            _q("s=-2.0: the same constant", x=[4, 8], s=-2.0),
            _q("s=3.0", x=[4, 8], s=3.0),
        ),
    ),
    Family(
        "round_lo_auto",
        _F + "round_lo",
        "round_lo",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a float clamp bound rounded to one place, 0.0 when built (dynamic=None)",
        queries=(
            _q("lo=0.01: rounds to 0.0", x=[4, 8], lo=0.01),
            _q("lo=0.5", x=[4, 8], lo=0.5),
        ),
    ),
    Family(
        "roll_mod_auto",
        _F + "roll_mod",
        "roll_mod",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an int shift taken modulo 8, k=3 when built (dynamic=None)",
        queries=(
            _q("k=11: the same shift", x=[4, 8], k=11),
            _q("k=4", x=[4, 8], k=4),
        ),
    ),
    Family(
        "sq_sum_two_auto",
        _F + "sq_sum",
        "sq_sum",
        None,
        build=(({"x": [4, 8]}, {"x": [6, 8]}),),
        positional=1,
        doc="two batches in one process: a static key and a dynamic-batch key (dynamic=None)",
        queries=(
            _q("batch 6 after [4,9]: both dims changed", x=[6, 8], warm_up=({"x": [4, 9]},)),
            _q("batch 6 after a rank-3 call", x=[6, 8], warm_up=({"x": [4, 8, 2]},)),
            _q("batch 6 after [6,9]: only dim 1 changed", x=[6, 8], warm_up=({"x": [6, 9]},)),
            _q("batch 6 after [4,8]", x=[6, 8], warm_up=({"x": [4, 8]},)),
        ),
    ),
    Family(
        "nograd_block_auto",
        _F + "nograd_block",
        "nograd_block",
        None,
        build=(({"x": [4, 8], "w": [8, 8], **_G},),),
        positional=2,
        states_grad=True,
        doc="w used only under torch.no_grad() in the body, built with grad enabled (dynamic=None)",
        queries=(
            _q("w requires grad", x=[4, 8], w=_t([8, 8], rg=True), **_G),
            _q("x requires grad", x=_t([4, 8], rg=True), w=[8, 8], **_G),
        ),
    ),
]

R13D_FAMILIES: list[Family] = [
    Family(
        "data_branch_dyn",
        _F + "data_branch",
        "data_branch",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a branch on y.sum() > 0 (a graph break), built where the sum is positive (dynamic=True)",
        queries=(
            _q("batch 6: the sum positive", x=[6, 8]),
            _q("batch 5: the sum negative", x=[5, 8]),
            _q("[4,7]: the sum negative", x=[4, 7]),
        ),
    ),
    Family(
        "pgo_two_dims_auto",
        _F + "sq_sum",
        "sq_sum",
        None,
        build=(({"x": [4, 8]}, {"x": [6, 8]}), ({"x": [4, 8]}, {"x": [4, 10]})),
        positional=1,
        doc="two processes, each changing another dim (dynamic=None)",
        queries=(
            _q("a fresh process, batch 6", x=[6, 8]),
            _q("a fresh process, [8,12]", x=[8, 12]),
            _q("a fresh process, [4,8]", x=[4, 8]),
        ),
    ),
    Family(
        "contig_branch_dyn",
        _F + "contig_branch",
        "contig_branch",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a branch on x.is_contiguous(), built contiguous (dynamic=True)",
        queries=(
            _q("transposed strides", x=_t([4, 8], stride=[1, 4])),
            _q("another batch", x=[6, 8]),
        ),
    ),
]

R13E_FAMILIES: list[Family] = [
    Family(
        "abs_neg_auto",
        _F + "abs_neg",
        "abs_neg",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="abs(s) into a mul and `if s < 0:` a neg, s=2.0 when built (dynamic=None)",
        queries=(
            _q("s=-2.0: the same constant, the other side", x=[4, 8], s=-2.0),
            _q("s=2.0 given", x=[4, 8], s=2.0),
        ),
    ),
    Family(
        "roll_two_auto",
        _F + "roll_two",
        "roll_two",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="k % 8 into a roll and k // 8 added, k=3 when built (dynamic=None)",
        queries=(
            _q("k=11: the same shift, another quotient", x=[4, 8], k=11),
            _q("k=3 given", x=[4, 8], k=3),
        ),
    ),
    Family(
        "unused_auto",
        _F + "unused",
        "unused",
        None,
        build=(({"x": [4, 8], "y": [4, 8]},),),
        positional=2,
        doc="a tensor parameter never read (dynamic=None)",
        queries=(
            _q("y another shape", x=[4, 8], y=[6, 3]),
            _q("y=None", x=[4, 8], y=None),
            _q("y float64", x=[4, 8], y=_t([4, 8], dtype="float64")),
        ),
    ),
    Family(
        "sum_dim_auto",
        _F + "sum_dim",
        "sum_dim",
        None,
        build=(({"x": [4, 8], "dim": 1},),),
        positional=1,
        doc="an int dim, built as 1 (dynamic=None)",
        queries=(
            _q("dim=-1: the same dim", x=[4, 8], dim=-1),
            _q("dim=0", x=[4, 8], dim=0),
            _q("dim left at 1", x=[4, 8]),
        ),
    ),
]
R13D_FAMILIES += R13E_FAMILIES

R13F_FAMILIES: list[Family] = [
    Family(
        "eps_prec_auto",
        _F + "eps_div",
        "eps_div",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="eps left at 1e-5 when built (dynamic=None)",
        queries=(
            _q("eps past float32's precision", x=[4, 8], eps=1.0000000001e-5),
            _q("eps within float32's precision of 1e-5", x=[4, 8], eps=1.00000001e-5),
            _q("eps=1e-05 given", x=[4, 8], eps=1e-05),
        ),
    ),
    Family(
        "tenth_auto",
        _F + "tenth",
        "tenth",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="s left at 0.30000000000000004 when built (dynamic=None)",
        queries=(
            _q("s=0.3", x=[4, 8], s=0.3),
            _q("s=0.30000000000000004 given", x=[4, 8], s=0.30000000000000004),
        ),
    ),
]
R13D_FAMILIES += R13F_FAMILIES

R13G_FAMILIES: list[Family] = [
    Family(
        "scaled_sum_two_auto",
        _F + "scaled_sum",
        "scaled_sum",
        None,
        build=(({"x": [4, 8]}, {"x": [6, 8]}),),
        positional=1,
        doc="two batches in one process, a left at 2.0 (dynamic=None)",
        queries=(
            _q("batch 6 after a=3.0", x=[6, 8], warm_up=({"x": [4, 8], "a": 3.0},)),
            _q("batch 6 after a=2.0 given", x=[6, 8], warm_up=({"x": [4, 8], "a": 2.0},)),
            _q("batch 8 after [4,8]", x=[8, 8], warm_up=({"x": [4, 8]},)),
        ),
    ),
    Family(
        "ar_warm_auto",
        _F + "ar",
        "ar",
        None,
        build=(({"x": [4, 8], "n": 8}, {"x": [4, 6], "n": 6}),),
        positional=1,
        doc="n and dim 1 of x changed in one process (dynamic=None)",
        queries=(
            _q(
                "n=6 after [5,8], n=8: dim 0 changed too",
                x=[4, 6],
                n=6,
                warm_up=({"x": [5, 8], "n": 8},),
            ),
            _q("n=7 after n=6", x=[4, 7], n=7, warm_up=({"x": [4, 6], "n": 6},)),
        ),
    ),
]
R13D_FAMILIES += R13G_FAMILIES

R13H_FAMILIES: list[Family] = [
    Family(
        "sq_sum_both_auto",
        _F + "sq_sum",
        "sq_sum",
        None,
        build=(({"x": [4, 8]}, {"x": [6, 10]}),),
        positional=1,
        doc="two calls in one process changing both dims: a key with both symbolic (dynamic=None)",
        queries=(
            _q("[6,8] after [4,8]: only dim 0 changed", x=[6, 8], warm_up=({"x": [4, 8]},)),
            _q("[6,10] after [4,8]", x=[6, 10], warm_up=({"x": [4, 8]},)),
        ),
    ),
    Family(
        "two_flags_auto",
        _F + "two_flags",
        "two_flags",
        None,
        build=(({"x": [4, 8]},), ({"x": [4, 8], "a": True},)),
        positional=1,
        doc="`if a:` and `if b:` each add a relu; built with neither and with a (dynamic=None)",
        queries=(
            _q("b=True: the same ops as a=True", x=[4, 8], b=True),
            _q("a=True and b=True", x=[4, 8], a=True, b=True),
            _q("a=True", x=[4, 8], a=True),
        ),
    ),
]
R13D_FAMILIES += R13H_FAMILIES

R13I_FAMILIES: list[Family] = [
    Family(
        "ones_dtype_auto",
        _F + "ones_dtype",
        "ones_dtype",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a dtype into torch.ones, left at torch.float32 when built (dynamic=None)",
        queries=(
            _q("dtype=None: the default dtype", x=[4, 8], dtype=None),
            _q("dtype=float64", x=[4, 8], dtype={"dtype": "float64"}),
            _q("dtype=float32 given", x=[4, 8], dtype={"dtype": "float32"}),
        ),
    ),
    Family(
        "sqrt_scale_auto",
        _F + "sqrt_scale",
        "sqrt_scale",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="math.sqrt(d), d left at 16.0 when built (dynamic=None)",
        queries=(
            _q("d=16 (an int)", x=[4, 8], d=16),
            _q("d=9.0", x=[4, 8], d=9.0),
        ),
    ),
    Family(
        "len_scale_auto",
        _F + "len_scale",
        "len_scale",
        None,
        build=(({"x": [4, 8], "xs": _l([2], [2])},),),
        positional=2,
        doc="len(xs) multiplied in, the elements never read, two when built (dynamic=None)",
        queries=(
            _q("three elements", x=[4, 8], xs=_l([2], [2], [2])),
            _q("two, other shapes", x=[4, 8], xs=_l([3], [5])),
        ),
    ),
]
R13D_FAMILIES += R13I_FAMILIES
