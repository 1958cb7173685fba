"""Each entry of a key judged for given placeholder values, in torch's order.

Mirrors ``GuardedCache.find_guarded_entry`` and ``iterate_over_candidates`` in
torch/_inductor/codecache.py: entries are tried in sorted name order
(dot-prefixed temp files skipped); an entry that cannot be unpickled is skipped
(one fxcache could not decode within its CPU budget is not known to be: torch
tries it, and may hang on it, so it leaves the lookup undecided; one that unpickles
but is not a valid entry, :data:`~fxcache_core.decode.entries.LOADED_BY_TORCH`, is
not skipped by torch, which asserts, hits or evaluates on it: undecided too);
an entry with no guards is a hit; otherwise its guards expression is evaluated
on the hints of the backed SymInt inputs, the first entry whose guards hold is
the hit, and a guard that raises stops the lookup. An AOTAutograd hit then
loads its forward/backward FX entries by exact guards string
(``FxGraphCacheLoadable.load`` in
torch/_functorch/_aot_autograd/aot_autograd_result.py).

Works on placeholder values already bound (:mod:`fxcache_core.lookup.fit` and
:mod:`fxcache_core.lookup.match` bind them); never decides whether a key fits the
call, never prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import LOADED_BY_TORCH, DecodedEntry
from fxcache_core.decode.workers import UNFINISHED_CODES
from fxcache_core.errors import GuardParseError
from fxcache_core.reasons import Reason, code_of

Outcome = Literal["pass", "fail", "error", "unknown", "unreadable", "unparsable"]


@dataclass(frozen=True, slots=True)
class EntryVerdict:
    """How one entry fares for the given inputs.

    Attributes:
        entry: the entry.
        outcome: ``pass`` (its guards hold, or it has none), ``fail`` (a clause
            is False), ``error`` (evaluating a clause raises, e.g. a division
            by zero or a ``tN`` the graph does not have: the guard fails, and
            the exception escapes torch's ``find_guarded_entry``, which stops
            the lookup there), ``unknown`` (a clause needs a value the inputs
            do not give, the entry could not be decoded within fxcache's CPU
            budget, or it is corrupt but unpickles: torch would try it),
            ``unreadable`` (torch would skip it too),
            ``unparsable`` (a guard fxcache refuses to read; undecided).
        reason: one line saying why (the failing clause and the values, the
            missing placeholders, the decode error), a
            :class:`~fxcache_core.reasons.Reason` (``clause-failed``,
            ``guard-raises``, ``placeholder-not-given``, ``clause-undecidable``,
            ``entry-unreadable``, ``corrupt-entry-torch-loads``, ``guards-unparsable``,
            ``over-cpu-budget`` and the
            other codes of an entry left undecoded,
            :data:`~fxcache_core.decode.workers.UNFINISHED_CODES`); None for a pass.
        failed_clause: the first failing clause's text, for ``fail``.
        values: placeholder values used (``t0`` -> 16).
    """

    entry: Entry
    outcome: Outcome
    reason: Reason | None = None
    failed_clause: str | None = None
    guards_expr: str | None = None
    values: tuple[tuple[str, int], ...] = ()

    @property
    def passed(self) -> bool | None:
        """True/False when decided, None when it could not be decided."""
        if self.outcome == "pass":
            return True
        if self.outcome in ("fail", "error"):
            return False
        return None

    def user_clause(self, names: Mapping[str, str]) -> str | None:
        """The failing clause in the user's terms (``x.size(0) >= 16``; ``names``:
        :func:`~fxcache_core.guards.user_terms.placeholder_names`), None without one."""
        from fxcache_core.guards.user_terms import clause_in_user_terms

        return None if self.failed_clause is None else clause_in_user_terms(self.failed_clause, names)

    def user_values(self, names: Mapping[str, str]) -> str:
        """The values the failing clause read, in the user's terms: ``x.size(0)=10``."""
        if self.failed_clause is None:
            return ""
        used = set(re.findall(r"L\['(t[0-9]+)'\]", self.failed_clause))
        return ", ".join(f"{names.get(p, p)}={v}" for p, v in self.values if p in used)

    def to_json(self, names: Mapping[str, str] | None = None) -> dict[str, object]:
        """``entry``, ``outcome``, ``passed``, ``failed_clause`` (as stored), ``reason``
        and its ``reason_code``, ``values`` (``tN`` -> value) and ``user_clause`` (the
        failing clause in the user's terms, with ``names``)."""
        return {"entry": self.entry.name, "outcome": self.outcome, "passed": self.passed,
                "failed_clause": self.failed_clause, "reason": self.reason,
                "reason_code": code_of(self.reason),
                "values": dict(self.values), "user_clause": self.user_clause(names or {})}


@dataclass(frozen=True, slots=True)
class FxLoad:
    """An FX graph an AOTAutograd hit loads.

    Attributes:
        role: ``forward`` or ``backward``.
        key: the FX key.
        entry: the FX entry torch would load (exact guards-string match), or
            None when it is gone (torch then recompiles).
    """

    role: str
    key: str
    entry: str | None

    def to_json(self) -> dict[str, object]:
        return {"role": self.role, "key": self.key, "entry": self.entry}


@dataclass(frozen=True, slots=True)
class Lookup:
    """Torch's walk over a key's judged entries (see the module docstring).

    Attributes:
        hit: the first entry that passes, before anything undecided or raising; None
            for a miss or when undecided.
        decided: False when an entry before any passing one could not be decided
            (``unknown`` or ``unparsable``).
        shadowed: entries after the hit that would also pass.
        aborted: why the lookup stopped early: a guard raised before any entry
            passed (``lookup-aborted``).
    """

    hit: Entry | None
    decided: bool
    shadowed: tuple[Entry, ...]
    aborted: Reason | None


def judge_entry(catalog: Catalog, e: Entry, bound: Mapping[str, int],
                n_inputs: int | None) -> EntryVerdict:
    """How entry ``e`` fares with placeholders ``bound`` (``t0`` -> 16); ``n_inputs``:
    the graph's backed SymInt inputs (a guard reading ``L['tN']`` past them raises
    ``KeyError`` in torch), None when not known."""
    from fxcache_core.guards.expr import (
        parse_guards,  # sympy is only needed once there are guards to read
    )

    d = catalog.load(e)
    if isinstance(d, Unreadable) and (why := torch_reads(e, d)) is not None:
        return EntryVerdict(e, "unknown", why)
    if isinstance(d, Unreadable):
        return EntryVerdict(e, "unreadable", Reason(f"skipped, as torch would: {d.reason}", "entry-unreadable"))
    if not d.guards_expr:
        return EntryVerdict(e, "pass", None, guards_expr=d.guards_expr)
    if any(field == "inputs" for field, _ in d.absent):
        n_inputs = None  # the entry's inputs could not be read: how many it has is unknown
    try:
        g = parse_guards(d.guards_expr)
    except GuardParseError as err:
        return EntryVerdict(e, "unparsable", Reason(str(err), "guards-unparsable"), guards_expr=d.guards_expr)
    used = {p: bound[p] for p in g.placeholders if p in bound}
    verdict = g.evaluate(used)
    vals = tuple(sorted(used.items(), key=lambda kv: int(kv[0][1:])))
    first = next((r for r in verdict.results if r.status != "pass"), None)
    beyond = [m for m in (first.missing if first else ())
              if n_inputs is not None and int(m[1:]) >= n_inputs]
    if first is not None and first.status == "unknown" and beyond:
        # The first clause torch cannot pass names L['tN'] past the graph's backed
        # SymInt inputs: its eval raises KeyError there.
        return EntryVerdict(e, "error", Reason(f"{first.clause.text}  raises KeyError: {beyond[0]!r} "
                                               f"(the graph has {n_inputs} backed SymInt inputs)",
                                               "guard-raises"),
                            failed_clause=first.clause.text, guards_expr=d.guards_expr, values=vals)
    if verdict.status == "pass":
        return EntryVerdict(e, "pass", guards_expr=d.guards_expr, values=vals)
    if verdict.status == "fail":
        f = verdict.first_failure
        assert f is not None
        shown = ", ".join(f"{p}={used[p]}" for p in f.clause.placeholders if p in used)
        if f.status == "error":
            return EntryVerdict(e, "error", Reason(f"{f.clause.text}  raises {f.error}  with {shown}",
                                                   "guard-raises"),
                                failed_clause=f.clause.text, guards_expr=d.guards_expr, values=vals)
        return EntryVerdict(e, "fail", Reason(f"{f.clause.text}  is {f.value!r}  with {shown}", "clause-failed"),
                            failed_clause=f.clause.text, guards_expr=d.guards_expr, values=vals)
    missing = sorted({m for r in verdict.results for m in r.missing}, key=lambda p: int(p[1:]))
    refused = next((r for r in verdict.results if r.status == "unknown" and r.error), None)
    why = (Reason(f"needs {', '.join(missing)}", "placeholder-not-given") if missing
           else Reason(f"{refused.clause.text}  {refused.error}", "clause-undecidable") if refused is not None
           else Reason("undecided", "undecided"))
    return EntryVerdict(e, "unknown", why, guards_expr=d.guards_expr, values=vals)


_TORCH_DOES = {
    "not-a-compiled-graph": "its assert that the entry has a guards_expr fails, and the lookup raises",
    "guards-missing": "its assert that the entry has a guards_expr fails, and the lookup raises",
    "guards-not-a-string": "it takes a falsy guards_expr as no guards (a hit on this entry) and evaluates "
                           "any other (bytes as source; anything else raises)",
    "wrong-entry-type": "where it can import that class, it judges the entry's guards_expr like any other",
    "unexpected-content": "it judges the entry's guards_expr like any other",
    "foreign-global": "its pickle.loads runs what the entry names, and may raise (a skip) or not (the entry judged)",
}
"""What torch's lookup does with an entry of each :data:`LOADED_BY_TORCH` code."""


def loaded_by_torch(e: Entry, why: str) -> Reason:
    """Why entry ``e``, corrupt to fxcache for ``why`` (a :data:`LOADED_BY_TORCH` code),
    leaves torch's lookup of its key undecided: its bytes unpickle, so torch does not
    skip it (``corrupt-entry-torch-loads``)."""
    does = _TORCH_DOES.get(code_of(why) or "", "it judges the entry")
    return Reason(f"entry {e.name[:16]} is corrupt to fxcache ({why}), but it unpickles: torch does not "
                  f"skip it; {does}: undecided", "corrupt-entry-torch-loads")


def torch_reads(e: Entry, d: Unreadable) -> Reason | None:
    """Why entry ``e``, which fxcache did not read whole (``d``), is one torch's lookup
    still tries, so that its key's lookup is undecided from it on; None where torch skips
    it too (its ``pickle.loads`` raises). Torch tries an entry fxcache stopped reading
    (over its CPU budget: ``over-cpu-budget``, ``decoder-died``, ``no-decoder``), one over
    fxcache's size or memory budget (torch, with more memory, may load it: ``over-size-limit``,
    ``over-memory-budget``) and one corrupt to fxcache that unpickles
    (``corrupt-entry-torch-loads``, :func:`loaded_by_torch`)."""
    code = code_of(d.reason)
    if d.cause == "too-costly":
        return Reason(f"{d.reason}; torch tries it here: undecided",
                      code if code in UNFINISHED_CODES else "over-cpu-budget")
    if d.cause == "too-large":
        return Reason(f"{d.reason}; torch tries it here, and with more memory may load it: undecided",
                      code if code in _TOO_LARGE_CODES else "over-size-limit")
    if code in LOADED_BY_TORCH:
        return loaded_by_torch(e, d.reason)
    return None


_TOO_LARGE_CODES = frozenset({"over-size-limit", "over-memory-budget"})


def torch_lookup(kind: KeyKind, verdicts: Sequence[EntryVerdict]) -> Lookup:
    """Walk ``verdicts`` (a key's entries, in torch's order) as torch's lookup does: the
    first pass is the hit unless an undecided entry or a raising guard comes first."""
    hit, decided, shadowed, aborted = None, True, [], None
    for v in verdicts:
        if v.outcome == "pass":
            if hit is None and decided and aborted is None:
                hit = v.entry
            elif hit is not None:
                shadowed.append(v.entry)
        elif v.outcome in ("unknown", "unparsable") and hit is None:
            decided = False
        elif v.outcome == "error" and hit is None and decided and aborted is None:
            aborted = Reason(f"the guards of {v.entry.name[:16]} raise ({v.reason}); torch's lookup "
                             + ("stops there and AOTAutograd recompiles"
                                if kind is KeyKind.AOT_AUTOGRAD else "raises and the compile fails"),
                             "lookup-aborted")
    return Lookup(hit, decided, tuple(shadowed), aborted)


def fx_loads(catalog: Catalog, key: CacheKey, hit: Entry | None) -> tuple[FxLoad, ...]:
    """The FX entries an AOTAutograd ``hit`` of ``key`` loads (exact guards-string match,
    :meth:`~fxcache_core.catalog.reader.Catalog.fx_entry_for`); () for an FX key or no hit."""
    if hit is None or key.kind is not KeyKind.AOT_AUTOGRAD:
        return ()
    d = catalog.load(hit)
    if not isinstance(d, DecodedEntry):
        return ()
    out = []
    for role, ref in (("forward", d.forward), ("backward", d.backward)):
        if ref is not None:
            fx = catalog.fx_entry_for(ref.key, ref.guards_expr)
            out.append(FxLoad(role, ref.key, fx.name if fx else None))
    return tuple(out)


def fx_load_doubts(catalog: Catalog, key: CacheKey, hit: Entry | None) -> tuple[Reason, ...]:
    """Why the FX entries an AOTAutograd ``hit`` of ``key`` loads are not known: an FX entry
    torch reads but fxcache did not (:func:`torch_reads`: corrupt to fxcache but it
    unpickles, or over fxcache's CPU, size or memory budget) comes before the one whose
    guards string matches (or there is none): torch's exact-match lookup reads it too, and
    may take it, raise, or find its guards string the one; () otherwise."""
    if hit is None or key.kind is not KeyKind.AOT_AUTOGRAD:
        return ()
    d = catalog.load(hit)
    if not isinstance(d, DecodedEntry):
        return ()
    out: list[Reason] = []
    for role, ref in (("forward", d.forward), ("backward", d.backward)):
        fx = None if ref is None else catalog.scan.key(ref.key)
        for e in () if fx is None or ref is None else fx.entries:
            x = catalog.load(e)
            if isinstance(x, DecodedEntry) and (not x.guards_expr or x.guards_expr == ref.guards_expr):
                break
            if isinstance(x, Unreadable) and (why := torch_reads(e, x)) is not None:
                out.append(Reason(f"the {role} FX graph the hit loads ({fx.key[:12]}): {why}", why.code))
                break
    return tuple(out)
