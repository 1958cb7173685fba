"""Entries of one key that can never be served, or that compete for the same shapes.

torch takes the first entry (sorted by name) whose guards hold. So an entry
whose region lies inside an earlier entry's region is *shadowed*: it can never
be served, it only costs disk and lookup time. Two entries whose regions
overlap without one containing the other are *ambiguous*: where they overlap
the earlier one wins, so which entry serves a shape depends on file names.

The analysis is exact where both entries' guards are integer ranges per
placeholder (every clause lands in :attr:`GuardSummary.ranges`); otherwise
the pair is reported as not analysed, never guessed.

Cost: one run compares at most :data:`MAX_AUDIT_PAIRS` pairs and summarises at
most :data:`MAX_AUDIT_CLAUSES` guard clauses, across all keys (a key of
thousands of entries has millions of pairs). What the budget leaves is said, not
dropped: :attr:`AuditReport.partial` names each key audited only in part and how
many of its pairs were not compared (reason code ``audit-budget``). The findings
kept are therefore at most :data:`MAX_AUDIT_PAIRS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.errors import GuardParseError
from fxcache_core.guards.summary import SymbolRange, summarize
from fxcache_core.reasons import Reason, code_of

Box = dict[str, SymbolRange]

MAX_AUDIT_PAIRS = 5_000
"""Most entry pairs one audit compares (a pair costs a comparison and, when it is
reported, a finding: the budget bounds time and memory alike)."""
MAX_AUDIT_CLAUSES = 200_000
"""Most guard clauses one audit parses and summarises into ranges."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One relation between two entries of a key.

    Attributes:
        kind: ``shadowed`` (``later`` can never be served: ``earlier`` takes
            every binding it accepts), ``overlap`` (both accept some bindings;
            ``earlier`` serves them), or ``not-analysed`` (guards beyond ranges).
        earlier, later: the two entries, in torch's order.
        detail: one line for people, a :class:`~fxcache_core.reasons.Reason` whose
            code is ``kind``.
    """

    kind: str
    earlier: Entry
    later: Entry
    detail: Reason


def _box(guards: str | None) -> Box | None:
    """Placeholder -> range when the guards are nothing but ranges; {} for no guards."""
    from fxcache_core.guards.expr import parse_guards

    if not guards:
        return {}
    try:
        s = summarize(parse_guards(guards))
    except GuardParseError:
        return None
    if s.divisibility or s.relations or s.other:
        return None
    return {r.placeholder: r for r in s.ranges}


def _lo(r: SymbolRange | None) -> float:
    return float("-inf") if r is None or r.lower is None else r.lower


def _hi(r: SymbolRange | None) -> float:
    return float("inf") if r is None or r.upper is None else r.upper


def _contains(outer: Box, inner: Box) -> bool:
    """Every binding ``inner`` accepts, ``outer`` accepts."""
    for p in set(outer) | set(inner):
        o, i = outer.get(p), inner.get(p)
        if _lo(o) > _lo(i) or _hi(o) < _hi(i):
            return False
        if o is not None and any(v not in (i.excluded if i else ()) and _lo(i) <= v <= _hi(i)
                                 for v in o.excluded):
            return False
    return True


def _intersect(a: Box, b: Box) -> bool:
    """Some binding both accept (ignoring excluded single values unless they close the gap)."""
    for p in set(a) | set(b):
        lo, hi = max(_lo(a.get(p)), _lo(b.get(p))), min(_hi(a.get(p)), _hi(b.get(p)))
        if lo > hi:
            return False
        excluded = set(a.get(p).excluded if a.get(p) else ()) | set(b.get(p).excluded if b.get(p) else ())
        if lo == hi and lo in excluded:
            return False
    return True


class AuditBudget:
    """What is left of one audit's work (:data:`MAX_AUDIT_PAIRS` pair comparisons,
    :data:`MAX_AUDIT_CLAUSES` guard clauses), spent by :func:`audit_key` across keys."""

    def __init__(self, pairs: int = MAX_AUDIT_PAIRS, clauses: int = MAX_AUDIT_CLAUSES) -> None:
        self.pairs, self.clauses = pairs, clauses
        self.max_pairs, self.max_clauses = pairs, clauses

    def reason(self) -> Reason:
        """Why pairs were left: the budget's figures (code ``audit-budget``)."""
        return Reason(f"fxcache compares at most {self.max_pairs:,} entry pairs and reads at most "
                      f"{self.max_clauses:,} guard clauses in one audit", "audit-budget")


def _box_within(guards: str | None, budget: AuditBudget) -> Box | None | bool:
    """:func:`_box` of ``guards``, its clauses (the ``and``-joined parts) charged to
    ``budget``; False when the budget has no clauses left for it."""
    if budget.clauses <= 0:
        return False
    if guards:
        budget.clauses -= guards.count(" and ") + 1
    return _box(guards)


def audit_key(catalog: Catalog, key: CacheKey, budget: AuditBudget | None = None) -> tuple[Finding, ...]:
    """Shadowed and overlapping entry pairs of ``key`` (see the module docstring); readable
    entries only (torch skips the others), in torch's order. With ``budget``, the pairs
    it has no room for are not compared: :func:`audit_key_within` says how many."""
    return audit_key_within(catalog, key, budget or AuditBudget(1 << 62, 1 << 62))[0]


def audit_key_within(catalog: Catalog, key: CacheKey, budget: AuditBudget) -> tuple[tuple[Finding, ...], int]:
    """(:func:`audit_key`'s findings, the number of pairs not compared because ``budget``
    ran out: 0 when the key was audited whole). Pairs an entry found shadowed skips are
    not counted: that entry's other relations do not matter."""
    readable = [(e, d) for e in key.entries if not isinstance(d := catalog.load(e), Unreadable)]
    n = len(readable)
    boxes: list[tuple[Entry, Box | None]] = []
    out: list[Finding] = []
    for j, (later, d) in enumerate(readable):
        bj = _box_within(d.guards_expr, budget)
        if bj is False:
            return tuple(out), j * (n - j) + (n - j) * (n - j - 1) // 2  # the pairs of entries j.. as later
        boxes.append((later, bj))  # type: ignore[arg-type]
        for i, (earlier, bi) in enumerate(boxes[:j]):
            if budget.pairs <= 0:
                return tuple(out), (j - i) + sum(range(j + 1, n))
            budget.pairs -= 1
            if bi is None or bj is None:
                out.append(Finding("not-analysed", earlier, later, Reason(
                    "guards beyond per-symbol ranges (divisibility, relations...)", "not-analysed")))
            elif _contains(bi, bj):
                out.append(Finding("shadowed", earlier, later, Reason(
                    f"#{later.order} can never be served: every binding it accepts, "
                    f"#{earlier.order} (earlier in torch's order) accepts too", "shadowed")))
                break
            elif _intersect(bi, bj):
                out.append(Finding("overlap", earlier, later, Reason(
                    f"#{earlier.order} and #{later.order} both accept some bindings; "
                    f"there #{earlier.order} is served", "overlap")))
    return tuple(out), 0


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What :func:`audit` found across a cache.

    Attributes:
        keys_checked: keys with two or more entries (the only ones where an
            entry can shadow or overlap another).
        results: (key, its findings) for each key with findings or audited only in
            part, in scan order.
        partial: (key, pairs not compared) for each key the budget left audited only
            in part (or not at all), in scan order; empty when every pair was compared.
        stopped: why pairs were left (code ``audit-budget``), None when none were.
    """

    keys_checked: int
    results: tuple[tuple[CacheKey, tuple[Finding, ...]], ...]
    partial: tuple[tuple[CacheKey, int], ...] = ()
    stopped: Reason | None = None

    def __iter__(self):
        """The (key, findings) pairs (what ``audit`` used to return)."""
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def count(self, kind: str) -> int:
        """How many findings of ``kind`` (``shadowed``: entries that can never be
        served; ``overlap``, ``not-analysed``: pairs of entries)."""
        return sum(1 for _, fs in self.results for f in fs if f.kind == kind)

    def not_compared(self) -> int:
        """Pairs the budget left not compared, across keys."""
        return sum(n for _, n in self.partial)

    def to_json(self) -> list[dict[str, object]]:
        """A list of ``{"kind", "key", "findings": [{"kind", "earlier", "later", "detail",
        "detail_code"}]}``; a key audited only in part adds ``not_compared`` (pairs),
        ``not_compared_reason`` and ``not_compared_code`` (``audit-budget``)."""
        left = dict((k.key, n) for k, n in self.partial)
        rows: list[dict[str, object]] = []
        for k, fs in self.results:
            row: dict[str, object] = {
                "kind": k.kind.value, "key": k.key,
                "findings": [{"kind": f.kind, "earlier": f.earlier.name, "later": f.later.name,
                              "detail": f.detail, "detail_code": code_of(f.detail)} for f in fs]}
            if k.key in left:
                row.update(not_compared=left[k.key], not_compared_reason=self.stopped,
                           not_compared_code=code_of(self.stopped))
            rows.append(row)
        return rows


def audit(catalog: Catalog, budget: AuditBudget | None = None) -> AuditReport:
    """:func:`audit_key` for every key with two or more entries, within one
    :class:`AuditBudget` (a fresh one unless given); the keys with findings, and
    those the budget left audited in part."""
    budget = budget or AuditBudget()
    out = []
    partial = []
    checked = 0
    catalog.read_ahead(e for k in catalog.scan.keys if len(k.entries) >= 2 for e in k.entries)
    for k in catalog.scan.keys:
        if len(k.entries) >= 2:
            checked += 1
            if budget.pairs <= 0 or budget.clauses <= 0:
                n = sum(1 for e in k.entries if not isinstance(catalog.load(e), Unreadable))
                f, left = (), n * (n - 1) // 2
            else:
                f, left = audit_key_within(catalog, k, budget)
            if left:
                partial.append((k, left))
            if f or left:
                out.append((k, f))
    return AuditReport(checked, tuple(out), tuple(partial), budget.reason() if partial else None)
