"""Decoding cache entries without executing them.

An entry file is a pickle of a ``CompiledFxGraph`` (fxgraph/) or an
``AOTAutogradResult`` (aotautograd/). ``pickle.loads`` would import torch and
run whatever callables the pickle names; fxcache never does. Instead the
restricted unpickler of :mod:`fxcache_core.decode.unpickler` reads it into a
tree of inert stubs and plain containers, and :func:`decode_entry` reads the
fields fxcache needs into frozen dataclasses, naming each AOTAutograd input's
Dynamo source through :mod:`fxcache_core.decode.sources` and where its code came from
through :mod:`fxcache_core.decode.origins`. Never executes
anything from the entry, never imports torch.

Why an entry cannot be decoded is an :class:`~fxcache_core.errors.EntryDecodeError`
whose message is a :class:`~fxcache_core.reasons.Reason` (``str(error).code``):
``over-size-limit``, ``over-memory-budget``, ``truncated-pickle``,
``corrupt-pickle``, ``nests-too-deeply``, ``too-many-objects``,
``not-a-compiled-graph``, ``wrong-entry-type``, ``guards-not-a-string``,
``unexpected-content``.

Field names mirror torch 2.13: ``CompiledFxGraph`` in
torch/_inductor/output_code.py, ``AOTAutogradResult``/``CompiledForward``/
``CompiledBackward`` in torch/_functorch/_aot_autograd/aot_autograd_result.py
and autograd_cache.py, ``CacheableAOTConfig`` in schemas.py, and the Dynamo
``Source`` classes in torch/_dynamo/source.py.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Any

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.code_scan import ForeignGlobal, foreign_globals, with_foreign
from fxcache_core.decode.memlimit import budget_for, decoding_budget
from fxcache_core.decode.origins import MAX_GRAPH_LINES, Origin, parse_linemap_frames, parse_origin
from fxcache_core.decode.sources import source_name
from fxcache_core.decode.unpickler import (
    MAX_ENTRY_BYTES,
    GlobalUse,
    Stub,
    load_stubs,
    opt_int,
    opt_str,
    plain,
    str_items,
)
from fxcache_core.errors import EntryDecodeError, EntryTooLarge
from fxcache_core.reasons import Reason

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


# --- decoded entries -----------------------------------------------------------


@dataclass(frozen=True)
class FxRef:
    """What an AOTAutograd entry records of one of its FX graphs.

    Attributes:
        key: the FX graph cache key (``f...``).
        guards_expr: the guards string of the FX entry it was saved with; on an
            AOTAutograd hit torch loads the FX entry whose guards string is
            exactly this one.
        debug_lines: the FX key's debug lines.
    """

    key: str
    guards_expr: str | None
    debug_lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecodedEntry:
    """What fxcache reads out of one entry file, without executing it.

    Attributes:
        kind: the cache it came from.
        type_name: the pickled root class (``torch._inductor.output_code.CompiledFxGraph``).
        guards_expr: the guards string, verbatim; None or "" means no guards (always a hit).
        inputs: the graph's placeholders in order, with sources where known.
        fx_key: FX entries: the key stored inside the entry (``_fx_graph_cache_key``).
        debug_lines: FX entries: the key's debug lines (the components hashed into the key).
        is_backward: FX entries: compiled as a backward graph (``fx_kwargs['is_backward']``).
        wrapper_key: FX entries: the code-cache key of the wrapper module torch
            writes for it (``cache_key``: ``<root>/<key[1:3]>/<key>.py``).
        forward, backward: AOTAutograd entries: the FX graphs it loads.
        arg_sources: AOTAutograd entries: Dynamo source of each flat input
            (``aot_autograd_arg_pos_to_source``), None where unknown.
        compile_time_ns: time the compile took (ns), where stored.
        origin: the user code the graph was traced from, where the stored
            graph string says (``# File: ... in fn``).
        forward_graph: AOTAutograd entries: the forward graph as printed
            (``aot_forward_graph_str``); only in the full form (the index keeps
            the light one, :func:`fxcache_core.state.index.light`, without it).
        hints: FX entries: the value of each symbol when the graph was compiled
            (:func:`symbol_hints`: the ``get_args()`` harness of ``source_code``);
            the entry's guards hold at these values.
        globals_seen: every global the pickle names (for auditing).
        foreign: the globals it names that torch does not write in this kind of
            entry, or uses otherwise (:mod:`fxcache_core.decode.code_scan`), with the
            call torch's ``pickle.load`` would make; empty for what torch wrote.
    """

    kind: KeyKind
    type_name: str
    guards_expr: str | None
    inputs: tuple[GraphInput, ...]
    fx_key: str | None = None
    debug_lines: tuple[str, ...] = ()
    is_backward: bool | None = None
    wrapper_key: str | None = None
    forward: FxRef | None = None
    backward: FxRef | None = None
    arg_sources: tuple[str | None, ...] = ()
    compile_time_ns: int | None = None
    hints: tuple[tuple[str, int], ...] = ()
    origin: Origin | None = None
    globals_seen: frozenset[str] = frozenset()
    forward_graph: str | None = None
    foreign: tuple[ForeignGlobal, ...] = ()

    @functools.cached_property
    def symints(self) -> tuple[GraphInput, ...]:
        """The backed SymInt inputs in order: ``symints[N]`` is ``L['tN']`` (made once
        per entry: match asks for them per key, per input and per sibling)."""
        return tuple(i for i in self.inputs if i.is_backed_symint)


_FX_TYPES = {"CompiledFxGraph"}
_AOT_TYPES = {"AOTAutogradResult", "BundledAOTAutogradResult", "AOTAutogradCacheEntry",
              "GenericAOTAutogradResult", "BundledAOTAutogradCacheEntry"}


def decode_entry(data: bytes, kind: KeyKind) -> DecodedEntry:
    """Decode one entry file's bytes (see the module docstring for how).

    Memory: decoding adds at most :func:`fxcache_core.decode.memlimit.budget_for`
    the entry's size to the process (on Linux; see :mod:`fxcache_core.decode.memlimit`).

    Raises:
        EntryTooLarge: decoding would need more memory than that budget (not
            evidence that the entry is invalid).
        EntryDecodeError: the bytes are not a pickle, are truncated, hold
            something other than the compiled-graph object ``kind`` expects,
            or hold fields of unexpected types. No other exception escapes:
            a hostile entry is reported, never allowed to crash a command.
            When the pickle also names globals torch does not write there, the
            reason is those (code ``foreign-global``), the failure after them.
    """
    try:
        with decoding_budget(len(data)):
            return _decode_entry(data, kind)
    except EntryDecodeError:
        raise
    except MemoryError:
        raise EntryTooLarge(Reason(f"decoding it needs more than fxcache's memory budget "
                                   f"({budget_for(len(data)) >> 20} MiB for {len(data)} bytes)",
                                   "over-memory-budget")) from None
    except RecursionError:
        raise EntryDecodeError(Reason("entry data nests too deeply", "nests-too-deeply")) from None
    except Exception as e:  # a field of an unexpected shape
        raise _unexpected(e) from None


def _unexpected(e: Exception) -> EntryDecodeError:
    return EntryDecodeError(Reason(f"unexpected entry content: {type(e).__name__}: {e}"[:300],
                                   "unexpected-content"))


def _decode_entry(data: bytes, kind: KeyKind) -> DecodedEntry:
    if len(data) > MAX_ENTRY_BYTES:
        raise EntryDecodeError(Reason(f"entry is {len(data)} bytes, over the {MAX_ENTRY_BYTES} limit",
                                      "over-size-limit"))
    uses: dict[str, GlobalUse] = {}
    try:
        root, seen = load_stubs(data, uses=uses)
        d = _read_root(root, seen, kind)
    except (EntryTooLarge, MemoryError, RecursionError):
        raise  # over a budget: not evidence of what the entry holds
    except EntryDecodeError as e:
        raise with_foreign(e, foreign_globals(kind.value, uses)) from None
    except Exception as e:  # a field of an unexpected shape
        raise with_foreign(_unexpected(e), foreign_globals(kind.value, uses)) from None
    found = foreign_globals(kind.value, uses)
    return replace(d, foreign=found) if found else d


def _read_root(root: Any, seen: frozenset[str], kind: KeyKind) -> DecodedEntry:
    if not isinstance(root, Stub):
        raise EntryDecodeError(Reason(f"entry holds a {type(root).__name__}, not a compiled graph",
                                      "not-a-compiled-graph"))
    guards = root.field("guards_expr")
    if guards is not None and not isinstance(guards, str):
        raise EntryDecodeError(Reason("guards_expr is not a string", "guards-not-a-string"))
    if kind is KeyKind.FX_GRAPH:
        if root.stub_name not in _FX_TYPES:
            raise EntryDecodeError(Reason(f"fxgraph entry holds {root.qualname}, not CompiledFxGraph",
                                          "wrong-entry-type"))
        debug = str_items(root.field("_fx_graph_cache_debug_lines"))
        inputs = parse_example_inputs(debug)
        graph_inputs = parse_graph_signature(opt_str(root.field("inductor_post_grad_graph_str")))
        if not inputs:
            inputs = graph_inputs
        elif len(graph_inputs) == len(inputs):
            inputs = tuple(GraphInput(i.position, g.name, g.type, i.expr) for i, g in
                           zip(inputs, graph_inputs, strict=True))
        fx_kwargs = plain(root.field("fx_kwargs"))
        is_bw = fx_kwargs.get("is_backward") if isinstance(fx_kwargs, dict) else None
        return DecodedEntry(
            kind=kind, type_name=root.qualname, guards_expr=guards, inputs=inputs,
            fx_key=opt_str(root.field("_fx_graph_cache_key")), debug_lines=debug,
            is_backward=is_bw if isinstance(is_bw, bool) else None,
            wrapper_key=opt_str(root.field("cache_key")),
            compile_time_ns=opt_int(root.field("_time_taken_ns")),
            hints=symbol_hints(inputs, opt_str(root.field("source_code")),
                               opt_str(root.field("runnable_graph_str"))),
            origin=_with_outer(parse_origin(opt_str(root.field("inductor_post_grad_graph_str"))),
                               parse_linemap_frames(root.field("cache_linemap"))),
            globals_seen=seen,
        )
    if root.stub_name not in _AOT_TYPES:
        raise EntryDecodeError(Reason(f"aotautograd entry holds {root.qualname}, not AOTAutogradResult",
                                      "wrong-entry-type"))
    cfg = root.field("sanitized_aot_config")
    srcs = plain(cfg.field("aot_autograd_arg_pos_to_source")) if isinstance(cfg, Stub) else None
    sources = tuple(source_name(s) for s in srcs) if isinstance(srcs, list) else ()
    inputs = parse_graph_signature(opt_str(root.field("aot_forward_graph_str")))
    inputs = tuple(_with_source(i, sources) for i in inputs)
    fw_t = opt_int(root.field("forward_time_taken_ns"))
    bw_t = opt_int(root.field("backward_time_taken_ns"))
    t = fw_t + (bw_t or 0) if fw_t is not None else None
    origin = parse_origin(opt_str(root.field("aot_forward_graph_str"))
                          or opt_str(root.field("aot_backward_graph_str")))
    inner = _bundled_graph(root.field("compiled_fw"))
    if inner is not None:  # its frames, as an FX entry's (an FX entry it has none of)
        origin = _with_outer(parse_origin(opt_str(inner.field("inductor_post_grad_graph_str"))) or origin,
                             parse_linemap_frames(inner.field("cache_linemap")))
    return DecodedEntry(
        kind=kind, type_name=root.qualname, guards_expr=guards, inputs=inputs,
        forward=_fx_ref(root.field("compiled_fw")), backward=_fx_ref(root.field("compiled_bw")),
        arg_sources=sources, compile_time_ns=t,
        origin=origin,
        globals_seen=seen, forward_graph=opt_str(root.field("aot_forward_graph_str")),
    )


def _with_outer(o: Origin | None, outer: tuple[tuple[str, str, int], ...]) -> Origin | None:
    if not outer:
        return o
    if o is None:
        fn, file, line = outer[-1]
        return Origin(fn, file, line, (), outer)
    return Origin(o.function, o.file, o.line, o.functions, outer)


def _with_source(i: GraphInput, sources: tuple[str | None, ...]) -> GraphInput:
    idx = i.aot_index if i.aot_index is not None else i.position
    src = sources[idx] if 0 <= idx < len(sources) else None
    return GraphInput(i.position, i.name, i.type, i.expr, idx, src)


def _bundled_graph(obj: Any) -> Stub | None:
    """The ``CompiledFxGraph`` a bundled AOTAutograd entry carries in ``compiled_fw``
    (``BundledCompiledForward.result``, torch/_functorch/_aot_autograd/aot_autograd_result.py,
    saved with ``bundled_autograd_cache``), else None."""
    if isinstance(obj, Stub) and obj.stub_name == "BundledCompiledForward":
        graph = obj.field("result")
        if isinstance(graph, Stub) and graph.stub_name in _FX_TYPES:
            return graph
    return None


def _fx_ref(obj: Any) -> FxRef | None:
    if not isinstance(obj, Stub):
        return None
    info = obj.field("fx_graph_cache_info")
    if not (isinstance(info, (list, tuple)) and info and isinstance(info[0], str)):
        return None
    lines = str_items(info[1]) if len(info) > 1 else ()
    return FxRef(key=info[0], guards_expr=opt_str(obj.field("fx_graph_guard_expr")),
                 debug_lines=lines)
