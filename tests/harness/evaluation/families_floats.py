"""The float-input families: a Python float Dynamo makes a graph input (``dynamic=True``, or
after automatic dynamic saw it change), read through a helper's test, ``int()``,
``math.sqrt``, a ``while`` bound, a submodule, or plain arithmetic; and the calls after a
recompile that tensorified one. :mod:`tests.harness.evaluation.families` adds them to
``FAMILIES``; the comments say what each call exercises, not what torch answers. Nothing
here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q

_F = "tests.harness.evaluation.fns_floats:"
X = [4, 8]

FLOAT_FAMILIES: list[Family] = [
    Family(
        "fl_helper_gate",
        _F + "helper_gate",
        "helper_gate",
        True,
        build=(({"x": X},),),
        positional=1,
        doc="a float input tested in a helper (dynamic=True)",
        queries=(
            _q("eps=0.5: the same side", x=X, eps=0.5),
            _q("eps=-0.5: the other side", x=X, eps=-0.5),
        ),
    ),
    Family(
        "fl_int_scale",
        _F + "int_scale",
        "int_scale",
        True,
        build=(({"x": X},),),
        positional=1,
        doc="int(eps * 10) as a factor (dynamic=True)",
        queries=(
            _q("eps=0.29: the same int", x=X, eps=0.29),
            _q("eps=0.5: another int", x=X, eps=0.5),
        ),
    ),
    Family(
        "fl_sqrt_scale",
        _F + "sqrt_scale",
        "sqrt_scale",
        True,
        build=(({"x": X},),),
        positional=1,
        doc="math.sqrt(eps) as a factor (dynamic=True)",
        queries=(_q("eps=0.25: as built", x=X, eps=0.25), _q("eps=0.5", x=X, eps=0.5)),
    ),
    Family(
        "fl_while_steps",
        _F + "while_steps",
        "while_steps",
        True,
        build=(({"x": X},),),
        positional=1,
        doc="a float bounding a while loop (dynamic=True)",
        queries=(
            _q("eps=0.8: as many passes", x=X, eps=0.8),
            _q("eps=2.0: more passes", x=X, eps=2.0),
        ),
    ),
    Family(
        "fl_sub_shift",
        _F + "sub_shift",
        "sub_shift",
        True,
        build=(({"x": X},),),
        positional=1,
        doc="a float passed to a submodule that adds it (dynamic=True)",
        queries=(_q("eps=0.5", x=X, eps=0.5), _q("eps=-0.5", x=X, eps=-0.5)),
    ),
    Family(
        "fl_plain_dyn",
        _F + "plain_shift",
        "plain_shift",
        True,
        build=(({"x": X},),),
        positional=1,
        doc="a float only added (dynamic=True)",
        queries=(_q("eps=0.5", x=X, eps=0.5), _q("left out", x=X)),
    ),
    Family(
        "fl_plain_auto",
        _F + "plain_shift",
        "plain_shift",
        None,
        build=(({"x": X}, {"x": X, "eps": 0.5}),),
        positional=1,
        doc="a float only added, built with its default then 0.5 (automatic dynamic)",
        queries=(
            _q("eps=0.25: a first call", x=X, eps=0.25),
            _q("left out: a first call", x=X),
            _q("after the default: eps=0.25", warm_up=({"x": X},), x=X, eps=0.25),
        ),
    ),
    Family(
        "fl_sign_auto",
        _F + "sign_shift",
        "sign_shift",
        None,
        build=(({"x": X}, {"x": X, "eps": 0.5}),),
        positional=1,
        doc="a float tested then added, built with its default then 0.5 (automatic dynamic)",
        queries=(
            _q("after the default: eps=0.25", warm_up=({"x": X},), x=X, eps=0.25),
            _q("after the default: eps=-0.5", warm_up=({"x": X},), x=X, eps=-0.5),
        ),
    ),
]
