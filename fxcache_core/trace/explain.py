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
  existed before the lookup and the components that differ
  (:mod:`fxcache_core.trace.nearest`). None: the first compile of this
  graph. A recompile carries the guard failure Dynamo logged
  (``recompile_reasons``).
* **guard-miss**: each entry that existed then, in torch's order, and the
  clause that failed, with the values of the call (``create_symbol``) and
  their sources. An entry whose guards hold for the call cannot have existed
  then (torch's ``find_guarded_entry`` would have loaded it): it is left out
  and said to be written later, whatever its mtime (a copy's) says.
* a hit that still built kernel libraries: :mod:`fxcache_core.trace.rebuilt`.
* **bypass**: torch's reason.
* **fx-entry-missing**: an AOTAutograd hit whose FX entry was gone
  (torch counts it a miss and compiles).

"Existed then" is judged by the entry's mtime against the lookup's time. A
cache copied with fresh mtimes (``cp -r``) has no entry older than the run's
last lookup: then every entry counts, and the report says so. Without a cache, the causes
still come from torch's own record. Nothing here imports torch or executes
anything read from the cache. The values returned are
:mod:`fxcache_core.trace.explain_report`'s; what limits an
explanation is a :class:`~fxcache_core.reasons.Reason` with a stable code.
"""


from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import GuardParseError, param
from fxcache_core.functions.frames import CompiledFrom, compiled_from
from fxcache_core.guards.expr import parse_guards
from fxcache_core.guards.in_force import CheckBudget, check_installed
from fxcache_core.keying.anatomy import parse_debug_lines
from fxcache_core.reasons import Reason
from fxcache_core.trace.call import traced_function
from fxcache_core.trace.dynamic_dims import dynamic_root_cause, more_dynamic_note, newly_symbolic
from fxcache_core.trace.explain_report import (
    CallValue,
    ExplainReport,
    LookupExplanation,
    TriedEntry,
)
from fxcache_core.trace.nearest import NearestKeys
from fxcache_core.trace.rebuilt import Libraries, rebuild_of
from fxcache_core.trace.root_cause import root_cause
from fxcache_core.trace.run_facts import TraceCompile, TraceLookup, TraceRun

_SYMINT_RE = re.compile(r"\('([a-z]+[0-9]+)',\)")
_NOT_IN_CACHE = Reason("the key is not in this cache (removed since, or another cache)", "key-not-in-cache")


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
    notes += [Reason(f"{f.path.name}: {f.truncated}", "trace-truncated") for f in run.files if f.truncated]
    notes += [Reason(f"{f.path.name}: {f.skipped} damaged line(s) or record(s) skipped", "trace-damaged")
              for f in run.files if f.skipped]
    notes += [Reason(f"{f.path.name}: no epoch timestamp in the file; times read in this machine's time zone",
                     "local-clock") for f in run.files if f.clock == "local" and f.records]
    if ex.fresh_mtimes:
        notes.append(Reason("the cache has no entry older than the lookups it was compared for (a copy "
                            "that did not keep mtimes?): every entry was taken to have existed then",
                            "fresh-mtimes"))
    if catalog is None:
        notes.append(Reason("no cache: causes are torch's own record; entries, nearest keys and failed "
                            f"clauses need the cache ({param('cache_dir')})", "no-cache"))
    return ExplainReport(run, str(catalog.scan.root) if catalog is not None else None, tuple(out), tuple(notes),
                         functions=_functions(run, catalog, out))


def _functions(run: TraceRun, catalog: Catalog | None,
               lookups: Sequence[LookupExplanation]) -> dict[int, CompiledFrom]:
    """Compile index -> the function it compiled, named as ``ls`` and ``match`` name it:
    from a key it looked up that the cache holds (:func:`~fxcache_core.functions.frames.compiled_from`:
    decorator wrappers folded into the function they wrap), else from the trace's own
    frame (:func:`~fxcache_core.trace.call.traced_function`: a wrapper stays itself,
    the trace does not say what it wraps)."""
    out: dict[int, CompiledFrom] = {}
    if catalog is not None:
        for x in sorted(lookups, key=lambda x: x.lookup.cache != "aotautograd"):
            c, key = x.compile, x.lookup.key
            if c is None or c.index in out or key is None:
                continue
            k = catalog.scan.key(key)
            named = compiled_from(catalog, k) if k is not None else None
            if named is not None:
                out[c.index] = named
    for c in run.compiles:
        if c.index not in out and (t := traced_function(c)) is not None:
            out[c.index] = t
    return out


class _Explainer:
    """Per-run state: what each key looked like, decoded once."""

    def __init__(self, run: TraceRun, catalog: Catalog | None) -> None:
        self.run = run
        self.cat = catalog
        self.fresh_mtimes = False
        self._trust_mtimes: bool | None = None
        self.budget = CheckBudget()  # what the installed-guards checks of the run read, together
        # key -> (time, seq) of the first lookup of this run that missed it (and so wrote it).
        self.written: dict[str, tuple[float, int]] = {}
        for lk in run.lookups:
            if lk.state == "miss" and lk.key and lk.key not in self.written:
                self.written[lk.key] = (lk.time, lk.seq)
        self.nearest = (NearestKeys(run, catalog, self.existing, self.decoded, self.written)
                        if catalog is not None else None)
        roots = [catalog.scan.root] if catalog is not None else []
        roots += [Path(d) for d in run.cache_dirs if Path(d).is_dir()]
        self.libs = Libraries(roots) if roots else None
        self.run_start = min((c.start for c in run.compiles if c.start is not None), default=0.0)

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
                x = replace(x, notes=(*x.notes, Reason("this key is not in the cache: torch did not save an "
                                                       "entry for it, or it was removed since", "key-not-saved")))
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
                                     notes=(Reason("torch found this entry but not an FX entry it loads "
                                                   "(FXGraphCacheMiss), so it compiled", "fx-entry-gone"),))
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
        notes: list[Reason] = []
        entry: Entry | None = None
        d: DecodedEntry | None = None
        if self.cat is None:
            pass
        elif key is None:
            notes.append(_NOT_IN_CACHE)
        else:
            entry, d = self._loaded(key, lk)
            if entry is None:
                notes.append(Reason("no entry of this key has the guards string torch recorded for the hit "
                                    "(removed or rewritten since)", "no-entry-with-recorded-guards"))
        values = self.values(d, lk, c)
        check = None
        if c is not None:
            expr = d.guards_expr if d is not None else lk.guards_expr
            sources = {v.placeholder: v.source for v in values}
            check = check_installed(expr, sources, _call_values(c), c.final_guards, self.budget)
        whole, why = rebuild_of(lk, c, self.libs, self.run_start)
        rebuilt = whole
        if whole is not None and lk.cache == "aotautograd":  # its FX loads say what they built
            loads = []
            for x in self.run.lookups[lk.seq + 1:]:
                if not (x.for_aot and x.compile == lk.compile):
                    break
                loads.append((x.since_line, x.line))
            rebuilt = rebuild_of(lk, c, self.libs, self.run_start, loads)[0] if loads else whole
        return LookupExplanation(lk, c, "hit", entry=entry.name if entry else None, values=values,
                                 guards_check=check, added_guards=added, notes=(*notes, *why), rebuilt=rebuilt,
                                 rebuild_seconds=whole.seconds if whole is not None else None)

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
            note = () if self.cat is None else (_NOT_IN_CACHE,)
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
        notes: list[Reason] = []
        # An entry whose guards hold for the call cannot have been there when torch looked
        # (it would have loaded it): written later, whatever its mtime says (a copy's).
        later = [t.entry for t in tried if t.status == "pass"]
        tried = [t for t in tried if t.status != "pass"]
        wrote = self._wrote(lk, c)
        for name in later:
            by = " (by this compile)" if name == wrote else ""
            notes.append(Reason(f"entry {name[:12]}'s guards hold for this call's values: it was written after "
                                f"the lookup{by}, so torch did not try it", "written-later"))
        if not tried and not later:
            notes.append(Reason("no entry of this key is older than the lookup (removed since?)", "no-older-entry"))
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
        if self.nearest is None or lk.key is None:
            return LookupExplanation(lk, c, "new-key", values=values)
        nearest, notes = self.nearest.find(lk, c)
        cause = None
        if nearest is not None and c is not None and c.recompile_reason is not None:
            notes += more_dynamic_note(self.run, c, nearest.written_by)
            # Automatic dynamic made dims symbolic: they explain the graph and inputs that differ.
            cause = dynamic_root_cause(newly_symbolic(self.run, c, nearest.written_by)[1], nearest.diffs)
        # No near key, nothing that stopped the search, not a recompile: the first compile of this graph.
        first = nearest is None and not notes and (c is None or c.recompile_reason is None)
        if cause is None and nearest is not None:
            cause = root_cause(nearest, c, self.run.torch_version, graph=lk.graph)
        return LookupExplanation(lk, c, "new-key", nearest=nearest, first_compile=first,
                                 values=values, notes=tuple(notes), root_cause=cause)


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


__all__ = ["explain"]
