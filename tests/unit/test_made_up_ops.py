"""Whether other code of a function may make up the ops by which two sides of an if differ
(fxcache_core/lookup/made_up_ops.py), on source written here: the rule reads the function's
ast and the ops a key's graph shows each line made. tests/torch/test_made_up_and_params.py and
the evaluation's two_flags families check it against torch's lookups."""

from __future__ import annotations

import ast
import textwrap

import pytest

from fxcache_core.lookup.made_up_ops import may_make_up, op_name


def _fn(src: str) -> ast.FunctionDef:
    (fn,) = ast.parse(textwrap.dedent(src)).body
    assert isinstance(fn, ast.FunctionDef)
    return fn


def _test_line(fn: ast.FunctionDef, text: str) -> int:
    return next(n.lineno for n in ast.walk(fn) if isinstance(n, ast.If) and ast.unparse(n.test) == text)


TWO_FLAGS = """
def two_flags(x, a=False, b=False):
    y = x.sin()
    if a:
        y = y.relu()
    if b:
        y = y.relu()
    return y
"""

FLAGS = """
def flags(x, clip=False, act="relu", scale=None):
    y = x * 2
    if clip:
        y = y.clamp(0, 1)
    if act == "gelu":
        y = torch.nn.functional.gelu(y)
    else:
        y = torch.relu(y)
    if scale is not None:
        y = y * scale
    return y.sum(-1)
"""
# The ops the keys' graphs show the lines of flags made (clip's key: the clamp and gelu's; the
# defaults' key: relu's), as a graph prints them.
_FLAGS_SEEN = {5: ["torch.ops.aten.clamp.default"], 7: ["torch.ops.aten.gelu.default"],
               9: ["torch.ops.aten.relu.default"], 3: ["torch.ops.aten.mul.Tensor"],
               12: ["torch.ops.aten.sum.dim_IntList"]}


def test_an_op_name_is_the_graphs_target_without_namespace_and_overload():
    assert op_name("torch.ops.aten.relu.default") == "relu"
    assert op_name("torch.ops.aten.clamp_min.default") == "clamp_min"
    assert op_name("torch.ops.prims.convert_element_type.default") == "convert_element_type"


def test_another_if_whose_body_makes_the_same_op_may_make_it_up():
    fn = _fn(TWO_FLAGS)
    got = may_make_up(fn, _test_line(fn, "a"), ["torch.ops.aten.relu.default"], {})
    assert got is not None and got[0] == 7 and "y.relu" in got[1], got


def test_ops_nothing_else_can_make_are_not_made_up():
    fn = _fn(FLAGS)
    assert may_make_up(fn, _test_line(fn, "clip"), ["torch.ops.aten.clamp.default"], _FLAGS_SEEN) is None
    # gelu against relu: the other ifs make clamp and mul, neither of them
    assert may_make_up(fn, _test_line(fn, "act == 'gelu'"), ["gelu", "relu"], _FLAGS_SEEN) is None


def test_an_operator_on_a_side_that_may_run_makes_its_op():
    fn = _fn(FLAGS)
    got = may_make_up(fn, _test_line(fn, "clip"), ["torch.ops.aten.mul.Tensor"], _FLAGS_SEEN)
    assert got is not None and got[0] == 11, got  # y * scale under `if scale is not None:`


def test_straight_line_code_runs_once_either_way():
    fn = _fn("""
    def f(x, a=False):
        y = x.relu()
        if a:
            y = y.relu()
        return y.relu()
    """)
    assert may_make_up(fn, _test_line(fn, "a"), ["relu"], {}) is None


@pytest.mark.parametrize("src", [
    # a loop whose count the skipped side may change
    """
    def f(x, a=False):
        k = 1
        if a:
            x = x.relu()
            k = 0
        for _ in range(k):
            x = x.relu()
        return x
    """,
    # a conditional expression, and a comprehension
    """
    def f(x, a=False, b=False):
        if a:
            x = x.relu()
        return x.relu() if b else x
    """,
    """
    def f(xs, a=False):
        if a:
            xs = [x.relu() for x in xs]
        return [x.relu() for x in xs]
    """,
])
def test_a_loop_or_conditional_expression_may_make_it_up(src):
    fn = _fn(src)
    assert may_make_up(fn, _test_line(fn, "a"), ["relu"], {}) is not None


@pytest.mark.parametrize("call", ["helper(x)", "self.act(x)", "getattr(x, name)()"])
def test_a_call_of_code_whose_ops_the_cache_does_not_show_may_make_anything(call):
    fn = _fn(f"""
    def f(self, x, a=False, name='relu'):
        if a:
            x = x.relu()
        x = {call}
        return x
    """)
    got = may_make_up(fn, _test_line(fn, "a"), ["relu"], {})
    assert got is not None and "does not show" in got[1], got


def test_an_unseen_call_on_a_side_that_may_run_may_make_anything_but_a_leaf_op_only_its_own():
    fn = _fn("""
    def f(x, a=False, b=False):
        if a:
            x = x.relu()
        if b:
            x = torch.nn.functional.silu(x)
        return x
    """)
    assert may_make_up(fn, _test_line(fn, "a"), ["relu"], {}) is not None  # silu's ops are not shown
    assert may_make_up(fn, _test_line(fn, "a"), ["relu"], {6: ["torch.ops.aten.silu.default"]}) is None
    leaf = _fn("""
    def f(x, a=False, b=False):
        if a:
            x = x.relu()
        if b:
            x = x.sin()
        return x
    """)
    assert may_make_up(leaf, _test_line(leaf, "a"), ["relu"], {}) is None
    assert may_make_up(leaf, _test_line(leaf, "a"), ["sin"], {}) is not None


def test_a_straight_line_cast_may_make_up_a_cast_the_skipped_side_made():
    fn = _fn("""
    def f(x, a=False):
        if a:
            x = x.half()
        return x.half().sin()
    """)
    got = may_make_up(fn, _test_line(fn, "a"), ["torch.ops.prims.convert_element_type.default"], {})
    assert got is not None and got[0] == 5, got  # a=False: the return's .half() makes the cast
    assert may_make_up(fn, _test_line(fn, "a"), ["relu"], {}) is None


def test_an_if_the_call_and_the_key_agree_on_is_read_as_the_side_they_take():
    fn = _fn(FLAGS)
    gelu_ops = ["torch.ops.aten.mul.Tensor", "torch.ops.aten.erf.default", "relu"]  # gelu decomposed
    line = _test_line(fn, "act == 'gelu'")
    scale = _test_line(fn, "scale is not None")
    got = may_make_up(fn, line, gelu_ops, _FLAGS_SEEN)
    assert got is not None and got[0] == 11, got  # y * scale, were the call to give scale
    # scale None in the call, and the key's graph has no op from the body: neither runs it
    assert may_make_up(fn, line, gelu_ops, _FLAGS_SEEN, {scale: (False, False)}) is None
    # the call takes a side the key's graph has no op from: it may run there only
    two = _fn(TWO_FLAGS)
    b = _test_line(two, "b")
    assert may_make_up(two, _test_line(two, "a"), ["relu"], {}, {b: (True, False)}) is not None


MODES = """
def reduce_mode(x, mode="mean"):
    y = x * 2
    if mode == "mean":
        return y.mean(-1)
    if mode == "sum":
        return y.sum(-1)
    return y.amax(-1)
"""

SAME_AFTER = """
def early(x, flag=False):
    if flag:
        return x.sin()
    return x.sin()
"""


def _end(fn: ast.FunctionDef, line: int) -> int:
    return next(n.end_lineno for n in ast.walk(fn) if isinstance(n, ast.If) and n.lineno == line)


def test_code_after_a_body_that_returns_runs_in_one_trace_only():
    """The straight-line code after `if flag: return ...` is the skipping trace's side: it can
    make the body's op (one graph for flag=True and flag=False), read as varying code only
    where `after` says the body exits."""
    fn = _fn(SAME_AFTER)
    line = _test_line(fn, "flag")
    assert may_make_up(fn, line, ["torch.ops.aten.sin.default"], {}) is None  # read as code both run
    made = may_make_up(fn, line, ["torch.ops.aten.sin.default"], {}, after=_end(fn, line))
    assert made is not None and made[0] == line + 2, made


def test_a_returning_body_whose_op_no_later_code_makes_is_not_made_up():
    fn = _fn(MODES)
    line = _test_line(fn, "mode == 'mean'")
    assert may_make_up(fn, line, ["torch.ops.aten.mean.dim"], {}, after=_end(fn, line)) is None
    # the sum a later side makes is found for a body that made one
    made = may_make_up(fn, line, ["torch.ops.aten.sum.dim_IntList"], {}, after=_end(fn, line))
    assert made is not None and made[0] == line + 3, made
    # code before the if runs in both traces: the mul there does not make up a mul of the body
    assert may_make_up(fn, line, ["torch.ops.aten.mul.Tensor"], {}, after=_end(fn, line)) is None
