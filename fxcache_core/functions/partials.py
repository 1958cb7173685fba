"""The arguments a ``functools.partial`` of the compiled function binds, read from its source.

``torch.compile(functools.partial(f, scale=3.0))`` compiles ``f``'s frame: the cache
records ``f`` (its file, line and parameters), and Dynamo traced it with the values the
partial passes. A call of the partial that leaves ``scale`` out gives ``f`` the
partial's 3.0, where a call of ``f`` itself would give ``f``'s default: the same
description, two frames' arguments. :func:`partial_bindings` finds the partials of a
function in the file that defines it (``partial(f, ...)`` or ``functools.partial(f, ...)``
anywhere in the module, its name as the first argument), so that ``match`` does not take
a parameter left out for its default where a partial may supply it. A partial made in
another file is not seen. The source is parsed with ``ast``, never run or imported;
never imports torch.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from fxcache_core.functions.sources import Stamp, _stat
from fxcache_core.functions.trees import _parse

__all__ = ["PartialBinding", "partial_bindings"]


@dataclass(frozen=True, slots=True)
class PartialBinding:
    """One ``functools.partial`` of a function in its own source file.

    Attributes:
        line: the line of the ``partial(...)`` call.
        positional: how many leading positional arguments it binds.
        keywords: the keyword arguments it binds, by name, as written (``scale=3.0``).
    """

    line: int
    positional: int
    keywords: tuple[tuple[str, str], ...]


def _is_partial(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "partial") or (
        isinstance(node, ast.Attribute) and node.attr == "partial"
    )


def partial_bindings(file: str, function: str) -> tuple[PartialBinding, ...]:
    """Every ``partial(function, ...)`` in ``file`` (``function`` named by its bare name
    as the first argument), in source order; () where there is none or the file cannot be
    read (then nothing is known either way)."""
    st = _stat(file)
    if st is None:
        return ()
    return _bindings(file, st[0], st[1]).get(function, ())


@functools.lru_cache(maxsize=64)
def _bindings(file: str, size: int, stamp: Stamp) -> dict[str, tuple[PartialBinding, ...]]:
    """Every function's :func:`partial_bindings` in ``file``, from one walk of its tree."""
    tree = _parse(file)
    if tree is None:
        return {}
    out: dict[str, list[PartialBinding]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_partial(node.func) and node.args):
            continue
        first = node.args[0]
        if not isinstance(first, ast.Name):
            continue
        kws = tuple((k.arg, ast.unparse(k.value)[:80]) for k in node.keywords if k.arg is not None)
        out.setdefault(first.id, []).append(PartialBinding(node.lineno, len(node.args) - 1, kws))
    return {f: tuple(sorted(b, key=lambda b: b.line)) for f, b in out.items()}
