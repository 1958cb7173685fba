"""``fxcache match`` accounts for every Python argument the compiled code reads, as torch's lookups show.

The cases of ``tests.harness.cases_args`` (a bool the code branches on, a str it
compares, an optional tensor, a graph break's local) are in the session's real cache. For each call of ``ARG_CALLS`` torch's own lookups (each a fresh process's
first call on a copy of the cache, recorded by ``python -m tests.harness.recorded``)
are the judge: where the cache holds the evidence, match's verdict for the function is
torch's, and its keys are looked up as torch looked them up; where it holds none
(``clip_default``, built with its default only), the verdict is UNDECIDED, naming the
parameter, whatever torch did; a run's trace decides it (``--from-trace``, or explained
into the usage store: tests/torch/test_explain.py, whose traced runs call it).
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import AGREES, VERDICT, Call, ahead
from tests.harness.match_runs import match_call as served
from tests.helpers import (
    assert_match_agrees_with_answer,
    assert_verdict_as_torch,
    call_label,
    match_args_for,
    match_call,
    run_fxcache,
    torch_status,
)

pytestmark = pytest.mark.torch

# (case, call description: a shape per positional parameter, then a dict of keyword values).
ARG_CALLS = [
    ("flags", [[8, 16]]),                                       # hit, the defaults' key
    ("flags", [[8, 16], {"clip": True, "act": "gelu"}]),        # hit, the other key
    ("flags", [[8, 16], {"act": "gelu"}]),                      # new graph: clip left out is False
    ("flags", [[8, 16], {"clip": True}]),                       # new graph: act left out is 'relu'
    ("flags", [[8, 16], {"act": "tanh"}]),                      # hit, the defaults' key: tanh goes the else way
    ("flags", [[8, 16], {"clip": False, "act": "relu", "scale": None}]),  # hit: the defaults, given
    ("step_loss", [[6, 5]]),                                    # hit in both frames (loss=[] names the resume's local)
]
# Calls whose verdict must stay undecided: the cache holds nothing that says which value
# clip_default's key was traced with (torch: a hit, then another graph), nor what flags'
# keys do with a scale (neither was traced with one).
UNDECIDED_CALLS = [
    ("clip_default", [[6, 5]]),
    ("clip_default", [[6, 5], {"clip": True}]),
    ("flags", [[8, 16], {"scale": [16]}]),                      # a tensor scale: torch traces another graph
]
# A recompile that only a flag forced (a fresh process calls clip=True, act='gelu', then the
# defaults, sizes unchanged): automatic dynamic marks nothing, the call is traced static and
# torch hits the defaults' static key. No key of flags has a symbol, so whether the recompile
# changed a size is what decides, and the call does not say it: undecided, never another graph.
FLAG_AFTER_RECOMPILE = ("flags", [[8, 16]], {"warm_up": [[[8, 16], {"clip": True, "act": "gelu"}]]})
# mode_net: a module compiled whole in eval mode; the mode given as self.training.
MODE_UNDECIDED = [
    ("mode_net", [[8, 16], {"self.training": True}]),             # torch: another graph (batch norm, dropout)
    ("mode_net", [[8, 16], {"self.training": False}]),            # torch: a hit
]
# A module whose parameters need grad, called without a backward: the forward's FX key alone.
UNNAMED_CALLS = [("grad_forward", [[4, 8]])]                       # torch: a hit on that FX key
# attr_net (dynamic=None, AttrNet compiled whole with scale=2.0, k=3, GAIN=2.0, lim=4.0,
# act='tanh'): each value given as the call's state (--inputs self.scale=3.0, G['GAIN']=3.0).
ATTR_CALLS = [
    ("attr_net", [[4, 8], {"self.scale": 2.0}]),                  # hit: mul's 2.0
    ("attr_net", [[4, 8], {"self.scale": 3.0}]),                  # new graph: 3.0, not 2.0
    ("attr_net", [[4, 8], {"self.k": 4}]),                        # new graph: add's 4, not 3
    ("attr_net", [[4, 8], {"self.k": 3, "G['GAIN']": 2.0}]),      # hit
    ("attr_net", [[4, 8], {"G['GAIN']": 3.0}]),                   # new graph: the global's 3.0
]
# A str the code compares (torch: another graph) and a float read through math.sqrt (torch:
# a hit): what the graph holds of them is not read.
ATTR_UNDECIDED = [
    ("attr_net", [[4, 8], {"self.act": "sigmoid"}]),
    ("attr_net", [[4, 8], {"self.lim": 4.0}]),
]


@AGREES
@pytest.mark.parametrize("case,shapes", ARG_CALLS, ids=[call_label(*c) for c in ARG_CALLS])
def test_each_key_is_looked_up_as_torch_looked_it_up(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], own)


@VERDICT
@pytest.mark.parametrize("case,shapes", [c for c in ARG_CALLS if c[0] != "step_loss"],
                         ids=[call_label(*c) for c in ARG_CALLS if c[0] != "step_loss"])
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
        assert {p["how"] for p in constant} == {"branch", "no-input-none"}  # clip, act; scale
    else:
        assert v["why_code"] == "branch-not-taken", v


@ahead(lambda: [Call("flags", [[8, 16], {"act": "gelu"}], "flags"),
                Call("flags", [[8, 16], {"clip": True, "act": "gelu"}], "flags")])
def test_a_flag_left_out_is_its_default_and_the_key_traced_with_the_other_value_is_another_graph(real_cache):
    """The issue's case: a key compiled with clip=True (and act='gelu'); a call that leaves
    clip out is clip=False, which skips the body that key's graph has ops from (the clamp);
    the defaults' key went the other way on act. Given both, the verdict says what it
    rests on: the side of each if the key's graph went through."""
    rc, body = match_call(real_cache.root, "flags", [[8, 16], {"act": "gelu"}])
    (fv,) = body["verdicts"]["functions"]
    assert rc == 1 and fv["phases"]["first"]["status"] == "new-graph", fv
    why = {r["key"]: r["reasons"] for r in body["results"] if r["kind"] == "aotautograd"}
    assert any("clip=False (its default) fails `if clip:`" in w for ws in why.values() for w in ws), why
    assert any("act='gelu' passes `if act == 'gelu':`" in w for ws in why.values() for w in ws), why
    rc, body = match_call(real_cache.root, "flags", [[8, 16], {"clip": True, "act": "gelu"}])
    (fv,) = body["verdicts"]["functions"]
    clip = next(p for p in fv["params"] if p["name"] == "clip")
    assert rc == 0 and clip == {"name": "clip", "value": "True", "given": True, "status": "accounted",
                                "how": "branch", "detail": clip["detail"]}, clip
    human = run_fxcache("--cache-dir", str(real_cache.root), "match", "--fn", "flags",
                        *match_args_for("flags", [[8, 16], {"clip": True, "act": "gelu"}]))
    assert "rests on clip=True: the graph went through `if clip:`" in human.stdout, human.stdout
    assert "act='gelu': the graph went through `if act == 'gelu':`" in human.stdout, human.stdout


@ahead(lambda: [Call("flags", [[8, 16]], "flags", ("--after-recompile",))])
def test_after_a_recompile_no_key_with_a_symbol_does_not_rule_the_static_key_out(real_cache, arg_answers):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(*FLAG_AFTER_RECOMPILE)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert answer["error"] is None and torch_status(answer["lookups"], present) == "hit", answer
    rc, body = match_call(real_cache.root, "flags", [[8, 16]], "--after-recompile")
    (fv,) = body["verdicts"]["functions"]
    later = fv["phases"]["after-recompile"]
    assert rc == 3 and fv["status"] == later["status"] == "undecided", fv
    assert later["why_code"] == "static-after-recompile-unknown", later


@VERDICT
@pytest.mark.parametrize("case,shapes", UNDECIDED_CALLS, ids=[call_label(*c) for c in UNDECIDED_CALLS])
def test_without_evidence_the_verdict_stays_undecided_whatever_torch_does(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    name = "scale" if case == "flags" else "clip"
    assert fv["line"].startswith(f"UNDECIDED: {name}") or name in fv["line"], fv["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(arg_answers[call_id(case, shapes)]["lookups"], present)
    assert torch_did == ("hit" if shapes == [[6, 5]] else "new-graph"), torch_did  # torch varies with it


@ahead(lambda: [Call("step_loss", [[6, 5]], "step_loss")])
def test_a_resume_frames_local_given_binds_to_its_own_frame(real_cache, arg_answers):
    """step_loss breaks the graph: the first frame takes x, the resume frame the local
    loss (a 0-d tensor), named --inputs loss=[] as the docs say. Each frame's verdict is
    torch's: the first frame's is not undecided over a tensor it never takes."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id("step_loss", [[6, 5]])]
    rc, body = match_call(real_cache.root, "step_loss", [[6, 5]])
    present = {k.key for k in scan_cache(real_cache.root).keys}
    aot = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]
    assert len(aot) == 2 and all(lk["hit"] and lk["key"] in present for lk in aot), aot
    statuses = {f["function"]: f["status"] for f in body["verdicts"]["functions"]}
    assert rc == 0 and set(statuses.values()) == {"hit"} and len(statuses) == 2, statuses
    assert torch_status(answer["lookups"], present) == "hit"


@pytest.mark.parametrize("case,shapes", MODE_UNDECIDED, ids=[call_label(*c) for c in MODE_UNDECIDED])
def test_a_modules_training_mode_given_is_undecided_not_ignored(real_cache, arg_answers, case, shapes):
    """A module's ``training`` flag is state Dynamo guards and the cache does not record:
    given (``self.training=True``), the verdict is undecided naming it, whatever torch did
    (another graph in training mode, a hit in eval), never a hit that ignored it."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "ModeNet", "--dynamic",
                       "none", "--shapes", "x=[8,16]", "--inputs", f"self.training={shapes[-1]['self.training']}")
    rc, body = proc.returncode, json.loads(proc.stdout)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "module-state-unrecorded", fv
    assert "self.training" in fv["line"], fv["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(arg_answers[call_id(case, shapes)]["lookups"], present)
    assert torch_did == ("new-graph" if shapes[-1]["self.training"] else "hit"), torch_did


@pytest.mark.parametrize("case,shapes", UNNAMED_CALLS, ids=[call_label(*c) for c in UNNAMED_CALLS])
def test_an_fx_key_whose_inputs_nothing_names_is_undecided_by_name_and_looked_up_by_position(
        real_cache, arg_answers, case, shapes):
    """A training graph whose backward never compiled leaves its forward's FX key with no
    AOTAutograd entry: nothing in the cache names its inputs (the module's parameters are
    inputs too). Named inputs leave the verdict undecided, saying how to give them by
    position (never "nothing takes the call"): torch's AOTAutograd lookup is a new key,
    then Inductor finds that FX key. Given by position in graph order, the FX key's lookup
    takes the entry torch's took."""
    from tests.harness.oracle import call_id

    def match(*args: str) -> tuple[int, dict]:
        proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "GradNet", *args)
        return proc.returncode, json.loads(proc.stdout)

    (x,) = shapes
    rc, body = match("--inputs", f"x=[{x[0]},{x[1]}]")
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "inputs-unnamed", fv
    assert "--arg" in fv["line"] and "f32[8, 8]" in fv["line"], fv["line"]
    (unbound,) = body["unbound"]
    assert unbound["key"].startswith("f") and len(unbound["unnamed"]) == 3, unbound
    aot, fx = arg_answers[call_id(case, shapes)]["lookups"]
    assert aot["kind"] == "aotautograd" and aot["status"] == "full_miss", aot  # a key the cache lacks
    assert fx["kind"] == "fxgraph" and fx["key"] == unbound["key"] and fx["hit"], fx
    rc, body = match("--arg", "[8,8]", "--arg", "[8]", "--arg", f"[{x[0]},{x[1]}]")
    (m,) = body["results"]
    assert m["key"] == fx["key"] and m["status"] == "hit" and fx["hit"].startswith(m["hit"]), m


def _attr_call(shapes: list) -> Call:
    """``fxcache match --json --fn AttrNet`` for a call of ``attr_net``: its tensor as
    forward names it (``x``; the module's own signature is ``*args``), its state as
    ``--inputs self.scale=3.0``, ``G['GAIN']=3.0``."""
    state = [a for n, v in shapes[-1].items() for a in ("--inputs", f"{n}={v!r}")]
    return Call.argv("match", "--json", "--fn", "AttrNet", "--dynamic", "none",
                     "--shapes", "x=" + json.dumps(shapes[0]).replace(" ", ""), *state)


_ATTR = ahead(lambda shapes, **_: [_attr_call(shapes)])


def _attr_net(root, shapes: list) -> tuple[int, dict]:
    """:func:`_attr_call`'s run (made ahead): its exit code and the function's verdict."""
    proc = served(root, _attr_call(shapes))
    body = json.loads(proc.stdout)
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    (fv,) = body["verdicts"]["functions"]
    return proc.returncode, fv


@_ATTR
@pytest.mark.parametrize("case,shapes", ATTR_CALLS, ids=[call_label(*c) for c in ATTR_CALLS])
def test_a_modules_attributes_and_a_global_are_read_off_the_graphs_constants(real_cache, arg_answers, case,
                                                                             shapes):
    """A float or int attribute of the module, or a global, given with the call is the
    constant of the op the code reads it into: the same value accounts for it, another
    rules the key out, as torch did."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    _, fv = _attr_net(real_cache.root, shapes)
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert fv["status"] == torch_status(arg_answers[call_id(case, shapes)]["lookups"], present), fv
    if fv["status"] == "hit":
        how = {p["name"]: p["how"] for p in fv["params"]}
        assert all(how[n] == "baked-constant" for n in shapes[-1]), fv["params"]
    else:
        assert fv["why_code"] in ("float-constant-differs", "baked-value-differs"), fv


@_ATTR
@pytest.mark.parametrize("case,shapes", ATTR_UNDECIDED, ids=[call_label(*c) for c in ATTR_UNDECIDED])
def test_a_str_attribute_or_one_read_through_a_call_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, fv = _attr_net(real_cache.root, shapes)
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "module-state-unrecorded", fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(arg_answers[call_id(case, shapes)]["lookups"], present)
    assert torch_did == ("new-graph" if "self.act" in shapes[-1] else "hit"), torch_did


def test_a_name_the_function_does_not_take_is_a_usage_error_not_a_verdict(real_cache):
    """shift_kw's source is read: it takes x and shift and no ``**kwargs``, so a call
    naming ``typo`` raises TypeError in Python before Dynamo sees it. fxcache says so in one
    line (exit 2) where it used to ignore the name and judge the rest (a HIT torch never
    gives)."""
    args = match_args_for("shift_kw", [[4, 4], {"shift": 0}])
    base = run_fxcache("--cache-dir", str(real_cache.root), "match", "--fn", "shift_kw", *args)
    assert base.returncode == 0, base.stdout + base.stderr
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--fn", "shift_kw", *args, "--inputs", "typo=3")
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout
    (line,) = proc.stderr.splitlines()
    assert "--inputs typo: no parameter of that name" in line and "shift_kw takes x, shift" in line, line
    # A nameless item is the call's args[i], by position: no name to check.
    nameless = run_fxcache("--cache-dir", str(real_cache.root), "match", "--fn", "shift_kw", "--dynamic", "none",
                           "--inputs", "[4,4]")
    assert nameless.returncode != 2, nameless.stdout + nameless.stderr


@pytest.mark.parametrize("case,call", [("shift_kw", ["--inputs", "[4,4]", "--inputs", "[5]"]),
                                       ("kw_tensor", ["--inputs", "[6,5]", "--inputs", "[5]"])])
def test_a_value_past_the_positional_parameters_is_a_usage_error_not_a_verdict(real_cache, case, call):
    """shift_kw's shift is keyword-only and kw_tensor takes its bias through ``**kw``: each
    takes one argument by position, and a second raises TypeError in Python before Dynamo
    sees the call (torch 2.13: "shift_kw() takes 1 positional argument but 2 were given").
    One line, exit 2, in --json too, naming what the function takes by position."""
    dynamic = {"shift_kw": "none", "kw_tensor": "false"}[case]
    for json_flag in ((), ("--json",)):
        proc = run_fxcache("--cache-dir", str(real_cache.root), "match", *json_flag, "--fn", case,
                           "--dynamic", dynamic, *call)
        assert proc.returncode == 2 and proc.stdout == "", proc.stdout
        (line,) = proc.stderr.splitlines()
        assert f"--inputs args[1]: no parameter at that position ({case} takes 1 by position: x)" in line, line
