"""Parse and evaluate Inductor's ``guards_expr`` strings without executing them.

Every FX-graph and AOTAutograd cache entry stores a ``guards_expr``: a Python
expression over ``L['t0']``, ``L['t1']``, ... (the backed SymInt graph inputs in
order), made by ``ShapeEnv.produce_guards_expression`` as the guards printed by
``ShapeGuardPythonPrinter`` joined with ``" and "``.  Torch decides a cache hit
by evaluating the string as Python with ``SYMPY_INTERP`` as globals and
``{"L": {"t0": v0, ...}}`` as locals
(``ShapeEnv.evaluate_guards_expression`` in
``torch/fx/experimental/symbolic_shapes.py``; callers in
``torch/_inductor/codecache.py`` take ``bool()`` of the result).

This module never executes the string.  It parses it with :func:`ast.parse`,
accepts only a whitelist of node kinds and names, and compiles each accepted
tree into Python closures that apply the very same Python operators and
functions the interpreter would, in the same order, so the result is exactly
what ``eval`` would produce: floor ``//`` and ``%``, true ``/`` (float, with
``OverflowError`` for huge ints), ``**`` (``int ** -int`` is a float,
``0 ** -1`` raises), arbitrary-precision ints, short-circuit ``and``/``or``
returning an operand, chained comparisons evaluating each middle operand once,
``x if c else y`` evaluating one branch, bool being an int.

Grammar (everything ``PythonPrinter`` / ``ShapeGuardPythonPrinter`` in
``torch/utils/_sympy/printers.py`` and ``symbolic_shapes.py`` can print):

* ``L['tN']`` (N a non-negative decimal int without leading zeros); int, float,
  ``True``/``False`` literals; ``math.inf``, ``math.nan``, ``math.pi``,
  ``math.e``, ``math.tau``;
* unary ``-``, ``+``, ``not``; binary ``+ - * / // % ** & | ^``; comparisons
  ``< <= > >= == !=`` including chains; ``and``, ``or``; ``x if c else y``;
* calls of ``max``/``min`` (2+ args), ``abs``, ``round`` (1 or 2 args),
  ``int``, ``float``, ``bool`` (1 arg); ``math.floor ceil trunc sqrt exp log
  (1 or 2 args) log2 log10 sin cos tan asin acos atan sinh cosh tanh asinh
  acosh atanh fabs`` and ``math.pow`` (2 args); ``torch.sym_float``,
  ``torch.sym_sqrt`` and ``torch._sym_<fn>`` for the eleven functions of
  ``_get_sym_math_fn`` in ``torch/__init__.py`` (``sqrt cos cosh sin sinh tan
  tanh asin acos atan log2``), which on plain numbers are ``float`` and
  ``math.<fn>``; ``IsNonOverlappingAndDenseIndicator(*sizes, *strides)`` and
  ``cast_symbool_to_symint_guardless(x)`` from ``SYMPY_INTERP``;
* calls of names the printer falls back to for torch sympy functions it has no
  Python rule for, which are *not* bound in ``SYMPY_INTERP``:
  :data:`UNBOUND_PRINTED_NAMES` (``Where``, ``OpaqueUnaryFn_exp``,
  ``OpaqueUnaryFn_log``, ``OpaqueUnaryFn_asinh``, ``IntInfinity``,
  ``NegativeIntInfinity``).  They are accepted so that a stored string stays
  readable, and evaluate exactly as torch's ``eval`` does: ``NameError`` when
  (and only when) the call is reached.

What the printer emits, found by reading ``printers.py`` and by printing every
function of ``torch/utils/_sympy/functions.py`` with ``ShapeGuardPythonPrinter``:
``FloorDiv``/``CleanDiv`` -> ``a // b``; ``CeilDiv`` -> ``((-1) + a + b) // b``;
``PythonMod``/``Mod`` -> ``a % b``; ``ModularIndexing`` -> ``((x // d) % m)``;
``IntTrueDiv`` -> ``a / b``; ``FloatTrueDiv`` -> ``((a) / (b))``; ``ToFloat``
-> ``torch.sym_float(x)``; ``PowByNatural``/``FloatPow`` -> ``a ** b``;
``Pow(x, n)`` -> ``x*x*...`` (n >= 0 only); ``LShift``/``RShift`` ->
``a*(2 ** b)`` / ``a // (2 ** b)``; ``FloorToInt``/``floor`` -> ``math.floor``;
``CeilToInt``/``ceiling`` -> ``math.ceil``; ``TruncToInt`` -> ``math.trunc``;
``RoundToInt``/``RoundDecimal`` -> ``round(x)``/``round(x, n)``; ``Abs`` ->
``abs``; ``Max``/``Min`` -> ``max``/``min``; ``OpaqueUnaryFn_sqrt`` ->
``torch._sym_sqrt``; the other ``OpaqueUnaryFn_*`` -> ``math.<fn>`` except
``exp``, ``log``, ``asinh`` (printed bare); ``Where`` -> ``Where(c, a, b)``;
bitwise fns -> ``& | ^``; ``Piecewise`` -> nested ``(a if c else b)``; ``Not``
-> ``not (x)``; ``And``/``Or``; ``oo``/``-oo``/``nan`` -> ``math.inf``/
``-math.inf``/``math.nan``; ``int_oo`` -> ``IntInfinity()``; ``Rational`` ->
``1/3``; negative integers -> ``(-1)``; floats -> ``str(float)`` (e.g.
``1e+300``).  ``TruncToFloat`` and negative ``Pow`` exponents make the printer
raise, so they never reach a cache.  The printer never emits ``math.pow``,
``torch.sym_ite``/``sym_max``/``sym_min``, ``operator.*``, ``<<``/``>>`` or
keyword arguments; ``int``/``float``/``bool``/``math.pow`` and the extra
``math``/``torch._sym_*`` functions are accepted anyway (same meaning under
``eval``, harmless).

Anything else (another name, attribute, subscript or call, a keyword or starred
argument, a string literal, ``is``/``in``, ``~``, ``<<``/``>>``, ``@``, lambda,
comprehension, walrus, f-string, ...) raises
:class:`~fxcache_core.errors.GuardParseError` naming the piece and its column.
A call with the wrong number of arguments, which Python would only reject at
run time with ``TypeError``, is rejected at parse time as well; the printer
never emits one.

Limits, each raising ``GuardParseError``: :data:`MAX_GUARD_CHARS` characters,
:data:`MAX_NODES` expression nodes, :data:`MAX_DEPTH` nesting levels (a run
of left-nested ``+``/``-``, of ``*``, or of one bitwise operator, as in
``a + b - c + d``, counts as one level, since it is evaluated by a loop).
``SyntaxError``, ``RecursionError``, ``MemoryError``, ``ValueError`` from
:func:`ast.parse` become ``GuardParseError`` too.

One deliberate deviation from ``eval``: integers are bounded to
:data:`MAX_INT_BITS` bits (about 1,233 decimal digits), so that no clause costs
more than microseconds and every value stays printable (Python refuses to
print an int of more than 4,300 digits). Torch's guards never hold such
numbers: sizes are int64, and the printer writes products of a few of them.

* An int literal over the bound is refused at parse time (a hex literal
  dodges Python's own 4,300-digit limit on decimal literals).
* Every constant sub-expression (no ``L['tN']`` under it) is computed once, at
  parse time, with the bounded operators below; one that needs an int over the
  bound makes the whole string unparsable (``GuardParseError`` naming the
  bound), even in a branch ``eval`` would not take. A constant sub-expression
  that raises anything else (``1 // 0``, ``NameError`` from ``Where(...)``) is
  left as it is and raises at evaluation, exactly where ``eval`` would.
* At evaluation, an ``int * int`` or ``int ** int`` whose result would exceed
  the bound, and the running product of ``IsNonOverlappingAndDenseIndicator``,
  are not computed: the clause is ``"unknown"`` (undecided), with the reason in
  :attr:`ClauseResult.error`, never a guess. ``+`` and ``-`` need no bound: a
  sum of at most :data:`MAX_NODES` terms exceeds the largest term by at most
  17 bits. ``//``, ``%``, ``/``, comparisons and bitwise operators never grow
  their operands, so with operands of at most ~4,100 bits each costs a few
  microseconds.

Size: :data:`MAX_GUARD_CHARS` bounds what :func:`ast.parse` is given, so the
worst string of that length costs about half a second and 80 MB (``ast``
nodes cost ~500 bytes each) to parse, fold and refuse.
"""

from __future__ import annotations

import ast
import functools
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from fxcache_core.errors import GuardParseError

__all__ = [
    "MAX_DEPTH",
    "MAX_GUARD_CHARS",
    "MAX_INT_BITS",
    "MAX_NODES",
    "MAX_POW_BITS",
    "UNBOUND_PRINTED_NAMES",
    "Clause",
    "ClauseResult",
    "GuardsExpr",
    "GuardsVerdict",
    "parse_guards",
]

#: Longest guards string accepted, in characters.  Real guards are a few KB
#: (the longest of the shared corpus: 804 characters); Python itself cannot
#: compile sums longer than a few thousand terms.  At this length the worst
#: string costs about half a second and 80 MB to parse and refuse.
MAX_GUARD_CHARS: int = 128 * 1024
#: Deepest nesting accepted (see the module docstring for how it is counted).
#: Real guards nest fewer than 15 levels; closures, the sympy builder and
#: sympy's printer recurse a few frames per level and must stay well inside
#: Python's default recursion limit of 1000.
MAX_DEPTH: int = 64
#: Most AST nodes accepted in one guards string (``L['tN']`` is three).
MAX_NODES: int = 100_000
#: Largest int, in bits, a literal may be and ``*``/``**`` may produce (about
#: 1,233 decimal digits; see the module docstring).
MAX_INT_BITS: int = 1 << 12
#: The bound's former name (it once applied to ``**`` only).
MAX_POW_BITS: int = MAX_INT_BITS

#: Names ``ShapeGuardPythonPrinter`` prints as calls for torch sympy functions
#: it has no Python rule for (``Where``, three ``OpaqueUnaryFn_*``, and the
#: ``int_oo`` constants as ``IntInfinity()``), which ``SYMPY_INTERP`` does not
#: bind: evaluating such a call raises ``NameError``, as in torch.
UNBOUND_PRINTED_NAMES: frozenset[str] = frozenset(
    {
        "Where",
        "OpaqueUnaryFn_exp",
        "OpaqueUnaryFn_log",
        "OpaqueUnaryFn_asinh",
        "IntInfinity",
        "NegativeIntInfinity",
    }
)

_PLACEHOLDER_RE = re.compile(r"t(?:0|[1-9][0-9]*)\Z")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")

Env = Mapping[str, Any]
_Fn = Callable[[Env], Any]


class _MissingPlaceholder(Exception):
    """Internal: a placeholder needed on the evaluated path has no value."""


class _TooBig(Exception):
    """Internal: an int result would exceed MAX_INT_BITS; fxcache does not compute it
    (not an ArithmeticError: nothing may mistake it for what Python would raise)."""


_TOO_BIG = (f"needs an integer over {MAX_INT_BITS} bits, which fxcache does not compute "
            "(MAX_INT_BITS; torch's guards never hold such numbers)")


# --------------------------------------------------------------------------
# Runtime helpers: same results and exceptions as the functions torch binds.
# --------------------------------------------------------------------------


def _pow(base: Any, exp: Any) -> Any:
    """Python ``base ** exp``, refusing int results over MAX_INT_BITS bits (:class:`_TooBig`)."""
    if (
        isinstance(base, int)
        and isinstance(exp, int)
        and exp > 0
        and (base > 1 or base < -1)
        and (exp > MAX_INT_BITS or exp * math.log2(abs(base)) > MAX_INT_BITS + 1)
    ):
        raise _TooBig
    return base**exp


def _round(number: Any, *ndigits: Any) -> Any:
    """Python ``round``; short-cuts ``round(int, -k)`` for huge k (exactly 0).

    ``int.__round__`` with a negative ``ndigits`` computes ``10 ** k``; when
    ``|number| < 10**k / 2`` the result is the int 0 whatever k is, which is
    guaranteed once ``k >= bit_length // 3 + 2``.
    """
    if ndigits:
        nd = ndigits[0]
        if (
            isinstance(number, int)
            and isinstance(nd, int)
            and nd < -10_000
            and -nd >= abs(number).bit_length() // 3 + 2
        ):
            return 0
        return round(number, nd)
    return round(number)


def _is_non_overlapping_and_dense_indicator(*args: Any) -> int:
    """``_eval_is_non_overlapping_and_dense_flat`` of ``symbolic_shapes.py``.

    ``args`` are ``sizes + strides`` flattened; with an odd count the extra
    value goes to the strides (``zip`` drops it), as in torch.  Returns 1 or 0.
    """
    dim = len(args) // 2
    sizes = list(args[:dim])
    strides = list(args[dim:])
    # _eval_is_non_overlapping_and_dense
    result: Any
    if len(sizes) == 1:
        result = strides[0] == 1 or sizes[0] < 2
    else:
        lengths_and_strides = sorted(zip(sizes, strides, strict=False), key=operator.itemgetter(1))
        expected_stride = 1
        result = True
        for length, stride in lengths_and_strides:
            if length == 1:
                continue
            if stride != expected_stride:
                result = False
                break
            expected_stride = _mul(expected_stride, length)
    # eval_is_non_overlapping_and_dense: int(guard_bool(...))
    if type(result) is not bool:
        raise AssertionError(f"Expected bool, got {result}")
    return int(result)


def _cast_symbool_to_symint_guardless(symbool: Any) -> int:
    """``cast_symbool_to_symint_guardless`` of ``symbolic_shapes.py`` on plain values.

    A bool maps to 1/0; anything else reaches ``symbool.node`` in torch and
    raises ``AttributeError``.
    """
    if isinstance(symbool, bool):
        return 1 if symbool else 0
    raise AttributeError(f"'{type(symbool).__name__}' object has no attribute 'node'")


def _sym_float(a: Any) -> float:
    """``torch.sym_float`` on a plain number: ``builtins.float(a)``."""
    return float(a)


# name -> (function, min args, max args or None)
_CallTable = dict[str, tuple[Callable[..., Any], int, "int | None"]]

_BUILTIN_CALLS: _CallTable = {
    "max": (max, 2, None),
    "min": (min, 2, None),
    "abs": (abs, 1, 1),
    "round": (_round, 1, 2),
    "int": (int, 1, 1),
    "float": (float, 1, 1),
    "bool": (bool, 1, 1),
}
_GLOBAL_CALLS: _CallTable = {
    "IsNonOverlappingAndDenseIndicator": (_is_non_overlapping_and_dense_indicator, 0, None),
    "cast_symbool_to_symint_guardless": (_cast_symbool_to_symint_guardless, 1, 1),
}
_MATH_UNARY = (
    "floor ceil trunc sqrt exp log2 log10 sin cos tan asin acos atan "
    "sinh cosh tanh asinh acosh atanh fabs"
).split()
_MATH_CALLS: _CallTable = {name: (getattr(math, name), 1, 1) for name in _MATH_UNARY}
_MATH_CALLS["log"] = (math.log, 1, 2)
_MATH_CALLS["pow"] = (math.pow, 2, 2)
_TORCH_SYM_MATH = "sqrt cos cosh sin sinh tan tanh asin acos atan log2".split()
_TORCH_CALLS: _CallTable = {f"_sym_{name}": (getattr(math, name), 1, 1) for name in _TORCH_SYM_MATH}
_TORCH_CALLS["sym_sqrt"] = (math.sqrt, 1, 1)
_TORCH_CALLS["sym_float"] = (_sym_float, 1, 1)

_MATH_CONSTANTS: dict[str, float] = {
    "inf": math.inf,
    "nan": math.nan,
    "pi": math.pi,
    "e": math.e,
    "tau": math.tau,
}

def _mul(a: Any, b: Any) -> Any:
    """Python ``a * b``, refusing int products over MAX_INT_BITS bits (:class:`_TooBig`).

    Without this bound a short string multiplying big numbers would cost
    quadratic time and unbounded memory.
    """
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and a.bit_length() + b.bit_length() - 1 > MAX_INT_BITS
    ):
        raise _TooBig
    return a * b


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_CMP_SYMBOLS: dict[type[ast.cmpop], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
_UNSUPPORTED_BINOP_SYMBOLS = {ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}
_UNSUPPORTED_CMP_SYMBOLS = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
# Left-nested runs of these operators are flattened into one loop (one level).
_CHAIN_KEY: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "add",
    ast.Mult: "mul",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}


def _chain_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.BinOp):
        return _CHAIN_KEY.get(type(node.op))
    return None


# --------------------------------------------------------------------------
# The parser / compiler.
# --------------------------------------------------------------------------


def _placeholder_key(name: str) -> int:
    return int(name[1:])


class _Compiler:
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

    def fail(self, what: str, node: ast.AST) -> NoReturn:
        raise GuardParseError(f"{what} at {self.where(node)}")

    # -- compilation ---------------------------------------------------------

    def compile(self, node: ast.AST) -> _Fn:
        """The closure computing ``node``; a constant sub-expression (no
        placeholder under it) computed once, here (see :meth:`fold`)."""
        refs = self.placeholder_refs
        fn = self._compile(node)
        if self.placeholder_refs == refs and not isinstance(node, (ast.Constant, ast.Attribute)):
            return self.fold(node, fn)
        return fn

    def fold(self, node: ast.AST, fn: _Fn) -> _Fn:
        """``fn`` of a constant sub-expression, computed now with the bounded
        operators: a closure returning the value, or ``fn`` itself when computing
        it raised (it raises again at evaluation, where ``eval`` would).

        Raises:
            GuardParseError: it needs an int over :data:`MAX_INT_BITS` bits.
        """
        try:
            value = fn(_NO_VALUES)
        except _TooBig:
            self.fail(f"constant {self.snippet(node)!r} {_TOO_BIG}", node)
        except Exception:  # noqa: BLE001 - raised again at evaluation, as by eval
            return fn
        return lambda env: value

    def _compile(self, node: ast.AST) -> _Fn:
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

    def _constant(self, node: ast.Constant) -> _Fn:
        value = node.value
        if type(value) not in (bool, int, float):
            shown = repr(value)
            if len(shown) > 40:
                shown = shown[:37] + "..."
            self.fail(f"unsupported constant {shown} ({type(value).__name__})", node)
        if type(value) is int and value.bit_length() > MAX_INT_BITS:
            self.fail(f"integer literal of {value.bit_length()} bits is over fxcache's bound of "
                      f"MAX_INT_BITS={MAX_INT_BITS} bits", node)
        return lambda env: value

    def placeholder_name(self, node: ast.Subscript) -> str:
        """The ``tN`` of ``L['tN']``; anything else is rejected."""
        key = node.slice
        if (
            isinstance(node.value, ast.Name)
            and node.value.id == "L"
            and isinstance(key, ast.Constant)
            and type(key.value) is str
            and _PLACEHOLDER_RE.match(key.value)
        ):
            return key.value
        self.fail(f"unsupported subscript {self.snippet(node)!r} (only L['tN'] is allowed)", node)

    def math_constant(self, node: ast.Attribute) -> float:
        if isinstance(node.value, ast.Name) and node.value.id == "math":
            if node.attr in _MATH_CONSTANTS:
                return _MATH_CONSTANTS[node.attr]
        self.fail(f"unsupported attribute {self.snippet(node)!r}", node)

    def _unary(self, node: ast.UnaryOp) -> _Fn:
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.USub):
            return lambda env: -operand(env)
        if isinstance(node.op, ast.UAdd):
            return lambda env: +operand(env)
        if isinstance(node.op, ast.Not):
            return lambda env: not operand(env)
        self.fail(f"unsupported operator '~' in {self.snippet(node)!r}", node)

    def _binop(self, node: ast.BinOp) -> _Fn:
        chain = binop_chain(node)
        for link in chain[1:]:
            if type(link[0]) not in _BINOPS:
                symbol = _UNSUPPORTED_BINOP_SYMBOLS.get(type(link[0]), type(link[0]).__name__)
                self.fail(f"unsupported operator {symbol!r} in {self.snippet(link[2])!r}", link[2])
        refs = self.placeholder_refs
        base = self.compile(chain[0])
        steps = []
        constant = self.placeholder_refs == refs
        for op, right, link in chain[1:]:
            fn, rhs = _BINOPS[type(op)], self.compile(right)
            if constant and self.placeholder_refs == refs:
                # A constant prefix of the run is a constant sub-expression (a
                # node of the tree): computed now, unless computing it raises.
                def combined(env: Env, fn: Callable[[Any, Any], Any] = fn, left: _Fn = base,
                             rhs: _Fn = rhs) -> Any:
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

    def _boolop(self, node: ast.BoolOp) -> _Fn:
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

    def _compare(self, node: ast.Compare) -> _Fn:
        for op, comp in zip(node.ops, node.comparators, strict=True):
            if type(op) not in _CMPOPS:
                symbol = _UNSUPPORTED_CMP_SYMBOLS.get(type(op), type(op).__name__)
                self.fail(f"unsupported comparison {symbol!r} in {self.snippet(node)!r}", comp)
        left = self.compile(node.left)
        pairs = [
            (_CMPOPS[type(op)], self.compile(c))
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
            if func.id in _BUILTIN_CALLS:
                return (func.id, *_BUILTIN_CALLS[func.id])
            if func.id in _GLOBAL_CALLS:
                return (func.id, *_GLOBAL_CALLS[func.id])
            if func.id in UNBOUND_PRINTED_NAMES:
                return (func.id, None, 0, None)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            table = {"math": _MATH_CALLS, "torch": _TORCH_CALLS}.get(func.value.id)
            if table is not None and func.attr in table:
                return (f"{func.value.id}.{func.attr}", *table[func.attr])
        self.fail(f"unsupported call {self.snippet(func)!r}", node)

    def _call(self, node: ast.Call) -> _Fn:
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
            self.fail(f"call {display!r} takes {want}, got {n}", node)
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


def binop_chain(node: ast.BinOp) -> list[Any]:
    """Flatten a left-nested run of one chain class into ``[base, (op, right, node)...]``.

    ``a + b - c`` gives ``[a, (Add, b, ...), (Sub, c, ...)]``; operators without a
    chain class give a run of length one.
    """
    key = _chain_key(node)
    stack = [node]
    cur: ast.AST = node.left
    while key is not None and _chain_key(cur) == key:
        assert isinstance(cur, ast.BinOp)
        stack.append(cur)
        cur = cur.left
    out: list[Any] = [cur]
    for b in reversed(stack):
        out.append((b.op, b.right, b))
    return out


_NO_VALUES: dict[str, Any] = {}


def _placeholder_fn(name: str) -> _Fn:
    def lookup(env: Env) -> Any:
        try:
            return env[name]
        except KeyError:
            raise _MissingPlaceholder(name) from None

    return lookup


def _check_limits(tree: ast.Expression) -> None:
    """Count nodes and effective depth iteratively (no recursion)."""
    stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
    count = 0
    skip = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise GuardParseError(f"guards expression has more than MAX_NODES={MAX_NODES} nodes")
        if depth > MAX_DEPTH:
            raise GuardParseError(
                f"guards expression nests deeper than MAX_DEPTH={MAX_DEPTH} levels"
            )
        key = _chain_key(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, skip):
                continue
            same = (
                key is not None
                and child is getattr(node, "left", None)
                and _chain_key(child) == key
            )
            stack.append((child, depth if same else depth + 1))


# --------------------------------------------------------------------------
# Public data types.
# --------------------------------------------------------------------------


def _format_error(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(frozen=True)
class Clause:
    """One operand of the top-level ``and`` of a guards expression.

    ``index`` is its 0-based position, ``text`` its source text (a slice of the
    stored string), ``placeholders`` the ``tN`` names it reads, sorted by N.
    Build with :func:`parse_guards`; the private fields hold the parsed tree and
    its compiled evaluator.
    """

    index: int
    text: str
    placeholders: tuple[str, ...]
    _node: ast.expr = field(repr=False, compare=False)
    _fn: _Fn = field(repr=False, compare=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def sympy(self) -> Any:
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
        cached = self._cache.get("sympy")
        if cached is None:
            from fxcache_core.guards.sympy_form import SympyBuilder  # sympy is imported only here

            try:
                cached = SympyBuilder().build(self._node)
            except RecursionError:
                raise GuardParseError(
                    f"clause {self.index} is too deep to build a sympy form"
                ) from None
            self._cache["sympy"] = cached
        return cached

    def pretty(self, symbol_names: Mapping[str, str] | None = None) -> str:
        """``sstr`` of :meth:`sympy` with placeholders renamed (``{'t0': 's77'}``).

        Argument order is the source order; ``==``/``!=`` print infix.
        """
        from fxcache_core.guards.sympy_form import GuardStrPrinter

        return GuardStrPrinter(symbol_names).doprint(self.sympy())

    def evaluate(self, values: Mapping[str, int]) -> ClauseResult:
        """Evaluate the clause exactly as Python's ``eval`` would.

        ``values`` maps ``tN`` to its value (extra keys are ignored).  Status is
        ``"pass"``/``"fail"`` by the truth of the value, ``"error"`` if
        evaluation raised (``ZeroDivisionError``, ``OverflowError``,
        ``ValueError``, ``TypeError``, ``NameError``, ...; torch's callers treat
        it as a failed guard), ``"unknown"`` if a placeholder needed on the
        evaluated path is missing, or if it needs an int over
        :data:`MAX_INT_BITS` bits (``error`` then says so).  Never raises.
        """
        missing = tuple(p for p in self.placeholders if p not in values)
        try:
            value = self._fn(values)
            passed = bool(value)
        except _MissingPlaceholder:
            return ClauseResult(self, "unknown", None, None, missing)
        except _TooBig:
            return ClauseResult(self, "unknown", None, _TOO_BIG, missing)
        except Exception as exc:  # noqa: BLE001 - any failure is a failed guard
            return ClauseResult(self, "error", None, _format_error(exc), missing)
        return ClauseResult(self, "pass" if passed else "fail", value, None, missing)


@dataclass(frozen=True)
class ClauseResult:
    """Outcome of :meth:`Clause.evaluate`.

    ``value`` is the Python value the clause produced (None on error/unknown),
    ``error`` is ``"ExcType: message"`` on error, or, on unknown, why fxcache
    did not compute it (an int over :data:`MAX_INT_BITS` bits; None when a
    placeholder is missing); ``missing`` the clause's placeholders absent from
    the values given.
    """

    clause: Clause
    status: Literal["pass", "fail", "error", "unknown"]
    value: object | None = None
    error: str | None = None
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class GuardsVerdict:
    """Outcome of :meth:`GuardsExpr.evaluate`.

    ``status`` is ``"fail"`` if some evaluated clause failed or raised, else
    ``"unknown"`` if some clause needed a missing placeholder, else ``"pass"``.
    ``results`` holds one result per evaluated clause, in order.
    """

    status: Literal["pass", "fail", "unknown"]
    results: tuple[ClauseResult, ...]

    @property
    def passed(self) -> bool:
        """True when every clause passed (the entry would be a hit)."""
        return self.status == "pass"

    @property
    def first_failure(self) -> ClauseResult | None:
        """The first result with status ``"fail"`` or ``"error"``, if any."""
        for r in self.results:
            if r.status in ("fail", "error"):
                return r
        return None


@dataclass(frozen=True)
class GuardsExpr:
    """A parsed guards string: ``source`` verbatim, its top-level ``and`` clauses
    (nested top-level ``and`` flattened; a string that is not an ``and`` is one
    clause) and every placeholder used, sorted by N.  Build with
    :func:`parse_guards`.
    """

    source: str
    clauses: tuple[Clause, ...]
    placeholders: tuple[str, ...]
    _fn: _Fn = field(repr=False, compare=False)

    def evaluate(self, values: Mapping[str, int]) -> GuardsVerdict:
        """Evaluate clause by clause, in torch's order, with short-circuit ``and``.

        With every placeholder bound this is exactly Python's ``and``: clauses
        are evaluated in order and evaluation stops at the first clause that
        fails or raises; ``results`` ends with it (later clauses are not
        evaluated, as Python would not evaluate them) and the status is
        ``"fail"``; if none fails the status is ``"pass"``.

        With placeholders missing, a clause that needs one is ``"unknown"`` and
        evaluation goes on past it (``A and B`` with B false is false whatever
        A is), still stopping at the first definite fail/error; the status is
        ``"fail"`` if one was found, else ``"unknown"``.  Never raises.
        """
        results: list[ClauseResult] = []
        unknown = False
        for clause in self.clauses:
            r = clause.evaluate(values)
            results.append(r)
            if r.status in ("fail", "error"):
                return GuardsVerdict("fail", tuple(results))
            if r.status == "unknown":
                unknown = True
        return GuardsVerdict("unknown" if unknown else "pass", tuple(results))

    def holds(self, values: Mapping[str, int]) -> bool:
        """Fast path: the truth value torch's evaluation of the source gives, any exception meaning False.

        Raises ValueError naming the first placeholder missing from ``values``,
        or when an int over :data:`MAX_INT_BITS` bits would be needed (undecided).
        """
        for p in self.placeholders:
            if p not in values:
                raise ValueError(f"no value for placeholder {p!r} (L[{p!r}])")
        try:
            return bool(self._fn(values))
        except _TooBig:
            raise ValueError(f"undecided: the guards {_TOO_BIG}") from None
        except Exception:  # noqa: BLE001 - torch fails the guard on any error
            return False


def split_and(node: ast.expr) -> list[ast.expr]:
    """Operands of a top-level ``and``, nested ``and`` flattened (iteratively)."""
    out: list[ast.expr] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
            stack.extend(reversed(n.values))
        else:
            out.append(n)
    return out


@functools.lru_cache(maxsize=512)
def parse_guards(source: str) -> GuardsExpr:
    """Parse a stored ``guards_expr`` into a :class:`GuardsExpr` (cached).

    Mirrors ``eval`` in ``ShapeEnv.evaluate_guards_expression``
    (``torch/fx/experimental/symbolic_shapes.py``), which, like ``eval`` of a
    string, ignores leading spaces and tabs.  Raises GuardParseError for an
    empty string, a syntax error, anything outside the whitelist (the message
    names the piece and its column), or a string past MAX_GUARD_CHARS,
    MAX_NODES or MAX_DEPTH; raises TypeError if ``source`` is not a str.
    """
    if not isinstance(source, str):
        raise TypeError(f"guards expression must be str, not {type(source).__name__}")
    if len(source) > MAX_GUARD_CHARS:
        raise GuardParseError(
            f"guards expression has {len(source)} characters, more than "
            f"MAX_GUARD_CHARS={MAX_GUARD_CHARS}"
        )
    text = source.lstrip(" \t")
    if not text.strip():
        raise GuardParseError("empty guards expression")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f"col {(exc.offset or 1) - 1}"
        if "\n" in text or "\r" in text:
            where = f"line {exc.lineno} {where}"
        raise GuardParseError(f"invalid guards expression: {exc.msg} at {where}") from None
    except (RecursionError, MemoryError):
        raise GuardParseError("guards expression is too deeply nested to parse") from None
    except (ValueError, OverflowError) as exc:
        raise GuardParseError(f"invalid guards expression: {exc}") from None
    _check_limits(tree)

    compiler = _Compiler(text)
    clauses: list[Clause] = []
    for index, node in enumerate(split_and(tree.body)):
        compiler.placeholders = set()
        fn = compiler.compile(node)
        segment = compiler.segment(node)
        clauses.append(
            Clause(
                index=index,
                text=segment if segment is not None else ast.unparse(node),
                placeholders=tuple(sorted(compiler.placeholders, key=_placeholder_key)),
                _node=node,
                _fn=fn,
            )
        )
    fns = [c._fn for c in clauses]
    if len(fns) == 1:
        whole = fns[0]
    else:
        head, last = fns[:-1], fns[-1]

        def whole(env: Env) -> Any:
            for f in head:
                x = f(env)
                if not x:
                    return x
            return last(env)

    all_placeholders = sorted({p for c in clauses for p in c.placeholders}, key=_placeholder_key)
    return GuardsExpr(
        source=source,
        clauses=tuple(clauses),
        placeholders=tuple(all_placeholders),
        _fn=whole,
    )
