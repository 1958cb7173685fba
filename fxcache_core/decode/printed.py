"""Parsers of the text torch prints into an entry: graph signatures, debug lines,
the ``get_args()`` harness, ``# File:`` annotations and ``cache_linemap`` stacks.

Each is pure (text in, frozen values out) and bounded in the lines it reads;
:mod:`fxcache_core.decode.entries` calls them on an entry's fields and treats
any one that raises as that field being absent, never the entry being invalid.
Never executes anything, never imports torch. Formats mirror torch 2.13:
torch/fx/graph.py (``print_readable``, ``append_stacktrace_summary``),
torch/_inductor/codecache.py (the debug lines), torch/_inductor/codegen/wrapper.py
(``benchmark_compiled_module``) and torch/_inductor/output_code.py (``cache_linemap``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fxcache_core.decode.unpickler import Stub, plain

_SYM_RE = re.compile(r"^Sym\((.+)\)$")
_PLACEHOLDER_RE = re.compile(
    r'^\s*(?:def forward\(self,\s*)?(\w+): "([^"]*)",?\s*(?:#\s*(.*))?$'
)
_INLINE_SIG_RE = re.compile(r'(\w+): "([^"]*)"')
_AOT_IDX_RE = re.compile(r"^PlainAOTInput\(idx=(\d+)\)")
_EXAMPLE_INPUT_RE = re.compile(r"^\[\w+\] example_inputs\[(\d+)\]: (.*)$", re.S)
_UNBACKED_RE = re.compile(r"\bu\d+\b")
_SYMBOL_RE = re.compile(r"^[a-z]+\d+$")


@dataclass(frozen=True)
class GraphInput:
    """One placeholder of a compiled graph.

    Attributes:
        position: index among the graph's placeholders.
        name: placeholder name (``arg0_1``, ``primals_3``) where known.
        type: the printed type: ``Sym(s77)`` for a SymInt, ``f32[s77, 4][4, 1]cpu``
            for a tensor (from the graph string), or the debug line's text.
        expr: for a SymInt input, its sympy expression as text (``s77``).
        aot_index: the AOTAutograd flat-argument index (``PlainAOTInput(idx=N)``).
        source: the Dynamo source of that argument (``L['x'].size()[0]``).
    """

    position: int
    name: str | None
    type: str
    expr: str | None = None
    aot_index: int | None = None
    source: str | None = None

    @property
    def is_symint(self) -> bool:
        return self.expr is not None

    @property
    def is_backed_symint(self) -> bool:
        """A SymInt with a hint: torch passes these as ``tN`` to the guards."""
        return self.expr is not None and _UNBACKED_RE.search(self.expr) is None

    @property
    def symbol(self) -> str | None:
        """The symbol when the SymInt is a plain symbol (``s77``), else None."""
        return self.expr if self.expr and _SYMBOL_RE.match(self.expr) else None


def parse_graph_signature(graph_str: str | None) -> tuple[GraphInput, ...]:
    """Placeholders of a printed FX graph (``print_readable`` output).

    Understands both the one-line ``def forward(self, a: "T", ...)`` form and
    the one-placeholder-per-line form with ``# PlainAOTInput(idx=N)`` comments.
    """
    if not graph_str:
        return ()
    lines = graph_str.splitlines()
    start = next((i for i, ln in enumerate(lines) if "def forward(" in ln), None)
    if start is None:
        return ()
    out: list[GraphInput] = []
    head = lines[start]
    if head.rstrip().endswith("):"):  # one-line signature
        for name, typ in _INLINE_SIG_RE.findall(head):
            out.append(_graph_input(len(out), name, typ, None))
        return tuple(out)
    for ln in lines[start + 1:]:
        if ln.strip().startswith("):"):
            break
        m = _PLACEHOLDER_RE.match(ln)
        if m:
            out.append(_graph_input(len(out), m.group(1), m.group(2), m.group(3)))
    return tuple(out)


def _graph_input(pos: int, name: str, typ: str, comment: str | None) -> GraphInput:
    sym = _SYM_RE.match(typ)
    idx = None
    if comment:
        m = _AOT_IDX_RE.match(comment.strip())
        idx = int(m.group(1)) if m else None
    return GraphInput(position=pos, name=name, type=typ, expr=sym.group(1) if sym else None,
                      aot_index=idx)


def parse_example_inputs(debug_lines: tuple[str, ...]) -> tuple[GraphInput, ...]:
    """Graph inputs from an FX key's debug lines (``example_inputs[i]: ...``).

    A SymInt input is printed as ``('s77',)`` (how ``FxGraphCachePickler``
    reduces a SymInt); a tensor as ``TensorMetadata(...)``.
    """
    out: list[GraphInput] = []
    seen = False
    for line in debug_lines:
        if line.find("] example_inputs[", 0, 80) < 0:
            if seen:
                break  # torch writes the example inputs in one run (after gm): the ~600 others follow
            continue
        seen = True
        m = _EXAMPLE_INPUT_RE.match(line)
        if not m:
            continue
        text = m.group(2).strip()
        sym = re.fullmatch(r"\('([^']+)',\)", text)
        out.append(GraphInput(position=int(m.group(1)), name=None, type=text,
                              expr=sym.group(1) if sym else None))
    out.sort(key=lambda g: g.position)
    return tuple(out)


_HINT_RE = re.compile(r"^([a-z]+\d+) = (-?\d{1,40})$")
MAX_GRAPH_LINES = 100_000
"""How many lines of a printed graph or compiled module fxcache reads at most."""


def parse_hints(runnable: str | None) -> tuple[tuple[str, int], ...]:
    """Symbol values from the ``s77 = 4`` lines that head ``runnable_graph_str``.

    Torch 2.13 fills that field on every compile; from 2.14 on it is empty unless
    a structured trace is on (torch/_inductor/compile_fx.py builds it inside
    ``trace_structured``'s payload function), so :func:`parse_get_args` is the
    source every version fills.
    """
    out = []
    for line in (runnable or "").splitlines()[:1000]:
        m = _HINT_RE.match(line.strip())
        if m:
            out.append((m.group(1), int(m.group(2))))
        elif line.strip():
            break
    return tuple(out)


_GET_ARGS = "\ndef get_args():\n"
_ARG_LINE_RE = re.compile(r"    ([A-Za-z_]\w{0,200}) = (-?\d{1,40})")
_RETURN_RE = re.compile(r"    return \[([\w, ]*)\]")


@dataclass(frozen=True)
class HarnessArgs:
    """The int inputs of the benchmark harness torch writes into every
    ``CompiledFxGraph.source_code``.

    ``PythonWrapperCodegen.benchmark_compiled_module`` in
    torch/_inductor/codegen/wrapper.py (2.13 to 2.15) writes ``def get_args():``
    with one line per graph input in placeholder order: ``argN_1 = <int>`` for
    a SymInt input (its value when the graph was compiled: a backed symbol's
    hint; an unbacked one gets a made-up fallback), ``argN_1 = rand_strided(...)``
    for a tensor, then ``return [arg0_1, arg1_1, ...]``.

    Attributes:
        ints: placeholder name -> the int written for it.
        order: the placeholder names of the ``return`` line, in graph order
            (empty when that line was not found).
    """

    ints: dict[str, int]
    order: tuple[str, ...]


def parse_get_args(source_code: str | None) -> HarnessArgs:
    """The ``get_args()`` harness of a compiled module's source (see :class:`HarnessArgs`).

    Reads only the last ``def get_args():`` block, at most
    :data:`MAX_GRAPH_LINES` lines of it; anything else gives empty results.
    """
    ints: dict[str, int] = {}
    if not source_code:
        return HarnessArgs(ints, ())
    start = source_code.rfind(_GET_ARGS)
    if start < 0:
        return HarnessArgs(ints, ())
    pos = start + len(_GET_ARGS)
    for _ in range(MAX_GRAPH_LINES):
        end = source_code.find("\n", pos)
        line = source_code[pos:] if end < 0 else source_code[pos:end]
        if not line.startswith("    "):
            break
        if m := _ARG_LINE_RE.fullmatch(line):
            ints[m.group(1)] = int(m.group(2))
        elif m := _RETURN_RE.fullmatch(line):
            return HarnessArgs(ints, tuple(n.strip() for n in m.group(1).split(",") if n.strip()))
        if end < 0:
            break
        pos = end + 1
    return HarnessArgs(ints, ())


def symbol_hints(inputs: tuple[GraphInput, ...], source_code: str | None,
                 runnable: str | None = None) -> tuple[tuple[str, int], ...]:
    """The compile-time value of each symbol of a graph's backed SymInt inputs.

    From the ``get_args()`` harness of ``source_code`` (:func:`parse_get_args`,
    written by every torch version): the value of placeholder ``argN_1``
    (by name, else by position in the harness's ``return`` list) is the hint of
    its symbol. Inputs that are expressions (``Sym(2*s17)``) or unbacked
    (``u0``: the harness writes a made-up value) give none. ``runnable``
    (``runnable_graph_str``, filled by torch 2.13) adds the symbols the harness
    did not give, where it has them.
    """
    harness = parse_get_args(source_code)
    out: dict[str, int] = {}
    for inp in inputs:
        sym = inp.symbol
        if sym is None or not inp.is_backed_symint or sym in out:
            continue
        name = inp.name
        if name is None and 0 <= inp.position < len(harness.order):
            name = harness.order[inp.position]
        if name is not None and name in harness.ints:
            out[sym] = harness.ints[name]
    for sym, value in parse_hints(runnable):
        out.setdefault(sym, value)
    return tuple(out.items())


_ORIGIN_RE = re.compile(r"File: (.{1,1000}?):(\d{1,9}) in ([\w.<>]{1,200}), code:")


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
        return any(f == name or (f.startswith(prefix) and f[len(prefix):].isdigit())
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


_STACK_FRAME_RE = re.compile(r'^\s*File "(.{1,1000})", line (\d{1,9}), in ([\w.<>]{1,200})\s*$')
MAX_LINEMAP_ITEMS = 20_000
MAX_OUTER_FRAMES = 64


def parse_linemap_frames(linemap: Any) -> tuple[tuple[str, str, int], ...]:
    """The outer frames shared by every stack of a ``cache_linemap``.

    ``CompiledFxGraph.cache_linemap`` (torch/_inductor/output_code.py) is a list
    of ``(line in the generated code, stack trace)``; each stack trace is the
    user stack of an op as Python prints it (``File "f.py", line 12, in fn``),
    outermost first, frames inside torch left out by Dynamo. Returns the frames
    all of them share by ``(file, function)``, each with the line it had in the
    first stack; () when there is none. At most :data:`MAX_LINEMAP_ITEMS` items
    and :data:`MAX_OUTER_FRAMES` frames are read.
    """
    if isinstance(linemap, Stub) and linemap.stub_name == "list":
        linemap = plain(linemap)
    if not isinstance(linemap, (list, tuple)):
        return ()
    common: list[tuple[str, str, int]] | None = None
    for item in linemap[:MAX_LINEMAP_ITEMS]:
        text = item[1] if isinstance(item, (list, tuple)) and len(item) == 2 else None
        if not isinstance(text, str):
            continue
        frames: list[tuple[str, str, int]] = []
        for ln in text.splitlines():
            m = _STACK_FRAME_RE.match(ln)
            if m is not None:
                frames.append((m.group(3), m.group(1), int(m.group(2))))
                if common is not None and len(frames) >= len(common):
                    break
                if len(frames) >= MAX_OUTER_FRAMES:
                    break
        if not frames:
            continue
        if common is None:
            common = frames
            continue
        n = 0
        while n < min(len(common), len(frames)) and common[n][:2] == frames[n][:2]:
            n += 1
        common = common[:n]
        if not common:
            break
    return tuple(common or ())
