"""Evaluation families on the global state and settings a call runs under, beyond the grad
mode: autocast, inference mode, the default dtype, a training step then eval calls,
``torch.compile``'s mode and ``fullgraph``, and Dynamo and Inductor config values changed
between the build and the call (:mod:`tests.harness.evaluation.calls` says how each is
set and described). :mod:`tests.harness.evaluation.families` adds them to ``FAMILIES``;
the comments say what each call exercises, not what torch answers. Nothing here imports
torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_BF16 = {"@autocast": "bfloat16"}
_NO_AUTOCAST = {"@autocast": None}

STATE_FAMILIES: list[Family] = [
    Family(
        "autocast_built", "tests.harness.evaluation.fns:gelu_mix", "gelu_mix", None,
        build=(({"x": [4, 8], "w": [8, 8], **_BF16},),), positional=2,
        doc="a matmul built under torch.autocast('cpu', bfloat16), called with and without it (dynamic=None)",
        queries=(
            _q("as built, under autocast", x=[4, 8], w=[8, 8], **_BF16),
            _q("without autocast", x=[4, 8], w=[8, 8], **_NO_AUTOCAST),
            _q("without autocast, another size", x=[6, 8], w=[8, 8], **_NO_AUTOCAST),
        )),
    Family(
        "autocast_call", "tests.harness.evaluation.fns:row_norm", "row_norm", True,
        build=(({"x": [6, 4]},),), positional=1,
        doc="a reduction built without autocast, called under torch.autocast('cpu', bfloat16) (dynamic=True)",
        queries=(
            _q("without autocast, another size", x=[5, 4], **_NO_AUTOCAST),
            _q("under autocast", x=[6, 4], **_BF16),
            _q("under autocast, another size", x=[5, 4], **_BF16),
        )),
    Family(
        "inference_mode", "tests.harness.evaluation.fns:gelu_mix", "gelu_mix", None,
        build=(({"x": [4, 8], "w": [8, 8], "@inference": True},),), positional=2,
        doc="built under torch.inference_mode(), called under no_grad, inference mode and grad (dynamic=None)",
        queries=(
            _q("as built, inference mode", x=[4, 8], w=[8, 8], **{"@inference": True}),
            _q("under no_grad", x=[4, 8], w=[8, 8], **{"@inference": False}),
            _q("grad enabled", x=[4, 8], w=[8, 8], **{"@inference": False, "@grad": True}),
        ), states_grad=True),
    Family(
        "default_f64", "tests.harness.evaluation.fns:ones_bias", "ones_bias", None,
        build=(({"x": [4, 8]},),), positional=1,
        doc="a factory without a dtype, built under the float32 default, called under set_default_dtype(float64) "
            "(dynamic=None)",
        queries=(
            _q("as built, the default said", x=[4, 8], **{"@default_dtype": "float32"}),
            _q("default float64", x=[4, 8], **{"@default_dtype": "float64"}),
            _q("default float64, a float64 input", x=_t([4, 8], dtype="float64"), **{"@default_dtype": "float64"}),
        )),
    Family(
        "train_then_eval", "tests.harness.evaluation.fns:tiny_mlp", "TinyMlp", None, model=True,
        build=(({"x": [4, 8], "@train": True, "@grad": True, "@backward": True},),),
        doc="a module's training step (forward and backward, parameters requiring grad), then eval calls",
        queries=(
            _q("eval under no_grad", x=[4, 8], **{"@inference": False}),
            _q("eval under inference mode", x=[4, 8], **{"@inference": True}),
            _q("a training step as built", x=[4, 8], **{"@train": True, "@grad": True, "@backward": True,
                                                        "@inference": False}),
            _q("eval with grad enabled", x=[4, 8], **{"@grad": True, "@inference": False}),
        ), states_grad=True),
    Family(
        "compile_mode", "tests.harness.evaluation.fns:row_norm", "row_norm", None,
        build=(({"x": [6, 4], "@compile": {"mode": "max-autotune-no-cudagraphs"}},),), positional=1,
        doc="built under mode='max-autotune-no-cudagraphs', called under the default mode and fullgraph=True "
            "(dynamic=None)",
        queries=(
            _q("the same mode", x=[6, 4], **{"@compile": {"mode": "max-autotune-no-cudagraphs"}}),
            _q("the default mode", x=[6, 4], **{"@compile": {"mode": "default"}}),
            _q("the same mode, fullgraph=True", x=[6, 4],
               **{"@compile": {"mode": "max-autotune-no-cudagraphs", "fullgraph": True}}),
        )),
    Family(
        "dynamo_config", "tests.harness.evaluation.fns:inv_scale", "inv_scale", None,
        build=(({"x": [4, 8], "scale": 2.0}, {"x": [6, 8], "scale": 2.0}),), positional=1,
        doc="a float argument and automatic dynamic, called with Dynamo's config changed (dynamic=None)",
        queries=(
            _q("as built", x=[6, 8], scale=2.0, **{"@dynamo": {"specialize_float": False}}),
            _q("specialize_float=True", x=[4, 8], scale=2.0, **{"@dynamo": {"specialize_float": True}}),
            _q("automatic_dynamic_shapes=False after a recompile", x=[6, 8], scale=2.0,
               **{"@dynamo": {"automatic_dynamic_shapes": False}}, warm_up=({"x": [4, 8], "scale": 2.0, "@dynamo": {"automatic_dynamic_shapes": False}},)),
            _q("assume_static_by_default=False", x=[5, 8], scale=2.0,
               **{"@dynamo": {"assume_static_by_default": False}}),
        )),
    Family(
        "inductor_freezing", "tests.harness.evaluation.fns:tiny_mlp", "TinyMlp", None, model=True,
        build=(({"x": [4, 8]},),),
        doc="a module built under no_grad, called with torch._inductor.config.freezing=True and back",
        queries=(
            _q("freezing=True", x=[4, 8], **{"@inductor": {"freezing": True}}),
            _q("freezing=False, as built", x=[4, 8], **{"@inductor": {"freezing": False}}),
        )),
]
