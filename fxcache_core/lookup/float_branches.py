"""Which side of an ``if`` on a specialized float a key's graph went, against the call's.

A fresh process's first call under ``dynamic=None``/``False`` specializes a float
argument (``VariableBuilder.wrap_symfloat`` in torch/_dynamo/variables/builder.py): an
``if eps > 0:`` on it is decided by Python while Dynamo traces, and only the side taken
is traced. The key's graph shows which: its ops carry ``# File: PATH:LINE`` comments,
and an op from a line of the ``if``'s body means the body ran. :func:`if_sides` reads,
for each ``if`` of the function whose test is a pure expression of the parameter
(:func:`~fxcache_core.lookup.py_exprs.is_pure`), the call's side (the test computed on
the call's values) and the key's, and decides only where that is exact:

* both sides the same: the reads of the side not taken trace nothing, and are set aside;
  the reads of the side taken are the float rule's to compare, constant by constant;
* the call skips a body with no ``else`` that the key's graph holds ops of: the call's
  trace lacks those ops, another graph (``differs``), where the body ends in no jump
  (``return``, ``raise``, ``break``, ``continue``, a ``yield``) and no later statement of
  the function tests anything (``if``, ``while``, ``for``, a conditional expression,
  ``and``/``or``, ``assert``, ``match``, ``try``, ``with``): the key hashes the graph's ops, not the
  lines they come from, and code past the ``if`` could trace the same ops for the call;
* anything else (no op of either side in the graph, an ``else`` the call would take
  while the key's graph went the body, which could trace the same ops; an ``if`` in a
  loop or a nested function; a test not computable) leaves the read of the test as it
  was: opaque, unknown.

Nothing here imports torch, runs the source or the graph, or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from fxcache_core.lookup.ast_reads import parents as _parents

__all__ = ["IfSide", "if_sides"]


@dataclass(frozen=True, slots=True)
class IfSide:
    """One ``if`` on the parameter, read.

    Attributes:
        line, last: the ``if`` statement's first and last line (its test's read is a use
            of the whole statement).
        test: the test as the code writes it.
        call: the side the call takes (True: the body).
        skip: the line spans of the side not taken (their reads trace nothing), when
            the key's graph went the call's side; empty otherwise.
        differs: why the call's trace is another graph, or None.
    """

    line: int
    last: int
    test: str
    call: bool
    skip: tuple[tuple[int, int], ...] = ()
    differs: str | None = None


def _span(block: list[ast.stmt]) -> tuple[int, int] | None:
    return (block[0].lineno, block[-1].end_lineno or block[-1].lineno) if block else None


def if_sides(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    through: Collection[str],
    truth_of: Callable[[ast.expr], bool | None],
    op_lines: Collection[int],
    pure: Callable[[ast.AST], bool],
) -> dict[int, IfSide]:
    """The ``if`` statements of ``fn`` (by their first line) whose test reads a name of
    ``through`` (the parameter and the locals computed from it), is ``pure``, and runs
    once (not in a loop or a nested function), each with its sides read as the module
    docstring says; one whose sides are not readable is left out. ``truth_of``: the
    test's truth for the call (None: not computable); ``op_lines``: the lines of the
    function's file that the key's graph holds ops from."""
    parents = _parents(fn)
    out: dict[int, IfSide] = {}
    for n in ast.walk(fn):
        if not (
            isinstance(n, ast.If)
            and pure(n.test)
            and any(isinstance(x, ast.Name) and x.id in through for x in ast.walk(n.test))
        ):
            continue
        if not _once(n, parents, fn):
            continue
        body, orelse = _span(n.body), _span(n.orelse)
        test_last = n.test.end_lineno or n.lineno
        if body is None or body[0] <= test_last or (orelse is not None and orelse[0] <= body[1]):
            continue  # a side on the test's line: the lines do not tell the sides apart
        call = truth_of(n.test)
        if call is None:
            continue
        in_body = any(body[0] <= ln <= body[1] for ln in op_lines)
        in_else = orelse is not None and any(orelse[0] <= ln <= orelse[1] for ln in op_lines)
        key = True if in_body and not in_else else False if in_else and not in_body else None
        side = IfSide(n.lineno, n.end_lineno or n.lineno, ast.unparse(n.test), call)
        if key is None:
            continue
        if key == call:
            skipped = orelse if call else body
            out[n.lineno] = IfSide(
                side.line, side.last, side.test, call, (skipped,) if skipped else ()
            )
        elif not call and orelse is None and not _jumps(n.body) and not _later_tests(fn, n):
            out[n.lineno] = IfSide(
                side.line,
                side.last,
                side.test,
                call,
                differs=(
                    f"{side.test} is false for the call, and this key's graph holds ops of its body "
                    f"(lines {body[0]}-{body[1]}): the call's trace skips them"
                ),
            )
    return out


_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)
_TESTS = (
    ast.If,
    ast.While,
    ast.For,
    ast.AsyncFor,
    ast.IfExp,
    ast.BoolOp,
    ast.Assert,
    ast.Match,
    ast.Try,
    ast.With,
    ast.AsyncWith,
    ast.comprehension,
)


def _jumps(body: list[ast.stmt]) -> bool:
    return any(isinstance(x, _JUMPS) for s in body for x in ast.walk(s))


def _later_tests(fn: ast.AST, n: ast.If) -> bool:
    end = n.end_lineno or n.lineno
    return any(isinstance(x, _TESTS) and getattr(x, "lineno", end + 1) > end for x in ast.walk(fn))


def _once(n: ast.AST, parents: Mapping[ast.AST, ast.AST], fn: ast.AST) -> bool:
    cur = parents.get(n)
    while cur is not None and cur is not fn:
        if isinstance(
            cur,
            (
                ast.For,
                ast.AsyncFor,
                ast.While,
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.Lambda,
                ast.ClassDef,
                ast.Try,
                ast.With,
                ast.AsyncWith,
            ),
        ):
            return False
        cur = parents.get(cur)
    return cur is fn
