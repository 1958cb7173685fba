"""The ninth round of evaluation families: a training step with ``loss.backward()`` and an
optimizer step inside the compiled function, ``scaled_dot_product_attention`` with an
``is_causal`` flag and an optional mask, ``torch.cat`` of a list of varying length under
``dynamic=True``, ``x.view(-1, n)``, ``x.size(1) // 2`` under automatic dynamic, a branch
on ``x.dim()``, ``F.interpolate`` with a float scale and a str mode, an einsum with an
ellipsis and a ``None`` scale, ``dynamic=False`` then another size, a
nested module flipped between train and eval (or compiled with ``fullgraph=True``), and
Phi-3 (rotary, grouped-query attention), XLM-RoBERTa (masks, ``output_hidden_states``),
DeiT (a distillation token, batch 1/2/3), Speech2Text (a conv subsampler, enc-dec) and
MBart (labels shifted into decoder inputs, ``return_dict=False``).
:mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the comments say what
each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r9:"
_H = "tests.harness.evaluation.hf_r9:"
_G = {"@grad": True}
_FULL = {"@compile": {"fullgraph": True}}


def _ids(*shape: int, **more) -> dict:
    return _t(list(shape), dtype="int64", **more)


def _l(*shapes) -> dict:
    return {"list": [list(s) for s in shapes]}


_QKV = {"q": [1, 2, 6, 8], "k": [1, 2, 6, 8], "v": [1, 2, 6, 8]}


def _qkv(b: int, s: int, kv: int | None = None) -> dict:
    kv = s if kv is None else kv
    return {"q": [b, 2, s, 8], "k": [b, 2, kv, 8], "v": [b, 2, kv, 8]}


R9_FAMILIES: list[Family] = [
    Family(
        "train_step_opt",
        _F + "train_step",
        "train_step",
        None,
        build=(({"x": [4, 8], "y": [4, 4], **_G},),),
        positional=2,
        doc="loss.backward() and an SGD step inside the compiled function, grad enabled (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], y=[4, 4], **_G),
            _q("another batch", x=[6, 8], y=[6, 4], **_G),
            _q("batch 1", x=[1, 8], y=[1, 4], **_G),
            _q(
                "a second step of another batch: a recompile",
                warm_up=({"x": [4, 8], "y": [4, 4], **_G},),
                x=[6, 8],
                y=[6, 4],
                **_G,
            ),
        ),
    ),
    Family(
        "sdpa_causal",
        _F + "attend",
        "attend",
        True,
        build=(({**_QKV},),),
        positional=3,
        doc="scaled_dot_product_attention, is_causal and mask left out when built (dynamic=True)",
        queries=(
            _q("another length", **_qkv(1, 10)),
            _q("is_causal=True", **_QKV, is_causal=True),
            _q("is_causal=False given", **_QKV, is_causal=False),
            _q("a float mask", **_QKV, mask=[6, 6]),
            _q("keys longer than queries", **_qkv(1, 6, 9)),
            _q("batch 2, length 1", **_qkv(2, 1)),
        ),
    ),
    Family(
        "cat_varlen_dyn",
        _F + "cat_cols",
        "cat_cols",
        True,
        build=(({"xs": _l([4, 3], [4, 3])},),),
        positional=1,
        doc="torch.cat of a list, two tensors when built (dynamic=True)",
        queries=(
            _q("two, other sizes", xs=_l([5, 2], [5, 7])),
            _q("three", xs=_l([4, 3], [4, 3], [4, 3])),
            _q("one", xs=_l([4, 3])),
            _q("two, one of width 1", xs=_l([4, 3], [4, 1])),
            _q("two, one of width 0", xs=_l([4, 3], [4, 0])),
        ),
    ),
    Family(
        "view_int_dyn",
        _F + "view_cols",
        "view_cols",
        True,
        build=(({"x": [4, 8], "n": 4},),),
        positional=1,
        doc="x.view(-1, n) with an int argument (dynamic=True)",
        queries=(
            _q("another n", x=[4, 8], n=8),
            _q("n=2", x=[4, 8], n=2),
            _q("n=1", x=[4, 8], n=1),
            _q("another size, as built", x=[6, 8], n=4),
            _q("n=16: two rows", x=[4, 8], n=16),
        ),
    ),
    Family(
        "half_narrow_auto",
        _F + "half_narrow",
        "half_narrow",
        None,
        build=(({"x": [4, 8]}, {"x": [4, 10]}),),
        positional=1,
        doc="x.size(1) // 2, two widths in one process (dynamic=None)",
        queries=(
            _q("the first width", x=[4, 8]),
            _q("an odd width", x=[4, 9]),
            _q("width 2", x=[4, 2]),
            _q("width 3", x=[4, 3]),
            _q("an odd width after a recompile", x=[4, 9], warm_up=({"x": [4, 8]},)),
        ),
    ),
    Family(
        "rank_branch_dyn",
        _F + "rank_branch",
        "rank_branch",
        True,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="if x.dim() == 3, built with a 2-d input (dynamic=True)",
        queries=(
            _q("another size", x=[6, 5]),
            _q("a 3-d input", x=[2, 3, 8]),
            _q("one row", x=[1, 8]),
            _q("a 1-d input", x=[8]),
        ),
    ),
    Family(
        "rescale_float",
        _F + "rescale",
        "rescale",
        None,
        build=(({"x": [1, 2, 8, 8]},),),
        positional=1,
        doc="F.interpolate with a float scale_factor, a str mode and align_corners=None (dynamic=None)",
        queries=(
            _q("as built", x=[1, 2, 8, 8]),
            _q("scale 2.0", x=[1, 2, 8, 8], scale_factor=2.0),
            _q("scale 1.5 given", x=[1, 2, 8, 8], scale_factor=1.5),
            _q("mode nearest", x=[1, 2, 8, 8], mode="nearest"),
            _q("align_corners=True", x=[1, 2, 8, 8], align_corners=True),
            _q("another size", x=[1, 2, 6, 6]),
        ),
    ),
    Family(
        "einsum_ellipsis",
        _F + "scores",
        "scores",
        True,
        build=(({"q": [2, 3, 4], "k": [2, 5, 4]},),),
        positional=2,
        doc="an einsum with an ellipsis, the scale None (from a size) when built (dynamic=True)",
        queries=(
            _q("other lengths", q=[2, 7, 4], k=[2, 2, 4]),
            _q("another head dim", q=[2, 3, 16], k=[2, 5, 16]),
            _q("two leading dims", q=[2, 2, 3, 4], k=[2, 2, 5, 4]),
            _q("a float scale", q=[2, 3, 4], k=[2, 5, 4], scale=0.25),
            _q("the scale the default gives", q=[2, 3, 4], k=[2, 5, 4], scale=0.5),
        ),
    ),
    Family(
        "static_new_size",
        _F + "fixed_mlp",
        "fixed_mlp",
        False,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="dynamic=False, built on one size, then other sizes (dynamic=False)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("another size", x=[6, 8]),
            _q("float64", x=_t([4, 8], dtype="float64")),
            _q("marked dynamic", x=_t([6, 8], mark=[0])),
        ),
    ),
    Family(
        "nested_training",
        _F + "nested",
        "Nested",
        None,
        model=True,
        build=(({"x": [4, 8]}, {"x": [4, 8], "@train": True, **_G}),),
        positional=1,
        doc="nested blocks reading self.training: eval then train in one process (dynamic=None)",
        queries=(
            _q("eval, as built", x=[4, 8]),
            _q("train, as built", x=[4, 8], **{"@train": True, **_G}),
            _q("train under no_grad", x=[4, 8], **{"@train": True}),
            _q("eval, another batch", x=[6, 8]),
            _q("eval, compiled with fullgraph=True", x=[4, 8], **_FULL),
        ),
    ),
    # --- transformers models, compiled whole ------------------------------------------
    Family(
        "phi3_gqa",
        _H + "phi3",
        "Phi3ForCausalLM",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
        doc="Phi-3: rotary positions, grouped-query attention; a mask given when built (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
            _q("mask left out", input_ids=_ids(2, 8)),
            _q("batch 1", input_ids=_ids(1, 8), attention_mask=_ids(1, 8)),
            _q("half the length", input_ids=_ids(2, 4), attention_mask=_ids(2, 4)),
            _q(
                "return_dict=False",
                input_ids=_ids(2, 8),
                attention_mask=_ids(2, 8),
                return_dict=False,
            ),
        ),
    ),
    Family(
        "xlmr_hidden",
        _H + "xlmr",
        "XLMRobertaModel",
        True,
        model=True,
        build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
        doc="XLM-RoBERTa with masks of other lengths and output_hidden_states (dynamic=True)",
        queries=(
            _q("longer", input_ids=_ids(2, 16), attention_mask=_ids(2, 16)),
            _q("batch 3", input_ids=_ids(3, 8), attention_mask=_ids(3, 8)),
            _q("length 1", input_ids=_ids(2, 1), attention_mask=_ids(2, 1)),
            _q(
                "output_hidden_states=True",
                input_ids=_ids(2, 8),
                attention_mask=_ids(2, 8),
                output_hidden_states=True,
            ),
            _q("mask left out", input_ids=_ids(2, 8)),
        ),
    ),
    Family(
        "deit_batches",
        _H + "deit",
        "DeiTModel",
        None,
        model=True,
        build=(({"pixel_values": [2, 3, 32, 32]}, {"pixel_values": [3, 3, 32, 32]}),),
        doc="DeiT: batch 2 then 3 in one process (dynamic=None)",
        queries=(
            _q("batch 2", pixel_values=[2, 3, 32, 32]),
            _q("batch 1", pixel_values=[1, 3, 32, 32]),
            _q("batch 4", pixel_values=[4, 3, 32, 32]),
            _q(
                "batch 1 after a recompile",
                pixel_values=[1, 3, 32, 32],
                warm_up=({"pixel_values": [2, 3, 32, 32]},),
            ),
            _q("output_hidden_states=True", pixel_values=[2, 3, 32, 32], output_hidden_states=True),
        ),
    ),
    Family(
        "s2t_encdec",
        _H + "speech2text",
        "Speech2TextModel",
        True,
        model=True,
        build=(({"input_features": [2, 40, 16], "decoder_input_ids": _ids(2, 4)},),),
        doc="Speech2Text: a strided conv subsampler over features, then a decoder (dynamic=True)",
        queries=(
            _q("longer features", input_features=[2, 64, 16], decoder_input_ids=_ids(2, 4)),
            _q("an odd length", input_features=[2, 41, 16], decoder_input_ids=_ids(2, 4)),
            _q("batch 1", input_features=[1, 40, 16], decoder_input_ids=_ids(1, 4)),
            _q("one decoder token", input_features=[2, 40, 16], decoder_input_ids=_ids(2, 1)),
            _q(
                "a feature mask",
                input_features=[2, 40, 16],
                attention_mask=_ids(2, 40),
                decoder_input_ids=_ids(2, 4),
            ),
        ),
    ),
    Family(
        "mbart_labels",
        _H + "mbart",
        "MBartForConditionalGeneration",
        None,
        model=True,
        build=(({"input_ids": _ids(2, 8), "labels": _ids(2, 5)},),),
        doc="MBart: labels shifted into decoder inputs (dynamic=None)",
        queries=(
            _q("as built", input_ids=_ids(2, 8), labels=_ids(2, 5)),
            _q("return_dict=False", input_ids=_ids(2, 8), labels=_ids(2, 5), return_dict=False),
            _q("labels left out", input_ids=_ids(2, 8)),
            _q("other lengths", input_ids=_ids(2, 12), labels=_ids(2, 3)),
            _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8), labels=_ids(2, 5)),
        ),
    ),
]


R9B_FAMILIES: list[Family] = [
    Family(
        "view_int_auto",
        _F + "view_cols",
        "view_cols",
        None,
        build=(({"x": [4, 8], "n": 4}, {"x": [4, 8], "n": 8}),),
        positional=1,
        doc="x.view(-1, n), n 4 then 8 in one process (dynamic=None)",
        queries=(
            _q("the first n", x=[4, 8], n=4),
            _q("the second n", x=[4, 8], n=8),
            _q("a third n", x=[4, 8], n=2),
            _q("a third n after a recompile", x=[4, 8], n=2, warm_up=({"x": [4, 8], "n": 4},)),
            _q("n=16 after a recompile", x=[4, 8], n=16, warm_up=({"x": [4, 8], "n": 4},)),
        ),
    ),
    Family(
        "sdpa_mask_dyn",
        _F + "masked_attend",
        "masked_attend",
        True,
        build=(({**_QKV, "mask": [6, 6]},),),
        positional=3,
        doc="scaled_dot_product_attention, a float mask given when built (dynamic=True)",
        queries=(
            _q("another length, its mask", **_qkv(1, 10), mask=[10, 10]),
            _q("mask left out", **_QKV),
            _q("a bool mask", **_QKV, mask=_t([6, 6], dtype="bool")),
            _q("a mask broadcast over the batch and heads", **_QKV, mask=[1, 1, 6, 6]),
            _q("dropout_p=0.0 given", **_QKV, mask=[6, 6], dropout_p=0.0),
        ),
    ),
    Family(
        "upsample_size_dyn",
        _F + "upsample_twice",
        "upsample_twice",
        True,
        build=(({"x": [1, 2, 4, 4]},),),
        positional=1,
        doc="F.interpolate to a size computed from the input's sizes (dynamic=True)",
        queries=(
            _q("another size", x=[1, 2, 6, 5]),
            _q("batch 2", x=[2, 2, 4, 4]),
            _q("mode bilinear", x=[1, 2, 4, 4], mode="bilinear"),
            _q("mode nearest given", x=[1, 2, 4, 4], mode="nearest"),
            _q("width 1", x=[1, 2, 4, 1]),
        ),
    ),
    Family(
        "heads_view_auto",
        _F + "heads_view",
        "heads_view",
        None,
        build=(({"x": [2, 4, 8], "heads": 2},), ({"x": [2, 6, 8], "heads": 2},)),
        positional=1,
        doc="view(b, s, heads, -1): two build processes of two lengths (dynamic=None)",
        queries=(
            _q("a third length", x=[2, 5, 8], heads=2),
            _q("another heads", x=[2, 5, 8], heads=4),
            _q("length 1", x=[2, 1, 8], heads=2),
            _q("batch 3", x=[3, 4, 8], heads=2),
        ),
    ),
]


R9C_FAMILIES: list[Family] = [
    Family(
        "view_int_equal",
        _F + "view_cols",
        "view_cols",
        True,
        build=(({"x": [4, 6], "n": 3},),),
        positional=1,
        doc="x.view(-1, n), then an n equal to one of x's sizes (dynamic=True)",
        queries=(
            _q("n equal to rows", x=[4, 6], n=4),
            _q("n equal to cols", x=[4, 6], n=6),
            _q("rows equal to cols, n as built", x=[6, 6], n=3),
            _q("another size and n", x=[5, 10], n=5),
            _q("n=2", x=[4, 6], n=2),
        ),
    ),
    Family(
        "sdpa_causal_auto",
        _F + "attend",
        "attend",
        None,
        build=(({**_QKV, "is_causal": True}, {**_qkv(1, 10), "is_causal": True}),),
        positional=3,
        doc="scaled_dot_product_attention with is_causal=True, two lengths in one process (dynamic=None)",
        queries=(
            _q("a third length, causal", **_qkv(1, 8), is_causal=True),
            _q("a third length, not causal", **_qkv(1, 8)),
            _q("length 1, causal", **_qkv(1, 1), is_causal=True),
            _q(
                "a third length after a recompile",
                warm_up=({**_QKV, "is_causal": True},),
                **_qkv(1, 8),
                is_causal=True,
            ),
        ),
    ),
    Family(
        "nested_train_dyn",
        _F + "nested",
        "Nested",
        True,
        model=True,
        states_grad=True,
        build=(({"x": [4, 8], "@train": True, **_G, "@backward": True},),),
        positional=1,
        doc="nested blocks built in train mode with a backward, then eval; grad mode stated, and the module mode in one call (dynamic=True)",
        queries=(
            _q("train, another batch", x=[6, 8], **{"@train": True, **_G, "@backward": True}),
            _q("eval", x=[4, 8]),
            _q("train, batch 1", x=[1, 8], **{"@train": True, **_G, "@backward": True}),
            _q("train, no backward", x=[5, 8], **{"@train": True, **_G}),
            # eval under grad, the mode said: the grad mode is the build's, the module's is not
            _q("eval under grad, mode stated", x=[4, 8], **{"@train": False, **_G}),
        ),
    ),
]
