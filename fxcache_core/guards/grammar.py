"""The guards grammar fxcache accepts: whitelist tables, limits, AST walks.

A stored ``guards_expr`` is Python source; fxcache accepts only what torch's
printers can emit. This module holds that whitelist as tables, each mapping an
AST node kind or a name to the Python function it means (from
:mod:`fxcache_core.guards.runtime`): :data:`BINOPS`, :data:`CMPOPS`,
:data:`BUILTIN_CALLS` and its siblings, with :data:`CMP_SYMBOLS` for printing;
the size limits; and the walks over a tree that the compiler and the sympy
form share (:func:`binop_chain`, :func:`split_and`, :func:`chain_key`).

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

Mirrors ``SYMPY_INTERP`` (torch/fx/experimental/symbolic_shapes.py) and the
printers in torch/utils/_sympy/printers.py. Never evaluates a string and never
imports torch or sympy.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.runtime import (
    MAX_INT_BITS,
    MAX_POW_BITS,
    cast_symbool_to_symint_guardless,
    is_non_overlapping_and_dense_indicator,
    py_mul,
    py_pow,
    py_round,
    sym_float,
)
from fxcache_core.reasons import Reason

__all__ = [
    "MAX_DEPTH",
    "MAX_GUARD_CHARS",
    "MAX_INT_BITS",
    "MAX_NODES",
    "MAX_POW_BITS",
    "UNBOUND_PRINTED_NAMES",
    "binop_chain",
    "chain_key",
    "check_limits",
    "shallow",
    "split_and",
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

PLACEHOLDER_RE = re.compile(r"t(?:0|[1-9][0-9]*)\Z")


CallTable = dict[str, tuple[Callable[..., Any], int, "int | None"]]

BUILTIN_CALLS: CallTable = {
    "max": (max, 2, None),
    "min": (min, 2, None),
    "abs": (abs, 1, 1),
    "round": (py_round, 1, 2),
    "int": (int, 1, 1),
    "float": (float, 1, 1),
    "bool": (bool, 1, 1),
}
GLOBAL_CALLS: CallTable = {
    "IsNonOverlappingAndDenseIndicator": (is_non_overlapping_and_dense_indicator, 0, None),
    "cast_symbool_to_symint_guardless": (cast_symbool_to_symint_guardless, 1, 1),
}
_MATH_UNARY = (
    "floor ceil trunc sqrt exp log2 log10 sin cos tan asin acos atan "
    "sinh cosh tanh asinh acosh atanh fabs"
).split()
MATH_CALLS: CallTable = {name: (getattr(math, name), 1, 1) for name in _MATH_UNARY}
MATH_CALLS["log"] = (math.log, 1, 2)
MATH_CALLS["pow"] = (math.pow, 2, 2)
_TORCH_SYM_MATH = "sqrt cos cosh sin sinh tan tanh asin acos atan log2".split()
TORCH_CALLS: CallTable = {f"_sym_{name}": (getattr(math, name), 1, 1) for name in _TORCH_SYM_MATH}
TORCH_CALLS["sym_sqrt"] = (math.sqrt, 1, 1)
TORCH_CALLS["sym_float"] = (sym_float, 1, 1)

MATH_CONSTANTS: dict[str, float] = {
    "inf": math.inf,
    "nan": math.nan,
    "pi": math.pi,
    "e": math.e,
    "tau": math.tau,
}


BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: py_mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: py_pow,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
CMP_SYMBOLS: dict[type[ast.cmpop], str] = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
UNSUPPORTED_BINOP_SYMBOLS = {ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}
UNSUPPORTED_CMP_SYMBOLS = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
# Left-nested runs of these operators are flattened into one loop (one level).
_CHAIN_KEY: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "add",
    ast.Mult: "mul",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}


def chain_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.BinOp):
        return _CHAIN_KEY.get(type(node.op))
    return None


def placeholder_key(name: str) -> int:
    """The N of ``tN``: placeholders sort by it."""
    return int(name[1:])


def binop_chain(node: ast.BinOp) -> list[Any]:
    """Flatten a left-nested run of one chain class into ``[base, (op, right, node)...]``.

    ``a + b - c`` gives ``[a, (Add, b, ...), (Sub, c, ...)]``; operators without a
    chain class give a run of length one.
    """
    key = chain_key(node)
    stack = [node]
    cur: ast.AST = node.left
    while key is not None and chain_key(cur) == key:
        assert isinstance(cur, ast.BinOp)
        stack.append(cur)
        cur = cur.left
    out: list[Any] = [cur]
    for b in reversed(stack):
        out.append((b.op, b.right, b))
    return out


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


def check_limits(tree: ast.Expression) -> None:
    """Count nodes and effective depth iteratively (no recursion)."""
    stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
    count = 0
    skip = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise GuardParseError(Reason(f"guards expression has more than MAX_NODES={MAX_NODES} nodes",
                                         "too-many-nodes"))
        if depth > MAX_DEPTH:
            raise GuardParseError(Reason(
                f"guards expression nests deeper than MAX_DEPTH={MAX_DEPTH} levels", "too-deep"
            ))
        key = chain_key(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, skip):
                continue
            same = (
                key is not None
                and child is getattr(node, "left", None)
                and chain_key(child) == key
            )
            stack.append((child, depth if same else depth + 1))


def shallow(tree: ast.AST, limit: int) -> bool:
    """Whether ``tree`` nests at most ``limit`` levels, every node counted (unlike
    :func:`check_limits`, for code that recurses per node: ``ast.unparse``, a
    ``NodeTransformer``). Iterative."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return True
