"""Which entry serves which values of one symbol, and where the gaps are.

:func:`coverage` sweeps one placeholder of a key over an integer range, holds
the key's other placeholders at fixed values (their compile-time hints unless
given), and runs torch's lookup rule (:mod:`fxcache_core.lookup.judge`: sorted
entries, first whose guards hold, a raising guard stops the lookup) at every
value. Runs of equal outcomes become :class:`Segment` s. Values at which
Dynamo would not trace this key's graph at all are marked too: a size of 0 or
1 (specialized), and, under ``dynamic=True`` (see
:class:`~fxcache_core.lookup.binding.DynamicMode`), a value equal to another size
symbol's (duck sizing; undecided when the mode is not given).

Cost: one guards evaluation per entry per value (compiled closures, a
microsecond or two per clause); the range is capped at
:data:`MAX_COVERAGE_VALUES`, and the work by cost, not by count: a sweep
evaluates at most :data:`MAX_COVERAGE_CLAUSES` clauses (counted, so the bound is
the same on every machine). A sweep that spends them stops there and says so:
:attr:`Coverage.stopped` (code ``coverage-budget``), its segments covering the
values judged so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import GuardParseError, ShapeSpecError, param
from fxcache_core.lookup.binding import DynamicMode, parse_int64
from fxcache_core.lookup.judge import torch_reads
from fxcache_core.lookup.source_values import check_signs, is_size_source
from fxcache_core.reasons import Reason, code_of

if TYPE_CHECKING:
    from fxcache_core.guards.expr import GuardsExpr

MAX_COVERAGE_VALUES = 1_000_000
MAX_COVERAGE_CLAUSES = 500_000
"""Most clause evaluations one sweep may cost (about a second): a key whose
entries hold thousands of clauses that all pass makes each value cost that
many; such a sweep stops where the budget ends (:attr:`Coverage.stopped`)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """Consecutive values with one outcome.

    Attributes:
        start, end: inclusive bounds of the run of values.
        outcome: ``hit`` (``entry`` serves it), ``miss`` (no entry's guards hold),
            ``error`` (a guard raises first: torch's lookup stops), ``undecided``
            (a guard needs a value that is not fixed), or ``other-graph`` (Dynamo
            would trace another graph, see ``note``).
        entry: the serving entry for ``hit``.
        note: why, for ``other-graph``, ``error`` and a duck-sized ``undecided``: a
            :class:`~fxcache_core.reasons.Reason` (``size-specialized``,
            ``duck-sizing``, ``duck-sizing-depends-on-mode``, ``guard-raises``).
    """

    start: int
    end: int
    outcome: str
    entry: Entry | None = None
    note: Reason | None = None

    def to_json(self) -> dict[str, object]:
        """``start``, ``end``, ``outcome``, ``entry``, ``note`` and ``note_code``."""
        return {"start": self.start, "end": self.end, "outcome": self.outcome,
                "entry": self.entry.name if self.entry else None, "note": self.note,
                "note_code": code_of(self.note)}


@dataclass(frozen=True, slots=True)
class Coverage:
    """The sweep of one placeholder of one key (see the module docstring).

    Attributes:
        key: the key.
        placeholder: the swept ``tN``; ``symbol``/``source`` what it stands for.
        fixed: the values the other placeholders were held at.
        segments: the outcomes, in order, covering ``[start, end]``, or
            ``[start, segments[-1].end]`` when ``stopped``.
        stopped: why the sweep stopped before ``end`` (code ``coverage-budget``);
            None when it covered the whole range.
        end: the last value asked for (``segments[-1].end`` unless ``stopped``).
    """

    key: CacheKey
    placeholder: str
    symbol: str | None
    source: str | None
    fixed: tuple[tuple[str, int], ...]
    segments: tuple[Segment, ...]
    stopped: Reason | None = None
    end: int | None = None

    def to_json(self) -> dict[str, object]:
        """``kind``, ``key``, ``placeholder``, ``symbol``, ``source``, ``fixed`` and
        ``segments`` (``start``, ``end``, ``outcome``, ``entry``, ``note``, ``note_code``);
        a sweep that stopped early adds ``stopped``, ``stopped_code`` (``coverage-budget``),
        ``covered`` (``[start, last value judged]``) and ``requested`` (``[start, end]``)."""
        doc: dict[str, object] = {
            "kind": self.key.kind.value, "key": self.key.key, "placeholder": self.placeholder,
            "symbol": self.symbol, "source": self.source, "fixed": dict(self.fixed),
            "segments": [g.to_json() for g in self.segments]}
        if self.stopped is not None:
            doc.update(stopped=self.stopped, stopped_code=code_of(self.stopped),
                       covered=[self.segments[0].start, self.segments[-1].end],
                       requested=[self.segments[0].start, self.end])
        return doc


def _resolve(symbols: tuple[SymbolInfo, ...], name: str) -> SymbolInfo:
    for s in symbols:
        if name in (s.placeholder, s.expr, s.source):
            return s
    known = ", ".join(f"{s.placeholder} ({s.expr}, {s.source or '?'})" for s in symbols) or "none"
    raise ShapeSpecError(f"{param('range')} {name}: not a placeholder, symbol or source of this key "
                         f"(it has {known})", param="range", value=name)


def parse_range(spec: str) -> tuple[str, int, int]:
    """``NAME=LO:HI`` (``--range``) -> (NAME, LO, HI), LO and HI int64.

    Raises:
        ShapeSpecError: another shape, or a bound outside int64 (one line).
    """
    import re

    m = re.fullmatch(r"\s*(.+?)\s*=\s*(-?[0-9]+)\s*:\s*(-?[0-9]+)\s*", spec)
    if not m:
        shown = spec if len(spec) <= 40 else spec[:37] + "..."
        raise ShapeSpecError(f"{param('range')} {shown!r}: expected NAME=LO:HI, e.g. s77=1:4096",
                             param="range", value=spec)
    return (m.group(1), parse_int64(m.group(2), f"{param('range')} {m.group(1)} (low)", "range"),
            parse_int64(m.group(3), f"{param('range')} {m.group(1)} (high)", "range"))


def coverage(
    catalog: Catalog,
    key: CacheKey,
    name: str,
    start: int,
    end: int,
    fixed: Mapping[str, int] | None = None,
    mode: DynamicMode = DynamicMode.UNKNOWN,
) -> Coverage:
    """Sweep placeholder ``name`` (``t0``, ``s77`` or ``L['x'].size()[0]``) over ``[start, end]``.

    ``fixed`` gives other placeholders or symbols (``t1``/``s27`` -> value);
    the rest are held at their hints. ``mode`` is the call's
    ``torch.compile(dynamic=...)``: it decides whether a value equal to another
    size symbol's is duck-sized: under ``TRUE`` the swept dim is taken as
    unmarked (duck), under ``NONE``/``FALSE`` as marked dynamic (the only way
    a dim is symbolic there: a symbol of its own).

    Steps: the range checked (:func:`_check_range`), the swept placeholder found
    (:func:`_swept`), the others' values held (:func:`_held`), each entry's guards
    parsed once (:func:`_entry_plans`), then every value judged (:class:`_Sweep`)
    and runs of equal outcomes folded into segments.

    Raises:
        ShapeSpecError: an unknown name, an empty or too large range, a key
            with no readable entry, or a placeholder with neither a fixed value
            nor a hint. A sweep whose guards cost more than
            :data:`MAX_COVERAGE_CLAUSES` clause evaluations is not an error: it
            stops, and :attr:`Coverage.stopped` says where.
    """
    _check_range(start, end)
    symbols, swept = _swept(catalog, key, name, start, end)
    check_signs(dict(fixed or {}), symbols, "sym")
    env = _held(symbols, swept, fixed or {})
    size_symbols = {s.placeholder: v for s in symbols if s.placeholder in env
                    and (v := env[s.placeholder]) is not None and s.source and ".size()" in s.source}
    sweep = _Sweep(swept, env, size_symbols, _entry_plans(catalog, key), mode)
    segments: list[Segment] = []
    stopped: Reason | None = None
    for v in range(start, end + 1):
        if sweep.spent >= MAX_COVERAGE_CLAUSES:
            stopped = Reason(
                f"stopped at {v - 1}: key {key.key[:12]}'s guards took {sweep.spent:,} clause evaluations "
                f"for {v - start:,} values, as many as fxcache evaluates in one sweep "
                f"({MAX_COVERAGE_CLAUSES:,}); {v} to {end} not judged: narrow the range",
                "coverage-budget")
            break
        o, e, note = sweep.outcome(v)
        last = segments[-1] if segments else None
        if last is not None and (last.outcome, last.entry, last.note) == (o, e, note):
            segments[-1] = Segment(last.start, v, o, e, note)
        else:
            segments.append(Segment(v, v, o, e, note))
    return Coverage(key=key, placeholder=swept.placeholder, symbol=swept.expr, source=swept.source,
                    fixed=tuple(sorted(env.items(), key=lambda kv: int(kv[0][1:]))),
                    segments=tuple(segments), stopped=stopped, end=end)


def _check_range(start: int, end: int) -> None:
    """Raises ShapeSpecError for an empty range or one of more than
    :data:`MAX_COVERAGE_VALUES` values."""
    if end < start:
        raise ShapeSpecError(f"{param('range')}: empty range {start}:{end}", param="range",
                             value=f"{start}:{end}")
    if end - start + 1 > MAX_COVERAGE_VALUES:
        raise ShapeSpecError(f"{param('range')}: at most {MAX_COVERAGE_VALUES:,} values", param="range",
                             value=f"{start}:{end}")


def _swept(catalog: Catalog, key: CacheKey, name: str, start: int, end: int
           ) -> tuple[tuple[SymbolInfo, ...], SymbolInfo]:
    """The key's symbol table (of its first readable entry) and the placeholder ``name``
    means in it.

    Raises:
        ShapeSpecError: no readable entry, an unknown name, or a negative range for a size.
    """
    first = catalog.first_readable(key)
    if first is None:
        raise ShapeSpecError(f"key {key.key[:12]} has no readable entry", param="key", value=key.key)
    from fxcache_core.guards.user_terms import user_source

    symbols = catalog.symbols(first[0])
    swept = _resolve(symbols, name)
    if start < 0 and is_size_source(swept.source):
        raise ShapeSpecError(f"{param('range')} {name}={start}:{end}: {name} is "
                             f"{user_source(swept.source or '')}, which is never negative",
                             param="range", value=f"{name}={start}:{end}")
    return symbols, swept


def _held(symbols: tuple[SymbolInfo, ...], swept: SymbolInfo, fixed: Mapping[str, int]) -> dict[str, int]:
    """Placeholder -> the value it is held at while ``swept`` varies: the one ``fixed``
    gives (by placeholder or symbol), else its compile-time hint; left out when neither."""
    env: dict[str, int] = {}
    for s in symbols:
        if s.placeholder == swept.placeholder:
            continue
        given = fixed.get(s.placeholder, fixed.get(s.expr or ""))
        value = given if given is not None else s.hint
        if value is not None:
            env[s.placeholder] = value
    return env


Plan = tuple[Entry, "GuardsExpr | Reason | str | None"]
"""An entry that torch reads, with its parsed guards: None when it has none, the
string ``unparsable`` when they do not parse, a :class:`Reason` when it is corrupt to
fxcache but unpickles (``corrupt-entry-torch-loads``: torch reads it, how is not known)."""


def _entry_plans(catalog: Catalog, key: CacheKey) -> list[Plan]:
    """The key's readable entries in torch's order, guards parsed once (an entry whose
    pickle does not load is left out: torch skips it; one torch reads but fxcache did
    not is a :class:`Reason`, :func:`~fxcache_core.lookup.judge.torch_reads`)."""
    from fxcache_core.guards.expr import parse_guards

    plans: list[Plan] = []
    for e in key.entries:
        d = catalog.load(e)
        if isinstance(d, Unreadable) and (why := torch_reads(e, d)) is not None:
            plans.append((e, why))  # torch reads it: undecided
            continue
        if isinstance(d, Unreadable):
            continue  # torch skips it
        if not d.guards_expr:
            plans.append((e, None))
            continue
        try:
            plans.append((e, parse_guards(d.guards_expr)))
        except GuardParseError:
            plans.append((e, "unparsable"))
    return plans


class _Sweep:
    """Torch's lookup at one value of the swept placeholder, the others held; counts
    the clause evaluations it spends (``spent``)."""

    def __init__(self, swept: SymbolInfo, env: Mapping[str, int], size_symbols: Mapping[str, int],
                 plans: list[Plan], mode: DynamicMode) -> None:
        self.swept, self.env, self.size_symbols, self.plans, self.mode = swept, env, size_symbols, plans, mode
        self.spent = 0

    def outcome(self, v: int) -> tuple[str, Entry | None, Reason | None]:
        """(outcome, entry, note) at value ``v``, as :class:`Segment` names them."""
        swept = self.swept
        if swept.source and ".size()" in swept.source:
            if v in (0, 1):
                return "other-graph", None, Reason(f"size {v} is specialized", "size-specialized")
            twin = next((p for p, w in self.size_symbols.items() if w == v), None)
            if twin is not None and self.mode is DynamicMode.TRUE:
                return "other-graph", None, Reason(f"equals {twin}: duck sizing", "duck-sizing")
            if twin is not None and self.mode is DynamicMode.UNKNOWN:
                return "undecided", None, Reason(f"equals {twin}: another graph if duck-sized (dynamic=True)",
                                                 "duck-sizing-depends-on-mode")
        values = {**self.env, swept.placeholder: v}
        for e, g in self.plans:
            if g is None:
                return "hit", e, None
            if g == "unparsable":
                return "undecided", None, None
            if isinstance(g, Reason):
                return "undecided", None, g
            verdict = g.evaluate(values)  # type: ignore[union-attr]
            self.spent += len(verdict.results)
            if verdict.status == "pass":
                return "hit", e, None
            if verdict.status == "unknown":
                return "undecided", None, None
            f = verdict.first_failure
            if f is not None and f.status == "error":
                return "error", e, Reason(f.error, "guard-raises") if f.error is not None else None
        return "miss", None, None
