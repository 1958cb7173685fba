"""Parsers of the text torch prints into an entry: graph signatures, debug lines and
the ``get_args()`` harness (``# File:`` annotations and ``cache_linemap`` stacks are
:mod:`fxcache_core.decode.origins`'s).

Each is pure (text in, frozen values out) and bounded in the lines it reads;
:mod:`fxcache_core.decode.entries` calls them on an entry's fields and treats
any one that raises as that field being absent, never the entry being invalid.
Never executes anything, never imports torch. Formats mirror torch 2.13:
torch/fx/graph.py (``print_readable``, ``append_stacktrace_summary``),
torch/_inductor/codecache.py (the debug lines), torch/_inductor/codegen/wrapper.py
(``benchmark_compiled_module``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fxcache_core.decode.origins import MAX_GRAPH_LINES


class TextMemo:
    """A pure parser of one text (or a tuple of texts) that remembers its last
    :attr:`ITEMS` answers by the text (compared by equality: a hit is the answer the
    parser gives, exactly); a text of more than :attr:`MAX_CHARS` characters is parsed
    each time and never kept alive. An exception is not remembered. The entries of one
    key print the same graph, so a key's entries, decoded one after another, parse it
    once.

    The texts are compared, not hashed: each entry's are new objects, whose hash (read
    whole) would cost more than comparing them with the few kept (a length apart, or
    a difference in the first bytes, settles it; equal ones are one ``memcmp``)."""

    ITEMS = 16
    MAX_CHARS = 1 << 20

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.last: list[tuple[str | tuple[str, ...], Any]] = []  # most recent first

    def __call__(self, text: str | tuple[str, ...] | None) -> Any:
        if text is None or (len(text) if isinstance(text, str) else sum(map(len, text))) > self.MAX_CHARS:
            return self.fn(text)
        last = self.last
        for n, (was, got) in enumerate(last):
            if was == text:
                if n:
                    last.insert(0, last.pop(n))
                return got
        got = self.fn(text)
        last.insert(0, (text, got))
        if len(last) > self.ITEMS:
            last.pop()
        return got


_SYM_RE = re.compile(r"^Sym\((.+)\)$")
_PLACEHOLDER_RE = re.compile(
    r'^\s*(?:def forward\(self,\s*)?(\w+): "([^"]*)",?\s*(?:#\s*(.*))?$'
)
_INLINE_SIG_RE = re.compile(r'(\w+): "([^"]*)"')
_AOT_IDX_RE = re.compile(r"^PlainAOTInput\(idx=([0-9]+)\)")
_EXAMPLE_INPUT_RE = re.compile(r"^\[\w+\] example_inputs\[([0-9]+)\]: (.*)$", re.S)
_SYMINT_TEXT_RE = re.compile(r"\('([^']+)',\)")
_UNBACKED_RE = re.compile(r"\bu[0-9]+\b")
_SYMBOL_RE = re.compile(r"^[a-z]+[0-9]+$")


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


def example_run(debug_lines: Iterable[str]) -> tuple[str, ...]:
    """The ``example_inputs[i]: ...`` lines of an FX key's debug lines, read up to the
    end of their run (torch writes them in one run, after ``gm``: the ~600 others
    follow, never read). Never raises."""
    run: list[str] = []
    for line in debug_lines:
        if line.find("] example_inputs[", 0, 80) < 0:
            if run:
                break
            continue
        run.append(line)
    return tuple(run)


def _parse_example_run(run: tuple[str, ...]) -> tuple[GraphInput, ...]:
    out: list[GraphInput] = []
    for line in run:
        m = _EXAMPLE_INPUT_RE.match(line)
        if not m:
            continue
        text = m.group(2).strip()
        sym = _SYMINT_TEXT_RE.fullmatch(text)
        out.append(GraphInput(position=int(m.group(1)), name=None, type=text,
                              expr=sym.group(1) if sym else None))
    out.sort(key=lambda g: g.position)
    return tuple(out)


parse_example_run = TextMemo(_parse_example_run)
"""The graph inputs of the lines :func:`example_run` gives (remembered by them)."""


_LINE_RE = re.compile("([^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*)"
                      "(\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|$)")
"""A line and its end, as ``str.splitlines`` draws them."""


def head_lines(text: str, n: int) -> Iterator[str]:
    """The first ``n`` items of ``text.splitlines()``, one at a time, without splitting
    the rest of ``text`` (a reader that stops at its first line of another kind reads
    only the head)."""
    pos, end = 0, len(text)
    for _ in range(n):
        if pos >= end:
            return
        m = _LINE_RE.match(text, pos)
        assert m is not None  # the pattern matches at any position
        yield m.group(1)
        pos = m.end()


_HINT_RE = re.compile(r"^([a-z]+[0-9]+) = (-?[0-9]{1,40})$")
"""How many lines of a printed graph or compiled module fxcache reads at most."""


def parse_hints(runnable: str | None) -> tuple[tuple[str, int], ...]:
    """Symbol values from the ``s77 = 4`` lines that head ``runnable_graph_str``.

    Torch 2.13 fills that field on every compile; from 2.14 on it is empty unless
    a structured trace is on (torch/_inductor/compile_fx.py builds it inside
    ``trace_structured``'s payload function), so :func:`parse_get_args` is the
    source every version fills.
    """
    out = []
    for line in head_lines(runnable or "", 1000):
        m = _HINT_RE.match(line.strip())
        if m:
            out.append((m.group(1), int(m.group(2))))
        elif line.strip():
            break
    return tuple(out)


_GET_ARGS = "\ndef get_args():\n"
_ARG_LINE_RE = re.compile(r"    ([A-Za-z_]\w{0,200}) = (-?[0-9]{1,40})")
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
    harness = _get_args(source_code)
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
    for sym, value in _hints(runnable):
        out.setdefault(sym, value)
    return tuple(out.items())


_get_args = TextMemo(parse_get_args)  # read here only: its dict is never changed
_hints = TextMemo(parse_hints)
