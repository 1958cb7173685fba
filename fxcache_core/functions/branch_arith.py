"""Arithmetic of one parameter with number literals, and orderings, in the test of an ``if``.

:class:`~fxcache_core.functions.params.BranchTest` reads ``if n % 2 == 0:`` as a test of
``n`` (its value computed through ``n % 2`` first) and ``if t > 0.5:`` as an ordering of
``t``: :func:`arith_param` says which expressions are such arithmetic, :func:`arith`
computes one for the call's value as Python does, by walking its ``ast`` (never ``eval``).
Nothing here imports torch.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

__all__ = ["EXITS", "FLIPPED", "ORDERINGS", "ORDER_NAMES", "TESTING", "arith", "arith_param", "ordering_of"]

ORDERINGS: dict[str, Callable[[object, object], object]] = {
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
ORDER_NAMES: dict[type, str] = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
FLIPPED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
"""What leaves a block early: an ``if`` body holding one does not share the code after it."""
TESTING = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.IfExp, ast.BoolOp, ast.Assert, ast.Match, ast.Try,
           ast.With, ast.AsyncWith)
"""What tests a value: after an ``if``, one could trace the body's ops for the other side."""


def arith_param(node: ast.expr, text: str | None, params: set[str]) -> str | None:
    """The one parameter ``node`` computes with when it is arithmetic (``+ - * / // %``,
    unary ``-``/``+``) of that parameter and int or float literals alone, the parameter
    named at least once; None otherwise (a bare name included, or ``text``, the expression
    as shown, cut short)."""
    if isinstance(node, ast.Name) or text is None or text == "?" or text.endswith("..."):
        return None  # a text cut short is not computed
    names: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.Constant):
            if type(n.value) not in (int, float):
                return None
        elif not isinstance(n, (ast.BinOp, ast.UnaryOp, *_ARITH_OPS, ast.USub, ast.UAdd, ast.Load)):
            return None
    if len(names) != 1 or not names <= params:
        return None
    return next(iter(names))


_ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)


def arith(expr: str, value: object) -> object:
    """``expr`` (:func:`arith_param`'s arithmetic of one name) computed for the name's
    ``value`` as Python computes it, walking its ``ast`` (never ``eval``); None where
    ``value`` is no int or float, or the arithmetic raises (a division by zero)."""
    if type(value) not in (bool, int, float):
        return None
    try:
        tree = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None

    def run(n: ast.expr) -> object:
        if isinstance(n, ast.Name):
            return value
        if isinstance(n, ast.Constant) and type(n.value) in (int, float):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = run(n.operand)
            return -v if isinstance(n.op, ast.USub) else +v  # type: ignore[operator]
        if isinstance(n, ast.BinOp) and isinstance(n.op, _ARITH_OPS):
            return _BINARY[type(n.op)](run(n.left), run(n.right))
        raise ValueError("not arithmetic of one name")

    try:
        return run(tree)
    except (ArithmeticError, ValueError, TypeError, RecursionError):
        return None


_BINARY: dict[type, Callable[[object, object], object]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def ordering_of(left: ast.expr, op: ast.cmpop, right: ast.expr, params: set[str],
                literal: Callable[[ast.expr], tuple[bool, object]]) -> tuple[str, str, object] | None:
    """(parameter, op, operand) for ``p < 2``, ``p >= 0.5`` or ``0 < p``: a parameter
    ordered against an int or float literal (not a bool; ``literal`` reads it); None
    otherwise."""
    name = ORDER_NAMES.get(type(op))
    if name is None:
        return None
    if not (isinstance(left, ast.Name) and left.id in params):
        if not (isinstance(right, ast.Name) and right.id in params):
            return None
        left, right, name = right, left, FLIPPED[name]
    assert isinstance(left, ast.Name)
    ok, value = literal(right)
    if not ok or type(value) not in (int, float):
        return None
    return left.id, name, value
