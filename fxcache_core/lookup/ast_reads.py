"""Small readings of a function's ``ast`` that the rules reading constants share (floats,
ints, dtypes, graph breaks): each node's parent, the name an attribute chain starts from,
whether a node is in a loop's body, and which statements are plain enough that a value read in them lands in that
statement's ops. Reads source text only; never imports or runs it."""

from __future__ import annotations

import ast
from collections import OrderedDict
from collections.abc import Mapping
from types import MappingProxyType

SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)
"""Statements whose expressions run once, where they stand (no test, loop or block)."""

MAY_NOT_RUN = (
    ast.IfExp,
    ast.BoolOp,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.NamedExpr,
    ast.Await,
)
"""Expressions a part of which may not run (or runs again): a call there may trace no op,
or its ops more than once."""


def parents(root: ast.AST) -> Mapping[ast.AST, ast.AST]:
    """Each node under ``root`` -> its parent node (not to be changed); read once per
    ``root`` while it is among the last read (the trees are shared and never changed, and
    the rules ask of one function for each key and name)."""
    got = _PARENTS.get(id(root))
    if got is not None and got[0] is root:
        _PARENTS.move_to_end(id(root))
        return got[1]
    made = MappingProxyType({c: n for n in ast.walk(root) for c in ast.iter_child_nodes(n)})
    _PARENTS[id(root)] = (root, made)
    if len(_PARENTS) > _PARENTS_KEPT:
        _PARENTS.popitem(last=False)
    return made


_PARENTS: OrderedDict[int, tuple[ast.AST, Mapping[ast.AST, ast.AST]]] = OrderedDict()
"""The last roots :func:`parents` read (by ``id``, each held with its map, so the ``id`` is
its own while kept): at most :data:`_PARENTS_KEPT`."""
_PARENTS_KEPT = 64


def literal_int(node: ast.AST) -> int | None:
    """The int a literal is written as (``3``, ``-3``); None for anything else (a bool
    among them: ``True`` is not read as 1)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def root_name(node: ast.expr) -> str | None:
    """The name an attribute, item or call chain starts from (``torch`` of
    ``torch.nn.functional.gelu(x)``, ``self`` of ``self.fc(x).relu()``); None when it
    starts from anything else (a literal, a parenthesised expression's result)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def calls_in_order(node: ast.AST) -> list[ast.Call]:
    """The calls under ``node`` in the order Python makes them: a call after its
    receiver and its arguments."""
    out: list[ast.Call] = []
    for child in ast.iter_child_nodes(node):
        out += calls_in_order(child)
    if isinstance(node, ast.Call):
        out.append(node)
    return out


def ancestors(n: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> list[ast.AST]:
    """The nodes above ``n`` (``parents``: :func:`parents` of a root), nearest first."""
    out = []
    while (n := parents.get(n)) is not None:  # type: ignore[assignment]
        out.append(n)
    return out


def shares_lines(stmt: ast.stmt, fn: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether another statement of ``fn`` (not one ``stmt`` is inside) has a line within
    ``stmt``'s lines (``a = f(x); b = g(x)``): a graph's ``# File: PATH:LINE`` comment could
    then name either, so the ops from those lines are not ``stmt``'s alone."""
    line, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    around = {id(o) for o in ancestors(stmt, parents)}
    return any(
        o is not stmt
        and isinstance(o, ast.stmt)
        and id(o) not in around
        and o.lineno <= last
        and line <= (o.end_lineno or o.lineno)
        for o in ast.walk(fn)
    )


def in_loop(n: ast.AST, parents: Mapping[ast.AST, ast.AST], fn: ast.AST) -> bool:
    """Whether ``n`` is in the body of a ``for`` or ``while`` loop of ``fn`` (``parents``:
    :func:`parents` of ``fn``), where what it traces may be traced once per pass. A
    comprehension's part is not counted here (it is an expression: a rule that reads one
    says what it does with it)."""
    cur = parents.get(n)
    while cur is not None and cur is not fn:
        if isinstance(cur, (ast.For, ast.AsyncFor, ast.While)):
            return True
        cur = parents.get(cur)
    return False


__all__ = [
    "MAY_NOT_RUN",
    "SIMPLE_STATEMENTS",
    "ancestors",
    "calls_in_order",
    "in_loop",
    "parents",
    "root_name",
    "shares_lines",
]
