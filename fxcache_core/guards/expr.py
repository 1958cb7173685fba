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

The whitelist and the limits are :mod:`fxcache_core.guards.grammar`, the
closures are built by :mod:`fxcache_core.guards.compiler`, and the meaning of
each operator and function on plain numbers is
:mod:`fxcache_core.guards.runtime` (with its one deviation from ``eval``:
integers are bounded to :data:`MAX_INT_BITS` bits, and a clause needing more
is ``"unknown"``, never a guess). The sympy form of a clause, for display, is
:mod:`fxcache_core.guards.sympy_form`; nothing here imports sympy.

Limits, each raising ``GuardParseError``: :data:`MAX_GUARD_CHARS` characters,
:data:`MAX_NODES` expression nodes, :data:`MAX_DEPTH` nesting levels (a run
of left-nested ``+``/``-``, of ``*``, or of one bitwise operator, as in
``a + b - c + d``, counts as one level, since it is evaluated by a loop).
``SyntaxError``, ``RecursionError``, ``MemoryError``, ``ValueError`` from
:func:`ast.parse` become ``GuardParseError`` too.

Size: :data:`MAX_GUARD_CHARS` bounds what :func:`ast.parse` is given, so the
worst string of that length costs about half a second and 80 MB (``ast``
nodes cost ~500 bytes each) to parse, fold and refuse.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.compiler import Compiler, Env, Fn
from fxcache_core.guards.grammar import (
    MAX_DEPTH,
    MAX_GUARD_CHARS,
    MAX_NODES,
    UNBOUND_PRINTED_NAMES,
    check_limits,
    placeholder_key,
    split_and,
)
from fxcache_core.guards.runtime import (
    MAX_INT_BITS,
    MAX_POW_BITS,
    TOO_BIG,
    MissingPlaceholder,
    TooBig,
)
from fxcache_core.reasons import Reason

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
    "split_and",
]


def _format_error(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass(frozen=True)
class Clause:
    """One operand of the top-level ``and`` of a guards expression.

    ``index`` is its 0-based position, ``text`` its source text (a slice of the
    stored string), ``placeholders`` the ``tN`` names it reads, sorted by N.
    Build with :func:`parse_guards`; the private fields hold the parsed tree and
    its compiled evaluator. Its sympy form is
    :func:`fxcache_core.guards.sympy_form.to_sympy` (cached in ``_cache``).
    """

    index: int
    text: str
    placeholders: tuple[str, ...]
    _node: ast.expr = field(repr=False, compare=False)
    _fn: Fn = field(repr=False, compare=False)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

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
        except MissingPlaceholder:
            return ClauseResult(self, "unknown", None, None, missing)
        except TooBig:
            return ClauseResult(self, "unknown", None, TOO_BIG, missing)
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
    _fn: Fn = field(repr=False, compare=False)

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
        except TooBig:
            raise ValueError(f"undecided: the guards {TOO_BIG}") from None
        except Exception:  # noqa: BLE001 - torch fails the guard on any error
            return False


@functools.lru_cache(maxsize=512)
def parse_guards(source: str) -> GuardsExpr:
    """Parse a stored ``guards_expr`` into a :class:`GuardsExpr` (cached).

    Mirrors ``eval`` in ``ShapeEnv.evaluate_guards_expression``
    (``torch/fx/experimental/symbolic_shapes.py``), which, like ``eval`` of a
    string, ignores leading spaces and tabs.  Raises GuardParseError for an
    empty string, a syntax error, anything outside the whitelist (the message
    names the piece and its column), or a string past MAX_GUARD_CHARS,
    MAX_NODES or MAX_DEPTH; raises TypeError if ``source`` is not a str. The
    error's message is a :class:`~fxcache_core.reasons.Reason` whose code says
    which (``empty``, ``syntax-error``, ``unsupported-syntax``,
    ``wrong-argument-count``, ``int-over-bound``, ``too-long``,
    ``too-many-nodes``, ``too-deep``).
    """
    if not isinstance(source, str):
        raise TypeError(f"guards expression must be str, not {type(source).__name__}")
    if len(source) > MAX_GUARD_CHARS:
        raise GuardParseError(Reason(
            f"guards expression has {len(source)} characters, more than "
            f"MAX_GUARD_CHARS={MAX_GUARD_CHARS}", "too-long"
        ))
    text = source.lstrip(" \t")
    if not text.strip():
        raise GuardParseError(Reason("empty guards expression", "empty"))
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        where = f"col {(exc.offset or 1) - 1}"
        if "\n" in text or "\r" in text:
            where = f"line {exc.lineno} {where}"
        raise GuardParseError(Reason(f"invalid guards expression: {exc.msg} at {where}",
                                     "syntax-error")) from None
    except (RecursionError, MemoryError):
        raise GuardParseError(Reason("guards expression is too deeply nested to parse",
                                     "too-deep")) from None
    except (ValueError, OverflowError) as exc:
        raise GuardParseError(Reason(f"invalid guards expression: {exc}", "syntax-error")) from None
    check_limits(tree)

    compiler = Compiler(text)
    clauses: list[Clause] = []
    for index, node in enumerate(split_and(tree.body)):
        compiler.placeholders = set()
        fn = compiler.compile(node)
        segment = compiler.segment(node)
        clauses.append(
            Clause(
                index=index,
                text=segment if segment is not None else ast.unparse(node),
                placeholders=tuple(sorted(compiler.placeholders, key=placeholder_key)),
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

    all_placeholders = sorted({p for c in clauses for p in c.placeholders}, key=placeholder_key)
    return GuardsExpr(
        source=source,
        clauses=tuple(clauses),
        placeholders=tuple(all_placeholders),
        _fn=whole,
    )
