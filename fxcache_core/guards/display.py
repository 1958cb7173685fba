"""Show guard clauses: plain sympy for sympy's printers, plain/pretty/LaTeX text, JSON trees.

* :func:`display_expr` turns a clause's structured form into plain sympy
  (``floor``, ``Mod``, ``Max``...) for sympy's pretty, str and LaTeX printers.
* :func:`render` gives one clause as ``plain``, ``pretty`` or ``latex`` text.
* :func:`expr_tree` gives a JSON tree of a clause.
* :func:`compare_entries` says which clauses separate the entries of one key,
  in the user's terms (:mod:`fxcache_core.guards.user_terms`).

Mirrors sympy's printers (sympy/printing/str.py, pretty, latex), fed plain
sympy classes. Display only: what a clause means is decided by
:mod:`fxcache_core.guards.expr`, its grouping by
:mod:`fxcache_core.guards.summary`; nothing here evaluates a guard. Imports sympy.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from fxcache_core.guards.expr import Clause, GuardsExpr
from fxcache_core.guards.summary import REL_OPS, placeholder_symbols
from fxcache_core.guards.sympy_form import (
    BoolToInt,
    GuardStrPrinter,
    PyAnd,
    PyFloorDiv,
    PyIfExp,
    PyMod,
    PyNeg,
    PyNot,
    PyOr,
    PyPow,
    PyTrueDiv,
    pretty,
    to_sympy,
)
from fxcache_core.guards.user_terms import (
    clause_in_user_terms,  # one notation: the symbol side first
)

_PLAIN_SYMBOL = re.compile(r"[a-z]+[0-9]+")


def _renamed(expr: sympy.Basic, names: Mapping[str, str]) -> sympy.Basic:
    subs = {s: sympy.Symbol(names[s.name], integer=True) for s in placeholder_symbols(expr)
            if s.name in names}
    return expr.xreplace(subs) if subs else expr


def _sstr(expr: sympy.Basic, names: Mapping[str, str]) -> str:
    return GuardStrPrinter(names).doprint(expr)


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
        return pretty(clause, dict(names or {}))
    if fmt not in ("pretty", "latex"):
        raise ValueError(f"unknown format {fmt!r} (plain, pretty, latex)")
    try:
        shown = display_expr(to_sympy(clause), names)
        return sympy.pretty(shown, use_unicode=True) if fmt == "pretty" else sympy.latex(shown)
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        return (pretty(clause, dict(names or {}))
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
    op = (REL_OPS.get(type(expr)) or getattr(expr, "py_symbol", None)
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
