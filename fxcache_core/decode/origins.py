"""Where a compiled graph's code came from, read from the text torch stores with it.

Two records, both written by torch and read here as text (never run): the
``# File: f.py:12 in fn, code: ...`` comments heading each run of nodes in a printed
FX graph (``append_stacktrace_summary`` in torch/fx/graph.py), read by
:func:`parse_origin`; and an FX entry's ``cache_linemap``, the user stack of each op
(``CompiledFxGraph.cache_linemap`` in torch/_inductor/output_code.py), whose shared
outer frames :func:`parse_linemap_frames` reads. :class:`Origin` holds both.
Every read is bounded in lines, matches and frames.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from fxcache_core.decode.unpickler import Stub, plain

__all__ = ["MAX_GRAPH_LINES", "MAX_LINEMAP_ITEMS", "MAX_OUTER_FRAMES", "Origin", "TracedAt", "graph_comment",
           "linemap_stacks", "parse_linemap_frames", "parse_origin", "stack_frames", "stacks_frames"]

MAX_GRAPH_LINES = 100_000
"""How many lines of a printed graph or compiled module fxcache reads at most."""

_ORIGIN_RE = re.compile(r"File: (.{1,1000}?):([0-9]{1,9}) in ([\w.<>]{1,200}), code:")


@dataclass(frozen=True)
class Origin:
    """Where the traced code came from: the first ``# File: f.py:12 in fn`` of the graph.

    ``function`` is the frame the first traced op sits in (the compiled
    function, or a function it inlined), ``file``/``line`` that op;
    ``functions`` every frame named in the graph, in order of appearance;
    ``outer`` the frames every op's full user stack passes through, outermost
    (the frame Dynamo compiled) first, as ``(function, file, line)`` with the line
    of the first op (FX entries: from ``cache_linemap``, see
    :func:`parse_linemap_frames`; see fxcache_core/functions/frames.py).
    """

    function: str
    file: str
    line: int
    functions: tuple[str, ...] = ()
    outer: tuple[tuple[str, str, int], ...] = ()

    def __str__(self) -> str:
        return f"{self.function} ({self.file}:{self.line})"

    def traced_from(self, name: str) -> bool:
        """Whether the graph was traced through function ``name``: one of its
        frames, or the frame Dynamo resumes ``name`` in after a graph break
        (``torch_dynamo_resume_in_<name>_at_<line>``, torch/_dynamo/resume_execution.py)."""
        prefix = f"torch_dynamo_resume_in_{name}_at_"
        return any(f == name or (f.startswith(prefix) and f[len(prefix):].isascii() and f[len(prefix):].isdigit())
                   for f in self.functions)


def parse_origin(graph_str: str | None) -> Origin | None:
    """The source locations annotated in a printed FX graph, if any.

    torch/fx/graph.py (``append_stacktrace_summary``) heads each run of nodes
    with a comment ``# File: f.py:12 in fn, code: ...``; torch 2.14+ writes
    ``# Backward of forward node: File: ...`` above the nodes of a backward
    graph, and any version may put an annotation or recompute tag between the
    ``#`` and ``File:``. Reads line by line (at most :data:`MAX_GRAPH_LINES`,
    and at most three ``File:`` per line), so the cost is linear in the
    string whatever it holds.
    """
    first = None
    names: list[str] = []
    for n, line in enumerate((graph_str or "").splitlines()):
        if n >= MAX_GRAPH_LINES:
            break
        m = _origin_in(line)
        if m is None:
            continue
        if first is None:
            first = m
        if m.group(3) not in names:
            names.append(m.group(3))
    if first is None:
        return None
    return Origin(first.group(3), first.group(1), int(first.group(2)), tuple(names))


def _origin_in(line: str) -> re.Match[str] | None:
    """The ``File: f.py:12 in fn, code:`` of a comment line, or None."""
    at = line.find("File: ")
    if at < 0 or not line[:at].lstrip().startswith("#"):
        return None
    for _ in range(3):
        m = _ORIGIN_RE.match(line, at)
        if m is not None:
            return m
        at = line.find("File: ", at + 1)
        if at < 0:
            return None
    return None


_STACK_FRAME_RE = re.compile(r'^\s*File "(.{1,1000})", line ([0-9]{1,9}), in ([\w.<>]{1,200})\s*$')
_COMMENT_RE = re.compile(r"^\s*#.{0,200}?File: (.{1,1000}?):([0-9]{1,9}) in ([\w.<>]{1,200}), code:(.*)$")
MAX_LINEMAP_ITEMS = 20_000
MAX_OUTER_FRAMES = 64


class TracedAt(NamedTuple):
    """A source line a printed graph's comment or a stack's frame names: ``file`` and
    ``line`` as recorded, the frame's ``function``, and ``code``, the line's text as torch
    read it (``traceback.FrameSummary.line``: stripped); None for a stack frame printed
    without its text."""

    file: str
    line: int
    function: str
    code: str | None


def graph_comment(text: str) -> TracedAt | None:
    """The ``# File: PATH:LINE in FN, code: TEXT`` comment that heads a run of nodes in a
    printed FX graph (``_parse_stack_trace`` and ``append_stacktrace_summary`` in
    torch/fx/graph.py), or None for a line that is not one. An annotation or recompute
    tag may sit between ``#`` and ``File:`` (torch 2.14+ writes ``# Annotation: {...}
    File: ...``); ``code`` is the rest of the line, without the one space before it."""
    m = _COMMENT_RE.match(text)
    if m is None:
        return None
    code = m.group(4)
    return TracedAt(m.group(1), int(m.group(2)), m.group(3), code[1:] if code.startswith(" ") else code)


def stack_frames(stack: str, max_lines: int | None = None) -> Iterator[TracedAt]:
    """Each frame of a formatted stack (``traceback.format_list``: ``File "PATH", line N,
    in FN`` and, where the line was read, its text on the next line, stripped as ``code``),
    outermost first; of its first ``max_lines`` lines (all where None)."""
    lines = stack.splitlines()
    if max_lines is not None:
        lines = lines[:max_lines]
    for i, text in enumerate(lines):
        m = _STACK_FRAME_RE.match(text)
        if m is None:
            continue
        code = lines[i + 1] if i + 1 < len(lines) else None
        code = None if code is None or _STACK_FRAME_RE.match(code) is not None else code.strip()
        yield TracedAt(m.group(1), int(m.group(2)), m.group(3), code)


def linemap_stacks(linemap: Any) -> Iterator[str]:
    """The stack texts of an FX entry's ``cache_linemap`` (a list of ``(line in the
    generated code, stack trace)``, ``CompiledFxGraph.cache_linemap`` in
    torch/_inductor/output_code.py), of its first :data:`MAX_LINEMAP_ITEMS` items; none
    where it is not such a list."""
    if isinstance(linemap, Stub) and linemap.stub_name == "list":
        linemap = plain(linemap)
    if not isinstance(linemap, (list, tuple)):
        return
    for item in linemap[:MAX_LINEMAP_ITEMS]:
        text = item[1] if isinstance(item, (list, tuple)) and len(item) == 2 else None
        if isinstance(text, str):
            yield text


def parse_linemap_frames(linemap: Any) -> tuple[tuple[str, str, int], ...]:
    """The outer frames shared by every stack of a ``cache_linemap``.

    ``CompiledFxGraph.cache_linemap`` (torch/_inductor/output_code.py) is a list
    of ``(line in the generated code, stack trace)``; each stack trace is the
    user stack of an op as Python prints it (``File "f.py", line 12, in fn``),
    outermost first, frames inside torch left out by Dynamo. Returns the frames
    all of them share by ``(file, function)``, each with the line it had in the
    first stack; () when there is none. At most :data:`MAX_LINEMAP_ITEMS` items
    and :data:`MAX_OUTER_FRAMES` frames are read. A stack that begins with the
    lines the frames shared so far were read from shares them all, unread (the ops
    of one model mostly do).
    """
    return stacks_frames(linemap_stacks(linemap))


def stacks_frames(stacks: Iterable[str]) -> tuple[tuple[str, str, int], ...]:
    """:func:`parse_linemap_frames` of a linemap's stack texts (:func:`linemap_stacks`):
    the outer frames they all share."""
    common: list[tuple[str, str, int]] | None = None
    head: str | None = None  # a stack's text through the line of its last frame of `common`
    for text in stacks:
        if head is not None and text.startswith(head):
            continue
        frames, ends = _frames_read(text, MAX_OUTER_FRAMES if common is None else min(len(common), MAX_OUTER_FRAMES))
        if not frames:
            continue
        if common is None:
            common = frames
        else:
            n = 0
            while n < min(len(common), len(frames)) and common[n][:2] == frames[n][:2]:
                n += 1
            common = common[:n]
            if not common:
                break
        head = text[: ends[len(common) - 1]]
        if not head.endswith("\n"):  # a line ended otherwise: no stack is taken to begin with it
            head = None
    return tuple(common or ())


_LINE_ENDS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
"""The characters that end a line for ``str.splitlines`` (a CR LF pair ends one too)."""


def _frames_read(stack: str, limit: int) -> tuple[list[tuple[str, str, int]], list[int]]:
    """The first ``limit`` frames of ``stack`` as :func:`stack_frames` reads them, as
    ``(function, file, line)``, and where the line of each ends in ``stack``."""
    frames: list[tuple[str, str, int]] = []
    ends: list[int] = []
    at = 0
    for line in stack.splitlines(keepends=True):
        at += len(line)
        if line.endswith("\r\n"):
            line = line[:-2]
        elif line and line[-1] in _LINE_ENDS:
            line = line[:-1]
        m = _STACK_FRAME_RE.match(line)
        if m is not None:
            frames.append((m.group(3), m.group(1), int(m.group(2))))
            ends.append(at)
            if len(frames) >= limit:
                break
    return frames, ends
