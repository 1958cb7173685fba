"""Tests of fxcache_core.guards.expr: parsing, whitelist, limits, and exact Python semantics.

The oracle for evaluation is Python's own ``eval`` of the string (allowed here,
in the tests only, on the known corpus strings and on strings the tests
generate), with ``math``, a ``torch`` stand-in and a copy of torch's
``IsNonOverlappingAndDenseIndicator`` in scope.  Where torch is importable the
tests also compare against torch's real ``SYMPY_INTERP`` and
``ShapeEnv.evaluate_guards_expression``.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import time
import types
from pathlib import Path
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fxcache_core.errors import FxcacheError, GuardParseError
from fxcache_core.guards import expr as G
from fxcache_core.guards import runtime as R
from fxcache_core.guards import sympy_form as GS
from fxcache_core.guards.expr import GuardsExpr, parse_guards
from tests.helpers import GUARDS_CORPUS

SETTINGS = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---------------------------------------------------------------------------
# The oracle: Python's eval with the names torch's SYMPY_INTERP binds.
# ---------------------------------------------------------------------------


def ref_eval_is_non_overlapping_and_dense(sizes: list[Any], strides: list[Any]) -> bool:
    """Copy of ``_eval_is_non_overlapping_and_dense`` (torch/fx/experimental/symbolic_shapes.py)."""
    dim = len(sizes)
    if dim == 1:
        return strides[0] == 1 or sizes[0] < 2
    lengths_and_strides = sorted(zip(sizes, strides, strict=False), key=operator.itemgetter(1))
    expected_stride = 1
    for length, stride in lengths_and_strides:
        if length == 1:
            continue
        if stride != expected_stride:
            return False
        expected_stride *= length
    return True


def ref_is_non_overlapping_and_dense_flat(*args: Any) -> int:
    """Copy of ``_eval_is_non_overlapping_and_dense_flat`` + ``guard_bool`` on plain values."""
    dim = len(args) // 2
    result = ref_eval_is_non_overlapping_and_dense(list(args[:dim]), list(args[dim:]))
    if type(result) is not bool:
        raise AssertionError(f"Expected bool, got {result}")
    return int(result)


def ref_cast_symbool_to_symint_guardless(symbool: Any) -> Any:
    """Copy of ``cast_symbool_to_symint_guardless`` on plain values."""
    if isinstance(symbool, bool):
        return 1 if symbool else 0
    return symbool.node.expr  # AttributeError for anything but a SymBool, as in torch


def _torch_standin() -> types.SimpleNamespace:
    ns = types.SimpleNamespace(sym_float=lambda a: float(a))
    for name in "sqrt cos cosh sin sinh tan tanh asin acos atan log2".split():
        setattr(ns, f"_sym_{name}", getattr(math, name))
    ns.sym_sqrt = math.sqrt
    return ns


ORACLE_GLOBALS = {
    "math": math,
    "torch": _torch_standin(),
    "IsNonOverlappingAndDenseIndicator": ref_is_non_overlapping_and_dense_flat,
    "cast_symbool_to_symint_guardless": ref_cast_symbool_to_symint_guardless,
}


def oracle(source: str, values: dict[str, int], namespace: dict[str, Any] | None = None):
    """('value', v) or ('raise', 'Type: message') from Python's eval."""
    try:
        value = eval(source, dict(namespace or ORACLE_GLOBALS), {"L": dict(values)})
    except Exception as exc:  # noqa: BLE001
        return ("raise", G._format_error(exc))
    return ("value", value)


def same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Equal values of the same type (NaN equals NaN), or the same exception."""
    if a[0] != b[0]:
        return False
    if a[0] == "raise":
        return a[1] == b[1]
    x, y = a[1], b[1]
    return type(x) is type(y) and (x == y or repr(x) == repr(y))


def expr_outcome(g: GuardsExpr, values: dict[str, int]) -> tuple[str, Any]:
    """The value Python's ``c0 and c1 and ...`` produces, read off GuardsExpr.evaluate."""
    verdict = g.evaluate(values)
    assert verdict.status in ("pass", "fail")
    first = verdict.first_failure
    if first is None:
        assert len(verdict.results) == len(g.clauses)
        last = verdict.results[-1]
        assert last.status == "pass"
        return ("value", last.value)
    assert verdict.results[-1] is first
    assert first.clause.index == len(verdict.results) - 1
    if first.status == "error":
        return ("raise", first.error)
    return ("value", first.value)


def check_against_oracle(source: str, values: dict[str, int], namespace=None) -> None:
    """Whole-expression value, per-clause values and holds() all agree with eval."""
    g = parse_guards(source)
    expected = oracle(source, values, namespace)
    got = expr_outcome(g, values)
    assert same_outcome(got, expected), (source, values, got, expected)
    assert g.holds(values) == (expected[0] == "value" and bool(expected[1]))
    assert g.evaluate(values).passed == g.holds(values)
    for result in g.evaluate(values).results:
        clause_expected = oracle(result.clause.text, values, namespace)
        if result.status == "error":
            clause_got = ("raise", result.error)
        else:
            assert result.status in ("pass", "fail")
            assert result.status == ("pass" if bool(result.value) else "fail")
            clause_got = ("value", result.value)
        assert same_outcome(clause_got, clause_expected), (result.clause.text, values)


# ---------------------------------------------------------------------------
# The corpus (tests/data/guards-corpus.json; FXCACHE_GUARDS_CORPUS overrides).
# ---------------------------------------------------------------------------


CORPUS_PATH = GUARDS_CORPUS
CORPUS: list[dict[str, Any]] = json.loads(CORPUS_PATH.read_text())
CORPUS_EXPRS = sorted({e["guards_expr"] for e in CORPUS if e.get("guards_expr")})


def hint_values(entry: dict[str, Any]) -> dict[str, int]:
    """tN -> value at the entry's compile-time hints (a placeholder may be '2*s77')."""
    subs = {sympy.Symbol(k): v for k, v in entry["hints"].items()}
    return {
        f"t{i}": int(sympy.sympify(sym).subs(subs))
        for i, sym in enumerate(entry["placeholder_symbols"])
    }


CORPUS_WITH_HINTS = [(e["guards_expr"], hint_values(e)) for e in CORPUS if e.get("guards_expr")]


def test_corpus_is_not_trivial():
    assert len(CORPUS_EXPRS) >= 20
    assert any("//" in s for s in CORPUS_EXPRS) and any("max(" in s for s in CORPUS_EXPRS)


@pytest.mark.parametrize("source", CORPUS_EXPRS)
def test_corpus_parses_round_trips_and_builds_sympy(source):
    g = parse_guards(source)
    assert g.source == source
    assert " and ".join(c.text for c in g.clauses) == source
    assert [c.index for c in g.clauses] == list(range(len(g.clauses)))
    used = set()
    for clause in g.clauses:
        expr = GS.to_sympy(clause)
        assert isinstance(expr, sympy.Basic)
        assert {s.name for s in expr.free_symbols} == set(clause.placeholders)
        assert all(s.is_integer for s in expr.free_symbols)
        assert GS.to_sympy(clause) is expr  # cached
        assert isinstance(GS.pretty(clause), str) and GS.pretty(clause)
        used |= set(clause.placeholders)
    assert g.placeholders == tuple(sorted(used, key=lambda p: int(p[1:])))


@pytest.mark.parametrize(("source", "values"), CORPUS_WITH_HINTS)
def test_corpus_passes_at_hints(source, values):
    g = parse_guards(source)
    assert g.holds(values) is True
    verdict = g.evaluate(values)
    assert verdict.passed and verdict.first_failure is None
    assert [r.status for r in verdict.results] == ["pass"] * len(g.clauses)
    check_against_oracle(source, values)


_EDGE_INTS = [0, 1, -1, 2, -2, 3, 4, 7, 8, 11, 64, 4096, 4097, -4096, 2**31, 2**63, -(2**63)]


def _bindings(names: tuple[str, ...], near: dict[str, int] | None = None):
    value = st.one_of(
        st.sampled_from(_EDGE_INTS),
        st.integers(-20, 20),
        st.integers(-(10**6), 10**6),
        st.integers(-(2**80), 2**80),
    )
    if near:
        base = st.sampled_from(sorted(set(near.values())))
        value = st.one_of(
            value,
            st.builds(operator.add, base, st.integers(-3, 3)),
            st.builds(operator.mul, base, st.sampled_from([2, 3, -1])),
        )
    return st.fixed_dictionaries({n: value for n in names})


@settings(SETTINGS, max_examples=400)
@given(data=st.data())
def test_corpus_differential(data):
    source, hints = data.draw(st.sampled_from(CORPUS_WITH_HINTS))
    g = parse_guards(source)
    values = data.draw(_bindings(g.placeholders, hints))
    check_against_oracle(source, values)


def test_corpus_fails_somewhere_near_hints():
    """Each corpus guard both holds and fails within +-12 of its hints (both outcomes are exercised)."""
    for source, hints in CORPUS_WITH_HINTS:
        g = parse_guards(source)
        outcomes = set()
        for delta in range(-12, 13):
            values = {k: v + delta for k, v in hints.items()}
            outcomes.add(g.holds(values))
            assert g.evaluate(values).passed == g.holds(values)
        assert outcomes == {True, False}, source


# ---------------------------------------------------------------------------
# Generated expressions over the whole grammar.
# ---------------------------------------------------------------------------

_PLACEHOLDERS = ["L['t0']", "L['t1']", "L['t2']"]
_LITERALS = [
    "0", "1", "2", "3", "5", "7", "10", "4096", "100000000000000000000", "(-1)", "-3",
    "0.0", "0.5", "2.5", "-2.5", "1e-300", "1e300", "1e999", "3.0",
    "True", "False", "math.inf", "-math.inf", "math.nan", "math.pi", "math.e", "math.tau",
]  # fmt: skip
_CHAIN_OPS = ["+", "-", "*", "/", "//", "%", "&", "|", "^"]
_CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]
_EXPONENTS = ["0", "1", "2", "3", "-1", "-2", "0.5", "-0.5", "(-1)", "True", "2.0"]
_UNARY_CALL_GROUPS = [
    ["abs", "round", "int", "float", "bool"],
    [f"math.{n}" for n in "floor ceil trunc sqrt exp log log2 log10 sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh fabs".split()],
    ["torch.sym_float", "torch._sym_sqrt", "torch.sym_sqrt", "torch._sym_cos", "torch._sym_log2", "torch._sym_atan"],
]  # fmt: skip

leaves = st.sampled_from(_PLACEHOLDERS + _LITERALS)


def _extend(children):
    def call(name, n):
        return st.lists(children, min_size=n, max_size=n).map(
            lambda args: f"{name}({', '.join(args)})"
        )

    def chain(ops, lo=2, hi=4):
        return st.lists(
            st.tuples(st.sampled_from(ops), children), min_size=lo - 1, max_size=hi - 1
        ).flatmap(
            lambda rest: children.map(
                lambda first: "(" + first + "".join(f" {op} {x}" for op, x in rest) + ")"
            )
        )

    return st.one_of(
        st.tuples(st.sampled_from(["-", "+", "not "]), children).map(lambda t: f"({t[0]}{t[1]})"),
        chain(_CHAIN_OPS),
        chain(["+", "-"], 3, 5),
        st.tuples(children, st.sampled_from(_EXPONENTS)).map(lambda t: f"({t[0]}) ** {t[1]}"),
        chain(_CMP_OPS),
        chain(["and", "or"]),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
        st.sampled_from(["max", "min"]).flatmap(
            lambda f: st.lists(children, min_size=2, max_size=3).map(
                lambda args: f"{f}({', '.join(args)})"
            )
        ),
        *(st.sampled_from(group).flatmap(lambda f: call(f, 1)) for group in _UNARY_CALL_GROUPS),
        st.tuples(children, st.integers(-3, 3)).map(lambda t: f"round({t[0]}, {t[1]})"),
        call("math.log", 2),
        call("math.pow", 2),
        st.integers(0, 6).flatmap(lambda n: call("IsNonOverlappingAndDenseIndicator", n)),
        # cast of a bool; rarely of a non-bool (AttributeError) or an unbound name (NameError)
        st.integers(0, 7).flatmap(
            lambda k: (
                st.one_of(call("Where", 3), call("OpaqueUnaryFn_exp", 1), st.just("IntInfinity()"))
                if k == 0
                else call("cast_symbool_to_symint_guardless", 1)
                if k == 1
                else children.map(lambda c: f"cast_symbool_to_symint_guardless(({c}) > 0)")
            )
        ),
    )


expressions = st.recursive(leaves, _extend, max_leaves=10)


def _top_level(children):
    """Clauses (often comparisons, as real guards are), sometimes joined by ``and``."""
    clause = st.one_of(
        children,
        st.tuples(children, st.sampled_from(_CMP_OPS), children).map(" ".join),
        # A clause whose value is exactly the inner value (an inner top-level
        # `and` is then not split into clauses).
        children.map(lambda c: f"({c}) if 1 else 0"),
    )
    return st.one_of(clause, st.lists(clause, min_size=2, max_size=4).map(" and ".join))


generated = _top_level(expressions)
generated_values = st.fixed_dictionaries(
    {
        f"t{i}": st.one_of(
            st.sampled_from([0, 1, -1, 2, -2, 3, 10, 4096, 2**53 + 1, -(2**64)]),
            st.integers(-50, 50),
            st.integers(-(2**70), 2**70),
        )
        for i in range(3)
    }
)


def test_generator_covers_grammar():
    """Every construct of the grammar shows up in the generated strings."""
    seen = set()

    @settings(SETTINGS, max_examples=600)
    @given(generated)
    def collect(s):
        seen.add(s)

    collect()
    text = "\n".join(seen)
    for piece in [
        " // ", " % ", " / ", " ** ", " & ", " | ", " ^ ", " and ", " or ", "not ", " if ",
        " <= ", " != ", "max(", "min(", "abs(", "round(", "math.floor(", "math.sqrt(",
        "torch.sym_float(", "torch._sym_sqrt(", "IsNonOverlappingAndDenseIndicator(",
        "cast_symbool_to_symint_guardless(", "Where(", "math.inf", "math.nan", "1e999",
    ]:  # fmt: skip
        assert piece in text, piece


@settings(SETTINGS, max_examples=1500)
@given(source=generated, values=generated_values)
def test_generated_expressions_match_eval(source, values):
    check_against_oracle(source, values)


@settings(SETTINGS, max_examples=150)
@given(source=generated)
def test_generated_expressions_build_sympy(source):
    g = parse_guards(source)
    for clause in g.clauses:
        expr = GS.to_sympy(clause)
        assert isinstance(expr, sympy.Basic)
        assert {s.name for s in expr.free_symbols} <= set(clause.placeholders)
        assert isinstance(GS.pretty(clause, {"t0": "s77"}), str)


# ---------------------------------------------------------------------------
# Targeted semantics.
# ---------------------------------------------------------------------------

T0, T1, T2 = "L['t0']", "L['t1']", "L['t2']"


@pytest.mark.parametrize(
    ("source", "values", "expected"),
    [
        (f"{T0} // 2", {"t0": -7}, ("value", -4)),
        (f"{T0} % 3", {"t0": -7}, ("value", 2)),
        (f"{T0} % -3", {"t0": 7}, ("value", -2)),
        (f"{T0} / 2", {"t0": 7}, ("value", 3.5)),
        (f"{T0} / {T1}", {"t0": 10**400, "t1": 1}, ("raise", "OverflowError")),
        (f"{T0} ** -1", {"t0": 2}, ("value", 0.5)),
        (f"{T0} ** -1", {"t0": 0}, ("raise", "ZeroDivisionError")),
        (f"{T0} // {T1}", {"t0": 1, "t1": 0}, ("raise", "ZeroDivisionError")),
        (f"{T0} * {T0} * {T0}", {"t0": 10**30}, ("value", 10**90)),
        (f"round({T0} / 2)", {"t0": 5}, ("value", 2)),
        (f"round({T0} / 2)", {"t0": 7}, ("value", 4)),
        (f"round({T0}, -1)", {"t0": 25}, ("value", 20)),
        (f"max({T0}, {T1})", {"t0": 1, "t1": True}, ("value", 1)),
        (f"max({T1}, {T0})", {"t0": 1, "t1": True}, ("value", True)),
        (f"math.floor({T0} / 2)", {"t0": -3}, ("value", -2)),
        (f"math.sqrt({T0})", {"t0": -1}, ("raise", "ValueError")),
        (f"math.floor(math.inf * {T0})", {"t0": 1}, ("raise", "OverflowError")),
        (f"{T0} == 0 or 1 // {T0} == 0", {"t0": 0}, ("value", True)),
        (f"{T0} != 0 and 1 // {T0}", {"t0": 0}, ("value", False)),
        (f"{T0} and 7", {"t0": 0}, ("value", 0)),
        (f"{T0} or 7", {"t0": 5}, ("value", 5)),
        (f"max(({T0} and 7), -1)", {"t0": 0}, ("value", 0)),
        (f"max(({T0} and 7), -1)", {"t0": 0.0}, ("value", 0.0)),
        (f"min(({T0} or 0.0), 1)", {"t0": 0}, ("value", 0.0)),
        (f"({T0} < 2 < {T1}) if 1 else 0", {"t0": 0, "t1": 5}, ("value", True)),
        (f"1 < {T0} < 1 // {T1}", {"t0": 0, "t1": 0}, ("value", False)),
        (f"1 < {T0} < 1 // {T1}", {"t0": 2, "t1": 0}, ("raise", "ZeroDivisionError")),
        (f"(1 // {T1}) if {T0} else 5", {"t0": 0, "t1": 0}, ("value", 5)),
        (f"({T0} > 1) + ({T0} > 2)", {"t0": 5}, ("value", 2)),
        (f"({T0} > 1) & ({T0} > 2)", {"t0": 5}, ("value", True)),
        (f"{T0} & 1.5", {"t0": 5}, ("raise", "TypeError")),
        (f"torch.sym_float({T0})", {"t0": 3}, ("value", 3.0)),
        (f"torch._sym_sqrt({T0})", {"t0": 9}, ("value", 3.0)),
        (f"IsNonOverlappingAndDenseIndicator({T0}, 3, 3, 1)", {"t0": 4}, ("value", 1)),
        (f"IsNonOverlappingAndDenseIndicator({T0}, 3, 1, 1)", {"t0": 4}, ("value", 0)),
        (f"cast_symbool_to_symint_guardless({T0} > 2)", {"t0": 4}, ("value", 1)),
        (f"cast_symbool_to_symint_guardless({T0})", {"t0": 4}, ("raise", "AttributeError")),
        (f"{T0} > 1 or Where(1, 2, 3)", {"t0": 5}, ("value", True)),
        (f"{T0} > 1 or Where(1 // 0, 2, 3)", {"t0": 0}, ("raise", "NameError")),
        (f"{T0} < IntInfinity()", {"t0": 0}, ("raise", "NameError")),
        (f"-{T0} ** 2 + +{T0}", {"t0": 3}, ("value", -6)),
        (f"not {T0}", {"t0": 0}, ("value", True)),
    ],
)
def test_semantics(source, values, expected):
    g = parse_guards(source)
    got = expr_outcome(g, values)
    if expected[0] == "raise":
        assert got[0] == "raise" and got[1].split(":")[0] == expected[1], got
    else:
        assert same_outcome(got, expected), got
    check_against_oracle(source, values)


def test_evaluate_stops_at_first_failure():
    g = parse_guards(f"{T0} > 1 and 1 // {T1} == 0 and {T0} > 5")
    verdict = g.evaluate({"t0": 3, "t1": 0})
    assert verdict.status == "fail" and not verdict.passed
    assert [r.status for r in verdict.results] == ["pass", "error"]
    assert verdict.first_failure is verdict.results[1]
    assert verdict.first_failure.error == "ZeroDivisionError: integer division or modulo by zero"
    assert verdict.first_failure.value is None
    assert g.holds({"t0": 3, "t1": 0}) is False

    verdict = g.evaluate({"t0": 0, "t1": 0})
    assert [r.status for r in verdict.results] == ["fail"]
    assert verdict.first_failure.value is False


def test_evaluate_with_missing_placeholders():
    g = parse_guards(f"{T0} > 1 and {T1} > 1 and {T2} > 1")
    # Unknown clauses are skipped over; a later definite failure decides.
    verdict = g.evaluate({"t1": 0})
    assert verdict.status == "fail"
    assert [r.status for r in verdict.results] == ["unknown", "fail"]
    assert verdict.results[0].missing == ("t0",) and verdict.results[0].value is None
    assert verdict.first_failure.clause.index == 1
    verdict = g.evaluate({"t1": 5})
    assert verdict.status == "unknown" and not verdict.passed
    assert [r.status for r in verdict.results] == ["unknown", "pass", "unknown"]
    assert verdict.first_failure is None
    assert g.evaluate({"t0": 2, "t1": 2, "t2": 2}).status == "pass"
    # holds() needs every placeholder.
    with pytest.raises(ValueError, match="t0"):
        g.holds({"t1": 5, "t2": 5})
    with pytest.raises(ValueError, match="t2"):
        g.holds({"t0": 5, "t1": 5})
    # A placeholder not reached is not needed.
    r = parse_guards(f"{T0} > 5 or {T1} > 3").clauses[0].evaluate({"t0": 10})
    assert (r.status, r.value, r.missing) == ("pass", True, ("t1",))
    r = parse_guards(f"{T0} > 5 or {T1} > 3").clauses[0].evaluate({"t0": 1})
    assert (r.status, r.missing) == ("unknown", ("t1",))


def test_pow_limit_is_undecided_not_a_hang():
    """Past MAX_INT_BITS fxcache does not compute the power: the clause is
    undecided (torch would compute it, slowly), never a guess."""
    g = parse_guards(f"{T0} ** {T1} > 0")
    start = time.thread_time()
    r = g.clauses[0].evaluate({"t0": 2, "t1": 10**12})
    assert r.status == "unknown" and "MAX_INT_BITS" in r.error and r.missing == ()
    assert g.evaluate({"t0": 2, "t1": 10**12}).status == "unknown"
    with pytest.raises(ValueError, match="undecided"):
        g.holds({"t0": 3, "t1": 10**12})
    # |base| <= 1 is cheap for Python too and is computed.
    assert g.holds({"t0": 1, "t1": 10**12}) is True
    assert g.clauses[0].evaluate({"t0": -1, "t1": 10**12 + 1}).value is False
    assert time.thread_time() - start < 2
    # Below the limit Python's value is produced.
    check_against_oracle(f"{T0} ** {T1}", {"t0": 2, "t1": G.MAX_POW_BITS - 1})


def test_round_with_huge_negative_ndigits():
    source = f"round({T0}, {T1})"
    check_against_oracle(source, {"t0": 123456789, "t1": -20000})
    check_against_oracle(source, {"t0": 10**3000, "t1": -10001})
    check_against_oracle(source, {"t0": True, "t1": -20000})
    start = time.thread_time()
    r = parse_guards(source).clauses[0].evaluate({"t0": 10**50, "t1": -(10**15)})
    assert (r.value, type(r.value)) == (0, int)
    assert time.thread_time() - start < 1


_SIZES_STRIDES = st.lists(
    st.one_of(st.sampled_from([0, 1, 2, 3, 4, 6, 12, -1]), st.integers(-3, 70)), max_size=8
)
_KNOWN_LAYOUTS = [
    ((), 1),
    ((5,), 1),  # odd count: the extra value is a stride
    ((2, 5), 0),
    ((1, 5), 1),
    ((3, 1), 1),
    ((2, 3, 3, 1), 1),  # contiguous (2, 3)
    ((2, 3, 1, 2), 1),  # transposed (3, 2).t()
    ((2, 3, 3, 2), 0),  # overlapping
    ((2, 3, 6, 1), 0),  # gap
    ((1, 3, 7, 1), 1),  # size-1 dim ignores its stride
    ((2, 0, 1, 1), 0),
]


@pytest.mark.parametrize(("args", "expected"), _KNOWN_LAYOUTS)
def test_is_non_overlapping_and_dense_known_layouts(args, expected):
    assert R.is_non_overlapping_and_dense_indicator(*args) == expected
    assert ref_is_non_overlapping_and_dense_flat(*args) == expected
    source = f"IsNonOverlappingAndDenseIndicator({', '.join(map(str, args))})"
    assert parse_guards(source).clauses[0].evaluate({}).value == expected


@settings(SETTINGS, max_examples=300)
@given(st.one_of(_SIZES_STRIDES, st.lists(st.sampled_from([1.0, 0.5, True, 2, 1j]), max_size=6)))
def test_is_non_overlapping_and_dense_matches_reference(args):
    try:
        expected = ("value", ref_is_non_overlapping_and_dense_flat(*args))
    except Exception as exc:  # noqa: BLE001
        expected = ("raise", G._format_error(exc))
    try:
        got = ("value", R.is_non_overlapping_and_dense_indicator(*args))
    except Exception as exc:  # noqa: BLE001
        got = ("raise", G._format_error(exc))
    assert same_outcome(got, expected)


def test_clause_texts_and_placeholders():
    g = parse_guards(f"  {T2} == 2*{T0} and ({T0} + 1 and {T1}) and max({T1}, 3) > 2")
    assert [c.text for c in g.clauses] == [f"{T2} == 2*{T0}", f"{T0} + 1", T1, f"max({T1}, 3) > 2"]
    assert g.clauses[0].placeholders == ("t0", "t2")
    assert g.placeholders == ("t0", "t1", "t2")
    single = parse_guards(f"{T0} > 2 or {T1} > 2")
    assert len(single.clauses) == 1 and single.clauses[0].text == single.source
    big = parse_guards("L['t10'] > L['t9'] and L['t2'] > 0")
    assert big.placeholders == ("t2", "t9", "t10")


def test_parse_is_cached_and_values_are_frozen():
    source = f"{T0} >= 2"
    g = parse_guards(source)
    assert parse_guards(source) is g
    with pytest.raises(AttributeError):
        g.source = "x"  # type: ignore[misc]
    r = g.clauses[0].evaluate({"t0": 3})
    assert (r.status, r.value, r.error, r.missing, r.clause) == (
        "pass",
        True,
        None,
        (),
        g.clauses[0],
    )


def test_sympy_form_keeps_structure_and_pretty_renames():
    g = parse_guards(
        f"({T0} // 1) == {T0} and ({T0} % {T1}) == 0 and ({T0} / 3) > 2.5 "
        f"and math.floor(torch.sym_float({T0})) <= max(1, {T1}) and {T0}*{T0} > 50 "
        f"and round({T0} / 2) != 3 and ({T0} if {T1} else 2) >= 0 and 2 <= {T0}"
    )
    forms = [GS.to_sympy(c) for c in g.clauses]
    t0 = sympy.Symbol("t0", integer=True)
    assert forms[0].lhs.func is GS.PyFloorDiv and forms[0].lhs.args == (t0, sympy.Integer(1))
    assert forms[0] != sympy.true  # not evaluated to True by sympy
    assert forms[1].lhs.func is GS.PyMod
    assert forms[2].lhs.func is GS.PyTrueDiv and forms[2].rhs == sympy.Float(2.5)
    assert forms[3].lhs.func.py_name == "math.floor"
    assert forms[3].rhs.func.py_name == "max"
    assert forms[4].lhs == sympy.Mul(t0, t0, evaluate=False)
    assert forms[5].lhs.func.py_name == "round"
    assert forms[6].lhs.func is GS.PyIfExp
    assert GS.pretty(g.clauses[7], {"t0": "s77"}) == "2 <= s77"
    assert GS.pretty(g.clauses[1], {"t0": "s77", "t1": "s27"}) == "(s77 % s27) == 0"
    assert GS.pretty(g.clauses[3], {"t0": "s77"}) == "math.floor(torch.sym_float(s77)) <= max(1, t1)"
    assert GS.pretty(g.clauses[4]) == "t0*t0 > 50"


# ---------------------------------------------------------------------------
# Rejection and limits.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "piece"),
    [
        ("__import__('os').system('x')", "unsupported call \"__import__('os').system\" at col 0"),
        ("1 + os.system('x')", "unsupported call 'os.system' at col 4"),
        ("L['t0'].__class__", "unsupported attribute \"L['t0'].__class__\""),
        ("L['x']", "unsupported subscript \"L['x']\""),
        ("L['t01']", "unsupported subscript \"L['t01']\""),
        ("L[0]", "unsupported subscript 'L[0]'"),
        ("L['t0'][0]", "unsupported subscript"),
        ("open('f')", "unsupported call 'open'"),
        ("[1,2]", "unsupported syntax List"),
        ("(1, 2)", "unsupported syntax Tuple"),
        ("{1: 2}", "unsupported syntax Dict"),
        ("lambda: 1", "unsupported syntax Lambda"),
        ("(x := 1)", "unsupported syntax NamedExpr"),
        ("[x for x in L]", "unsupported syntax ListComp"),
        ("'a'", "unsupported constant 'a' (str)"),
        ("b'a'", "unsupported constant b'a' (bytes)"),
        ("1j", "unsupported constant 1j (complex)"),
        ("None", "unsupported constant None"),
        ("math.__dict__", "unsupported attribute 'math.__dict__'"),
        ("math.floor", "unsupported attribute 'math.floor'"),
        ("torch.ops.aten.add", "unsupported attribute 'torch.ops.aten.add'"),
        ("torch.ops.aten.add(1, 2)", "unsupported call 'torch.ops.aten.add'"),
        ("getattr(L, 't0')", "unsupported call 'getattr'"),
        ("f'{L}'", "unsupported syntax JoinedStr"),
        ("x", "unsupported name 'x'"),
        ("L", "unsupported name 'L'"),
        ("round(L['t0'], ndigits=2)", "unsupported keyword argument 'ndigits' in call 'round'"),
        ("max(*L)", "unsupported starred argument in call 'max'"),
        ("max(**L)", "unsupported '**' argument in call 'max'"),
        ("L['t0'] is 1", "unsupported comparison 'is'"),
        ("1 in L", "unsupported comparison 'in'"),
        ("~L['t0']", "unsupported operator '~'"),
        ("L['t0'] << 2", "unsupported operator '<<'"),
        ("L['t0'] @ 2", "unsupported operator '@'"),
        ("max(1)", "call 'max' takes 2 or more arguments, got 1"),
        ("abs(1, 2)", "call 'abs' takes 1 argument, got 2"),
        ("2 <= L['t0'] and", "invalid guards expression"),
        ("", "empty guards expression"),
        ("  \n", "empty guards expression"),
        ("1\x00", "invalid guards expression"),
    ],
)
def test_rejects(source, piece):
    with pytest.raises(GuardParseError) as info:
        parse_guards(source)
    assert piece in str(info.value)
    assert isinstance(info.value, FxcacheError)


@pytest.mark.parametrize(
    "source",
    [
        "(" * 10_000 + "1" + ")" * 10_000,
        "-" * 10_000 + "1",
        "not " * 10_000 + "1",
        "abs(" * 10_000 + "1" + ")" * 10_000,
        "+".join(["1"] * 10_000),
        "-" * (G.MAX_DEPTH + 1) + "1",
        "abs(" * (G.MAX_DEPTH + 1) + "1" + ")" * (G.MAX_DEPTH + 1),
        "1 + " * (5 * 2**20 // 4) + "1",
        " and ".join(["1"] * (G.MAX_NODES + 1)),
    ],
    ids=["parens", "neg", "not", "calls", "long-sum", "depth", "depth-calls", "5MB", "nodes"],
)
def test_limits_raise_guard_parse_error(source):
    with pytest.raises(GuardParseError):
        parse_guards(source)


def test_long_flat_sum_within_limits_is_accepted():
    source = " + ".join([T0] * 2000) + " == 0"
    g = parse_guards(source)
    assert g.holds({"t0": 0}) and not g.holds({"t0": 1})
    assert GS.to_sympy(g.clauses[0]).lhs.func is sympy.Add


def test_many_clauses_parse_in_linear_time():
    source = " and ".join([f"{T0} != {i}" for i in range(6_000)])  # just under MAX_GUARD_CHARS
    assert len(source) <= G.MAX_GUARD_CHARS
    start = time.thread_time()
    g = parse_guards(source)
    assert time.thread_time() - start < 10
    assert len(g.clauses) == 6_000 and g.clauses[-1].text == f"{T0} != 5999"
    assert g.holds({"t0": -1}) and not g.holds({"t0": 5_999})
    verdict = g.evaluate({"t0": 7})
    assert len(verdict.results) == 8 and verdict.first_failure.clause.index == 7


def test_clause_text_of_multiline_source():
    source = f"(1 +\n 2) and (3\r\n+ {T0} and\r {T1}) and (1 != \n 1 or {T2}) and 'é' != 'e'"[:-15]
    g = parse_guards(source)
    assert [c.text for c in g.clauses] == ["1 +\n 2", f"3\r\n+ {T0}", T1, f"1 != \n 1 or {T2}"]
    with pytest.raises(GuardParseError, match="unsupported constant 'é' \\(str\\) at line 2 col 6"):
        parse_guards(f"({T0} >\n 1 or 'é')")


def test_non_str_is_type_error():
    with pytest.raises(TypeError):
        parse_guards(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("module,sympy_at_top", [(G, False), (GS, True)])
def test_parsing_imports_no_torch_and_sympy_only_for_its_sympy_form(module, sympy_at_top):
    """expr.py (parse and evaluate) and sympy_form.py never import torch; expr.py does
    not import sympy at module level. That no module executes a string is
    tests/unit/test_no_eval.py, over every module of fxcache_core and fxcache_cli."""
    tree = ast.parse(Path(module.__file__).read_text())
    top, anywhere = set(), set()
    for node in ast.walk(tree):
        names = ({a.name.split(".")[0] for a in node.names} if isinstance(node, ast.Import)
                 else {(node.module or "").split(".")[0]} if isinstance(node, ast.ImportFrom) else set())
        anywhere |= names
        if node in tree.body:
            top |= names
    assert "torch" not in anywhere
    assert ("sympy" in top) is sympy_at_top


# ---------------------------------------------------------------------------
# Against torch itself (marked torch: make test runs them, make test-fast leaves them
# out; skipped when torch is not installed).
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def torch_interp():
    pytest.importorskip("torch")
    from torch.fx.experimental import symbolic_shapes

    return symbolic_shapes


@pytest.mark.torch
def test_corpus_against_shape_env(torch_interp):
    shape_env = torch_interp.ShapeEnv()
    checked = 0
    for source, hints in CORPUS_WITH_HINTS:
        g = parse_guards(source)
        n = len(hints)
        for delta in (-3, -1, 0, 1, 2, 5):
            values = {k: v + delta for k, v in hints.items()}
            args = [values[f"t{i}"] for i in range(n)]
            try:
                expected = bool(shape_env.evaluate_guards_expression(source, args))
            except Exception:  # noqa: BLE001 - a raising guard is a miss for torch's callers
                expected = False
            assert g.holds(values) == expected, (source, values)
            checked += 1
    assert checked >= 6 * len(CORPUS_WITH_HINTS)


@pytest.mark.torch
@settings(SETTINGS, max_examples=300)
@given(source=generated, values=generated_values)
def test_generated_expressions_match_torch_sympy_interp(torch_interp, source, values):
    check_against_oracle(source, values, dict(torch_interp.SYMPY_INTERP))


@pytest.mark.torch
@settings(SETTINGS, max_examples=300)
@given(_SIZES_STRIDES)
def test_is_non_overlapping_and_dense_matches_torch(torch_interp, args):
    expected = torch_interp._eval_is_non_overlapping_and_dense_flat(*args)
    assert R.is_non_overlapping_and_dense_indicator(*args) == expected
    assert ref_is_non_overlapping_and_dense_flat(*args) == expected


@pytest.mark.torch
@pytest.mark.parametrize(("args", "expected"), _KNOWN_LAYOUTS)
def test_known_layouts_match_torch(torch_interp, args, expected):
    assert torch_interp._eval_is_non_overlapping_and_dense_flat(*args) == expected


def _printed_guards(torch_interp) -> list[str]:
    """What ShapeGuardPythonPrinter prints for each torch sympy function."""
    import torch.utils._sympy.functions as F
    from torch.utils._sympy.numbers import int_oo
    from torch.utils._sympy.printers import PythonPrinter

    class Printer(torch_interp.ShapeGuardPythonPrinter):
        def __init__(self):
            PythonPrinter.__init__(self)
            self._print_cache = {}

        def _print_Symbol(self, expr):
            return f"L['{expr.name}']"

    x, y, z = sympy.symbols("t0 t1 t2", integer=True, positive=True)
    fx = F.ToFloat(x)
    builders = [
        lambda: F.FloorDiv(x + 1, y) <= x,
        lambda: sympy.Eq(F.PythonMod(x + 1, y), 0),
        lambda: sympy.Eq(F.Mod(x + 1, y), 0),
        lambda: sympy.Eq(F.ModularIndexing(x, y, z), 1),
        lambda: F.CleanDiv(x * y, y + z) > 1,
        lambda: F.CeilToInt(F.IntTrueDiv(x, y)) > 1,
        lambda: F.FloorToInt(F.IntTrueDiv(x, y)) > 1,
        lambda: F.CeilDiv(x, y) > 1,
        lambda: F.Max(x, y, z) < 10,
        lambda: F.Min(x, y) < 10,
        lambda: F.PowByNatural(x, 2) > y,
        lambda: F.FloatPow(fx, F.ToFloat(y)) > 2.5,
        lambda: F.FloatTrueDiv(fx, F.ToFloat(y)) > 2.5,
        lambda: F.IntTrueDiv(x, y) > 2.5,
        lambda: sympy.Eq(F.IsNonOverlappingAndDenseIndicator(x, y, y, 1), 1),
        lambda: F.TruncToInt(F.IntTrueDiv(x, y)) > 1,
        lambda: sympy.Eq(F.RoundToInt(F.IntTrueDiv(x, y)), 2),
        lambda: F.RoundDecimal(F.IntTrueDiv(x, y), 2) > 1.5,
        lambda: F.Identity(x) > 1,
        lambda: F.Where(x > y, x, y) > 1,
        *[
            (lambda n=n: getattr(F, f"OpaqueUnaryFn_{n}")(fx) > 0.5)
            for n in "sqrt cos cosh sin sinh tan tanh asin acos atan exp log asinh log2".split()
        ],
        lambda: sympy.Eq(F.BitwiseFn_bitwise_and(x, y), 0),
        lambda: sympy.Eq(F.BitwiseFn_bitwise_or(x, y), 3),
        lambda: sympy.Eq(F.BitwiseFn_bitwise_xor(x, y), 1),
        lambda: sympy.Piecewise((x, x > y), (y, x > z), (z, True)) > 2,
        lambda: sympy.Eq(sympy.Piecewise((1, x > y), (0, True)), 1),
        lambda: sympy.Rational(1, 3) * x > 1,
        lambda: sympy.Rational(1, 3) + fx > 1,
        lambda: sympy.Not(sympy.Eq(x, y)),
        lambda: sympy.Or(x > y, y > z),
        lambda: sympy.Lt(fx, sympy.oo, evaluate=False),
        lambda: sympy.Lt(-sympy.oo, fx, evaluate=False),
        lambda: sympy.Lt(x, int_oo, evaluate=False),
        lambda: sympy.Abs(x - y - 3) > 1,
        lambda: sympy.floor(F.FloatTrueDiv(fx, 2.0)) > 1,
        lambda: sympy.ceiling(F.FloatTrueDiv(fx, 2.0)) > 1,
        lambda: x**3 * y > 20,
        lambda: -2 * x * y + 3 < 0,
        lambda: sympy.Float(1 / 3) < fx,
        lambda: sympy.Float(1e300) > fx,
        lambda: sympy.Xor(x > y, y > z),
        lambda: x - F.FloorDiv(x + 1, 2) >= 0,
        lambda: sympy.Lt(x, 2**70),
    ]
    printer = Printer()
    out = []
    for build in builders:
        out.append(printer.doprint(build()))
    return out


@pytest.mark.torch
def test_printer_output_parses_and_matches_torch_eval(torch_interp):
    printed = _printed_guards(torch_interp)
    joined = "\n".join(printed)
    for expected in ["torch._sym_sqrt(", "math.ceil(", "math.trunc(", "round(", "Where(",
                     "OpaqueUnaryFn_exp(", "IntInfinity()", "IsNonOverlappingAndDenseIndicator(",
                     " if ", "math.inf", " ** ", " & ", "abs(", "max(", "torch.sym_float("]:  # fmt: skip
        assert expected in joined, expected
    namespace = dict(torch_interp.SYMPY_INTERP)
    for source in printed:
        g = parse_guards(source)
        for vals in [(1, 1, 1), (2, 3, 4), (5, 2, 7), (0, 1, 2), (8, 4, 1), (-3, 2, 5), (7, 0, 3)]:
            values = dict(zip(("t0", "t1", "t2"), vals, strict=True))
            check_against_oracle(source, values, namespace)
        for clause in g.clauses:
            assert isinstance(GS.to_sympy(clause), sympy.Basic)


# ---------------------------------------------------------------------------
# Hostile guards: no clause may stall or exhaust the machine (MAX_INT_BITS).
# ---------------------------------------------------------------------------


def test_huge_constant_arithmetic_is_refused_at_parse_time_not_computed():
    """The 1 KB attack: 20 clauses each of which would cost ~22 s of CPU."""
    source = " and ".join([f"3**4194304 // 3**2000000 > {T0}"] * 20)
    start = time.thread_time()
    with pytest.raises(GuardParseError, match="MAX_INT_BITS"):
        parse_guards(source)
    assert time.thread_time() - start < 2  # a stall detector, not a speed target


@pytest.mark.parametrize("source", [
    "0x" + "f" * 1100 + f" > {T0}",                       # a hex literal past the bound
    f"2**4095 * 2**4095 > {T0}",                           # a constant product
    f"{T0} > 5 or 7**5000 > 1",                            # even where eval would not go
    f"IsNonOverlappingAndDenseIndicator(2**4000, 2**4000, 1, 2**4000) == {T0}",
])
def test_constant_sub_expressions_past_the_int_bound_are_unparsable(source):
    with pytest.raises(GuardParseError, match="MAX_INT_BITS"):
        parse_guards(source)


@pytest.mark.parametrize("source,values", [
    (f"({T0} ** {T1}) // 3 > 0", {"t0": 3, "t1": 4_000_000}),
    (f"{T0} * {T0} * {T0} > 0", {"t0": 2**2000, "t1": 0}),
    (f"IsNonOverlappingAndDenseIndicator({T0}, {T0}, {T0}, 1, {T1}, {T1}) == 1",
     {"t0": 2**2100, "t1": 2**2100}),
])
def test_evaluation_past_the_int_bound_is_undecided_and_quick(source, values):
    g = parse_guards(source)
    start = time.thread_time()
    r = g.clauses[0].evaluate(values)
    assert time.thread_time() - start < 1
    assert r.status == "unknown" and "MAX_INT_BITS" in r.error


def test_constant_sub_expressions_that_raise_still_raise_where_eval_would():
    """Computing constants at parse time changes no outcome: what raises, raises
    at evaluation, and only on the path eval takes."""
    for source in [f"(1 // 0) if {T0} > 5 else 1", f"{T0} > 1 // 0", f"1 // 0 + 1 + {T0} > 0",
                   f"Where(1, 2, 3) > {T0}", f"{T0} or Where(1, 2, 3)", f"(2**10 * 3 * {T0}) > 5",
                   f"math.sqrt(-1) if {T0} else 2 ** 4000 // 3 ** 2000"]:
        for t0 in (0, 1, 7):
            check_against_oracle(source, {"t0": t0})


def test_the_costliest_operations_within_the_bound_stay_cheap():
    """Operands at the bound: each clause costs microseconds (stall detector)."""
    source = " and ".join([f"({T0} ** 4000) // ({T1} ** 2000) + {T0} ** 4000 % ({T1} ** 2500 + 1) > 0"] * 500)
    assert len(source) <= G.MAX_GUARD_CHARS
    g = parse_guards(source)
    start = time.thread_time()
    verdict = g.evaluate({"t0": 2, "t1": 3})
    assert verdict.status == "pass" and len(verdict.results) == 500
    assert time.thread_time() - start < 2


def test_every_value_within_the_bound_can_be_printed():
    """Values are at most MAX_INT_BITS (+ a few bits for sums): under Python's
    4,300-digit limit on int-to-str, so no verdict can crash its own rendering."""
    total = parse_guards(" + ".join([f"{T0} ** 4096"] * 1000)).clauses[0].evaluate({"t0": 2}).value
    assert total == 1000 * 2**4096 and len(str(total)) < 4300
