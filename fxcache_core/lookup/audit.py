"""Entries of one key that can never be served, or that compete for the same shapes.

torch takes the first entry (sorted by name) whose guards hold. So an entry
whose region lies inside an earlier entry's region is *shadowed*: it can never
be served, it only costs disk and lookup time. Two entries whose regions
overlap without one containing the other are *ambiguous*: where they overlap
the earlier one wins, so which entry serves a shape depends on file names.

The analysis is exact where both entries' guards are integer ranges per
placeholder (every clause lands in :attr:`GuardSummary.ranges`); otherwise
the pair is reported as not analysed, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.errors import GuardParseError
from fxcache_core.guards.summary import SymbolRange, summarize
from fxcache_core.reasons import Reason, code_of

Box = dict[str, SymbolRange]


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


def audit_key(catalog: Catalog, key: CacheKey) -> tuple[Finding, ...]:
    """Shadowed and overlapping entry pairs of ``key`` (see the module docstring); readable
    entries only (torch skips the others), in torch's order."""
    readable = [(e, d) for e in key.entries if not isinstance(d := catalog.load(e), Unreadable)]
    boxes = [(e, _box(d.guards_expr)) for e, d in readable]
    out: list[Finding] = []
    for j, (later, bj) in enumerate(boxes):
        for earlier, bi in boxes[:j]:
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
    return tuple(out)


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What :func:`audit` found across a cache.

    Attributes:
        keys_checked: keys with two or more entries (the only ones where an
            entry can shadow or overlap another).
        results: (key, its findings) for each key with findings, in scan order.
    """

    keys_checked: int
    results: tuple[tuple[CacheKey, tuple[Finding, ...]], ...]

    def __iter__(self):
        """The (key, findings) pairs (what ``audit`` used to return)."""
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def count(self, kind: str) -> int:
        """How many findings of ``kind`` (``shadowed``: entries that can never be
        served; ``overlap``, ``not-analysed``: pairs of entries)."""
        return sum(1 for _, fs in self.results for f in fs if f.kind == kind)

    def to_json(self) -> list[dict[str, object]]:
        """A list of ``{"kind", "key", "findings": [{"kind", "earlier", "later", "detail",
        "detail_code"}]}``."""
        return [{"kind": k.kind.value, "key": k.key,
                 "findings": [{"kind": f.kind, "earlier": f.earlier.name, "later": f.later.name,
                               "detail": f.detail, "detail_code": code_of(f.detail)} for f in fs]}
                for k, fs in self.results]


def audit(catalog: Catalog) -> AuditReport:
    """:func:`audit_key` for every key with two or more entries; the keys with findings."""
    out = []
    checked = 0
    for k in catalog.scan.keys:
        if len(k.entries) >= 2:
            checked += 1
            f = audit_key(catalog, k)
            if f:
                out.append((k, f))
    return AuditReport(checked, tuple(out))
