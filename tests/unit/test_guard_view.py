"""Grouping and rendering guards: every summary is checked against evaluation."""

from __future__ import annotations

import json
import math
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.display import compare_entries, expr_tree, render
from fxcache_core.guards.expr import parse_guards
from fxcache_core.guards.summary import summarize
from fxcache_core.guards.sympy_form import to_sympy
from tests.helpers import GUARDS_CORPUS

EXPRS = sorted({e["guards_expr"] for e in json.loads(GUARDS_CORPUS.read_text()) if e["guards_expr"]})


def _ranges(src):
    return {r.placeholder: r for r in summarize(parse_guards(src)).ranges}


def test_ranges_combine_bounds_over_the_integers():
    r = _ranges("2 <= L['t0'] and L['t0'] < 11 and 3*L['t1'] <= 4096 and -L['t2'] <= -5 and L['t2'] != 5")
    assert (r["t0"].lower, r["t0"].upper) == (2, 10)
    assert (r["t1"].lower, r["t1"].upper) == (None, 1365)  # floor(4096 / 3)
    assert (r["t2"].lower, r["t2"].upper, r["t2"].excluded) == (6, None, ())  # 5 excluded at the bound
    assert r["t0"].render("s77") == "2 <= s77 <= 10"


def test_equalities_exclusions_and_empty_ranges():
    r = _ranges("L['t0'] == 7 and L['t1'] != 3 and 0 <= L['t1'] and L['t2'] > 4 and L['t2'] < 5 and 2*L['t3'] == 5")
    assert (r["t0"].lower, r["t0"].upper) == (7, 7) and r["t0"].render("s0") == "s0 == 7"
    assert r["t1"].excluded == (3,) and r["t1"].lower == 0
    assert r["t2"].empty and "never holds" in r["t2"].render("s2")
    assert r["t3"].empty  # 2*t == 5 has no integer solution


def test_divisibility_relations_and_the_rest():
    s = summarize(parse_guards(
        "(L['t0'] % 4) == 0 and L['t0'] == (4*(L['t0'] // 4)) and L['t1'] == L['t0'] and "
        "max(1, L['t1'] // 3) > 1 and (L['t0'] % L['t1']) == 0"))
    assert [(d.modulus, d.residue, d.clauses) for d in s.divisibility] == [(4, 0, (0, 1))]
    assert s.divisibility[0].render({"t0": "s77"}) == "s77 % 4 == 0"
    assert [c.index for c in s.relations] == [2, 4]
    assert [c.index for c in s.other] == [3]


def test_every_clause_lands_in_exactly_one_group():
    for src in EXPRS or ["2 <= L['t0'] and (L['t0'] % 4) == 0 and L['t0'] != L['t1']"]:
        g = parse_guards(src)
        s = summarize(g)
        used = [i for r in s.ranges for i in r.clauses] + [i for d in s.divisibility for i in d.clauses]
        used += [c.index for c in s.relations] + [c.index for c in s.other]
        assert sorted(used) == list(range(len(g.clauses))), src


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(EXPRS or ["2 <= L['t0']"]), st.lists(st.integers(-20, 5000), min_size=8, max_size=8))
def test_summary_is_sound_against_evaluation(src, vals):
    """Where the guards hold, each range and divisibility fact holds; where a fact fails, so do the guards."""
    g = parse_guards(src)
    env = {p: vals[int(p[1:]) % 8] for p in g.placeholders}
    s = summarize(g)
    facts_hold = all(
        (r.lower is None or env[r.placeholder] >= r.lower)
        and (r.upper is None or env[r.placeholder] <= r.upper)
        and env[r.placeholder] not in r.excluded
        for r in s.ranges
    )
    assert not (g.holds(env) and not facts_hold), (src, env)


# A reference evaluator of expr_tree output: the JSON tree must mean what the clause means.
_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
        "==": operator.eq, "!=": operator.ne, "//": operator.floordiv, "%": operator.mod,
        "/": operator.truediv, "**": operator.pow, "max": max, "min": min, "abs": abs,
        "math.floor": math.floor, "math.ceil": math.ceil}


def _eval_tree(t, env):
    if "placeholder" in t:
        return env[t["placeholder"]]
    for leaf in ("int", "float", "bool"):
        if leaf in t:
            return t[leaf]
    args = [_eval_tree(a, env) for a in t["args"]]
    if t["op"] == "+":
        return sum(args)
    if t["op"] == "*":
        return math.prod(args)
    return _OPS[t["op"]](*args)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(EXPRS or ["2 <= L['t0']"]), st.lists(st.integers(1, 300), min_size=8, max_size=8))
def test_expr_tree_means_what_the_clause_means(src, vals):
    g = parse_guards(src)
    env = {p: vals[int(p[1:]) % 8] for p in g.placeholders}
    for c in g.clauses:
        r = c.evaluate(env)
        try:
            got = _eval_tree(expr_tree(to_sympy(c)), env)
        except ZeroDivisionError:
            assert r.status == "error"
            continue
        if r.status in ("pass", "fail"):
            assert bool(got) == (r.status == "pass"), (c.text, env)


def test_renderings_name_symbols():
    g = parse_guards("(L['t0'] % 4) == 0 and L['t0'] == (4*(L['t0'] // 4)) and 8 <= L['t0']")
    names = {"t0": "s77"}
    assert render(g.clauses[2], "plain", names) == "8 <= s77"
    assert "≤" in render(g.clauses[2], "pretty", names)
    assert render(g.clauses[2], "latex", names) == r"8 \leq s_{77}"
    assert r"\left\lfloor" in render(g.clauses[1], "latex", names)
    assert expr_tree(to_sympy(g.clauses[2]), names) == {
        "op": "<=", "args": [{"int": 8}, {"placeholder": "t0", "symbol": "s77"}]}
    with pytest.raises(ValueError):
        render(g.clauses[0], "html", names)


def test_all_corpus_clauses_render_in_every_format():
    for src in EXPRS:
        for c in parse_guards(src).clauses:
            for fmt in ("plain", "pretty", "latex"):
                assert render(c, fmt, {"t0": "s77"}), (src, fmt)


def test_compare_entries_finds_what_separates_regions():
    a = parse_guards("2 <= L['t0'] and L['t0'] <= 7 and 2 <= L['t1']")
    b = parse_guards("16 <= L['t0'] and 2 <= L['t1']")
    cmp = compare_entries([a, b, None])
    assert cmp.common == ()  # the no-guards entry shares nothing
    cmp = compare_entries([a, b], {"t0": "s77", "t1": "s27"})
    assert cmp.common == ("s27 >= 2",)
    assert cmp.only == (("s77 >= 2", "s77 <= 7"), ("s77 >= 16",))


@settings(max_examples=400, deadline=None)
@given(a=st.integers(-5, 5).filter(bool), b=st.integers(-20, 20), c=st.integers(-50, 50),
       op=st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), side=st.booleans(),
       t=st.integers(-100, 100))
def test_one_linear_clause_and_its_range_are_equivalent(a, b, c, op, side, t):
    """For a*t + b OP c (either way round) the derived range holds exactly where the clause does."""
    lhs = f"{a}*L['t0'] + {b}"
    src = f"{lhs} {op} {c}" if side else f"{c} {op} {lhs}"
    g = parse_guards(src)
    (r,) = summarize(g).ranges
    inside = ((r.lower is None or t >= r.lower) and (r.upper is None or t <= r.upper)
              and t not in r.excluded and not r.empty)
    assert inside == g.holds({"t0": t}), (src, t, r)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(EXPRS or ["(L['t0'] % 4) == 0"]), st.lists(st.integers(-20, 5000), min_size=8, max_size=8))
def test_divisibility_facts_hold_wherever_the_guards_hold(src, vals):
    from fxcache_core.guards.display import _sstr

    g = parse_guards(src)
    env = {p: vals[int(p[1:]) % 8] for p in g.placeholders}
    if not g.holds(env):
        return
    for d in summarize(g).divisibility:
        text = _sstr(d.expr, {p: f"L['{p}']" for p in g.placeholders})
        assert parse_guards(f"(({text}) % {d.modulus}) == {d.residue}").holds(env), (src, env)


def test_hostile_products_are_bounded():
    """Big-int products are refused (constant ones at parse time, naming the bound);
    huge products are not expanded for ranges."""
    src = "L['t0'] <= " + "*".join(["2**4194000"] * 160)
    with pytest.raises(GuardParseError, match="MAX_INT_BITS"):
        parse_guards(src)
    v = parse_guards("L['t0'] <= " + "*".join(["L['t0']"] * 160)).evaluate({"t0": 2**100})
    assert v.status == "unknown" and "MAX_INT_BITS" in v.results[0].error
    many = " * ".join(f"(L['t0'] + {i})" for i in range(400)) + " <= 5"
    s = summarize(parse_guards(many))
    assert s.ranges == () and len(s.other) == 1  # left whole, not expanded into a degree-400 poly
