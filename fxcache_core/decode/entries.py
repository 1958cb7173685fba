"""Decoding cache entries without executing them.

An entry file is a pickle of a ``CompiledFxGraph`` (fxgraph/) or an
``AOTAutogradResult`` (aotautograd/). ``pickle.loads`` would import torch and
run whatever callables the pickle names; fxcache never does. Instead the
restricted unpickler of :mod:`fxcache_core.decode.unpickler` reads it into a
tree of inert stubs and plain containers, and :func:`decode_entry` reads the
fields fxcache needs into frozen dataclasses (the printed ones through the
parsers of :mod:`fxcache_core.decode.printed`), naming each AOTAutograd input's
Dynamo source through :mod:`fxcache_core.decode.sources` and where its code came from
through :mod:`fxcache_core.decode.origins`. Never executes
anything from the entry, never imports torch.

Validity comes from the unpickle alone: an entry is valid when it unpickles
within its budgets and its root and guards string are what torch reads. Every
field parser after that is total: one that cannot read its field (a 5,000-digit
index in a debug line, a structure too entangled to convert) leaves the field
empty and names it in ``DecodedEntry.absent``, as torch, which never parses
those fields on load, still loads the entry. So whichever fields a command
reads, its corruption verdict is the same.

Why an entry cannot be decoded is an :class:`~fxcache_core.errors.EntryDecodeError`
whose message is a :class:`~fxcache_core.reasons.Reason` (``str(error).code``):
``over-size-limit``, ``over-memory-budget``, ``truncated-pickle``,
``corrupt-pickle``, ``nests-too-deeply``, ``too-many-objects``,
``not-a-compiled-graph``, ``wrong-entry-type``, ``guards-missing``,
``guards-not-a-string``, ``unexpected-content``; the codes of one whose bytes
unpickle, which torch reads rather than skips, are :data:`LOADED_BY_TORCH`.

A command that reads only some fields asks for a projection (``fields``:
:data:`LIGHT` for what the index keeps, :data:`ORIGIN` for where a graph came
from): the same unpickle, the same validity checks and the same parsers on the
fields it names, the others left empty; the pure parsers remember their last few
answers by their text (:class:`~fxcache_core.decode.printed.TextMemo`: the entries
of one key print the same graph), so a key's entries parse it once.

Field names mirror torch 2.13: ``CompiledFxGraph`` in
torch/_inductor/output_code.py, ``AOTAutogradResult``/``CompiledForward``/
``CompiledBackward`` in torch/_functorch/_aot_autograd/aot_autograd_result.py
and autograd_cache.py, ``CacheableAOTConfig`` in schemas.py, and the Dynamo
``Source`` classes in torch/_dynamo/source.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import read_entry_bytes
from fxcache_core.decode.code_scan import ForeignGlobal, foreign_globals, with_foreign
from fxcache_core.decode.memlimit import budget_for, decoding_budget
from fxcache_core.decode.origins import MAX_GRAPH_LINES as MAX_GRAPH_LINES
from fxcache_core.decode.origins import Origin, linemap_stacks, parse_origin, stacks_frames
from fxcache_core.decode.origins import parse_linemap_frames as parse_linemap_frames
from fxcache_core.decode.printed import (
    GraphInput,
    TextMemo,
    example_run,
    parse_example_run,
    parse_graph_signature,
    symbol_hints,
)
from fxcache_core.decode.printed import (
    HarnessArgs as HarnessArgs,  # the parsers' names stay importable from here
)
from fxcache_core.decode.printed import parse_get_args as parse_get_args
from fxcache_core.decode.printed import parse_hints as parse_hints
from fxcache_core.decode.sources import source_names
from fxcache_core.decode.unpickler import (
    MAX_ENTRY_BYTES,
    ReadUses,
    Stub,
    iter_str_items,
    load_stubs,
    opt_int,
    opt_str,
    plain,
    str_items,
)
from fxcache_core.errors import EntryDecodeError, EntryTooLarge
from fxcache_core.reasons import Reason

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


@dataclass(frozen=True, init=False)
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
        requires_grad: AOTAutograd entries: whether each flat input required grad when
            the entry was compiled (``runtime_metadata.input_info[i].requires_grad``, the
            tensor's own flag whatever the grad mode; False for a SymInt), None where
            unknown; () when not recorded. Read with ``arg_sources``.
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
        absent: ``(field, why)`` for each field the entry holds but fxcache could not
            read (a 5,000-digit input index, a structure too entangled to convert):
            that field is left empty. Such an entry is still valid, as torch loads
            it: validity is the unpickle, the root type and the guards string alone.
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
    requires_grad: tuple[bool | None, ...] = ()
    compile_time_ns: int | None = None
    hints: tuple[tuple[str, int], ...] = ()
    origin: Origin | None = None
    globals_seen: frozenset[str] = frozenset()
    forward_graph: str | None = None
    foreign: tuple[ForeignGlobal, ...] = ()
    absent: tuple[tuple[str, str], ...] = ()

    def __init__(self, kind: KeyKind, type_name: str, guards_expr: str | None, inputs: tuple[GraphInput, ...],
                 fx_key: str | None = None, debug_lines: tuple[str, ...] = (), is_backward: bool | None = None,
                 wrapper_key: str | None = None, forward: FxRef | None = None, backward: FxRef | None = None,
                 arg_sources: tuple[str | None, ...] = (), requires_grad: tuple[bool | None, ...] = (),
                 compile_time_ns: int | None = None, hints: tuple[tuple[str, int], ...] = (),
                 origin: Origin | None = None, globals_seen: frozenset[str] = frozenset(),
                 forward_graph: str | None = None, foreign: tuple[ForeignGlobal, ...] = (),
                 absent: tuple[tuple[str, str], ...] = ()) -> None:
        # The dataclass's own __init__, in one update of the instance dict instead of an
        # object.__setattr__ per field (half the cost: one is made per entry decoded and
        # per index row read). The fields, their order and defaults are the dataclass's
        # (tests/unit/test_projections.py checks).
        self.__dict__.update(
            kind=kind, type_name=type_name, guards_expr=guards_expr, inputs=inputs, fx_key=fx_key,
            debug_lines=debug_lines, is_backward=is_backward, wrapper_key=wrapper_key, forward=forward,
            backward=backward, arg_sources=arg_sources, requires_grad=requires_grad,
            compile_time_ns=compile_time_ns, hints=hints, origin=origin, globals_seen=globals_seen,
            forward_graph=forward_graph, foreign=foreign, absent=absent)

    @functools.cached_property
    def symints(self) -> tuple[GraphInput, ...]:
        """The backed SymInt inputs in order: ``symints[N]`` is ``L['tN']`` (made once
        per entry: match asks for them per key, per input and per sibling)."""
        return tuple(i for i in self.inputs if i.is_backed_symint)


FIELDS = frozenset({"inputs", "debug_lines", "is_backward", "hints", "origin", "forward", "backward",
                    "arg_sources", "forward_graph", "globals_seen", "ref_debug_lines"})
"""The fields :func:`decode_entry` reads when asked for some (``ref_debug_lines``: the
debug lines of an AOTAutograd entry's :class:`FxRef`); the scalar fields (``type_name``,
``guards_expr``, ``fx_key``, ``wrapper_key``, ``compile_time_ns``, ``foreign``) are
always read."""
LIGHT = FIELDS - {"debug_lines", "forward_graph", "globals_seen", "ref_debug_lines"}
"""What the index keeps of an entry: :func:`~fxcache_core.state.index.light` of the whole
entry, read without building what it drops (the debug lines are parsed where they lie)."""
ORIGIN = frozenset({"origin", "forward"})
"""Where a graph came from (``ls``): its origin, and the FX graph an AOTAutograd entry loads."""

_NO_GUARDS = object()
"""What a root without a ``guards_expr`` attribute gives for it (a pickled
``None`` is no guards: a hit; no attribute at all fails torch's assert)."""

LOADED_BY_TORCH = frozenset({"not-a-compiled-graph", "wrong-entry-type", "guards-missing",
                             "guards-not-a-string", "unexpected-content", "foreign-global"})
"""The reason codes of an entry that is not valid but whose bytes unpickle: torch's
``pickle.loads`` reads it too (where it can import the root's class; one naming a
global torch does not write, ``foreign-global``, may load or raise), so torch's
lookup does not skip it as it skips one that does not unpickle
(``GuardedCache.iterate_over_candidates``) but judges it (``find_guarded_entry``:
it asserts a ``guards_expr`` attribute, takes a falsy one as no guards and
evaluates any other). Such an entry is corrupt to ``ls``, ``verify`` and gc all
the same; only what torch's lookup does with it is not known."""

_FX_TYPES = {"CompiledFxGraph"}
_AOT_TYPES = {"AOTAutogradResult", "BundledAOTAutogradResult", "AOTAutogradCacheEntry",
              "GenericAOTAutogradResult", "BundledAOTAutogradCacheEntry"}


def decode_entry(data: bytes, kind: KeyKind, fields: frozenset[str] = FIELDS) -> DecodedEntry:
    """Decode one entry file's bytes (see the module docstring for how).

    ``fields``: the projection to read (of :data:`FIELDS`; :data:`LIGHT`,
    :data:`ORIGIN`); the others are left at their empty values, and ``absent``
    names only fields that were read. Whether the entry decodes, and why not,
    does not depend on it.

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
            return _decode_entry(data, kind, fields)
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


def entry_root(path: str) -> Stub | None:
    """The unpickled root of the entry file at ``path`` (inert stubs:
    :func:`~fxcache_core.decode.unpickler.load_stubs`), read within the decoding
    budget (:func:`~fxcache_core.decode.memlimit.decoding_budget`), for worker tasks
    that read a field or two of an entry. None where the file cannot be read, does not
    decode within the budget, or holds no object. Raises nothing."""
    try:
        data = read_entry_bytes(Path(path))
        with decoding_budget(len(data)):
            root, _ = load_stubs(data)
    except (OSError, EntryDecodeError, MemoryError, RecursionError):
        return None
    return root if isinstance(root, Stub) else None

def _unexpected(e: Exception) -> EntryDecodeError:
    return EntryDecodeError(Reason(f"unexpected entry content: {type(e).__name__}: {e}"[:300],
                                   "unexpected-content"))


def _decode_entry(data: bytes, kind: KeyKind, fields: frozenset[str]) -> DecodedEntry:
    if len(data) > MAX_ENTRY_BYTES:
        raise EntryDecodeError(Reason(f"entry is {len(data)} bytes, over the {MAX_ENTRY_BYTES} limit",
                                      "over-size-limit"))
    uses = ReadUses()
    try:
        root, seen = load_stubs(data, uses=uses)
        d = _read_root(root, seen, kind, fields)
    except (EntryTooLarge, MemoryError, RecursionError):
        raise  # over a budget: not evidence of what the entry holds
    except EntryDecodeError as e:
        raise with_foreign(e, foreign_globals(kind.value, uses)) from None
    except Exception as e:  # a field of an unexpected shape
        raise with_foreign(_unexpected(e), foreign_globals(kind.value, uses)) from None
    found = foreign_globals(kind.value, uses)
    return replace(d, foreign=found) if found else d


def _read_root(root: Any, seen: frozenset[str], kind: KeyKind, fields: frozenset[str]) -> DecodedEntry:
    if not isinstance(root, Stub):
        raise EntryDecodeError(Reason(f"entry holds a {type(root).__name__}, not a compiled graph",
                                      "not-a-compiled-graph"))
    guards = root.field("guards_expr", _NO_GUARDS)
    if guards is not None and guards is not _NO_GUARDS and not isinstance(guards, str):
        what = guards.qualname if isinstance(guards, Stub) else type(guards).__name__
        raise EntryDecodeError(Reason(f"guards_expr is not a string: a {what}", "guards-not-a-string"))
    if kind is KeyKind.FX_GRAPH:
        if root.stub_name not in _FX_TYPES:
            raise EntryDecodeError(Reason(f"fxgraph entry holds {root.qualname}, not CompiledFxGraph",
                                          "wrong-entry-type"))
    elif root.stub_name not in _AOT_TYPES:
        raise EntryDecodeError(Reason(f"aotautograd entry holds {root.qualname}, not AOTAutogradResult",
                                      "wrong-entry-type"))
    if guards is _NO_GUARDS:
        raise EntryDecodeError(Reason(f"{root.qualname} has no guards_expr", "guards-missing"))
    if kind is KeyKind.FX_GRAPH:
        return _fx_fields(kind, root, guards, seen, fields)
    return _aot_fields(kind, root, guards, seen, fields)


class _Fields:
    """Reads an entry's fields totally: a parser that raises leaves its field at its
    empty value and notes ``(field, why)`` in :attr:`absent`; only running out of
    memory escapes (the budget, not the entry, decides that)."""

    def __init__(self) -> None:
        self.absent: list[tuple[str, str]] = []

    def read(self, name: str, default: Any, parse: Callable[..., Any], *args: Any) -> Any:
        try:
            return parse(*args)
        except MemoryError:
            raise
        except Exception as e:  # any parser failure leaves the field absent
            self.absent.append((name, f"{type(e).__name__}: {e}"[:200]))
            return default


_signature = TextMemo(parse_graph_signature)
_graph_origin = TextMemo(parse_origin)
_stacks_frames = TextMemo(stacks_frames)


def _linemap_frames(linemap: Any) -> tuple[tuple[str, str, int], ...]:
    """:func:`~fxcache_core.decode.origins.parse_linemap_frames`, remembered by the
    linemap's stack texts (the entries of one FX key hold the same linemap)."""
    return _stacks_frames(tuple(linemap_stacks(linemap)))


class _LastAnswer:
    """A pure function's last answer, by its argument compared with ``==`` (a tuple of
    texts, None and flags: nothing whose comparison could run long on hostile data).
    The entries of one FX key print the same graph and inputs, decoded one after
    another: the first one's answer serves the rest."""

    __slots__ = ("arg", "fn", "got")

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn, self.arg, self.got = fn, None, None

    def __call__(self, arg: tuple) -> Any:
        if self.arg is None or self.arg != arg:
            self.arg, self.got = None, None  # an exception leaves nothing remembered
            self.got, self.arg = self.fn(arg), arg
        return self.got


def _fx_graph_fields(arg: tuple) -> tuple[tuple[GraphInput, ...], tuple[tuple[str, int], ...],
                                          tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """An FX entry's inputs and hints, from (its example-input debug lines, its post-grad
    graph, its source code, its runnable graph, whether the hints are wanted): (inputs,
    hints, what could not be read of the inputs, of the hints), read totally."""
    run, post_grad, source, runnable, with_hints = arg
    f = _Fields()
    inputs = f.read("inputs", (), parse_example_run, run)
    graph_inputs = f.read("inputs", (), _signature, post_grad)
    if not inputs:
        inputs = graph_inputs
    elif len(graph_inputs) == len(inputs):
        inputs = tuple(GraphInput(i.position, g.name, g.type, i.expr) for i, g in
                       zip(inputs, graph_inputs, strict=True))
    of_inputs = tuple(f.absent)
    hints = f.read("hints", (), symbol_hints, inputs, source, runnable) if with_hints else ()
    return inputs, hints, of_inputs, tuple(f.absent[len(of_inputs):])


_fx_graph = _LastAnswer(_fx_graph_fields)


def _fx_fields(kind: KeyKind, root: Stub, guards: str | None, seen: frozenset[str],
               want: frozenset[str]) -> DecodedEntry:
    f = _Fields()
    raw_debug = root.field("_fx_graph_cache_debug_lines")
    debug = f.read("debug_lines", (), str_items, raw_debug) if "debug_lines" in want else ()
    post_grad = opt_str(root.field("inductor_post_grad_graph_str"))
    inputs: tuple[GraphInput, ...] = ()
    hints: tuple[tuple[str, int], ...] = ()
    of_hints: tuple[tuple[str, str], ...] = ()
    if "inputs" in want or "hints" in want:
        with_hints = "hints" in want
        inputs, hints, of_inputs, of_hints = _fx_graph((
            example_run(debug if "debug_lines" in want else iter_str_items(raw_debug)), post_grad,
            opt_str(root.field("source_code")) if with_hints else None,
            opt_str(root.field("runnable_graph_str")) if with_hints else None, with_hints))
        f.absent.extend(of_inputs)
    is_bw = f.read("is_backward", None, _is_backward, root.field("fx_kwargs")) if "is_backward" in want else None
    f.absent.extend(of_hints)
    origin = None
    if "origin" in want:
        origin = _outer((f.read("origin", None, _graph_origin, post_grad),
                         f.read("origin", (), _linemap_frames, root.field("cache_linemap"))))
    return DecodedEntry(
        kind=kind, type_name=root.qualname, guards_expr=guards,
        inputs=inputs if "inputs" in want else (),
        fx_key=opt_str(root.field("_fx_graph_cache_key")), debug_lines=debug,
        is_backward=is_bw,
        wrapper_key=opt_str(root.field("cache_key")),
        compile_time_ns=opt_int(root.field("_time_taken_ns")),
        hints=hints, origin=origin,
        globals_seen=seen if "globals_seen" in want else frozenset(), absent=tuple(f.absent),
    )


def _is_backward(fx_kwargs: Any) -> bool | None:
    kw = plain(fx_kwargs)
    is_bw = kw.get("is_backward") if isinstance(kw, dict) else None
    return is_bw if isinstance(is_bw, bool) else None


def _arg_sources(cfg: Any) -> tuple[str | None, ...]:
    srcs = plain(cfg.field("aot_autograd_arg_pos_to_source")) if isinstance(cfg, Stub) else None
    return source_names(srcs) if isinstance(srcs, list) else ()


def _requires_grad(meta: Any) -> tuple[bool | None, ...]:
    """``requires_grad`` of each ``InputAliasInfo`` of a ``ViewAndMutationMeta``
    (torch/_functorch/_aot_autograd/schemas.py); () where it records none."""
    infos = meta.field("input_info") if isinstance(meta, Stub) else None
    if not isinstance(infos, list):
        return ()
    out: list[bool | None] = []
    for info in infos:
        rg = info.field("requires_grad") if isinstance(info, Stub) else None
        out.append(rg if isinstance(rg, bool) else None)
    return tuple(out)


def _aot_fields(kind: KeyKind, root: Stub, guards: str | None, seen: frozenset[str],
                want: frozenset[str]) -> DecodedEntry:
    f = _Fields()
    sources: tuple[str | None, ...] = ()
    grads: tuple[bool | None, ...] = ()
    if "arg_sources" in want or "inputs" in want:
        sources = _same(f.read("arg_sources", (), _arg_sources, root.field("sanitized_aot_config")))
    if "arg_sources" in want:
        grads = f.read("arg_sources", (), _requires_grad, root.field("runtime_metadata"))
    fw_graph = opt_str(root.field("aot_forward_graph_str"))
    inputs: tuple[GraphInput, ...] = ()
    if "inputs" in want:
        inputs = f.read("inputs", (), _signature, fw_graph)
        inputs = _sourced((inputs, sources))
    fw_t = opt_int(root.field("forward_time_taken_ns"))
    bw_t = opt_int(root.field("backward_time_taken_ns"))
    t = fw_t + (bw_t or 0) if fw_t is not None else None
    origin = None
    if "origin" in want:
        origin = f.read("origin", None, _graph_origin, fw_graph or opt_str(root.field("aot_backward_graph_str")))
        inner = _bundled_graph(root.field("compiled_fw"))
        if inner is not None:  # its frames, as an FX entry's (an FX entry it has none of)
            origin = _with_outer(
                f.read("origin", None, _graph_origin, opt_str(inner.field("inductor_post_grad_graph_str")))
                or origin,
                f.read("origin", (), _linemap_frames, inner.field("cache_linemap")))
    lines = "ref_debug_lines" in want
    return DecodedEntry(
        kind=kind, type_name=root.qualname, guards_expr=guards, inputs=inputs,
        forward=f.read("forward", None, _fx_ref, root.field("compiled_fw"), lines) if "forward" in want else None,
        backward=f.read("backward", None, _fx_ref, root.field("compiled_bw"), lines) if "backward" in want else None,
        arg_sources=sources if "arg_sources" in want else (), requires_grad=grads, compile_time_ns=t, origin=origin,
        globals_seen=seen if "globals_seen" in want else frozenset(),
        forward_graph=fw_graph if "forward_graph" in want else None, absent=tuple(f.absent),
    )


_same = _LastAnswer(lambda value: value)
"""The value given, or the equal one given last (a key's entries then hold one object
each, which the index row's JSON is written from once: :func:`~fxcache_core.state.rows.to_json`)."""
_outer = _LastAnswer(lambda arg: _with_outer(*arg))
_sourced = _LastAnswer(lambda arg: tuple(_with_source(i, arg[1]) for i in arg[0]))


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


def _fx_ref(obj: Any, with_lines: bool = True) -> FxRef | None:
    if not isinstance(obj, Stub):
        return None
    info = obj.field("fx_graph_cache_info")
    if not (isinstance(info, (list, tuple)) and info and isinstance(info[0], str)):
        return None
    lines = str_items(info[1]) if with_lines and len(info) > 1 else ()
    return FxRef(key=info[0], guards_expr=opt_str(obj.field("fx_graph_guard_expr")),
                 debug_lines=lines)
