"""What the cache did for every compile of a traced run, and why (``fxcache explain``).

:mod:`fxcache_core.trace.run` says what torch looked up (key, state, torch's
``cache_status_detailed``); this module relates each lookup to the cache on
disk and gives the cause:

* **hit**: the entry torch loaded (the first entry, in torch's lookup order,
  that existed then and whose guards string is the one torch recorded,
  ``cache_status_guard_expr``; its stored compile time confirms it), the
  compile time it saved, the guards the hit added to the ShapeEnv
  (``guard_added_fast`` while it was made) and whether every clause of the
  entry's guards is among the guards Dynamo installed
  (:func:`fxcache_core.guards.in_force.check_installed`).
* **new-key** (``full_miss``): the nearest key of the same cache that
  existed before the lookup (an entry older than the lookup; never the key
  the lookup itself wrote) and the components that differ, named as
  ``fxcache diff`` names them (:func:`fxcache_core.keying.anatomy.diff_components`
  between the key's components, which the trace records, and the candidate's);
  candidates are the keys whose graph was traced through the same function,
  else the keys with the same graph (``gm``). None: the first compile of this
  graph. An AOTAutograd key stores no components: its nearest key is one that
  loads the nearest FX key of the same compile. A recompile carries the guard
  failure Dynamo logged (``recompile_reasons``).
* **guard-miss**: each entry that existed then, in torch's order, and the
  clause that failed, with the values of the call (``create_symbol``) and
  their sources.
* **bypass**: torch's reason.
* **fx-entry-missing**: an AOTAutograd hit whose FX entry was gone
  (torch counts it a miss and compiles).

"Existed then" is judged by the entry's mtime against the lookup's time. A
cache copied with fresh mtimes (``cp -r``) has no entry older than the run's
last lookup: then every entry counts, and the report says so. Without a cache, the causes
still come from torch's own record. Nothing here imports torch or executes
anything read from the cache.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.catalog import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import parse_guards
from fxcache_core.guards.in_force import InstalledCheck, check_installed
from fxcache_core.keying.anatomy import (
    Component,
    ComponentDiff,
    anatomy,
    diff_components,
    parse_debug_lines,
)
from fxcache_core.trace.run import TraceCompile, TraceLookup, TraceRun

Cause = Literal["hit", "new-key", "guard-miss", "bypass", "fx-entry-missing"]
MAX_CANDIDATES = 256
"""FX keys compared at most for one new key when none was traced through the same
function (the most recently written first)."""
_SYMINT_RE = re.compile(r"\('([a-z]+\d+)',\)")


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

    def to_json(self) -> dict[str, object]:
        return {"entry": self.entry, "status": self.status, "clause": self.clause,
                "values": {v.placeholder: v.to_json() for v in self.values}, "error": self.error}


@dataclass(frozen=True)
class Nearest:
    """The nearest key that existed before a new key was looked up.

    Attributes:
        key: that key.
        differs: the components that differ, as ``fxcache diff`` names them.
        details: each differing component: (name, this lookup's value, the
            nearest key's value; None where absent); ``gm`` is a unified diff.
        role: for an AOTAutograd key, which FX graph was compared (``forward``).
        written_by: ``seq`` of the lookup of this run that wrote it, if any.
    """

    key: str
    differs: tuple[str, ...]
    details: tuple[tuple[str, str | None, str | None], ...]
    role: str | None = None
    written_by: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "differs": list(self.differs), "role": self.role,
                "written_by": self.written_by,
                "details": [{"name": n, "this": a, "nearest": b} for n, a, b in self.details]}


@dataclass(frozen=True)
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
        notes: what limits the explanation (the key is not in the cache...).
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

    def to_json(self, label: str | None = None) -> dict[str, object]:
        """``label``: the compile as ``match --from-trace --compile`` names it
        (:meth:`~fxcache_core.trace.run.TraceRun.label`)."""
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
            "guards_check": self.guards_check.to_json() if self.guards_check is not None else None,
            "added_guards": list(self.added_guards),
            "wrote": self.wrote,
            "recompile_reason": c.recompile_reason if c is not None else None,
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class CacheSummary:
    """Totals for one cache over the run, in the style of ``ccache -s``.

    Attributes:
        lookups, hits: counts.
        misses: cause -> count (``new-key``, ``guard-miss``, ``fx-entry-missing``).
        bypasses: torch's reason -> count.
        seconds_missed: compile seconds spent on misses (where recorded).
        seconds_saved: compile seconds saved by hits (the entries' recorded compile times).
        guards_failed: hits whose guards check found a clause missing.
    """

    lookups: int
    hits: int
    misses: dict[str, int]
    bypasses: dict[str, int]
    seconds_missed: float
    seconds_saved: float
    guards_failed: int

    def to_json(self) -> dict[str, object]:
        return {"lookups": self.lookups, "hits": self.hits, "misses": dict(self.misses),
                "miss_total": sum(self.misses.values()), "bypasses": dict(self.bypasses),
                "bypass_total": sum(self.bypasses.values()),
                "seconds_missed": round(self.seconds_missed, 3), "seconds_saved": round(self.seconds_saved, 3),
                "guards_failed": self.guards_failed}


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

    def summary(self) -> dict[str, CacheSummary]:
        """Per cache (``aotautograd``, ``fxgraph``), in that order, those looked up."""
        out: dict[str, CacheSummary] = {}
        for cache in ("aotautograd", "fxgraph"):
            mine = [x for x in self.lookups if x.lookup.cache == cache]
            if not mine:
                continue
            misses: Counter[str] = Counter(x.cause for x in mine if x.lookup.state == "miss")
            bypasses: Counter[str] = Counter(x.lookup.bypass_reason or "(no reason recorded)"
                                             for x in mine if x.lookup.state == "bypass")
            out[cache] = CacheSummary(
                lookups=len(mine), hits=sum(1 for x in mine if x.lookup.state == "hit"),
                misses=dict(misses.most_common()), bypasses=dict(bypasses.most_common()),
                seconds_missed=sum(x.seconds or 0.0 for x in mine if x.lookup.state == "miss"),
                seconds_saved=sum(x.seconds or 0.0 for x in mine if x.lookup.state == "hit"),
                guards_failed=sum(1 for x in mine if x.guards_check is not None
                                  and x.guards_check.status == "failed"))
        return out

    def to_json(self) -> dict[str, object]:
        """The JSON contract of ``fxcache explain --json`` (README: "Why did it miss")."""
        return {
            "lookups": [x.to_json(self.run.label(x.compile) if x.compile is not None else None)
                        for x in self.lookups],
            "summary": {k: v.to_json() for k, v in self.summary().items()},
            "trace": {"path": str(self.run.path), "torch_version": self.run.torch_version,
                      "files": [{"path": str(f.path), "rank": f.rank, "records": f.records,
                                 "truncated": f.truncated, "clock": f.clock} for f in self.run.files],
                      "compiles": len(self.run.compiles)},
            "cache_dir": self.cache_dir,
            "notes": list(self.notes),
        }


def explain(run: TraceRun, catalog: Catalog | None,
            on_lookup: Callable[[], None] | None = None, notes: Sequence[str] = ()) -> ExplainReport:
    """Explain every lookup of ``run`` against the cache ``catalog`` reads (None:
    from the trace alone). ``on_lookup`` is called once per lookup (progress);
    ``notes`` are added to the report's (why there is no cache...).

    Reads only the entries of the keys the run looked up and, for new keys, the
    candidates for the nearest key. Never raises for what the cache or trace
    holds: what cannot be decided is said in ``notes``.
    """
    ex = _Explainer(run, catalog)
    out = []
    for lk in run.lookups:
        out.append(ex.one(lk))
        if on_lookup is not None:
            on_lookup()
    notes = list(notes)
    notes += [f"{f.path.name}: {f.truncated}" for f in run.files if f.truncated]
    notes += [f"{f.path.name}: {f.skipped} damaged line(s) or record(s) skipped" for f in run.files if f.skipped]
    notes += [f"{f.path.name}: no epoch timestamp in the file; times read in this machine's time zone"
              for f in run.files if f.clock == "local" and f.records]
    if ex.fresh_mtimes:
        notes.append("the cache has no entry older than the lookups it was compared for (a copy "
                     "that did not keep mtimes?): every entry was taken to have existed then")
    if catalog is None:
        notes.append("no cache: causes are torch's own record; entries, nearest keys and failed "
                     "clauses need the cache (--cache-dir)")
    return ExplainReport(run, str(catalog.scan.root) if catalog is not None else None, tuple(out), tuple(notes))


class _Explainer:
    """Per-run state: what each key looked like, decoded once."""

    def __init__(self, run: TraceRun, catalog: Catalog | None) -> None:
        self.run = run
        self.cat = catalog
        self.fresh_mtimes = False
        self._trust_mtimes: bool | None = None
        self._components: dict[str, tuple[Component, ...]] = {}
        self._parsed: dict[tuple[str, ...], tuple[Component, ...]] = {}  # a lookup's components, read
        self._nearest: dict[int, tuple[Nearest | None, list[str]]] = {}
        self._by_function: dict[str, list[CacheKey]] | None = None
        # key -> (time, seq) of the first lookup of this run that missed it (and so wrote it).
        self.written: dict[str, tuple[float, int]] = {}
        for lk in run.lookups:
            if lk.state == "miss" and lk.key and lk.key not in self.written:
                self.written[lk.key] = (lk.time, lk.seq)

    # --- entry level -------------------------------------------------------

    def existing(self, key: CacheKey, when: float) -> list[Entry]:
        """The entries of ``key`` that existed at ``when`` (see the module docstring)."""
        if self._trust_mtimes is None:
            assert self.cat is not None
            end = max((lk.time for lk in self.run.lookups), default=0.0)
            self._trust_mtimes = any(e.mtime < end for e in self.cat.scan.entries())
            self.fresh_mtimes = not self._trust_mtimes and self.cat.scan.entry_count > 0
        if not self._trust_mtimes:
            return list(key.entries)
        return [e for e in key.entries if e.mtime < when]

    def values(self, decoded: DecodedEntry | None, lk: TraceLookup, c: TraceCompile | None) -> tuple[CallValue, ...]:
        """The placeholders of the entry (or of the lookup's components) with the call's values."""
        if decoded is not None:
            exprs = [(i.expr, i.source) for i in decoded.symints]
        else:
            inputs = [line for line in lk.components if "] example_inputs[" in line]
            exprs = [(m.group(1), None) for comp in parse_debug_lines(inputs)
                     if comp.group == "example_inputs" and (m := _SYMINT_RE.fullmatch(comp.value))
                     and not m.group(1).startswith("u")]
        out = []
        for n, (expr, src) in enumerate(exprs):
            fact = c.symbol(expr) if c is not None and expr else None
            out.append(CallValue(f"t{n}", expr, (fact.source if fact else None) or src,
                                 fact.value if fact else None))
        return tuple(out)

    def decoded(self, e: Entry) -> DecodedEntry | None:
        assert self.cat is not None
        d = self.cat.load(e)
        return d if isinstance(d, DecodedEntry) else None

    # --- one lookup --------------------------------------------------------

    def one(self, lk: TraceLookup) -> LookupExplanation:
        x = self._one(lk)
        if lk.state == "miss" and not lk.for_aot and self.cat is not None:  # an FX load for an
            # AOTAutograd hit that misses writes nothing: torch raises and compiles again
            wrote = self._wrote(lk, x.compile)
            if wrote is not None:
                x = replace(x, wrote=wrote)
            elif self._key(lk) is None and lk.key is not None:
                x = replace(x, notes=(*x.notes, "this key is not in the cache: torch did not save an "
                                      "entry for it, or it was removed since"))
        return x

    def _wrote(self, lk: TraceLookup, c: TraceCompile | None) -> str | None:
        key = self._key(lk)
        if key is None:
            return None
        later = sorted((e for e in key.entries if e.mtime >= lk.time), key=lambda e: e.mtime)
        for e in later:
            d = self.decoded(e)
            if d is None:
                continue
            if lk.seconds_taken is not None and d.compile_time_ns is not None:
                if abs(d.compile_time_ns / 1e9 - lk.seconds_taken) < 1e-6:
                    return e.name
                continue
            if not d.guards_expr:
                return e.name
            env = {v.placeholder: v.value for v in self.values(d, lk, c) if v.value is not None}
            try:
                if parse_guards(d.guards_expr).evaluate(env).passed:
                    return e.name
            except GuardParseError:
                continue
        return None

    def _one(self, lk: TraceLookup) -> LookupExplanation:
        c = self.run.compile_of(lk)
        if lk.state == "bypass":
            return LookupExplanation(lk, c, "bypass", values=self.values(None, lk, c))
        if lk.state == "hit":
            return self.hit(lk, c)
        if lk.detailed == "hit":  # an AOTAutograd hit whose FX entry was gone
            key = self._key(lk)
            entry, d = self._loaded(key, lk) if key is not None else (None, None)
            return LookupExplanation(lk, c, "fx-entry-missing", entry=entry.name if entry else None,
                                     values=self.values(d, lk, c),
                                     notes=("torch found this entry but not an FX entry it loads "
                                            "(FXGraphCacheMiss), so it compiled",))
        if lk.detailed == "guard_miss":
            return self.guard_miss(lk, c)
        return self.new_key(lk, c)

    def _key(self, lk: TraceLookup) -> CacheKey | None:
        if self.cat is None or lk.key is None:
            return None
        return self.cat.scan.key(lk.key)

    def hit(self, lk: TraceLookup, c: TraceCompile | None) -> LookupExplanation:
        added = tuple(g.expr for g in (c.guards_added if c is not None else ())
                      if lk.since_line < g.line <= lk.line)
        key = self._key(lk)
        notes: list[str] = []
        entry: Entry | None = None
        d: DecodedEntry | None = None
        if self.cat is None:
            pass
        elif key is None:
            notes.append("the key is not in this cache (removed since, or another cache)")
        else:
            entry, d = self._loaded(key, lk)
            if entry is None:
                notes.append("no entry of this key has the guards string torch recorded for the hit "
                             "(removed or rewritten since)")
        values = self.values(d, lk, c)
        check = None
        if c is not None:
            expr = d.guards_expr if d is not None else lk.guards_expr
            sources = {v.placeholder: v.source for v in values}
            check = check_installed(expr, sources, _call_values(c), c.final_guards)
        return LookupExplanation(lk, c, "hit", entry=entry.name if entry else None, values=values,
                                 guards_check=check, added_guards=added, notes=tuple(notes))

    def _loaded(self, key: CacheKey, lk: TraceLookup) -> tuple[Entry | None, DecodedEntry | None]:
        """The entry torch loaded: first (lookup order) that existed, with the recorded
        guards string; among several such, the one whose compile time is the one saved."""
        want = lk.guards_expr or None
        same = []
        for e in self.existing(key, lk.time):
            d = self.decoded(e)
            if d is not None and (d.guards_expr or None) == want:
                same.append((e, d))
        if not same:
            return None, None
        if lk.seconds_saved is not None and len(same) > 1:
            for e, d in same:
                if d.compile_time_ns is not None and abs(d.compile_time_ns / 1e9 - lk.seconds_saved) < 2e-3:
                    return e, d
        return same[0]

    def guard_miss(self, lk: TraceLookup, c: TraceCompile | None) -> LookupExplanation:
        key = self._key(lk)
        if key is None:
            note = () if self.cat is None else ("the key is not in this cache (removed since, or another cache)",)
            return LookupExplanation(lk, c, "guard-miss", values=self.values(None, lk, c), notes=note)
        tried = []
        values: tuple[CallValue, ...] = ()
        wanted = self._recorded_fx_guards(lk) if lk.for_aot else None
        for e in self.existing(key, lk.time):
            d = self.decoded(e)
            if d is None:
                tried.append(TriedEntry(e.name, "unreadable", None, (), self._why_unreadable(e)))
                continue
            vals = self.values(d, lk, c)
            values = values or vals
            if lk.for_aot:  # looked up by the exact guards string, not by evaluating it
                tried.append(TriedEntry(e.name, "differs", None, vals,
                                        "its guards string is not the one the AOTAutograd entry recorded"
                                        + (f" ({wanted})" if wanted else "")))
            else:
                tried.append(_evaluate(e.name, d, vals))
        notes = []
        if any(t.status == "pass" for t in tried):
            notes.append("an entry's guards hold for this call's values: it was written after the lookup, "
                         "or the values in the trace are not the ones torch used")
        if not tried:
            notes.append("no entry of this key is older than the lookup (removed since?)")
        return LookupExplanation(lk, c, "guard-miss", tried=tuple(tried),
                                 values=values or self.values(None, lk, c), notes=tuple(notes))

    def _recorded_fx_guards(self, lk: TraceLookup) -> str | None:
        """For an FX load made for an AOTAutograd hit: the guards string that entry
        recorded for this FX key (what torch looked for)."""
        aot = next((x for x in reversed(self.run.lookups[:lk.seq]) if x.cache == "aotautograd"
                    and x.compile == lk.compile), None)
        key = self._key(aot) if aot is not None else None
        if aot is None or key is None:
            return None
        _, d = self._loaded(key, aot)
        for ref in (d.forward, d.backward) if d is not None else ():
            if ref is not None and ref.key == lk.key:
                return ref.guards_expr
        return None

    def _why_unreadable(self, e: Entry) -> str | None:
        assert self.cat is not None
        d = self.cat.load(e)
        return getattr(d, "reason", None)

    # --- new keys ----------------------------------------------------------

    def new_key(self, lk: TraceLookup, c: TraceCompile | None) -> LookupExplanation:
        values = self.values(None, lk, c)
        if self.cat is None or lk.key is None:
            return LookupExplanation(lk, c, "new-key", values=values)
        if lk.cache == "fxgraph":
            nearest, notes = self._nearest_fx(lk, c)
        else:
            nearest, notes = self._nearest_aot(lk, c)
        # No near key and nothing that stopped the search: the first compile of this graph.
        return LookupExplanation(lk, c, "new-key", nearest=nearest, first_compile=nearest is None and not notes,
                                 values=values, notes=tuple(notes))

    def components(self, key: CacheKey) -> tuple[Component, ...]:
        got = self._components.get(key.key)
        if got is None:
            assert self.cat is not None
            got = anatomy(self.cat, key).components
            self._components[key.key] = got
        return got

    def _existed(self, key: CacheKey, lk: TraceLookup) -> bool:
        return key.key != lk.key and bool(self.existing(key, lk.time))

    def _fx_candidates(self, lk: TraceLookup, c: TraceCompile | None) -> Iterator[CacheKey]:
        """FX keys traced through the compile's function, else (at most
        :data:`MAX_CANDIDATES`, newest first) all FX keys; each existed before ``lk``."""
        assert self.cat is not None
        fn = c.function if c is not None else None
        same = [k for k in self._traced_from(fn) if self._existed(k, lk)] if fn else []
        if same:
            yield from same
            return
        rest = [k for k in self.cat.scan.keys if k.kind is KeyKind.FX_GRAPH and self._existed(k, lk)]
        rest.sort(key=lambda k: -(k.mtime or 0.0))
        yield from rest[:MAX_CANDIDATES]

    def _traced_from(self, function: str) -> list[CacheKey]:
        assert self.cat is not None
        if self._by_function is None:
            self._by_function = defaultdict(list)
            self.cat.read_ahead(e for k in self.cat.scan.keys if k.kind is KeyKind.FX_GRAPH for e in k.entries)
            for k in self.cat.scan.keys:
                if k.kind is not KeyKind.FX_GRAPH:
                    continue
                for e in k.entries:
                    d = self.decoded(e)
                    if d is not None:
                        for f in (d.origin.functions if d.origin else ()):
                            self._by_function[_frame_name(f)].append(k)
                        break
        return list(dict.fromkeys(self._by_function.get(function, ())))

    def _nearest_fx(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[str]]:
        got = self._nearest.get(lk.seq)
        if got is None:
            got = self._nearest[lk.seq] = self._find_nearest_fx(lk, c)
        return got[0], list(got[1])

    def _find_nearest_fx(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[str]]:
        mine = self._parsed.get(lk.components)
        if mine is None:
            mine = self._parsed[lk.components] = parse_debug_lines(lk.components)
        if not mine:
            return None, ["the trace has no components for this key"]
        fn = c.function if c is not None else None
        same_fn = bool(fn) and any(self._existed(k, lk) for k in self._traced_from(fn or ""))
        my_gm = next((x.hash for x in mine if x.name == "gm"), None)
        my_role = next((x.hash for x in mine if x.name == "fx_kwargs[is_backward]"), None)
        best: tuple[int, CacheKey, tuple[ComponentDiff, ...]] | None = None
        for k in self._fx_candidates(lk, c):
            comps = self.components(k)
            if not comps:
                continue
            if next((x.hash for x in comps if x.name == "fx_kwargs[is_backward]"), None) != my_role:
                continue  # a backward graph is not near a forward one
            if not same_fn and next((x.hash for x in comps if x.name == "gm"), None) != my_gm:
                continue  # another function's graph is not "near", whatever the count
            diffs = diff_components(mine, comps)
            if best is None or len(diffs) < best[0]:
                best = (len(diffs), k, diffs)
        if best is None:
            return None, []
        _, k, diffs = best
        return Nearest(k.key, tuple(x.name for x in diffs), tuple(_detail(x) for x in diffs),
                       written_by=self._written_by(k.key, lk)), []

    def _written_by(self, key: str, lk: TraceLookup) -> int | None:
        w = self.written.get(key)
        return w[1] if w is not None and w[0] < lk.time else None

    def _nearest_aot(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[str]]:
        """An AOTAutograd key through the FX lookups its compile made after it."""
        assert self.cat is not None
        fx = [x for x in self.run.lookups if x.compile == lk.compile and x.compile is not None
              and x.cache == "fxgraph" and not x.for_aot and x.seq > lk.seq and x.key]
        if not fx:
            return None, ["the trace has no FX lookup after this one in its compile to compare through"]
        first = fx[0]
        role = first.graph or "forward"
        fx_key = self.cat.scan.key(first.key or "")
        if first.detailed == "full_miss" or fx_key is None:
            near, notes = self._nearest_fx(first, c)
            if near is None:
                return None, notes
            target, differs, details = near.key, near.differs, near.details
        else:
            target, differs, details = first.key or "", (), ()
        loaders = [e for e in self.cat.loaders_of(target)
                   if e.mtime < lk.time and e.key != lk.key]
        if not loaders:
            return None, [f"no AOTAutograd key older than the lookup loads the nearest FX key {target[:12]}"]
        loaders.sort(key=lambda e: -e.mtime)
        notes = []
        if not differs:
            notes.append(f"its {role} FX key is the same: the AOTAutograd key differs in what only it "
                         "hashes (AOTAutograd's config, the traced graph's metadata)")
        return Nearest(loaders[0].key, differs, details, role=role,
                       written_by=self._written_by(loaders[0].key, lk)), notes


def _frame_name(f: str) -> str:
    """``torch_dynamo_resume_in_fn_at_12`` -> ``fn``; other names as they are."""
    m = re.fullmatch(r"torch_dynamo_resume_in_(.+)_at_\d+", f)
    return m.group(1) if m else f


def _detail(d: ComponentDiff) -> tuple[str, str | None, str | None]:
    a = d.a.readable if d.a is not None else None
    b = d.b.readable if d.b is not None else None
    if d.name == "gm" and a is not None and b is not None:
        diff = "\n".join(difflib.unified_diff(b.splitlines(), a.splitlines(), "nearest", "this",
                                              lineterm="", n=1))
        return d.name, diff, None
    return d.name, a, b


def _evaluate(name: str, d: DecodedEntry, values: tuple[CallValue, ...]) -> TriedEntry:
    """One entry's guards at the call's values, as torch evaluates them."""
    if not d.guards_expr:
        return TriedEntry(name, "pass", None, values)
    try:
        g = parse_guards(d.guards_expr)
    except GuardParseError as e:
        return TriedEntry(name, "unknown", None, values, str(e))
    env = {v.placeholder: v.value for v in values if v.value is not None}
    verdict = g.evaluate(env)
    f = verdict.first_failure
    if f is not None:
        return TriedEntry(name, f.status, f.clause.text, values, f.error)
    return TriedEntry(name, verdict.status, None, values)


def _call_values(c: TraceCompile) -> dict[str, int]:
    """Source -> value of the traced call: symbols, tensor sizes, strides, offsets."""
    out: dict[str, int] = {}
    for t in c.tensors:
        for i, v in enumerate(t.size):
            if isinstance(v, int):
                out[f"{t.source}.size()[{i}]"] = v
        for i, v in enumerate(t.stride):
            if isinstance(v, int):
                out[f"{t.source}.stride()[{i}]"] = v
        if t.storage_offset is not None:
            out[f"{t.source}.storage_offset()"] = t.storage_offset
    for s in c.symbols:
        if s.source and s.value is not None:
            out.setdefault(s.source, s.value)
    return out


__all__ = ["CacheSummary", "CallValue", "ExplainReport", "LookupExplanation", "Nearest", "TriedEntry",
           "explain"]
