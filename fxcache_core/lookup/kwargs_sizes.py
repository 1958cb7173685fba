"""A recorded guard on a ``**kwargs`` dict that is arithmetic of the sizes of the tensors and
of the ints the call gives through it, evaluated with the call's values.

Under dynamic shapes Dynamo guards the dict's items with the relations its trace assumed
(``(-32)*L['kwargs']['logits_to_keep'] + 32*L['kwargs']['input_ids'].size()[1] >= 0``, a
``max(1, ...)`` of a size a vision model divides): Python expressions of sizes and ints
that torch evaluates with the call's values, as it does an entry's ``guards_expr``.
:func:`size_guard` puts each size (``.size()[d]``, ``.size(d)``) of a tensor the call gives
and each plain int it gives in place as a placeholder and evaluates the rest with the
whitelist of :mod:`fxcache_core.guards.expr` (never ``eval``): ``pass`` or ``fail`` where
the guard evaluates to a truth value, ``unknown`` for anything else (another source, a
stride, a float, a value the call does not give, an error while evaluating).
Never imports torch."""

from __future__ import annotations

import ast
from collections.abc import Callable

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import parse_guards
from fxcache_core.lookup.binding import TensorArg

_Resolve = Callable[[ast.expr], object]


class _Unknown(Exception):
    pass


def _dim(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) is int):
        return -node.operand.value
    raise _Unknown


class _Sizes(ast.NodeTransformer):
    """Replaces each size and int of the dict's items by a placeholder ``L['tN']``."""

    def __init__(self, resolve: _Resolve) -> None:
        self.resolve = resolve
        self.values: dict[str, int] = {}

    def _place(self, value: int) -> ast.expr:
        name = f"t{len(self.values)}"
        self.values[name] = value
        return ast.Subscript(ast.Name("L", ast.Load()), ast.Constant(name), ast.Load())

    def _size(self, tensor: ast.expr, dim: ast.expr) -> ast.expr:
        try:
            v = self.resolve(tensor)
        except (ValueError, KeyError):
            raise _Unknown from None
        if not isinstance(v, TensorArg):
            raise _Unknown
        d = _dim(dim)
        if not -len(v.shape) <= d < len(v.shape):
            raise _Unknown
        return self._place(v.shape[d])

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        c = node.value
        if (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "size"
                and not c.args and not c.keywords):
            return self._size(c.func.value, node.slice)  # L['kwargs']['x'].size()[1]
        try:
            v = self.resolve(node)
        except (ValueError, KeyError):
            raise _Unknown from None
        if type(v) is not int:
            raise _Unknown
        return self._place(v)  # L['kwargs']['n']: an int the call gives

    def visit_Call(self, node: ast.Call) -> ast.expr:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "size" and len(node.args) == 1 and not node.keywords:
            return self._size(f.value, node.args[0])  # L['kwargs']['x'].size(1)
        self.generic_visit(node)
        return node


def size_guard(tree: ast.expr, resolve: _Resolve) -> str:
    """``pass``, ``fail`` or ``unknown`` for a recorded guard ``tree`` on a dict whose
    sources ``resolve`` gives the call's values of (a
    :class:`~fxcache_core.lookup.binding.TensorArg`, an int, ...; ``ValueError`` or
    ``KeyError`` for a source it cannot): the guard evaluated as torch evaluates it, where
    it is arithmetic of the sizes of the tensors and of the ints the call gives."""
    sizes = _Sizes(resolve)
    try:
        new = sizes.visit(ast.fix_missing_locations(ast.Expression(body=ast.parse(ast.unparse(tree),
                                                                                   mode="eval").body)))
    except (_Unknown, RecursionError, SyntaxError, ValueError):
        return "unknown"
    if not sizes.values:
        return "unknown"
    try:
        expr = parse_guards(ast.unparse(new))
    except (GuardParseError, RecursionError, ValueError):
        return "unknown"
    if set(expr.placeholders) - set(sizes.values):
        return "unknown"
    verdict = expr.evaluate(sizes.values)
    if verdict.status == "pass":
        return "pass"
    failure = verdict.first_failure
    return "fail" if verdict.status == "fail" and failure is not None and failure.status == "fail" else "unknown"


__all__ = ["size_guard"]
