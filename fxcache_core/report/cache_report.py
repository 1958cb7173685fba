"""What ``fxcache report``'s page shows, as one value: a cache (and a traced run) as
``df``, ``ls``, ``gc --dry-run``, ``coverage`` and ``explain`` report them.

:func:`cache_report` calls the functions those commands call and keeps their values:
:class:`~fxcache_core.prune.disk_usage.DiskUsage` (``df``),
:class:`~fxcache_core.functions.listing.FunctionGroup` and
:class:`~fxcache_core.functions.listing.KeyRow` with each entry's
:class:`~fxcache_core.guards.user_terms.Region` (``ls --by function``, ``ls --entries``),
:class:`~fxcache_core.prune.plan.GcPlan` of gc's default policy (``gc --dry-run``),
:class:`~fxcache_core.report.shape_maps.ShapeMap` (``coverage`` sweeps) and
:class:`~fxcache_core.trace.explain_report.ExplainReport` (``explain``). Its JSON
(:meth:`CacheReport.to_json`) is made of those commands' JSON, so that a number on the
page is the number the command prints; what it adds is said where it is made: which FX
keys each torch build made (:class:`TorchBuilds`), what gc's plan removes of each
function's keys, the run's compiles as a timeline.

The page is bounded, whatever the cache's size: the entries whose regions it lists
(:data:`MAX_LISTED_KEYS` keys per function, :data:`MAX_LISTED_ENTRIES` entries in all,
in ``ls``'s order: a region costs a sympy summary, a millisecond or so), the maps
(:data:`MAX_MAPS`, :data:`MAX_MAPS_PER_FUNCTION` per function,
:data:`PAGE_CLAUSE_BUDGET` clause evaluations together), the FX keys read for their
torch build (:data:`MAX_BUILD_KEYS`, the most recently used), and a run's lookups
(:data:`MAX_RUN_LOOKUPS`; its totals count them all). What a bound left out is said
in the JSON (``keys_listed``, ``not_drawn``, ``torch_builds.read``,
``run.lookups_total``), and ``ls``, ``coverage`` and ``explain`` give it. Never imports
torch, never prints, never writes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.functions.listing import FunctionGroup, by_function, key_rows
from fxcache_core.guards.key_guards import EntryGuards, entry_guards
from fxcache_core.guards.user_terms import Region
from fxcache_core.keying.anatomy import parse_debug_lines
from fxcache_core.keying.torch_builds import version_of
from fxcache_core.lookup.binding import DynamicMode
from fxcache_core.prune.disk_usage import DiskUsage, Reclaim, measure
from fxcache_core.prune.plan import GcPlan, plan_gc
from fxcache_core.prune.policy import GcPolicy
from fxcache_core.report.shape_maps import MAP_CLAUSE_BUDGET, ShapeMap, calls_by_key, key_map
from fxcache_core.trace.explain_report import ExplainReport

REPORT_FORMAT = "fxcache-report/1"
"""The ``format`` of the report's JSON; a change that breaks a reader gets a new number."""
MAX_LISTED_KEYS = 6
"""Most keys of one function whose entries the page lists with their regions."""
MAX_LISTED_ENTRIES = 200
"""Most entries the page lists with their regions, all functions together."""
MAX_BUILD_KEYS = 64
"""Most FX keys read for the torch build that made them (their debug lines), the most
recently used first."""
MAX_MAPS = 32
"""Most maps one page draws."""
MAX_MAPS_PER_FUNCTION = 4
"""Most maps one function gets."""
PAGE_CLAUSE_BUDGET = 200_000
"""Most clause evaluations the maps of one page may cost together (each map at most
:data:`~fxcache_core.report.shape_maps.MAP_CLAUSE_BUDGET`)."""
MAX_RUN_LOOKUPS = 2_000
"""Most lookups of a run the page lists (its totals and verdict count every lookup)."""


@dataclass(frozen=True, slots=True)
class TorchBuild:
    """The FX keys of the cache one torch build made.

    Attributes:
        component: the ``torch_version`` component's hash (a digest of torch's sources).
        version: ``torch.__version__`` of that build where fxcache has recorded it
            (:func:`~fxcache_core.keying.torch_builds.version_of`), else None.
        fx_keys: how many FX keys name it.
    """

    component: str
    version: str | None
    fx_keys: int

    def to_json(self) -> dict[str, object]:
        return {"torch_version_component": self.component, "torch_version": self.version,
                "fx_keys": self.fx_keys}


@dataclass(frozen=True, slots=True)
class TorchBuilds:
    """The torch builds that made the FX keys read (:func:`torch_builds`).

    Attributes:
        builds: one per ``torch_version`` component, most keys first.
        read: the FX keys read (at most :data:`MAX_BUILD_KEYS`, the most recently used);
            a key none of whose entries decodes is read but in no build.
        fx_keys: the FX keys of the cache.
    """

    builds: tuple[TorchBuild, ...]
    read: int
    fx_keys: int

    def to_json(self) -> dict[str, object]:
        return {"builds": [b.to_json() for b in self.builds], "read": self.read, "fx_keys": self.fx_keys}


@dataclass(frozen=True)
class FunctionReport:
    """One function of the cache.

    Attributes:
        group: its keys (``ls --by function``).
        regions: entry path (``Entry.file.where``) -> the shapes it serves (None: unreadable
            or not understood), for the entries of its first ``listed`` keys (``ls --entries``).
        listed: how many of its keys (the first, in ``ls``'s order) the page lists with their entries.
        reclaimable: what gc's default plan removes of its keys' entries.
        maps: the maps drawn of its keys.
        not_drawn: keys of it with entries the page's bound left without a map
            (whether they have a dynamic dim was not looked at).
    """

    group: FunctionGroup
    regions: Mapping[str, Region | None]
    listed: int
    reclaimable: Reclaim
    maps: tuple[ShapeMap, ...] = ()
    not_drawn: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """:meth:`FunctionGroup.to_json` (``ls --by function --json``), its first
        ``keys_listed`` keys as ``ls --entries --json`` gives them (each entry with its
        ``region``), plus ``gc_reclaimable`` (``files``, ``bytes``), ``maps``
        (:meth:`ShapeMap.to_json`) and ``not_drawn`` (keys)."""
        body = self.group.to_json()
        body["keys"][:self.listed] = [r.to_json(regions=self.regions) for r in self.group.keys[:self.listed]]
        body["keys_listed"] = self.listed
        body["gc_reclaimable"] = self.reclaimable.to_json()
        body["maps"] = [m.to_json() for m in self.maps]
        body["not_drawn"] = list(self.not_drawn)
        return body


@dataclass(frozen=True)
class CacheReport:
    """A cache and, optionally, a traced run, as the report shows them.

    Attributes:
        disk: ``df`` of the cache dir.
        triton: ``df`` of ``$TRITON_CACHE_DIR`` where it is a dir of its own, else None.
        gc: gc's default plan (``gc --dry-run``; nothing is touched).
        builds: the torch builds that made its FX keys (those read).
        functions: its functions, largest first (only ``function``'s with one given), each
            with its keys in ``ls``'s order.
        function: the function the report was asked for, None for all.
        mode: the ``dynamic=`` the maps were judged under.
        run: the run explained against this cache, None without one.
        generated_at: when the report was made (epoch seconds).
        version: fxcache's version.
    """

    disk: DiskUsage
    triton: DiskUsage | None
    gc: GcPlan
    builds: TorchBuilds
    functions: tuple[FunctionReport, ...]
    function: str | None = None
    mode: DynamicMode = DynamicMode.UNKNOWN
    run: ExplainReport | None = None
    generated_at: float = field(default_factory=time.time)
    version: str = ""

    def to_json(self) -> dict[str, object]:
        """``format`` (:data:`REPORT_FORMAT`), ``fxcache``, ``generated_at``, ``cache_dir``,
        ``function``, ``dynamic``, ``df`` (``df --json``), ``gc`` (``gc --dry-run --json``),
        ``torch_builds``, ``functions`` (:meth:`FunctionReport.to_json`), ``limits`` (the
        page's bounds) and ``run`` (:func:`run_json`; None without a run)."""
        head, lists = self.gc.run_json(dry_run=True)
        gc = {**head, **{k: list(v) for k, v in lists.items()}}
        return {
            "format": REPORT_FORMAT, "fxcache": self.version, "generated_at": self.generated_at,
            "cache_dir": str(self.disk.root), "function": self.function,
            "dynamic": None if self.mode is DynamicMode.UNKNOWN else self.mode.value,
            "df": self.disk.to_json_with(self.triton), "gc": gc,
            "torch_builds": self.builds.to_json(),
            "functions": [f.to_json() for f in self.functions],
            "limits": {"listed_keys": MAX_LISTED_KEYS, "listed_entries": MAX_LISTED_ENTRIES,
                       "build_keys": MAX_BUILD_KEYS, "maps": MAX_MAPS, "maps_per_function": MAX_MAPS_PER_FUNCTION,
                       "map_clauses": MAP_CLAUSE_BUDGET, "page_clauses": PAGE_CLAUSE_BUDGET,
                       "run_lookups": MAX_RUN_LOOKUPS},
            "run": run_json(self.run) if self.run is not None else None,
        }


def run_json(report: ExplainReport) -> dict[str, object]:
    """``explain --json`` of the run, its ``lookups`` the first :data:`MAX_RUN_LOOKUPS`,
    plus ``lookups_total`` and ``compiles``: each compile's ``index``, ``compile`` (its
    label, as ``explain`` names it), ``function`` (``compiled_from``), ``rank``,
    ``start`` (epoch seconds), ``seconds`` (Dynamo's whole compile of the frame) and
    ``backend_seconds`` (AOTAutograd + Inductor), as the trace records them (None where not)."""
    run = report.run
    body = report.json_head()
    lookups = []
    for n, one in enumerate(report.json_lookups()):
        if n == MAX_RUN_LOOKUPS:
            break
        lookups.append(one)
    body["lookups"] = lookups
    body["lookups_total"] = len(report.lookups)
    body["compiles"] = [{"index": c.index, "compile": run.label(c), "function": report.where(c),
                         "rank": c.rank, "start": c.start, "seconds": c.seconds,
                         "backend_seconds": c.backend_seconds} for c in run.compiles]
    return body


def cache_report(catalog: Catalog, *, function: str | None = None, run: ExplainReport | None = None,
                 mode: DynamicMode = DynamicMode.UNKNOWN, index_path: Path | None = None,
                 triton: Catalog | None = None, now: float | None = None) -> CacheReport:
    """The report of the cache ``catalog`` reads (see the module docstring).

    ``function``: only its keys in the functions part (``ls --fn``'s meaning); the
    overview stays the whole cache dir's. ``run``: an explained run (``explain`` of the
    same catalog) whose lookups the maps place. ``index_path``: fxcache's index of this
    cache (``df`` reports its size). ``triton``: a catalog of ``$TRITON_CACHE_DIR``
    where it is a dir of its own.

    Raises:
        FunctionLookupError: ``function`` names no function of the cache.
    """
    from fxcache_core import __version__

    now = time.time() if now is None else now
    rows = key_rows(catalog, function)  # in ls's order: a group's origin is its first key's
    plan = plan_gc(catalog, GcPolicy.default(now=now), trace_facts=True)
    disk = measure(catalog, index_path=index_path, now=now, default_plan=plan)
    other = measure(triton, now=now) if triton is not None else None
    removed: dict[str, list[int]] = {}
    for r in plan.removals:
        if r.key is not None and r.entry is not None:
            removed.setdefault(r.key, []).append(r.size)
    looked = calls_by_key(run.lookups) if run is not None else {}
    groups = by_function(rows, "size")
    guards = _Guards(catalog)
    drawn = _draw_maps(catalog, groups, guards, looked, mode)
    out = []
    room = MAX_LISTED_ENTRIES
    for g, (maps, skipped) in zip(groups, drawn, strict=True):
        listed = 0
        for r in g.keys[:MAX_LISTED_KEYS]:
            if len(r.key.entries) > room:
                break
            room -= len(r.key.entries)
            listed += 1
        regions = {e.file.where: guards.of(e).region() for r in g.keys[:listed] for e in r.key.entries}
        gone = [s for r in g.keys for s in removed.get(r.key.key, ())]
        out.append(FunctionReport(g, regions, listed, Reclaim(len(gone), sum(gone)), maps, skipped))
    return CacheReport(disk, other, plan, torch_builds(catalog), tuple(out), function, mode, run,
                       generated_at=now, version=__version__)


class _Guards:
    """Each entry's guards (:func:`~fxcache_core.guards.key_guards.entry_guards`), read once."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.read: dict[str, EntryGuards] = {}
        self.memo: dict = {}  # guards string -> parsed and summarized (entry_guards' memo)

    def of(self, e: Entry) -> EntryGuards:
        got = self.read.get(e.file.where)
        if got is None:
            got = self.read[e.file.where] = entry_guards(self.catalog, e, self.memo)
        return got


def _draw_maps(catalog: Catalog, groups: Sequence[FunctionGroup], guards: _Guards,
               looked: Mapping[str, Sequence], mode: DynamicMode
               ) -> list[tuple[tuple[ShapeMap, ...], tuple[str, ...]]]:
    """Each function's maps and the keys left without one, within the page's bounds.

    Drawn in rounds, so that the bounds spread over the functions: first every key a
    run's lookup looked up, then each function's next key in turn (functions whose keys
    the run looked up first, then the page's order), until a function has
    :data:`MAX_MAPS_PER_FUNCTION` maps or the page :data:`MAX_MAPS`, or the page's clause
    budget is spent. A function's keys go FX before AOTAutograd, then the most entries
    first; a key without a dynamic dim gets no map and takes none of the bounds."""
    todo = [sorted((r.key for r in g.keys if r.key.entries),
                   key=lambda k: (k.key not in looked, k.kind is not KeyKind.FX_GRAPH, -len(k.entries),
                                  -k.size, k.key)) for g in groups]
    maps: list[list[ShapeMap]] = [[] for _ in groups]
    spent = 0

    def draw(i: int, k: CacheKey) -> bool:
        nonlocal spent
        budget = min(MAP_CLAUSE_BUDGET, PAGE_CLAUSE_BUDGET - spent)
        if len(maps[i]) >= MAX_MAPS_PER_FUNCTION or sum(map(len, maps)) >= MAX_MAPS \
                or budget < MAP_CLAUSE_BUDGET // 10:
            return False
        todo[i].remove(k)
        m = key_map(catalog, k, [guards.of(e) for e in k.entries], looked.get(k.key, ()), mode, budget)
        if m is not None:
            maps[i].append(m)
            spent += m.clause_bound
        return True

    for i in range(len(groups)):
        for k in [k for k in todo[i] if k.key in looked]:
            draw(i, k)
    order = sorted(range(len(groups)), key=lambda i: not any(r.key.key in looked for r in groups[i].keys))
    progress = True
    while progress:
        progress = False
        for i in order:
            before = len(maps[i])
            while todo[i] and len(maps[i]) == before and draw(i, todo[i][0]):
                progress = True
    return [(tuple(m), tuple(k.key for k in left)) for m, left in zip(maps, todo, strict=True)]


def torch_builds(catalog: Catalog, limit: int = MAX_BUILD_KEYS) -> TorchBuilds:
    """Which torch build made each of the ``limit`` most recently used FX keys: the
    ``torch_version`` component of its first readable entry's debug lines (``fxcache
    key``'s), counted per hash, most keys first."""
    counts: Counter[str] = Counter()
    fx = [k for k in catalog.scan.keys if k.kind is KeyKind.FX_GRAPH]
    recent = sorted(fx, key=lambda k: (-(k.last_used or 0.0), k.key))[:limit]
    for k in recent:
        for e in k.entries:
            d = catalog.decode_now(e)
            if isinstance(d, DecodedEntry):
                comp = next((c for c in parse_debug_lines(d.debug_lines) if c.name == "torch_version"), None)
                if comp is not None:
                    counts[comp.hash] += 1
                break
    return TorchBuilds(tuple(TorchBuild(h, version_of(h), n) for h, n in counts.most_common()),
                       len(recent), len(fx))
