"""The Python semantics the compiled guard closures apply, on plain numbers.

:mod:`fxcache_core.guards.compiler` turns each accepted node into a closure
that applies Python's own operator (``operator.add``...) or the function torch
binds in ``SYMPY_INTERP`` (``torch/fx/experimental/symbolic_shapes.py``); where
that function is not plain Python, this module gives its exact meaning on
plain ints and floats: ``IsNonOverlappingAndDenseIndicator``,
``cast_symbool_to_symint_guardless``, ``torch.sym_float``. Same results and
exceptions as torch's, with one bound:

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

Never imports torch or sympy; never evaluates a string.
"""

from __future__ import annotations

import math
import operator
from typing import Any

#: Largest int, in bits, a literal may be and ``*``/``**`` may produce (about
#: 1,233 decimal digits; see the module docstring).
MAX_INT_BITS: int = 1 << 12
#: The bound's former name (it once applied to ``**`` only).
MAX_POW_BITS: int = MAX_INT_BITS


class MissingPlaceholder(Exception):
    """A placeholder needed on the evaluated path has no value (evaluation: ``"unknown"``)."""


class TooBig(Exception):
    """An int result would exceed MAX_INT_BITS; fxcache does not compute it
    (not an ArithmeticError: nothing may mistake it for what Python would raise)."""


TOO_BIG = (f"needs an integer over {MAX_INT_BITS} bits, which fxcache does not compute "
           "(MAX_INT_BITS; torch's guards never hold such numbers)")


def py_pow(base: Any, exp: Any) -> Any:
    """Python ``base ** exp``, refusing int results over MAX_INT_BITS bits (:class:`TooBig`)."""
    if (
        isinstance(base, int)
        and isinstance(exp, int)
        and exp > 0
        and (base > 1 or base < -1)
        and (exp > MAX_INT_BITS or exp * math.log2(abs(base)) > MAX_INT_BITS + 1)
    ):
        raise TooBig
    return base**exp


def py_round(number: Any, *ndigits: Any) -> Any:
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


def is_non_overlapping_and_dense_indicator(*args: Any) -> int:
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
            expected_stride = py_mul(expected_stride, length)
    # eval_is_non_overlapping_and_dense: int(guard_bool(...))
    if type(result) is not bool:
        raise AssertionError(f"Expected bool, got {result}")
    return int(result)


def cast_symbool_to_symint_guardless(symbool: Any) -> int:
    """``cast_symbool_to_symint_guardless`` of ``symbolic_shapes.py`` on plain values.

    A bool maps to 1/0; anything else reaches ``symbool.node`` in torch and
    raises ``AttributeError``.
    """
    if isinstance(symbool, bool):
        return 1 if symbool else 0
    raise AttributeError(f"'{type(symbool).__name__}' object has no attribute 'node'")


def sym_float(a: Any) -> float:
    """``torch.sym_float`` on a plain number: ``builtins.float(a)``."""
    return float(a)


def py_mul(a: Any, b: Any) -> Any:
    """Python ``a * b``, refusing int products over MAX_INT_BITS bits (:class:`TooBig`).

    Without this bound a short string multiplying big numbers would cost
    quadratic time and unbounded memory.
    """
    if (
        isinstance(a, int)
        and isinstance(b, int)
        and a.bit_length() + b.bit_length() - 1 > MAX_INT_BITS
    ):
        raise TooBig
    return a * b
