"""The twelfth round of evaluation families: a str read by a helper beside an optional tensor
in a conditional expression, a bool read only in a nested function, a ``functools.partial``
binding a float, options from ``**opts``, ``*args`` tensors with a keyword-only weight,
``if w is None: ... else: ...``, ``mask if mask is not None else ones``, a size-0 dim,
``torch.is_grad_enabled()`` in the body, an in-place op before an optional dtype change, a
dict with an optional key, a tuple swapped by a flag, an int ``torch.roll`` shift, a module
with an in-place step buffer in training mode, and OLMo (clip_qkv), BioGPT, LeViT (train and
eval) and SqueezeBERT (token types).
:mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the comments say what
each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.families_r12b import R12D_FAMILIES as R12D_FAMILIES
from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r12:"
_H = "tests.harness.evaluation.hf_r12:"
_G = {"@grad": True}


def _ids(*shape: int) -> dict:
    return _t(list(shape), dtype="int64")


def _tup(*shapes) -> dict:
    return {"tuple": [list(s) for s in shapes]}


def _star(*shapes) -> dict:
    return {"star": [list(s) for s in shapes]}


def _d(**shapes) -> dict:
    return {"dict": {k: list(v) for k, v in shapes.items()}}


_IMG = [2, 3, 64, 64]

R12_FAMILIES: list[Family] = [
    Family(
        "helper_act_auto",
        _F + "helper_act",
        "helper_act",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a str read by a helper, an optional tensor in `y if scale is None else y * scale` (dynamic=None)",
        queries=(
            _q("kind 'silu' given, the default", x=[4, 8], kind="silu"),
            _q("kind 'relu'", x=[4, 8], kind="relu"),
            _q("a scale tensor given", x=[4, 8], scale=[8]),
            _q("scale=None given", x=[4, 8], scale=None),
        ),
    ),
    Family(
        "closure_gate_dyn",
        _F + "closure_gate",
        "closure_gate",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a bool read only inside a nested function, left at True when built (dynamic=True)",
        queries=(
            _q("gate=False", x=[4, 8], gate=False),
            _q("another batch", x=[6, 8]),
            _q("gate given as the int 0", x=[4, 8], gate=0),
            _q("gate=True given", x=[5, 8], gate=True),
        ),
    ),
    Family(
        "partial_scaled_auto",
        _F + "scaled",
        "_scaled_impl",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="functools.partial(fn, alpha=2.0) compiled; alpha's own default is 1.0 (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("alpha=2.0 given, the partial's value", x=[4, 8], alpha=2.0),
            _q("alpha=3.0", x=[4, 8], alpha=3.0),
            _q("shift=1", x=[4, 8], shift=1),
        ),
    ),
    Family(
        "kwargs_opts_auto",
        _F + "kwargs_opts",
        "kwargs_opts",
        None,
        build=(({"x": [4, 8], "norm": True},),),
        positional=1,
        doc="a bool and a float read from **opts with .get, norm=True when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], norm=True),
            _q("norm left out", x=[4, 8]),
            _q("gain given, its .get default", x=[4, 8], norm=True, gain=1.5),
            _q("another gain", x=[4, 8], norm=True, gain=2.0),
        ),
    ),
    Family(
        "star_sum_dyn",
        _F + "star_sum",
        "star_sum",
        True,
        build=(({"x": [4, 8], "ys": _star([4, 8])},),),
        positional=2,
        doc="*ys tensors summed into x, a keyword-only optional weight, one y when built (dynamic=True)",
        queries=(
            _q("two ys", x=[4, 8], ys=_star([4, 8], [4, 8])),
            _q("no ys", x=[4, 8]),
            _q("a weight given", x=[4, 8], ys=_star([4, 8]), weight=[8]),
            _q("another batch", x=[6, 8], ys=_star([6, 8])),
        ),
    ),
    Family(
        "opt_else_auto",
        _F + "opt_else",
        "opt_else",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if w is None: ones else: w * 2`, w left out when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("w given", x=[4, 8], w=[8]),
            _q("w=None given", x=[4, 8], w=None),
            _q("another batch", x=[6, 8]),
        ),
    ),
    Family(
        "opt_else_given_dyn",
        _F + "opt_else",
        "opt_else",
        True,
        build=(({"x": [4, 8], "w": [8]},),),
        positional=1,
        doc="`if w is None: ones else: w * 2`, w given when built (dynamic=True)",
        queries=(
            _q("w left out", x=[4, 8]),
            _q("another batch", x=[6, 8], w=[8]),
            _q("w of size 1", x=[4, 8], w=[1]),
            _q("w float64", x=[4, 8], w=_t([8], dtype="float64")),
        ),
    ),
    Family(
        "ternary_mask_dyn",
        _F + "ternary_mask",
        "ternary_mask",
        True,
        build=(({"x": [4, 8], "mask": [4, 8]},),),
        positional=1,
        doc="`mask if mask is not None else x.new_ones(...)`, a mask given when built (dynamic=True)",
        queries=(
            _q("mask left out", x=[4, 8]),
            _q("a one-row mask", x=[4, 8], mask=[1, 8]),
            _q("another batch", x=[6, 8], mask=[6, 8]),
            _q("a one-dimensional mask", x=[4, 8], mask=[8]),
        ),
    ),
    Family(
        "zero_rows_dyn",
        _F + "zero_rows",
        "zero_rows",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="x.sum(0) / max(x.shape[0], 1) (dynamic=True)",
        queries=(
            _q("no rows", x=[0, 8]),
            _q("one row", x=[1, 8]),
            _q("another batch", x=[5, 8]),
            _q("no columns", x=[4, 0]),
        ),
    ),
    Family(
        "grad_branch_auto",
        _F + "grad_branch",
        "grad_branch",
        None,
        build=(({"x": [4, 8], "w": [8, 8]},),),
        positional=2,
        states_grad=True,
        doc="torch.is_grad_enabled() read in the body, built under no_grad (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=[8, 8]),
            _q("grad enabled, nothing requires grad", x=[4, 8], w=[8, 8], **_G),
            _q("grad enabled, w requires grad", x=[4, 8], w=_t([8, 8], rg=True), **_G),
            _q("inference mode", x=[4, 8], w=[8, 8], **{"@inference": True}),
        ),
    ),
    Family(
        "inplace_cast_auto",
        _F + "inplace_cast",
        "inplace_cast",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="y = x.clone(); y.mul_(2); an optional .to(dtype), left out when built (dynamic=None)",
        queries=(
            _q("dtype float16", x=[4, 8], dtype={"dtype": "float16"}),
            _q("dtype float32, x's own", x=[4, 8], dtype={"dtype": "float32"}),
            _q("dtype=None given", x=[4, 8], dtype=None),
            _q("x float64", x=_t([4, 8], dtype="float64")),
        ),
    ),
    Family(
        "dict_opt_auto",
        _F + "dict_opt",
        "dict_opt",
        None,
        build=(({"d": _d(a=[4, 8])},),),
        positional=1,
        doc="d[key] * 2, plus d['b'] when 'b' is in d; only 'a' when built (dynamic=None)",
        queries=(
            _q("as built", d=_d(a=[4, 8])),
            _q("'b' in d too", d=_d(a=[4, 8], b=[4, 8])),
            _q("key 'b'", d=_d(a=[4, 8], b=[4, 8]), key="b"),
            _q("key 'a' given", d=_d(a=[4, 8]), key="a"),
        ),
    ),
    Family(
        "pair_swap_dyn",
        _F + "pair_swap",
        "pair_swap",
        True,
        build=(({"pair": _tup([4, 8], [4, 8])},),),
        positional=1,
        doc="a tuple of two tensors unpacked and swapped by a bool (dynamic=True)",
        queries=(
            _q("flip=True", pair=_tup([4, 8], [4, 8]), flip=True),
            _q("another batch", pair=_tup([6, 8], [6, 8])),
            _q("the second with one row", pair=_tup([4, 8], [1, 8])),
            _q("flip=False given", pair=_tup([4, 8], [4, 8]), flip=False),
        ),
    ),
    Family(
        "rolled_dyn",
        _F + "rolled",
        "rolled",
        True,
        build=(({"x": [4, 8], "shift": 1},),),
        positional=1,
        doc="torch.roll(x, shift, dims=-1), shift 1 when built (dynamic=True)",
        queries=(
            _q("shift 2", x=[4, 8], shift=2),
            _q("shift 0", x=[4, 8], shift=0),
            _q("shift -1", x=[4, 8], shift=-1),
            _q("another size", x=[4, 12], shift=1),
        ),
    ),
    Family(
        "step_norm_auto",
        _F + "step_norm",
        "StepNorm",
        None,
        model=True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a module: a step buffer bumped in place in training mode, a bool read by a method (dynamic=None)",
        queries=(
            _q("center=True", x=[4, 8], center=True),
            _q("training mode", x=[4, 8], **{"@train": True}),
            _q("eval mode stated", x=[4, 8], **{"@train": False}),
            _q("center=False given", x=[4, 8], center=False),
        ),
    ),
    Family(
        "olmo_clip",
        _H + "olmo",
        "OlmoForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="OLMo: q, k, v clamped to +-4.0, non-parametric layer norm (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("longer", input_ids=_ids(2, 12)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
        ),
    ),
    Family(
        "biogpt_dyn",
        _H + "biogpt",
        "BioGptForCausalLM",
        True,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="BioGPT: scaled embeddings, positions offset by 2 (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 16)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("one token", input_ids=_ids(2, 1)),
        ),
    ),
    Family(
        "levit_modes",
        _H + "levit",
        "LevitModel",
        None,
        model=True,
        build=(({"pixel_values": _IMG},),),
        doc="LeViT: attention biases cached in eval mode, indexed afresh in training mode (dynamic=None)",
        queries=(
            _q("as built", pixel_values=_IMG),
            _q("training mode", pixel_values=_IMG, **{"@train": True}),
            _q("another batch", pixel_values=[3, 3, 64, 64]),
            _q("eval mode stated", pixel_values=_IMG, **{"@train": False}),
        ),
    ),
    Family(
        "squeezebert_types",
        _H + "squeezebert",
        "SqueezeBertModel",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8), "token_type_ids": _ids(2, 8)},),),
        doc="SqueezeBERT: token types given when built (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), token_type_ids=_ids(2, 8)),
            _q("token types left out", input_ids=_ids(2, 8)),
            _q(
                "a mask given too",
                input_ids=_ids(2, 8),
                token_type_ids=_ids(2, 8),
                attention_mask=_ids(2, 8),
            ),
            _q("longer", input_ids=_ids(2, 12), token_type_ids=_ids(2, 12)),
        ),
    ),
]

R12B_FAMILIES: list[Family] = [
    Family(
        "dead_debug_auto",
        _F + "dead_debug",
        "dead_debug",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a flag whose branch computes a value nothing uses, False when built (dynamic=None)",
        queries=(
            _q("debug=True", x=[4, 8], debug=True),
            _q("debug=False given", x=[4, 8], debug=False),
            _q("debug=True, another batch", x=[6, 8], debug=True),
        ),
    ),
    Family(
        "gated_opt_auto",
        _F + "gated_opt",
        "gated_opt",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if w is not None and use_w: x = x * w`, w left out when built (dynamic=None)",
        queries=(
            _q("w given, use_w left True", x=[4, 8], w=[8]),
            _q("w given, use_w=False", x=[4, 8], w=[8], use_w=False),
            _q("use_w=False, w left out", x=[4, 8], use_w=False),
        ),
    ),
    Family(
        "gated_opt_given_auto",
        _F + "gated_opt",
        "gated_opt",
        None,
        build=(({"x": [4, 8], "w": [8]},),),
        positional=1,
        doc="`if w is not None and use_w: x = x * w`, w given when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=[8]),
            _q("w left out", x=[4, 8]),
            _q("w given, use_w=False", x=[4, 8], w=[8], use_w=False),
        ),
    ),
    Family(
        "global_default_auto",
        _F + "global_default",
        "global_default",
        None,
        build=(({"x": [4, 8], "w": [8]},),),
        positional=1,
        doc="`w if w is not None else _W` (a module global tensor, the same shape), w given when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=[8]),
            _q("w left out: the global instead", x=[4, 8]),
            _q("w=None given", x=[4, 8], w=None),
        ),
    ),
    Family(
        "head_pair_auto",
        _F + "head_pair",
        "head_pair",
        None,
        build=(({"xs": {"list": [[4, 8], [4, 8]]}},),),
        positional=1,
        doc="a, b = xs[:2]: two elements when built (dynamic=None)",
        queries=(
            _q("as built", xs={"list": [[4, 8], [4, 8]]}),
            _q("three elements, the third unread", xs={"list": [[4, 8], [4, 8], [4, 8]]}),
            _q("three elements, the third another shape", xs={"list": [[4, 8], [4, 8], [2, 3]]}),
        ),
    ),
    Family(
        "parity_dyn",
        _F + "parity",
        "parity",
        True,
        build=(({"x": [4, 8], "n": 2},),),
        positional=2,
        doc="an int read only through n % 2, 2 when built (dynamic=True)",
        queries=(
            _q("another even n", x=[4, 8], n=4),
            _q("an odd n", x=[4, 8], n=3),
            _q("n 0", x=[4, 8], n=0),
            _q("another batch", x=[6, 8], n=2),
        ),
    ),
    Family(
        "thresh_relu_auto",
        _F + "thresh_relu",
        "thresh_relu",
        None,
        build=(({"x": [4, 8], "thresh": 0.7},),),
        positional=1,
        doc="a float read only in `if thresh > 0.5`, 0.7 when built (dynamic=None)",
        queries=(
            _q("another thresh above 0.5", x=[4, 8], thresh=0.9),
            _q("a thresh below", x=[4, 8], thresh=0.2),
            _q("thresh left out (0.7)", x=[4, 8]),
        ),
    ),
    Family(
        "act_table_auto",
        _F + "act_table",
        "act_table",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="ACTS[name](x): 'relu' and 'rect' name one function, 'relu' when built (dynamic=None)",
        queries=(
            _q("name 'rect', the same function", x=[4, 8], name="rect"),
            _q("name 'tanh'", x=[4, 8], name="tanh"),
            _q("name 'relu' given", x=[4, 8], name="relu"),
        ),
    ),
    Family(
        "flag_mul_dyn",
        _F + "flag_mul",
        "flag_mul",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="x * flag + 1, flag a bool left True when built (dynamic=True)",
        queries=(
            _q("flag=False", x=[4, 8], flag=False),
            _q("flag given as the int 1", x=[4, 8], flag=1),
            _q("another batch", x=[6, 8]),
        ),
    ),
]

R12C_FAMILIES: list[Family] = [
    Family(
        "loc_flag_auto",
        _F + "loc_flag",
        "loc_flag",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a bool read only through locals()['flag'], False when built (dynamic=None)",
        queries=(
            _q("flag=True", x=[4, 8], flag=True),
            _q("flag=False given", x=[4, 8], flag=False),
            _q("as built", x=[4, 8]),
        ),
    ),
    Family(
        "zip_two_auto",
        _F + "zip_two",
        "zip_two",
        None,
        build=(({"x": [4, 8], "ys": {"list": [[4, 8], [4, 8]]}},),),
        positional=2,
        doc="for y, _ in zip(ys, range(2)): two elements when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], ys={"list": [[4, 8], [4, 8]]}),
            _q("three elements, the third unread", x=[4, 8], ys={"list": [[4, 8], [4, 8], [4, 8]]}),
            _q("one element", x=[4, 8], ys={"list": [[4, 8]]}),
        ),
    ),
    Family(
        "const_twice_auto",
        _F + "const_twice",
        "const_twice",
        None,
        build=(({"x": [4, 8], "alpha": 0.5},),),
        positional=1,
        doc="(x * alpha + 2.0): alpha 0.5 when built, the graph has 2.0 too (dynamic=None)",
        queries=(
            _q("alpha 2.0, the graph's other constant", x=[4, 8], alpha=2.0),
            _q("as built", x=[4, 8], alpha=0.5),
            _q("alpha left out (1.0)", x=[4, 8]),
        ),
    ),
    Family(
        "roll_plus_auto",
        _F + "roll_plus",
        "roll_plus",
        None,
        build=(({"x": [4, 8], "shift": 3},),),
        positional=1,
        doc="torch.roll(x, shift, -1) + 1: shift 3 when built, the graph has 1 too (dynamic=None)",
        queries=(
            _q("shift 1, the graph's other constant", x=[4, 8], shift=1),
            _q("shift -1", x=[4, 8], shift=-1),
            _q("as built", x=[4, 8], shift=3),
            _q("shift left out (2)", x=[4, 8]),
        ),
    ),
    Family(
        "pgo_two_auto",
        _F + "lin",
        "lin",
        None,
        build=(({"x": [4, 8], "w": [8, 8]}, {"x": [6, 8], "w": [8, 8]}),),
        positional=2,
        doc="two batches in one process: a recompile made the batch dynamic (dynamic=None)",
        queries=(
            _q("a third batch, a fresh process", x=[8, 8], w=[8, 8]),
            _q("the first batch, a fresh process", x=[4, 8], w=[8, 8]),
            _q(
                "a third batch after the first",
                x=[8, 8],
                w=[8, 8],
                warm_up=({"x": [4, 8], "w": [8, 8]},),
            ),
        ),
    ),
    Family(
        "rg_nograd_auto",
        _F + "lin",
        "lin",
        None,
        build=(({"x": [4, 8], "w": [8, 8]},),),
        positional=2,
        states_grad=True,
        doc="built under no_grad; w requiring grad, still under no_grad (dynamic=None)",
        queries=(
            _q("no_grad, w requires grad", x=[4, 8], w=_t([8, 8], rg=True)),
            _q("grad enabled, x requires grad", x=_t([4, 8], rg=True), w=[8, 8], **_G),
            _q(
                "inference mode, w requires grad",
                x=[4, 8],
                w=_t([8, 8], rg=True),
                **{"@inference": True},
            ),
        ),
    ),
]
