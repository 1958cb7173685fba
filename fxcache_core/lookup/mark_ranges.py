"""A marked dim's range (``mark_dynamic(x, 0, min=2, max=16)``) against a key's entries.

The range is not part of the key: an entry compiled under a marked range serves a
call marked without one, or with another, whose sizes its guards hold (torch 2.13:
an entry compiled for ``min=2, max=16`` is hit by ``x[8, 3]`` marked without a range,
and by one marked ``min=4, max=12``). The range is Dynamo's constraint on the dim's
symbol (``StrictMinMaxConstraint``, torch/fx/experimental/symbolic_shapes.py), and
torch checks it twice:

* when it makes the symbol: a size outside the call's own range raises
  ``ConstraintViolationError`` ("40 not in range [2, 16]") before any lookup;
* when it produces the frame's guards, after the lookup: a hit adds the entry's guards
  to the ``ShapeEnv``, and ``ShapeEnv.produce_guards`` raises
  ``ConstraintViolationError`` where the range (above the 0/1 specialization, from 2)
  is not inside the symbol's range under those guards, or a guard other than a bound
  restricts that symbol alone ("Not all values of ... satisfy the generated guard"):
  a call marked ``max=32`` hits an entry compiled for 16, then raises.

:func:`mark_range_problem` says which, for one key's lookup. A dim marked without a
range is a ``RelaxedUnspecConstraint`` and raises neither. Never imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping

from fxcache_core.errors import GuardParseError
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.reasons import Reason

__all__ = ["mark_range_problem", "outside_own_range"]


def _shown(lo: int | None, hi: int | None) -> str:
    return f"[{'' if lo is None else lo}, {'' if hi is None else hi}]"


def outside_own_range(inputs: Mapping[str, InputValue]) -> Reason | None:
    """A marked dim whose size is outside its own range: Dynamo raises before any lookup."""
    from fxcache_core.guards.user_terms import user_source

    for src, v in inputs.items():
        if not isinstance(v, TensorArg):
            continue
        for dim, lo, hi in v.ranges:
            size = v.shape[dim]
            if (lo is not None and size < lo) or (hi is not None and size > hi):
                return Reason(
                    f"{user_source(src)}.size({dim}) = {size} is outside its marked range {_shown(lo, hi)}: "
                    "Dynamo raises ConstraintViolationError before any cache lookup", "mark-range-outside")
    return None


def mark_range_problem(m: KeyMatch, inputs: Mapping[str, InputValue]) -> Reason | None:
    """For a key whose lookup hits, what the call's marked ranges (``inputs``, in the
    key's sources) do after the hit: ``mark-range-raises`` (torch raises
    ``ConstraintViolationError`` after loading the entry: a range reaches beyond what
    the entry's guards allow the dim's symbol, or a value inside it they exclude) or
    ``mark-range-may-raise`` (a guard other than a bound or an excluded value restricts
    the symbol: torch may raise, fxcache does not tell); None when nothing raises."""
    if m.hit is None or not any(isinstance(v, TensorArg) and v.ranges for v in inputs.values()):
        return None
    verdict = next((v for v in m.entries if v.entry.name == m.hit.name), None)
    if verdict is None or not verdict.guards_expr:
        return None
    from fxcache_core.guards.expr import parse_guards
    from fxcache_core.guards.summary import placeholder_symbols, summarize
    from fxcache_core.guards.sympy_form import to_sympy
    from fxcache_core.guards.user_terms import user_source

    by_source = {s.source: s.placeholder for s in m.symbols if s.source}
    try:
        g = parse_guards(verdict.guards_expr)
        summary = summarize(g)
    except (GuardParseError, ValueError, RecursionError):
        return None
    ranges = {r.placeholder: r for r in summary.ranges}
    for src, v in inputs.items():
        if not isinstance(v, TensorArg):
            continue
        for dim, lo, hi in v.ranges:
            ph = by_source.get(f"{src}.size()[{dim}]")
            if ph is None:
                continue
            where = f"{user_source(src)}.size({dim})"
            r = ranges.get(ph)
            low = max(2, lo if lo is not None else 0)
            e_lo = r.lower if r is not None and r.lower is not None else 2
            e_hi = r.upper if r is not None else None
            if e_lo > low or (e_hi is not None and (hi is None or hi > e_hi)):
                return Reason(
                    f"HIT entry {m.hit.name[:16]} ({m.key.kind.short} {m.key.key[:12]}), then torch raises "
                    f"ConstraintViolationError: {where} is marked {_shown(lo, hi)}, and the entry's guards keep "
                    f"it within {_shown(e_lo, e_hi)}", "mark-range-raises")
            excluded = [x for x in (r.excluded if r is not None else ()) if x >= low and (hi is None or x <= hi)]
            if excluded:
                return Reason(
                    f"HIT entry {m.hit.name[:16]} ({m.key.kind.short} {m.key.key[:12]}), then torch raises "
                    f"ConstraintViolationError: {where} is marked {_shown(lo, hi)}, and the entry's guards "
                    f"exclude {excluded[0]}", "mark-range-raises")
            other = [c for c in (*summary.other, *(c for d in summary.divisibility for c in g.clauses
                                                   if c.index in d.clauses))
                     if {s.name for s in placeholder_symbols(to_sympy(c))} == {ph}]
            if other:
                return Reason(
                    f"HIT entry {m.hit.name[:16]} ({m.key.kind.short} {m.key.key[:12]}), but {where} is marked "
                    f"{_shown(lo, hi)} and the entry's guards restrict it otherwise ({other[0].text}): torch may "
                    "then raise ConstraintViolationError", "mark-range-may-raise")
    return None
