"""The nearest key: which key of the cache a new key is closest to, and how it differs.

For a lookup torch answered with ``full_miss`` (a key the cache did not have),
:class:`NearestKeys` finds the nearest key of the same cache that existed
before the lookup (an entry older than the lookup; never the key the lookup
itself wrote) and the components that differ, named as ``fxcache diff``
names them (:func:`fxcache_core.keying.anatomy.diff_components` between the
key's components, which the trace records, and the candidate's). Candidates
are the keys whose graph was traced through the same function, else the keys
with the same graph (``gm``). An AOTAutograd key stores no components: its
nearest key is one that loads the nearest FX key of the same compile.

Mirrors torch's key hashing only through :mod:`fxcache_core.keying.anatomy`.
Reads the entries of the candidate keys; never imports torch, never
executes anything read from the cache.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.keying.anatomy import (
    Component,
    ComponentDiff,
    anatomy,
    diff_components,
    parse_debug_lines,
)
from fxcache_core.reasons import Reason
from fxcache_core.trace.run_facts import TraceCompile, TraceLookup, TraceRun

MAX_CANDIDATES = 256
"""FX keys compared at most for one new key when none was traced through the same
function (the most recently written first)."""


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
        diffs: the differing components themselves, both sides with torch's hashes
            (:mod:`fxcache_core.trace.root_cause` reads them; not in the JSON).
    """

    key: str
    differs: tuple[str, ...]
    details: tuple[tuple[str, str | None, str | None], ...]
    role: str | None = None
    written_by: int | None = None
    diffs: tuple[ComponentDiff, ...] = field(default=(), compare=False, repr=False)

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "differs": list(self.differs), "role": self.role,
                "written_by": self.written_by,
                "details": [{"name": n, "this": a, "nearest": b} for n, a, b in self.details]}



class NearestKeys:
    """The nearest-key search of one run against one cache, each key's components
    read once.

    ``existing(key, when)``: the entries of ``key`` that existed at ``when``;
    ``decoded(entry)``: the entry decoded (None: unreadable); ``written``: key ->
    (time, seq) of the first lookup of the run that missed it (and so wrote it).
    """

    def __init__(self, run: TraceRun, catalog: Catalog,
                 existing: Callable[[CacheKey, float], list[Entry]],
                 decoded: Callable[[Entry], DecodedEntry | None],
                 written: dict[str, tuple[float, int]]) -> None:
        self.run, self.cat = run, catalog
        self.existing, self.decoded, self.written = existing, decoded, written
        self._components: dict[str, tuple[Component, ...]] = {}
        self._parsed: dict[tuple[str, ...], tuple[Component, ...]] = {}  # a lookup's components, read
        self._nearest: dict[int, tuple[Nearest | None, list[Reason]]] = {}
        self._by_function: dict[str, list[CacheKey]] | None = None

    def find(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[Reason]]:
        """The nearest key of ``lk``'s key (None: none is close, or the search could
        not be made), and what limited the search."""
        if lk.cache == "fxgraph":
            return self._nearest_fx(lk, c)
        return self._nearest_aot(lk, c)

    def components(self, key: CacheKey) -> tuple[Component, ...]:
        got = self._components.get(key.key)
        if got is None:
            got = anatomy(self.cat, key).components
            self._components[key.key] = got
        return got

    def _existed(self, key: CacheKey, lk: TraceLookup) -> bool:
        return key.key != lk.key and bool(self.existing(key, lk.time))

    def _fx_candidates(self, lk: TraceLookup, c: TraceCompile | None) -> Iterator[CacheKey]:
        """FX keys traced through the compile's function, else (at most
        :data:`MAX_CANDIDATES`, newest first) all FX keys; each existed before ``lk``."""
        fn = c.function if c is not None else None
        same = [k for k in self._traced_from(fn) if self._existed(k, lk)] if fn else []
        if same:
            yield from same
            return
        rest = [k for k in self.cat.scan.keys if k.kind is KeyKind.FX_GRAPH and self._existed(k, lk)]
        rest.sort(key=lambda k: -(k.mtime or 0.0))
        yield from rest[:MAX_CANDIDATES]

    def _traced_from(self, function: str) -> list[CacheKey]:
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

    def _nearest_fx(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[Reason]]:
        got = self._nearest.get(lk.seq)
        if got is None:
            got = self._nearest[lk.seq] = self._find_nearest_fx(lk, c)
        return got[0], list(got[1])

    def _find_nearest_fx(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[Reason]]:
        mine = self._parsed.get(lk.components)
        if mine is None:
            mine = self._parsed[lk.components] = parse_debug_lines(lk.components)
        if not mine:
            return None, [Reason("the trace has no components for this key", "no-components")]
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
            return self._earlier_in_run(lk, c, mine, my_role), []
        _, k, diffs = best
        return Nearest(k.key, tuple(x.name for x in diffs), tuple(_detail(x) for x in diffs),
                       written_by=self._written_by(k.key, lk), diffs=diffs), []

    def _entry_existed(self, e: Entry, when: float) -> bool:
        """Whether entry ``e`` existed at ``when``, by the explainer's rule (``existing``:
        a cache copied with fresh mtimes has every entry count)."""
        k = self.cat.scan.key(e.key)
        return k is not None and e in self.existing(k, when)

    def _earlier_in_run(self, lk: TraceLookup, c: TraceCompile | None, mine: tuple[Component, ...],
                        role: str | None) -> Nearest | None:
        """A recompile whose graph changed (more dynamic dims: other inputs, another
        ``gm``): the nearest of the FX keys earlier compiles of the same frame looked
        up in this run, from the components the trace recorded (the cache need not
        hold them); None for a first compile or where there is none."""
        if c is None or c.recompile_reason is None:
            return None
        best: tuple[int, TraceLookup, tuple[ComponentDiff, ...]] | None = None
        for x in self.run.lookups[:lk.seq]:
            prev = self.run.compile_of(x)
            if (x.cache != "fxgraph" or not x.key or x.key == lk.key or not x.components or prev is None
                    or prev.ref.frame_id != c.ref.frame_id or prev.rank != c.rank):
                continue
            theirs = self._parsed.get(x.components)
            if theirs is None:
                theirs = self._parsed[x.components] = parse_debug_lines(x.components)
            if next((y.hash for y in theirs if y.name == "fx_kwargs[is_backward]"), None) != role:
                continue
            diffs = diff_components(mine, theirs)
            if best is None or len(diffs) <= best[0]:
                best = (len(diffs), x, diffs)
        if best is None:
            return None
        _, x, diffs = best
        return Nearest(x.key or "", tuple(d.name for d in diffs), tuple(_detail(d) for d in diffs),
                       written_by=x.seq if x.state == "miss" else None, diffs=diffs)

    def _written_by(self, key: str, lk: TraceLookup) -> int | None:
        w = self.written.get(key)
        return w[1] if w is not None and w[0] < lk.time else None

    def _nearest_aot(self, lk: TraceLookup, c: TraceCompile | None) -> tuple[Nearest | None, list[Reason]]:
        """An AOTAutograd key through the FX lookups its compile made after it."""
        fx = [x for x in self.run.lookups if x.compile == lk.compile and x.compile is not None
              and x.cache == "fxgraph" and not x.for_aot and x.seq > lk.seq and x.key]
        if not fx:
            return None, [Reason("the trace has no FX lookup after this one in its compile to compare through",
                                  "no-fx-lookup-to-compare")]
        first = fx[0]
        role = first.graph or "forward"
        fx_key = self.cat.scan.key(first.key or "")
        near = None
        if first.detailed == "full_miss" or fx_key is None:
            near, notes = self._nearest_fx(first, c)
            if near is None:
                return None, notes
            target, differs, details, diffs = near.key, near.differs, near.details, near.diffs
        else:
            target, differs, details, diffs = first.key or "", (), (), ()
        loaders = [e for e in self.cat.loaders_of(target) if e.key != lk.key and self._entry_existed(e, lk.time)]
        by = self.run.lookups[near.written_by] if near is not None and near.written_by is not None else None
        aot = next((x for x in self.run.lookups[:lk.seq] if by is not None and x.compile == by.compile
                    and x.cache == "aotautograd" and x.key and x.key != lk.key), None)
        if not loaders and aot is not None:  # the AOTAutograd key of the compile whose FX key is nearest
            return Nearest(aot.key or "", differs, details, role=role,
                           written_by=aot.seq if aot.state == "miss" else None, diffs=diffs), []
        if not loaders:
            return None, [Reason(f"no AOTAutograd key older than the lookup loads the nearest FX key {target[:12]}",
                                  "no-older-loader")]
        loaders.sort(key=lambda e: -e.mtime)
        notes: list[Reason] = []
        if not differs:
            notes.append(Reason(f"its {role} FX key is the same: the AOTAutograd key differs in what only it "
                                "hashes (AOTAutograd's config, the traced graph's metadata)", "same-fx-key"))
        return Nearest(loaders[0].key, differs, details, role=role,
                       written_by=self._written_by(loaders[0].key, lk), diffs=diffs), notes


def _frame_name(f: str) -> str:
    """``torch_dynamo_resume_in_fn_at_12`` -> ``fn``; other names as they are."""
    m = re.fullmatch(r"torch_dynamo_resume_in_(.+)_at_[0-9]+", f)
    return m.group(1) if m else f


def _detail(d: ComponentDiff) -> tuple[str, str | None, str | None]:
    a = d.a.readable if d.a is not None else None
    b = d.b.readable if d.b is not None else None
    if d.name == "gm" and a is not None and b is not None:
        diff = "\n".join(difflib.unified_diff(b.splitlines(), a.splitlines(), "nearest", "this",
                                              lineterm="", n=1))
        return d.name, diff, None
    return d.name, a, b


