"""Which constant of a graph a float argument became (fxcache_core/lookup/float_exprs.py).

The graphs here are written by hand in the form torch 2.13 prints an entry's graph
(``aot_forward_graph_str``: a ``# File: PATH:LINE in FN, code: ...`` comment above the
ops traced from that line), copied from the real entries of the tests' corpus
(``float_exprs`` in tests/harness/cases.py) and varied
where a real compile cannot give the case cheaply (a literal equal to the value, an op
a decomposition renamed, a statement in a loop). What torch itself does with those
calls is tests/torch/test_shapes_oracle.py's.
"""

from __future__ import annotations

import pytest

from fxcache_core.lookup.float_exprs import evaluate, float_provenance, graph_ops, statement_reads
from tests.synth import one_def

FILE = "/src/train.py"


def _graph(*lines: tuple[int, str, str]) -> str:
    """A printed graph: (source line, its code, the op line) per op."""
    out = ["class <lambda>(torch.nn.Module):", "    def forward(self, arg0_1: \"f32[4, 3][3, 1]cpu\"):"]
    for line, code, op in lines:
        out += [f"        # File: {FILE}:{line} in f, code: {code}", f"        {op}"]
    return "\n".join(out + ["        return (add,)"])


SGD = one_def("def f(p, g, lr):\n    return p.add(g, alpha=-lr)\n")
SGD_GRAPH = _graph((2, "return p.add(g, alpha=-lr)",
                    'add: "f32[4, 3][3, 1]cpu" = torch.ops.aten.add.Tensor(arg0_1, arg1_1, alpha = -0.1);  arg0_1 = None'))


@pytest.mark.parametrize("expr,values,want", [
    ("-lr", {"lr": 0.1}, -0.1),
    ("1 / scale", {"scale": 4.0}, 0.25),
    ("2 * lim", {"lim": 0.5}, 1.0),
    ("-lr / (1 - beta1 ** step)", {"lr": 0.001, "beta1": 0.9, "step": 1}, -0.001 / (1 - 0.9)),
])
def test_an_expression_is_computed_as_python_computes_it(expr, values, want):
    assert evaluate(expr, values) == want


@pytest.mark.parametrize("expr", [
    "lr.real", "__import__('os').getpid()", "(lambda: 1.0)()", "math.log(lr)", "max(lr)", "sorted(lr)",
    "round(lr, 1.5)", "min(lr, key=abs)", "max(*lr)", "x.shape[1] * lr", "2.0 ** 100000", "lr / 0",
    "math.sqrt(-lr)", "missing * 2.0", "3 * 4", "lr > 0",
])
def test_anything_outside_the_arithmetic_whitelist_is_not_computed(expr):
    """Attributes, calls of anything but the whitelisted builtins, lambdas are refused
    (nothing is eval'd); a size not given, a huge exponent, a division by zero, a domain
    error, a name without a value, an int or a bool result give None."""
    assert evaluate(expr, {"lr": 0.5}) is None


def test_a_float_through_an_expression_is_compared_by_that_expression():
    """alpha=-lr: the graph's -0.1 is lr=0.1's; lr=-0.1 (whose value is the constant
    itself) traces another graph."""
    tensors = frozenset({"p", "g"})
    same = float_provenance(SGD, FILE, SGD_GRAPH, "lr", {"lr": 0.1}, tensors)
    assert same.status == "same" and same.why.code == "float-constant-same"
    for lr in (0.2, -0.1):
        other = float_provenance(SGD, FILE, SGD_GRAPH, "lr", {"lr": lr}, tensors)
        assert other.status == "differs" and other.why.code == "float-constant-differs", other
        assert "through -lr" in other.why


def test_a_literal_equal_to_the_value_is_not_taken_for_it():
    """x * lr + 0.1 traced with lr=0.1 has 0.1 twice (mul and add); lr=0.2 still differs."""
    fn = one_def("def f(x, lr):\n    return x * lr + 0.1\n")
    graph = _graph((2, "return x * lr + 0.1", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 0.1)'),
                   (2, "return x * lr + 0.1", 'add: "f32[4]" = torch.ops.aten.add.Tensor(mul, 0.1)'))
    assert float_provenance(fn, FILE, graph, "lr", {"lr": 0.1}, frozenset({"x"})).status == "same"
    assert float_provenance(fn, FILE, graph, "lr", {"lr": 0.2}, frozenset({"x"})).status == "differs"


def test_a_conditional_expression_of_tensors_is_a_tensor():
    """y = relu(x) if act == 'relu' else gelu(x); y * lr: a tensor either way, so lr is
    an operand of the mul (the graph's constant is lr's); a side that may be a number
    leaves it unknown."""
    code = "return y * lr"
    graph = _graph((3, code, 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 0.1)'))
    fn = one_def("def f(x, act, lr):\n    y = torch.relu(x) if act == 'relu' else F.gelu(x)\n    return y * lr\n")
    assert float_provenance(fn, FILE, graph, "lr", {"lr": 0.1}, frozenset({"x"})).status == "same"
    assert float_provenance(fn, FILE, graph, "lr", {"lr": 0.2}, frozenset({"x"})).status == "differs"
    fn = one_def("def f(x, act, lr):\n    y = torch.relu(x) if act == 'relu' else 2.0\n    return y * lr\n")
    assert float_provenance(fn, FILE, graph, "lr", {"lr": 0.1}, frozenset({"x"})).status == "unknown"


@pytest.mark.parametrize("src,graph,why", [
    # x / scale where the stored graph multiplies by the reciprocal: not the op the code names.
    ("def f(x, scale):\n    return x / scale\n",
     _graph((2, "return x / scale", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 0.25)')),
     "float constant(s)"),
    # Two constants in the op the expression reaches, one read: which is lr's?
    ("def f(x, lr):\n    return x.clamp(lr)\n",
     _graph((2, "return x.clamp(lr)", 'clamp: "f32[4]" = torch.ops.aten.clamp.default(arg0_1, 0.1, 0.9)')),
     "float constant(s)"),
    # The graph was traced from other code (the source changed since).
    ("def f(x, lr):\n    return x * (lr * 2)\n",
     _graph((2, "return x * lr", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 0.2)')),
     "no op traced from it"),
    # Through a helper: the value that reaches the graph is not computable.
    ("def f(x, s):\n    return helper(x, math.sqrt(s))\n",
     _graph((2, "return t * a", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 2.0)')),
     "passed to helper()"),
    # A condition on it in a loop: each pass may go another side.
    ("def f(x, lr):\n    for _ in range(2):\n        if lr > 0.5:\n            x = x * 2.0\n    return x\n",
     _graph((4, "x = x * 2.0", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 2.0)')),
     "read in the if statement"),
    # An else the call takes while the key went the body: it may trace the same ops.
    ("def f(x, lr):\n    if lr > 5.0:\n        y = x * 2.0\n    else:\n        y = x * 3.0\n    return y\n",
     _graph((3, "y = x * 2.0", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 2.0)')),
     "read in the if statement"),
    # The sides' lines are not told apart.
    ("def f(x, lr):\n    if lr > 5.0: x = x * 2.0\n    return x\n",
     _graph((2, "if lr > 5.0: x = x * 2.0", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 2.0)')),
     "read in the if statement"),
    # Times a size, which Dynamo folds in Python: not an op's operand.
    ("def f(x, lr):\n    n = x.shape[0]\n    return x * (n * lr)\n",
     _graph((3, "return x * (n * lr)", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 0.4)')),
     "not known to be a tensor operation"),
])
def test_what_is_not_exact_is_unknown_never_decided(src, graph, why):
    fn = one_def(src)
    param = fn.args.args[1].arg
    for value in (0.1, 0.4, 4.0):
        p = float_provenance(fn, FILE, graph, param, {param: value}, frozenset({"x"}))
        assert p.status == "unknown" and p.why.code == "float-provenance-unknown", p
        assert why in p.why, p.why


def test_a_local_bound_to_an_expression_of_it_is_read_through_and_a_loop_counts_once():
    """bias = 1 - beta1 ** step; p.add_(m, alpha=-lr / bias) in a loop over two tensors:
    the graph has the constant once per pass, the same each time."""
    fn = one_def("def f(ps, ms, lr, beta1, step):\n"
             "    for p, m in zip(ps, ms):\n"
             "        bias = 1 - beta1 ** step\n"
             "        p.add_(m, alpha=-lr / bias)\n")
    code = "p.add_(m, alpha=-lr / bias)"
    c = repr(-0.001 / (1 - 0.9))
    graph = _graph((4, code, f'add: "f32[4]" = torch.ops.aten.add.Tensor(arg0_1, arg1_1, alpha = {c})'),
                   (4, code, f'add_1: "f32[3]" = torch.ops.aten.add.Tensor(arg2_1, arg3_1, alpha = {c})'))
    (use,) = statement_reads(fn, "lr", {"lr": 0.001, "beta1": 0.9, "step": 1}, frozenset())
    assert (use.expr, use.text, use.loop, use.ops) == ("-lr / (1 - beta1 ** step)", "-lr / bias", True,
                                                       frozenset({"add"}))
    values = {"lr": 0.001, "beta1": 0.9, "step": 1}
    assert float_provenance(fn, FILE, graph, "lr", values, frozenset()).status == "same"
    assert float_provenance(fn, FILE, graph, "lr", {**values, "step": 2}, frozenset()).status == "differs"
    assert float_provenance(fn, FILE, graph, "step", values, frozenset()).status == "same"


def test_an_unread_parameter_changes_nothing():
    fn = one_def("def f(x, lr):\n    return x * 2.0\n")
    assert float_provenance(fn, FILE, _graph(), "lr", {"lr": 0.3}, frozenset({"x"})).status == "unread"


def test_graph_ops_reads_each_op_under_its_comment():
    (op,) = graph_ops(SGD_GRAPH)
    assert (op.file, op.line, op.op, op.floats) == (FILE, 2, "add", ("-0.1",))


def test_an_expression_read_twice_is_one_value_and_a_literal_is_read_as_python_spells_it():
    """(x * (t * t)): t's two reads are one expression, one constant (t=-0.5 and 0.5 give
    0.25); max(eps, 1e-3): the graph's comment writes 1e-3, ``ast.unparse`` 0.001."""
    fn = one_def("def f(x, t):\n    return (x * (t * t)).softmax(-1)\n")
    graph = _graph((2, "return (x * (t * t)).softmax(-1)", 'mul: "f32[4]" = torch.ops.aten.mul.Tensor(arg0_1, 0.25)'))
    assert [u.expr for u in statement_reads(fn, "t", {"t": 0.5}, frozenset({"x"}))] == ["t * t"]
    for t in (0.5, -0.5):
        assert float_provenance(fn, FILE, graph, "t", {"t": t}, frozenset({"x"})).status == "same"
    assert float_provenance(fn, FILE, graph, "t", {"t": 0.25}, frozenset({"x"})).status == "differs"
    fn = one_def("def f(x, eps):\n    return x / (x.std(-1) + max(eps, 1e-3))\n")
    code = "return x / (x.std(-1) + max(eps, 1e-3))"
    graph = _graph((2, code, 'add: "f32[4]" = torch.ops.aten.add.Tensor(arg0_1, 0.001)'))
    for eps in (1e-5, 1e-6, 1e-3):
        assert float_provenance(fn, FILE, graph, "eps", {"eps": eps}, frozenset({"x"})).status == "same"
    assert float_provenance(fn, FILE, graph, "eps", {"eps": 0.01}, frozenset({"x"})).status == "differs"
    # A comment that shows other code (a source edited since) still decides nothing.
    graph = _graph((2, "return x / (x.std(-1) + max(eps, 1e-2))", 'add: "f32[4]" = torch.ops.aten.add.Tensor(arg0_1, 0.001)'))
    assert float_provenance(fn, FILE, graph, "eps", {"eps": 1e-6}, frozenset({"x"})).status == "unknown"
