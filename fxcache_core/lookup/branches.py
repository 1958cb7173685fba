"""Which lines of the compiled frame a key's graph has ops from: the side of each
``if`` the trace took.

A printed graph heads each run of nodes with the line they were traced from
(``# File: f.py:6 in clip_flag, code: y = y.clamp(0, 1)``: ``append_stacktrace_summary``
in torch/fx/graph.py; an AOTAutograd entry's ``aot_forward_graph_str``, an FX entry's
``inductor_post_grad_graph_str``), the innermost frame of the op; an FX entry's
``cache_linemap`` (torch/_inductor/output_code.py) keeps the whole user stack of the
ops of each kernel, so an op of a callee gives the line of the call in the compiled
frame too. :func:`traced_code` reads both for one frame (the compiled function's
name and file): the lines that have ops, and the ops (their targets,
``torch.ops.aten.gelu.default``) each line made where the graph says it directly.
Read with the stub unpickler as every entry is; nothing is run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import entry_root
from fxcache_core.decode.origins import MAX_GRAPH_LINES, graph_comment, linemap_stacks, stack_frames
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import run_one, task
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.params import BranchTest
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.lookup.tensor_flow import body_op_into_output

_OP_RE = re.compile(r"^\s*\w+(?:: \"[^\"]*\")? = (torch\.ops\.[\w.]{1,200})\(")


@dataclass(frozen=True, slots=True)
class TracedCode:
    """The lines of one frame that a key's graph has ops from.

    Attributes:
        lines: every line of the frame with an op traced from it (directly, or
            through a call on that line).
        ops: line -> the op targets the printed graph gives that line directly.
    """

    lines: frozenset[int]
    ops: Mapping[int, tuple[str, ...]]


def _printed(graph: str, function: str, file: str, lines: set[int], ops: dict[int, list[str]]) -> None:
    here: int | None = None
    for n, text in enumerate(graph.splitlines()):
        if n >= MAX_GRAPH_LINES:
            break
        c = graph_comment(text)
        if c is not None:
            here = c.line if (c.file, c.function) == (file, function) else None
            if here is not None:
                lines.add(here)
            continue
        if here is not None and (op := _OP_RE.match(text)) is not None:
            ops.setdefault(here, []).append(op.group(1))


def _linemap(linemap: object, function: str, file: str, lines: set[int]) -> None:
    for text in linemap_stacks(linemap):
        for f in stack_frames(text, 200):
            if (f.file, f.function) == (file, function):
                lines.add(f.line)
                break


def traced_code(catalog: Catalog, key: CacheKey, function: str, file: str) -> TracedCode | None:
    """What ``key``'s graph says of frame ``function`` of ``file``: its first readable
    entry's printed graph and, for an FX key or the forward FX entry an AOTAutograd
    key loads, ``cache_linemap``. None when no entry can be read. Each entry is read
    again in a decode worker, under the CPU budget (:mod:`fxcache_core.decode.workers`):
    the file may have changed since the catalog decoded it."""
    first = catalog.first_readable(key)
    if first is None:
        return None
    field = "aot_forward_graph_str" if key.kind is KeyKind.AOT_AUTOGRAD else "inductor_post_grad_graph_str"
    got = _read_lines(first[0], field, key.kind is KeyKind.FX_GRAPH, function, file)
    if got is None:
        return None
    lines, ops = got
    if key.kind is not KeyKind.FX_GRAPH and first[1].forward is not None:
        fx = catalog.fx_entry_for(first[1].forward.key, first[1].forward.guards_expr)
        more = _read_lines(fx, None, True, function, file) if fx is not None else None
        if more is not None:
            lines |= more[0]
    return TracedCode(frozenset(lines), {k: tuple(v) for k, v in ops.items()})


def _read_lines(e: Entry, field: str | None, linemap: bool, function: str, file: str
                ) -> tuple[set[int], dict[int, list[str]]] | None:
    """(lines, ops) of frame ``function`` of ``file`` in entry ``e``'s printed graph
    ``field`` and, with ``linemap``, its ``cache_linemap``; None when it cannot be read."""
    if e.size > MAX_ENTRY_BYTES:
        return None
    got = run_one("traced-lines", [e.file.where, field, linemap, function, file], e.size)
    if not (isinstance(got, list) and len(got) == 2 and isinstance(got[0], list) and isinstance(got[1], dict)):
        return None
    lines = {int(n) for n in got[0] if isinstance(n, int)}
    ops = {int(k): [str(t) for t in v] for k, v in got[1].items() if str(k).isascii() and str(k).isdigit() and isinstance(v, list)}
    return lines, ops


@task("traced-lines")
def _traced_lines_task(arg: list) -> list | None:
    """Worker side of :func:`_read_lines`: ``[path, field, linemap, function, file]`` ->
    ``[lines, {line: ops}]``, or None when the entry cannot be read."""
    where, field, linemap, function, file = arg
    root = entry_root(where)
    if root is None:
        return None
    lines: set[int] = set()
    ops: dict[int, list[str]] = {}
    graph = root.field(field) if field else None
    if isinstance(graph, str):
        _printed(graph, function, file, lines, ops)
    if linemap:
        _linemap(root.field("cache_linemap"), function, file, lines)
    return [sorted(lines), {str(k): v for k, v in ops.items()}]


__all__ = ["TracedCode", "body_makes_op", "traced_code"]


def branch_holds(t: BranchTest, v: object) -> bool | None:
    """:meth:`BranchTest.holds` for the call's value ``v``; for a tensor
    (:class:`~fxcache_core.lookup.binding.TensorArg`), only whether it is None (the rest
    of a test on a tensor depends on its data). None where the test cannot be told."""
    if isinstance(v, TensorArg):
        if t.operand is None and t.op in ("is", "is-not"):
            return t.op == "is-not"
        return None
    return t.holds(v)


def body_makes_op(frame: CompiledFrom, t: BranchTest, inputs: Mapping[str, object], taken: frozenset[str],
                  traced: TracedCode) -> tuple[int, int] | None:
    """Where the body of ``t``, a top-level ``if p is not None:`` without ``else``, would
    put an op into the graph whatever ``p`` is, and ``traced`` (a key's graph) has no op
    from the body but has one from the ``return`` that op's result reaches: (the body's
    line, the return's line), and the key was traced with ``p`` None. The tensors the
    source computes from are the call's tensors (not 0-d, by their sources: ``L['x']``) the key takes as inputs
    (:func:`~fxcache_core.lookup.tensor_flow.body_op_into_output`). None otherwise."""
    m = re.fullmatch(r"(\w+) is not None", t.text)
    if m is None or t.within or t.orelse is not None or t.op != "is-not" or t.operand is not None \
            or any(t.body[0] <= n <= t.body[1] for n in traced.lines):
        return None
    if frame.wrappers or frame.whole_module:
        return None  # a decorator's wrapper or a module's call may pass the function another value of p
    fn = function_node(frame.file, frame.line, frame.function)
    if fn is None:
        return None
    tensors = {n.group(1) for s, v in inputs.items()
               if isinstance(v, TensorArg) and v.shape != () and s in taken and (n := LOCAL_RE.fullmatch(s))}
    got = body_op_into_output(fn, frame.file, m.group(1), t.line, tensors)
    return got if got is not None and got[1] in traced.lines else None
