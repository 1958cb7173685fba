"""Source files parsed whole, for the rules that read what a function's code does.

The rules of ``match`` read whole functions and modules (what a parameter's code
computes, which names a module binds), from the same parse of each file that
:mod:`~fxcache_core.functions.frames` reads its ``def`` s from
(:func:`~fxcache_core.functions.sources._tree_at`): each readable file is parsed by
``ast`` (never run) once per file identity (path, size and
:data:`~fxcache_core.functions.sources.Stamp`: a file changed since is parsed again),
under :func:`~fxcache_core.functions.sources._parse_bounded`'s bounds, with an index of
its ``def`` s built once, in one walk of its statements; the trees last used are kept
up to :data:`TREES_KEPT` tokens and lines in all (about 600 bytes of tree apiece), so a
match over many keys of one model parses its files once. The trees handed out are
shared: a caller that rewrites one works on a copy."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

from fxcache_core.functions.sources import (
    TREES_KEPT,
    Stamp,
    _FunctionDef,
    _stat,
    _Tree,
    _tree_at,
)
from fxcache_core.reasons import Reason

__all__ = ["TREES_KEPT", "defs_by_name", "function_node", "inside_function", "module_node"]


def _tree(path: str) -> _Tree | None:
    """``path`` parsed (see the module docstring), None where it is not read or does not parse."""
    st = _stat(path)
    if st is None:
        return None
    t = _tree_at(path, st[0], st[1])
    return None if isinstance(t, Reason) else t


_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
"""The nodes a ``def`` can sit in: statements, an ``except``'s and a ``case``'s body (never
an expression)."""


def _statements(module: ast.Module) -> Iterator[ast.AST]:
    """The statements of ``module`` (and its ``except`` handlers and ``case`` s) in
    ``ast.walk`` order, without entering an expression: those hold no statement, so
    leaving them out keeps the order of the rest."""
    todo = deque([module])
    while todo:
        node = todo.popleft()
        todo.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, _BLOCKS))
        yield node


def _index(t: _Tree) -> None:
    """Fill ``t``'s ``def`` indexes, in one walk of its statements (:func:`_statements`)."""
    defs: dict[tuple[str, int], _FunctionDef] = {}
    by_name: dict[str, list[_FunctionDef]] = {}
    for n in _statements(t.module):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault((n.name, min([n.lineno, *(d.lineno for d in n.decorator_list)])), n)
            by_name.setdefault(n.name, []).append(n)
    t.defs, t.by_name = defs, {k: tuple(v) for k, v in by_name.items()}


def defs_by_name(
    path: str, size: int, stamp: Stamp
) -> dict[str, tuple[_FunctionDef, ...]] | Reason:
    """Every ``def`` of the source file ``path`` of identity ``(size, stamp)`` (found by
    :func:`~fxcache_core.functions.sources._stat`), by name, each name's in ``ast.walk``
    order; why not where the file is not read or does not parse. Shared: not to be changed."""
    t = _tree_at(path, size, stamp)
    if isinstance(t, Reason):
        return t
    if t.by_name is None:
        _index(t)
    assert t.by_name is not None
    return t.by_name


def _parse(path: str) -> ast.Module | None:
    """``path`` parsed by ``ast`` (never run), or None when it is not a regular ``.py``
    file of at most :data:`~fxcache_core.functions.sources.MAX_SOURCE_BYTES` and
    :data:`~fxcache_core.functions.sources.MAX_SOURCE_NODES`, or does not parse. Shared:
    not to be changed."""
    t = _tree(path)
    return None if t is None else t.module


def module_node(path: str) -> ast.Module | None:
    """The whole of ``path`` parsed by ``ast`` (never run), None where :func:`function_node`
    would not read it."""
    return _parse(path)


def function_node(
    path: str, first_line: int, name: str
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` of ``name`` whose first line (its first decorator's, as
    ``co_firstlineno``) is ``first_line`` in ``path``, parsed by ``ast`` (never run);
    None when the file is not read (:func:`~fxcache_core.functions.frames.unparsed_why`)
    or has no such ``def``. For the rules that read what a function does with a
    parameter (:mod:`fxcache_core.lookup.float_exprs`). The first such ``def`` in
    ``ast.walk`` order where several are."""
    t = _tree(path)
    if t is None:
        return None
    if t.defs is None:
        _index(t)
    assert t.defs is not None
    return t.defs.get((name, first_line))


def inside_function(path: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the ``def`` ``node`` of ``path`` (found by :func:`function_node`) sits in
    another function's body, whose locals its free names may then be (a closure); True
    where ``path`` cannot be read (not known)."""
    t = _tree(path)
    if t is None:
        return True
    if t.scopes is None:
        t.scopes = tuple(
            (n.lineno, n.end_lineno or n.lineno, getattr(n, "name", None))
            for n in ast.walk(t.module)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        )
    lo, hi = node.lineno, node.end_lineno or node.lineno
    return any(
        start <= lo and end >= hi and not (start == lo and name == node.name)
        for start, end, name in t.scopes
    )
