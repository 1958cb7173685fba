"""``fxcache match`` against torch's own lookups, in fresh processes (the evaluation's torch
side: a fork server that imported torch and compiled nothing, a child per build and per
query), on caches this module builds in a temp dir: an ``nn.Parameter`` argument against a
plain tensor (tests/harness/evaluation/families_r14h.py), and flags whose skipped body other
code may make up, or cannot (families_r14h.py and the two_flags family of families_r13.py).
No verdict nor key line may be wrong; the rules under test decide where named below and
leave the rest UNDECIDED with their codes. Built in the background (one fork server for the
session's family builds: tests/harness/family_runs.py)."""

from __future__ import annotations

import pytest

from tests.harness.background import builder, prebuilt
from tests.harness.family_runs import rows_by_note, wrong_lines

pytestmark = pytest.mark.torch

_FAMILIES = ("param_built", "param_nograd_built", "plain_built", "flag_loop_auto", "two_flags_apart_auto",
             "two_flags_auto")


@builder("made_up_and_params", order=7)
def _built() -> dict[str, dict]:
    from tests.harness.family_runs import evaluated

    return evaluated("made-up-and-params", _FAMILIES)


@pytest.fixture(scope="session")
def made_up_and_params() -> dict[str, dict]:
    return prebuilt("made_up_and_params")


@pytest.mark.parametrize("family", _FAMILIES)
def test_no_verdict_and_no_key_line_is_wrong(made_up_and_params, family):
    assert not wrong_lines(made_up_and_params[family])


def test_a_plain_tensor_where_the_key_took_a_parameter_is_another_key(made_up_and_params):
    rows = rows_by_note(made_up_and_params, "param_built")
    assert rows["w a Parameter, as built"]["verdict"]["grade"] == "right"
    assert rows["w a Parameter, as built"]["verdict"]["reason"] == "hit"
    for note in ("w a plain tensor", "w a plain tensor that requires grad"):
        v = rows[note]["verdict"]
        assert (v["grade"], v["reason"]) == ("right", "parameter-differs"), v  # requires grad or not
    # only the static input differs: a Parameter without grad, built so, against a plain tensor
    nograd = rows_by_note(made_up_and_params, "param_nograd_built")
    assert nograd["w a Parameter without grad, as built"]["verdict"]["reason"] == "hit"
    v = nograd["w a plain tensor"]["verdict"]
    assert (v["grade"], v["reason"]) == ("right", "parameter-differs"), v


def test_a_parameter_where_the_key_took_a_plain_tensor_is_another_key(made_up_and_params):
    rows = rows_by_note(made_up_and_params, "plain_built")
    assert rows["w a plain tensor, as built"]["verdict"]["reason"] == "hit"
    v = rows["w a Parameter"]["verdict"]
    assert (v["grade"], v["reason"]) == ("right", "parameter-differs"), v


def test_a_skipped_body_other_code_may_make_up_leaves_the_key_undecided(made_up_and_params):
    two = rows_by_note(made_up_and_params, "two_flags_auto")
    lines = [k for r in two.values() for k in r["keys"] if k["reason"] == "branch-may-be-made-up"]
    assert lines and all(k["grade"] == "undecided" for k in lines), two  # torch HIT the a=True key for b=True
    loop = rows_by_note(made_up_and_params, "flag_loop_auto")
    v = loop["a=False: the loop's relu"]["verdict"]
    assert (v["grade"], v["reason"]) == ("undecided", "branch-may-be-made-up"), v


def test_a_skipped_body_nothing_else_makes_still_rules_the_key_out(made_up_and_params):
    """b=True against the key built with a=True: its relu is nothing else's (b's body makes a
    cos), so the key is ruled out by a's side, and torch traced another graph."""
    from tests.helpers import cli_json, run_fxcache

    row = rows_by_note(made_up_and_params, "two_flags_apart_auto")["b=True: cos, no relu"]
    assert row["torch_lookups"][0]["status"] == "full_miss", row  # a key not in the cache: another graph
    body = cli_json(run_fxcache("--cache-dir", made_up_and_params["two_flags_apart_auto"]["cache_dir"], "match", "--json",
                                *row["match_args"]))
    ruled = {r["key"]: r for r in body["results"] if r["kind"] == "aotautograd" and r["status"] == "no-fit"}
    assert any("branch-not-taken" in (r.get("reason_codes") or []) for r in ruled.values()), body["results"]
