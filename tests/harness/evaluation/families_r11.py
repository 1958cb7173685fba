"""The eleventh round of evaluation families: ``F.pad`` with an int pad and a non-constant
mode, ``gelu(approximate=...)`` beside a float gain, a kept tail slice ``x[:, -k:]`` (with
and without a marked range), a None-default tensor and a keyword-only bias, bool and str
flags, a float reaching the graph only squared, ints in ``reshape``, a list concatenated
along a keyword-only dim, size-1 broadcasts, ``repeat_interleave`` with two counts in one
process, a float clamp bound beside an int shift, and Granite (float multipliers), FNet
(Fourier mixing), RegNet (grouped convolutions) and CodeGen (partial rotary, two lengths in
one process).
:mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the comments say what
each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r11:"
_H = "tests.harness.evaluation.hf_r11:"


def _ids(*shape: int) -> dict:
    return _t(list(shape), dtype="int64")


def _l(*shapes) -> dict:
    return {"list": [list(s) for s in shapes]}


def _m(*shape: int) -> dict:
    """A tensor with dim 1 marked dynamic in the range [4, 16] (x[:, -3:] needs 3 columns or more)."""
    return _t(list(shape), mark=[1], min=4, max=16)


_IMG = [2, 3, 32, 32]

R11_FAMILIES: list[Family] = [
    Family(
        "pad_mode_dyn",
        _F + "pad_mode",
        "pad_mode",
        True,
        build=(({"x": [2, 3, 8], "p": 2},),),
        positional=1,
        doc="F.pad(x, (p, p), mode='replicate' by default), p given when built (dynamic=True)",
        queries=(
            _q("another pad", x=[2, 3, 8], p=3),
            _q("pad 1", x=[2, 3, 8], p=1),
            _q("pad 0", x=[2, 3, 8], p=0),
            _q("mode circular", x=[2, 3, 8], p=2, mode="circular"),
            _q("another length", x=[2, 3, 5], p=2),
        ),
    ),
    Family(
        "act_gain_auto",
        _F + "act_gain",
        "act_gain",
        None,
        build=(({"x": [4, 8], "beta": 0.5},),),
        positional=1,
        doc="gelu(x * beta, approximate=approx), approx left at 'tanh', beta 0.5 when built (dynamic=None)",
        queries=(
            _q("approximate 'tanh' given", x=[4, 8], approx="tanh", beta=0.5),
            _q("approximate 'none'", x=[4, 8], approx="none", beta=0.5),
            _q("beta left out (1.0)", x=[4, 8]),
            _q("beta negated", x=[4, 8], beta=-0.5),
            _q("another batch", x=[6, 8], beta=0.5),
        ),
    ),
    Family(
        "keep_tail_dyn",
        _F + "keep_tail",
        "keep_tail",
        True,
        build=(({"x": [4, 8], "k": 3},),),
        positional=2,
        doc="x[:, -k:], k an int below the width when built (dynamic=True)",
        queries=(
            _q("another k", x=[4, 8], k=5),
            _q("k 0 (every column)", x=[4, 8], k=0),
            _q("k equal to the width", x=[4, 8], k=8),
            _q("k past the width", x=[4, 8], k=10),
            _q("a narrower x", x=[4, 2], k=3),
        ),
    ),
    Family(
        "keep_tail_marked",
        _F + "keep_tail",
        "keep_tail",
        None,
        build=(({"x": _m(4, 8), "k": 3},),),
        positional=2,
        doc="x[:, -k:], x's width marked dynamic in [4, 16] (dynamic=None)",
        queries=(
            _q("a wider x, marked alike", x=_m(4, 12), k=3),
            _q("width 4 (the range's min), marked", x=_m(4, 4), k=3),
            _q("a wider x, not marked", x=[4, 12], k=3),
            _q("another k", x=_m(4, 8), k=5),
            _q("width past the range's max", x=_m(4, 20), k=3),
        ),
    ),
    Family(
        "opt_weight_auto",
        _F + "opt_weight",
        "opt_weight",
        None,
        build=(({"x": [4, 8], "w": [8]},),),
        positional=2,
        doc="x * w when w is not None (given when built), a keyword-only bias left None (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=[8]),
            _q("w left out", x=[4, 8]),
            _q("w None given", x=[4, 8], w=None),
            _q("a full-size w", x=[4, 8], w=[4, 8]),
            _q("a bias given", x=[4, 8], w=[8], bias=[8]),
        ),
    ),
    Family(
        "flag_norm_auto",
        _F + "flag_norm",
        "flag_norm",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a bool flag and a str pick the normalisation, both left at defaults when built (dynamic=None)",
        queries=(
            _q("center=True given", x=[4, 8], center=True),
            _q("center=False", x=[4, 8], center=False),
            _q("how='max'", x=[4, 8], how="max"),
            _q("center given as the int 1", x=[4, 8], center=1),
            _q("how='l2' given, center=False", x=[4, 8], center=False, how="l2"),
        ),
    ),
    Family(
        "square_temp_auto",
        _F + "square_temp",
        "square_temp",
        None,
        build=(({"x": [4, 8], "t": 0.5},),),
        positional=1,
        doc="x * (t * t): t reaches the graph only squared, 0.5 when built (dynamic=None)",
        queries=(
            _q("t negated", x=[4, 8], t=-0.5),
            _q("another t", x=[4, 8], t=0.25),
            _q("t left out (its default)", x=[4, 8]),
            _q(
                "t negated after a recompile", x=[4, 8], t=-0.5, warm_up=({"x": [4, 8], "t": 0.25},)
            ),
        ),
    ),
    Family(
        "heads_reshape_dyn",
        _F + "heads_reshape",
        "heads_reshape",
        True,
        build=(({"x": [2, 32], "h": 4, "d": 8},),),
        positional=3,
        doc="reshape(b, h, d), transpose, reshape(b, h * d), h and d ints (dynamic=True)",
        queries=(
            _q("h and d swapped", x=[2, 32], h=8, d=4),
            _q("another batch", x=[3, 32], h=4, d=8),
            _q("one head", x=[2, 32], h=1, d=32),
            _q("a smaller x", x=[2, 12], h=3, d=4),
            _q("batch 1", x=[1, 32], h=4, d=8),
        ),
    ),
    Family(
        "cat_list_dyn",
        _F + "cat_list",
        "cat_list",
        True,
        build=(({"xs": _l([2, 4], [3, 4])},),),
        positional=1,
        doc="torch.cat of a list along a keyword-only dim, an optional scale (dynamic=True)",
        queries=(
            _q("other row counts", xs=_l([4, 4], [6, 4])),
            _q("three tensors", xs=_l([2, 4], [3, 4], [1, 4])),
            _q("dim=1", xs=_l([2, 4], [2, 3]), dim=1),
            _q("a scale given", xs=_l([2, 4], [3, 4]), scale=2.0),
            _q("a one-row tensor", xs=_l([5, 4], [1, 4])),
        ),
    ),
    Family(
        "bcast_mul_dyn",
        _F + "bcast_mul",
        "bcast_mul",
        True,
        build=(({"x": [4, 8], "y": [4, 8]},),),
        positional=2,
        doc="(x * y).sum(-1), equal shapes when built (dynamic=True)",
        queries=(
            _q("y with one row", x=[4, 8], y=[1, 8]),
            _q("y one-dimensional", x=[4, 8], y=[8]),
            _q("another batch", x=[6, 8], y=[6, 8]),
            _q("x with one row", x=[1, 8], y=[4, 8]),
            _q("y with one column", x=[4, 8], y=[4, 1]),
        ),
    ),
    Family(
        "interleave_auto",
        _F + "interleave",
        "interleave",
        None,
        build=(({"x": [3, 4], "n": 2}, {"x": [3, 4], "n": 3}),),
        positional=2,
        doc="repeat_interleave(n), two counts in one process (dynamic=None)",
        queries=(
            _q("a third count", x=[3, 4], n=4),
            _q("the first count", x=[3, 4], n=2),
            _q("count 1", x=[3, 4], n=1),
            _q("another batch", x=[5, 4], n=2),
        ),
    ),
    Family(
        "clamp_shift_dyn",
        _F + "clamp_shift",
        "clamp_shift",
        True,
        build=(({"x": [4, 8], "lo": -1.0, "shift": 2},),),
        positional=1,
        doc="x.clamp(min=lo) + shift, a float bound and an int shift given when built (dynamic=True)",
        queries=(
            _q("another shift", x=[4, 8], lo=-1.0, shift=3),
            _q("shift 1", x=[4, 8], lo=-1.0, shift=1),
            _q("another bound", x=[4, 8], lo=-2.0, shift=2),
            _q("the bound as the int -1", x=[4, 8], lo=-1, shift=2),
            _q("both left out", x=[4, 8]),
        ),
    ),
    Family(
        "granite_mult",
        _H + "granite",
        "GraniteForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="Granite: float multipliers on embeddings, attention, residuals and logits (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("longer", input_ids=_ids(2, 12)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
        ),
    ),
    Family(
        "fnet_dyn",
        _H + "fnet",
        "FNetModel",
        True,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="FNet: token mixing by a 2-D FFT (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 16)),
            _q("batch 3", input_ids=_ids(3, 8)),
            _q("token types given", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8)),
            _q("length 1", input_ids=_ids(2, 1)),
        ),
    ),
    Family(
        "regnet_img",
        _H + "regnet",
        "RegNetModel",
        None,
        model=True,
        build=(({"pixel_values": _IMG},),),
        doc="RegNet: grouped convolutions, squeeze-and-excitation (dynamic=None)",
        queries=(
            _q("as built", pixel_values=_IMG),
            _q("batch 1", pixel_values=[1, 3, 32, 32]),
            _q("a larger image", pixel_values=[2, 3, 48, 48]),
            _q("output_hidden_states=True", pixel_values=_IMG, output_hidden_states=True),
        ),
    ),
    Family(
        "codegen_lengths",
        _H + "codegen",
        "CodeGenForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8)}, {"input_ids": _ids(2, 12)}),),
        doc="CodeGen: partial rotary, a fused qkv; two lengths in one process (dynamic=None)",
        queries=(
            _q("a third length", input_ids=_ids(2, 10)),
            _q("the first length", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("a mask given", input_ids=_ids(2, 10), attention_mask=_ids(2, 10)),
        ),
    ),
]

# Arguments whose different values can give the same graph: Python folds them first.
R11B_FAMILIES: list[Family] = [
    Family(
        "floor_scale_auto",
        _F + "floor_scale",
        "floor_scale",
        None,
        build=(({"x": [4, 8], "n": 8},),),
        positional=1,
        doc="x * (n // 4), n 8 when built (dynamic=None)",
        queries=(
            _q("n 9 (the same n // 4)", x=[4, 8], n=9),
            _q("n 12", x=[4, 8], n=12),
            _q("n left out (its default)", x=[4, 8]),
            _q("n as the float 8.0", x=[4, 8], n=8.0),
        ),
    ),
    Family(
        "reduce_alias_auto",
        _F + "reduce_alias",
        "reduce_alias",
        None,
        build=(({"x": [4, 8], "how": "sum"},),),
        positional=1,
        doc="'sum' and 'total' select the same branch, 'sum' when built (dynamic=None)",
        queries=(
            _q("the alias 'total'", x=[4, 8], how="total"),
            _q("'mean'", x=[4, 8], how="mean"),
            _q("how left out", x=[4, 8]),
            _q("'total', another size", x=[6, 8], how="total"),
        ),
    ),
    Family(
        "abs_gain_auto",
        _F + "abs_gain",
        "abs_gain",
        None,
        build=(({"x": [4, 8], "g": 2.0},),),
        positional=1,
        doc="x * abs(g), g 2.0 when built (dynamic=None)",
        queries=(
            _q("g negated", x=[4, 8], g=-2.0),
            _q("g the int 2", x=[4, 8], g=2),
            _q("another g", x=[4, 8], g=3.0),
            _q("g left out (its default)", x=[4, 8]),
        ),
    ),
    Family(
        "shape_only_auto",
        _F + "shape_only",
        "shape_only",
        None,
        build=(({"x": [4, 8], "y": [3, 5]},),),
        positional=2,
        doc="x.sum(-1) * y.shape[0]: y read only for its first size (dynamic=None)",
        queries=(
            _q("y in float64", x=[4, 8], y=_t([3, 5], dtype="float64")),
            _q("y with another second size", x=[4, 8], y=[3, 7]),
            _q("y with another first size", x=[4, 8], y=[5, 5]),
            _q("y one-dimensional", x=[4, 8], y=[3]),
        ),
    ),
    Family(
        "eps_floor_auto",
        _F + "eps_floor",
        "eps_floor",
        None,
        build=(({"x": [4, 8], "eps": 1e-5},),),
        positional=1,
        doc="x / (std + max(eps, 1e-3)), eps below the floor when built (dynamic=None)",
        queries=(
            _q("another eps below the floor", x=[4, 8], eps=1e-6),
            _q("eps above the floor", x=[4, 8], eps=0.01),
            _q("eps left out (its default)", x=[4, 8]),
            _q("eps at the floor", x=[4, 8], eps=1e-3),
        ),
    ),
]

# Keyword-only parameters: tensors, flags, ints and lists given or left out.
R11C_FAMILIES: list[Family] = [
    Family(
        "kw_bias_built",
        _F + "opt_weight",
        "opt_weight",
        None,
        build=(({"x": [4, 8], "w": [8], "bias": [8]},),),
        positional=2,
        doc="opt_weight built with its keyword-only bias given (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=[8], bias=[8]),
            _q("bias left out", x=[4, 8], w=[8]),
            _q("bias None given", x=[4, 8], w=[8], bias=None),
            _q("w left out, bias given", x=[4, 8], bias=[8]),
        ),
    ),
    Family(
        "kw_flags_auto",
        _F + "kw_flags",
        "kw_flags",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="keyword-only bool, float and str flags left at their defaults when built (dynamic=None)",
        queries=(
            _q("center=False", x=[4, 8], center=False),
            _q("another gain", x=[4, 8], gain=2.0),
            _q("how='max'", x=[4, 8], how="max"),
            _q("every default given", x=[4, 8], center=True, gain=1.0, how="l2"),
        ),
    ),
    Family(
        "kw_mix_dyn",
        _F + "kw_mix",
        "kw_mix",
        True,
        build=(({"x": [4, 8], "y": [4, 8], "n": 3},),),
        positional=1,
        doc="a keyword-only tensor and int, both given when built (dynamic=True)",
        queries=(
            _q("y left out", x=[4, 8], n=3),
            _q("another n", x=[4, 8], y=[4, 8], n=4),
            _q("another size", x=[6, 5], y=[6, 5], n=3),
            _q("y broadcast", x=[4, 8], y=[8], n=3),
        ),
    ),
    Family(
        "kw_cat_auto",
        _F + "kw_cat",
        "kw_cat",
        None,
        build=(({"x": [2, 4], "extras": {"tuple": [[3, 4]]}},),),
        positional=1,
        doc="a keyword-only tuple of tensors, one given when built (dynamic=None)",
        queries=(
            _q("as built", x=[2, 4], extras={"tuple": [[3, 4]]}),
            _q("two extras", x=[2, 4], extras={"tuple": [[3, 4], [1, 4]]}),
            _q("extras left out", x=[2, 4]),
            _q("another extra size", x=[2, 4], extras={"tuple": [[5, 4]]}),
        ),
    ),
]

# More keyword-only and positional-only tensors: left None when built, given later.
R11D_FAMILIES: list[Family] = [
    Family(
        "kw_mix_none_dyn",
        _F + "kw_mix",
        "kw_mix",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="kw_mix built with its keyword-only y left None (dynamic=True)",
        queries=(
            _q("y given", x=[4, 8], y=[4, 8], n=3),
            _q("y None given", x=[4, 8], y=None, n=3),
            _q("y given, another size", x=[6, 5], y=[6, 5], n=3),
        ),
    ),
    Family(
        "po_weight_auto",
        _F + "po_weight",
        "po_weight",
        None,
        build=(({"x": [4, 8]},),),
        positional=2,
        doc="a positional-only tensor left None when built (dynamic=None)",
        queries=(
            _q("w given", x=[4, 8], w=[8]),
            _q("as built", x=[4, 8]),
            _q("w None given", x=[4, 8], w=None),
        ),
    ),
    Family(
        "masked_mean_kw",
        _F + "masked_mean",
        "MaskedMean",
        None,
        model=True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a module whose forward takes a keyword-only mask, left None when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("a mask given", x=[4, 8], mask=[4, 8]),
            _q("mask None given", x=[4, 8], mask=None),
            _q("a broadcast mask given", x=[4, 8], mask=[8]),
        ),
    ),
]

# Keyword-only ints and floats baked into the graph (or taken as symbols).
R11E_FAMILIES: list[Family] = [
    Family(
        "kw_scale_auto",
        _F + "kw_scale",
        "kw_scale",
        None,
        build=(({"x": [4, 8], "n": 3, "lo": 0.5},),),
        positional=1,
        doc="a keyword-only int and float given when built (dynamic=None)",
        queries=(
            _q("another n", x=[4, 8], n=4, lo=0.5),
            _q("n left out (its default)", x=[4, 8], lo=0.5),
            _q("as built", x=[4, 8], n=3, lo=0.5),
            _q("another lo", x=[4, 8], n=3, lo=0.25),
        ),
    ),
    Family(
        "kw_scale_dyn",
        _F + "kw_scale",
        "kw_scale",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="a keyword-only int given when built, lo left at its default (dynamic=True)",
        queries=(
            _q("another n", x=[4, 8], n=5),
            _q("n 1", x=[4, 8], n=1),
            _q("n left out (its default)", x=[6, 8]),
            _q("lo given", x=[4, 8], n=3, lo=0.5),
        ),
    ),
]

# Tensors through **kwargs and *args: none when built, some given later.
R11F_FAMILIES: list[Family] = [
    Family(
        "kw_opts_auto",
        _F + "kw_opts",
        "kw_opts",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a bias read from **opts when present, none when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("a bias given", x=[4, 8], bias=[8]),
            _q("another keyword given", x=[4, 8], scale=[8]),
        ),
    ),
    Family(
        "var_add_auto",
        _F + "var_add",
        "var_add",
        None,
        build=(({"x": [4, 8], "rest": {"star": [[8]]}},),),
        positional=2,
        doc="tensors through *rest, one when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], rest={"star": [[8]]}),
            _q("two given", x=[4, 8], rest={"star": [[8], [8]]}),
            _q("none given", x=[4, 8], rest={"star": []}),
        ),
    ),
]

# Arguments that change Dynamo's guards but not the graph: a bool whose branches trace the
# same ops, a list with an element the code never reads.
R11G_FAMILIES: list[Family] = [
    Family(
        "twin_branch_auto",
        _F + "twin_branch",
        "twin_branch",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="if fast: x.sin() else: torch.sin(x), fast left True when built (dynamic=None)",
        queries=(
            _q("fast=False", x=[4, 8], fast=False),
            _q("fast=True given", x=[4, 8], fast=True),
            _q("fast=False, another size", x=[6, 8], fast=False),
        ),
    ),
    Family(
        "first_two_auto",
        _F + "first_two",
        "first_two",
        None,
        build=(({"xs": _l([4, 8], [4, 8])},),),
        positional=1,
        doc="xs[0] + xs[1], a list of two when built (dynamic=None)",
        queries=(
            _q("a third tensor, unread", xs=_l([4, 8], [4, 8], [4, 8])),
            _q("a third tensor of another size", xs=_l([4, 8], [4, 8], [2, 3])),
            _q("as built", xs=_l([4, 8], [4, 8])),
        ),
    ),
]
R11G_FAMILIES.append(
    Family(
        "kw_sum_auto",
        _F + "kw_sum",
        "kw_sum",
        None,
        build=(({"x": [4, 8], "xs": _l([4, 8])},),),
        positional=1,
        doc="a keyword-only list of tensors added to x, one when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], xs=_l([4, 8])),
            _q("two tensors", x=[4, 8], xs=_l([4, 8], [4, 8])),
            _q("the list left out", x=[4, 8]),
        ),
    )
)
