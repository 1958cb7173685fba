"""``fxcache match`` accounts for every Python argument the compiled code reads, as torch's lookups show.

The cases of ``tests.harness.cases_args`` (a bool the code branches on, a str it
compares, an optional tensor left out, a graph break's local) are in the session's
real cache. For each call of ``ARG_CALLS`` torch's own lookups (each a fresh process's
first call on a copy of the cache, recorded by ``python -m tests.harness.recorded``)
are the judge: where the cache holds the evidence, match's verdict for the function is
torch's, and its keys are looked up as torch looked them up; where it holds none
(``clip_default``, built with its default only), the verdict is UNDECIDED, naming the
parameter, whatever torch did, and a run's trace (``--from-trace``, or explained into
the usage store) decides it.
"""

from __future__ import annotations

import json
import shutil

import pytest

from tests.harness.background import prebuilt
from tests.helpers import (
    assert_match_agrees_with_answer,
    assert_verdict_as_torch,
    match_args_for,
    run_fxcache,
    torch_status,
)

pytestmark = pytest.mark.torch

# (case, call description: a shape per positional parameter, then a dict of keyword values).
ARG_CALLS = [
    ("clip_flag", [[8, 16]]),                           # new graph: clip left out (False); the key clamps
    ("clip_flag", [[8, 16], {"clip": True}]),           # hit: the key's graph went through the if's body
    ("clip_flag", [[8, 16], {"clip": False}]),          # new graph
    ("act_choice", [[7, 3], {"act": "gelu"}]),          # hit, the gelu key
    ("act_choice", [[7, 3]]),                           # hit, the relu key (the default)
    ("act_choice", [[7, 3], {"act": "tanh"}]),          # hit, the relu key: 'tanh' goes the else way too
    ("optional_scale", [[6, 5]]),                       # hit: left out, None, as built
    ("step_loss", [[6, 5]]),                            # hit in both frames (loss=[] names the resume's local)
]
# Calls whose verdict must stay undecided: the cache holds nothing that says which value
# clip_default's key was traced with (torch: a hit, then another graph).
UNDECIDED_CALLS = [
    ("clip_default", [[6, 5]]),
    ("clip_default", [[6, 5], {"clip": True}]),
    ("optional_scale", [[6, 5], [5]]),                  # a tensor where the key was traced with None
]


def _id(case: str, shapes: list) -> str:
    return f"{case}-{json.dumps(shapes).replace(' ', '')}"


@pytest.fixture(scope="session")
def traced() -> dict:
    """The traced runs (tests/torch/test_explain.py's background build): by this name, so
    that collecting this file starts it."""
    return prebuilt("traced")


@pytest.fixture(scope="session")
def arg_answers(real_cache) -> dict[str, dict]:
    from tests.harness.recorded import answers_for

    return answers_for(real_cache.summary, "real")


def _match(root, case: str, shapes: list, *extra: str) -> tuple[int, dict]:
    proc = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", case, *match_args_for(case, shapes),
                       *extra)
    body = json.loads(proc.stdout)
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    return proc.returncode, body


@pytest.mark.parametrize("case,shapes", ARG_CALLS, ids=[_id(*c) for c in ARG_CALLS])
def test_each_key_is_looked_up_as_torch_looked_it_up(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], own)


@pytest.mark.parametrize("case,shapes", [c for c in ARG_CALLS if c[0] != "step_loss"],
                         ids=[_id(*c) for c in ARG_CALLS if c[0] != "step_loss"])
def test_the_verdict_is_torchs_and_says_what_it_rests_on(real_cache, arg_answers, case, shapes):
    """The function's verdict is what torch did; its JSON accounts for every parameter, and
    a Python argument the key does not take is accounted by evidence (the side of an if its
    graph went through, a tensor parameter it takes nothing from), never left unsaid."""
    from tests.harness.oracle import call_id

    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    if v["status"] == "hit":
        params = {p["name"]: p for p in v["params"]}
        assert params and all(p["status"] == "accounted" for p in params.values()), params
        constant = [p for n, p in params.items() if n != "x"]
        assert constant and {p["how"] for p in constant} <= {"branch", "no-input-none"}, constant
    else:
        assert v["why_code"] == "branch-not-taken", v


def test_a_flag_left_out_is_its_default_and_the_key_traced_with_the_other_value_is_another_graph(real_cache):
    """The issue's case: clip_flag compiled with clip=True; a call that leaves clip out is
    clip=False, which skips the body the key's graph has ops from (the clamp)."""
    rc, body = _match(real_cache.root, "clip_flag", [[8, 16]])
    (fv,) = body["verdicts"]["functions"]
    assert rc == 1 and fv["phases"]["first"]["status"] == "new-graph", fv
    assert "clip=False (its default) fails `if clip:`" in fv["phases"]["first"]["line"], fv
    rc, body = _match(real_cache.root, "clip_flag", [[8, 16], {"clip": True}])
    (fv,) = body["verdicts"]["functions"]
    (clip,) = [p for p in fv["params"] if p["name"] == "clip"]
    assert rc == 0 and clip == {"name": "clip", "value": "True", "given": True, "status": "accounted",
                                "how": "branch", "detail": clip["detail"]}, clip
    human = run_fxcache("--cache-dir", str(real_cache.root), "match", "--fn", "clip_flag",
                        *match_args_for("clip_flag", [[8, 16], {"clip": True}]))
    assert "rests on clip=True: the graph went through `if clip:`" in human.stdout, human.stdout


@pytest.mark.parametrize("case,shapes", UNDECIDED_CALLS, ids=[_id(*c) for c in UNDECIDED_CALLS])
def test_without_evidence_the_verdict_stays_undecided_whatever_torch_does(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    name = "scale" if case == "optional_scale" else "clip"
    assert fv["line"].startswith(f"UNDECIDED: {name}") or name in fv["line"], fv["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(arg_answers[call_id(case, shapes)]["lookups"], present)
    assert torch_did == ("hit" if shapes == [[6, 5]] else "new-graph"), torch_did  # torch varies with it


def test_a_resume_frames_local_given_binds_to_its_own_frame(real_cache, arg_answers):
    """step_loss breaks the graph: the first frame takes x, the resume frame the local
    loss (a 0-d tensor), named --inputs loss=[] as the docs say. Each frame's verdict is
    torch's: the first frame's is not undecided over a tensor it never takes."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id("step_loss", [[6, 5]])]
    rc, body = _match(real_cache.root, "step_loss", [[6, 5]])
    present = {k.key for k in scan_cache(real_cache.root).keys}
    aot = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]
    assert len(aot) == 2 and all(lk["hit"] and lk["key"] in present for lk in aot), aot
    statuses = {f["function"]: f["status"] for f in body["verdicts"]["functions"]}
    assert rc == 0 and set(statuses.values()) == {"hit"} and len(statuses) == 2, statuses
    assert torch_status(answer["lookups"], present) == "hit"


def test_a_runs_trace_decides_what_the_cache_alone_cannot(real_cache, traced, tmp_path):
    """clip_default's key, built with the default: the cache alone cannot say which way
    `if clip:` went. The traced run (tests.harness.traced, plan ``flags``) called it with
    the default and hit that key; Dynamo's guard L['clip'] == False in its trace decides:
    given as the call (--from-trace), or explained into the usage store for later matches."""
    run = traced["flags"]
    (aot,) = [lk for lk in run["torch"]["lookups"] if lk["kind"] == "aotautograd"]
    assert aot["hit"], aot
    root = tmp_path / "cache"
    shutil.copytree(real_cache.root, root, symlinks=True)
    env = {"FXCACHE_INDEX_DIR": str(tmp_path / "index")}

    proc = run_fxcache("--cache-dir", str(root), "match", "--json", "--from-trace", str(run["trace"]),
                       "--compile", "0/0", env=env)
    body = json.loads(proc.stdout)
    (fv,) = body["verdicts"]["functions"]
    assert proc.returncode == 0 and (fv["key"], fv["entry"]) == (aot["key"], aot["hit"]), fv
    assert body["inputs"]["L['clip']"] == "False"
    (clip,) = [p for p in fv["params"] if p["name"] == "clip"]
    assert (clip["how"], clip["status"]) == ("trace-guard", "accounted"), clip

    args = ["match", "--json", "--fn", "clip_default", *match_args_for("clip_default", [[6, 5]])]
    before = run_fxcache("--cache-dir", str(root), *args, env=env)
    assert before.returncode == 3, before.stdout  # the cache alone: undecided
    assert run_fxcache("--cache-dir", str(root), "explain", str(run["trace"]), env=env).returncode == 0
    after = run_fxcache("--cache-dir", str(root), *args, env=env)
    (fv,) = json.loads(after.stdout)["verdicts"]["functions"]
    assert after.returncode == 0 and (fv["key"], fv["entry"]) == (aot["key"], aot["hit"]), fv
