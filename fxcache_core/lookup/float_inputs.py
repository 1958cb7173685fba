"""A float the key takes as an input, and the Python tests of it its guards do not keep.

Under ``dynamic=True``, or after automatic dynamic saw a float change, Dynamo makes a
Python float argument a graph input (a 0-d float64 tensor: ``wrap_symfloat`` in
torch/_dynamo/variables/builder.py). Arithmetic with it lands in the graph as ops on
that input, so any value takes the key. A Python *test* of it (``if eps > 0:``, a
``while``, a conditional expression, ``and``/``or``, a comparison, ``min``/``max``,
``int()``, a ``math`` function, a call of a helper that may do any of these) is decided
while Dynamo traces, and the side it took is held by Dynamo's own guards, which the
cache does not keep: a value on the other side traces another graph (torch 2.13 keeps
the float an input of that graph too, so the key's inputs look the same either way).

:func:`float_input_read` says where that leaves a call's float: accounted (None) only
where the compiled function's source is read and every read of the parameter (and of
the locals computed from it, :func:`~fxcache_core.lookup.float_exprs.statement_reads`)
is plain arithmetic (``+ - * /``, a sign) whose result is an operand of ``+ - * /``
with a tensor; otherwise the reason, naming the read and what would decide it.
Reads source text only; never imports or runs it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from fxcache_core.errors import param
from fxcache_core.functions.frames import CompiledFrom, resume_parent
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.float_exprs import statement_reads
from fxcache_core.lookup.py_names import assigned_names, tested
from fxcache_core.reasons import Reason

__all__ = ["float_input_read", "plain_arithmetic"]

_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_SIGNS = (ast.USub, ast.UAdd)
_TENSOR_OPS = frozenset({"add", "sub", "rsub", "mul", "div"})
_NAME_RE = re.compile(r"L\['(\w+)'\]")


def plain_arithmetic(expr: str) -> bool:
    """Whether ``expr`` (a read's pure expression, ``1 - eps``) is names and numbers under
    ``+ - * /`` and signs alone: nothing Python decides on the value (no comparison,
    conditional, call, power)."""
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for n in ast.walk(tree.body):
        if isinstance(n, ast.BinOp):
            if not isinstance(n.op, _ARITH):
                return False
        elif isinstance(n, ast.UnaryOp):
            if not isinstance(n.op, _SIGNS):
                return False
        elif isinstance(n, ast.Constant):
            if type(n.value) not in (int, float):
                return False
        elif not isinstance(n, (ast.Name, ast.Load, ast.operator, ast.unaryop)):
            return False
    return True


def float_input_read(
    frame: CompiledFrom | None,
    name: str,
    value: float,
    inputs: Mapping[str, InputValue],
    unread: str | None = None,
) -> Reason | None:
    """None where the source of ``frame`` shows that the float parameter ``name``, which
    the key takes as an input, reaches the graph through plain arithmetic with tensors
    alone (see the module docstring); else why the lookup is undecided
    (``float-input-tested``). ``inputs``: the call's, by source (its other scalars and
    its tensors' names, for reading the expressions); ``unread``: why the source is not
    read, where the caller knows."""
    what = (
        f"{name}={value!r}: this key takes {name} as an input (a float Dynamo made a graph input)"
    )
    fn = None
    if frame is not None and unread is None:
        fn = function_node(frame.file, frame.line, resume_parent(frame.function) or frame.function)
    if fn is None:
        cause = unread or "the compiled function's source is not read here"
        return Reason(
            f"{what}, and {cause}: whether the code tests {name} in Python, which Dynamo's guards hold and the "
            f"cache does not, is not known; the source, or Dynamo's guards in a run's TORCH_TRACE (the trace "
            f"explained, or given as {param('from_trace')}), would say",
            "float-input-tested",
        )
    scalars: dict[str, float | int] = {}
    tensors: set[str] = set()
    for src, v in inputs.items():
        if (m := _NAME_RE.fullmatch(src)) is None:
            continue
        if isinstance(v, TensorArg):
            tensors.add(m.group(1))
        elif type(v) in (int, float):
            scalars[m.group(1)] = v  # type: ignore[assignment]
    scalars[name] = value
    why = _first_test(fn, name, scalars, frozenset(tensors))
    if why is None:
        return None
    return Reason(
        f"{what}, and the code {why}: Dynamo decides that while it traces and keeps the outcome in its own "
        f"guards, not in the cache, so whether {name}={value!r} traces this key's graph is not known; "
        f"Dynamo's guards in a run's TORCH_TRACE (the trace explained, or given as {param('from_trace')}) "
        "would say",
        "float-input-tested",
    )


def _first_test(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    scalars: Mapping[str, float | int],
    tensors: frozenset[str],
) -> str | None:
    """How ``fn`` reads ``name`` other than by plain arithmetic with a tensor, in words
    (``tests it in Python at line 4``); None where it does not."""
    if name in assigned_names(fn):
        return f"assigns {name}"
    if (line := tested(fn, {name})) is not None:
        return f"tests it in Python at line {line}"
    for u in statement_reads(fn, name, scalars, tensors):
        if u.opaque is not None:
            return f"reads it in a way fxcache does not follow ({u.opaque})"
        if not plain_arithmetic(u.expr):
            return f"computes {u.expr} of it in Python at line {u.line}"
        if not u.ops or not u.ops <= _TENSOR_OPS:
            return f"passes {u.expr} to {', '.join(sorted(u.ops)) or 'an op'} at line {u.line}, which may test it"
    return None
