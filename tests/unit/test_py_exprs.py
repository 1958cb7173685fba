"""The value Python gives a pure expression of a call's scalars (fxcache_core/lookup/py_exprs.py),
and the reads of a baked int or float through builtins, conditionals and sizes the key fixes
(fxcache_core/lookup/int_exprs.py, float_exprs.py, float_branches.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) for the evaluation's
functions ``min_len``, ``wrap_cols``, ``floor_scale`` and ``eps_gate``
(tests/harness/evaluation/fns_r6.py), each compiled once under ``dynamic=None`` with the
family's build call; only the file path is changed. What torch answers for other calls is
recorded in fresh processes (tests/torch/test_py_exprs_oracle.py); here the reading is checked
in-process.
"""

from __future__ import annotations

import ast
import math

import pytest

from fxcache_core.lookup.float_exprs import float_provenance
from fxcache_core.lookup.int_exprs import value_provenance
from fxcache_core.lookup.py_exprs import compute, is_pure, size_name, size_names, truth
from fxcache_core.lookup.py_names import call_values, shadowed, shadowing
from tests.synth import one_def, op_graph

FILE = "/src/fns.py"
X48 = size_names("x", (4, 8))


@pytest.mark.parametrize(
    ("expr", "values", "want"),
    [
        ("min(n, x.shape[1])", {"n": 100, **X48}, 8),
        ("min(n, x.size(1))", {"n": 6, **X48}, 6),
        ("max(s, 0.5)", {"s": 0.1}, 0.5),
        ("max(s, 0.5)", {"s": 0.7}, 0.7),
        ("abs(k)", {"k": -2}, 2),
        ("n if n > 0 else x.shape[1] + n", {"n": -2, **X48}, 6),
        ("n if n > 0 else x.shape[-1] + n", {"n": 6, **X48}, 6),
        ("int(s * 10)", {"s": 0.35}, 3),
        ("round(s, 2)", {"s": 0.125}, 0.12),  # Python's rounding, half to even in binary
        ("round(2.5)", {}, 2),
        ("math.floor(s * n)", {"s": 0.5, "n": 5}, 2),
        ("math.ceil(s)", {"s": 1.2}, 2),
        ("math.sqrt(d)", {"d": 16}, 4.0),
        ("float(n)", {"n": 3}, 3.0),
        ("len(x) * 2", X48, 8),
        ("x.size()[0] + 1", X48, 5),
        ("(n > 2 and 3) or 4", {"n": 1}, 4),
        ("math.pi * s", {"s": 2.0}, math.pi * 2.0),
    ],
)
def test_a_builtin_conditional_or_size_is_computed_as_python_computes_it(expr, values, want):
    got = compute(expr, values)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(
    ("expr", "values"),
    [
        ("min(n, x.shape[1])", {"n": 4}),  # a size the key does not fix (symbolic): not given
        ("max(n)", {"n": 4}),  # one argument: an iterable
        ("max(n, 2, key=abs)", {"n": 4}),
        ("max(n, 2)", {"n": 4, "max": 1}),  # a parameter called max is not the builtin
        ("math.sqrt(n)", {"n": -1}),  # Python raises
        ("math.log(n)", {"n": 3}),
        ("helper(n)", {"n": 3}),
        ("x.shape[n]", {"n": 1, **X48}),
        ("n > 2", {"n": 4}),  # a bool is not a value an op takes here
    ],
)
def test_what_is_outside_the_whitelist_is_not_computed(expr, values):
    assert compute(expr, values) is None


def test_a_test_is_true_as_python_takes_it():
    assert truth("eps > 0", {"eps": 1e-5}) is True
    assert truth("eps > 0", {"eps": 0.0}) is False
    assert truth("eps", {"eps": -1.0}) is True
    assert truth("0 < n < x.shape[1]", {"n": 8, **X48}) is False
    assert truth("eps > helper()", {"eps": 1.0}) is None


def test_sizes_are_named_by_index_either_way():
    assert size_names("x", (4, 8)) == {
        "x.shape[0]": 4,
        "x.shape[-2]": 4,
        "x.shape[1]": 8,
        "x.shape[-1]": 8,
    }
    assert size_names("x", (4, 8), frozenset({0})) == {"x.shape[0]": 4, "x.shape[-2]": 4}
    for text in ("x.shape[-1]", "x.size(-1)", "x.size()[-1]"):
        assert size_name(ast.parse(text, mode="eval").body) == "x.shape[-1]"
    assert size_name(ast.parse("x.shape[i]", mode="eval").body) is None
    assert is_pure(ast.parse("min(n, x.shape[1])", mode="eval").body, {"n": 1, **X48})
    assert not is_pure(ast.parse("min(n, x.shape[1])", mode="eval").body, {"n": 1})


def _graph(line: int, code: str, *ops: str) -> str:
    return op_graph(FILE, line, code, ops, tensor="f32[4, 8][8, 1]cpu", returns="mul")


MIN_LEN = one_def("def min_len(x, n):\n    m = min(n, x.shape[1])\n    return x[:, :m] * 2\n")
MIN_LEN_100 = _graph(
    3,
    "return x[:, :m] * 2",
    'alias: "f32[4, 8][8, 1]cpu" = torch.ops.aten.alias.default(arg0_1);  arg0_1 = None',
    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(alias, 2);  alias = None',
)
WRAP = one_def(
    "def wrap_cols(x, n):\n    k = n if n > 0 else x.shape[1] + n\n    return x[:, :k] * 3\n"
)
WRAP_M2 = _graph(
    3,
    "return x[:, :k] * 3",
    'slice_1: "f32[4, 6][8, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, 0, 6);  arg0_1 = None',
    'mul: "f32[4, 6][6, 1]cpu" = torch.ops.aten.mul.Tensor(slice_1, 3);  slice_1 = None',
)


def _int(fn: ast.FunctionDef, graph: str, sizes: bool = True, **values: object):
    return value_provenance(
        fn, FILE, graph, "n", {**values, **(X48 if sizes else {})}, frozenset({"x"})
    )


@pytest.mark.parametrize(
    ("n", "status"), [(100, "same"), (50, "same"), (8, "same"), (6, "unknown")]
)
def test_min_of_an_int_and_a_fixed_size_through_a_local_reads_the_whole_slice_left_out(n, status):
    """m = min(n, x.shape[1]); x[:, :m] on a width of 8: every n from 8 up slices all of it,
    which AOTAutograd leaves out; n=6 slices, and the graph has no slice to compare it with."""
    got = _int(MIN_LEN, MIN_LEN_100, n=n)
    assert got is not None and got.status == status, got


def test_a_size_the_key_does_not_fix_leaves_it_unknown():
    got = _int(MIN_LEN, MIN_LEN_100, sizes=False, n=100)
    assert got is not None and got.status == "unknown"


@pytest.mark.parametrize(
    ("n", "status"), [(-2, "same"), (6, "same"), (-3, "differs"), (5, "differs")]
)
def test_a_conditional_expression_is_computed_on_the_value(n, status):
    """k = n if n > 0 else x.shape[1] + n: -2 and 6 both end the slice at 6. Dynamo decides the
    condition in Python on the baked n, and guards nothing else of it."""
    got = _int(WRAP, WRAP_M2, n=n)
    assert got is not None and got.status == status, got


FLOOR = one_def("def floor_scale(x, s):\n    return x * max(s, 0.5)\n")
FLOOR_01 = _graph(
    2,
    "return x * max(s, 0.5)",
    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 0.5);  arg0_1 = None',
)


@pytest.mark.parametrize(
    ("s", "status"), [(0.1, "same"), (0.2, "same"), (0.5, "same"), (0.7, "differs")]
)
def test_max_of_a_float_and_a_literal_is_compared_by_its_value(s, status):
    got = float_provenance(FLOOR, FILE, FLOOR_01, "s", {"s": s}, frozenset({"x"}))
    assert got.status == status, got


EPS = one_def(
    "def eps_gate(x, eps=1e-5):\n    if eps > 0:\n        x = x / (x.norm(dim=-1, keepdim=True) + eps)\n"
    "    return x * 2\n"
)
_NORM = "x = x / (x.norm(dim=-1, keepdim=True) + eps)"
EPS_GRAPH = "\n".join(
    [
        "class <lambda>(torch.nn.Module):",
        '    def forward(self, arg0_1: "f32[4, 8][8, 1]cpu"):',
        f"        # File: {FILE}:3 in eps_gate, code: {_NORM}",
        '        pow_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.pow.Tensor_Scalar(arg0_1, 2)',
        '        sum_1: "f32[4, 1][1, 1]cpu" = torch.ops.aten.sum.dim_IntList(pow_1, [-1], True);  pow_1 = None',
        '        pow_2: "f32[4, 1][1, 1]cpu" = torch.ops.aten.pow.Tensor_Scalar(sum_1, 0.5);  sum_1 = None',
        '        add: "f32[4, 1][1, 1]cpu" = torch.ops.aten.add.Tensor(pow_2, 1e-05);  pow_2 = None',
        '        div: "f32[4, 8][8, 1]cpu" = torch.ops.aten.div.Tensor(arg0_1, add);  arg0_1 = add = None',
        f"        # File: {FILE}:4 in eps_gate, code: return x * 2",
        '        mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(div, 2);  div = None',
        "        return (mul,)",
    ]
)


@pytest.mark.parametrize(
    ("eps", "status", "says"),
    [
        (1e-5, "same", "goes its body"),
        (1e-3, "differs", "the graph has 1e-05 there"),
        (
            0.0,
            "differs",
            "skips them",
        ),  # the call skips the body whose ops the key holds (float-branch-differs)
        (-1.0, "differs", "skips them"),
    ],
)
def test_a_float_compared_in_python_reads_the_side_the_graph_went(eps, status, says):
    got = float_provenance(EPS, FILE, EPS_GRAPH, "eps", {"eps": eps}, frozenset({"x"}))
    assert got.status == status and says in got.why, got


def test_a_key_that_skipped_the_body_leaves_a_float_that_takes_it_unknown():
    """Traced with eps <= 0 the graph has no op of the body: which side it went is not shown
    (a body whose ops are unused is not traced into the graph either)."""
    graph = _graph(
        4, "return x * 2", 'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 2)'
    )
    for eps in (0.0, 1e-5):
        got = float_provenance(EPS, FILE, graph, "eps", {"eps": eps}, frozenset({"x"}))
        assert got.status == "unknown", got


def test_a_float_taken_as_a_symbol_is_not_read_by_its_branch():
    got = float_provenance(
        EPS, FILE, EPS_GRAPH, "eps", {"eps": 0.0}, frozenset({"x"}), frozenset({"eps"})
    )
    assert got.status == "unknown", got


# What the code binds: a builtin rebound, a value or a tensor reassigned, code past an if.


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("min = max\n", {"min"}),
        (
            "from types import SimpleNamespace\nimport math\nmath = SimpleNamespace(floor=None)\n",
            {"math"},
        ),
        ("import math\n", set()),
        ("def g():\n    global abs\n    abs = 1\n", {"abs"}),
        ("from helpers import *\n", {"min", "max", "abs", "int", "float", "round", "len", "math"}),
    ],
)
def test_a_builtin_the_module_rebinds_is_not_the_builtin(tmp_path, module, names):
    src = module + "def f(x, n):\n    return x * min(n, 4)\n"
    path = tmp_path / "m.py"
    path.write_text(src)
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    assert shadowed(str(path), fn) == names
    with shadowing(str(path), fn):
        assert (compute("min(n, 4)", {"n": 6}) is None) is ("min" in names)
        assert (compute("math.floor(s)", {"s": 1.5}) is None) is ("math" in names)


def test_a_builtin_the_function_or_its_closure_binds_is_not_the_builtin(tmp_path):
    src = (
        "def outer():\n    max = min\n    def f(x, n, min=max):\n        def abs(a):\n"
        "            return a\n        return x * min(n, 4)\n    return f\n"
    )
    path = tmp_path / "m.py"
    path.write_text(src)
    fn = next(
        n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef) and n.name == "f"
    )
    assert shadowed(str(path), fn) == {"min", "max", "abs"}


def test_min_rebound_by_the_module_leaves_the_baked_int_unknown(tmp_path):
    """min = max at module level: min(6, 4) is 6 there, not 4; never HIT nor NEW GRAPH by the
    builtin's value."""
    src = "min = max\n\n\ndef shadow_min(x, n):\n    return x * min(n, 4)\n"
    path = tmp_path / "m.py"
    path.write_text(src)
    fn = one_def(src.split("\n\n\n")[1])
    ast.increment_lineno(fn, 3)
    graph = op_graph(
        str(path),
        5,
        "return x * min(n, 4)",
        ['mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 4);  arg0_1 = None'],
        tensor="f32[4, 8][8, 1]cpu",
        returns="mul",
    )
    for n in (2, 3, 6):
        got = value_provenance(fn, str(path), graph, "n", {"n": n, **X48}, frozenset({"x"}))
        assert got is None or got.status == "unknown", got


def test_a_size_of_a_reassigned_tensor_is_not_the_arguments():
    fn = one_def(
        "def cat_min(x, n):\n    x = torch.cat([x, x], 1)\n    return x * min(n, x.shape[1])\n"
    )
    assert call_values(fn, {"n": 12, **X48}, "n") == {"n": 12}
    graph = _graph(
        3,
        "return x * min(n, x.shape[1])",
        'mul: "f32[4, 16][16, 1]cpu" = torch.ops.aten.mul.Tensor(cat, 8);  cat = None',
    )
    for n in (8, 12, 20):  # torch: 8 HIT, 12 and 20 NEW GRAPH (the width is 16 there)
        got = _int(fn, graph, n=n)
        assert got is None or got.status == "unknown", got


def test_another_parameter_the_function_reassigns_is_not_the_calls():
    fn = one_def("def f(x, n, k):\n    k = k + 1\n    m = min(n, k)\n    return x * m\n")
    graph = _graph(
        4,
        "return x * m",
        'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 3);  arg0_1 = None',
    )
    for n in (3, 5):  # torch hits both (built n=5, k=2: min(5, 3) = 3)
        got = _int(fn, graph, n=n, k=2)
        assert got is None or got.status == "unknown", got


def test_a_branch_on_a_reassigned_float_is_not_read():
    fn = one_def(
        "def f(x, eps):\n    eps = eps + 1.0\n    if eps > 0:\n        x = x * 2\n    return x\n"
    )
    graph = _graph(
        4,
        "x = x * 2",
        'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 2);  arg0_1 = None',
    )
    got = float_provenance(fn, FILE, graph, "eps", {"eps": -0.5}, frozenset({"x"}))
    assert got.status == "unknown", got  # torch: HIT (-0.5 + 1.0 > 0)


@pytest.mark.parametrize(
    "src",
    [
        "def f(x, eps):\n    if eps > 0:\n        return x.sin() + 1\n    return x.sin() + 1\n",
        "def f(x, eps):\n    y = None\n    if eps > 0:\n        y = x.sin()\n    if y is None:\n"
        "        y = x.sin()\n    return y * 2\n",
    ],
)
def test_a_skipped_body_whose_ops_later_code_can_trace_is_not_another_graph(src):
    fn = one_def(src)
    line = 3 if "return x.sin" in src else 4
    graph = _graph(
        line,
        "x.sin()",
        'sin: "f32[4, 8][8, 1]cpu" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None',
    )
    for eps in (-1.0, 0.0):  # torch: HIT, the same ops from other lines
        got = float_provenance(fn, FILE, graph, "eps", {"eps": eps}, frozenset({"x"}))
        assert got.status != "differs", got
