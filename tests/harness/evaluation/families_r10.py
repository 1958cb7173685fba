"""The tenth round of evaluation families: a float expression of an argument reaching an op
(``alpha=-lr`` with two learning rates in one process, ``1 / scale`` given as a float or an
int), ``F.pad`` with a tuple and a str mode, ints in ``repeat``/``expand`` with a
keyword-only argument, ``torch.no_grad()`` inside a function trained under grad,
``gelu(approximate=...)`` and ``softmax(dtype=...)`` as keyword-only defaults, a dim marked
dynamic with a range, ``torch.stack`` of a list with a str dispatch, a module whose float
and str attributes steer its forward, and StableLM (partial rotary), GPT-BigCode
(multi-query attention), Qwen3 (query/key norms, two lengths in one process), DINOv2
(position embeddings interpolated to the image) and MobileNetV2 (depthwise convolutions,
``dynamic=True``).
:mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the comments say what
each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r10:"
_H = "tests.harness.evaluation.hf_r10:"
_G = {"@grad": True}


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


def _l(*shapes) -> dict:
    return {"list": [list(s) for s in shapes]}


def _w(rg: bool = True) -> dict:
    return _t([8, 4], rg=rg)


_IMG = [2, 3, 32, 32]

R10_FAMILIES: list[Family] = [
    Family(
        "sgd_alpha_auto",
        _F + "sgd_alpha",
        "sgd_alpha",
        None,
        build=(({"p": [4, 8], "g": [4, 8], "lr": 0.1}, {"p": [4, 8], "g": [4, 8], "lr": 0.01}),),
        positional=2,
        doc="p.add(g, alpha=-lr), two learning rates in one process (dynamic=None)",
        queries=(
            _q("the first lr", p=[4, 8], g=[4, 8], lr=0.1),
            _q("lr left out (its default is the first lr)", p=[4, 8], g=[4, 8]),
            _q("a third lr", p=[4, 8], g=[4, 8], lr=0.5),
            _q(
                "a third lr after a recompile",
                p=[4, 8],
                g=[4, 8],
                lr=0.5,
                warm_up=({"p": [4, 8], "g": [4, 8], "lr": 0.1},),
            ),
            _q("another size", p=[6, 8], g=[6, 8], lr=0.1),
        ),
    ),
    Family(
        "inv_scale_dyn",
        _F + "inv_scale",
        "inv_scale",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="x * (1 / scale) clamped at scale, scale left at its float default when built (dynamic=True)",
        queries=(
            _q("another size", x=[6, 3]),
            _q("scale given as its default", x=[4, 8], scale=2.0),
            _q("scale given as the int 2", x=[4, 8], scale=2),
            _q("another float scale", x=[4, 8], scale=4.0),
            _q("one row", x=[1, 8]),
        ),
    ),
    Family(
        "pad_tuple_auto",
        _F + "pad_to",
        "pad_to",
        None,
        build=(({"x": [2, 3, 8]},),),
        positional=1,
        doc="F.pad with a tuple default, a str mode and a float fill (dynamic=None)",
        queries=(
            _q("as built", x=[2, 3, 8]),
            _q("the default tuple given", x=[2, 3, 8], pad={"tuple": [1, 1]}),
            _q("another tuple", x=[2, 3, 8], pad={"tuple": [2, 0]}),
            _q("mode reflect", x=[2, 3, 8], mode="reflect"),
            _q("another fill", x=[2, 3, 8], value=1.0),
        ),
    ),
    Family(
        "tile_kwonly_dyn",
        _F + "tile_rows",
        "tile_rows",
        True,
        build=(({"x": [3, 4], "reps": 2},),),
        positional=2,
        doc="x.repeat(reps, 1), then expand to a keyword-only size left None when built (dynamic=True)",
        queries=(
            _q("another reps", x=[3, 4], reps=3),
            _q("reps 1", x=[3, 4], reps=1),
            _q("another size", x=[5, 6], reps=2),
            _q("expand_to given", x=[3, 4], reps=2, expand_to=4),
            _q("one row", x=[1, 4], reps=2),
        ),
    ),
    Family(
        "frozen_stats_grad",
        _F + "frozen_stats",
        "frozen_stats",
        None,
        states_grad=True,
        build=(({"x": [4, 8], "w": _w(), **_G, "@backward": True},),),
        positional=2,
        doc="torch.no_grad() inside, called under grad with a weight requiring grad; grad mode stated (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=_w(), **_G, **{"@backward": True}),
            _q("under no_grad", x=[4, 8], w=_w()),
            _q("the weight not requiring grad", x=[4, 8], w=_w(False), **_G),
            _q("another batch", x=[6, 8], w=_w(), **_G, **{"@backward": True}),
            _q("x requiring grad", x=_t([4, 8], rg=True), w=_w(), **_G, **{"@backward": True}),
        ),
    ),
    Family(
        "cast_act_kw",
        _F + "cast_act",
        "cast_act",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="gelu(approximate=...) and softmax(dtype=...), keyword-only defaults (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("approximate tanh", x=[4, 8], approximate="tanh"),
            _q("approximate 'none' given", x=[4, 8], approximate="none"),
            _q("softmax in float64", x=[4, 8], dtype={"dtype": "float64"}),
            _q("a float16 input", x=_t([4, 8], dtype="float16")),
        ),
    ),
    Family(
        "ranged_mark",
        _F + "ranged_norm",
        "ranged_norm",
        None,
        build=(({"x": _t([4, 8], mark=[0], min=2, max=16)},),),
        positional=1,
        doc="the batch dim marked dynamic with min=2, max=16 when built (dynamic=None)",
        queries=(
            _q("another batch, marked the same", x=_t([8, 8], mark=[0], min=2, max=16)),
            _q("the build's size, unmarked", x=[4, 8]),
            _q("marked without a range", x=_t([6, 8], mark=[0])),
            _q("a wider range", x=_t([20, 8], mark=[0], min=2, max=32)),
            _q("another width, marked the same", x=_t([4, 5], mark=[0], min=2, max=16)),
        ),
    ),
    Family(
        "stack_mix_dyn",
        _F + "stack_mix",
        "stack_mix",
        True,
        build=(({"xs": _l([3, 4], [3, 4])},),),
        positional=1,
        doc="torch.stack of a list, an optional weight, a str reduction (dynamic=True)",
        queries=(
            _q("three tensors", xs=_l([3, 4], [3, 4], [3, 4])),
            _q("other sizes", xs=_l([5, 6], [5, 6])),
            _q("mode mean", xs=_l([3, 4], [3, 4]), mode="mean"),
            _q("weights given", xs=_l([3, 4], [3, 4]), weights=[2]),
            _q("one tensor", xs=_l([3, 4])),
        ),
    ),
    Family(
        "scaler_attrs",
        _F + "scaler",
        "Scaler",
        None,
        model=True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a module's float temperature and str mode read in forward (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("temperature 2.0", x=[4, 8], **{"@set": {"temperature": 2.0}}),
            _q("temperature the int 1", x=[4, 8], **{"@set": {"temperature": 1}}),
            _q("mode sigmoid", x=[4, 8], **{"@set": {"mode": "sigmoid"}}),
            _q("another batch", x=[2, 8]),
        ),
    ),
    # --- transformers models, compiled whole ------------------------------------------
    Family(
        "stablelm_partial",
        _H + "stablelm",
        "StableLmForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="StableLM: rotary on a quarter of each head, no mask when built (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("longer", input_ids=_ids(2, 12)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("return_dict=False", input_ids=_ids(2, 8), return_dict=False),
        ),
    ),
    Family(
        "bigcode_mqa",
        _H + "gpt_bigcode",
        "GPTBigCodeForCausalLM",
        True,
        model=True,
        build=(({"input_ids": _ids(2, 8)},),),
        doc="GPT-BigCode: multi-query attention, learned positions (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 16)),
            _q("length 1", input_ids=_ids(2, 1)),
            _q("batch 3", input_ids=_ids(3, 8)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("positions given", input_ids=_ids(2, 8), position_ids=_ids(2, 8)),
        ),
    ),
    Family(
        "qwen3_qknorm",
        _H + "qwen3",
        "Qwen3ForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8)}, {"input_ids": _ids(2, 12)}),),
        doc="Qwen3: query/key RMSNorm, two lengths in one process (dynamic=None)",
        queries=(
            _q("a third length", input_ids=_ids(2, 10)),
            _q("the first length", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8)),
            _q("length 1", input_ids=_ids(2, 1)),
            _q(
                "a third length after a recompile",
                input_ids=_ids(2, 10),
                warm_up=({"input_ids": _ids(2, 8)},),
            ),
        ),
    ),
    Family(
        "dinov2_sizes",
        _H + "dinov2",
        "Dinov2Model",
        None,
        model=True,
        build=(({"pixel_values": _IMG},),),
        doc="DINOv2: position embeddings interpolated to the patch grid (dynamic=None)",
        queries=(
            _q("as built", pixel_values=_IMG),
            _q("a larger image", pixel_values=[2, 3, 48, 48]),
            _q("batch 1", pixel_values=[1, 3, 32, 32]),
            _q("not square", pixel_values=[2, 3, 40, 32]),
            _q("output_hidden_states=True", pixel_values=_IMG, output_hidden_states=True),
        ),
    ),
    Family(
        "mobilenet_dyn",
        _H + "mobilenet_v2",
        "MobileNetV2Model",
        True,
        model=True,
        build=(({"pixel_values": _IMG},),),
        doc="MobileNetV2: depthwise convolutions, ReLU6, BatchNorm (dynamic=True)",
        queries=(
            _q("a larger image", pixel_values=[2, 3, 64, 64]),
            # an odd size ([2, 3, 33, 33]) left out: torch's compile of it ran past 30 minutes here
            _q("batch 3", pixel_values=[3, 3, 32, 32]),
            _q("batch 1", pixel_values=[1, 3, 32, 32]),
        ),
    ),
]


def _cl(b: int, c: int, h: int, w: int) -> dict:
    """A channels-last image batch."""
    return _t([b, c, h, w], stride=[c * h * w, 1, w * c, c])


R10B_FAMILIES: list[Family] = [
    Family(
        "parity_fold_dyn",
        _F + "parity_fold",
        "parity_fold",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="a branch on x.size(0) % 2, built with an even batch (dynamic=True)",
        queries=(
            _q("another even batch", x=[6, 8]),
            _q("an odd batch", x=[5, 8]),
            _q("batch 2", x=[2, 8]),
            _q("another width", x=[4, 3]),
            _q("batch 1", x=[1, 8]),
        ),
    ),
    Family(
        "duck_pair_dyn",
        _F + "pair_sums",
        "pair_sums",
        True,
        build=(({"x": [4, 8], "y": [4, 8]},),),
        positional=2,
        doc="two inputs of equal sizes when built, sizes the graph never relates (dynamic=True)",
        queries=(
            _q("both another size, still equal", x=[6, 5], y=[6, 5]),
            _q("y's batch differs", x=[4, 8], y=[5, 8]),
            _q("y's width differs", x=[4, 8], y=[4, 3]),
            _q("y's batch equal to x's width", x=[4, 8], y=[8, 4]),
        ),
    ),
    Family(
        "int_gate_dyn",
        _F + "int_gate",
        "int_gate",
        True,
        build=(({"x": [4, 8], "n": 5},),),
        positional=1,
        doc="if n > 3 then x[:, :n], built with n=5 (dynamic=True)",
        queries=(
            _q("another n above 3", x=[4, 8], n=6),
            _q("n=3: the other branch", x=[4, 8], n=3),
            _q("n equal to the width", x=[4, 8], n=8),
            _q("n past the width", x=[4, 8], n=12),
            _q("n equal to the batch", x=[4, 8], n=4),
        ),
    ),
    Family(
        "bias_broadcast_dyn",
        _F + "bias_add",
        "bias_add",
        True,
        build=(({"x": [4, 8], "b": [4, 8]},),),
        positional=2,
        doc="x + b with b as large as x when built, then broadcast (dynamic=True)",
        queries=(
            _q("both another size", x=[6, 5], b=[6, 5]),
            _q("b one row", x=[4, 8], b=[1, 8]),
            _q("b 1-d", x=[4, 8], b=[8]),
            _q("x one row, b full", x=[1, 8], b=[4, 8]),
        ),
    ),
    Family(
        "split_step_auto",
        _F + "split_step",
        "split_step",
        None,
        build=(({"x": [4, 8]}, {"x": [6, 8]}),),
        positional=1,
        doc="a graph break between two halves, two batches in one process (dynamic=None)",
        queries=(
            _q("the first batch", x=[4, 8]),
            _q("a third batch", x=[5, 8]),
            _q("k given as built", x=[4, 8], k=2),
            _q("another k", x=[4, 8], k=3),
            _q("a third batch after a recompile", x=[5, 8], warm_up=({"x": [4, 8]},)),
        ),
    ),
    Family(
        "mode_mlp_states",
        _F + "mode_mlp",
        "mode_mlp",
        None,
        states_grad=True,
        build=(({"x": [4, 8], "w": _w()},),),
        positional=2,
        doc="built under no_grad, then inference mode, autocast, grad (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], w=_w()),
            _q("inference mode", x=[4, 8], w=_w(), **{"@inference": True}),
            _q("autocast bfloat16", x=[4, 8], w=_w(), **{"@autocast": "bfloat16"}),
            _q("under grad", x=[4, 8], w=_w(), **_G),
            _q("default dtype float64", x=[4, 8], w=_w(), **{"@default_dtype": "float64"}),
        ),
    ),
    Family(
        "mobilenet_layouts",
        _H + "mobilenet_v2",
        "MobileNetV2Model",
        None,
        model=True,
        build=(({"pixel_values": _IMG},),),
        doc="MobileNetV2 built on a contiguous batch, then channels-last (dynamic=None)",
        queries=(
            _q("channels-last", pixel_values=_cl(2, 3, 32, 32)),
            _q("as built", pixel_values=_IMG),
            _q("channels-last, batch 1", pixel_values=_cl(1, 3, 32, 32)),
            _q("float64", pixel_values=_t(_IMG, dtype="float64")),
        ),
    ),
    Family(
        "bigcode_int32",
        _H + "gpt_bigcode",
        "GPTBigCodeForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
        doc="GPT-BigCode built on int64 ids with a mask, then int32 ids (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("int32 ids", input_ids=_t([2, 8], dtype="int32"), attention_mask=_ids(2, 8)),
            _q("a bool mask", input_ids=_ids(2, 8), attention_mask=_t([2, 8], dtype="bool")),
            _q("mask left out", input_ids=_ids(2, 8)),
        ),
    ),
    Family(
        "esm_rotary",
        _H + "esm",
        "EsmModel",
        True,
        model=True,
        build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
        doc="ESM: rotary positions and token-dropout scaling (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 16), attention_mask=_ids(2, 16)),
            _q("batch 1", input_ids=_ids(1, 8), attention_mask=_ids(1, 8)),
            _q("mask left out", input_ids=_ids(2, 8)),
            _q("length 1", input_ids=_ids(2, 1), attention_mask=_ids(2, 1)),
        ),
    ),
    Family(
        "wavlm_lengths",
        _H + "wavlm",
        "WavLMModel",
        None,
        model=True,
        build=(({"input_values": [2, 400]}, {"input_values": [2, 480]}),),
        doc="WavLM: a relative position bias over frames, two lengths in one process (dynamic=None)",
        queries=(
            _q("a third length", input_values=[2, 560]),
            _q("the first length", input_values=[2, 400]),
            _q("batch 1", input_values=[1, 400]),
            _q("an odd length", input_values=[2, 403]),
        ),
    ),
    Family(
        "pegasus_encdec",
        _H + "pegasus",
        "PegasusModel",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8), "decoder_input_ids": _ids(2, 4)},),),
        doc="Pegasus: sinusoidal positions, encoder-decoder (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), decoder_input_ids=_ids(2, 4)),
            _q("longer source", input_ids=_ids(2, 12), decoder_input_ids=_ids(2, 4)),
            _q("one decoder token", input_ids=_ids(2, 8), decoder_input_ids=_ids(2, 1)),
            _q(
                "a mask given",
                input_ids=_ids(2, 8),
                attention_mask=_ids(2, 8),
                decoder_input_ids=_ids(2, 4),
            ),
        ),
    ),
]


R10C_FAMILIES: list[Family] = [
    Family(
        "roll_shift_dyn",
        _F + "roll_shift",
        "roll_shift",
        True,
        build=(({"x": [4, 8], "shift": 3},),),
        positional=1,
        doc="torch.roll with an int shift, built with shift=3 (dynamic=True)",
        queries=(
            _q("another shift", x=[4, 8], shift=5),
            _q("a negative shift", x=[4, 8], shift=-2),
            _q("shift past the width", x=[4, 8], shift=11),
            _q("shift 0", x=[4, 8], shift=0),
            _q("another size", x=[6, 5], shift=3),
        ),
    ),
    Family(
        "scalar_tensor_dyn",
        _F + "scale_by",
        "scale_by",
        True,
        build=(({"x": [4, 8], "s": []},),),
        positional=2,
        doc="a scale passed as a 0-d tensor when built (dynamic=True)",
        queries=(
            _q("another size, a 0-d scale", x=[6, 5], s=[]),
            _q("a Python float scale", x=[4, 8], s=0.5),
            _q("a 1-element scale", x=[4, 8], s=[1]),
            _q("a float64 0-d scale", x=[4, 8], s=_t([], dtype="float64")),
            _q("a scale per column", x=[4, 8], s=[8]),
        ),
    ),
    Family(
        "zero_size_dyn",
        _F + "scale_by",
        "scale_by",
        True,
        build=(({"x": [4, 8], "s": [4, 8]},),),
        positional=2,
        doc="an elementwise product of two inputs, then empty ones (dynamic=True)",
        queries=(
            _q("both empty rows", x=[0, 8], s=[0, 8]),
            _q("both one row", x=[1, 8], s=[1, 8]),
            _q("both another size", x=[3, 2], s=[3, 2]),
            _q("both 3-d", x=[2, 4, 8], s=[2, 4, 8]),
        ),
    ),
    Family(
        "unrolled_dyn",
        _F + "unrolled",
        "unrolled",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="a loop over range(n), unrolled by the trace, built with n=3 (dynamic=True)",
        queries=(
            _q("n as built, another size", x=[6, 5], n=3),
            _q("another n", x=[4, 8], n=5),
            _q("n=1", x=[4, 8], n=1),
            _q("n equal to the batch", x=[4, 8], n=4),
        ),
    ),
    Family(
        "dict_mix_auto",
        _F + "dict_mix",
        "dict_mix",
        None,
        build=(({"feats": {"dict": {"a": [4, 8], "b": [3, 8]}}},),),
        positional=1,
        doc="a dict of two tensors (dynamic=None)",
        queries=(
            _q("as built", feats={"dict": {"a": [4, 8], "b": [3, 8]}}),
            _q("a's batch changed", feats={"dict": {"a": [5, 8], "b": [3, 8]}}),
            _q(
                "a third key the code never reads",
                feats={"dict": {"a": [4, 8], "b": [3, 8], "c": [2]}},
            ),
            _q("the keys in another order", feats={"dict": {"b": [3, 8], "a": [4, 8]}}),
        ),
    ),
]
