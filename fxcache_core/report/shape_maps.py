"""The shapes each entry of a key serves, drawn over one or two of its dynamic dims, with
the calls of a traced run placed on them (the report's maps).

A map is made of :func:`fxcache_core.lookup.coverage.coverage` sweeps, the evaluation
``fxcache coverage`` runs (torch's lookup order, a raising guard stops the lookup,
sizes 0 and 1 specialized, duck sizing by ``mode``): one sweep along the map's x dim,
or, for a 2-D map, one per judged value of its y dim (each row is exactly
``fxcache coverage KEY --range X=LO:HI --sym Y=VALUE --json``). The other
placeholders are held at their hints, as ``coverage`` holds them.

Which dims: the key's placeholders whose entries' guards bound them (a range clause),
then the others with a hint, at most two. Which values: from 0 (a size) to twice the
largest bound, hint or traced value, so every bound shows; for a 2-D map, the rows are
the y values that matter (the traced calls', each bound and its neighbours, the
hints) and a spread between them: a row is a judged value, never an interpolation.

Cost: every value judged costs at most one evaluation per clause of every entry; a
map gets at most :data:`MAP_CLAUSE_BUDGET` such evaluations (counted from the
entries' clauses, so the bound is the same on every machine) and narrows its range or
its rows to fit, saying so in :attr:`ShapeMap.limited`. Never imports torch, never prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import FxcacheError
from fxcache_core.guards.key_guards import EntryGuards
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.binding import DynamicMode
from fxcache_core.lookup.coverage import Coverage, coverage
from fxcache_core.lookup.source_values import is_size_source
from fxcache_core.reasons import Reason, code_of
from fxcache_core.trace.explain_report import LookupExplanation

MAX_COLUMNS = 512
"""Most values of the x dim one map judges."""
MIN_COLUMNS = 16
"""Fewest values of the x dim a map judges, whatever its budget."""
MAX_ROWS = 24
"""Most values of the y dim a 2-D map judges (its rows)."""
MAP_CLAUSE_BUDGET = 50_000
"""Most clause evaluations one map may cost, counted as every clause of every entry at
every value judged (an upper bound: torch's lookup stops at the first failing clause
and the first entry that holds)."""


@dataclass(frozen=True, slots=True)
class Axis:
    """One dim of a map.

    Attributes:
        placeholder: the guard placeholder swept (``t0``).
        symbol: its symbol (``s77``), None where unknown.
        source: its Dynamo source (``L['x'].size()[0]``), None where unknown.
        hint: its value when the key's first readable entry was compiled.
        start, end: the values judged (a 2-D map's y: the lowest and highest row).
    """

    placeholder: str
    symbol: str | None
    source: str | None
    hint: int | None
    start: int
    end: int

    @property
    def name(self) -> str:
        """The dim as the user writes it (``x.size(0)``), else its symbol or placeholder."""
        return user_source(self.source) if self.source else (self.symbol or self.placeholder)

    def to_json(self) -> dict[str, object]:
        return {"placeholder": self.placeholder, "symbol": self.symbol, "source": self.source,
                "name": self.name, "hint": self.hint, "start": self.start, "end": self.end}


@dataclass(frozen=True, slots=True)
class MapCall:
    """A lookup of a traced run on the map's key, at its values.

    Attributes:
        seq: the lookup's position in the run (``explain --json``'s ``seq``).
        compile: the compile it was made in (``0/1``), None outside any.
        cause: explain's cause: ``hit``, ``guard-miss``, ``new-key`` (torch compiled
            this key's graph for it: a new graph), ``fx-entry-missing``, ``bypass``.
        entry: a hit: the entry it loaded.
        wrote: a miss: the entry torch wrote for it.
        x, y: its values of the map's dims (y None on a 1-D map).
    """

    seq: int
    compile: str | None
    cause: str
    entry: str | None
    wrote: str | None
    x: int
    y: int | None

    def to_json(self) -> dict[str, object]:
        return {"seq": self.seq, "compile": self.compile, "cause": self.cause, "entry": self.entry,
                "wrote": self.wrote, "x": self.x, "y": self.y}


@dataclass(frozen=True, slots=True)
class ShapeMap:
    """The entries of one key over one or two dims (see the module docstring).

    Attributes:
        key: the key.
        x: the dim each sweep varies.
        y: the dim the rows hold (None: a 1-D map, one sweep).
        rows: the sweeps, one per value of ``rows_at`` (one for a 1-D map).
        rows_at: the y value of each row, lowest first (empty for a 1-D map).
        calls: the run's lookups of this key placed on the map.
        unplaced: ``seq`` of the run's lookups of this key the map could not place
            (the trace gives no value for a dim, or its y value is not a row).
        limited: what the bound on a map's cost left out (code ``map-budget``), else None.
        clause_bound: the clause evaluations the map cost at most (values judged times
            the clauses of every entry, plus one per value).
    """

    key: CacheKey
    x: Axis
    y: Axis | None
    rows: tuple[Coverage, ...]
    rows_at: tuple[int, ...] = ()
    calls: tuple[MapCall, ...] = ()
    unplaced: tuple[int, ...] = ()
    limited: Reason | None = None
    clause_bound: int = 0

    def to_json(self) -> dict[str, object]:
        """``kind``, ``key``, ``entries`` (the key's entry names, in torch's order: a
        segment's ``entry`` is one of them), ``x`` and ``y`` (:meth:`Axis.to_json`),
        ``held`` (the other placeholders and the values they were held at), ``rows``
        (``y``, and ``coverage``: ``fxcache coverage --json`` of that sweep), ``calls``,
        ``unplaced``, ``limited``, ``limited_code`` and ``clause_bound``."""
        at: Sequence[int | None] = self.rows_at or [None]
        skip = {self.x.placeholder, self.y.placeholder if self.y is not None else None}
        return {"kind": self.key.kind.value, "key": self.key.key,
                "entries": [e.name for e in self.key.entries], "x": self.x.to_json(),
                "y": self.y.to_json() if self.y is not None else None,
                "held": {p: v for p, v in self.rows[0].fixed if p not in skip},
                "rows": [{"y": v, "coverage": c.to_json()} for v, c in zip(at, self.rows, strict=True)],
                "calls": [c.to_json() for c in self.calls], "unplaced": list(self.unplaced),
                "limited": self.limited, "limited_code": code_of(self.limited),
                "clause_bound": self.clause_bound}


def key_map(catalog: Catalog, key: CacheKey, guards: Sequence[EntryGuards],
            lookups: Sequence[LookupExplanation] = (), mode: DynamicMode = DynamicMode.UNKNOWN,
            budget: int = MAP_CLAUSE_BUDGET) -> ShapeMap | None:
    """The map of ``key`` (None when no placeholder of it is dynamic, or its sweep cannot be
    made: no readable entry, no hint to hold a placeholder at).

    ``guards``: the key's entries' guards (:func:`~fxcache_core.guards.key_guards.entry_guards`
    of each, torch's order); ``lookups``: the run's explained lookups of this key (any
    others are ignored); ``budget``: clause evaluations the map may cost
    (:data:`MAP_CLAUSE_BUDGET`)."""
    first = catalog.first_readable(key)
    if first is None:
        return None
    symbols = catalog.symbols(first[0])
    mine = [x for x in lookups if x.lookup.key == key.key]
    dims = _dims(symbols, guards)
    if not dims:
        return None
    values = [_call_values(x, dims) for x in mine]
    per_value = 1 + sum(len(g.parsed.clauses) for g in guards if g.parsed is not None)
    xs = _points(dims[0], guards, (v[0] for v in values))
    ys = _points(dims[1], guards, (v[1] for v in values)) if len(dims) > 1 else None
    x_lo, x_hi = _span(dims[0], xs)
    wanted = x_hi - x_lo + 1
    columns = min(wanted, MAX_COLUMNS, max(MIN_COLUMNS, budget // per_value))
    limits: list[str] = []
    if columns < wanted:
        limits.append(f"{_name(dims[0])} judged from {x_lo} to {x_lo + columns - 1} of {x_lo} to {x_hi}")
        x_hi = x_lo + columns - 1
    y_axis, rows_at = None, ()
    if ys is not None:
        rows_wanted = _rows(dims[1], ys)
        room = max(1, min(MAX_ROWS, budget // (columns * per_value)))
        rows_at = _keep_rows(rows_wanted, ys, room)
        if len(rows_at) < len(rows_wanted):
            limits.append(f"{len(rows_at)} of {len(rows_wanted)} values of {_name(dims[1])} judged")
        y_axis = _axis(dims[1], rows_at[0], rows_at[-1])
    try:
        rows = tuple(coverage(catalog, key, dims[0].placeholder, x_lo, x_hi,
                              {dims[1].placeholder: v} if y_axis is not None else None, mode)
                     for v in (rows_at or (None,)))
    except FxcacheError:
        return None  # a placeholder with neither a hint nor a value: nothing to hold it at
    calls, unplaced = [], []
    for x, v in zip(mine, values, strict=True):
        vx, vy = v[0], (v[1] if len(v) > 1 else None)
        if vx is None or not x_lo <= vx <= x_hi or (y_axis is not None and vy not in rows_at):
            unplaced.append(x.lookup.seq)
            continue
        calls.append(MapCall(x.lookup.seq, _label(x), x.cause, x.entry, x.wrote, vx,
                             vy if y_axis is not None else None))
    limited = None
    if limits:
        limited = Reason("; ".join(limits) + f": a map evaluates at most {budget:,} clauses, "
                         "a coverage sweep of its own judges the rest", "map-budget")
    return ShapeMap(key, _axis(dims[0], x_lo, x_hi), y_axis, rows, tuple(rows_at), tuple(calls),
                    tuple(unplaced), limited, len(rows) * (x_hi - x_lo + 1) * per_value)


def _name(s: SymbolInfo) -> str:
    return user_source(s.source) if s.source else (s.expr or s.placeholder)


def _axis(s: SymbolInfo, start: int, end: int) -> Axis:
    return Axis(s.placeholder, s.expr, s.source, s.hint, start, end)


def _label(x: LookupExplanation) -> str | None:
    return x.compile.compile_id if x.compile is not None else None


def _dims(symbols: Sequence[SymbolInfo], guards: Sequence[EntryGuards]) -> list[SymbolInfo]:
    """At most two placeholders to draw: those the entries' range clauses bound at the
    most distinct values first, then those with a hint, in the key's order."""
    bounds: dict[str, set[int]] = {}
    for g in guards:
        for r in g.summary.ranges if g.summary is not None else ():
            bounds.setdefault(r.placeholder, set()).update(b for b in (r.lower, r.upper) if b is not None)
    usable = [s for s in symbols if s.source is not None and (s.hint is not None or bounds.get(s.placeholder))]
    order = {s.placeholder: n for n, s in enumerate(symbols)}
    usable.sort(key=lambda s: (-len(bounds.get(s.placeholder, ())), order[s.placeholder]))
    return usable[:2]


def _call_values(x: LookupExplanation, dims: Sequence[SymbolInfo]) -> list[int | None]:
    """The lookup's value of each dim: the call's value explain gives for it (by source,
    else by placeholder), else the value the trace recorded for the compile's symbol of
    that source."""
    by_source = {v.source: v.value for v in x.values if v.source is not None}
    by_placeholder = {v.placeholder: v.value for v in x.values}
    facts = {f.source: f.value for f in x.compile.symbols if f.source is not None} if x.compile else {}
    out: list[int | None] = []
    for d in dims:
        v = by_source.get(d.source) if d.source in by_source else by_placeholder.get(d.placeholder)
        out.append(v if v is not None else facts.get(d.source))
    return out


def _bounds(d: SymbolInfo, guards: Iterable[EntryGuards]) -> set[int]:
    """The values where an entry's range on ``d`` starts or ends, and their neighbours."""
    out: set[int] = set()
    for g in guards:
        for r in g.summary.ranges if g.summary is not None else ():
            if r.placeholder != d.placeholder:
                continue
            if r.lower is not None:
                out.update((r.lower - 1, r.lower))
            if r.upper is not None:
                out.update((r.upper, r.upper + 1))
            out.update(r.excluded)
    return out


def _points(d: SymbolInfo, guards: Sequence[EntryGuards], calls: Iterable[int | None]) -> list[int]:
    """The values of ``d`` a map must show: the calls' first, then the bounds, then the hint."""
    pts = [v for v in calls if v is not None]
    pts += sorted(_bounds(d, guards))
    if d.hint is not None:
        pts.append(d.hint)
    return pts


def _span(d: SymbolInfo, points: Sequence[int]) -> tuple[int, int]:
    """The values to judge: from 0 (a size; else the lowest point, when below 0) to twice
    the highest point, at least 16."""
    lo = 0 if is_size_source(d.source) else min([0, *points])
    hi = max([lo, *points])
    return lo, max(lo + 15, 2 * hi if hi > 0 else lo + 15)


def _rows(d: SymbolInfo, points: Sequence[int]) -> list[int]:
    """The y values a 2-D map would judge given room: the points, and a doubling spread
    from 2 up to the span's end."""
    lo, hi = _span(d, points)
    spread, v = set(), 2
    while v <= hi:
        spread.add(v)
        v *= 2
    return sorted({p for p in (*points, *spread) if lo <= p <= hi})


def _keep_rows(wanted: Sequence[int], points: Sequence[int], room: int) -> tuple[int, ...]:
    """``room`` of the ``wanted`` rows: the points first (the calls' values, then the
    bounds, then the hint), then the spread, lowest first; sorted."""
    if len(wanted) <= room:
        return tuple(wanted)
    order: list[int] = []
    for p in (*points, *wanted):
        if p in wanted and p not in order:
            order.append(p)
    return tuple(sorted(order[:room]))


def calls_by_key(lookups: Iterable[LookupExplanation]) -> Mapping[str, list[LookupExplanation]]:
    """The run's lookups grouped by the key they looked up (lookups without a key left out)."""
    out: dict[str, list[LookupExplanation]] = {}
    for x in lookups:
        if x.lookup.key is not None:
            out.setdefault(x.lookup.key, []).append(x)
    return out
