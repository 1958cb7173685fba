"""Source files parsed whole, for the rules that read what a function's code does.

:mod:`~fxcache_core.functions.frames` remembers only each file's ``def`` s; the rules of
``match`` read whole functions and modules (what a parameter's code computes, which
names a module binds). Each readable file is parsed by ``ast`` (never run) once per file
identity (path, size and :data:`~fxcache_core.functions.frames.Stamp`: a file changed
since is parsed again), under :func:`~fxcache_core.functions.frames._parse_bounded`'s
bounds, with an index of its ``def`` s; the trees last used are kept up to
:data:`TREES_KEPT` tokens and lines in all (about 600 bytes of tree apiece), so a match
over many keys of one model parses its files once. The trees handed out are shared:
a caller that rewrites one works on a copy.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from dataclasses import dataclass

from fxcache_core.functions.frames import (
    MAX_SOURCE_NODES,
    Stamp,
    _parse_counted,
    _read_source,
    _stat,
)
from fxcache_core.reasons import Reason

__all__ = ["TREES_KEPT", "defs_by_name", "function_node", "inside_function", "module_node"]

TREES_KEPT = MAX_SOURCE_NODES
"""The parsed trees kept for reuse hold at most this many tokens and lines in all (the
last one parsed is kept whatever its size, until the next)."""
_MAX_FILES = 64


@dataclass(slots=True)
class _Tree:
    """A parsed file, with the indexes :func:`function_node` and :func:`inside_function` read, built when first asked."""

    module: ast.Module
    defs: dict[tuple[str, int], _FunctionDef] | None = None
    scopes: tuple[tuple[int, int, str | None], ...] | None = None
    by_name: dict[str, tuple[_FunctionDef, ...]] | None = None


_FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef
_TREES: OrderedDict[tuple[str, int, Stamp], tuple[_Tree | Reason, int]] = OrderedDict()
_kept = 0


def _tree(path: str) -> _Tree | None:
    """``path`` parsed (see the module docstring), None where it is not read or does not parse."""
    st = _stat(path)
    if st is None:
        return None
    t = _tree_at(path, st[0], st[1])
    return None if isinstance(t, Reason) else t


def _tree_at(path: str, size: int, stamp: Stamp) -> _Tree | Reason:
    """``path`` of identity ``(size, stamp)`` parsed, or why it is not read or does not parse."""
    global _kept
    ident = (path, size, stamp)
    got = _TREES.get(ident)
    if got is not None:
        _TREES.move_to_end(ident)
        return got[0]
    data = _read_source(path)
    parsed = data if isinstance(data, Reason) else _parse_counted(path, data)
    tree, cost = (parsed, 1) if isinstance(parsed, Reason) else (_Tree(parsed[0]), parsed[1])
    _TREES[ident] = (tree, cost)
    _kept += cost
    while len(_TREES) > 1 and (_kept > TREES_KEPT or len(_TREES) > _MAX_FILES):
        _kept -= _TREES.popitem(last=False)[1][1]
    return tree


def _index(t: _Tree) -> None:
    """Fill ``t``'s ``def`` indexes, in one ``ast.walk`` of its module."""
    defs: dict[tuple[str, int], _FunctionDef] = {}
    by_name: dict[str, list[_FunctionDef]] = {}
    for n in ast.walk(t.module):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault((n.name, min([n.lineno, *(d.lineno for d in n.decorator_list)])), n)
            by_name.setdefault(n.name, []).append(n)
    t.defs, t.by_name = defs, {k: tuple(v) for k, v in by_name.items()}


def defs_by_name(path: str, size: int, stamp: Stamp) -> dict[str, tuple[_FunctionDef, ...]] | Reason:
    """Every ``def`` of the source file ``path`` of identity ``(size, stamp)`` (found by
    :func:`~fxcache_core.functions.frames._stat`), by name, each name's in ``ast.walk``
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
    file of at most :data:`~fxcache_core.functions.frames.MAX_SOURCE_BYTES` and
    :data:`~fxcache_core.functions.frames.MAX_SOURCE_NODES`, or does not parse. Shared:
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
