"""Every entry's guards of one key, read for people: ``fxcache guards KEY``.

:func:`key_guards` decodes each entry of a key (torch's order), parses its
guards (:mod:`fxcache_core.guards.expr`), traces each ``tN`` to its symbol and source
(:mod:`fxcache_core.decode.symbols`), groups the clauses
(:func:`~fxcache_core.guards.summary.summarize`) and says what separates the
entries (:func:`~fxcache_core.guards.display.compare_entries`). The result is a
value (:class:`KeyGuards`) with its own JSON form; the CLI only renders it.
Imports sympy (the clauses' sympy form).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import Origin
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.decode.workers import UNFINISHED_CODES
from fxcache_core.errors import GuardParseError
from fxcache_core.guards.display import (
    MAX_SHOWN_CLAUSES,
    EntryComparison,
    compare_entries,
    expr_tree,
    render,
    symbol_names,
)
from fxcache_core.guards.expr import GuardsExpr, parse_guards
from fxcache_core.guards.summary import GuardSummary, summarize
from fxcache_core.guards.sympy_form import pretty, to_sympy
from fxcache_core.guards.user_terms import (
    Region,
    clause_in_user_terms,
    placeholder_names,
    region_of,
)
from fxcache_core.reasons import Reason, code_of


@dataclass(frozen=True)
class EntryGuards:
    """One entry's guards.

    Attributes:
        entry: the entry.
        unreadable: why it cannot be decoded, else None; then every other field
            is empty. Torch skips such an entry (:attr:`torch_skips`) unless fxcache
            only stopped decoding it (over its CPU budget: torch tries it).
        guards_expr: the stored string (None or "": no guards, always a hit).
        symbols: its ``tN`` table (symbol, source, hint).
        origin: the user code its graph was traced from, where known.
        parsed: the parsed guards, None without guards or when ``error``.
        error: why the guards are not understood (outside the grammar).
        summary: the clauses grouped (ranges, divisibility, relations, other).
    """

    entry: Entry
    unreadable: str | None = None
    guards_expr: str | None = None
    symbols: tuple[SymbolInfo, ...] = ()
    origin: Origin | None = None
    parsed: GuardsExpr | None = field(default=None, compare=False)
    error: str | None = None
    summary: GuardSummary | None = field(default=None, compare=False)

    @property
    def torch_skips(self) -> bool:
        """An unreadable entry torch's lookup skips as well (not one fxcache stopped
        decoding, :data:`~fxcache_core.decode.workers.UNFINISHED_CODES`)."""
        return self.unreadable is not None and code_of(self.unreadable) not in UNFINISHED_CODES

    @property
    def names(self) -> dict[str, str]:
        """``tN`` -> symbol name, for rendering (:func:`~fxcache_core.guards.display.symbol_names`)."""
        return symbol_names(self.symbols)

    @property
    def clauses(self) -> tuple[str, ...]:
        """Each clause with placeholders renamed to their symbols (``2 <= s77``)."""
        names = self.names
        return tuple(pretty(c, names) for c in self.parsed.clauses) if self.parsed is not None else ()

    @property
    def user_clauses(self) -> tuple[str, ...]:
        """Each clause in the user's terms (``x.size(0) >= 2``)."""
        names = placeholder_names(self.symbols)
        return tuple(clause_in_user_terms(c.text, names) for c in self.parsed.clauses) \
            if self.parsed is not None else ()

    def region(self) -> Region | None:
        """The shapes the entry serves, in user terms (None when unreadable or not understood)."""
        if self.unreadable is not None or self.error is not None:
            return None
        if not self.guards_expr or self.parsed is None or self.summary is None:
            return Region(always=True)
        return region_of(self.parsed, self.summary, self.symbols)

    def rendered(self, fmt: str) -> tuple[str, ...]:
        """Each clause as ``plain``, ``pretty`` (sympy's 2-D form) or ``latex``."""
        names = self.names
        return tuple(render(c, fmt, names) for c in self.parsed.clauses) if self.parsed is not None else ()

    def to_json(self, trees: bool = True) -> dict[str, Any]:
        """``entry``, and ``error`` when unreadable; else ``guards_expr``, ``clauses``,
        ``symbols`` (``{"t0": {"symbol", "source", "hint"}}``), ``origin``, ``region``
        (user terms), ``summary`` (``ranges``, ``divisibility``, ``relations``,
        ``other``: clause indices where not rendered), ``error`` when the guards
        are not understood, and (``trees``) a JSON tree of each clause."""
        if self.unreadable is not None:
            return {"entry": self.entry.name, "error": self.unreadable,
                    "error_code": code_of(self.unreadable)}
        names = self.names
        reg = self.region()
        row: dict[str, Any] = {
            "entry": self.entry.name, "guards_expr": self.guards_expr, "clauses": list(self.clauses),
            "symbols": {s.placeholder: s.to_json() for s in self.symbols},
            "origin": str(self.origin) if self.origin else None,
            "region": reg.to_json() if reg is not None else None,
        }
        if self.error is not None:
            row["error"] = self.error
            row["error_code"] = code_of(self.error)
        sm = self.summary
        if sm is not None and self.parsed is not None:
            row["summary"] = {
                "ranges": [{"placeholder": r.placeholder, "symbol": names.get(r.placeholder),
                            "lower": r.lower, "upper": r.upper, "excluded": list(r.excluded),
                            "clauses": list(r.clauses),
                            "text": r.render(names.get(r.placeholder, r.placeholder))}
                           for r in sm.ranges],
                "divisibility": [{"text": dv.render(names), "modulus": dv.modulus,
                                  "residue": dv.residue, "clauses": list(dv.clauses)}
                                 for dv in sm.divisibility],
                "relations": [c.index for c in sm.relations],
                "other": [c.index for c in sm.other],
            }
            if trees:
                row["trees"] = [expr_tree(to_sympy(c), names) for c in self.parsed.clauses]
        return row


@dataclass(frozen=True)
class KeyGuards:
    """The guards of every entry of a key, in torch's order, and what separates them.

    Attributes:
        key: the key.
        entries: one :class:`EntryGuards` per entry, in torch's lookup order.
        comparison: the clauses common to every entry and each entry's own
            (None for a key with one entry).
    """

    key: CacheKey
    entries: tuple[EntryGuards, ...]
    comparison: EntryComparison | None = None

    def to_json(self, trees: bool = True) -> dict[str, Any]:
        """``kind``, ``key``, ``entries`` (:meth:`EntryGuards.to_json`) and, with
        several entries, ``comparison`` (``common``, ``only``: entry -> its own clauses)."""
        body: dict[str, Any] = {"kind": self.key.kind.value, "key": self.key.key,
                                "entries": [e.to_json(trees) for e in self.entries]}
        if self.comparison is not None:
            body["comparison"] = {"common": list(self.comparison.common),
                                  "only": {e.entry.name: list(o) for e, o in
                                           zip(self.entries, self.comparison.only, strict=True)}}
        return body


Summarized = tuple["GuardsExpr | None", "GuardSummary | None", "Reason | None"]
"""A guards string parsed and summarized: (parsed, summary, why not understood)."""


def entry_guards(catalog: Catalog, entry: Entry, memo: dict[str, Summarized] | None = None) -> EntryGuards:
    """One entry's guards (see :class:`EntryGuards`); never raises for bad content.

    ``memo``: guards string -> what parsing and summarizing it gave, filled and reused
    across calls (an AOTAutograd entry and the FX entry it loads store the same string;
    a summary costs sympy a millisecond or so)."""
    d = catalog.load(entry)
    if isinstance(d, Unreadable):
        return EntryGuards(entry, unreadable=d.reason)
    syms = catalog.symbols(entry)
    g = error = sm = None
    if d.guards_expr:
        got = memo.get(d.guards_expr) if memo is not None else None
        if got is None:
            got = _summarized(d.guards_expr)
            if memo is not None:
                memo[d.guards_expr] = got
        g, sm, error = got
    return EntryGuards(entry, None, d.guards_expr, syms, d.origin, g, error, sm)


def entry_regions(catalog: Catalog, entries: Sequence[Entry]) -> dict[str, Region | None]:
    """Entry file (``FileInfo.where``) -> the shapes the entry serves
    (:meth:`EntryGuards.region`), the entries decoded together first (one batch for
    the decode workers, not one round trip each)."""
    catalog.read_ahead(entries)
    return {e.file.where: entry_guards(catalog, e).region() for e in entries}


def _summarized(guards_expr: str) -> Summarized:
    try:
        g = parse_guards(guards_expr)
    except GuardParseError as ex:
        return None, None, Reason(f"guards not understood: {ex}", "guards-not-understood")
    if len(g.clauses) > MAX_SHOWN_CLAUSES:
        return None, None, Reason(f"{len(g.clauses):,} clauses, more than fxcache shows through sympy "
                                  f"({MAX_SHOWN_CLAUSES}): the string as stored", "too-many-clauses")
    try:
        return g, summarize(g), None
    except GuardParseError as ex:
        return None, None, Reason(f"guards not understood: {ex}", "guards-not-understood")


def key_guards(catalog: Catalog, key: CacheKey) -> KeyGuards:
    """The guards of every entry of ``key`` (see the module docstring)."""
    catalog.read_ahead(key.entries)
    entries = tuple(entry_guards(catalog, e) for e in key.entries)
    names = next((e.names for e in entries if e.unreadable is None), {})
    comparison = (compare_entries([e.parsed for e in entries], names) if len(entries) > 1 else None)
    return KeyGuards(key, entries, comparison)
