"""Group an entry's guard clauses for reading: ranges, divisibility, relations, the rest.

:func:`summarize` groups an entry's clauses: one integer range per symbol
(:class:`SymbolRange`: ``2 <= s77 <= 10``, with excluded values),
divisibility (``s77 % 4 == 0``), relations between symbols (``s27 == s77``),
then whatever remains. Every group keeps the indices of the clauses it came
from; no clause is dropped.

Ranges are derived with exact integer arithmetic from clauses linear in one
placeholder (``3*t0 <= 4096`` gives ``t0 <= 1365``); the symbols are integers,
as every backed SymInt is (``ShapeEnv`` in torch/fx/experimental/symbolic_shapes.py
creates them ``integer=True``). Analysis only: verdicts always come from
:mod:`fxcache_core.guards.expr` on the stored string, and nothing here renders
a clause (that is :mod:`fxcache_core.guards.display`). Imports sympy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sympy

from fxcache_core.guards.expr import Clause, GuardsExpr
from fxcache_core.guards.ranges import render_range
from fxcache_core.guards.sympy_form import GuardStrPrinter, PyFloorDiv, PyMod, to_sympy


@dataclass(frozen=True)
class SymbolRange:
    """The integer interval one placeholder is confined to.

    Attributes:
        placeholder: ``t0``...
        lower, upper: inclusive bounds; None for unbounded.
        excluded: values ruled out by ``!=`` clauses (inside the bounds).
        clauses: indices of the clauses that gave these facts.
    """

    placeholder: str
    lower: int | None
    upper: int | None
    excluded: tuple[int, ...]
    clauses: tuple[int, ...]

    @property
    def empty(self) -> bool:
        """True when no integer satisfies the bounds (the entry can never hit)."""
        return self.lower is not None and self.upper is not None and self.lower > self.upper

    def render(self, name: str) -> str:
        """``2 <= s77 <= 10, s77 != 4`` with ``name`` for the placeholder (Python's
        operators, the notation of the guards themselves)."""
        return render_range(self.lower, self.upper, self.excluded, name)


@dataclass(frozen=True)
class Divisibility:
    """``expr % modulus == residue``, from ``(expr % m) == r`` or ``expr == m*(expr // m)``."""

    expr: sympy.Basic
    modulus: int
    residue: int
    clauses: tuple[int, ...]

    def render(self, names: Mapping[str, str]) -> str:
        """``s77 % 4 == 0`` (Python's notation, as the guard is written)."""
        text = GuardStrPrinter(names).doprint(self.expr)
        if not (self.expr.is_Symbol or self.expr.is_Integer):
            text = f"({text})"
        return f"{text} % {self.modulus} == {self.residue}"


@dataclass(frozen=True)
class GuardSummary:
    """An entry's clauses, grouped for reading (see the module docstring)."""

    ranges: tuple[SymbolRange, ...]
    divisibility: tuple[Divisibility, ...]
    relations: tuple[Clause, ...]
    other: tuple[Clause, ...]


def placeholder_symbols(expr: sympy.Basic) -> set[sympy.Symbol]:
    return {s for s in expr.free_symbols if isinstance(s, sympy.Symbol)}


MAX_LINEAR_NODES = 64
"""Clauses bigger than this (sympy nodes) are not searched for a range: expanding
a product of many factors costs time exponential in their number."""


def _linear(expr: sympy.Basic, t: sympy.Symbol) -> tuple[int, int] | None:
    """(a, b) with expr == a*t + b and a, b integers, a != 0; else None."""
    if sum(1 for _ in sympy.preorder_traversal(expr)) > MAX_LINEAR_NODES:
        return None
    if expr.atoms(sympy.Function) or not expr.is_polynomial(t):
        return None
    try:
        poly = sympy.Poly(sympy.expand(expr), t)
    except sympy.PolynomialError:
        return None
    if poly.degree() != 1:
        return None
    a, b = (poly.coeff_monomial(t), poly.coeff_monomial(1))
    if not (a.is_Integer and b.is_Integer) or a == 0:
        return None
    return int(a), int(b)


REL_OPS = {sympy.LessThan: "<=", sympy.StrictLessThan: "<", sympy.GreaterThan: ">=",
            sympy.StrictGreaterThan: ">", sympy.Equality: "==", sympy.Unequality: "!="}


def _bound(rel: sympy.Basic) -> tuple[str, str, int] | None:
    """A one-placeholder linear clause as (placeholder, op, value): t0 <= 7, t0 != 1..."""
    op = REL_OPS.get(type(rel))
    if op is None:
        return None
    syms = placeholder_symbols(rel)
    if len(syms) != 1:
        return None
    (t,) = syms
    lin = _linear(rel.lhs - rel.rhs, t)
    if lin is None:
        return None
    a, b = lin  # a*t + b OP 0
    if a < 0:
        a, b = -a, -b
        op = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(op, op)
    # a*t OP -b with a > 0, over the integers:
    c = -b
    if op == "<=":
        return t.name, "<=", c // a
    if op == "<":
        return t.name, "<=", (c - 1) // a
    if op == ">=":
        return t.name, ">=", -((-c) // a)
    if op == ">":
        return t.name, ">=", -((-(c + 1)) // a)
    if op == "==":
        return (t.name, "==", c // a) if c % a == 0 else (t.name, "never", 0)
    if op == "!=":
        return (t.name, "!=", c // a) if c % a == 0 else (t.name, "always", 0)
    return None


def _divisibility(rel: sympy.Basic) -> tuple[sympy.Basic, int, int] | None:
    """(expr, modulus, residue) for ``(expr % m) == r`` or ``expr == m*(expr // m)``."""
    if not isinstance(rel, sympy.Equality):
        return None
    for lhs, rhs in ((rel.lhs, rel.rhs), (rel.rhs, rel.lhs)):
        if isinstance(lhs, PyMod) and lhs.args[1].is_Integer and rhs.is_Integer and int(lhs.args[1]) > 0:
            m = int(lhs.args[1])
            return lhs.args[0], m, int(rhs) % m
        if isinstance(rhs, sympy.Mul) and len(rhs.args) == 2:
            k, fd = rhs.args
            if (k.is_Integer and isinstance(fd, PyFloorDiv) and fd.args[1] == k
                    and fd.args[0] == lhs and int(k) > 0):
                return lhs, int(k), 0
    return None


def summarize(g: GuardsExpr) -> GuardSummary:
    """Group the clauses of ``g`` (see the module docstring).

    Cost: builds the sympy form of every clause (about 0.1 ms per clause).
    """
    bounds: dict[str, dict[str, Any]] = {}
    divs: dict[tuple[sympy.Basic, int, int], list[int]] = {}
    relations: list[Clause] = []
    other: list[Clause] = []
    for c in g.clauses:
        e = to_sympy(c)
        b = _bound(e)
        if b is not None:
            t, op, v = b
            r = bounds.setdefault(t, {"lo": None, "hi": None, "ne": set(), "idx": [],
                                      "never": False})
            r["idx"].append(c.index)
            if op in ("<=", "=="):
                r["hi"] = v if r["hi"] is None else min(r["hi"], v)
            if op in (">=", "=="):
                r["lo"] = v if r["lo"] is None else max(r["lo"], v)
            if op == "!=":
                r["ne"].add(v)
            if op == "never":
                r["never"] = True
            continue
        d = _divisibility(e)
        if d is not None:
            divs.setdefault(d, []).append(c.index)
            continue
        if len(placeholder_symbols(e)) >= 2:
            relations.append(c)
        else:
            other.append(c)
    ranges = []
    for t in sorted(bounds, key=lambda n: int(n[1:])):
        r = bounds[t]
        lo, hi = r["lo"], r["hi"]
        if r["never"]:
            lo, hi = 1, 0
        # An excluded value at a bound tightens it: 0 <= s, s != 0, s != 1  ->  2 <= s.
        while lo is not None and lo in r["ne"] and (hi is None or lo <= hi):
            lo += 1
        while hi is not None and hi in r["ne"] and (lo is None or lo <= hi):
            hi -= 1
        excluded = tuple(sorted(v for v in r["ne"] if (lo is None or v >= lo) and (hi is None or v <= hi)))
        ranges.append(SymbolRange(t, lo, hi, excluded, tuple(r["idx"])))
    divisibility = tuple(Divisibility(e, m, res, tuple(idx)) for (e, m, res), idx in divs.items())
    return GuardSummary(tuple(ranges), divisibility, tuple(relations), tuple(other))
