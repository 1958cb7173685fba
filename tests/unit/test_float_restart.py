"""float_restart: whether dynamic=True keeps a float a tensor input, read off the AOTAutograd
graph of a key that has it baked in (the ops its constant went to)."""

from __future__ import annotations

from fxcache_core.lookup.float_exprs import FloatUse, Provenance
from fxcache_core.lookup.float_restart import float_ops

_HEAD = """class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)
        arg1_1: "f32[s77, 8][8, 1]cpu",  # PlainAOTInput(idx=1)
    ):
"""
_FILE = "        # File: /src/fns.py:{line} in f, code: {code}\n"
_TAIL = "        return (\n            out,  # PlainAOTOutput(idx=0)\n        )\n"


def _graph(line: int, code: str, *ops: str) -> str:
    body = "".join(
        f'        out: "f32[s77, 8][8, 1]cpu" = torch.ops.aten.{op};  x = None\n' for op in ops
    )
    return _HEAD + _FILE.format(line=line, code=code) + body + _TAIL


def _same(name: str, line: int, expr: str | None = None) -> Provenance:
    return Provenance("same", None, (FloatUse(line, line, expr or name, frozenset({"op"})),))


def test_torch_where_scalar_is_specialized():
    g = _graph(
        47,
        "return torch.where(x > 0, x, s) * 2",
        "gt.Scalar(arg1_1, 0)",
        "scalar_tensor.default(0.5, dtype = torch.float32, layout = torch.strided, "
        "device = device(type='cpu'))",
        "where.self(gt, arg1_1, scalar_tensor)",
        "mul.Tensor(where, 2)",
    )
    got = float_ops(g, "s", _same("s", 47), {"s": 0.5})
    assert (got.outcome, got.op, got.line) == ("specialized", "aten.scalar_tensor.default", 47)


def test_clamp_bound_is_specialized():
    g = _graph(
        126,
        "return x.clamp(min=lo) + 1",
        "clamp_min.default(arg1_1, 0.25)",
        "add.Tensor(clamp_min, 1)",
    )
    assert float_ops(g, "lo", _same("lo", 126, "0.25"), {"lo": 0.25}).outcome == "specialized"


def test_arithmetic_with_a_tensor_is_tensorified():
    g = _graph(5, "return x * s + 1", "mul.Tensor(arg1_1, 0.5)", "add.Tensor(mul, 1)")
    got = float_ops(g, "s", _same("s", 5), {"s": 0.5})
    assert (got.outcome, got.op) == ("tensorified", "aten.mul.Tensor")


def test_an_expression_of_the_float_is_looked_for_by_its_value():
    g = _graph(5, "return x * (-s)", "mul.Tensor(arg1_1, -0.5)")
    assert float_ops(g, "s", _same("s", 5, "-s"), {"s": 0.5}).outcome == "tensorified"


def test_a_keyword_argument_is_specialized():
    g = _graph(5, "return torch.add(x, y, alpha=s)", "add.Tensor(arg1_1, arg1_1, alpha = 0.5)")
    assert float_ops(g, "s", _same("s", 5), {"s": 0.5}).outcome == "specialized"


def test_one_specializing_read_among_tensorified_ones_specializes_the_float():
    g = _graph(
        5, "return (x * s).clamp(min=s)", "mul.Tensor(arg1_1, 0.5)", "clamp_min.default(mul, 0.5)"
    )
    got = float_ops(g, "s", _same("s", 5), {"s": 0.5})
    assert (got.outcome, got.op) == ("specialized", "aten.clamp_min.default")


def test_unknown_where_a_read_is_not_found_or_not_read():
    g = _graph(5, "return x * s", "mul.Tensor(arg1_1, 0.5)")
    assert float_ops(g, "s", _same("s", 9), {"s": 0.5}).outcome is None  # no op traced from line 9
    assert (
        float_ops(g, "s", _same("s", 5), {"s": 0.25}).outcome is None
    )  # the constant is not there
    opaque = Provenance("same", None, (FloatUse(5, 5, "s", frozenset(), opaque="passed to f()"),))
    assert float_ops(g, "s", opaque, {"s": 0.5}).outcome is None
    assert float_ops(g, "s", Provenance("same", None, ()), {"s": 0.5}).outcome is None
    assert (
        float_ops(g, "s", Provenance("unknown", None, _same("s", 5).uses), {"s": 0.5}).outcome
        is None
    )


def test_tensorified_needs_every_read_found():
    g = _graph(5, "return x * s", "mul.Tensor(arg1_1, 0.5)")
    two = Provenance(
        "same",
        None,
        (FloatUse(5, 5, "s", frozenset({"mul"})), FloatUse(7, 7, "s", frozenset({"add"}))),
    )
    assert float_ops(g, "s", two, {"s": 0.5}).outcome is None
