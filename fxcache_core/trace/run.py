"""What a traced run compiled, and every cache lookup it made, from its TORCH_TRACE.

:mod:`fxcache_core.trace.reader` reads records; this module assembles them into
the frozen facts of :mod:`fxcache_core.trace.run_facts`, one pass over each file,
each event read by its own ``_on_<event>`` handler (an event without one is not read):

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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fxcache_core.trace.dict_guards import guard_managers
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
from fxcache_core.trace.run_facts import (
    AddedGuard,
    CacheName,
    State,
    SymbolFact,
    TensorFact,
    TraceCompile,
    TraceLookup,
    TraceRun,
)
from fxcache_core.trace.steps import STEP_NEEDLES, StepReader

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
MAX_COMPONENTS = 20_000
"""Most key components kept per FX lookup (torch hashes about 600); the rest are dropped."""
MAX_DIMS = 256
"""A tensor described with more dims than this is not kept (torch's tensors have a few)."""


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
        self.guard_managers: tuple[tuple[str, str], ...] = ()
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
                            self.backend_seconds, self.failure, self.dynamic, self.file, self.steps.steps(),
                            self.guard_managers)


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
        lookups = _FileReading(reader, compiles, interned, versions, cache_dirs).read()
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


class _FileReading:
    """One file's records -> its compiles (appended to ``compiles``) and its lookups, in order.

    Each record goes to the builder of its compile, then to the ``_on_<event>``
    handler named after its event (found once, by name, in :attr:`_HANDLERS`);
    an event with no handler only opens its compile's builder.
    """

    _HANDLERS: dict[str, Callable[[_FileReading, _Builder, TraceRecord], None]]

    def __init__(self, reader: TraceFileReader, compiles: list[TraceCompile], interned: dict[str, str],
                 versions: list[str], cache_dirs: dict[str, None]) -> None:
        self.reader = reader
        self.compiles = compiles
        self.interned = interned
        self.versions = versions
        self.cache_dirs = cache_dirs
        self.open_: dict[tuple[str, int | None], _Builder] = {}  # compile id -> the compile being read
        self.order: list[_Builder] = []
        self.out: list[dict[str, Any]] = []
        self.outside = _Builder(None, None, reader.path)

    def read(self) -> list[dict[str, Any]]:
        handlers = self._HANDLERS
        for rec in self.reader:
            b = self._builder(rec)
            handler = handlers.get(rec.event)
            if handler is not None:
                handler(self, b, rec)
        return self._finish()

    def _builder(self, rec: TraceRecord) -> _Builder:
        """The builder of the compile ``rec`` was logged in (a ``dynamo_start`` of an id
        already read opens a new one: ``torch._dynamo.reset()`` reuses ids)."""
        if rec.compile is None:
            return self.outside
        k = (rec.compile.compile_id, rec.rank)
        b = self.open_.get(k)
        if b is None or rec.event == "dynamo_start" and (b.function is not None or b.lookups or b.pending_fx):
            b = _Builder(rec.compile, rec.rank, self.reader.path)
            self.open_[k] = b
            self.order.append(b)
        if rec.compile.attempt > b.ref.attempt:
            b.ref = rec.compile
        if rec.rank is not None:
            b.rank = rec.rank
        return b

    def _finish(self) -> list[dict[str, Any]]:
        out, order, outside = self.out, self.order, self.outside
        for b in order:
            _flush(b, out)
        _flush(outside, out)
        file_rank = self.reader.info.rank if self.reader.info is not None else None
        for b in (*order, outside):
            b.rank = file_rank if b.rank is None else b.rank
        base = len(self.compiles)
        index = {id(b): base + i for i, b in enumerate(order)}
        for i, b in enumerate(order):
            self.compiles.append(b.freeze(base + i))
        for d in out:
            b = d.pop("builder")
            d["compile"] = index.get(id(b))
            d["rank"] = b.rank if d["rank"] is None else d["rank"]
        return out

    # --- one handler per event read ------------------------------------------------

    def _on_artifact(self, b: _Builder, rec: TraceRecord) -> None:
        name = rec.name
        if name in _CACHE_ARTIFACTS:
            _lookup(b, rec, *_CACHE_ARTIFACTS[name], self.interned)
            if b.done:  # a backward compiled after its forward's compile: in trace order
                _flush(b, self.out)
        elif name == "recompile_reasons" and rec.payload is not None:
            b.recompile_reason = _reasons(rec.payload)
        elif name == "torch_version" and rec.payload is not None and not self.versions:
            v = _json(rec.payload)
            if isinstance(v, dict) and isinstance(v.get("pytorch_version"), str):
                self.versions.append(v["pytorch_version"])

    def _on_chromium_event(self, b: _Builder, rec: TraceRecord) -> None:
        if rec.payload is not None:
            b.steps.feed(rec.payload, rec.line)

    def _mark_graph(self, b: _Builder, rec: TraceRecord) -> None:
        """A traced graph: the guards added after it were added for the next lookup."""
        b.last_mark = rec.line

    _on_dynamo_output_graph = _on_aot_joint_graph = _on_aot_forward_graph = _mark_graph
    _on_aot_backward_graph = _on_aot_inference_graph = _mark_graph

    def _on_dynamo_start(self, b: _Builder, rec: TraceRecord) -> None:
        stack = rec.meta.get("stack")
        if isinstance(stack, list) and stack and isinstance(stack[-1], dict):
            top = stack[-1]
            b.function = _str(top.get("name"))
            b.filename = _str(self.reader.resolve(top.get("filename")))
            b.firstlineno = top.get("line") if isinstance(top.get("line"), int) else None
        b.start = rec.time if b.start is None else b.start

    def _on_create_symbol(self, b: _Builder, rec: TraceRecord) -> None:
        m = rec.meta
        b.symbols.append(SymbolFact(str(m.get("symbol")), _int_val(m.get("val")), _str(m.get("source")),
                                    _str(m.get("vr"))))

    def _on_describe_tensor(self, b: _Builder, rec: TraceRecord) -> None:
        m = rec.meta
        if isinstance(m.get("id"), int) and isinstance(m.get("describer_id"), (int, type(None))):
            size, stride = m.get("size"), m.get("stride")
            marked = m.get("dynamo_dynamic_indices")
            if all(v is None or isinstance(v, list) and len(v) <= MAX_DIMS for v in (size, stride, marked)):
                b.described[(m.get("describer_id"), m["id"])] = (
                    _str(m.get("dtype")), _ints(size), _ints(stride),
                    m.get("storage_offset") if isinstance(m.get("storage_offset"), int) else None,
                    tuple(i for i in marked or () if isinstance(i, int) and not isinstance(i, bool)))

    def _on_describe_source(self, b: _Builder, rec: TraceRecord) -> None:
        m = rec.meta
        key = (m.get("describer_id"), m.get("id"))
        t = b.described.get(key) if all(isinstance(k, (int, type(None))) for k in key) else None
        src = _str(m.get("source"))
        if t is not None and src is not None:
            b.tensors.append(TensorFact(src, *t))

    def _on_guard_added_fast(self, b: _Builder, rec: TraceRecord) -> None:
        expr = _str(rec.meta.get("expr"))
        if expr is not None:
            b.guards_added.append(AddedGuard(expr, rec.line))

    def _on_dynamo_cpp_guards_str(self, b: _Builder, rec: TraceRecord) -> None:
        if rec.payload is not None:
            b.final_guards = _guard_codes(rec.payload)
            b.guard_managers = guard_managers(rec.payload)

    def _on_inductor_output_code(self, b: _Builder, rec: TraceRecord) -> None:
        p = _str(rec.meta.get("file_path")) or _str(rec.meta.get("filename"))
        if p and p.endswith(".py"):
            root = str(Path(p).parent.parent)
            self.cache_dirs.setdefault(root, None)

    def _on_compilation_metrics(self, b: _Builder, rec: TraceRecord) -> None:
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
        _flush(b, self.out)
        b.done = True


_FileReading._HANDLERS = {name.removeprefix("_on_"): fn for name, fn in vars(_FileReading).items()
                          if name.startswith("_on_")}


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


# The facts read_run gives, importable from here with it.
__all__ = ["MAX_COMPONENTS", "MAX_DIMS", "AddedGuard", "SymbolFact", "TensorFact", "TraceCompile",
           "TraceLookup", "TraceRun", "read_run"]
