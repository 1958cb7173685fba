"""Small readings of a function's ``ast`` that the rules reading constants share (floats,
ints, dtypes, graph breaks): each node's parent, the name an attribute chain starts from,
and which statements are plain enough that a value read in them lands in that
statement's ops. Reads source text only; never imports or runs it."""

from __future__ import annotations

import ast

SIMPLE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)
"""Statements whose expressions run once, where they stand (no test, loop or block)."""


def parents(root: ast.AST) -> dict[ast.AST, ast.AST]:
    """Each node under ``root`` -> its parent node."""
    return {c: n for n in ast.walk(root) for c in ast.iter_child_nodes(n)}


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


__all__ = ["SIMPLE_STATEMENTS", "calls_in_order", "parents", "root_name"]
