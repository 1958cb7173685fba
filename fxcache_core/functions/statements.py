"""Which lines of a source file are one statement: Python's traceback records a
statement's first line only (``traceback.FrameSummary.line``), so a trace vouches for
none of its other lines (:mod:`fxcache_core.lookup.source_lines`). Parsed by ``ast``,
never run."""

from __future__ import annotations

import ast
import functools

from fxcache_core.functions.sources import Stamp, _stat
from fxcache_core.functions.trees import _parse

__all__ = ["statement_spans"]

_BODY_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def statement_spans(
    path: str, since: int | None = None
) -> tuple[int, dict[int, tuple[int, int]] | None] | None:
    """(the file's mtime in ns, ``{line: (first, last)}``) for the source file recorded as
    ``path``: each line that lies in a statement written over several lines, with that
    statement's first and last line (a compound statement's head only: ``for x in
    (...):`` up to its colon, a ``def``'s decorators, arguments and annotation, never its
    body), parsed by ``ast`` (never run), once per file identity. The map is None where
    the file does not parse; the whole answer None where
    :func:`~fxcache_core.functions.sources.source_lines` does not
    read the file. Python's traceback records only a statement's first line
    (``traceback.FrameSummary.line``), so the others are what a trace cannot vouch for.
    With ``since`` (ns), a file whose mtime is older is not parsed: its map is {}."""
    st = _stat(path)
    if st is None:
        return None
    if since is not None and st[1][0] < since:
        return st[1][0], {}
    return st[1][0], _statement_spans(path, *st)


@functools.lru_cache(maxsize=64)
def _statement_spans(path: str, size: int, stamp: Stamp) -> dict[int, tuple[int, int]] | None:
    tree = _parse(path)
    if tree is None:
        return None
    spans: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first, last = node.lineno, node.lineno
        for name, value in ast.iter_fields(node):
            if name in _BODY_FIELDS:
                continue
            for part in value if isinstance(value, list) else [value]:
                for sub in ast.walk(part) if isinstance(part, ast.AST) else ():
                    first = min(first, getattr(sub, "lineno", first))
                    last = max(last, getattr(sub, "end_lineno", None) or last)
        if not isinstance(node, _COMPOUND):
            last = max(last, node.end_lineno or last)
        if last > first:
            for n in range(first, last + 1):
                lo, hi = spans.get(n, (first, last))
                spans[n] = (min(lo, first), max(hi, last))
    return spans


_COMPOUND = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.Match,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)
