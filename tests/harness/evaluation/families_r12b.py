"""The twelfth round's later evaluation families (R12D: :mod:`tests.harness.evaluation.families_r12`
re-exports them): a flag's two values asked after a recompile, a marked range under dynamic=False,
stated Dynamo and torch.compile settings, no-op sides of a str or bool test, an optional tensor
multiplied in a loop, behind a size test, given as a float or read only for metadata,
``min``/``max`` of a float and an int, an early return, a helper, values equal under ``==`` of
another type, a rebound str, and a flag-forced recompile beside another process's dynamic key.
The comments say what each call exercises, not what torch answers. Nothing here imports torch."""

from __future__ import annotations

from tests.harness.evaluation.family import Family
from tests.harness.evaluation.family import q as _q
from tests.harness.evaluation.family import t as _t

_F = "tests.harness.evaluation.fns_r12:"

_MX = {"t": [8, 8], "mark": [0], "min": 2, "max": 64}

R12D_FAMILIES: list[Family] = [
    Family(
        "closure_gate_two_auto",
        _F + "closure_gate",
        "closure_gate",
        None,
        build=(({"x": [4, 8]}, {"x": [4, 8], "gate": False}),),
        positional=1,
        doc="a bool read in a nested function, both values built in one process, one size (dynamic=None)",
        queries=(
            _q("gate=False, a fresh process", x=[4, 8], gate=False),
            _q("gate=False after gate=True", x=[4, 8], gate=False, warm_up=({"x": [4, 8]},)),
            _q("another batch after gate=True", x=[6, 8], warm_up=({"x": [4, 8]},)),
            _q(
                "another batch after both gates",
                x=[6, 8],
                gate=False,
                warm_up=({"x": [4, 8]}, {"x": [4, 8], "gate": False}),
            ),
        ),
    ),
    Family(
        "marked_static_off",
        _F + "lin",
        "lin",
        False,
        build=(({"x": _MX, "w": [8, 8]},),),
        positional=2,
        doc="x's dim 0 marked dynamic in [2, 64] under dynamic=False",
        queries=(
            _q("marked alike, another batch", x={**_MX, "t": [16, 8]}, w=[8, 8]),
            _q("not marked, another batch", x=[16, 8], w=[8, 8]),
            _q("not marked, the built batch", x=[8, 8], w=[8, 8]),
            _q("marked without a range", x={"t": [16, 8], "mark": [0]}, w=[8, 8]),
        ),
    ),
]

_NOSTATIC = {"@dynamo": {"assume_static_by_default": False}}
_NOAUTO = {"@dynamo": {"automatic_dynamic_shapes": False}}

# Dynamo and torch.compile settings a call states (each process takes its first call's);
# wired in with R12D_FAMILIES.
R12D_FAMILIES += [
    Family(
        "no_static_default",
        _F + "lin",
        "lin",
        None,
        build=(({"x": [4, 8], "w": [8, 8], **_NOSTATIC},),),
        positional=2,
        doc="assume_static_by_default=False: dynamic=None traces sizes as symbols from the first call",
        queries=(
            _q("another batch, the setting stated", x=[6, 8], w=[8, 8], **_NOSTATIC),
            _q("as built, the setting stated", x=[4, 8], w=[8, 8], **_NOSTATIC),
            _q("another batch, the setting left at its default", x=[6, 8], w=[8, 8]),
        ),
    ),
    Family(
        "no_auto_two_static",
        _F + "lin",
        "lin",
        None,
        build=(({"x": [4, 8], "w": [8, 8], **_NOAUTO}, {"x": [6, 8], "w": [8, 8], **_NOAUTO}),),
        positional=2,
        doc="automatic_dynamic_shapes=False: two static batches built in one process (dynamic=None)",
        queries=(
            _q(
                "the second batch after the first",
                x=[6, 8],
                w=[8, 8],
                warm_up=({"x": [4, 8], "w": [8, 8], **_NOAUTO},),
                **_NOAUTO,
            ),
            _q(
                "a third batch after the first",
                x=[8, 8],
                w=[8, 8],
                warm_up=({"x": [4, 8], "w": [8, 8], **_NOAUTO},),
                **_NOAUTO,
            ),
            _q("the second batch, a fresh process", x=[6, 8], w=[8, 8], **_NOAUTO),
        ),
    ),
    Family(
        "fullgraph_lin",
        _F + "lin",
        "lin",
        None,
        build=(({"x": [4, 8], "w": [8, 8]},),),
        positional=2,
        doc="compiled plainly; asked with fullgraph=True and with an Inductor setting (dynamic=None)",
        queries=(
            _q("fullgraph=True", x=[4, 8], w=[8, 8], **{"@compile": {"fullgraph": True}}),
            _q(
                "an Inductor setting changed",
                x=[4, 8],
                w=[8, 8],
                **{"@inductor": {"fallback_random": True}},
            ),
            _q("as built", x=[4, 8], w=[8, 8]),
        ),
    ),
]

# Aimed at rules that read a key's ops as proof of the value a flag or an optional
# tensor had: sides that differ only by ops Inductor drops, a loop, a size test, a
# float or None for a tensor parameter, an int where a float was, an early return, a helper.
R12D_FAMILIES += [
    Family(
        "mode_noop_auto",
        _F + "mode_noop",
        "mode_noop",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="mode 'a': relu; else relu * 1.0; mode 'b' when built (dynamic=None)",
        queries=(
            _q("mode 'a'", x=[4, 8], mode="a"),
            _q("mode 'b' given", x=[4, 8], mode="b"),
            _q("mode 'c', the same side as built", x=[4, 8], mode="c"),
        ),
    ),
    Family(
        "mode_noop_line_auto",
        _F + "mode_noop_line",
        "mode_noop_line",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="relu if mode == 'a' else relu * 1.0 on one line, mode 'b' when built (dynamic=None)",
        queries=(
            _q("mode 'a'", x=[4, 8], mode="a"),
            _q("mode 'b' given", x=[4, 8], mode="b"),
        ),
    ),
    Family(
        "mode_noop_a_auto",
        _F + "mode_noop",
        "mode_noop",
        None,
        build=(({"x": [4, 8], "mode": "a"},),),
        positional=1,
        doc="mode 'a': relu; else relu * 1.0; mode 'a' when built (dynamic=None)",
        queries=(
            _q("mode 'a' given", x=[4, 8], mode="a"),
            _q("mode left out ('b')", x=[4, 8]),
        ),
    ),
    Family(
        "flag_noop_auto",
        _F + "flag_noop",
        "flag_noop",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="cos, then + 0.0 when flag; flag True when built (dynamic=None)",
        queries=(
            _q("flag=False", x=[4, 8], flag=False),
            _q("flag=True given", x=[4, 8], flag=True),
        ),
    ),
    Family(
        "loop_opt_auto",
        _F + "loop_opt",
        "loop_opt",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an optional tensor multiplied in k times, left out when built (dynamic=None)",
        queries=(
            _q("p given, k=0", x=[4, 8], p=[8], k=0),
            _q("p given, k left at 1", x=[4, 8], p=[8]),
            _q("p given, k=2", x=[4, 8], p=[8], k=2),
        ),
    ),
    Family(
        "nested_opt_auto",
        _F + "nested_opt",
        "nested_opt",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an optional tensor read only when x is wider than 8, left out when built (dynamic=None)",
        queries=(
            _q("p given, x 8 wide", x=[4, 8], p=[8]),
            _q("p given, x 16 wide", x=[4, 16], p=[16]),
            _q("p=None given", x=[4, 8], p=None),
        ),
    ),
    Family(
        "opt_mult_float_auto",
        _F + "opt_mult",
        "opt_mult",
        None,
        build=(({"x": [4, 8], "p": 1.0},),),
        positional=1,
        doc="x * p when p is not None: the float 1.0 when built (dynamic=None)",
        queries=(
            _q("p left out", x=[4, 8]),
            _q("p 1.0, as built", x=[4, 8], p=1.0),
            _q("a tensor p", x=[4, 8], p=[8]),
            _q("p True", x=[4, 8], p=True),
        ),
    ),
    Family(
        "opt_mult_none_auto",
        _F + "opt_mult",
        "opt_mult",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="x * p when p is not None: left out when built (dynamic=None)",
        queries=(
            _q("p 1.0", x=[4, 8], p=1.0),
            _q("a tensor p", x=[4, 8], p=[8]),
            _q("p None given", x=[4, 8], p=None),
        ),
    ),
    Family(
        "min_int_auto",
        _F + "min_int",
        "min_int",
        None,
        build=(({"x": [4, 8], "t": 2.0},),),
        positional=1,
        doc="x + min(t, 1): the int 1 when built with t=2.0 (dynamic=None)",
        queries=(
            _q("t 1.0: min gives the float", x=[4, 8], t=1.0),
            _q("t 3.0: min gives the int again", x=[4, 8], t=3.0),
            _q("t 0.5", x=[4, 8], t=0.5),
            _q("t left out (1.0)", x=[4, 8]),
        ),
    ),
    Family(
        "early_opt_auto",
        _F + "early_opt",
        "early_opt",
        None,
        build=(({"x": [1, 8]}, {"x": [4, 8]}),),
        positional=1,
        doc="an early return when x has one row, before an optional tensor is read (dynamic=None)",
        queries=(
            _q("one row, p given", x=[1, 8], p=[8]),
            _q("four rows, p given", x=[4, 8], p=[8]),
            _q("one row, p left out", x=[1, 8]),
        ),
    ),
    Family(
        "helper_opt_auto",
        _F + "helper_opt",
        "helper_opt",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="an optional tensor read in a helper, left out when built (dynamic=None)",
        queries=(
            _q("p given", x=[4, 8], p=[8]),
            _q("p None given", x=[4, 8], p=None),
        ),
    ),
]

# Values equal under == but of another type, truthy ints, a lowered str: a side proven by
# the key's ops taken by a value of another type or spelling.
R12D_FAMILIES += [
    Family(
        "eq_int_mode_auto",
        _F + "eq_int_mode",
        "eq_int_mode",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if mode == 2:` then y * mode, mode the float 2.0 when built (dynamic=None)",
        queries=(
            _q("mode the int 2", x=[4, 8], mode=2),
            _q("mode 2.0 given", x=[4, 8], mode=2.0),
            _q("mode 3.0", x=[4, 8], mode=3.0),
        ),
    ),
    Family(
        "truthy_flag_auto",
        _F + "truthy_flag",
        "truthy_flag",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="`if flag:` then y + flag, flag the int 1 when built (dynamic=None)",
        queries=(
            _q("flag True", x=[4, 8], flag=True),
            _q("flag 1 given", x=[4, 8], flag=1),
            _q("flag 2, truthy too", x=[4, 8], flag=2),
        ),
    ),
    Family(
        "lower_mode_auto",
        _F + "lower_mode",
        "lower_mode",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="how.lower() == 'l2', how 'L2' when built (dynamic=None)",
        queries=(
            _q("how 'l2'", x=[4, 8], how="l2"),
            _q("how 'L2' given", x=[4, 8], how="L2"),
            _q("how 'max'", x=[4, 8], how="max"),
        ),
    ),
]

# An optional tensor read only for metadata, max(t, 0) giving an int or a float, a str
# parameter rebound before the test that picks the ops.
R12D_FAMILIES += [
    Family(
        "meta_opt_auto",
        _F + "meta_opt",
        "meta_opt",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="p.ndimension() and p.is_floating_point() when p is given, left out when built (dynamic=None)",
        queries=(
            _q("a 1-d float p: the same constants", x=[4, 8], p=[8]),
            _q("a 2-d p", x=[4, 8], p=[4, 8]),
            _q("an int64 p", x=[4, 8], p=_t([8], dtype="int64")),
        ),
    ),
    Family(
        "max_zero_auto",
        _F + "max_zero",
        "max_zero",
        None,
        build=(({"x": [4, 8], "t": -0.5},),),
        positional=1,
        doc="x + max(t, 0): the int 0 when built with t=-0.5 (dynamic=None)",
        queries=(
            _q("t -1.0: max gives the int again", x=[4, 8], t=-1.0),
            _q("t 0.0: max gives the float", x=[4, 8], t=0.0),
            _q("t left out (0.5)", x=[4, 8]),
        ),
    ),
    Family(
        "swap_mode_auto",
        _F + "swap_mode",
        "swap_mode",
        None,
        build=(({"x": [4, 8]},),),
        positional=1,
        doc="how rebound ('max' -> 'l2', else 'max') before `if how == 'l2'`, 'max' when built (dynamic=None)",
        queries=(
            _q("how 'l2'", x=[4, 8], how="l2"),
            _q("how 'max' given", x=[4, 8], how="max"),
            _q("how 'sum'", x=[4, 8], how="sum"),
        ),
    ),
]

# After a recompile that a flag forced, where another key of the function has a symbol
# from another process's size change.
R12D_FAMILIES += [
    Family(
        "gate_ops_mixed",
        _F + "gate_ops",
        "gate_ops",
        None,
        build=(({"x": [4, 8]}, {"x": [6, 8]}), ({"x": [4, 8], "flag": False},)),
        positional=1,
        doc="flag True: static [4,8] and dynamic batch keys (one process); flag False: static [4,8] (another)",
        queries=(
            _q(
                "flag=False after flag True, the same size",
                x=[4, 8],
                flag=False,
                warm_up=({"x": [4, 8]},),
            ),
            _q("flag=False, a fresh process", x=[4, 8], flag=False),
            _q(
                "flag=False, another batch after flag True",
                x=[6, 8],
                flag=False,
                warm_up=({"x": [4, 8]},),
            ),
            _q("flag True, another batch after the first", x=[5, 8], warm_up=({"x": [4, 8]},)),
        ),
    ),
]

# A rebound tensor dropped by a later return on a size.
R12D_FAMILIES += [
    Family(
        "size_ret_opt_auto",
        _F + "size_ret_opt",
        "size_ret_opt",
        None,
        build=(({"x": [1, 8]},),),
        positional=1,
        doc="x = x * w when w is given, then zeros(3) when x has one row; w left out when built (dynamic=None)",
        queries=(
            _q("one row, w given", x=[1, 8], w=[8]),
            _q("one row, w None given", x=[1, 8], w=None),
        ),
    ),
]
