"""The value Python gives a pure expression of a call's scalars, computed without running it.

Dynamo computes with a specialized int or float as a Python constant: an expression of it
is evaluated by Python while tracing (a builtin of constants is called: ``min(n, 8)``; a
conditional picks its side), and only the result reaches the graph. The rules that read a
baked value (:mod:`~fxcache_core.lookup.float_exprs`, :mod:`~fxcache_core.lookup.int_exprs`)
compute the same expression on the call's values with :func:`compute`, an ``ast``
whitelist (nothing is ``eval``'d):

* literals (int, float), the call's scalars by name, an attribute named by its text
  (``self.scale``) where the caller gives it, ``math.pi``/``math.e``/``math.inf``;
* a size the key fixes, where the caller gives it under :func:`size_name`'s text:
  ``x.shape[1]``, ``x.size(1)``, ``x.size()[1]``, ``len(x)`` (a dim of a tensor
  argument that is static in the key; a symbolic one is never given, so an expression
  of it is not computable);
* ``+ - * / // % **`` (an exponent over :data:`MAX_POW` refused), unary ``- + not``;
* comparisons (``<``, ``<=``, ``>``, ``>=``, ``==``, ``!=``, chained), ``and``/``or``
  with Python's short-circuit values, and ``a if c else b``;
* the builtins ``min``/``max`` (two or more arguments), ``abs``, ``int``, ``float``,
  ``round`` (one or two arguments), and ``math.floor``/``ceil``/``trunc``/``sqrt``,
  called positionally; a builtin's name that the expression's values bind (a parameter
  called ``max``) is not the builtin, and is refused, as is one that the code around
  the expression rebinds (:data:`shadowed_names`, set by
  :func:`~fxcache_core.lookup.py_names.shadowing`).

Anything else (a call of another function, a subscript, a name without a value) is
refused: the caller's answer is then unknown. Nothing here imports torch or runs text.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from contextvars import ContextVar

from fxcache_core.guards.grammar import CMPOPS
from fxcache_core.lookup.ast_reads import literal_int

__all__ = [
    "MAX_POW",
    "SHADOWABLE",
    "compute",
    "is_pure",
    "shadowed_names",
    "size_name",
    "size_names",
    "truth",
]

MAX_POW = 1024
"""An exponent above this (in absolute value) is not evaluated (an int power could
take any time and memory): ``unknown``."""

ARITH: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMP = CMPOPS  # <, <=, >, >=, ==, !=: the one table the guards grammar evaluates with


def _round(*a: object) -> object:
    if len(a) == 2 and type(a[1]) is not int:
        raise _Refused("round's ndigits")
    return round(*a)  # type: ignore[call-overload]


# name -> (the function, the fewest and the most positional arguments it takes here)
_BUILTINS: dict[str, tuple[Callable[..., object], int, int]] = {
    "min": (min, 2, 8),
    "max": (max, 2, 8),
    "abs": (abs, 1, 1),
    "int": (int, 1, 1),
    "float": (float, 1, 1),
    "round": (_round, 1, 2),
}
_MATH: dict[str, tuple[Callable[..., object], int, int]] = {
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "trunc": (math.trunc, 1, 1),
    "sqrt": (math.sqrt, 1, 1),
}
SHADOWABLE = frozenset({"min", "max", "abs", "int", "float", "round", "len", "math"})
"""The names read here as Python's builtins or the ``math`` module."""
shadowed_names: ContextVar[frozenset[str]] = ContextVar("shadowed_names", default=frozenset())
"""The names of :data:`SHADOWABLE` that the code being read rebinds: not the builtin."""
_MATH_CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "tau": math.tau}
_NUMBER = (int, float, bool)


class _Refused(Exception):
    """Outside what :func:`compute` computes."""


def size_name(node: ast.AST) -> str | None:
    """The text a size read is given under (``x.shape[1]`` for ``x.shape[1]``, ``x.size(1)``,
    ``x.size()[1]``; ``x.shape[0]`` for ``len(x)``; a negative index kept as written), or
    None where ``node`` is not a size of a named value at a literal index."""

    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and "len" not in shadowed_names.get()
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    ):
        return f"{node.args[0].id}.shape[0]"
    base: ast.AST | None = None
    i: int | None = None
    if isinstance(node, ast.Subscript):
        v = node.value
        if isinstance(v, ast.Attribute) and v.attr == "shape":
            base, i = v.value, literal_int(node.slice)
        elif (
            isinstance(v, ast.Call)
            and isinstance(v.func, ast.Attribute)
            and v.func.attr == "size"
            and not v.args
            and not v.keywords
        ):
            base, i = v.func.value, literal_int(node.slice)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and len(node.args) == 1
        and not node.keywords
    ):
        base, i = node.func.value, literal_int(node.args[0])
    if isinstance(base, ast.Name) and i is not None:
        return f"{base.id}.shape[{i}]"
    return None


def size_names(
    name: str, shape: tuple[int, ...], dims: frozenset[int] | None = None
) -> dict[str, int]:
    """The sizes of the tensor ``name`` under :func:`size_name`'s texts, each dim by its
    index and its negative index; only the ``dims`` given (all when None)."""
    out: dict[str, int] = {}
    for d, s in enumerate(shape):
        if dims is None or d in dims:
            out[f"{name}.shape[{d}]"] = s
            out[f"{name}.shape[{d - len(shape)}]"] = s
    return out


def _callee(
    f: ast.expr, values: Mapping[str, object]
) -> tuple[Callable[..., object], int, int] | None:
    if (
        isinstance(f, ast.Name)
        and f.id in _BUILTINS
        and f.id not in values
        and f.id not in shadowed_names.get()
    ):
        return _BUILTINS[f.id]
    if _math_attribute(f, values):
        return _MATH.get(f.attr)
    return None


def _math_attribute(node: ast.expr, values: Mapping[str, object]) -> bool:
    """``node`` is ``math.NAME`` with ``math`` the module: no value given and no binding
    of the function or its module shadows the name."""
    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "math"
            and "math" not in values and "math" not in shadowed_names.get())


def _eval(node: ast.expr, values: Mapping[str, object]) -> object:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, bool):
        return node.value
    if (size := size_name(node)) is not None:
        if size not in values:
            raise _Refused(size)
        return values[size]
    if _math_attribute(node, values) and node.attr in _MATH_CONSTANTS:
        return _MATH_CONSTANTS[node.attr]
    if isinstance(
        node, (ast.Name, ast.Attribute)
    ):  # an attribute: a value named by its text (self.scale)
        name = node.id if isinstance(node, ast.Name) else ast.unparse(node)
        if name not in values or not isinstance(values[name], _NUMBER):
            raise _Refused(name)
        return values[name]
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, values)
        if isinstance(node.op, ast.Not):
            return not v
        if isinstance(node.op, ast.USub):
            return -v  # type: ignore[operator]
        if isinstance(node.op, ast.UAdd):
            return +v  # type: ignore[operator]
    if isinstance(node, ast.BinOp) and type(node.op) in ARITH:
        a, b = _eval(node.left, values), _eval(node.right, values)
        if isinstance(node.op, ast.Pow) and abs(b) > MAX_POW:  # type: ignore[arg-type]
            raise _Refused("exponent")
        return ARITH[type(node.op)](a, b)
    if isinstance(node, ast.Compare) and all(type(o) in _CMP for o in node.ops):
        left = _eval(node.left, values)
        for op, c in zip(node.ops, node.comparators, strict=True):
            right = _eval(c, values)
            if not _CMP[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        v: object = None
        for e in node.values:  # Python's value: the first operand that decides, else the last
            v = _eval(e, values)
            if bool(v) is isinstance(node.op, ast.Or):
                return v
        return v
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, values) else node.orelse, values)
    if (
        isinstance(node, ast.Call)
        and not node.keywords
        and (c := _callee(node.func, values)) is not None
    ):
        fn, lo, hi = c
        if not lo <= len(node.args) <= hi or any(isinstance(a, ast.Starred) for a in node.args):
            raise _Refused("arguments")
        return fn(*(_eval(a, values) for a in node.args))
    raise _Refused(type(node).__name__)


def _value(expr: str, values: Mapping[str, object]) -> object:
    try:
        node = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        return _eval(node, values)
    except (ArithmeticError, ValueError, TypeError, RecursionError, _Refused):
        return None


def compute(expr: str, values: Mapping[str, object]) -> float | int | None:
    """The value Python gives ``expr`` with ``values`` for its names and sizes (see the
    module docstring), where it is an int or a float; None where the expression is
    outside the whitelist, a name has no value, Python raises (a division by zero, an
    overflow, ``math.sqrt(-1)``), or the result is of another type (a bool)."""
    v = _value(expr, values)
    return v if type(v) in (int, float) else None  # type: ignore[return-value]


def truth(expr: str, values: Mapping[str, object]) -> bool | None:
    """Whether ``expr`` is true for ``values`` (Python's truth of its value: ``if n:``,
    ``if eps > 0:``); None where :func:`compute`'s whitelist refuses it."""
    v = _value(expr, values)
    return bool(v) if type(v) in (int, float, bool) else None


def is_pure(node: ast.AST, scalars: Mapping[str, object]) -> bool:
    """Whether ``node`` is within :func:`compute`'s whitelist, with ``scalars`` naming the
    values (and sizes) it may read: literals, those names, and the operators, comparisons,
    conditionals and builtins of them."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float, bool)
    if (size := size_name(node)) is not None:
        return size in scalars
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load) and node.id in scalars
    if isinstance(node, ast.Attribute):
        return (
            isinstance(node.value, ast.Name)
            and node.value.id == "math"
            and "math" not in scalars
            and "math" not in shadowed_names.get()
            and node.attr in _MATH_CONSTANTS
        )
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)) and is_pure(node.operand, scalars)
    if isinstance(node, ast.BinOp):
        return (
            type(node.op) in ARITH and is_pure(node.left, scalars) and is_pure(node.right, scalars)
        )
    if isinstance(node, ast.Compare):
        return all(type(o) in _CMP for o in node.ops) and all(
            is_pure(e, scalars) for e in (node.left, *node.comparators)
        )
    if isinstance(node, ast.BoolOp):
        return all(is_pure(e, scalars) for e in node.values)
    if isinstance(node, ast.IfExp):
        return all(is_pure(e, scalars) for e in (node.test, node.body, node.orelse))
    if isinstance(node, ast.Call):
        c = _callee(node.func, scalars)
        return (
            c is not None
            and not node.keywords
            and c[1] <= len(node.args) <= c[2]
            and all(not isinstance(a, ast.Starred) and is_pure(a, scalars) for a in node.args)
        )
    return False
