"""Whether ``dynamic=True`` keeps a float a tensor input, read off a key that has it baked in.

Under ``dynamic=True`` Dynamo makes a Python float a 0-d float64 graph input
(``VariableBuilder.wrap_symfloat``, torch/_dynamo/variables/builder.py) and AOTAutograd's
``tensorify_python_scalars`` (torch/fx/passes/_tensorify_python_scalars.py) turns each op
that reads it into a tensor op. It can do that only for the ops of its ``SUPPORTED_OPS``
(arithmetic and comparisons with a tensor, the float a positional argument); where the
float reaches any other op (``torch.where``'s scalar, ``clamp``'s bound, a keyword
argument, sdpa's ``dropout_p``: :mod:`fxcache_core.lookup.fn_op_args`) it marks the float specialized and raises ``TensorifyScalarRestartAnalysis``:
Dynamo traces the frame again with the float a constant of the graph, whatever its value
(but nan and inf, specialized anyway). The AOTAutograd forward graph of a key that has the
float baked in shows the ops its constant went to, at the level that pass reads: this
module says which way torch goes. Reads text only; never prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from fxcache_core.lookup.float_exprs import DECOMPOSED, Provenance, evaluate
from fxcache_core.lookup.fn_op_args import FUNCTIONS
from fxcache_core.lookup.traced_lines import op_lines

__all__ = ["TENSORIFIABLE", "FloatOps", "float_ops"]

TENSORIFIABLE = frozenset(
    {
        "aten.mul.Tensor",
        "aten.add.Tensor",
        "aten.sub.Tensor",
        "aten.div.Tensor",
        "aten.pow.Tensor_Tensor",
        "aten.gt.Scalar",
        "aten.lt.Scalar",
        "aten.ge.Scalar",
        "aten.le.Scalar",
        "aten.eq.Scalar",
        "aten.ne.Scalar",
        "aten.mul_.Tensor",
        "aten.add_.Tensor",
        "aten.sub_.Tensor",
        "aten.div_.Tensor",
    }
)
"""The ops whose float operand ``tensorify_python_scalars`` turns into a tensor (its
``SUPPORTED_OPS`` and ``SUPPORTED_METHOD_OPS``, as an AOTAutograd graph prints them)."""


@dataclass(frozen=True, slots=True)
class FloatOps:
    """Where a baked float's constants went in one graph.

    Attributes:
        outcome: ``specialized`` (an op takes it that the pass cannot make a tensor op:
            torch specializes the float under dynamic=True too), ``tensorified`` (every
            read found, each a positional operand of an op the pass converts: torch keeps it
            an input, another key), None where the graph does not show every read.
        op: the op that decides (``aten.clamp_min.default``), and ``line`` its source line.
    """

    outcome: Literal["specialized", "tensorified"] | None
    op: str = ""
    line: int = 0


def float_ops(
    graph: str, name: str, prov: Provenance, values: Mapping[str, float | int]
) -> FloatOps:
    """What the ops of ``graph`` (an AOTAutograd forward graph) that the reads of the float
    parameter ``name`` (``prov.uses``, status ``same``) made show: each read's constant
    (its expression with ``values``) looked for among the arguments of the op lines traced
    from the read's statement."""
    if prov.status != "same" or not prov.uses or any(u.opaque or not u.ops for u in prov.uses):
        return FloatOps(None)
    for use in prov.uses:
        if called := sorted(use.ops & ({d.rstrip("_") for d in DECOMPOSED} | set(FUNCTIONS))):
            return FloatOps("specialized", f"{called[0]}()", use.line)  # Dynamo's graph calls it: no tensor op
    lines: dict[int, list[tuple[str, ast.Call]]] = {}
    for _file, line, m, call in op_lines(graph):
        if call is None:
            return FloatOps(None)
        if isinstance(call, ast.Call):
            lines.setdefault(line, []).append((m.group("target"), call))
    tensorified: FloatOps | None = None
    every = True
    for use in prov.uses:
        value = evaluate(use.expr, values)
        found = False
        for line in range(use.line, use.last + 1):
            for target, call in lines.get(line, ()) if value is not None else ():
                positional = any(_is(a, value) for a in call.args)  # type: ignore[arg-type]
                keyword = any(_is(k.value, value) for k in call.keywords)  # type: ignore[arg-type]
                if not (positional or keyword):
                    continue
                found = True
                if keyword or target not in TENSORIFIABLE:
                    return FloatOps("specialized", target, line)
                tensorified = tensorified or FloatOps("tensorified", target, line)
        every = every and found
    return tensorified if every and tensorified is not None else FloatOps(None)


def _is(node: ast.expr, value: float) -> bool:
    """Whether ``node`` is the float literal ``value`` (``0.5``, ``-0.5``)."""
    sign = 1.0
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1.0
    return (
        isinstance(node, ast.Constant) and type(node.value) is float and sign * node.value == value
    )
