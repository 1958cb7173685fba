"""The op lines of a printed graph (``aot_forward_graph_str``,
``inductor_post_grad_graph_str``), each with the ``# File: PATH:LINE in FN, code: ...``
comment it follows: where the rules that read a graph's constants (floats, ints, dtypes)
find the ops one statement was traced into. Reads text only."""

from __future__ import annotations

import ast
import io
import re
from collections.abc import Iterator

from fxcache_core.decode.origins import graph_comment

MAX_LINES = 100_000
"""Lines of a printed graph read at most (a graph that prints more is read in part)."""


def traced_lines(graph: str) -> Iterator[tuple[str, int, str, str]]:
    """``(file, line, code, text)`` for each line of ``graph`` that is not a comment and
    follows one (lines before the first comment, the signature, are left out), ``text``
    without its ``;  x = None`` tail; of the first :data:`MAX_LINES` lines."""
    where: tuple[str, int, str] | None = None
    for n, text in enumerate(graph.splitlines()):
        if n >= MAX_LINES:
            return
        c = graph_comment(text)
        if c is not None:
            where = (c.file, c.line, c.code or "")
        elif where is not None:
            yield (*where, text.split(";  ", 1)[0])


OP_RE = re.compile(r"=\s*torch\.ops\.(?P<target>(?:aten|prims)\.(?P<op>\w+)\.\w+)\((?P<args>.*)\)")
"""An aten or prims op's call on a printed graph line: the op's name (its stem, without
the overload) and its arguments' text."""


def op_lines(graph: str) -> Iterator[tuple[str, int, re.Match[str], ast.expr | None]]:
    """``(file, line, match, parsed)`` for each aten or prims op line of
    :func:`traced_lines`: ``match`` of :data:`OP_RE` (``op``: the op's stem, ``add``;
    ``target``: ``aten.add.Tensor``), ``parsed`` the ``ast`` of ``f(<its arguments>)``
    (never run; a :class:`ast.Call` where the arguments read as a call's), None where
    they do not parse."""
    for file, line, _code, text in traced_lines(graph):
        m = OP_RE.search(text)
        if m is None:
            continue
        try:
            parsed: ast.expr | None = ast.parse(f"f({m.group('args')})", mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            parsed = None
        yield file, line, m, parsed


def op_calls(graph: str) -> Iterator[tuple[str, int, str, ast.Call]]:
    """``(file, line, op, call)`` for each op line of :func:`op_lines` whose arguments
    parse as a call's: ``op`` the op's stem (``add``), ``call`` the parsed
    ``f(<its arguments>)``."""
    for file, line, m, call in op_lines(graph):
        if isinstance(call, ast.Call):
            yield file, line, m.group("op"), call


def signature_lines(graph: str) -> list[str]:
    """The lines of ``graph`` before its first stack-trace comment (its ``def forward(...)``),
    of the first :data:`MAX_LINES`."""
    out = []
    for n, text in enumerate(io.StringIO(graph)):  # stops at the comment: not the whole graph split
        if n >= MAX_LINES or graph_comment(text) is not None:
            break
        out.append(text.rstrip("\r\n"))
    return out


__all__ = ["MAX_LINES", "OP_RE", "op_calls", "op_lines", "signature_lines", "traced_lines"]
