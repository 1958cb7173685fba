"""Compile an accepted guards tree into Python closures that compute it as ``eval`` would.

:class:`Compiler` walks a tree :func:`ast.parse` made, checks every node
against the whitelist of :mod:`fxcache_core.guards.grammar` (anything else
raises :class:`~fxcache_core.errors.GuardParseError` naming the piece and its
column) and returns a closure per node that applies the same Python operator
or function, in the same order, with the same short-circuits: floor ``//`` and
``%``, ``and``/``or`` returning an operand, chained comparisons evaluating each
middle operand once, ``x if c else y`` evaluating one branch. Constant
sub-expressions are computed once, here (:meth:`Compiler.fold`).

Mirrors ``eval`` in ``ShapeEnv.evaluate_guards_expression``
(torch/fx/experimental/symbolic_shapes.py). Never calls ``eval``/``exec`` and
never imports torch or sympy.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.grammar import (
    BINOPS,
    BUILTIN_CALLS,
    CMPOPS,
    GLOBAL_CALLS,
    MATH_CALLS,
    MATH_CONSTANTS,
    PLACEHOLDER_RE,
    TORCH_CALLS,
    UNBOUND_PRINTED_NAMES,
    UNSUPPORTED_BINOP_SYMBOLS,
    UNSUPPORTED_CMP_SYMBOLS,
    binop_chain,
)
from fxcache_core.guards.runtime import MAX_INT_BITS, TOO_BIG, MissingPlaceholder, TooBig
from fxcache_core.reasons import Reason

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

Env = Mapping[str, Any]
Fn = Callable[[Env], Any]

_NO_VALUES: dict[str, Any] = {}


def _placeholder_fn(name: str) -> Fn:
    def lookup(env: Env) -> Any:
        try:
            return env[name]
        except KeyError:
            raise MissingPlaceholder(name) from None

    return lookup


class Compiler:
    """Validates an ``ast`` tree against the whitelist and compiles it to closures."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.multiline = "\n" in source or "\r" in source
        # Lines as the tokenizer splits them (\r\n, \r, \n), UTF-8 encoded once:
        # ast offsets are byte offsets, and ast.get_source_segment re-splits the
        # whole source on every call (quadratic over thousands of clauses).
        self._lines = _LINE_RE.findall(source) if self.multiline else [source]
        self._encoded = [line.encode("utf-8", "surrogatepass") for line in self._lines]
        self.placeholders: set[str] = set()
        self.placeholder_refs = 0  # placeholders compiled so far: tells constant sub-trees

    def segment(self, node: ast.AST) -> str | None:
        """Source text of ``node``, like ``ast.get_source_segment`` (unpadded)."""
        try:
            first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
            if last is None or end is None:
                return None
            if first == last:
                return self._encoded[first][start:end].decode("utf-8")
            parts = [self._encoded[first][start:]]
            parts.extend(self._encoded[first + 1 : last])
            parts.append(self._encoded[last][:end])
            return b"".join(parts).decode("utf-8")
        except (AttributeError, IndexError, TypeError, UnicodeDecodeError):
            return None

    # -- error reporting ---------------------------------------------------

    def where(self, node: ast.AST) -> str:
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        try:
            line = self._lines[lineno - 1]
            col = len(line.encode("utf-8")[:col].decode("utf-8", errors="replace"))
        except (IndexError, UnicodeError):
            pass
        return f"line {lineno} col {col}" if self.multiline else f"col {col}"

    def snippet(self, node: ast.AST, limit: int = 60) -> str:
        text = self.segment(node)
        if text is None:
            try:
                text = ast.unparse(node)
            except Exception:  # noqa: BLE001
                text = type(node).__name__
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def fail(self, what: str, node: ast.AST, code: str = "unsupported-syntax") -> NoReturn:
        """Raise GuardParseError: ``what`` at the node's column, as a Reason with ``code``."""
        raise GuardParseError(Reason(f"{what} at {self.where(node)}", code))

    # -- compilation ---------------------------------------------------------

    def compile(self, node: ast.AST) -> Fn:
        """The closure computing ``node``; a constant sub-expression (no
        placeholder under it) computed once, here (see :meth:`fold`)."""
        refs = self.placeholder_refs
        fn = self._compile(node)
        if self.placeholder_refs == refs and not isinstance(node, (ast.Constant, ast.Attribute)):
            return self.fold(node, fn)
        return fn

    def fold(self, node: ast.AST, fn: Fn) -> Fn:
        """``fn`` of a constant sub-expression, computed now with the bounded
        operators: a closure returning the value, or ``fn`` itself when computing
        it raised (it raises again at evaluation, where ``eval`` would).

        Raises:
            GuardParseError: it needs an int over :data:`MAX_INT_BITS` bits.
        """
        try:
            value = fn(_NO_VALUES)
        except TooBig:
            self.fail(f"constant {self.snippet(node)!r} {TOO_BIG}", node, "int-over-bound")
        except Exception:  # noqa: BLE001 - raised again at evaluation, as by eval
            return fn
        return lambda env: value

    def _compile(self, node: ast.AST) -> Fn:
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Subscript):
            name = self.placeholder_name(node)
            self.placeholders.add(name)
            self.placeholder_refs += 1
            return _placeholder_fn(name)
        if isinstance(node, ast.Attribute):
            value = self.math_constant(node)
            return lambda env: value
        if isinstance(node, ast.Name):
            self.fail(f"unsupported name {node.id!r}", node)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.IfExp):
            test = self.compile(node.test)
            body = self.compile(node.body)
            orelse = self.compile(node.orelse)
            return lambda env: body(env) if test(env) else orelse(env)
        if isinstance(node, ast.Call):
            return self._call(node)
        self.fail(f"unsupported syntax {type(node).__name__} {self.snippet(node)!r}", node)

    def _constant(self, node: ast.Constant) -> Fn:
        value = node.value
        if type(value) not in (bool, int, float):
            shown = repr(value)
            if len(shown) > 40:
                shown = shown[:37] + "..."
            self.fail(f"unsupported constant {shown} ({type(value).__name__})", node)
        if type(value) is int and value.bit_length() > MAX_INT_BITS:
            self.fail(f"integer literal of {value.bit_length()} bits is over fxcache's bound of "
                      f"MAX_INT_BITS={MAX_INT_BITS} bits", node, "int-over-bound")
        return lambda env: value

    def placeholder_name(self, node: ast.Subscript) -> str:
        """The ``tN`` of ``L['tN']``; anything else is rejected."""
        key = node.slice
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "L"
            and isinstance(key, ast.Constant)
            and type(key.value) is str
            and PLACEHOLDER_RE.match(key.value)
        ):
            return key.value
        self.fail(f"unsupported subscript {self.snippet(node)!r} (only L['tN'] is allowed)", node)

    def math_constant(self, node: ast.Attribute) -> float:
        if isinstance(node.value, ast.Name) and node.value.id == "math":
            if node.attr in MATH_CONSTANTS:
                return MATH_CONSTANTS[node.attr]
        self.fail(f"unsupported attribute {self.snippet(node)!r}", node)

    def _unary(self, node: ast.UnaryOp) -> Fn:
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda env: -operand(env)
        if isinstance(node.op, ast.UAdd):
            return lambda env: +operand(env)
        if isinstance(node.op, ast.Not):
            return lambda env: not operand(env)
        self.fail(f"unsupported operator '~' in {self.snippet(node)!r}", node)

    def _binop(self, node: ast.BinOp) -> Fn:
        chain = binop_chain(node)
        for link in chain[1:]:
            if type(link[0]) not in BINOPS:
                symbol = UNSUPPORTED_BINOP_SYMBOLS.get(type(link[0]), type(link[0]).__name__)
                self.fail(f"unsupported operator {symbol!r} in {self.snippet(link[2])!r}", link[2])
        refs = self.placeholder_refs
        base = self.compile(chain[0])
        steps = []
        constant = self.placeholder_refs == refs
        for op, right, link in chain[1:]:
            fn, rhs = BINOPS[type(op)], self.compile(right)
            if constant and self.placeholder_refs == refs:
                # A constant prefix of the run is a constant sub-expression (a
                # node of the tree): computed now, unless computing it raises.
                def combined(env: Env, fn: Callable[[Any, Any], Any] = fn, left: Fn = base,
                             rhs: Fn = rhs) -> Any:
                    return fn(left(env), rhs(env))

                base = self.fold(link, combined)
                constant = base is not combined  # raised: the rest runs at evaluation
                continue
            constant = False
            steps.append((fn, rhs))
        if not steps:
            return base
        if len(steps) == 1:
            ((fn, right),) = steps
            return lambda env: fn(base(env), right(env))

        def run(env: Env) -> Any:
            value = base(env)
            for fn, right in steps:
                value = fn(value, right(env))
            return value

        return run

    def _boolop(self, node: ast.BoolOp) -> Fn:
        values = [self.compile(v) for v in node.values]
        head, last = values[:-1], values[-1]
        if isinstance(node.op, ast.And):

            def run_and(env: Env) -> Any:
                for v in head:
                    x = v(env)
                    if not x:
                        return x
                return last(env)

            return run_and

        def run_or(env: Env) -> Any:
            for v in head:
                x = v(env)
                if x:
                    return x
            return last(env)

        return run_or

    def _compare(self, node: ast.Compare) -> Fn:
        for op, comp in zip(node.ops, node.comparators, strict=True):
            if type(op) not in CMPOPS:
                symbol = UNSUPPORTED_CMP_SYMBOLS.get(type(op), type(op).__name__)
                self.fail(f"unsupported comparison {symbol!r} in {self.snippet(node)!r}", comp)
        left = self.compile(node.left)
        pairs = [
            (CMPOPS[type(op)], self.compile(c))
            for op, c in zip(node.ops, node.comparators, strict=True)
        ]
        if len(pairs) == 1:
            ((fn, right),) = pairs
            return lambda env: fn(left(env), right(env))

        def run(env: Env) -> Any:
            a = left(env)
            result: Any = True
            for fn, right in pairs:
                b = right(env)
                result = fn(a, b)
                if not result:
                    return result
                a = b
            return result

        return run

    def call_target(self, node: ast.Call) -> tuple[str, Callable[..., Any] | None, int, int | None]:
        """Resolve ``node.func`` to ``(display name, function, min, max)``.

        The function is None for :data:`UNBOUND_PRINTED_NAMES`.
        """
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in BUILTIN_CALLS:
                return (func.id, *BUILTIN_CALLS[func.id])
            if func.id in GLOBAL_CALLS:
                return (func.id, *GLOBAL_CALLS[func.id])
            if func.id in UNBOUND_PRINTED_NAMES:
                return (func.id, None, 0, None)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            table = {"math": MATH_CALLS, "torch": TORCH_CALLS}.get(func.value.id)
            if table is not None and func.attr in table:
                return (f"{func.value.id}.{func.attr}", *table[func.attr])
        self.fail(f"unsupported call {self.snippet(func)!r}", node)

    def _call(self, node: ast.Call) -> Fn:
        display, fn, lo, hi = self.call_target(node)
        if node.keywords:
            kw = node.keywords[0]
            what = f"keyword argument {kw.arg!r}" if kw.arg else "'**' argument"
            self.fail(f"unsupported {what} in call {display!r}", kw)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail(f"unsupported starred argument in call {display!r}", arg)
        n = len(node.args)
        if n < lo or (hi is not None and n > hi):
            if lo == hi:
                want = f"{lo} argument" + ("" if lo == 1 else "s")
            elif hi is None:
                want = f"{lo} or more arguments"
            else:
                want = f"{lo} to {hi} arguments"
            self.fail(f"call {display!r} takes {want}, got {n}", node, "wrong-argument-count")
        args = [self.compile(a) for a in node.args]
        if fn is None:
            message = f"name {display!r} is not defined"

            def unbound(env: Env) -> Any:
                # Python looks the name up before evaluating any argument.
                raise NameError(message)

            return unbound
        f = fn
        if n == 1:
            (a0,) = args
            return lambda env: f(a0(env))
        if n == 2:
            a0, a1 = args
            return lambda env: f(a0(env), a1(env))
        return lambda env: f(*[a(env) for a in args])
