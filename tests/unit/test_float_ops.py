"""A float or None passed straight to clamp's bounds, or compared with a tensor, read off
the op that holds it by its place (fxcache_core/lookup/float_ops.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) for the
evaluation's ``clamp_bounds`` family (``clamp_range``, x [4, 8], built with lo=-1.0 and
hi at its default 1.0, dynamic=None) and ``where_fill`` (built with thresh=0); only the
file path is changed. What torch answers for such calls is the recorded corpus's
(tests/torch/test_containers.py, ``cfg_clamp``; tests/torch/test_scalar_arguments.py,
``fill_where``); here the reading of the graph is checked in-process.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.lookup.float_ops import float_op_provenance
from tests.synth import one_def, op_graph

FILE = "/src/fns.py"


def _graph(code: str, *ops: str, line: int = 2) -> str:
    return op_graph(FILE, line, code, ops, tensor="f32[4, 8][8, 1]cpu", returns="mul")


CLAMP = one_def("def clamp_range(x, lo=None, hi=1.0):\n    return torch.clamp(x, min=lo, max=hi) * 2\n")
CLAMP_GRAPH = _graph(
    "return torch.clamp(x, min=lo, max=hi) * 2",
    'clamp_min: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_min.default(arg0_1, -1.0);  arg0_1 = None',
    'clamp_max: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_max.default(clamp_min, 1.0);  clamp_min = None',
    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(clamp_max, 2);  clamp_max = None')


def _prov(fn: ast.FunctionDef, graph: str, param: str, **values: object):
    return float_op_provenance(fn, FILE, graph, param, values, frozenset({"x"}))


@pytest.mark.parametrize("param,values", [("lo", {"lo": -1.0}), ("hi", {"lo": -1.0}), ("hi", {"lo": -1.0, "hi": 1.0})])
def test_each_bound_is_its_own_op_and_the_build_values_are_the_same(param, values):
    got = _prov(CLAMP, CLAMP_GRAPH, param, **values)
    assert got is not None and got.status == "same", got
    assert got.why is not None and got.why.code == "float-op-same"


@pytest.mark.parametrize("param,values,have", [
    ("lo", {"lo": -0.5}, "-1.0"),
    ("lo", {}, "-1.0"),                       # lo left out: None, no clamp_min
    ("hi", {"lo": -1.0, "hi": None}, "1.0"),  # no clamp_max
    ("hi", {"lo": -1.0, "hi": 2.0}, "1.0"),
    ("lo", {"lo": 1.0, "hi": -1.0}, "-1.0"),  # swapped: the same two constants, each in the other op
])
def test_another_bound_or_none_is_another_graph(param, values, have):
    got = _prov(CLAMP, CLAMP_GRAPH, param, **values)
    assert got is not None and got.status == "differs", got
    assert got.why is not None and got.why.code == "float-op-differs" and f"has {have} there" in got.why


def test_an_int_bound_where_the_graph_holds_a_float_is_another_graph():
    got = _prov(CLAMP, CLAMP_GRAPH, "lo", lo=-1)
    assert got is not None and got.status == "differs", got


def test_a_call_whose_ops_are_not_known_leaves_the_bound_unknown():
    # F.hardtanh traces clamp ops of its own: the statement's clamp_min ops are not the bound's alone.
    fn = one_def("def f(x, lo=None):\n    return torch.clamp(x, min=lo) + F.hardtanh(x)\n")
    graph = _graph("return torch.clamp(x, min=lo) + F.hardtanh(x)",
                   'clamp_min: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_min.default(arg0_1, -1.0)',
                   'clamp_min_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_min.default(arg0_1, -1.0)',
                   'clamp_max: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_max.default(clamp_min_1, 1.0)',
                   'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(clamp_min, clamp_max)')
    got = _prov(fn, graph, "lo", lo=None)
    assert got is not None and got.status == "unknown" and got.why is not None and got.why.code == "float-op-unknown"


def test_an_elementwise_method_after_the_bound_traces_none_of_its_ops():
    # .sin() after the clamp traces aten.sin only; relu (whose backward masks) is still unknown.
    code = "return (x * 3).clamp(min=lo).sin()"
    fn = one_def("def f(x, lo=0.0):\n    " + code + "\n")
    graph = _graph(code,
                   'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 3)',
                   'clamp_min: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_min.default(mul, 0.5)',
                   'sin: "f32[4, 8][8, 1]cpu" = torch.ops.aten.sin.default(clamp_min)')
    assert _prov(fn, graph, "lo", lo=0.5).status == "same"
    assert _prov(fn, graph, "lo", lo=0.25).status == "differs"
    relu = code.replace("sin()", "relu()")
    got = _prov(one_def("def f(x, lo=0.0):\n    " + relu + "\n"), graph.replace(code, relu), "lo", lo=0.5)
    assert got is not None and got.status == "unknown"


@pytest.mark.parametrize("src", [
    "def f(x, lo=None):\n    return x * lo\n",                      # arithmetic: the float rule's
    "def f(x, lo=None):\n    return torch.clamp(x, min=helper(lo))\n",  # through a call
])
def test_a_read_that_is_no_op_argument_is_another_rules(src):
    assert _prov(one_def(src), CLAMP_GRAPH, "lo", lo=-1.0) is None


def test_a_bound_in_a_loop_is_unknown():
    fn = one_def("def f(x, lo=None):\n    for _ in range(2):\n        x = torch.clamp(x, min=lo)\n    return x\n")
    graph = _graph("x = torch.clamp(x, min=lo)",
                   'clamp_min: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_min.default(arg0_1, -1.0)', line=3)
    got = _prov(fn, graph, "lo", lo=-1.0)
    assert got is not None and got.status == "unknown"


WHERE = one_def("def where_fill(x, fill=0.0, thresh=0):\n    return torch.where(x > thresh, x, fill) * 2\n")
WHERE_GRAPH = _graph(
    "return torch.where(x > thresh, x, fill) * 2",
    'gt: "b8[4, 8][8, 1]cpu" = torch.ops.aten.gt.Scalar(arg0_1, 0)',
    'scalar_tensor: "f32[][]cpu" = torch.ops.aten.scalar_tensor.default(0.0, dtype = torch.float32, '
    "layout = torch.strided, device = device(type='cpu'))",
    'where: "f32[4, 8][8, 1]cpu" = torch.ops.aten.where.self(gt, arg0_1, scalar_tensor)',
    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(where, 2);  where = None')


@pytest.mark.parametrize("value,status", [(0.5, "differs"), (0.0, "differs"), (0, "same")])
def test_a_scalar_compared_with_a_tensor_is_the_comparisons_by_its_type_too(value, status):
    got = _prov(WHERE, WHERE_GRAPH, "thresh", thresh=value)
    assert got is not None and got.status == status, got


def test_a_scalar_on_the_left_of_a_comparison_is_the_reflected_op():
    fn = one_def("def f(x, thresh=0):\n    return torch.where(thresh < x, x, 0.0) * 2\n")
    graph = WHERE_GRAPH.replace("torch.where(x > thresh, x, fill)", "torch.where(thresh < x, x, 0.0)")
    got = _prov(fn, graph, "thresh", thresh=0)
    assert got is not None and got.status == "same", got


@pytest.mark.parametrize("src,code", [
    # The clamp may not run: its op's absence from the graph says nothing of lo.
    ("def f(x, lo=None, flag=True):\n    return (torch.clamp(x, min=lo) if flag else x) * 2\n",
     "return (torch.clamp(x, min=lo) if flag else x) * 2"),
    # A tensor bound traces other ops than clamp_min/clamp_max.
    ("def f(x, t, lo=None):\n    return torch.clamp(x, min=t, max=lo) * 2\n", "return torch.clamp(x, min=t, max=lo) * 2"),
    # clamp's backward compares too: beside a comparison the ge/le ops are not the sites' alone.
    ("def f(x, lo=None):\n    return torch.clamp(x, min=lo) * (x >= lo)\n", "return torch.clamp(x, min=lo) * (x >= lo)"),
    # Another statement on the same line traces its ops under the same comment.
    ("def f(x, lo=None):\n    y = torch.clamp(x, min=lo); z = x.clamp_min(0.0)\n    return y\n",
     "y = torch.clamp(x, min=lo); z = x.clamp_min(0.0)"),
])
def test_a_statement_whose_ops_may_not_be_the_sites_leaves_the_bound_unknown(src, code):
    graph = _graph(code, 'clamp_min: "f32[4, 8][8, 1]cpu" = torch.ops.aten.clamp_min.default(arg0_1, -1.0)',
                   'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(clamp_min, 2)')
    got = float_op_provenance(one_def(src), FILE, graph, "lo", {"lo": None}, frozenset({"x", "t"}))
    assert got is not None and got.status == "unknown", got


def _zero_graph(printed: str) -> str:
    return CLAMP_GRAPH.replace("clamp_min.default(arg0_1, -1.0)", f"clamp_min.default(arg0_1, {printed})")


@pytest.mark.parametrize("printed,value,status", [
    # torch prints a bound as repr does and keys the printed graph: -0.0 is another graph
    # than 0.0 though -0.0 == 0.0 (clamp_min(x, -0.0), printed by torch 2.13).
    ("0.0", -0.0, "differs"), ("-0.0", 0.0, "differs"), ("-0.0", -0.0, "same"), ("0.0", 0.0, "same"),
    # nan and inf print as FX's builtins (nan, inf, -inf); every nan prints nan, one graph.
    ("nan", float("nan"), "same"), ("nan", -float("nan"), "same"), ("nan", 0.0, "differs"),
    ("inf", float("inf"), "same"), ("-inf", -float("inf"), "same"), ("inf", -float("inf"), "differs"),
])
def test_a_bound_is_the_graphs_as_torch_prints_it_the_sign_of_zero_too(printed, value, status):
    got = _prov(CLAMP, _zero_graph(printed), "lo", lo=value, hi=1.0)
    assert got is not None and got.status == status, got


@pytest.mark.parametrize("printed,value,status", [("0.0", -0.0, "differs"), ("-0.0", -0.0, "same")])
def test_a_compared_scalars_sign_of_zero_is_the_graphs(printed, value, status):
    graph = WHERE_GRAPH.replace("gt.Scalar(arg0_1, 0)", f"gt.Scalar(arg0_1, {printed})")
    got = _prov(WHERE, graph, "thresh", thresh=value)
    assert got is not None and got.status == status, got
