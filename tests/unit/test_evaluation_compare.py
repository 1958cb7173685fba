"""The evaluation harness's comparison (tests/harness/evaluation/compare.py) cannot say "all right"
when fxcache is wrong: each grade is reached from answers written here by hand.

Synthetic answers (torch's recorded lookups and match's ``--json``, in their real shapes):
what is tested is the grading of two answers, not torch; the evaluation itself
(``python -m tests.harness.evaluation``) asks torch.
"""

from __future__ import annotations

from tests.harness.evaluation import compare, report
from tests.harness.evaluation.calls import describe, short

AOT, FX, NEW = "a" + "k" * 51, "f" + "x" * 51, "a" + "n" * 51
E1, E2, FE = "e1" + "0" * 49, "e2" + "0" * 49, "fe" + "0" * 49
PRESENT = {AOT, FX}


def _aot(hit=None, key=AOT, mode="guards"):
    return {"kind": "aotautograd", "key": key, "hit": hit, "mode": mode,
            "status": "hit" if hit else ("full_miss" if key not in PRESENT else "guard_miss")}


def _fx(hit, mode="exact"):
    return {"kind": "fxgraph", "key": FX, "hit": hit, "mode": mode, "status": "hit" if hit else "guard_miss"}


def _report(status, entry=None, key=AOT, results=None, code="hit"):
    verdict = {"function": "f", "status": status, "entry": entry, "key": key, "keys": [AOT],
               "line": f"{status.upper()} {entry or ''}", "why_code": code}
    return {"verdicts": {"functions": [verdict], "exit_code": 0}, "results": results or []}


def _result(status, hit=None, loads=(), key=AOT, kind="aotautograd"):
    return {"kind": kind, "key": key, "status": status, "hit": hit,
            "loads": [{"key": FX, "entry": e} for e in loads], "reason_codes": [], "uncertain_codes": []}


def test_torch_verdicts_from_lookups():
    assert compare.torch_verdict([_aot(E1), _fx(FE)], PRESENT).status == "hit"
    assert compare.torch_verdict([_aot(E1), _fx(None)], PRESENT).status == "miss"  # its FX entry is gone
    assert compare.torch_verdict([_aot(None)], PRESENT).status == "miss"
    assert compare.torch_verdict([_aot(None, key=NEW)], PRESENT).status == "new-graph"
    raised = compare.torch_verdict([], PRESENT, {"type": "ConstraintViolationError", "message": "m"})
    assert raised.status == "raises" and "ConstraintViolationError" in raised.text()


def test_a_lookup_of_an_abandoned_trace_does_not_decide():
    # Dynamo traced the frame, looked up a key it then never wrote, traced again more
    # specialized and looked up the cache's key (Wav2Vec2's forward, torch 2.13).
    lookups = [_aot(None, key=NEW), _aot(E1), _fx(FE)]
    assert compare.torch_verdict(lookups, PRESENT, writes=[]).status == "hit"
    # ... but a new key the call wrote is torch's new graph.
    written = [{"kind": "aotautograd", "key": NEW}]
    assert compare.torch_verdict(lookups, PRESENT, writes=written).status == "new-graph"


def test_a_hit_of_another_entry_is_wrong_and_the_same_entry_right():
    tv = compare.torch_verdict([_aot(E1), _fx(FE)], PRESENT)
    assert compare.function_line(_report("hit", E2), None, tv, "f").grade == compare.WRONG
    assert compare.function_line(_report("hit", E1), None, tv, "f").grade == compare.RIGHT


def test_a_decided_verdict_torch_did_not_give_is_wrong():
    new = compare.torch_verdict([_aot(None, key=NEW)], PRESENT)
    assert compare.function_line(_report("hit", E1), None, new, "f").grade == compare.WRONG
    assert compare.function_line(_report("miss"), None, new, "f").grade == compare.WRONG
    assert compare.function_line(_report("new-graph", key=None), None, new, "f").grade == compare.RIGHT
    raised = compare.torch_verdict([], PRESENT, {"type": "ConstraintViolationError", "message": "m"})
    assert compare.function_line(_report("hit", E1), None, raised, "f").grade == compare.WRONG


def test_undecided_and_a_rejected_description_are_counted_apart():
    tv = compare.torch_verdict([_aot(E1), _fx(FE)], PRESENT)
    assert compare.function_line(_report("undecided", code="input-not-given"), None, tv, "f").grade == \
        compare.UNDECIDED
    line = compare.function_line(None, "fxcache: error: No such option: --inputs", tv, "f")
    assert line.grade == compare.NOT_DESCRIBABLE and "--inputs" in line.fxcache


def test_key_lines_grade_each_lookup_and_a_hit_torch_never_looked_up():
    lookups = [_aot(E1), _fx(FE)]
    right = compare.key_lines(_report("hit", E1, results=[_result("hit", E1, loads=[FE])]), lookups, PRESENT)
    assert [ln.grade for ln in right] == [compare.RIGHT, compare.RIGHT]
    wrong_entry = compare.key_lines(_report("hit", E1, results=[_result("hit", E1, loads=[E2])]), lookups, PRESENT)
    assert [ln.grade for ln in wrong_entry] == [compare.RIGHT, compare.WRONG]  # loads another FX entry
    said_miss = compare.key_lines(_report("miss", results=[_result("miss")]), lookups, PRESENT)
    assert said_miss[0].grade == compare.WRONG
    # torch traced another graph: the cache's key was never looked up, match called it a hit.
    never = compare.key_lines(_report("hit", E1, results=[_result("hit", E1)]), [_aot(None, key=NEW)], PRESENT)
    assert [ln.grade for ln in never] == [compare.WRONG] and never[0].torch == "not looked up"
    unsure = compare.key_lines(_report("undecided", results=[_result("undecided")]), [_aot(E1)], PRESENT)
    assert [ln.grade for ln in unsure] == [compare.UNDECIDED]


def test_one_wrong_line_shows_in_the_totals_and_the_report():
    tv = compare.torch_verdict([_aot(None, key=NEW)], PRESENT)
    line = compare.function_line(_report("hit", E1), None, tv, "f")
    fam = {"family": "fam", "doc": "d", "fn": "f", "dynamic": None, "keys_in_cache": 2, "seconds": 1.0,
           "verdicts": compare.tally([line]), "key_lines": compare.tally([]),
           "rows": [{"call": "x=[4]", "warm_up": [], "verdict": line.to_json(), "keys": []}]}
    t = report.totals([fam])
    assert t["verdicts"][compare.WRONG] == 1 and compare.exit_status(t) == 1
    assert compare.exit_status(report.totals([])) == 0
    text = report.markdown([fam], {})
    assert "| `x=[4]` | wrong | NEW GRAPH" in text


def test_calls_are_described_as_the_docs_write_them():
    call = {"x": {"t": [8, 16], "mark": [0], "min": 2, "max": 16}, "xs": {"list": [[3, 4]]},
            "clip": True, "act": "gelu", "mask": None, "dims": {"tuple": [2, 3]}, "n": 9, "lr": 0.1,
            "ids": {"t": [2, 8], "dtype": "int64"}}
    assert describe(call) == [
        "--inputs", "x=[8,16]:mark_dynamic=[0]:min=2:max=16", "--shapes", "xs[0]=[3,4]",
        "--inputs", "clip=True", "--inputs", "act='gelu'", "--inputs", "mask=None", "--inputs", "dims=(2,3)",
        "--shapes", "n=9", "--shapes", "lr=0.1", "--shapes", "ids=[2,8]:dtype=int64"]
    assert short({"dims": {"tuple": [2]}}) == "dims=(2,)"


def test_a_calls_module_mode_is_said_where_the_call_says_it():
    # a family built in train mode can describe an eval call; without "@train" the mode is left out
    assert describe({"@train": False, "x": [4, 8]}) == ["--inputs", "self.training=False", "--shapes", "x=[4,8]"]
    assert describe({"@train": True, "x": [4, 8]})[:2] == ["--inputs", "self.training=True"]
    assert describe({"x": [4, 8]}) == ["--shapes", "x=[4,8]"]


def test_a_hit_then_a_raise_is_right_only_as_an_error_naming_that_entry():
    # torch loaded E1, then raised (a marked range wider than the entry's guards)
    tv = compare.torch_verdict([_aot(E1), _fx(FE)], PRESENT, {"type": "ConstraintViolationError", "message": "m"})
    assert compare.function_line(_report("error", E1, code="mark-range-raises"), None, tv, "f").grade == compare.RIGHT
    assert compare.function_line(_report("error", E2, code="mark-range-raises"), None, tv, "f").grade == compare.WRONG
    assert compare.function_line(_report("error", E1, code="guard-raises"), None, tv, "f").grade == compare.WRONG


def test_an_fx_lookup_behind_an_aotautograd_key_match_did_not_bind_is_undecided_not_wrong():
    lookups = [_aot(E1), _fx(FE)]
    unbound = compare.key_lines(_report("undecided", results=[]), lookups, PRESENT)
    assert [ln.grade for ln in unbound] == [compare.UNDECIDED, compare.UNDECIDED], unbound
    # ... while an AOTAutograd key it decided, whose FX entry it names wrongly, stays wrong.
    decided = compare.key_lines(_report("hit", E1, results=[_result("hit", E1)]), lookups, PRESENT)
    assert [ln.grade for ln in decided] == [compare.RIGHT, compare.WRONG], decided


def test_a_call_whose_trace_raised_before_any_lookup_is_right_as_new_graph_or_error_only():
    # torch looked nothing up: its trace of the call raised (float64 input, float32 weights)
    tv = compare.torch_verdict([], PRESENT, {"type": "RuntimeError", "message": "expected scalar type Float"})
    assert tv.status == "raises"
    assert compare.function_line(_report("new-graph", key=None), None, tv, "f").grade == compare.RIGHT
    assert compare.function_line(_report("error", code="guard-raises"), None, tv, "f").grade == compare.RIGHT
    assert compare.function_line(_report("hit", E1), None, tv, "f").grade == compare.WRONG
    assert compare.function_line(_report("miss"), None, tv, "f").grade == compare.WRONG
    # a call that made no lookup and raised nothing stays an ERROR-only case
    quiet = compare.torch_verdict([], PRESENT)
    assert compare.function_line(_report("new-graph", key=None), None, quiet, "f").grade == compare.WRONG
