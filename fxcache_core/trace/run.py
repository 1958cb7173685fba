"""What a traced run compiled, and every cache lookup it made, from its TORCH_TRACE.

:mod:`fxcache_core.trace.reader` reads records; this module assembles them into
frozen facts, one pass over each file:

* :class:`TraceCompile`: one Dynamo compile (torch's compile id ``0/1``):
  the function (``dynamo_start``'s stack, ``compilation_metrics``), the
  symbols it created with their values and sources (``create_symbol``), the
  tensors it described (``describe_tensor`` + ``describe_source``), the
  guards added to its ShapeEnv (``guard_added_fast``), the guards Dynamo
  installed in the end (``dynamo_cpp_guards_str``), the recompile reason
  (``recompile_reasons``) and its compile times.
* :class:`TraceLookup`: one AOTAutograd or FX graph cache lookup, from the
  ``aotautograd_cache_{hit,miss,bypass}`` and ``fx_graph_cache_{hit,miss,bypass}``
  artifacts (torch/_functorch/_aot_autograd/autograd_cache.py ``try_load``,
  torch/_inductor/compile_fx.py, aot_autograd_result.py): the key, the state,
  torch's ``cache_status_detailed`` (``hit``/``full_miss``/``guard_miss``),
  the guards string of the entry it hit or last tried
  (``cache_status_guard_expr``), the FX key's components (the debug lines
  an entry also stores), the compile time it cost (``time_taken_ns``) or
  saved (``time_saved_ns``, ``time_saved_ms``), the bypass reason.

Order. Torch logs an AOTAutograd hit *after* the FX loads it makes for it
(``try_load`` logs when it returns), but made the AOTAutograd lookup first;
FX records logged in a compile before its AOTAutograd hit (or before an
AOTAutograd miss whose ``cache_status_detailed`` is ``hit``: the entry was
found but an FX entry it loads was not) are its loads, and are put after it,
marked :attr:`TraceLookup.for_aot` (torch looked them up by exact guards
string, ``check_exact_guard_match``). Everything else keeps the file's order.
Ranks (one file each) follow each other, lowest rank first.

Compile ids restart at ``0/0`` after ``torch._dynamo.reset()``: each
``dynamo_start`` opens a new :class:`TraceCompile`, however its id reads.
Nothing here imports torch.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fxcache_core.trace.reader import (
    CompileRef,
    TraceFileInfo,
    TraceFileReader,
    TraceRecord,
    bounded_json,
    trace_files,
)
from fxcache_core.trace.record_values import dynamic_mode as _dynamic
from fxcache_core.trace.record_values import guard_codes as _guard_codes
from fxcache_core.trace.record_values import int_value as _int_val
from fxcache_core.trace.record_values import number as _float
from fxcache_core.trace.record_values import one_line as _one_line
from fxcache_core.trace.record_values import scalars as _scalars
from fxcache_core.trace.steps import STEP_NEEDLES, CompileStep, StepReader

CacheName = Literal["fxgraph", "aotautograd"]
State = Literal["hit", "miss", "bypass"]

_CACHE_ARTIFACTS: dict[str, tuple[CacheName, State]] = {
    "fx_graph_cache_hit": ("fxgraph", "hit"),
    "fx_graph_cache_miss": ("fxgraph", "miss"),
    "fx_graph_cache_bypass": ("fxgraph", "bypass"),
    "aotautograd_cache_hit": ("aotautograd", "hit"),
    "aotautograd_cache_miss": ("aotautograd", "miss"),
    "aotautograd_cache_bypass": ("aotautograd", "bypass"),
}
_KEPT_ARTIFACTS = frozenset(_CACHE_ARTIFACTS) | {"recompile_reasons", "torch_version"}
_UNREAD_EVENTS = frozenset({"chromium_event", "describe_storage", "symbolic_shape_specialization",
                            "inductor_post_grad_graph", "graph_dump", "dynamo_guards",
                            "propagate_real_tensors_provenance", "guard_added", "optimize_ddp_split_graph",
                            "bwd_compilation_metrics", "link"})
_GRAPH_EVENTS = frozenset({"dynamo_output_graph", "aot_joint_graph", "aot_forward_graph",
                           "aot_backward_graph", "aot_inference_graph"})
MAX_COMPONENTS = 20_000
"""Most key components kept per FX lookup (torch hashes about 600); the rest are dropped."""
MAX_DIMS = 256
"""A tensor described with more dims than this is not kept (torch's tensors have a few)."""


@dataclass(frozen=True, slots=True)
class SymbolFact:
    """A symbol a compile created (``create_symbol``).

    Attributes:
        symbol: ``s77``.
        value: its value in the traced call (the hint), None if not an int.
        source: where it came from (``L['x'].size()[0]``).
        range: the value range torch gave it (``[2, int_oo]``), as logged.
    """

    symbol: str
    value: int | None
    source: str | None
    range: str | None


@dataclass(frozen=True, slots=True)
class TensorFact:
    """A tensor input a compile described (``describe_tensor`` with its source).

    Attributes:
        source: ``L['x']``.
        dtype: ``torch.float32``.
        size, stride: as the traced call had them (ints; a symbolic one as its text).
        storage_offset: where logged, else None.
        marked: dims marked dynamic (``dynamo_dynamic_indices``: ``mark_dynamic``).
    """

    source: str
    dtype: str | None
    size: tuple[int | str, ...]
    stride: tuple[int | str, ...]
    storage_offset: int | None
    marked: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class AddedGuard:
    """A guard added to the compile's ShapeEnv (``guard_added_fast``).

    Attributes:
        expr: sympy's text of it, over symbols (``s77 <= 24``).
        line: the record's line in its file (orders it against lookups).
    """

    expr: str
    line: int


@dataclass(frozen=True)
class TraceCompile:
    """One Dynamo compile of a frame (see the module docstring).

    Attributes:
        index: position in :attr:`TraceRun.compiles`.
        rank: the ``torch.distributed`` rank of its process, else None.
        ref: its compile id and the last attempt seen.
        function, filename, firstlineno: the compiled frame (``co_name``...).
        start: when it began, seconds since the epoch.
        recompile_reason: the guard failures that made Dynamo compile this
            frame again (torch's own text), None for a first compile.
        symbols, tensors: what the traced call's inputs were.
        guards_added: ``guard_added_fast`` events, in order.
        final_guards: code of each guard Dynamo installed (``+- NAME: code``
            lines of ``dynamo_cpp_guards_str``, comments cut), None when the
            trace has none for this compile (a failed or cut compile).
        seconds: Dynamo's whole compile of the frame
            (``entire_frame_compile_time_s``); None if not logged.
        backend_seconds: its backend (AOTAutograd + Inductor) part.
        failure: ``fail_type: fail_reason`` when the compile failed.
        dynamic: how sizes were made symbolic, from the Dynamo config the
            compile ran under (``compilation_metrics``): ``true``
            (``torch.compile(dynamic=True)``: ``assume_static_by_default``
            off), ``none`` (automatic dynamic, the default), ``false``; None
            when not logged.
        file: the trace file it was read from.
        cxx_steps: the C++ compile steps it ran (:mod:`fxcache_core.trace.steps`), by line.
    """

    index: int
    rank: int | None
    ref: CompileRef
    function: str | None
    filename: str | None
    firstlineno: int | None
    start: float | None
    recompile_reason: str | None
    symbols: tuple[SymbolFact, ...]
    tensors: tuple[TensorFact, ...]
    guards_added: tuple[AddedGuard, ...]
    final_guards: tuple[str, ...] | None
    seconds: float | None
    backend_seconds: float | None
    failure: str | None
    dynamic: str | None
    file: Path
    cxx_steps: tuple[CompileStep, ...] = ()

    @property
    def compile_id(self) -> str:
        return self.ref.compile_id

    @property
    def where(self) -> str:
        """``name (file:line)`` of the compiled frame, as far as known."""
        name = self.function or "?"
        if self.filename:
            return f"{name} ({self.filename}:{self.firstlineno})" if self.firstlineno else f"{name} ({self.filename})"
        return name

    def symbol(self, name: str) -> SymbolFact | None:
        """The last ``create_symbol`` of ``name`` in this compile."""
        for s in reversed(self.symbols):
            if s.symbol == name:
                return s
        return None


@dataclass(frozen=True, slots=True)  # slots: a run may hold 200,000 of them
class TraceLookup:
    """One cache lookup (see the module docstring).

    Attributes:
        seq: position in :attr:`TraceRun.lookups`.
        compile: index of its :class:`TraceCompile` (None: logged outside a compile).
        rank: the process's rank, else None.
        cache: ``fxgraph`` or ``aotautograd``.
        key: the cache key (None for a bypass before a key was computed).
        state: ``hit``, ``miss`` or ``bypass`` (torch's ``cache_state``).
        detailed: torch's ``cache_status_detailed``: ``hit``, ``full_miss``
            (no entry in the key), ``guard_miss`` (entries, none whose guards
            held); None for a bypass.
        guards_expr: ``cache_status_guard_expr``: the guards string of the
            entry hit, or of the last entry tried on a guard miss.
        components: FX lookups: the key's components (debug lines), in torch's order.
        seconds_saved: a hit: the compile time the entry recorded (what the hit saved).
        seconds_taken: an FX miss: the compile it cost (``time_taken_ns``).
        bypass_reason, bypass_type: a bypass: torch's reason and exception type.
        time: when the lookup was made, seconds since the epoch (FX:
            ``cache_event_time``; AOTAutograd: when its first record was logged).
        for_aot: an FX load made for an AOTAutograd hit (exact guards string match).
        line: line of its record in :attr:`file`.
        since_line: the guards its compile added after this line and up to
            :attr:`line` were added while it was made (the record of the
            compile's previous lookup or traced graph ends there).
        file: the trace file.
        attempt: the compile's attempt it was made in (an earlier attempt than the
            compile's last was abandoned: torch restarted the analysis).
    """

    seq: int
    compile: int | None
    rank: int | None
    cache: CacheName
    key: str | None
    state: State
    detailed: str | None
    guards_expr: str | None
    components: tuple[str, ...]
    seconds_saved: float | None
    seconds_taken: float | None
    bypass_reason: str | None
    bypass_type: str | None
    time: float
    for_aot: bool
    line: int
    since_line: int
    file: Path
    attempt: int = 0

    @property
    def graph(self) -> str | None:
        """FX lookups: ``backward`` or ``forward`` (the ``fx_kwargs[is_backward]``
        component), None where the components do not say."""
        for c in self.components:
            if "] fx_kwargs[is_backward]: " in c:
                return "backward" if c.rstrip().endswith("True") else "forward"
        return None


@dataclass(frozen=True)
class TraceRun:
    """Everything read from a trace (one file, or a dir of per-rank files).

    Attributes:
        path: what was read.
        files: per file, what reading it found (truncation, rank, clock).
        compiles: every Dynamo compile, file by file, in order.
        lookups: every cache lookup, in torch's order (see the module docstring).
        torch_version: the ``torch_version`` artifact (``2.13.0+cpu``), else None.
        cache_dirs: cache dirs the run wrote generated code into (from
            ``inductor_output_code`` paths), in order of first use.
    """

    path: Path
    files: tuple[TraceFileInfo, ...]
    compiles: tuple[TraceCompile, ...]
    lookups: tuple[TraceLookup, ...]
    torch_version: str | None = None
    cache_dirs: tuple[str, ...] = ()

    @property
    def truncated(self) -> tuple[TraceFileInfo, ...]:
        """The files a killed run left cut short."""
        return tuple(f for f in self.files if f.truncated)

    def compile_of(self, lookup: TraceLookup) -> TraceCompile | None:
        return None if lookup.compile is None else self.compiles[lookup.compile]

    def label(self, c: TraceCompile) -> str:
        """The compile's id, with ``#n`` (the n-th, from 1) when ``torch._dynamo.reset()``
        made its rank use the id again: ``0/0#2``."""
        return self._labels[c.index]

    @functools.cached_property
    def _labels(self) -> dict[int, str]:
        groups: dict[tuple[str, int | None], list[TraceCompile]] = {}
        for c in self.compiles:
            groups.setdefault((c.compile_id, c.rank), []).append(c)
        out = {}
        for same in groups.values():
            for n, c in enumerate(same, start=1):
                out[c.index] = c.compile_id if len(same) == 1 else f"{c.compile_id}#{n}"
        return out

    def find_compile(self, compile_id: str, rank: int | None = None) -> tuple[TraceCompile, ...]:
        """The compiles whose id is ``compile_id`` (``0/1``, tlparse's ``0/1_1``
        or ``[0/1]``, or :meth:`label`'s ``0/0#2``), on ``rank`` if given."""
        cid, _, nth = compile_id.strip().strip("[]").partition("#")
        found = tuple(c for c in self.compiles
                      if (str(c.ref) == cid or c.compile_id == cid) and (rank is None or c.rank == rank))
        if nth:
            if not re.fullmatch(r"[0-9]{1,9}", nth) or not 1 <= int(nth) <= len(found):
                return ()
            return (found[int(nth) - 1],)
        return found


class _Builder:
    """Mutable state of one compile while its records are read."""

    def __init__(self, ref: CompileRef | None, rank: int | None, file: Path) -> None:
        self.ref = ref or CompileRef(None, None)
        self.rank = rank
        self.file = file
        self.function: str | None = None
        self.filename: str | None = None
        self.firstlineno: int | None = None
        self.start: float | None = None
        self.recompile_reason: str | None = None
        self.symbols: list[SymbolFact] = []
        self.tensors: list[TensorFact] = []
        # (describer, id) -> (dtype, size, stride, storage offset, marked dims): what a
        # describe_source needs of a describe_tensor, never the whole record.
        self.described: dict[tuple[Any, int], tuple[Any, ...]] = {}
        self.guards_added: list[AddedGuard] = []
        self.final_guards: tuple[str, ...] | None = None
        self.seconds: float | None = None
        self.backend_seconds: float | None = None
        self.failure: str | None = None
        self.dynamic: str | None = None
        self.lookups: list[dict[str, Any]] = []
        self.pending_fx: list[dict[str, Any]] = []  # FX loads that may belong to an AOT hit
        self.last_mark = 0  # line of the last traced graph or cache artifact
        self.steps = StepReader()
        self.done = False  # compilation_metrics read: later lookups (its backward's) go out as they come

    def freeze(self, index: int) -> TraceCompile:
        return TraceCompile(index, self.rank, self.ref, self.function, self.filename, self.firstlineno,
                            self.start, self.recompile_reason, tuple(self.symbols), tuple(self.tensors),
                            tuple(self.guards_added), self.final_guards, self.seconds,
                            self.backend_seconds, self.failure, self.dynamic, self.file, self.steps.steps())


def read_run(path: Path, on_bytes: Callable[[int], None] | None = None) -> TraceRun:
    """Read a trace (a TORCH_TRACE dir or one of its files) into a :class:`TraceRun`.

    Streams each file once (:class:`~fxcache_core.trace.reader.TraceFileReader`); keeps
    the payloads of the cache artifacts, ``recompile_reasons``,
    ``torch_version``, ``dynamo_cpp_guards_str`` and ``chromium_event`` (parsed only
    for the C++ compile steps, :mod:`~fxcache_core.trace.steps`). Component lines
    repeated across lookups are held once. ``on_bytes(n)``: progress hook.

    Raises:
        TraceError: ``path`` is not a trace (see :func:`~fxcache_core.trace.reader.trace_files`).
    """
    files = trace_files(Path(path))
    infos: list[TraceFileInfo] = []
    compiles: list[TraceCompile] = []
    per_file: list[tuple[int | None, int, list[dict[str, Any]]]] = []
    interned: dict[str, str] = {}
    versions: list[str] = []
    cache_dirs: dict[str, None] = {}
    for n, f in enumerate(files):
        reader = TraceFileReader(f, _keep_payload, on_bytes, skip=_UNREAD_EVENTS, peek=STEP_NEEDLES)
        lookups = _read_file(reader, compiles, interned, versions, cache_dirs)
        assert reader.info is not None
        infos.append(reader.info)
        per_file.append((reader.info.rank, n, lookups))
    per_file.sort(key=lambda t: (t[0] is not None, t[0] or 0, t[1]))
    out: list[TraceLookup] = []
    for _, _, lookups in per_file:
        for d in lookups:
            out.append(TraceLookup(seq=len(out), **d))
    return TraceRun(Path(path), tuple(infos), tuple(compiles), tuple(out),
                    versions[0] if versions else None, tuple(cache_dirs))


def _keep_payload(event: str, meta: dict[str, Any]) -> bool:
    if event == "artifact":
        return meta.get("name") in _KEPT_ARTIFACTS
    return event in ("dynamo_cpp_guards_str", "chromium_event")


def _read_file(reader: TraceFileReader, compiles: list[TraceCompile], interned: dict[str, str],
               versions: list[str], cache_dirs: dict[str, None]) -> list[dict[str, Any]]:
    """One file's records -> its compiles (appended to ``compiles``) and its lookups, in order."""
    open_: dict[tuple[str, int | None], _Builder] = {}  # compile id -> the compile being read
    order: list[_Builder] = []
    out: list[dict[str, Any]] = []
    outside = _Builder(None, None, reader.path)

    def builder(rec: TraceRecord) -> _Builder:
        if rec.compile is None:
            return outside
        k = (rec.compile.compile_id, rec.rank)
        b = open_.get(k)
        if b is None or rec.event == "dynamo_start" and (b.function is not None or b.lookups or b.pending_fx):
            b = _Builder(rec.compile, rec.rank, reader.path)
            open_[k] = b
            order.append(b)
        if rec.compile.attempt > b.ref.attempt:
            b.ref = rec.compile
        if rec.rank is not None:
            b.rank = rec.rank
        return b

    for rec in reader:
        ev = rec.event
        b = builder(rec)
        if ev == "artifact":
            name = rec.name
            if name in _CACHE_ARTIFACTS:
                _lookup(b, rec, *_CACHE_ARTIFACTS[name], interned)
                if b.done:  # a backward compiled after its forward's compile: in trace order
                    _flush(b, out)
            elif name == "recompile_reasons" and rec.payload is not None:
                b.recompile_reason = _reasons(rec.payload)
            elif name == "torch_version" and rec.payload is not None and not versions:
                v = _json(rec.payload)
                if isinstance(v, dict) and isinstance(v.get("pytorch_version"), str):
                    versions.append(v["pytorch_version"])
        elif ev == "chromium_event" and rec.payload is not None:
            b.steps.feed(rec.payload, rec.line)
        elif ev in _GRAPH_EVENTS:
            b.last_mark = rec.line
        elif ev == "dynamo_start":
            stack = rec.meta.get("stack")
            if isinstance(stack, list) and stack and isinstance(stack[-1], dict):
                top = stack[-1]
                b.function = _str(top.get("name"))
                b.filename = _str(reader.resolve(top.get("filename")))
                b.firstlineno = top.get("line") if isinstance(top.get("line"), int) else None
            b.start = rec.time if b.start is None else b.start
        elif ev == "create_symbol":
            m = rec.meta
            b.symbols.append(SymbolFact(str(m.get("symbol")), _int_val(m.get("val")), _str(m.get("source")),
                                        _str(m.get("vr"))))
        elif ev == "describe_tensor":
            m = rec.meta
            if isinstance(m.get("id"), int) and isinstance(m.get("describer_id"), (int, type(None))):
                size, stride = m.get("size"), m.get("stride")
                marked = m.get("dynamo_dynamic_indices")
                if all(v is None or isinstance(v, list) and len(v) <= MAX_DIMS for v in (size, stride, marked)):
                    b.described[(m.get("describer_id"), m["id"])] = (
                        _str(m.get("dtype")), _ints(size), _ints(stride),
                        m.get("storage_offset") if isinstance(m.get("storage_offset"), int) else None,
                        tuple(i for i in marked or () if isinstance(i, int) and not isinstance(i, bool)))
        elif ev == "describe_source":
            m = rec.meta
            key = (m.get("describer_id"), m.get("id"))
            t = b.described.get(key) if all(isinstance(k, (int, type(None))) for k in key) else None
            src = _str(m.get("source"))
            if t is not None and src is not None:
                b.tensors.append(TensorFact(src, *t))
        elif ev == "guard_added_fast":
            expr = _str(rec.meta.get("expr"))
            if expr is not None:
                b.guards_added.append(AddedGuard(expr, rec.line))
        elif ev == "dynamo_cpp_guards_str" and rec.payload is not None:
            b.final_guards = _guard_codes(rec.payload)
        elif ev == "inductor_output_code":
            p = _str(rec.meta.get("file_path")) or _str(rec.meta.get("filename"))
            if p and p.endswith(".py"):
                root = str(Path(p).parent.parent)
                cache_dirs.setdefault(root, None)
        elif ev == "compilation_metrics":
            m = rec.meta
            b.function = _str(m.get("co_name")) or b.function
            b.filename = _str(m.get("co_filename")) or b.filename
            b.firstlineno = m.get("co_firstlineno") if isinstance(m.get("co_firstlineno"), int) else b.firstlineno
            if _float(m.get("start_time")) is not None:
                b.start = _float(m["start_time"])
            b.seconds = _float(m.get("entire_frame_compile_time_s"))
            b.backend_seconds = _float(m.get("backend_compile_time_s"))
            if _str(m.get("fail_type")):
                b.failure = f"{m.get('fail_type')}: {_str(m.get('fail_reason'))}"
            if _str(m.get("recompile_reason")) and b.recompile_reason is None:
                b.recompile_reason = m["recompile_reason"]
            b.dynamic = _dynamic(m.get("dynamo_config"))
            _flush(b, out)
            b.done = True
    for b in order:
        _flush(b, out)
    _flush(outside, out)
    file_rank = reader.info.rank if reader.info is not None else None
    for b in (*order, outside):
        b.rank = file_rank if b.rank is None else b.rank
    base = len(compiles)
    index = {id(b): base + i for i, b in enumerate(order)}
    for i, b in enumerate(order):
        compiles.append(b.freeze(base + i))
    for d in out:
        b = d.pop("builder")
        d["compile"] = index.get(id(b))
        d["rank"] = b.rank if d["rank"] is None else d["rank"]
    return out


def _lookup(b: _Builder, rec: TraceRecord, cache: CacheName, state: State, interned: dict[str, str]) -> None:
    """Record one cache artifact of compile ``b`` (see the module docstring for the order)."""
    info = _json(rec.payload) if rec.payload is not None else None
    if not isinstance(info, dict):
        # Not JSON fxcache reads whole (past MAX_JSON_VALUES: two million components):
        # its top-level strings and numbers, found without parsing the rest.
        info = _scalars(rec.payload) if rec.payload is not None else {}
    comps = info.get("components")
    components = tuple(interned.setdefault(c, c) for c in comps[:MAX_COMPONENTS] if isinstance(c, str)) \
        if isinstance(comps, list) and cache == "fxgraph" else ()
    saved = _float(info.get("time_saved_ns"))
    if saved is not None:
        saved /= 1e9
    elif _float(info.get("time_saved_ms")) is not None:
        saved = _float(info.get("time_saved_ms")) / 1e3  # type: ignore[operator]
    taken = _float(info.get("time_taken_ns"))
    when = _float(info.get("cache_event_time"))
    d: dict[str, Any] = {
        "builder": b, "rank": rec.rank, "cache": cache, "key": _str(info.get("key")), "state": state,
        "detailed": _str(info.get("cache_status_detailed")),
        "guards_expr": _str(info.get("cache_status_guard_expr")),
        "components": components, "seconds_saved": saved,
        "seconds_taken": taken / 1e9 if taken is not None else None,
        "bypass_reason": _one_line(_str(info.get("cache_bypass_reason"))),
        "bypass_type": _str(info.get("cache_bypass_exception_type")),
        "time": when / 1e9 if when is not None else rec.time, "for_aot": False,
        "line": rec.line, "since_line": b.last_mark, "file": b.file,
        "attempt": rec.compile.attempt if rec.compile is not None else 0,
    }
    b.last_mark = rec.line
    if cache == "fxgraph":
        b.pending_fx.append(d)
        return
    loads = state == "hit" or (state == "miss" and d["detailed"] == "hit")
    if loads:
        for fx in b.pending_fx:
            fx["for_aot"] = True
        if b.pending_fx:
            d["time"] = min(d["time"], b.pending_fx[0]["time"])
            d["since_line"] = b.pending_fx[0]["since_line"]
        b.lookups.append(d)
        b.lookups.extend(b.pending_fx)
    else:
        b.lookups.extend(b.pending_fx)
        b.lookups.append(d)
    b.pending_fx = []


def _flush(b: _Builder, out: list[dict[str, Any]]) -> None:
    """Move the lookups of ``b`` read so far to ``out`` (in order)."""
    b.lookups.extend(b.pending_fx)
    b.pending_fx = []
    out.extend(b.lookups)
    b.lookups = []


def _reasons(payload: str) -> str:
    """``recompile_reasons``: one reason as plain text, several as a JSON list (trace_structured)."""
    v = _json(payload)
    if isinstance(v, list):
        return "; ".join(str(x) for x in v)
    return v if isinstance(v, str) else payload.strip()


def _json(text: str) -> Any:
    return bounded_json(text)


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _ints(v: Any) -> tuple[int | str, ...]:
    if not isinstance(v, list):
        return ()
    return tuple(x if isinstance(x, int) and not isinstance(x, bool) else str(x) for x in v)


__all__ = ["AddedGuard", "SymbolFact", "TensorFact", "TraceCompile", "TraceLookup", "TraceRun",
           "read_run"]
