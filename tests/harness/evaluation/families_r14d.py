"""A round aimed at the ordering branch rule: a parameter ordered against a number in an
``if`` (``if t > 0.5:``, ``if 0 < p:``, an elif chain of orderings) under each mode, on the
boundary, after a recompile, with sides one constant apart, with a body that makes no op,
and with the parameter also used elsewhere. :mod:`tests.harness.evaluation.families` adds
them; nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q

_F = "tests.harness.evaluation.fns_r14d:"

R14D_FAMILIES: list[Family] = [
    Family(
        "gate_above_auto",
        _F + "gate_above",
        "gate_above",
        None,
        build=(({"x": [4, 8], "t": 0.7},),),
        positional=1,
        doc="a float read only in `if t > 0.5:`, 0.7 when built (dynamic=None)",
        queries=(
            _q("t above", x=[4, 8], t=0.9),
            _q("t on the boundary", x=[4, 8], t=0.5),
            _q("t below", x=[4, 8], t=0.2),
            _q("t an int above", x=[4, 8], t=1),
            _q("t left out (0.7)", x=[4, 8]),
            _q("t above after another t", x=[4, 8], t=0.9, warm_up=({"x": [4, 8], "t": 0.8},)),
        ),
    ),
    Family(
        "gate_above_dyn",
        _F + "gate_above",
        "gate_above",
        True,
        build=(({"x": [4, 8], "t": 0.7},),),
        positional=1,
        doc="a float read only in `if t > 0.5:`, 0.7 when built (dynamic=True)",
        queries=(
            _q("t above", x=[4, 8], t=0.9),
            _q("t below", x=[4, 8], t=0.2),
            _q("t above, another batch", x=[6, 8], t=2.0),
        ),
    ),
    Family(
        "count_at_least_dyn",
        _F + "count_at_least",
        "count_at_least",
        True,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="an int read only in `if n >= 2:`, 3 when built (dynamic=True)",
        queries=(
            _q("n above", x=[4, 8], n=5),
            _q("n on the boundary", x=[4, 8], n=2),
            _q("n 1: the else side", x=[4, 8], n=1),
            _q("n 0", x=[4, 8], n=0),
            _q("n left out (3)", x=[6, 8]),
        ),
    ),
    Family(
        "count_at_least_auto",
        _F + "count_at_least",
        "count_at_least",
        None,
        build=(({"x": [4, 8], "n": 3},),),
        positional=1,
        doc="an int read only in `if n >= 2:`, 3 when built (dynamic=None)",
        queries=(
            _q("n above", x=[4, 8], n=7),
            _q("n 1: the else side", x=[4, 8], n=1),
            _q("n above after n=3", x=[4, 8], n=5, warm_up=({"x": [4, 8], "n": 3},)),
            _q("n above after n=4", x=[4, 8], n=5, warm_up=({"x": [4, 8], "n": 4},)),
        ),
    ),
    Family(
        "left_literal_auto",
        _F + "left_literal",
        "left_literal",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if 0 < p:`, p left at 0.1 when built (dynamic=None)",
        queries=(
            _q("p 2.0", x=[4, 8], p=2.0),
            _q("p 0.0", x=[4, 8], p=0.0),
            _q("p -0.0", x=[4, 8], p=-0.0),
            _q("p -3", x=[4, 8], p=-3),
        ),
    ),
    Family(
        "band_auto",
        _F + "band",
        "band",
        None,
        build=(({"x": [4, 8]},), ({"x": [4, 8], "t": 2.0},)),
        positional=1,
        doc="an elif chain of orderings, built with t left at 0.5 and with 2.0 (dynamic=None)",
        queries=(
            _q("t 0.9: the middle side", x=[4, 8], t=0.9),
            _q("t 1.0: the else side", x=[4, 8], t=1.0),
            _q("t 5: the else side", x=[4, 8], t=5),
            _q("t -1.0: the first side", x=[4, 8], t=-1.0),
            _q("t 0", x=[4, 8], t=0),
        ),
    ),
    Family(
        "scale_side_auto",
        _F + "scale_side",
        "scale_side",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if s > 1.0:` sides that differ only in a constant, s left at 2.0 (dynamic=None)",
        queries=(
            _q("s 1.5", x=[4, 8], s=1.5),
            _q("s 1.0: the else side", x=[4, 8], s=1.0),
            _q("s 0.5: the else side", x=[4, 8], s=0.5),
        ),
    ),
    Family(
        "used_too_auto",
        _F + "used_too",
        "used_too",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an int ordered in `if n > 2:` and multiplied in, left at 3 (dynamic=None)",
        queries=(
            _q("n 4", x=[4, 8], n=4),
            _q("n 3 given", x=[4, 8], n=3),
            _q("n 1", x=[4, 8], n=1),
        ),
    ),
    Family(
        "no_op_side_auto",
        _F + "no_op_side",
        "no_op_side",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if t > 0.5:` whose body makes no op, t left at 1.0 (dynamic=None)",
        queries=(
            _q("t 0.2", x=[4, 8], t=0.2),
            _q("t 2.0", x=[4, 8], t=2.0),
        ),
    ),
    Family(
        "drop_rate_auto",
        _F + "drop_rate",
        "drop_rate",
        None,
        build=(({"x": [4, 8]},), ({"x": [4, 8], "p": 0.1},)),
        positional=1,
        doc="`if p > 0.0:` scales, built with p left at 0.0 and with 0.1 (dynamic=None)",
        queries=(
            _q("p 0.3", x=[4, 8], p=0.3),
            _q("p 0.0 given", x=[4, 8], p=0.0),
            _q("p -0.0", x=[4, 8], p=-0.0),
            _q("p left out", x=[6, 8]),
        ),
    ),
    Family(
        "early_same_auto",
        _F + "early_same",
        "early_same",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if t > 0.5: return x.sin()` then `return x.sin()`, t left at 1.0 (dynamic=None)",
        queries=(
            _q("t 0.2: the code after the if, the same ops", x=[4, 8], t=0.2),
            _q("t 2.0", x=[4, 8], t=2.0),
        ),
    ),
    Family(
        "early_flag_same_auto",
        _F + "early_flag_same",
        "early_flag_same",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if flag: return x.sin()` then `return x.sin()`, flag left at True (dynamic=None)",
        queries=(
            _q("flag False: the code after the if, the same ops", x=[4, 8], flag=False),
        ),
    ),
]
