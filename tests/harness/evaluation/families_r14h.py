"""Evaluation families for two rules of ``match``: whether a tensor argument is an
``nn.Parameter`` (a static input of the graph, hashed into the FX key), and a flag whose
skipped body other code of the function may make up (FX's key is the ops, not their lines).
:mod:`tests.harness.evaluation.families` adds them; nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r14h:"
_TRAIN = {"@grad": True, "@backward": True}  # a training graph's AOTAutograd entry is saved once its backward ran


def _param(**more) -> dict:
    return _t([8, 8], param=True, **more)


def _plain(**more) -> dict:
    return _t([8, 8], param=False, **more)


R14H_FAMILIES: list[Family] = [
    Family(
        "param_built",
        _F + "param_mm",
        "param_mm",
        None,
        build=(({"x": [4, 8], "w": _param(), **_TRAIN},),),
        positional=2,
        doc="x @ w built with w an nn.Parameter (requires grad), called with a Parameter or a plain tensor",
        queries=(
            _q("w a Parameter, as built", x=[4, 8], w=_param(), **_TRAIN),
            _q("w a plain tensor", x=[4, 8], w=_plain(), **_TRAIN),
            _q("w a plain tensor that requires grad", x=[4, 8], w=_plain(rg=True), **_TRAIN),
            _q("w a Parameter without grad", x=[4, 8], w=_param(rg=False), **_TRAIN),
        ),
    ),
    Family(
        "param_nograd_built",
        _F + "param_mm",
        "param_mm",
        None,
        build=(({"x": [4, 8], "w": _param(rg=False), "@grad": True},),),
        positional=2,
        doc="x @ w built with w = nn.Parameter(..., requires_grad=False): only the static input differs",
        queries=(
            _q("w a Parameter without grad, as built", x=[4, 8], w=_param(rg=False), **{"@grad": True}),
            _q("w a plain tensor", x=[4, 8], w=_plain(rg=False), **{"@grad": True}),
        ),
    ),
    Family(
        "plain_built",
        _F + "param_mm",
        "param_mm",
        None,
        build=(({"x": [4, 8], "w": _plain(rg=True), **_TRAIN},),),
        positional=2,
        doc="x @ w built with w a plain tensor that requires grad, called with a Parameter",
        queries=(
            _q("w a plain tensor, as built", x=[4, 8], w=_plain(rg=True), **_TRAIN),
            _q("w a Parameter", x=[4, 8], w=_param(), **_TRAIN),
        ),
    ),
    Family(
        "flag_loop_auto",
        _F + "flag_loop",
        "flag_loop",
        None,
        build=(({"x": [4, 8], "a": True},),),
        positional=1,
        doc="a's body makes a relu that a loop makes when a is False; built with a=True",
        queries=(
            _q("a=False: the loop's relu", x=[4, 8], a=False),
            _q("a=True given", x=[4, 8], a=True),
        ),
    ),
    Family(
        "flag_helper_auto",
        _F + "flag_helper",
        "flag_helper",
        None,
        build=(({"x": [4, 8], "a": True},),),
        positional=1,
        doc="a's body makes a relu that a helper makes when b is True; built with a=True",
        queries=(
            _q("b=True: the helper's relu", x=[4, 8], b=True),
            _q("a=True, as built", x=[4, 8], a=True),
        ),
    ),
    Family(
        "two_flags_apart_auto",
        _F + "two_flags_apart",
        "two_flags_apart",
        None,
        build=(({"x": [4, 8]},), ({"x": [4, 8], "a": True},)),
        positional=1,
        doc="`if a:` adds a relu, `if b:` a cos; built with neither and with a",
        queries=(
            _q("b=True: cos, no relu", x=[4, 8], b=True),
            _q("a=True, as built", x=[4, 8], a=True),
        ),
    ),
]
