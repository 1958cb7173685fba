"""Where a function's code orders values in Python (:attr:`FrameReads.order_tests
<fxcache_core.functions.params.FrameReads.order_tests>`): a test holding ``<``, ``<=``,
``>`` or ``>=`` of something not a literal, or a ``min()``/``max()`` of two or more values.
Reads the source with ``ast`` only; never runs it. Never imports torch."""

from __future__ import annotations

import ast

__all__ = ["MAX_TESTS", "MAX_TEXT", "order_tests", "short"]

MAX_TESTS = 2000
"""Tests kept per function (a function with more is read as having none beyond)."""
MAX_TEXT = 80


def short(node: ast.AST | None) -> str | None:
    """``node`` as written, cut to :data:`MAX_TEXT` characters; None for no node."""
    if node is None:
        return None
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError):
        return "?"
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _orders(node: ast.AST) -> bool:
    """``node`` holds a ``<``/``<=``/``>``/``>=`` with an operand that is not a literal."""
    return any(
        isinstance(n, ast.Compare)
        and any(isinstance(o, _ORDER) for o in n.ops)
        and not all(isinstance(x, ast.Constant) for x in (n.left, *n.comparators))
        for n in ast.walk(node)
    )


def _chain_sides(s: ast.If) -> list[list[ast.stmt]]:
    """The statements of each side of an ``if``/``elif``/``else`` chain."""
    sides = [s.body]
    while len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If):
        s = s.orelse[0]
        sides.append(s.body)
    sides.append(s.orelse)
    return sides


def order_tests(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[int, str], ...]:
    """:attr:`FrameReads.order_tests` of ``fn``."""
    same: set[int] = set()  # id() of the tests of chains whose sides are all the same statements
    out: list[tuple[int, str]] = []
    for n in (x for stmt in fn.body for x in ast.walk(stmt)):
        if isinstance(n, ast.If) and id(n.test) not in same:
            sides = _chain_sides(n)
            if len({ast.dump(ast.Module(body=side, type_ignores=[])) for side in sides}) == 1:
                same.update(id(t.test) for t in ast.walk(n) if isinstance(t, ast.If))
        test = n.test if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)) else None
        if test is not None and id(test) not in same and _orders(test):
            out.append((n.lineno, short(test) or ""))
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id in ("min", "max")
            and len(n.args) >= 2
            and not all(isinstance(a, ast.Constant) for a in n.args)
        ):
            out.append((n.lineno, short(n) or ""))
        if len(out) >= MAX_TESTS:
            break
    return tuple(sorted(out))
