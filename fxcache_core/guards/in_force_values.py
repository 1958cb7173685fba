"""The values the guards in force allow a clause's sizes: ranges, every point when few, witness candidates.

:func:`~fxcache_core.guards.in_force.check_installed` asks these, for one clause
of an entry (over the placeholders of :data:`~fxcache_core.guards.in_force_code.NAMES`):

* :func:`ranges_in_force`: each size's integer range (lower, upper, excluded
  values) from the one-size guards in force
  (:func:`fxcache_core.guards.summary.summarize`; sympy, imported only when asked);
* :func:`implied_by_ranges`: whether a one-size range clause stays within them;
* :func:`points_within`: every point of the sizes within the ranges, when
  bounded and at most :data:`MAX_ENUMERATED`;
* :func:`witness_candidates`: values to try for a call that fails the clause;
* :func:`equal_classes`: sizes a guard in force makes equal (changed together).

Nothing here imports torch or evaluates a guard.
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections.abc import Mapping, Sequence

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import Clause, parse_guards
from fxcache_core.guards.in_force_code import GuardInForce

MAX_ENUMERATED = 4096
"""Points tried when the guards in force leave a clause's sizes few enough values."""
MAX_RANGE_GUARDS = 64
"""Most one-size guards in force read as ranges for one clause (sympy reads each in ~1 ms)."""

Ranges = Mapping[str, tuple[int | None, int | None, tuple[int, ...]]]
"""placeholder -> (lower, upper, excluded values); a bound None: unbounded."""


def ranges_in_force(guards: Sequence[GuardInForce], vars_: Sequence[str]) -> dict[str, tuple[int | None, int | None, tuple[int, ...]]]:
    """placeholder -> (lower, upper, excluded) that the one-placeholder guards in force give
    (none when more than :data:`MAX_RANGE_GUARDS`: a real size has a few)."""
    wanted = set(vars_)
    single = [g.clause.text for g in guards if len(g.clause.placeholders) == 1 and g.clause.placeholders[0] in wanted]
    if not single or len(single) > MAX_RANGE_GUARDS:
        # No range known: the clause is then checked by a witness, never taken as implied.
        return {}
    return _summarized(tuple(single))


@functools.lru_cache(maxsize=1024)
def _summarized(single: tuple[str, ...]) -> dict[str, tuple[int | None, int | None, tuple[int, ...]]]:
    """:func:`ranges_in_force` of these one-placeholder guards (each hit of a compile asks again)."""
    from fxcache_core.guards.summary import summarize  # sympy: imported only here

    try:
        summary = summarize(parse_guards(" and ".join(f"({t})" for t in single)))
    except GuardParseError:
        return {}
    return {r.placeholder: (r.lower, r.upper, r.excluded) for r in summary.ranges}


def implied_by_ranges(clause: Clause, ranges: Ranges) -> bool:
    """A one-placeholder range clause that the ranges in force stay within."""
    if len(clause.placeholders) != 1:
        return False
    from fxcache_core.guards.summary import summarize

    try:
        s = summarize(parse_guards(clause.text))
    except GuardParseError:
        return False
    if len(s.ranges) != 1 or s.divisibility or s.relations or s.other:
        return False
    r = s.ranges[0]
    have = ranges.get(r.placeholder)
    if have is None:
        return r.lower is None and r.upper is None and not r.excluded
    lo, hi, ex = have
    if r.lower is not None and (lo is None or lo < r.lower):
        return False
    if r.upper is not None and (hi is None or hi > r.upper):
        return False
    return all(v in ex or (lo is not None and v < lo) or (hi is not None and v > hi) for v in r.excluded)


def points_within(ranges: Ranges, vars_: Sequence[str]) -> list[dict[str, int]] | None:
    """Every point of the clause's placeholders within the ranges in force, if
    all are bounded and there are at most :data:`MAX_ENUMERATED`; else None."""
    axes = []
    total = 1
    for v in vars_:
        lo, hi, ex = ranges.get(v, (None, None, ()))
        if lo is None or hi is None:
            return None
        total *= max(0, hi - lo + 1)
        if total > MAX_ENUMERATED:
            return None
        axes.append([x for x in range(lo, hi + 1) if x not in ex])
    return [dict(zip(vars_, p, strict=True)) for p in itertools.product(*axes)]


def witness_candidates(clause: Clause, ranges: Ranges, env: Mapping[str, int]) -> list[dict[str, int]]:
    """Values to try for a witness, one size changed each (placeholder -> value): around
    the call's values (``env``), the bounds in force, and the clause's constants;
    within the ranges, never negative."""
    consts = set()
    for node in ast.walk(ast.parse(clause.text, mode="eval")):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            consts.add(node.value)
    out = []
    for v in clause.placeholders:
        base = env.get(v)
        lo, hi, _ = ranges.get(v, (None, None, ()))
        vals = {c + d for c in consts for d in (-1, 0, 1)}
        if base is not None:
            vals |= {base - 1, base + 1, base * 2, base // 2, base * 2 + 1}
        for b in (lo, hi):
            if b is not None:
                vals |= {b - 1, b, b + 1}
        vals |= {2, 3, 2**31 - 1}
        for x in sorted(vals):
            if (lo is None or x >= lo) and (hi is None or x <= hi) and x >= 0:
                out.append({v: x})
    return out


def equal_classes(guards: Sequence[GuardInForce]) -> dict[str, tuple[str, ...]]:
    """Placeholders a guard in force makes equal (``a == b``): each -> its class."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for g in guards:
        n = ast.parse(g.clause.text, mode="eval").body
        if (isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq)
                and len(g.clause.placeholders) == 2 and all(_is_placeholder(x) for x in (n.left, n.comparators[0]))):
            a, b = g.clause.placeholders
            parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for x in list(parent):
        groups.setdefault(find(x), []).append(x)
    out: dict[str, tuple[str, ...]] = {}
    for root, members in groups.items():
        cls = tuple(sorted(set(members) | {root}))
        for m in cls:
            out[m] = cls
    return out


def _is_placeholder(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "L"



__all__ = ["MAX_ENUMERATED", "MAX_RANGE_GUARDS", "Ranges", "equal_classes", "implied_by_ranges", "points_within",
           "ranges_in_force", "witness_candidates"]
