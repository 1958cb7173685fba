"""What ``fxcache explain`` reports: one explanation per lookup of a traced run, and totals.

The values :func:`fxcache_core.trace.explain.explain` returns, each with its
JSON form (the contract of ``fxcache explain --json``): :class:`ExplainReport`
holds a :class:`LookupExplanation` per lookup (its ``cause``: ``hit``,
``new-key``, ``guard-miss``, ``bypass``, ``fx-entry-missing``) and totals per
cache in the style of ``ccache -s`` (:class:`CacheSummary`). Notes are
:class:`~fxcache_core.reasons.Reason` s: the JSON gives their codes
(``note_codes``) beside their text. An explain report is also what the usage
store records (:class:`fxcache_core.state.usage.TraceFacts`: hits and the
entries misses wrote). Nothing here reads the cache or prints.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.guards.in_force import InstalledCheck
from fxcache_core.guards.user_terms import clause_in_user_terms, user_source
from fxcache_core.reasons import code_of
from fxcache_core.state.usage import TracedUse
from fxcache_core.trace.nearest import Nearest
from fxcache_core.trace.run_facts import TraceCompile, TraceLookup, TraceRun
from fxcache_core.trace.run_summary import run_verdict

Cause = Literal["hit", "new-key", "guard-miss", "bypass", "fx-entry-missing"]


@dataclass(frozen=True)
class CallValue:
    """A guard placeholder and its value in the traced call.

    Attributes:
        placeholder: ``t0``...
        symbol: ``s77`` (None where unknown).
        source: ``L['x'].size()[0]`` (None where unknown).
        value: the value in the call (None where the trace does not say).
    """

    placeholder: str
    symbol: str | None
    source: str | None
    value: int | None

    @property
    def user(self) -> str:
        """How the user names it: ``x.size(0)`` (its source in the user's terms), else
        its symbol, else the placeholder."""
        return user_source(self.source) if self.source else (self.symbol or self.placeholder)

    def to_json(self) -> dict[str, object]:
        return {"symbol": self.symbol, "source": self.source, "value": self.value}


@dataclass(frozen=True)
class TriedEntry:
    """An entry torch tried and passed over on a guard miss.

    Attributes:
        entry: the entry file name.
        status: ``fail`` (a clause is false), ``error`` (a clause raised),
            ``unreadable`` (torch skips it too), ``differs`` (an FX load for an
            AOTAutograd hit: its guards string is not the one recorded), ``pass``
            (its guards hold for these values: it cannot have been there when
            torch looked), or ``unknown`` (a value is missing).
        clause: the clause that failed, as stored.
        values: the entry's placeholders and their values in the call.
        error: the exception a clause raised, or why the entry is unreadable.
    """

    entry: str
    status: str
    clause: str | None
    values: tuple[CallValue, ...]
    error: str | None = None

    @property
    def user_clause(self) -> str | None:
        """The clause in the user's terms (``x.size(0) <= 64``)."""
        if self.clause is None:
            return None
        return clause_in_user_terms(self.clause, {v.placeholder: v.user for v in self.values})

    @property
    def user_values(self) -> dict[str, int | None]:
        """The call's values by the user's names (``{"x.size(0)": 100}``)."""
        return {v.user: v.value for v in self.values}

    def to_json(self) -> dict[str, object]:
        return {"entry": self.entry, "status": self.status, "clause": self.clause,
                "user_clause": self.user_clause, "user_values": self.user_values,
                "values": {v.placeholder: v.to_json() for v in self.values}, "error": self.error}



@dataclass(frozen=True)
class RootCause:
    """The one component that explains a new key against its nearest key, in the user's terms.

    Attributes:
        component: what differs, as torch hashes it (``torch_version``,
            ``inductor_config[max_autotune]``, ``example_inputs[0]``...).
        this: its value in this run (``2.14.1+cu130``, ``torch.float16``...), None where unknown.
        cache: its value in the nearest key of the cache, None where unknown.
        code: a stable reason code (``torch-version``, ``inductor-config``, ``input-dtype``,
            ``more-dynamic-dims``...: :mod:`fxcache_core.trace.dynamic_dims`).
        env: a config key: the environment variable that sets it, where torch has one.
        input: an example input: the argument's name (``x``).
        consequences: the other differing components that follow from this one
            (config defaults changed with the torch version, renamed graph nodes).
        also: the other differing components that do not follow from it (a second
            cause, or one fxcache cannot tie to it).
    """

    component: str
    this: str | None
    cache: str | None
    code: str
    env: str | None = None
    input: str | None = None
    consequences: tuple[str, ...] = ()
    also: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """``component``, ``this``, ``cache``, ``code``, ``env`` (config keys) and
        ``input`` (example inputs) where known, ``consequences`` and ``also``."""
        out: dict[str, object] = {"component": self.component, "this": self.this,
                                  "cache": self.cache, "code": self.code}
        if self.env is not None:
            out["env"] = self.env
        if self.input is not None:
            out["input"] = self.input
        out["consequences"] = list(self.consequences)
        out["also"] = list(self.also)
        return out


@dataclass(frozen=True)
class Rebuilt:
    """Kernels a lookup's compile still built (a hit whose compiled libraries or
    kernels were not usable here, or a miss).

    Attributes:
        kernels: how many C++/Triton kernels were built.
        seconds: wall seconds spent building them (as the trace records).
        cause: why, in words (another torch install's headers, other ISA flags...).
        code: a stable reason code for ``cause``.
    """

    kernels: int
    seconds: float
    cause: str | None
    code: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"kernels": self.kernels, "seconds": round(self.seconds, 3), "cause": self.cause,
                "cause_code": self.code}


@dataclass(frozen=True, slots=True)  # slots: a run may hold 200,000 of them
class LookupExplanation:
    """One lookup of the run, related to the cache (see the module docstring).

    Attributes:
        lookup: what torch recorded.
        compile: the compile it was made in (None outside any).
        cause: ``hit``, ``new-key``, ``guard-miss``, ``bypass``, ``fx-entry-missing``.
        entry: hit: the entry loaded (None where the cache does not have it).
        nearest: new-key: the nearest earlier key, None when none is close.
        first_compile: new-key: no key of the cache is close (the first compile of this
            graph); False too when the search could not be made (see ``notes``).
        tried: guard-miss: the entries torch passed over, in its order.
        values: the guard placeholders of the call (entry's order) and their values.
        guards_check: hit: whether the entry's guards are among the guards in force.
        added_guards: hit: guards added to the ShapeEnv while it was made (sympy text).
        wrote: a miss: the entry torch wrote after compiling (an FX entry is the
            one whose stored compile time is the ``time_taken_ns`` the trace
            recorded; otherwise the first entry written after the lookup whose
            guards hold for the call), None where not found.
        notes: what limits the explanation (the key is not in the cache...), as
            :class:`~fxcache_core.reasons.Reason` s.
        root_cause: new-key: the one differing component that explains the miss
            (None where there is no nearest key, or none stands out).
        rebuilt: the kernels this lookup's compile built anyway (None: none, or not recorded);
            an AOTAutograd hit's FX loads carry what they built, not the AOTAutograd hit.
        rebuild_seconds: a hit: seconds its compile spent rebuilding kernels, its FX
            loads' included (what :attr:`seconds_saved` takes off); None: nothing rebuilt.
    """

    lookup: TraceLookup
    compile: TraceCompile | None
    cause: Cause
    entry: str | None = None
    nearest: Nearest | None = None
    first_compile: bool = False
    tried: tuple[TriedEntry, ...] = ()
    values: tuple[CallValue, ...] = ()
    guards_check: InstalledCheck | None = None
    added_guards: tuple[str, ...] = ()
    wrote: str | None = None
    notes: tuple[str, ...] = ()
    root_cause: RootCause | None = None
    rebuilt: Rebuilt | None = None
    rebuild_seconds: float | None = None

    @property
    def seconds(self) -> float | None:
        """Compile seconds the lookup saved (hit) or cost (miss: the FX compile,
        or the AOTAutograd + Inductor backend compile of the frame; bypass
        of the AOTAutograd cache: that backend compile); None where not recorded."""
        lk = self.lookup
        if lk.state == "hit":
            return lk.seconds_saved
        if lk.cache == "fxgraph":
            return lk.seconds_taken
        return self.compile.backend_seconds if self.compile is not None else None

    @property
    def seconds_saved(self) -> float | None:
        """A hit: what this run saved: the compile time torch recorded for the entry
        less the C++ compile time the hit spent rebuilding kernels (:attr:`rebuild_seconds`);
        negative when rebuilding cost more. None for a miss or where not recorded."""
        if self.lookup.state != "hit" or self.lookup.seconds_saved is None:
            return None
        return self.lookup.seconds_saved - (self.rebuild_seconds or 0.0)

    @property
    def restarted(self) -> bool:
        """Made in an attempt of its compile that torch abandoned (a restart of analysis)."""
        return self.compile is not None and self.lookup.attempt < self.compile.ref.attempt

    def to_json(self, label: str | None = None) -> dict[str, object]:
        """``label``: the compile as ``match --from-trace --compile`` names it
        (:meth:`~fxcache_core.trace.run_facts.TraceRun.label`)."""
        lk, c = self.lookup, self.compile
        return {
            "seq": lk.seq, "rank": lk.rank,
            "compile_id": c.compile_id if c is not None else None,
            "compile": label if label is not None else (c.compile_id if c is not None else None),
            "attempt": c.ref.attempt if c is not None else None,
            "function": c.function if c is not None else None,
            "where": (f"{c.filename}:{c.firstlineno}" if c is not None and c.filename else None),
            "cache": lk.cache, "graph": lk.graph, "key": lk.key, "state": lk.state, "cause": self.cause,
            "detailed": lk.detailed, "for_aot": lk.for_aot, "time": lk.time,
            "entry": self.entry,
            "nearest": self.nearest.to_json() if self.nearest is not None else None,
            "first_compile": self.first_compile,
            "failed": [t.to_json() for t in self.tried],
            "values": {v.placeholder: v.to_json() for v in self.values},
            "bypass_reason": lk.bypass_reason,
            "seconds": self.seconds,
            "seconds_saved": round(s, 3) if (s := self.seconds_saved) is not None else None,
            "rebuilt": self.rebuilt.to_json() if self.rebuilt is not None else None,
            "restarted": self.restarted,
            "guards_check": self.guards_check.to_json() if self.guards_check is not None else None,
            "added_guards": list(self.added_guards),
            "wrote": self.wrote,
            "recompile_reason": c.recompile_reason if c is not None else None,
            "notes": list(self.notes),
            "note_codes": [code_of(n) for n in self.notes],
            "root_cause": self.root_cause.to_json() if self.root_cause is not None else None,
        }


@dataclass(frozen=True)
class CacheSummary:
    """Totals for one cache over the run, in the style of ``ccache -s``.

    Attributes:
        lookups, hits: counts.
        misses: cause -> count (``new-key``, ``guard-miss``, ``fx-entry-missing``).
        bypasses: torch's reason -> count.
        seconds_missed: compile seconds spent on misses (where recorded).
        seconds_saved: compile seconds hits saved this run (:attr:`LookupExplanation.seconds_saved`:
            the entries' recorded compile times less what the hits spent rebuilding kernels).
        restarted: lookups of compile attempts torch abandoned (restarts): counted in none of the others.
        guards_failed: hits whose guards check found a clause missing.
    """

    lookups: int
    hits: int
    misses: dict[str, int]
    bypasses: dict[str, int]
    seconds_missed: float
    seconds_saved: float
    guards_failed: int
    restarted: int = 0

    def to_json(self) -> dict[str, object]:
        return {"lookups": self.lookups, "hits": self.hits, "misses": dict(self.misses),
                "miss_total": sum(self.misses.values()), "bypasses": dict(self.bypasses),
                "bypass_total": sum(self.bypasses.values()),
                "seconds_missed": round(self.seconds_missed, 3), "seconds_saved": round(self.seconds_saved, 3),
                "seconds_saved_is": "the compile time torch recorded for each entry hit, less the C++ compile "
                                    "time this run spent rebuilding its kernels",
                "guards_failed": self.guards_failed, "restarted": self.restarted}


@dataclass(frozen=True)
class ExplainReport:
    """Every lookup of a run, explained.

    Attributes:
        run: the trace as read.
        cache_dir: the cache it was related to (None: explained from the trace alone).
        lookups: one explanation per lookup, in the run's order.
        notes: about the whole run (truncated files, a copied cache...).
    """

    run: TraceRun
    cache_dir: str | None
    lookups: tuple[LookupExplanation, ...]
    notes: tuple[str, ...] = ()
    functions: Mapping[int, CompiledFrom] = field(default_factory=dict)

    def function(self, c: TraceCompile) -> CompiledFrom | None:
        """The function compile ``c`` compiled, named as ``ls`` and ``match`` name it (from
        a key it looked up that the cache holds, else from the trace's frame); None
        when the trace names none."""
        return self.functions.get(c.index)

    def where(self, c: TraceCompile) -> str:
        """:meth:`function` as one line, ``T5ForConditionalGeneration.forward (modeling_t5.py:939)``
        (else the trace's ``name (file:line)``)."""
        f = self.function(c)
        return str(f) if f is not None else c.where

    def summary(self) -> dict[str, CacheSummary]:
        """Per cache (``aotautograd``, ``fxgraph``), in that order, those looked up."""
        out: dict[str, CacheSummary] = {}
        for cache in ("aotautograd", "fxgraph"):
            every = [x for x in self.lookups if x.lookup.cache == cache]
            if not every:
                continue
            mine = [x for x in every if not x.restarted]
            misses: Counter[str] = Counter(x.cause for x in mine if x.lookup.state == "miss")
            bypasses: Counter[str] = Counter(x.lookup.bypass_reason or "(no reason recorded)"
                                             for x in mine if x.lookup.state == "bypass")
            out[cache] = CacheSummary(
                lookups=len(mine), hits=sum(1 for x in mine if x.lookup.state == "hit"),
                misses=dict(misses.most_common()), bypasses=dict(bypasses.most_common()),
                seconds_missed=sum(x.seconds or 0.0 for x in mine if x.lookup.state == "miss"),
                seconds_saved=sum(x.seconds_saved or 0.0 for x in mine),
                guards_failed=sum(1 for x in mine if x.guards_check is not None
                                  and x.guards_check.status == "failed"),
                restarted=len(every) - len(mine))
        return out

    def to_json(self) -> dict[str, object]:
        """The JSON contract of ``fxcache explain --json`` (docs/reference/json.md; docs/tasks/why-recompile.md):
        ``lookups`` (:meth:`json_lookups`), then :meth:`json_head`'s fields."""
        return {"lookups": list(self.json_lookups()), **self.json_head()}

    def json_lookups(self) -> Iterator[dict[str, object]]:
        """The JSON of each lookup, one at a time (a run of 200,000 lookups is written
        as it is made, never held as one JSON value)."""
        for x in self.lookups:
            yield self._named(x.to_json(self.run.label(x.compile) if x.compile is not None else None), x.compile)

    def json_stream(self) -> tuple[dict[str, object], dict[str, Iterator[dict[str, object]]]]:
        """The JSON of ``explain --json`` for a caller that streams it: ``(head, lists)``,
        ``head`` with ``lookups`` first (None: its place), ``lists["lookups"]`` the
        lookups' JSON one at a time (:meth:`json_lookups`)."""
        return {"lookups": None, **self.json_head()}, {"lookups": self.json_lookups()}

    def json_head(self) -> dict[str, object]:
        """The JSON of ``explain --json`` but its ``lookups``."""
        return {
            "summary": {**{k: v.to_json() for k, v in self.summary().items()},
                        **run_verdict(self.lookups).to_json()},
            "trace": {"path": str(self.run.path), "torch_version": self.run.torch_version,
                      "files": [{"path": str(f.path), "rank": f.rank, "records": f.records,
                                 "truncated": f.truncated, "clock": f.clock} for f in self.run.files],
                      "compiles": len(self.run.compiles)},
            "cache_dir": self.cache_dir,
            "notes": list(self.notes),
            "note_codes": [code_of(n) for n in self.notes],
        }

    def _named(self, body: dict[str, object], c: TraceCompile | None) -> dict[str, object]:
        """A lookup's JSON with ``function`` as ``ls``/``match`` name it and
        ``compiled_from`` (``fn (file:line)``); ``where`` stays the trace's frame."""
        f = self.function(c) if c is not None else None
        if f is not None:
            body["function"], body["compiled_from"] = f.name, str(f)
        else:
            body["compiled_from"] = None
        return body

    def uses(self) -> Iterator[TracedUse]:
        """What the run says about entries of the cache, for the usage store: each
        hit on an entry, and each miss that wrote one (with its compile seconds)."""
        for x in self.lookups:
            lk = x.lookup
            if lk.key is None:
                continue
            if lk.state == "hit" and x.entry is not None:
                yield TracedUse(lk.cache, lk.key, x.entry, True, lk.time)
            elif lk.state == "miss" and x.wrote is not None:
                yield TracedUse(lk.cache, lk.key, x.wrote, False, lk.time, x.seconds)

    def trace_paths(self) -> tuple[Path, ...]:
        """The trace files explained."""
        return tuple(f.path for f in self.run.files)

