"""Reading guards: group the clauses of an entry, and render them.

:mod:`fxcache_core.guards.expr` decides what a guards expression *means*; this
module decides how to *show* it:

* :func:`summarize` groups an entry's clauses: one integer range per symbol
  (``2 <= s77 <= 10``, with excluded values), divisibility (``s77 % 4 == 0``),
  relations between symbols (``s27 == s77``), then whatever remains. Every
  group keeps the indices of the clauses it came from; no clause is dropped.
* :func:`display_expr` turns a clause's structured form into plain sympy
  (``floor``, ``Mod``, ``Max``...) for sympy's pretty, str and LaTeX printers.
* :func:`expr_tree` gives a JSON tree of a clause.
* :func:`compare_entries` says which clauses separate the entries of one key.

Ranges are derived with exact integer arithmetic from clauses linear in one
placeholder (``3*t0 <= 4096`` gives ``t0 <= 1365``); the symbols are integers,
as every backed SymInt is.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from fxcache_core.guards.expr import Clause, GuardsExpr

_PLAIN_SYMBOL = re.compile(r"[a-z]+\d+")


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
        from fxcache_core.guards.user_terms import render_range

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
        text = _sstr(self.expr, names)
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


# --- classification -------------------------------------------------------------


def _placeholder_symbols(expr: sympy.Basic) -> set[sympy.Symbol]:
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


_REL_OPS = {sympy.LessThan: "<=", sympy.StrictLessThan: "<", sympy.GreaterThan: ">=",
            sympy.StrictGreaterThan: ">", sympy.Equality: "==", sympy.Unequality: "!="}


def _bound(rel: sympy.Basic) -> tuple[str, str, int] | None:
    """A one-placeholder linear clause as (placeholder, op, value): t0 <= 7, t0 != 1..."""
    op = _REL_OPS.get(type(rel))
    if op is None:
        return None
    syms = _placeholder_symbols(rel)
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
    from fxcache_core.guards.sympy_form import PyFloorDiv, PyMod

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
        e = c.sympy()
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
        if len(_placeholder_symbols(e)) >= 2:
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


# --- rendering ------------------------------------------------------------------


def _renamed(expr: sympy.Basic, names: Mapping[str, str]) -> sympy.Basic:
    subs = {s: sympy.Symbol(names[s.name], integer=True) for s in _placeholder_symbols(expr)
            if s.name in names}
    return expr.xreplace(subs) if subs else expr


def _sstr(expr: sympy.Basic, names: Mapping[str, str]) -> str:
    from fxcache_core.guards.sympy_form import GuardStrPrinter as _GuardStrPrinter

    return _GuardStrPrinter(names).doprint(expr)


_DISPLAY_CALLS = {
    "max": lambda *a: sympy.Max(*a, evaluate=False),
    "min": lambda *a: sympy.Min(*a, evaluate=False),
    "abs": lambda a: sympy.Abs(a, evaluate=False),
    "math.floor": lambda a: sympy.floor(a, evaluate=False),
    "math.ceil": lambda a: sympy.ceiling(a, evaluate=False),
    "math.sqrt": lambda a: sympy.sqrt(a, evaluate=False),
    "torch._sym_sqrt": lambda a: sympy.sqrt(a, evaluate=False),
}


MAX_SHOWN_CLAUSES = 256
"""Most clauses one entry's guards may have for fxcache to show them through
sympy (summary, plain, pretty, latex, JSON trees: about a millisecond a
clause). Real guards have tens; a hostile string of thousands of clauses would
take tens of seconds, so it is shown as stored instead, with why."""


def display_expr(expr: sympy.Basic, names: Mapping[str, str] | None = None) -> sympy.Basic:
    """``expr`` rebuilt from plain sympy classes, unevaluated, for sympy's printers.

    Python ``//`` becomes ``floor(a/b)``, ``%`` becomes ``Mod`` (sympy's Mod has
    Python's sign rule), ``/`` a quotient, ``max``/``min``/``abs`` sympy's
    ``Max``/``Min``/``Abs``; ``and``/``or``/``not`` sympy's logic classes.
    For display only: evaluation always goes through :mod:`fxcache_core.guards.expr`.
    """
    from fxcache_core.guards.sympy_form import (
        BoolToInt,
        PyAnd,
        PyFloorDiv,
        PyIfExp,
        PyMod,
        PyNeg,
        PyNot,
        PyOr,
        PyPow,
        PyTrueDiv,
    )

    def conv(e: sympy.Basic) -> sympy.Basic:
        if not e.args:
            return e
        args = [conv(a) for a in e.args]
        if isinstance(e, PyFloorDiv):
            return sympy.floor(sympy.Mul(args[0], sympy.Pow(args[1], -1, evaluate=False),
                                         evaluate=False), evaluate=False)
        if isinstance(e, PyTrueDiv):
            return sympy.Mul(args[0], sympy.Pow(args[1], -1, evaluate=False), evaluate=False)
        if isinstance(e, PyMod):
            return sympy.Mod(*args, evaluate=False)
        if isinstance(e, PyPow):
            return sympy.Pow(*args, evaluate=False)
        if isinstance(e, PyNeg):
            return sympy.Mul(-1, args[0], evaluate=False)
        if isinstance(e, BoolToInt):
            return args[0]
        if isinstance(e, PyNot):
            return sympy.Not(args[0]) if isinstance(args[0], sympy.logic.boolalg.Boolean) else e.func(*args)
        if isinstance(e, (PyAnd, PyOr)) and all(isinstance(a, sympy.logic.boolalg.Boolean) for a in args):
            return (sympy.And if isinstance(e, PyAnd) else sympy.Or)(*args, evaluate=False)
        if isinstance(e, PyIfExp):
            test, body, orelse = args
            if isinstance(test, sympy.logic.boolalg.Boolean):
                return sympy.Piecewise((body, test), (orelse, True), evaluate=False)
        name = getattr(e, "py_name", None)
        if name in _DISPLAY_CALLS:
            return _DISPLAY_CALLS[name](*args)
        try:
            return e.func(*args, evaluate=False)
        except TypeError:
            return e.func(*args)

    return conv(_renamed(expr, names or {}))


def render(clause: Clause, fmt: str, names: Mapping[str, str] | None = None) -> str:
    """One clause as ``plain`` (Python-like text), ``pretty`` (sympy's 2-D form) or ``latex``.

    sympy multiplies a product's constant factors to display it: where
    that gives a number Python will not print (over ``sys.get_int_max_str_digits()``
    digits, which guards of a few 4096-bit constants reach), the clause is
    given as plain text, with a note saying so.

    Raises:
        ValueError: an unknown ``fmt``.
    """
    if fmt == "plain":
        return clause.pretty(dict(names or {}))
    if fmt not in ("pretty", "latex"):
        raise ValueError(f"unknown format {fmt!r} (plain, pretty, latex)")
    try:
        shown = display_expr(clause.sympy(), names)
        return sympy.pretty(shown, use_unicode=True) if fmt == "pretty" else sympy.latex(shown)
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        return (clause.pretty(dict(names or {}))
                + f"  (plain text: its {fmt} form needs a number of over {sys.get_int_max_str_digits():,} digits)")


def expr_tree(expr: sympy.Basic, names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A JSON tree of a clause's structured form.

    Leaves: ``{"placeholder": "t0", "symbol": "s77"}``, ``{"int": 8}``,
    ``{"float": 0.5}``, ``{"bool": true}``, ``{"const": "inf"}``. Inner nodes:
    ``{"op": OP, "args": [...]}`` where OP is the Python operator or function
    (``"<="``, ``"+"``, ``"*"``, ``"//"``, ``"%"``, ``"max"``, ``"math.floor"``...).
    """
    names = names or {}
    if isinstance(expr, sympy.Symbol):
        return {"placeholder": expr.name, "symbol": names.get(expr.name)}
    if expr.is_Integer:
        return {"int": int(expr)}
    if expr.is_Float or expr.is_Rational:
        return {"float": float(expr)}
    if expr in (sympy.true, sympy.false):
        return {"bool": bool(expr)}
    if expr in (sympy.oo, -sympy.oo, sympy.nan, sympy.pi, sympy.E):
        return {"const": str(expr)}
    op = (_REL_OPS.get(type(expr)) or getattr(expr, "py_symbol", None)
          or getattr(expr, "py_name", None)
          or {sympy.Add: "+", sympy.Mul: "*", sympy.Pow: "**"}.get(type(expr))
          or type(expr).__name__)
    return {"op": op, "args": [expr_tree(a, names) for a in expr.args]}


# --- comparing entries -------------------------------------------------------------


@dataclass(frozen=True)
class EntryComparison:
    """How the entries of one key differ.

    Attributes:
        common: clauses every entry has (rendered with the key's symbol names).
        only: per entry (same order as given), the clauses it has and not every
            other entry has; these are what separate the entries' regions.
    """

    common: tuple[str, ...]
    only: tuple[tuple[str, ...], ...]


def compare_entries(exprs: Sequence[GuardsExpr | None],
                    names: Mapping[str, str] | None = None) -> EntryComparison:
    """Clauses common to all entries, and each entry's distinctive clauses.

    Clauses are compared by their stored text; ``names`` renames placeholders
    for display (the entries of one key share their symbols), and a comparison
    with a constant reads with the symbol side first (``s77 >= 16``). ``None`` stands
    for an entry with no guards (or unreadable): it shares nothing.
    """
    clauses = [{c.text: c for c in g.clauses} if g is not None else {} for g in exprs]
    if not clauses:
        return EntryComparison((), ())
    common = set(clauses[0]).intersection(*clauses[1:])

    from fxcache_core.guards.user_terms import (
        clause_in_user_terms,  # one notation: the symbol side first
    )

    def shown(cs: Mapping[str, Clause], keep: Any) -> tuple[str, ...]:
        return tuple(clause_in_user_terms(c.text, dict(names or {})) for t, c in cs.items() if keep(t))

    return EntryComparison(shown(clauses[0], lambda t: t in common),
                           tuple(shown(cs, lambda t: t not in common) for cs in clauses))


def symbol_names(symbols: Sequence[Any]) -> dict[str, str]:
    """placeholder -> symbol name for rendering (``t0`` -> ``s77``), from a symbol table.

    Only plain symbols rename a placeholder: one whose SymInt is an expression
    (``2*s77``) keeps its ``tN`` name, so ``L['t2'] == 2*L['t0']`` does not
    print as the tautology ``2*s77 == 2*s77``.
    """
    return {s.placeholder: s.expr for s in symbols
            if getattr(s, "expr", None) and _PLAIN_SYMBOL.fullmatch(s.expr)}

