"""The sympy forms of parsed guards (imported only when a sympy form is asked for).

:mod:`fxcache_core.guards.expr` parses and evaluates guards without sympy; this
module turns a validated clause tree into a structured sympy expression
(:func:`to_sympy`) and prints it back as Python (:class:`GuardStrPrinter`,
:func:`pretty`). Python-only operations become opaque ``_PyFunction``
subclasses (``PyFloorDiv``...) that never evaluate. Mirrors sympy's own
printer pattern (``_sympystr`` per class) and torch's
torch/utils/_sympy/functions.py; imports run one way (expr <- sympy_form), and
nothing here evaluates a guard: verdicts come from
:mod:`fxcache_core.guards.expr`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from typing import Any

import sympy
from sympy.printing.str import StrPrinter

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import Clause
from fxcache_core.guards.grammar import CMP_SYMBOLS, binop_chain, chain_key
from fxcache_core.reasons import Reason

# --------------------------------------------------------------------------
# Sympy forms: opaque functions that never evaluate and print as Python.
# --------------------------------------------------------------------------


class _PyFunction(sympy.Function):
    """Base of the opaque sympy functions used for Python-only operations.

    sympy's default ``Application.eval`` returns None, so these never rewrite
    their arguments: the structure stays exactly as parsed.
    """


def _print_operand(printer: Any, arg: sympy.Basic) -> str:
    """Print ``arg`` as an operand of a Python infix operator, in parentheses
    unless it is a symbol, a non-negative number or an opaque function (which
    prints as a call or parenthesizes itself)."""
    text = printer._print(arg)
    if isinstance(arg, (sympy.Symbol, _PyFunction)) or arg in (sympy.oo, sympy.nan):
        return text
    if isinstance(arg, sympy.Number) and not arg.is_negative:
        return text
    if isinstance(arg, sympy.logic.boolalg.BooleanAtom) or arg in (sympy.pi, sympy.E):
        return text
    return f"({text})"


def _infix_class(name: str, symbol: str) -> type[_PyFunction]:
    def _sympystr(self: Any, printer: Any) -> str:
        return "(" + f" {symbol} ".join(_print_operand(printer, a) for a in self.args) + ")"

    return type(name, (_PyFunction,), {"_sympystr": _sympystr, "py_symbol": symbol})


PyFloorDiv = _infix_class("PyFloorDiv", "//")
PyMod = _infix_class("PyMod", "%")
PyTrueDiv = _infix_class("PyTrueDiv", "/")
PyPow = _infix_class("PyPow", "**")
PyBitAnd = _infix_class("PyBitAnd", "&")
PyBitOr = _infix_class("PyBitOr", "|")
PyBitXor = _infix_class("PyBitXor", "^")
PyAnd = _infix_class("PyAnd", "and")
PyOr = _infix_class("PyOr", "or")
# Fallbacks when sympy refuses the native Add/Mul/relational.
PyAdd = _infix_class("PyAdd", "+")
PySub = _infix_class("PySub", "-")
PyMul = _infix_class("PyMul", "*")
_PY_CMP_CLASSES = {
    sym: _infix_class(f"PyCmp_{nm}", sym)
    for sym, nm in (
        ("<", "lt"),
        ("<=", "le"),
        (">", "gt"),
        (">=", "ge"),
        ("==", "eq"),
        ("!=", "ne"),
    )
}

_SYMPY_BINOP_CLASSES: dict[type[ast.operator], type[_PyFunction]] = {
    ast.Div: PyTrueDiv,
    ast.FloorDiv: PyFloorDiv,
    ast.Mod: PyMod,
    ast.Pow: PyPow,
    ast.BitAnd: PyBitAnd,
    ast.BitOr: PyBitOr,
    ast.BitXor: PyBitXor,
}


class PyNot(_PyFunction):
    """Python ``not x`` (returns a bool whatever x is)."""

    def _sympystr(self, printer: Any) -> str:
        return f"(not {_print_operand(printer, self.args[0])})"


class PyNeg(_PyFunction):
    """Python unary ``-x`` where sympy refuses ``Mul(-1, x)``."""

    def _sympystr(self, printer: Any) -> str:
        return f"(-{_print_operand(printer, self.args[0])})"


class PyIfExp(_PyFunction):
    """Python ``body if test else orelse``; args are ``(test, body, orelse)``."""

    def _sympystr(self, printer: Any) -> str:
        test, body, orelse = (_print_operand(printer, a) for a in self.args)
        return f"({body} if {test} else {orelse})"


class BoolToInt(_PyFunction):
    """A bool used as a number (Python bools are the ints 0 and 1)."""

    def _sympystr(self, printer: Any) -> str:
        return f"({printer._print(self.args[0])})"


@functools.cache
def _call_class(display: str) -> type[_PyFunction]:
    """Opaque sympy function printing as ``display(args...)``."""

    def _sympystr(self: Any, printer: Any) -> str:
        return f"{display}(" + ", ".join(printer._print(a) for a in self.args) + ")"

    name = "Py_" + display.replace(".", "_")
    return type(name, (_PyFunction,), {"_sympystr": _sympystr, "py_name": display})


def _placeholder_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, integer=True)


# --------------------------------------------------------------------------
# Sympy builder (runs on a validated tree, lazily, per clause).
# --------------------------------------------------------------------------


def _as_number(e: sympy.Basic) -> sympy.Basic:
    """Wrap a sympy Boolean used as a number in :class:`BoolToInt`."""
    if isinstance(e, sympy.logic.boolalg.Boolean) and not isinstance(e, sympy.Expr):
        return BoolToInt(e, evaluate=False)
    return e


_SYMPY_RELATIONALS = {
    ast.Lt: sympy.StrictLessThan,
    ast.LtE: sympy.LessThan,
    ast.Gt: sympy.StrictGreaterThan,
    ast.GtE: sympy.GreaterThan,
    ast.Eq: sympy.Equality,
    ast.NotEq: sympy.Unequality,
}


class SympyBuilder:
    """Builds the structured sympy form of a validated clause tree (see :func:`to_sympy`)."""

    def build(self, node: ast.AST) -> sympy.Basic:
        if isinstance(node, ast.Constant):
            v = node.value
            if type(v) is bool:
                return sympy.true if v else sympy.false
            if type(v) is int:
                return sympy.Integer(v)
            return sympy.Float(v)
        if isinstance(node, ast.Subscript):
            assert isinstance(node.slice, ast.Constant)
            return _placeholder_symbol(node.slice.value)
        if isinstance(node, ast.Attribute):
            return {
                "inf": sympy.oo,
                "nan": sympy.nan,
                "pi": sympy.pi,
                "e": sympy.E,
                "tau": sympy.Mul(2, sympy.pi, evaluate=False),
            }[node.attr]
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand)
            if isinstance(node.op, ast.Not):
                return PyNot(operand, evaluate=False)
            if isinstance(node.op, ast.UAdd):
                return operand
            if isinstance(operand, (sympy.Integer, sympy.Float)):
                return -operand
            return self._neg(operand)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.BoolOp):
            cls = PyAnd if isinstance(node.op, ast.And) else PyOr
            return cls(*(self.build(v) for v in node.values), evaluate=False)
        if isinstance(node, ast.Compare):
            operands = [self.build(node.left)] + [self.build(c) for c in node.comparators]
            rels = [
                self._relational(op, operands[i], operands[i + 1]) for i, op in enumerate(node.ops)
            ]
            return rels[0] if len(rels) == 1 else PyAnd(*rels, evaluate=False)
        if isinstance(node, ast.IfExp):
            return PyIfExp(
                self.build(node.test),
                self.build(node.body),
                self.build(node.orelse),
                evaluate=False,
            )
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                display = func.id
            else:
                assert isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                display = f"{func.value.id}.{func.attr}"
            return _call_class(display)(*(self.build(a) for a in node.args), evaluate=False)
        raise AssertionError(f"unvalidated node {type(node).__name__}")  # pragma: no cover

    def _neg(self, operand: sympy.Basic) -> sympy.Basic:
        try:
            return sympy.Mul(sympy.Integer(-1), _as_number(operand), evaluate=False)
        except Exception:  # noqa: BLE001 - sympy refuses some operands
            return PyNeg(operand, evaluate=False)

    def _relational(self, op: ast.cmpop, a: sympy.Basic, b: sympy.Basic) -> sympy.Basic:
        try:
            return _SYMPY_RELATIONALS[type(op)](_as_number(a), _as_number(b), evaluate=False)
        except Exception:  # noqa: BLE001
            return _PY_CMP_CLASSES[CMP_SYMBOLS[type(op)]](a, b, evaluate=False)

    def _binop(self, node: ast.BinOp) -> sympy.Basic:
        chain = binop_chain(node)
        key = chain_key(node)
        base = self.build(chain[0])
        rest = [(op, self.build(right)) for op, right, _ in chain[1:]]
        if key == "add":
            terms = [_as_number(base)]
            for op, r in rest:
                terms.append(_as_number(r) if isinstance(op, ast.Add) else self._neg(r))
            try:
                return sympy.Add(*terms, evaluate=False)
            except Exception:  # noqa: BLE001
                value = base
                for op, r in rest:
                    cls = PyAdd if isinstance(op, ast.Add) else PySub
                    value = cls(value, r, evaluate=False)
                return value
        if key == "mul":
            factors = [_as_number(base)] + [_as_number(r) for _, r in rest]
            try:
                return sympy.Mul(*factors, evaluate=False)
            except Exception:  # noqa: BLE001
                return PyMul(base, *(r for _, r in rest), evaluate=False)
        cls = _SYMPY_BINOP_CLASSES[type(node.op)]
        if key is not None:  # one bitwise operator, n-ary
            return cls(base, *(r for _, r in rest), evaluate=False)
        ((_, right),) = rest
        return cls(base, right, evaluate=False)


class GuardStrPrinter(StrPrinter):
    """``sstr`` keeping argument order, printing ``==``/``!=`` infix, renaming symbols."""

    def __init__(self, names: Mapping[str, str] | None = None) -> None:
        super().__init__({"order": "none"})
        self._names = dict(names or {})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return self._names.get(expr.name, expr.name)

    def _print_Relational(self, expr: Any) -> str:
        lhs, rhs = expr.args
        return f"{self._print(lhs)} {expr.rel_op} {self._print(rhs)}"


def to_sympy(clause: Clause) -> sympy.Basic:
    """The clause as a sympy expression over ``Symbol('tN', integer=True)``.

    Structure is kept: ``+``/``-``/``*`` are unevaluated ``Add``/``Mul``,
    comparisons unevaluated relationals (a chain becomes ``PyAnd`` of them),
    and everything whose Python meaning differs from sympy's (``//``, ``%``,
    ``/``, ``**``, bitwise ops, ``and``/``or``/``not``, ``x if c else y``,
    every call) an opaque ``_PyFunction`` subclass such as ``PyFloorDiv``
    or ``Py_math_floor`` that never evaluates and prints as Python.  A bool
    used as a number is wrapped in ``BoolToInt``.  Cached per clause.

    Raises GuardParseError if sympy recurses too deep on the tree.
    """
    cached = clause._cache.get("sympy")
    if cached is None:
        try:
            cached = SympyBuilder().build(clause._node)
        except RecursionError:
            raise GuardParseError(Reason(
                f"clause {clause.index} is too deep to build a sympy form", "too-deep"
            )) from None
        clause._cache["sympy"] = cached
    return cached


def pretty(clause: Clause, symbol_names: Mapping[str, str] | None = None) -> str:
    """``sstr`` of :func:`to_sympy` with placeholders renamed (``{'t0': 's77'}``).

    Argument order is the source order; ``==``/``!=`` print infix.
    """
    return GuardStrPrinter(symbol_names).doprint(to_sympy(clause))
