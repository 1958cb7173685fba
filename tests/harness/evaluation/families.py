"""The evaluation's families: what is compiled, how, the calls that build its cache, and the
queries asked of torch and of ``fxcache match``. Nothing here imports torch.

A family is one compiled callable (a plain function of
:mod:`tests.harness.evaluation.fns`, or a transformers model of
:mod:`tests.harness.evaluation.hf` compiled whole), none of them in the suite's corpus
(tests/harness/cases.py, demo/cases.py, tests/harness/models.py). Calls are written as
:mod:`tests.harness.evaluation.calls` says. Each query is a fresh process's first call,
or (``warm_up``) a later call of that process, asked with ``--after-recompile``.
The comments say what the call exercises, not what torch answers: torch is asked.
"""

from __future__ import annotations

from tests.harness.evaluation import families_r12 as _r12
from tests.harness.evaluation import families_r13 as _r13
from tests.harness.evaluation import families_r14d as _r14d
from tests.harness.evaluation.families_floats import FLOAT_FAMILIES
from tests.harness.evaluation.families_more import MORE_FAMILIES
from tests.harness.evaluation.families_r4 import R4_FAMILIES
from tests.harness.evaluation.families_r5 import R5_FAMILIES
from tests.harness.evaluation.families_r6 import R6_FAMILIES
from tests.harness.evaluation.families_r7 import R7_FAMILIES
from tests.harness.evaluation.families_r8 import R8_FAMILIES, R8B_FAMILIES, R8C_FAMILIES
from tests.harness.evaluation.families_r9 import R9_FAMILIES, R9B_FAMILIES, R9C_FAMILIES
from tests.harness.evaluation.families_r10 import R10_FAMILIES, R10B_FAMILIES, R10C_FAMILIES
from tests.harness.evaluation.families_r10d import R10D_FAMILIES, R10E_FAMILIES
from tests.harness.evaluation.families_r11 import (
             R11_FAMILIES,
             R11B_FAMILIES,
             R11C_FAMILIES,
             R11D_FAMILIES,
             R11E_FAMILIES,
             R11F_FAMILIES,
             R11G_FAMILIES,
)
from tests.harness.evaluation.families_rv import (
             RV2_FAMILIES,
             RV3_FAMILIES,
             RV4_FAMILIES,
             RV5_FAMILIES,
             RV6_FAMILIES,
             RV7_FAMILIES,
             RV_FAMILIES,
)
from tests.harness.evaluation.families_rv10 import RV10_FAMILIES
from tests.harness.evaluation.families_state import STATE_FAMILIES
from tests.harness.evaluation.family import Family as Family
from tests.harness.evaluation.family import Query as Query
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_ADAM = dict(params={"list": [[4, 3], [3]]}, grads={"list": [[4, 3], [3]]},
             exp_avgs={"list": [[4, 3], [3]]}, lr=0.001, beta1=0.9)

FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family(
        "act_clip", "tests.harness.evaluation.fns:act_block", "act_block", None,
        build=(({"x": [8, 16]}, {"x": [8, 16], "act": "gelu", "clip": True}),),
        positional=1, doc="a str and a bool the code branches on (dynamic=None)",
        queries=(
            _q("both left out, as built", x=[8, 16]),
            _q("both given, the defaults", x=[8, 16], act="relu", clip=False),
            _q("both given, as the second build call", x=[8, 16], act="gelu", clip=True),
            _q("act changed, clip left out", x=[8, 16], act="gelu"),
            _q("clip changed, act left out", x=[8, 16], clip=True),
            _q("a str never built", x=[8, 16], act="tanh"),
            _q("clip=False given, act built", x=[8, 16], act="gelu", clip=False),
            _q("another size: a fresh process's first call is static", x=[12, 16]),
        )),
    Family(
        "act_flagged", "tests.harness.evaluation.fns:act_block", "act_block", None,
        build=(({"x": [8, 16], "act": "gelu", "clip": True},),),
        positional=1, doc="a str and a bool, built only with non-default values (dynamic=None)",
        queries=(
            _q("both left out: the defaults were never built", x=[8, 16]),
            _q("both given, as built", x=[8, 16], act="gelu", clip=True),
            _q("clip left out", x=[8, 16], act="gelu"),
        )),
    Family(
        "sgd_alpha", "tests.harness.evaluation.fns:sgd_update", "sgd_update", None,
        build=(({"p": [16], "g": [16], "lr": 0.1},),), positional=2,
        doc="a float through an expression: alpha=-lr (dynamic=None)",
        queries=(
            _q("as built", p=[16], g=[16], lr=0.1),
            _q("another lr", p=[16], g=[16], lr=0.2),
            _q("lr negated", p=[16], g=[16], lr=-0.1),
            _q("another size", p=[32], g=[32], lr=0.1),
        )),
    Family(
        "inv_scale", "tests.harness.evaluation.fns:inv_scale", "inv_scale", True,
        build=(({"x": [8, 4], "scale": 4.0},),), positional=1,
        doc="a float through an expression: 1 / scale (dynamic=True)",
        queries=(
            _q("as built", x=[8, 4], scale=4.0),
            _q("another size, same scale", x=[6, 4], scale=4.0),
            _q("another scale", x=[8, 4], scale=2.0),
            _q("the reciprocal of the built constant", x=[8, 4], scale=0.25),
            _q("an int where a float was", x=[8, 4], scale=4),
        )),
    Family(
        "half_lr", "tests.harness.evaluation.fns:half_lr", "half_lr", False,
        build=(({"w": [8], "g": [8], "lr": 0.02},),), positional=2,
        doc="a float through an expression: lr * 0.5 (dynamic=False)",
        queries=(
            _q("as built", w=[8], g=[8], lr=0.02),
            _q("the product's value given as lr", w=[8], g=[8], lr=0.01),
            _q("another lr", w=[8], g=[8], lr=0.04),
        )),
    Family(
        "adam_step", "tests.harness.evaluation.fns:adam_like", "adam_like", None,
        build=(({**_ADAM, "step": 1}, {**_ADAM, "step": 2}),), positional=3,
        doc="an optimizer step over lists of tensors; an int in an expression (dynamic=None)",
        queries=(
            _q("as the first build call", **_ADAM, step=1),
            _q("step changed: a fresh process's first call", **_ADAM, step=2),
            _q("step 3 after a recompile", warm_up=({**_ADAM, "step": 1},), **_ADAM, step=3),
            _q("another lr", **{**_ADAM, "lr": 0.002}, step=1),
            _q("three parameters", **{k: ({"list": v["list"] + [[2]]} if isinstance(v, dict) else v)
                                      for k, v in _ADAM.items()}, step=1),
        )),
    Family(
        "marked_range", "tests.harness.evaluation.fns:ranged", "ranged", None,
        build=(({"x": _t([8, 4], mark=[0], min=2, max=16)},),), positional=1,
        doc="mark_dynamic(x, 0, min=2, max=16), then calls with and without a range",
        queries=(
            _q("the built range", x=_t([8, 4], mark=[0], min=2, max=16)),
            _q("the built range, another size", x=_t([12, 4], mark=[0], min=2, max=16)),
            _q("the range's top", x=_t([16, 4], mark=[0], min=2, max=16)),
            _q("marked without a range", x=_t([8, 4], mark=[0])),
            _q("marked without a range, a size past 16", x=_t([20, 4], mark=[0])),
            _q("marked with max=32", x=_t([8, 4], mark=[0], min=2, max=32)),
            _q("marked with max=32, a size past 16", x=_t([20, 4], mark=[0], min=2, max=32)),
            _q("not marked", x=[8, 4]),
        )),
    Family(
        "conv_frames", "tests.harness.evaluation.fns:frames", "frames", True,
        build=(({"audio": [2, 400]},),), positional=1,
        doc="convolutions over audio: 30..49 samples leave one frame (dynamic=True)",
        queries=(
            _q("another length", audio=[2, 800]),
            _q("one frame left", audio=[2, 40]),
            _q("two frames left", audio=[2, 60]),
            _q("batch 1", audio=[1, 400]),
            _q("another batch", audio=[3, 400]),
        )),
    Family(
        "optional_bias", "tests.harness.evaluation.fns:affine", "affine", True,
        build=(({"x": [4, 8], "weight": [8, 6], "bias": [6]}, {"x": [5, 8], "weight": [8, 6]}),),
        positional=2, doc="an optional tensor given and left out, both built (dynamic=True)",
        queries=(
            _q("bias given", x=[7, 8], weight=[8, 6], bias=[6]),
            _q("bias left out", x=[7, 8], weight=[8, 6]),
            _q("bias=None", x=[7, 8], weight=[8, 6], bias=None),
            _q("bias given, its dtype changed", x=[7, 8], weight=[8, 6], bias=_t([6], dtype="float64")),
        )),
    Family(
        "optional_once", "tests.harness.evaluation.fns:affine", "affine", None,
        build=(({"x": [4, 8], "weight": [8, 6], "bias": [6]},),), positional=2,
        doc="an optional tensor, only given when built (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], weight=[8, 6], bias=[6]),
            _q("bias left out", x=[4, 8], weight=[8, 6]),
            _q("bias=None", x=[4, 8], weight=[8, 6], bias=None),
        )),
    Family(
        "int_window", "tests.harness.evaluation.fns:window", "window", True,
        build=(({"x": [4, 32], "n": 4}, {"x": [4, 32], "n": 5}),), positional=1,
        doc="an int in expressions (dynamic=True)",
        queries=(
            _q("another n", x=[4, 32], n=6),
            _q("n*2 past the dim", x=[4, 32], n=20),
            _q("n=1: 0/1 specialization", x=[4, 32], n=1),
            _q("another size", x=[6, 48], n=4),
        )),
    Family(
        "int_window_auto", "tests.harness.evaluation.fns:window", "window", None,
        build=(({"x": [4, 32], "n": 4},),), positional=1,
        doc="an int in expressions (dynamic=None, one call)",
        queries=(
            _q("as built", x=[4, 32], n=4),
            _q("another n", x=[4, 32], n=5),
        )),
    Family(
        "tuple_dims", "tests.harness.evaluation.fns:pool", "pool", False,
        build=(({"x": [2, 3, 8, 8]},),), positional=1,
        doc="a tuple of ints and a bool, left out and given (dynamic=False)",
        queries=(
            _q("as built", x=[2, 3, 8, 8]),
            _q("dims given, the default", x=[2, 3, 8, 8], dims={"tuple": [2, 3]}),
            _q("other dims", x=[2, 3, 8, 8], dims={"tuple": [1, 2]}),
            _q("keepdim=True", x=[2, 3, 8, 8], keepdim=True),
            _q("another dtype", x=_t([2, 3, 8, 8], dtype="float16")),
            _q("another size", x=[2, 3, 4, 4]),
        )),
    Family(
        "scalar_t", "tests.harness.evaluation.fns:mix", "mix", None,
        build=(({"x": [4, 4], "t": []},),), positional=1,
        doc="a 0-d tensor, and a float in its place (dynamic=None)",
        queries=(
            _q("as built", x=[4, 4], t=[]),
            _q("a float instead of the 0-d tensor", x=[4, 4], t=0.5),
            _q("a 0-d float64 tensor", x=[4, 4], t=_t([], dtype="float64")),
            _q("a 1-element tensor", x=[4, 4], t=[1]),
        )),
    Family(
        "dtypes", "tests.harness.evaluation.fns:norm_cast", "norm_cast", True,
        build=(({"x": [8, 4]}, {"x": _t([8, 4], dtype="bfloat16")}),), positional=1,
        doc="one function, two dtypes built (dynamic=True)",
        queries=(
            _q("float32, another size", x=_t([5, 4], dtype="float32")),
            _q("bfloat16, another size", x=_t([16, 4], dtype="bfloat16")),
            _q("float16: never built", x=_t([8, 4], dtype="float16")),
            _q("no dtype said", x=[8, 4]),
        )),
    # --- transformers models, compiled whole ------------------------------------------
    Family(
        "t5_encdec", "tests.harness.evaluation.hf:t5", "T5ForConditionalGeneration", None, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64"), "decoder_input_ids": _t([2, 4], dtype="int64")},),),
        doc="an encoder-decoder, called by keyword (dynamic=None)",
        queries=(
            _q("as built", input_ids=_t([2, 8], dtype="int64"), decoder_input_ids=_t([2, 4], dtype="int64")),
            _q("return_dict=False", input_ids=_t([2, 8], dtype="int64"),
               decoder_input_ids=_t([2, 4], dtype="int64"), return_dict=False),
            _q("output_hidden_states=True", input_ids=_t([2, 8], dtype="int64"),
               decoder_input_ids=_t([2, 4], dtype="int64"), output_hidden_states=True),
            _q("a longer input", input_ids=_t([2, 12], dtype="int64"), decoder_input_ids=_t([2, 4], dtype="int64")),
        )),
    Family(
        "wav2vec2_audio", "tests.harness.evaluation.hf:wav2vec2", "Wav2Vec2Model", True, model=True,
        build=(({"input_values": [2, 400]},),),
        doc="convolutions over audio; a short input leaves one frame (dynamic=True)",
        queries=(
            _q("another length", input_values=[2, 600]),
            _q("one frame left", input_values=[2, 40]),
            _q("another batch", input_values=[3, 400]),
            _q("batch 1", input_values=[1, 400]),
        )),
    Family(
        "vit_batch", "tests.harness.evaluation.hf:vit", "ViTModel", None, model=True,
        build=(({"pixel_values": _t([4, 3, 32, 32], mark=[0])},),),
        doc="a vision transformer, the batch marked dynamic (dynamic=None)",
        queries=(
            _q("another batch, marked", pixel_values=_t([3, 3, 32, 32], mark=[0])),
            _q("another batch, not marked", pixel_values=[3, 3, 32, 32]),
            _q("the built batch, not marked", pixel_values=[4, 3, 32, 32]),
            _q("output_hidden_states=True", pixel_values=_t([4, 3, 32, 32], mark=[0]),
               output_hidden_states=True),
            _q("batch 1, marked", pixel_values=_t([1, 3, 32, 32], mark=[0])),
        )),
    Family(
        "distilbert_mask", "tests.harness.evaluation.hf:distilbert", "DistilBertModel", True, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64"), "attention_mask": _t([2, 8], dtype="int64")},),),
        doc="an encoder built with an attention mask (dynamic=True)",
        queries=(
            _q("mask given, other sizes", input_ids=_t([3, 10], dtype="int64"),
               attention_mask=_t([3, 10], dtype="int64")),
            _q("mask left out", input_ids=_t([3, 10], dtype="int64")),
            _q("a bool mask", input_ids=_t([3, 10], dtype="int64"), attention_mask=_t([3, 10], dtype="bool")),
            _q("mask=None", input_ids=_t([3, 10], dtype="int64"), attention_mask=None),
        )),
    Family(
        "opt_decoder", "tests.harness.evaluation.hf:opt", "OPTForCausalLM", True, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64")},),),
        doc="a decoder, with output_hidden_states or not (dynamic=True)",
        queries=(
            _q("another size", input_ids=_t([3, 12], dtype="int64")),
            _q("output_hidden_states=True", input_ids=_t([2, 8], dtype="int64"), output_hidden_states=True),
            _q("return_dict=False", input_ids=_t([2, 8], dtype="int64"), return_dict=False),
            _q("batch 1", input_ids=_t([1, 8], dtype="int64")),
        )),
    # --- families added after the first twenty ----------------------------------------
    Family(
        "reduce_dim", "tests.harness.evaluation.fns:reduce_dim", "reduce_dim", None,
        build=(({"x": [4, 6]},),), positional=1,
        doc="an int dim and a bool passed to a reduction (dynamic=None)",
        queries=(
            _q("as built", x=[4, 6]),
            _q("dim given, the default", x=[4, 6], dim=1),
            _q("another dim", x=[4, 6], dim=0),
            _q("the same dim counted from the end", x=[4, 6], dim=-1),
            _q("keepdim=True", x=[4, 6], keepdim=True),
        )),
    Family(
        "head_tail", "tests.harness.evaluation.fns:head_tail", "head_tail", False,
        build=(({"x": [4, 16], "k": 3},),), positional=1,
        doc="ints through a slice bound and a factor (dynamic=False)",
        queries=(
            _q("as built", x=[4, 16], k=3),
            _q("another k", x=[4, 16], k=5),
            _q("scale given, the default", x=[4, 16], k=3, scale=3),
            _q("another scale", x=[4, 16], k=3, scale=4),
            _q("k past the end", x=[4, 16], k=20),
        )),
    Family(
        "upsample_mode", "tests.harness.evaluation.fns:upsample", "upsample", None,
        build=(({"x": [1, 2, 4, 4]}, {"x": [1, 2, 4, 4], "mode": "bilinear"}),), positional=1,
        doc="F.interpolate with a str mode and an int factor (dynamic=None)",
        queries=(
            _q("nearest, as built", x=[1, 2, 4, 4]),
            _q("bilinear, as built", x=[1, 2, 4, 4], mode="bilinear"),
            _q("a mode never built", x=[1, 2, 4, 4], mode="bicubic"),
            _q("another factor", x=[1, 2, 4, 4], factor=3),
        )),
    Family(
        "cat_list", "tests.harness.evaluation.fns:cat_rows", "cat_rows", True,
        build=(({"xs": {"list": [[2, 4], [3, 4]]}},),), positional=1,
        doc="a list of tensors joined by torch.cat along an int dim (dynamic=True)",
        queries=(
            _q("two tensors, other sizes", xs={"list": [[5, 4], [1, 4]]}),
            _q("three tensors", xs={"list": [[2, 4], [3, 4], [1, 4]]}),
            _q("another dim", xs={"list": [[2, 4], [2, 4]]}, dim=1),
        )),
    Family(
        "top_k_optional", "tests.harness.evaluation.fns:top_k", "top_k", None,
        build=(({"x": [4, 8]}, {"x": [4, 8], "k": 3}),), positional=1,
        doc="an Optional[int], None and given (dynamic=None)",
        queries=(
            _q("k left out, as built", x=[4, 8]),
            _q("k=None given", x=[4, 8], k=None),
            _q("k as built", x=[4, 8], k=3),
            _q("another k", x=[4, 8], k=5),
        )),
    Family(
        "dropout_flag", "tests.harness.evaluation.fns:drop_block", "drop_block", None,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a bool training flag passed to dropout (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("training=False given", x=[4, 8], training=False),
            _q("training=True", x=[4, 8], training=True),
        )),
    Family(
        "albert_types", "tests.harness.evaluation.hf:albert", "AlbertModel", None, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64"), "token_type_ids": _t([2, 8], dtype="int64")},),),
        doc="a shared-layer encoder built with token_type_ids (dynamic=None)",
        queries=(
            _q("as built", input_ids=_t([2, 8], dtype="int64"), token_type_ids=_t([2, 8], dtype="int64")),
            _q("token_type_ids left out", input_ids=_t([2, 8], dtype="int64")),
            _q("another length", input_ids=_t([2, 12], dtype="int64"),
               token_type_ids=_t([2, 12], dtype="int64")),
        )),
    Family(
        "reduce_dim_dynamic", "tests.harness.evaluation.fns:reduce_dim", "reduce_dim", True,
        build=(({"x": [4, 6]},),), positional=1,
        doc="an int dim of a reduction under dynamic=True: a SymInt that must be specialized",
        queries=(
            _q("as built, another size", x=[5, 6]),
            _q("dim given, the default", x=[4, 6], dim=1),
            _q("another dim", x=[4, 6], dim=0),
            _q("keepdim=True", x=[4, 6], keepdim=True),
        )),
    Family(
        "head_tail_auto", "tests.harness.evaluation.fns:head_tail", "head_tail", None,
        build=(({"x": [4, 16], "k": 3}, {"x": [4, 16], "k": 5}),), positional=1,
        doc="ints through slices under dynamic=None, built with two k in one process (a recompile)",
        queries=(
            _q("the first k", x=[4, 16], k=3),
            _q("the second k: a fresh process bakes it", x=[4, 16], k=5),
            _q("another k", x=[4, 16], k=7),
            _q("another k after a recompile", x=[4, 16], k=7, warm_up=({"x": [4, 16], "k": 3},)),
        )),
    Family(
        "tuple_dims_dynamic", "tests.harness.evaluation.fns:pool", "pool", True,
        build=(({"x": [2, 3, 8, 8]},),), positional=1,
        doc="a tuple of ints and a bool of a reduction under dynamic=True",
        queries=(
            _q("as built, another size", x=[3, 3, 8, 8]),
            _q("dims given, the default", x=[2, 3, 8, 8], dims={"tuple": [2, 3]}),
            _q("other dims", x=[2, 3, 8, 8], dims={"tuple": [1, 2]}),
            _q("the same dims in another order", x=[2, 3, 8, 8], dims={"tuple": [3, 2]}),
            _q("keepdim=True", x=[2, 3, 8, 8], keepdim=True),
        )),
    Family(
        "pinned_given", "tests.harness.evaluation.fns:pool", "pool", True,
        build=(({"x": [2, 3, 8, 8], "dims": {"tuple": [1, 2]}},),), positional=1,
        doc="a tuple built with a value other than its default (dynamic=True), then left out",
        queries=(
            _q("dims as built", x=[2, 3, 8, 8], dims={"tuple": [1, 2]}),
            _q("dims left out: the default", x=[2, 3, 8, 8]),
        )),
    Family(
        "pinned_int_given", "tests.harness.evaluation.fns:reduce_dim", "reduce_dim", True,
        build=(({"x": [4, 6], "dim": 0},),), positional=1,
        doc="an int dim built with a value other than its default (dynamic=True), then left out",
        queries=(
            _q("dim as built", x=[4, 6], dim=0),
            _q("dim left out: the default", x=[4, 6]),
        )),
    Family(
        "opt_hidden_built", "tests.harness.evaluation.hf:opt", "OPTForCausalLM", True, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64"), "output_hidden_states": True},),),
        doc="a decoder built with a keyword flag (output_hidden_states=True), then called without it",
        queries=(
            _q("the flag left out", input_ids=_t([3, 12], dtype="int64")),
            _q("the flag as built", input_ids=_t([3, 12], dtype="int64"), output_hidden_states=True),
        )),
    Family(
        "distil_attn_built", "tests.harness.evaluation.hf:distilbert", "DistilBertModel", None, model=True,
        build=(({"input_ids": _t([3, 10], dtype="int64"), "output_attentions": True},),),
        doc="an encoder built with a keyword flag through **kwargs (output_attentions=True), then called without it",
        queries=(
            _q("the flag left out: match assumes no keyword was given then either", input_ids=_t([3, 10], dtype="int64")),
            _q("the flag as built", input_ids=_t([3, 10], dtype="int64"), output_attentions=True),
        )),
    # --- the second round: model families and call patterns of their own ----------------
    Family(
        "regroup_dynamic", "tests.harness.evaluation.fns:regroup", "regroup", True,
        build=(({"x": [4, 12], "groups": 3},),), positional=1,
        doc="an int through view, reshape and repeat (dynamic=True)",
        queries=(
            _q("as built", x=[4, 12], groups=3),
            _q("another size, the same groups", x=[6, 24], groups=3),
            _q("another groups that divides the dim", x=[4, 12], groups=4),
            _q("groups=1: a 0/1 specialization", x=[4, 12], groups=1),
            _q("groups that does not divide the dim", x=[4, 12], groups=5),
            _q("a size-1 batch", x=[1, 12], groups=3),
        )),
    Family(
        "regroup_auto", "tests.harness.evaluation.fns:regroup", "regroup", None,
        build=(({"x": [4, 12], "groups": 3}, {"x": [4, 12], "groups": 4}),), positional=1,
        doc="an int through view and repeat under dynamic=None, made dynamic by a second value in one process",
        queries=(
            _q("the first groups", x=[4, 12], groups=3),
            _q("the second groups: a fresh process's first call", x=[4, 12], groups=4),
            _q("a third groups after a recompile", x=[4, 12], groups=6, warm_up=({"x": [4, 12], "groups": 3},)),
            _q("a third groups, first call", x=[4, 12], groups=6),
        )),
    Family(
        "temp_norm", "tests.harness.evaluation.fns:temp_norm", "temp_norm", None,
        build=(({"x": [4, 8], "t": 0.5},),), positional=1,
        doc="a float temperature through x / t and an eps default inside rsqrt (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], t=0.5),
            _q("another temperature", x=[4, 8], t=2.0),
            _q("eps given, its default", x=[4, 8], t=0.5, eps=1e-6),
            _q("another eps", x=[4, 8], t=0.5, eps=1e-5),
            _q("an int temperature", x=[4, 8], t=1),
            _q("the temperature's reciprocal", x=[4, 8], t=2),
        )),
    Family(
        "where_fill", "tests.harness.evaluation.fns:where_fill", "where_fill", False,
        build=(({"x": [4, 8]}, {"x": [4, 8], "fill": -1.0}),), positional=1,
        doc="torch.where with a Python float, and a comparison with a Python int (dynamic=False)",
        queries=(
            _q("both left out, as built", x=[4, 8]),
            _q("fill as the second build call", x=[4, 8], fill=-1.0),
            _q("a fill never built", x=[4, 8], fill=-2.0),
            _q("an int fill", x=[4, 8], fill=0),
            _q("another threshold", x=[4, 8], thresh=1),
            _q("a float threshold", x=[4, 8], thresh=0.5),
        )),
    Family(
        "cast_dtype", "tests.harness.evaluation.fns:cast_to", "cast_to", True,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a torch.dtype argument passed to .to(), left at its default when built (dynamic=True)",
        queries=(
            _q("left out, another size", x=[6, 8]),
            _q("the default given", x=[4, 8], dtype={"dtype": "float16"}),
            _q("another dtype", x=[4, 8], dtype={"dtype": "bfloat16"}),
            _q("the input's dtype changed", x=_t([4, 8], dtype="float64")),
        )),
    Family(
        "reshape_tuple", "tests.harness.evaluation.fns:reshape_to", "reshape_to", True,
        build=(({"x": [2, 12], "shape": {"tuple": [4, 6]}},),), positional=1,
        doc="a tuple of ints as a shape argument (dynamic=True)",
        queries=(
            _q("as built", x=[2, 12], shape={"tuple": [4, 6]}),
            _q("another shape of the same length", x=[2, 12], shape={"tuple": [6, 4]}),
            _q("a shape of another length", x=[2, 12], shape={"tuple": [24]}),
            _q("-1 in the shape", x=[2, 12], shape={"tuple": [-1, 6]}),
            _q("another input size, the shape fits", x=[3, 8], shape={"tuple": [4, 6]}),
            _q("a 1 in the shape", x=[2, 12], shape={"tuple": [1, 24]}),
        )),
    Family(
        "graph_break", "tests.harness.evaluation.fns:gated", "gated", None,
        build=(({"x": [4, 8], "n": 3},),), positional=1,
        doc="a data-dependent if breaks the graph; an int read on both sides of it (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8], n=3),
            _q("another n", x=[4, 8], n=4),
            _q("another size", x=[6, 8], n=3),
            _q("another size after a recompile", x=[6, 8], n=3, warm_up=({"x": [4, 8], "n": 3},)),
        )),
    Family(
        "pairwise_sizes", "tests.harness.evaluation.fns:pairwise", "pairwise", True,
        build=(({"x": [4, 3], "y": [5, 3]},),), positional=2,
        doc="two inputs broadcast together, called with sizes 0, 1 and equal (dynamic=True)",
        queries=(
            _q("other sizes", x=[6, 3], y=[7, 3]),
            _q("equal sizes: duck sizing", x=[5, 3], y=[5, 3]),
            _q("a size-1 dim", x=[1, 3], y=[5, 3]),
            _q("a 0-size dim", x=[0, 3], y=[5, 3]),
            _q("the last dim 1", x=[4, 1], y=[5, 1]),
            _q("dim 1 marked static", x=_t([6, 3], static=[0]), y=[7, 3]),
        )),
    Family(
        "norm_net_mode", "tests.harness.evaluation.fns:norm_net", "NormNet", None, model=True,
        build=(({"x": [8, 16]},),),
        doc="a module with BatchNorm and Dropout built in eval mode, called in train mode (dynamic=None)",
        queries=(
            _q("eval, as built", x=[8, 16]),
            _q("train mode: another graph, buffers updated in place", x=[8, 16], **{"@train": True}),
            _q("eval, another batch", x=[4, 16]),
            _q("eval, the batch marked dynamic", x=_t([8, 16], mark=[0])),
        )),
    Family(
        "counter_buffer", "tests.harness.evaluation.fns:counter", "Counter", True, model=True,
        build=(({"x": [3, 4]}, {"x": [3, 4], "offset": [4]}),),
        doc="a buffer updated in place, an optional tensor given and left out (dynamic=True)",
        queries=(
            _q("offset left out, another size", x=[5, 4]),
            _q("offset given", x=[5, 4], offset=[4]),
            _q("offset=None", x=[5, 4], offset=None),
            _q("a size-1 batch", x=[1, 4]),
            _q("a 0-size batch", x=[0, 4]),
            _q("offset broadcast from a size-1 dim", x=[5, 4], offset=[1, 4]),
        )),
    Family(
        "mistral_window", "tests.harness.evaluation.hf:mistral", "MistralForCausalLM", True, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64")},),),
        doc="a GQA decoder with a 4-token sliding window, called shorter and longer (dynamic=True)",
        queries=(
            _q("longer, another batch", input_ids=_t([3, 12], dtype="int64")),
            _q("shorter than the window", input_ids=_t([2, 3], dtype="int64")),
            _q("one token", input_ids=_t([2, 1], dtype="int64")),
            _q("int32 ids", input_ids=_t([2, 8], dtype="int32")),
            _q("an attention mask given", input_ids=_t([2, 8], dtype="int64"),
               attention_mask=_t([2, 8], dtype="int64")),
        )),
    Family(
        "convnext_images", "tests.harness.evaluation.hf:convnext", "ConvNextModel", None, model=True,
        build=(({"pixel_values": [2, 3, 32, 32]},), ({"pixel_values": [2, 3, 32, 32]}, {"pixel_values": [3, 3, 32, 32]})),
        doc="a ConvNeXt, built static and then under automatic dynamic (dynamic=None)",
        queries=(
            _q("as built", pixel_values=[2, 3, 32, 32]),
            _q("another batch, first call", pixel_values=[4, 3, 32, 32]),
            _q("another batch after a recompile", pixel_values=[4, 3, 32, 32],
               warm_up=({"pixel_values": [2, 3, 32, 32]},)),
            _q("a larger image after a recompile", pixel_values=[2, 3, 64, 64],
               warm_up=({"pixel_values": [2, 3, 32, 32]},)),
            _q("batch 1 after a recompile", pixel_values=[1, 3, 32, 32],
               warm_up=({"pixel_values": [2, 3, 32, 32]},)),
            _q("float64 pixels", pixel_values=_t([2, 3, 32, 32], dtype="float64")),
        )),
    Family(
        "clip_text_marked", "tests.harness.evaluation.hf:clip_text", "CLIPTextModel", None, model=True,
        build=(({"input_ids": _t([2, 7], dtype="int64", mark=[1])},),),
        doc="CLIP's text tower, the sequence marked dynamic (dynamic=None)",
        queries=(
            _q("another length, marked", input_ids=_t([2, 12], dtype="int64", mark=[1])),
            _q("another length, not marked", input_ids=_t([2, 12], dtype="int64")),
            _q("the built length, not marked", input_ids=_t([2, 7], dtype="int64")),
            _q("marked with a range", input_ids=_t([2, 9], dtype="int64", mark=[1], min=2, max=16)),
            _q("another batch, marked", input_ids=_t([3, 7], dtype="int64", mark=[1])),
            _q("output_attentions=True", input_ids=_t([2, 7], dtype="int64", mark=[1]), output_attentions=True),
        )),
]}
FAMILIES.update((f.name, f) for f in MORE_FAMILIES)
FAMILIES.update((f.name, f) for f in R4_FAMILIES)
FAMILIES.update((f.name, f) for f in STATE_FAMILIES)
FAMILIES.update((f.name, f) for f in R5_FAMILIES)
FAMILIES.update((f.name, f) for f in R6_FAMILIES)
FAMILIES.update((f.name, f) for f in R7_FAMILIES)
FAMILIES.update((f.name, f) for f in R8_FAMILIES)
FAMILIES.update((f.name, f) for f in R8B_FAMILIES)
FAMILIES.update((f.name, f) for f in R8C_FAMILIES)
FAMILIES.update((f.name, f) for f in RV_FAMILIES)
FAMILIES.update((f.name, f) for f in FLOAT_FAMILIES)
FAMILIES.update((f.name, f) for f in RV2_FAMILIES)
FAMILIES.update((f.name, f) for f in RV3_FAMILIES)
FAMILIES.update((f.name, f) for f in RV4_FAMILIES)
FAMILIES.update((f.name, f) for f in RV5_FAMILIES)
FAMILIES.update((f.name, f) for f in RV6_FAMILIES)
FAMILIES.update((f.name, f) for f in RV7_FAMILIES)
FAMILIES.update((f.name, f) for f in RV10_FAMILIES)
FAMILIES.update((f.name, f) for f in R9_FAMILIES)
FAMILIES.update((f.name, f) for f in R9B_FAMILIES)
FAMILIES.update((f.name, f) for f in R9C_FAMILIES)
FAMILIES.update((f.name, f) for f in R10_FAMILIES)
FAMILIES.update((f.name, f) for f in R10B_FAMILIES)
FAMILIES.update((f.name, f) for f in R10C_FAMILIES)
FAMILIES.update((f.name, f) for f in R10D_FAMILIES)
FAMILIES.update((f.name, f) for f in R10E_FAMILIES)
FAMILIES.update((f.name, f) for f in R11_FAMILIES)
FAMILIES.update((f.name, f) for f in R11B_FAMILIES)
FAMILIES.update((f.name, f) for f in R11C_FAMILIES)
FAMILIES.update((f.name, f) for f in R11D_FAMILIES)
FAMILIES.update((f.name, f) for f in R11E_FAMILIES)
FAMILIES.update((f.name, f) for f in R11F_FAMILIES)
FAMILIES.update((f.name, f) for f in R11G_FAMILIES)
for _group in (_r12.R12_FAMILIES, _r12.R12B_FAMILIES, _r12.R12C_FAMILIES, _r12.R12D_FAMILIES,
               _r13.R13_FAMILIES, _r13.R13B_FAMILIES, _r13.R13C_FAMILIES, _r13.R13D_FAMILIES,
               _r14d.R14D_FAMILIES):
    FAMILIES.update((f.name, f) for f in _group)
