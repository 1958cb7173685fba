"""The fourteenth round of evaluation families: user code as it is commonly written (module
methods reading ``self.training``, closures over modules, in-place ops on inputs, transposed
and channels-last inputs, dtypes, int64 indexes, bool masks, 0-d scalars, lists, dicts and
``*args`` of tensors, keyword-only, tensor and tuple defaults, str modes, shape math, marks,
recompiles after warm-ups, size 0/1 dims, stock ``nn`` layers) and transformers models not
used before, called with masks, labels, caches and output options.
:mod:`tests.harness.evaluation.families` adds them; nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r14:"
_H = "tests.harness.evaluation.hf_r14:"
_G = {"@grad": True}
_TR = {"@train": True}
_EV = {"@train": False}


def _l(*shapes) -> dict:
    return {"list": [list(s) for s in shapes]}


def _ids(*shape: int) -> dict:
    return _t(list(shape), dtype="int64")


def _b(*shape: int) -> dict:
    return _t(list(shape), dtype="bool")


R14_FAMILIES: list[Family] = [
    Family("r14_closure_auto", _F + "closure_proj", "closure_proj", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a module closed over as a global, called in the compiled function (dynamic=None)",
           queries=(
               _q("as built", x=[4, 8]),
               _q("another batch", x=[6, 8]),
               _q("a leading dim added", x=[2, 4, 8]),
           )),
    Family("r14_inplace_auto", _F + "inplace_add", "inplace_add", None,
           build=(({"x": [4, 8], "y": [4, 8]},),), positional=2,
           doc="an in-place add into an input (dynamic=None)",
           queries=(
               _q("as built", x=[4, 8], y=[4, 8]),
               _q("y broadcast from a row", x=[4, 8], y=[8]),
               _q("another batch", x=[5, 8], y=[5, 8]),
           )),
    Family("r14_tmm_auto", _F + "tmm", "tmm", None,
           build=(({"x": [4, 8], "w": [8, 8]},),), positional=2,
           doc="a matmul built contiguous, asked with transposed inputs (dynamic=None)",
           queries=(
               _q("x transposed (strides 1,4)", x=_t([4, 8], stride=[1, 4]), w=[8, 8]),
               _q("w transposed", x=[4, 8], w=_t([8, 8], stride=[1, 8])),
               _q("contiguous strides stated", x=_t([4, 8], stride=[8, 1]), w=[8, 8]),
           )),
    Family("r14_soft_dtype_auto", _F + "soft", "soft", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a softmax built in float32, asked in half dtypes (dynamic=None)",
           queries=(
               _q("bfloat16", x=_t([4, 8], dtype="bfloat16")),
               _q("float16", x=_t([4, 8], dtype="float16")),
               _q("float64", x=_t([4, 8], dtype="float64")),
               _q("float32 as built", x=[4, 8]),
           )),
    Family("r14_rows_dyn", _F + "rows", "rows", True,
           build=(({"x": [64, 8], "idx": _ids(5)},),), positional=2,
           doc="rows picked by an int64 index tensor (dynamic=True)",
           queries=(
               _q("another index length", x=[64, 8], idx=_ids(9)),
               _q("an int32 index", x=[64, 8], idx=_t([5], dtype="int32")),
               _q("a 2-d index", x=[64, 8], idx=_ids(2, 3)),
           )),
    Family("r14_fill_auto", _F + "fill", "fill", None,
           build=(({"x": [4, 8], "m": _b(4, 8)},),), positional=2,
           doc="masked_fill with a bool mask (dynamic=None)",
           queries=(
               _q("a row mask, broadcast", x=[4, 8], m=_b(8)),
               _q("a uint8 mask", x=[4, 8], m=_t([4, 8], dtype="uint8")),
               _q("as built", x=[4, 8], m=_b(4, 8)),
           )),
    Family("r14_scale0_auto", _F + "scale0", "scale0", None,
           build=(({"x": [4, 8], "s": []},),), positional=2,
           doc="a 0-d tensor scale (dynamic=None)",
           queries=(
               _q("a 1-element 1-d scale", x=[4, 8], s=[1]),
               _q("a float python scale", x=[4, 8], s=0.5),
               _q("a float64 0-d scale", x=[4, 8], s=_t([], dtype="float64")),
               _q("as built", x=[4, 8], s=[]),
           )),
    Family("r14_cat_auto", _F + "cat_list", "cat_list", None,
           build=(({"xs": _l([2, 8], [2, 8])},),), positional=1,
           doc="a list concatenated, built with two (dynamic=None)",
           queries=(
               _q("three elements", xs=_l([2, 8], [2, 8], [2, 8])),
               _q("one element", xs=_l([2, 8])),
               _q("two, another first size", xs=_l([3, 8], [2, 8])),
           )),
    Family("r14_dict_auto", _F + "dict_add", "dict_add", None,
           build=(({"d": {"dict": {"a": [4, 8], "b": [4, 8]}}},),), positional=1,
           doc="a dict of tensors with an optional key (dynamic=None)",
           queries=(
               _q("b left out", d={"dict": {"a": [4, 8]}}),
               _q("an extra key c", d={"dict": {"a": [4, 8], "b": [4, 8], "c": [4, 8]}}),
               _q("as built", d={"dict": {"a": [4, 8], "b": [4, 8]}}),
           )),
    Family("r14_kwonly_static", _F + "kwonly", "kwonly", False,
           build=(({"x": [4, 8]},),), positional=1,
           doc="keyword-only float and str arguments (dynamic=False)",
           queries=(
               _q("act='silu'", x=[4, 8], act="silu"),
               _q("scale=2.0", x=[4, 8], scale=2.0),
               _q("scale=1.0 given", x=[4, 8], scale=1.0),
               _q("scale=1 (an int)", x=[4, 8], scale=1),
           )),
    Family("r14_star_auto", _F + "star_sum", "star_sum", None,
           build=(({"xs": {"star": [[4, 8], [4, 8]]}},),),
           doc="*args of tensors, built with two (dynamic=None)",
           queries=(
               _q("three", xs={"star": [[4, 8], [4, 8], [4, 8]]}),
               _q("two, broadcast second", xs={"star": [[4, 8], [8]]}),
               _q("two as built", xs={"star": [[4, 8], [4, 8]]}),
           )),
    Family("r14_tbias_auto", _F + "tbias", "tbias", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a tensor default argument, left out when built (dynamic=None)",
           queries=(
               _q("bias given, same shape", x=[4, 8], bias=[8]),
               _q("bias given, full shape", x=[4, 8], bias=[4, 8]),
               _q("left out", x=[4, 8]),
           )),
    Family("r14_padded_auto", _F + "padded", "padded", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a tuple default into F.pad (dynamic=None)",
           queries=(
               _q("pad=(2,2)", x=[4, 8], pad={"tuple": [2, 2]}),
               _q("pad=(1,1) given", x=[4, 8], pad={"tuple": [1, 1]}),
               _q("pad=(0,1)", x=[4, 8], pad={"tuple": [0, 1]}),
           )),
    Family("r14_reduce_dyn", _F + "reduce_mode", "reduce_mode", True,
           build=(({"x": [4, 8]}, {"x": [4, 8], "mode": "sum"}),), positional=1,
           doc="a str mode, built with mean and sum (dynamic=True)",
           queries=(
               _q("mode='max'", x=[4, 8], mode="max"),
               _q("mode='sum', another size", x=[3, 5], mode="sum"),
               _q("mode left out", x=[6, 8]),
           )),
    Family("r14_flat_auto", _F + "flat_lin", "flat_lin", None,
           build=(({"x": [4, 2, 4], "w": [8, 3]},),), positional=2,
           doc="x.view(x.size(0), -1) (dynamic=None)",
           queries=(
               _q("another batch", x=[6, 2, 4], w=[8, 3]),
               _q("inner dims swapped", x=[4, 4, 2], w=[8, 3]),
               _q("after a warm-up of another batch", warm_up=({"x": [6, 2, 4], "w": [8, 3]},),
                  x=[5, 2, 4], w=[8, 3]),
           )),
    Family("r14_heads_dyn", _F + "heads", "heads", True,
           build=(({"x": [2, 4, 8]},),), positional=1,
           doc="splitting into h heads by shape math (dynamic=True)",
           queries=(
               _q("h=4", x=[2, 4, 8], h=4),
               _q("longer", x=[2, 6, 8]),
               _q("wider", x=[2, 4, 16]),
           )),
    Family("r14_mark_static_build", _F + "mlp", "mlp", False,
           build=(({"x": [4, 8]},),), positional=1,
           doc="built with dynamic=False, asked with marks (dynamic=False)",
           queries=(
               _q("dim 0 marked dynamic", x=_t([6, 8], mark=[0])),
               _q("another batch", x=[6, 8]),
               _q("as built", x=[4, 8]),
           )),
    Family("r14_mark_auto", _F + "mlp", "mlp", None,
           build=(({"x": _t([4, 8], mark=[0])},),), positional=1,
           doc="built with dim 0 marked dynamic (dynamic=None)",
           queries=(
               _q("another batch, marked", x=_t([7, 8], mark=[0])),
               _q("another batch, unmarked", x=[7, 8]),
               _q("marked with a range", x=_t([7, 8], mark=[0], min=2, max=32)),
               _q("dim 0 marked static", x=_t([4, 8], static=[0])),
           )),
    Family("r14_recompile_auto", _F + "mlp", "mlp", None,
           build=(({"x": [4, 8]}, {"x": [6, 8]}),), positional=1,
           doc="built static then dynamic by a second batch (dynamic=None)",
           queries=(
               _q("a third batch", x=[9, 8]),
               _q("after warm-ups of both", warm_up=({"x": [4, 8]}, {"x": [6, 8]}), x=[9, 8]),
               _q("after one warm-up, its batch", warm_up=({"x": [4, 8]},), x=[4, 8]),
           )),
    Family("r14_sizes_dyn", _F + "empty_ok", "empty_ok", True,
           build=(({"x": [4, 8]},),), positional=1,
           doc="size 0 and 1 dims against a dynamic build (dynamic=True)",
           queries=(
               _q("batch 1", x=[1, 8]),
               _q("batch 0", x=[0, 8]),
               _q("width 1", x=[4, 1]),
           )),
    Family("r14_loss_auto", _F + "loss_fn", "loss_fn", None,
           build=(({"logits": [4, 64], "target": _ids(4)},),), positional=2,
           doc="cross entropy over int64 targets with a str reduction (dynamic=None)",
           queries=(
               _q("reduction='sum'", logits=[4, 64], target=_ids(4), reduction="sum"),
               _q("reduction='none'", logits=[4, 64], target=_ids(4), reduction="none"),
               _q("another batch", logits=[6, 64], target=_ids(6)),
           )),
    Family("r14_norm_auto", _F + "norm_affine", "norm_affine", None,
           build=(({"x": [4, 8], "weight": [8], "bias": [8]},),), positional=1,
           doc="layer_norm with optional affine tensors, built with both (dynamic=None)",
           queries=(
               _q("bias left out", x=[4, 8], weight=[8]),
               _q("eps=1e-6", x=[4, 8], weight=[8], bias=[8], eps=1e-6),
               _q("bias=None given", x=[4, 8], weight=[8], bias=None),
           )),
    Family("r14_topk_auto", _F + "topk_mask", "topk_mask", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="an int into topk (dynamic=None)",
           queries=(
               _q("k=3", x=[4, 8], k=3),
               _q("k=2 given", x=[4, 8], k=2),
           )),
    Family("r14_grad_auto", _F + "grad_lin", "grad_lin", None,
           build=(({"x": [4, 8], "w": _t([8, 8], rg=True), **_G},),), positional=2, states_grad=True,
           doc="built with w requiring grad under grad mode (dynamic=None)",
           queries=(
               _q("as built", x=[4, 8], w=_t([8, 8], rg=True), **_G),
               _q("under no_grad", x=[4, 8], w=_t([8, 8], rg=True)),
               _q("nothing requires grad", x=[4, 8], w=[8, 8], **_G),
               _q("inference mode", x=[4, 8], w=[8, 8], **{"@inference": True}),
           )),
    Family("r14_infer_auto", _F + "mlp", "mlp", None,
           build=(({"x": [4, 8], "@inference": True},),), positional=1,
           doc="built under inference_mode (dynamic=None)",
           queries=(
               _q("under no_grad", x=[4, 8], **{"@inference": False}),
               _q("inference mode again", x=[4, 8], **{"@inference": True}),
               _q("autocast bfloat16", x=[4, 8], **{"@inference": True, "@autocast": "bfloat16"}),
           )),
]

R14B_FAMILIES: list[Family] = [
    Family("r14_gate_modes", _F + "gate", "Gate", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="a module method reading self.training, compiled whole (dynamic=None)",
           queries=(
               _q("training mode", x=[4, 8], **_TR),
               _q("eval stated", x=[4, 8], **_EV),
               _q("residual=False", x=[4, 8], residual=False),
               _q("keep changed", x=[4, 8], **_TR, **{"@set": {"keep": 0.25}}),
           )),
    Family("r14_conv_cl", _F + "conv_block", "ConvBlock", None, model=True,
           build=(({"x": [2, 3, 16, 16]},),),
           doc="conv + batch norm, built contiguous (dynamic=None)",
           queries=(
               _q("channels-last input", x=_t([2, 3, 16, 16], stride=[768, 1, 48, 3])),
               _q("training mode", x=[2, 3, 16, 16], **_TR),
               _q("another image size", x=[2, 3, 20, 20]),
           )),
    Family("r14_mha_auto", _F + "mha", "MHA", None, model=True,
           build=(({"x": [2, 5, 16]},),),
           doc="nn.MultiheadAttention, built without a mask (dynamic=None)",
           queries=(
               _q("key padding mask given", x=[2, 5, 16], key_padding_mask=_b(2, 5)),
               _q("need_weights=True", x=[2, 5, 16], need_weights=True),
               _q("longer", x=[2, 7, 16]),
           )),
    Family("r14_encoder_layer", _F + "encoder_layer", "TransformerEncoderLayer", None, model=True,
           build=(({"src": [2, 5, 16]},),),
           doc="nn.TransformerEncoderLayer in eval mode (dynamic=None)",
           queries=(
               _q("padding mask given", src=[2, 5, 16], src_key_padding_mask=_b(2, 5)),
               _q("is_causal with a mask", src=[2, 5, 16], src_mask=[5, 5], is_causal=False),
               _q("training mode", src=[2, 5, 16], **_TR),
               _q("as built", src=[2, 5, 16]),
           )),
    Family("r14_cell_auto", _F + "cell", "Cell", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="a GRU cell unrolled steps times, built with the defaults (dynamic=None)",
           queries=(
               _q("steps=3", x=[4, 8], steps=3),
               _q("an initial state", x=[4, 8], h=[4, 8]),
               _q("steps=2 given", x=[4, 8], steps=2),
           )),
    Family("r14_scaled_attr", _F + "scaled", "Scaled", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="a float attribute read in forward (dynamic=None)",
           queries=(
               _q("temperature 2.0", x=[4, 8], **{"@set": {"temperature": 2.0}}),
               _q("temperature 1.0 stated", x=[4, 8], **{"@set": {"temperature": 1.0}}),
               _q("as built", x=[4, 8]),
           )),
]

_IMG = [2, 3, 64, 64]

R14C_FAMILIES: list[Family] = [
    Family("r14_cohere", _H + "cohere", "CohereForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="a Cohere decoder (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 8)),
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
               _q("use_cache=False", input_ids=_ids(2, 8), use_cache=False),
           )),
    Family("r14_starcoder2", _H + "starcoder2", "Starcoder2ForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8), "use_cache": False},),),
           doc="a Starcoder2 decoder built without the cache (dynamic=None)",
           queries=(
               _q("labels given", input_ids=_ids(2, 8), labels=_ids(2, 8), use_cache=False),
               _q("use_cache left out", input_ids=_ids(2, 8)),
               _q("longer", input_ids=_ids(2, 12), use_cache=False),
           )),
    Family("r14_gemma2", _H + "gemma2", "Gemma2ForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8), "use_cache": False},),),
           doc="a Gemma2 decoder with soft-capping and sliding layers (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 8), use_cache=False),
               _q("hidden states out", input_ids=_ids(2, 8), use_cache=False, output_hidden_states=True),
               _q("past the window", input_ids=_ids(2, 12), use_cache=False),
           )),
    Family("r14_convbert", _H + "convbert", "ConvBertModel", None, model=True,
           build=(({"input_ids": _ids(2, 8), "attention_mask": _ids(2, 8)},),),
           doc="a ConvBERT encoder built with a mask (dynamic=None)",
           queries=(
               _q("mask left out", input_ids=_ids(2, 8)),
               _q("token types given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8),
                  token_type_ids=_ids(2, 8)),
               _q("as built", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
           )),
    Family("r14_ernie_mlm", _H + "ernie", "ErnieForMaskedLM", None, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="an ERNIE masked LM (dynamic=None)",
           queries=(
               _q("labels given", input_ids=_ids(2, 8), labels=_ids(2, 8)),
               _q("task type ids given", input_ids=_ids(2, 8), task_type_ids=_ids(2, 8)),
               _q("return_dict=False", input_ids=_ids(2, 8), return_dict=False),
           )),
    Family("r14_xglm_dyn", _H + "xglm", "XGLMForCausalLM", True, model=True,
           build=(({"input_ids": _ids(2, 8), "use_cache": False},),),
           doc="an XGLM decoder (dynamic=True)",
           queries=(
               _q("longer", input_ids=_ids(2, 13), use_cache=False),
               _q("batch 1", input_ids=_ids(1, 8), use_cache=False),
               _q("use_cache=True", input_ids=_ids(2, 8), use_cache=True),
           )),
    Family("r14_data2vec", _H + "data2vec_text", "Data2VecTextForSequenceClassification", None, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="a Data2Vec text classifier (dynamic=None)",
           queries=(
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
               _q("hidden states out", input_ids=_ids(2, 8), output_hidden_states=True),
               _q("as built", input_ids=_ids(2, 8)),
           )),
    Family("r14_roformer_dyn", _H + "roformer", "RoFormerModel", True, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="a RoFormer encoder with rotary tables sliced by length (dynamic=True)",
           queries=(
               _q("longer", input_ids=_ids(2, 16)),
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
               _q("return_dict=False", input_ids=_ids(2, 8), return_dict=False),
           )),
    Family("r14_mobilevit", _H + "mobilevit", "MobileViTModel", None, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="a MobileViT (dynamic=None)",
           queries=(
               _q("as built", pixel_values=_IMG),
               _q("batch 1", pixel_values=[1, 3, 64, 64]),
               _q("hidden states out", pixel_values=_IMG, output_hidden_states=True),
           )),
    Family("r14_poolformer", _H + "poolformer", "PoolFormerModel", False, model=True,
           build=(({"pixel_values": _IMG},),),
           doc="a PoolFormer (dynamic=False)",
           queries=(
               _q("as built", pixel_values=_IMG),
               _q("bigger images", pixel_values=[2, 3, 96, 96]),
               _q("training mode", pixel_values=_IMG, **_TR),
           )),
    Family("r14_mixtral", _H + "mixtral", "MixtralForCausalLM", None, model=True,
           build=(({"input_ids": _ids(2, 8), "use_cache": False},),),
           doc="a Mixtral decoder routing to experts (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 8), use_cache=False),
               _q("router logits out", input_ids=_ids(2, 8), use_cache=False, output_router_logits=True),
           )),
    Family("r14_funnel", _H + "funnel", "FunnelBaseModel", None, model=True,
           build=(({"input_ids": _ids(2, 8)},),),
           doc="a Funnel encoder pooling the sequence (dynamic=None)",
           queries=(
               _q("as built", input_ids=_ids(2, 8)),
               _q("a mask given", input_ids=_ids(2, 8), attention_mask=_ids(2, 8)),
           )),
]

R14D_FAMILIES: list[Family] = [
    Family("r14_expand_auto", _F + "soft", "soft", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a softmax built contiguous, asked with broadcast (stride 0) and column-major inputs (dynamic=None)",
           queries=(
               _q("a broadcast row (strides 0,1)", x=_t([4, 8], stride=[0, 1])),
               _q("column-major (strides 1,4)", x=_t([4, 8], stride=[1, 4])),
           )),
    Family("r14_sizes_auto", _F + "empty_ok", "empty_ok", None,
           build=(({"x": [4, 8]}, {"x": [6, 8]}),), positional=1,
           doc="size 1 after automatic dynamic (dynamic=None)",
           queries=(
               _q("batch 1", x=[1, 8]),
               _q("batch 1 after warm-ups", warm_up=({"x": [4, 8]}, {"x": [6, 8]}), x=[1, 8]),
               _q("batch 0", x=[0, 8]),
           )),
    Family("r14_topk_dyn", _F + "topk_mask", "topk_mask", True,
           build=(({"x": [4, 8], "k": 3},),), positional=1,
           doc="an int into topk, 0/1 against a dynamic build (dynamic=True)",
           queries=(
               _q("k=1", x=[4, 8], k=1),
               _q("k=5", x=[4, 8], k=5),
               _q("k left at 2", x=[4, 8]),
           )),
    Family("r14_branch_dyn", _F + "shape_branch", "shape_branch", True,
           build=(({"x": [8, 8]},),), positional=1,
           doc="a branch on the batch size (dynamic=True)",
           queries=(
               _q("batch 6", x=[6, 8]),
               _q("batch 3", x=[3, 8]),
               _q("batch 5, next to the bound", x=[5, 8]),
               _q("batch 4, on the bound", x=[4, 8]),
           )),
    Family("r14_attn_dyn", _F + "attn_scores", "attn_scores", True,
           build=(({"q": [2, 4, 8], "k": [2, 4, 8]},),), positional=2,
           doc="scores scaled by sqrt(head dim) read from the shape (dynamic=True)",
           queries=(
               _q("head dim 16", q=[2, 4, 16], k=[2, 4, 16]),
               _q("longer sequence", q=[2, 6, 8], k=[2, 6, 8]),
           )),
    Family("r14_numel_auto", _F + "mean_by_numel", "mean_by_numel", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a mean by numel() (dynamic=None)",
           queries=(
               _q("another batch", x=[6, 8]),
               _q("after a warm-up of another batch", warm_up=({"x": [6, 8]},), x=[5, 8]),
           )),
    Family("r14_half_dyn", _F + "half_rows", "half_rows", True,
           build=(({"x": [8, 4]},),), positional=1,
           doc="a slice by x.shape[0] // 2 (dynamic=True)",
           queries=(
               _q("odd batch", x=[7, 4]),
               _q("batch 2", x=[2, 4]),
               _q("batch 1 (an empty slice)", x=[1, 4]),
           )),
    Family("r14_gate_grad", _F + "gate", "Gate", None, model=True, states_grad=True,
           build=(({"x": [4, 8]},),),
           doc="a module with parameters built under no_grad, asked with grad enabled (dynamic=None)",
           queries=(
               _q("grad enabled", x=[4, 8], **_G),
               _q("grad enabled, training mode, backward", x=[4, 8], **_G, **_TR, **{"@backward": True}),
               _q("no_grad as built", x=[4, 8]),
           )),
    Family("r14_flags_attr", _F + "flags", "Flags", None, model=True,
           build=(({"x": [4, 8]},),),
           doc="bool and int attributes set between calls (dynamic=None)",
           queries=(
               _q("use_act=False", x=[4, 8], **{"@set": {"use_act": False}}),
               _q("reps=2", x=[4, 8], **{"@set": {"reps": 2}}),
               _q("reps=1 stated", x=[4, 8], **{"@set": {"reps": 1, "use_act": True}}),
           )),
    Family("r14_gain_auto", _F + "global_gain", "global_gain", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="a module-level float (dynamic=None)",
           queries=(
               _q("GAIN=2.0", x=[4, 8], **{"@global": {"GAIN": 2.0}}),
               _q("GAIN=1.0 stated", x=[4, 8], **{"@global": {"GAIN": 1.0}}),
               _q("GAIN=1.0 stated, another batch", x=[6, 8], **{"@global": {"GAIN": 1.0}}),
           )),
]

R14E_FAMILIES: list[Family] = [
    Family("r14_stride_auto", _F + "mlp", "mlp", None,
           build=(({"x": [4, 1]}, {"x": [1, 8]}, {"x": [4, 8]}),), positional=1,
           doc="strides that differ only where a size is 1, and a padded row stride (dynamic=None)",
           queries=(
               _q("a column of a transposed matrix (strides 1,4)", x=_t([4, 1], stride=[1, 4])),
               _q("a broadcast single row (strides 0,1)", x=_t([1, 8], stride=[0, 1])),
               _q("rows of a wider matrix (strides 16,1)", x=_t([4, 8], stride=[16, 1])),
           )),
    Family("r14_conv_1x1", _F + "conv_block", "ConvBlock", None, model=True,
           build=(({"x": [2, 3, 1, 1]},),),
           doc="conv on 1x1 images, asked channels-last, where the strides are ambiguous (dynamic=None)",
           queries=(
               _q("channels-last 1x1", x=_t([2, 3, 1, 1], stride=[3, 1, 3, 3])),
               _q("as built", x=[2, 3, 1, 1]),
           )),
    Family("r14_pick_dyn", _F + "pick", "pick", True,
           build=(({"x": [4, 8]},),), positional=1,
           doc="an int index, -1 by default (dynamic=True)",
           queries=(
               _q("i=3", x=[4, 8], i=3),
               _q("i=-1 given", x=[4, 8], i=-1),
               _q("i=0", x=[4, 8], i=0),
           )),
    Family("r14_ones_auto", _F + "add_ones", "add_ones", None,
           build=(({"x": [4, 8]},),), positional=1,
           doc="torch.ones in the default dtype (dynamic=None)",
           queries=(
               _q("default dtype float64, float32 input", x=[4, 8], **{"@default_dtype": "float64"}),
               _q("default dtype float32 stated", x=[4, 8], **{"@default_dtype": "float32"}),
           )),
    Family("r14_autocast_auto", _F + "proj", "proj", None,
           build=(({"x": [4, 8], "w": [8, 8]},),), positional=2,
           doc="a matmul built without autocast, asked under CPU autocast (dynamic=None)",
           queries=(
               _q("autocast bfloat16", x=[4, 8], w=[8, 8], **{"@autocast": "bfloat16"}),
               _q("autocast off stated", x=[4, 8], w=[8, 8], **{"@autocast": None}),
               _q("bfloat16 inputs, no autocast", x=_t([4, 8], dtype="bfloat16"), w=_t([8, 8], dtype="bfloat16")),
           )),
]

