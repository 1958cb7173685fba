"""What a traced run compiled and looked up: the frozen facts :func:`~fxcache_core.trace.run.read_run` gives.

* :class:`TraceRun`: everything read from a trace (one file, or a dir of
  per-rank files): its :class:`TraceCompile` s and :class:`TraceLookup` s.
* :class:`TraceCompile`: one Dynamo compile (torch's compile id ``0/1``), with
  the symbols it created (:class:`SymbolFact`), the tensors it described
  (:class:`TensorFact`) and the guards added to its ShapeEnv (:class:`AddedGuard`).
* :class:`TraceLookup`: one AOTAutograd or FX graph cache lookup.

:mod:`fxcache_core.trace.run` says which trace record each field comes from and
in what order lookups are kept. Values only: nothing here reads a file or
imports torch.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fxcache_core.trace.reader import CompileRef, TraceFileInfo
from fxcache_core.trace.steps import CompileStep

CacheName = Literal["fxgraph", "aotautograd"]
State = Literal["hit", "miss", "bypass"]


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
    """One Dynamo compile of a frame (its records: :mod:`fxcache_core.trace.run`).

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
        guard_managers: the guard managers of ``dynamo_cpp_guards_str`` that check
            something themselves, as (class, source): a ``DictGuardManager``
            (:func:`fxcache_core.trace.dict_guards.guard_managers`).
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
    guard_managers: tuple[tuple[str, str], ...] = ()

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
    """One cache lookup (its records: :mod:`fxcache_core.trace.run`).

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
        lookups: every cache lookup, in torch's order (:mod:`fxcache_core.trace.run` says which).
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


__all__ = ["AddedGuard", "CacheName", "State", "SymbolFact", "TensorFact", "TraceCompile", "TraceLookup",
           "TraceRun"]
