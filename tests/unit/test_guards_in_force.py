"""The installed-guards check (fxcache_core.guards.in_force) on hand-written guard sets.

Synthetic: the guards Dynamo prints (``dynamo_cpp_guards_str`` code parts over
sources) written out by hand, to cover forms a few real runs do not: linear
bounds, divisibility, relations, guards fxcache cannot read. Real hits (and a
hit with its guard installation suppressed in torch) are in tests/torch/test_explain.py.
"""

from __future__ import annotations

from fxcache_core.guards.expr import parse_guards
from fxcache_core.guards.in_force import check_installed

X0, X1, T0 = "L['x'].size()[0]", "L['x'].size()[1]", "L['target'].size()[0]"
SRC = {"t0": X0, "t1": X1}
VALS = {X0: 6, X1: 4, T0: 6, "L['x'].stride()[0]": 4, "L['x'].stride()[1]": 1}
DYNAMO = (
    "___check_obj_id(G['torch'], 1234)",                    # not a shape guard: never read
    "hasattr(L['x'], '_dynamo_dynamic_indices') == False",  # neither
    f"{T0} == {X0}",
    f"2 <= {X0} <= 24",
    f"2 <= {X1}",
    f"{X0} % 2 == 0",
    f"{X0} < {X1} * 8",
)


def _check(expr, in_force=DYNAMO, sources=SRC, values=VALS):
    return check_installed(expr, sources, values, in_force)


def test_clauses_dynamo_printed_in_another_form_are_installed():
    # Chains split, sides swapped, == symmetric.
    r = _check("2 <= L['t0'] and L['t0'] <= 24 and 24 >= L['t0'] and (L['t0'] % 2) == 0 and "
               "0 == L['t0'] % 2 and L['t1'] * 8 > L['t0']")
    assert r.status == "passed", r
    assert [c.guard for c in r.clauses][:2] == [f"2 <= {X0}", f"{X0} <= 24"]


def test_a_clause_the_ranges_in_force_imply_is_installed():
    r = _check("L['t0'] <= 100 and 3*L['t0'] <= 4096 and L['t0'] != 1 and L['t0'] >= 0")
    assert r.status == "passed", r
    assert {c.guard for c in r.clauses} == {"ranges"}


def test_a_clause_missing_from_dynamos_guards_comes_with_a_call_that_passes_them_and_fails_it():
    r = _check("L['t0'] <= 16 and (L['t0'] % 3) == 0")
    assert r.status == "failed"
    for c in r.clauses:
        assert c.status == "missing" and c.witness
        # The witness moves the sizes Dynamo made equal together.
        assert c.witness[X0] == c.witness.get(T0, c.witness[X0])
        env = {"t0": c.witness[X0], "t1": VALS[X1]}
        assert not parse_guards(c.clause).holds(env)
        dyn = {X0: c.witness[X0], X1: VALS[X1], T0: c.witness.get(T0, VALS[T0])}
        assert 2 <= dyn[X0] <= 24 and dyn[X0] % 2 == 0 and dyn[T0] == dyn[X0] and dyn[X0] < dyn[X1] * 8


def test_a_guard_fxcache_cannot_read_on_the_clauses_sizes_makes_it_undecided_not_missing():
    in_force = (*DYNAMO, f"OpaqueThing({X0}) == 3")
    r = _check("L['t0'] <= 16", in_force=in_force)
    assert r.status == "undecided"
    assert "cannot read" in r.clauses[0].reason


def test_without_final_guards_or_sources_the_check_says_why():
    assert _check("L['t0'] <= 16", in_force=None).status == "undecided"
    r = _check("L['t0'] <= 24 and L['t2'] <= 4")
    assert r.clauses[0].status == "installed"
    assert r.clauses[1].status == "undecided" and "t2" in r.clauses[1].reason
    assert _check(None).status == "passed" and _check("").clauses == ()
