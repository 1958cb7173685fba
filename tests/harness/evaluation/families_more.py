"""More evaluation families: what a call depends on beyond its arguments' values (the grad
mode and requires_grad, a tensor's layout, a module's attributes and a module global),
Python control flow on an int (a loop unrolled, an ``if``), sizes through ``math.sqrt``,
keyword-only parameters, a dict and a nested tuple of tensors, and GPT-2, BERT, Qwen2 and
BART. :mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``; the comments say
what each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

MORE_FAMILIES: list[Family] = [
    Family(
        "grad_flip", "tests.harness.evaluation.fns:gelu_mix", "gelu_mix", None,
        build=(({"x": [4, 8], "w": [8, 8]},),), positional=2, states_grad=True,
        doc="built under torch.no_grad(), called with grad enabled and with an input that requires grad (dynamic=None)",
        queries=(
            _q("as built, under no_grad", x=[4, 8], w=[8, 8]),
            _q("grad enabled, nothing requires grad", x=[4, 8], w=[8, 8], **{"@grad": True}),
            _q("grad enabled, w requires grad", x=[4, 8], w=_t([8, 8], rg=True), **{"@grad": True}),
            _q("under no_grad, w requires grad", x=[4, 8], w=_t([8, 8], rg=True)),
        )),
    Family(
        "grad_built", "tests.harness.evaluation.fns:gelu_mix", "gelu_mix", True,
        build=(({"x": [4, 8], "w": _t([8, 8], rg=True), "@grad": True},),), positional=2, states_grad=True,
        doc="built with grad enabled and w requiring grad (a training graph), called otherwise (dynamic=True)",
        queries=(
            _q("as built, another size", x=[6, 8], w=_t([8, 8], rg=True), **{"@grad": True}),
            _q("under no_grad", x=[6, 8], w=_t([8, 8], rg=True)),
            _q("grad enabled, w not requiring grad", x=[6, 8], w=[8, 8], **{"@grad": True}),
            _q("under no_grad, nothing requires grad", x=[6, 8], w=[8, 8]),
        )),
    Family(
        "strided_rows", "tests.harness.evaluation.fns:row_norm", "row_norm", None,
        build=(({"x": [6, 4]}, {"x": [6, 4]}),), positional=1,
        doc="a reduction built on a contiguous input, called with a transposed one (dynamic=None)",
        queries=(
            _q("as built", x=[6, 4]),
            _q("transposed (strides 1, 6)", x=_t([6, 4], stride=[1, 6])),
            _q("a row of a wider tensor (strides 8, 1)", x=_t([6, 4], stride=[8, 1])),
            _q("another size after a recompile", x=[5, 4], warm_up=({"x": [6, 4]},)),
        )),
    Family(
        "channels_last", "tests.harness.evaluation.fns:pool2", "pool2", True,
        build=(({"x": [2, 3, 8, 8]},),), positional=1,
        doc="a pooled 4-d input built contiguous, called channels-last (dynamic=True)",
        queries=(
            _q("contiguous, another size", x=[3, 3, 12, 12]),
            _q("channels-last", x=_t([2, 3, 8, 8], stride=[192, 1, 24, 3])),
            _q("channels-last, another size", x=_t([3, 3, 12, 12], stride=[432, 1, 36, 3])),
        )),
    Family(
        "int_loop", "tests.harness.evaluation.fns:repeat_branch", "repeat_branch", True,
        build=(({"x": [4, 8], "n": 2},),), positional=1,
        doc="an int read by range() and by `if n > 2` (dynamic=True)",
        queries=(
            _q("as built, another size", x=[6, 8], n=2),
            _q("one more loop, the branch taken", x=[4, 8], n=3),
            _q("one loop fewer", x=[4, 8], n=1),
            _q("no loop", x=[4, 8], n=0),
        )),
    Family(
        "int_loop_auto", "tests.harness.evaluation.fns:repeat_branch", "repeat_branch", None,
        build=(({"x": [4, 8], "n": 3}, {"x": [4, 8], "n": 4}),), positional=1,
        doc="an int read by range() and by `if n > 2`, two values in one process (dynamic=None)",
        queries=(
            _q("the first n", x=[4, 8], n=3),
            _q("the second n", x=[4, 8], n=4),
            _q("a third n after a recompile", x=[4, 8], n=5, warm_up=({"x": [4, 8], "n": 3},)),
        )),
    Family(
        "sqrt_dim", "tests.harness.evaluation.fns:attn_scale", "attn_scale", True,
        build=(({"q": [2, 4, 8], "k": [2, 4, 8]},),), positional=2,
        doc="a size through math.sqrt and ** 0.5 (dynamic=True)",
        queries=(
            _q("another length", q=[2, 6, 8], k=[2, 6, 8]),
            _q("another head dim", q=[2, 4, 16], k=[2, 4, 16]),
            _q("q and k of other lengths", q=[2, 3, 8], k=[2, 5, 8]),
            _q("head dim 1", q=[2, 4, 1], k=[2, 4, 1]),
        )),
    Family(
        "kwonly_scale", "tests.harness.evaluation.fns:scaled", "scaled", None,
        build=(({"x": [4, 4]}, {"x": [4, 4], "scale": 2.0}),), positional=1,
        doc="keyword-only float and int parameters, left out and given (dynamic=None)",
        queries=(
            _q("both left out", x=[4, 4]),
            _q("scale as the second build call", x=[4, 4], scale=2.0),
            _q("a scale never built", x=[4, 4], scale=3.0),
            _q("shift given", x=[4, 4], shift=1),
            _q("the defaults given", x=[4, 4], scale=1.0, shift=0),
        )),
    Family(
        "module_attr", "tests.harness.evaluation.fns:scaler", "Scaler", None, model=True,
        build=(({"x": [4, 8]},),),
        doc="a module whose forward reads self.scale (float) and self.act (str), changed between calls",
        queries=(
            _q("as built", x=[4, 8]),
            _q("self.scale changed", x=[4, 8], **{"@set": {"scale": 3.0}}),
            _q("self.act changed", x=[4, 8], **{"@set": {"act": "tanh"}}),
            _q("self.scale changed after a call", x=[4, 8], warm_up=({"x": [4, 8]},), **{"@set": {"scale": 3.0}}),
        )),
    Family(
        "global_gain", "tests.harness.evaluation.fns:global_gain", "global_gain", None,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a module-level float global read by the function, changed before the call (dynamic=None)",
        queries=(
            _q("as built", x=[4, 8]),
            _q("the global changed", x=[4, 8], **{"@global": {"GAIN": 3.0}}),
        )),
    Family(
        "dict_batch", "tests.harness.evaluation.fns:dict_batch", "dict_batch", True,
        build=(({"batch": {"dict": {"x": [4, 8], "w": [8], "b": [4]}}},),), positional=1,
        doc="a dict of tensors as the argument (dynamic=True)",
        queries=(
            _q("another batch", batch={"dict": {"x": [6, 8], "w": [8], "b": [6]}}),
            _q("b broadcast from one element", batch={"dict": {"x": [6, 8], "w": [8], "b": [1]}}),
            _q("w of another dtype", batch={"dict": {"x": [6, 8], "w": _t([8], dtype="float64"), "b": [6]}}),
        )),
    Family(
        "nested_pair", "tests.harness.evaluation.fns:nested_pair", "nested_pair", None,
        build=(({"pair": {"tuple": [[4, 8], {"tuple": [[8, 3], [3]]}]}},),), positional=1,
        doc="a nested tuple of tensors (dynamic=None)",
        queries=(
            _q("as built", pair={"tuple": [[4, 8], {"tuple": [[8, 3], [3]]}]}),
            _q("another size", pair={"tuple": [[5, 8], {"tuple": [[8, 3], [3]]}]}),
            _q("another size after a recompile", pair={"tuple": [[5, 8], {"tuple": [[8, 3], [3]]}]},
               warm_up=({"pair": {"tuple": [[4, 8], {"tuple": [[8, 3], [3]]}]}},)),
        )),
    Family(
        "gpt2_lm", "tests.harness.evaluation.hf:gpt2", "GPT2LMHeadModel", True, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64")},),),
        doc="GPT-2 with learned positions, called longer, with a mask, with position ids (dynamic=True)",
        queries=(
            _q("longer, another batch", input_ids=_t([3, 12], dtype="int64")),
            _q("a mask given", input_ids=_t([2, 8], dtype="int64"), attention_mask=_t([2, 8], dtype="int64")),
            _q("position ids given", input_ids=_t([2, 8], dtype="int64"), position_ids=_t([2, 8], dtype="int64")),
            _q("one token", input_ids=_t([2, 1], dtype="int64")),
        )),
    Family(
        "bert_types", "tests.harness.evaluation.hf:bert", "BertModel", None, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64"), "token_type_ids": _t([2, 8], dtype="int64"),
                 "attention_mask": _t([2, 8], dtype="int64")},),),
        doc="BERT with token_type_ids and a mask, then without them (dynamic=None)",
        queries=(
            _q("as built", input_ids=_t([2, 8], dtype="int64"), token_type_ids=_t([2, 8], dtype="int64"),
               attention_mask=_t([2, 8], dtype="int64")),
            _q("token types left out", input_ids=_t([2, 8], dtype="int64"),
               attention_mask=_t([2, 8], dtype="int64")),
            _q("another length", input_ids=_t([2, 10], dtype="int64"), token_type_ids=_t([2, 10], dtype="int64"),
               attention_mask=_t([2, 10], dtype="int64")),
        )),
    Family(
        "qwen2_decoder", "tests.harness.evaluation.hf:qwen2", "Qwen2ForCausalLM", True, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64")},),),
        doc="a Qwen2 decoder (rotary positions, GQA), other lengths and a batch of 1 (dynamic=True)",
        queries=(
            _q("longer", input_ids=_t([2, 16], dtype="int64")),
            _q("batch 1", input_ids=_t([1, 8], dtype="int64")),
            _q("logits_to_keep=1", input_ids=_t([2, 8], dtype="int64"), logits_to_keep=1),
        )),
    Family(
        "bart_encdec", "tests.harness.evaluation.hf:bart", "BartModel", None, model=True,
        build=(({"input_ids": _t([2, 8], dtype="int64"), "decoder_input_ids": _t([2, 4], dtype="int64")},),),
        doc="BART, called with decoder ids and without them (shifted from the inputs) (dynamic=None)",
        queries=(
            _q("as built", input_ids=_t([2, 8], dtype="int64"), decoder_input_ids=_t([2, 4], dtype="int64")),
            _q("decoder ids left out", input_ids=_t([2, 8], dtype="int64")),
            _q("a longer decoder input", input_ids=_t([2, 8], dtype="int64"),
               decoder_input_ids=_t([2, 6], dtype="int64")),
        )),
]
