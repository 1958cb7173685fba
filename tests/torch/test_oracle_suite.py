"""``fxcache match`` against torch's own lookup, over many small functions.

The session's real cache (conftest's ``real_cache``, every case of ``tests/harness/cases.py``)
holds the cases added to ``tests/harness/cases.py`` for this suite (``ORACLE_CASES``: branches on products and
moduli, divisibility, list and keyword-only arguments, int arguments, duck
sizing, broadcasting against a size-1 dim, matmul, conv, a training step,
``mark_dynamic`` with only a lower bound, automatic dynamic, an unused argument,
a graph break in a helper, a slice, a UNet's timestep as a Python int, a float and
a 0-d tensor on a key with FX entries only). Then, for each call in ``ORACLE_CALLS``
(new shapes: inside a compiled region, between or outside the regions, and
shapes that make Dynamo trace another graph), ``fxcache match --json`` on a
snapshot of the cache is compared with what torch's own lookup chose when the
function is called on those shapes in a fresh process (``tests.harness.oracle``, run on
a copy of the snapshot, so every call sees the cache as it was built).

The comparison is the one of test_real_cache.py's
``test_match_agrees_with_torch_lookup``, plus one check: where torch evaluated
the guards of a key the cache had, match's ``status`` must say the same
(``hit`` or ``miss``; ``undecided`` or ``no-fit`` is a disagreement).

match is told what the cache cannot record and the user knows: the
``--dynamic`` the case is compiled with, the dims its inputs mark dynamic, and
the locals of other frames a call's graphs are keyed on (a graph break's
resume frame). Every call must agree.

Torch's answers were asked once per torch version, each call a fresh process's first
call on its own copy of the cache, and recorded (``python -m tests.harness.recorded``,
tests/data/oracle-answers.json); test_recorded_answers.py fails when the installed torch
is not the one that recorded them, and asks torch two of them again.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import Call, ahead
from tests.harness.real_cache import RealCache
from tests.helpers import (
    assert_match_agrees_with_answer,
    assert_match_agrees_with_lookups,
    assert_verdict_as_torch,
    match_args_for,
    run_fxcache,
)

pytestmark = pytest.mark.torch

# The cases compiled into this suite's cache: every case added to tests/harness/cases.py
# for it (the original nine are exercised by test_real_cache.py).
ORACLE_CASES = [
    "branch_on_product",
    "reshape_rows_of_8",
    "mod_three_regions",
    "cat_list",
    "kw_only_weight",
    "int_branch",
    "two_tensors",
    "broadcast_size_one",
    "matmul_shared",
    "conv1d_small",
    "train_mlp_pairs",
    "mark_dynamic_min",
    "automatic_dynamic_cols",
    "unused_arg",
    "calls_helper",
    "half_slice",
    "scale_by",
    "scale_auto",
    "duck_off_pair",
    "duck_on_pair",
    "matmul_duck_off",
    "cat_cols_duck_off",
    "xent_marked",
    "unet_timestep",
]


@pytest.fixture(scope="session")
def oracle_cache(real_cache: RealCache) -> RealCache:
    """The session's real cache: it holds every case of tests/harness/cases.py, these included."""
    return real_cache


def _id(case: str, shapes: list) -> str:
    return f"{case}-{json.dumps(shapes).replace(' ', '')}"


# (case, call shapes), one element per parameter of the function (see tests/harness/cases.py).
# "hit": inside a region that was compiled; "miss": same key, every entry's guards
# fail; "key": Dynamo traces another graph (0/1, duck sizing, rank, static dim).
ORACLE_CALLS = [
    # s0*s1 <= 64 / 64 < s0*s1, built at [4, 5] and [10, 9]: two keys.
    ("branch_on_product", [[16, 4]]),            # hit, small side, on the boundary 64
    ("branch_on_product", [[12, 7]]),            # hit, large side
    ("branch_on_product", [[8, 8]]),             # key: duck sizing
    # (s0*s1) % 8 == 0 plus view guards such as s0 % (s0*s1 // 8) != 0 and s1 != 8.
    ("reshape_rows_of_8", [[2, 12]]),            # hit
    ("reshape_rows_of_8", [[6, 4]]),             # miss: 6 % (24 // 8) == 0
    # One key, entries for s0 % 3 == 0 and s0 % 3 != 0.
    ("mod_three_regions", [[12, 5]]),            # hit, == 0 entry
    ("mod_three_regions", [[10, 4]]),            # hit, != 0 entry
    # One key, entries for rows of xs[0] >= rows of xs[1], and <.
    ("cat_list", [[[7, 4], [3, 4]]]),            # hit, >= entry
    ("cat_list", [[[3, 5], [8, 5]]]),            # hit, < entry
    ("cat_list", [[[5, 3], [5, 3]]]),            # key: equal rows, one symbol
    # Keyword-only w; inductor adds s1 <= 4096 (the reduction).
    ("kw_only_weight", [[7, 9], [9]]),           # hit
    ("kw_only_weight", [[3, 5000], [5000]]),     # miss: 5000 > 4096
    # n <= 4 / 4 < n. An int argument is a symbol of its own: torch neither
    # specializes an int 1 nor duck-sizes an int with a tensor size.
    ("int_branch", [[6], 1]),                    # hit, n <= 4
    ("int_branch", [[5], 5]),                    # hit, n > 4 (n == x's size: still two symbols)
    # Built a[4], b[4] (one symbol) then a[3], b[5] (two symbols): two keys.
    ("two_tensors", [[7], [7]]),                 # hit, duck key
    ("two_tensors", [[6], [9]]),                 # hit, two-symbol key
    ("two_tensors", [[1], [5]]),                 # key: size 1
    # y[n, 1] broadcast against x[n, m].
    ("broadcast_size_one", [[7, 4], [7, 1]]),    # hit
    ("broadcast_size_one", [[7, 4], [7, 4]]),    # key: y's 1 is now 4
    # x[m, k] @ w[k, n].
    ("matmul_shared", [[6, 4], [4, 3]]),         # hit
    ("matmul_shared", [[5, 5], [5, 2]]),         # key: m == k
    # Conv1d(3 -> 2, 3): batch in [2, 15], length >= 4; channels static 3.
    ("conv1d_small", [[5, 3, 12]]),              # hit (forward + backward FX by exact guards)
    ("conv1d_small", [[16, 3, 8]]),              # miss: batch 16 > 15 (AOT, forward and backward FX)
    ("conv1d_small", [[3, 3, 12]]),              # key: batch == channels (3)
    # Training step, loss needs an even batch; 4 <= B <= 4096 (forward FX: B <= 8193).
    ("train_mlp_pairs", [[8, 3], [8, 2]]),       # hit, forward + backward FX by exact guards
    ("train_mlp_pairs", [[5000, 3], [5000, 2]]),  # AOT miss, forward FX hit, backward FX miss
    # mark_dynamic(x, 0, min=4) and mark_dynamic(x, 1): 4 <= s0, 2 <= s1.
    ("mark_dynamic_min", [[5, 3]]),              # hit
    ("mark_dynamic_min", [[300, 7]]),            # hit, no upper bound
    # Both dims marked: never duck-sized, so [6, 6] keeps two symbols (dynamic=True
    # would give it one, and another graph).
    ("mark_dynamic_min", [[6, 6]]),              # hit
    # dynamic=None, built [4, 6] (static key) then [4, 9] (dim 1 dynamic).
    ("automatic_dynamic_cols", [[4, 6]]),        # hit, the static entry
    ("automatic_dynamic_cols", [[4, 12]]),       # a fresh process compiles it static: new key
    # An argument the function never reads: no symbol, no guard.
    ("unused_arg", [[6, 4], [2, 2]]),            # hit, whatever `unused` is
    # A graph break in the helper: two graphs, the second in the helper's frame (L['t']).
    # Torch looks up calls_helper's key (L['x']), then the helper's resume frame's
    # key (L['t'], given with _OTHER_FRAMES).
    ("calls_helper", [[9, 5]]),                  # hit, both frames
    # x duck-sized: calls_helper traces another graph; t's dims were marked dynamic
    # by propagation, so the helper frame keeps two symbols and hits.
    ("calls_helper", [[4, 4]]),                  # key (x); hit (t)
    # x[: s0 // 2] with s0 // 2 != 1.
    ("half_slice", [[11, 3]]),                   # hit
    ("half_slice", [[3, 5]]),                    # miss: 3 // 2 == 1
    # A Python float. dynamic=True tensorifies it (a graph input): any value, one key.
    ("scale_by", [[6, 5], 4.0]),                 # hit
    # dynamic=None: a fresh process's first call specializes it (a constant of the graph).
    ("scale_auto", [[4, 3], 2.5]),               # hit, the key that baked in 2.5
    ("scale_auto", [[4, 3], 4.0]),               # key: 4.0 is another constant (and not tensorified yet)
    # use_duck_shape=False (match --no-duck-shape): equal sizes keep two symbols.
    ("duck_off_pair", [[6], [6]]),               # hit
    # Forced equalities: the graph makes two dims one symbol, whatever duck sizing or a
    # mark says; a call with equal sizes traces the same graph.
    ("matmul_duck_off", [[4, 6], [6, 3]]),       # hit: k forced by matmul (duck sizing off)
    ("matmul_duck_off", [[5, 5], [5, 2]]),       # hit: m == k keep two symbols (duck sizing off)
    ("cat_cols_duck_off", [[4, 3], [4, 3]]),     # hit: rows forced by cat, equal columns apart
    ("cat_cols_duck_off", [[3, 3], [3, 3]]),     # hit
    ("xent_marked", [[3, 5], [3]]),              # hit: the batch of logits and labels, forced
    ("xent_marked", [[16, 5], [16]]),            # miss: the entry covers batches 2..15
    # A UNet's timestep, built an int under dynamic=True: torch.tensor([SymInt]) makes
    # torch bypass the AOTAutograd cache, so the key has FX entries only.
    ("unet_timestep", [[2, 4, 3, 3], 10]),       # hit, the FX key by its own guards
    ("unet_timestep", [[2, 4, 3, 3], 10.0]),     # key: a float is no SymInt
    ("unet_timestep", [[2, 4, 3, 3], []]),       # key: a 0-d tensor is a tensor input
]


PARAMS = [c if hasattr(c, "marks") else pytest.param(*c, id=_id(*c)) for c in ORACLE_CALLS]


def test_oracle_cases_are_at_least_twenty_functions():
    from tests.harness.cases import CASES

    assert set(ORACLE_CASES) <= set(CASES)
    assert len({c.fn for c in CASES.values()}) >= 20
    assert {p.values[0] for p in PARAMS} == set(ORACLE_CASES) - {"duck_on_pair"}
    assert len(PARAMS) >= 30
    assert {"scale_by", "scale_auto"} <= {p.values[0] for p in PARAMS}  # float arguments


@pytest.fixture(scope="session")
def oracle_suite_answers(oracle_cache: RealCache) -> dict[str, dict]:
    """Torch's lookups for every call of ORACLE_CALLS, each a fresh process's first call on
    a copy of the real cache, as recorded (``tests.harness.recorded``; checked by
    test_recorded_answers.py) in the names of this session's real cache."""
    from tests.harness.recorded import answers_for

    return answers_for(oracle_cache.summary, "real")


@ahead(lambda case, shapes: [Call(case, shapes)])  # run ahead on the build threads
@pytest.mark.parametrize("case,shapes", PARAMS)
def test_match_agrees_with_torch_lookup(oracle_cache, oracle_suite_answers, case, shapes):
    from tests.harness.oracle import call_id

    own = {w["key"] for w in oracle_cache.writes(case)}
    assert_match_agrees_with_answer(oracle_cache.root, case, shapes,
                                    oracle_suite_answers[call_id(case, shapes)], own)


def test_duck_sizing_off_is_undecided_without_the_setting_and_torch_really_varies_with_it(
        oracle_cache, oracle_suite_answers, oracle_queries):
    """An entry compiled with equal sizes on two symbols (a[4], b[4]) is evidence of
    use_duck_shape=False: without --duck-shape / --no-duck-shape, a call of equal sizes
    is undecided and says why; torch hits that key with duck sizing off and looks up
    another key with it on (its default): duck_off_pair's answer is the one recorded for
    the suite's calls, duck_on_pair's is asked this session (``oracle_queries``, on a copy of
    the real cache)."""
    from tests.harness.oracle import call_id

    shapes = [[6], [6]]
    args = [a for a in match_args_for("duck_off_pair", shapes) if a != "--no-duck-shape"]
    proc = run_fxcache("--cache-dir", str(oracle_cache.root), "match", "--json", *args)
    assert proc.returncode == 3, proc.stderr  # undecided
    own = {w["key"] for w in oracle_cache.writes("duck_off_pair") if w["kind"] == "aotautograd"}
    (aot,) = own
    mine = [r for r in json.loads(proc.stdout)["results"] if r["key"] == aot]
    assert mine and mine[0]["status"] == "undecided", mine
    assert any("use_duck_shape" in u for u in mine[0]["uncertain"]), mine[0]["uncertain"]

    off = oracle_suite_answers[call_id("duck_off_pair", shapes)]
    on = oracle_queries["duck_on"]["answer"]
    assert (on["case"], on["shapes"]) == ("duck_on_pair", shapes)
    off_aot = [lk for lk in off["lookups"] if lk["kind"] == "aotautograd"]
    on_aot = [lk for lk in on["lookups"] if lk["kind"] == "aotautograd"]
    assert off_aot[0]["key"] == aot and off_aot[0]["hit"], off_aot
    assert on_aot and all(lk["key"] != aot for lk in on_aot), on_aot


# The cases compiled with duck sizing off (checked against tests/harness/cases.py below).
DUCK_OFF_CASES = {"duck_off_pair", "matmul_duck_off", "cat_cols_duck_off"}
_DUCK_OFF_CALLS = [p for p in PARAMS if p.values[0] in DUCK_OFF_CASES]


def test_the_duck_off_cases_are_those_compiled_with_duck_sizing_off():
    from tests.harness.cases import CASES

    assert DUCK_OFF_CASES == {n for n in ORACLE_CASES if CASES[n].fx_config.get("use_duck_shape") is False}


def _torch_status(lookups: list[dict], keys: set[str]) -> str:
    """What torch did with the call for a function whose AOTAutograd keys are ``keys``:
    ``hit`` (an entry of one of them), ``miss`` (it evaluated their guards, none held),
    ``new-graph`` (it looked up none of them)."""
    aot = [lk for lk in lookups if lk["kind"] == "aotautograd" and lk["key"] in keys]
    if any(lk["hit"] for lk in aot):
        return "hit"
    return "miss" if aot else "new-graph"


@pytest.mark.parametrize("case,shapes", _DUCK_OFF_CALLS)
def test_duck_off_calls_agree_with_torch_on_the_function_verdict(oracle_cache, oracle_suite_answers,
                                                                  case, shapes):
    """Cases compiled with duck sizing off, called with --no-duck-shape: match's verdict line
    for the function and its exit status are torch's (a forced equality is not duck sizing);
    without the flag, nothing is decided wrong (undecided is allowed, with the reason)."""
    from tests.harness.oracle import call_id

    answer = oracle_suite_answers[call_id(case, shapes)]
    own = {w["key"] for w in oracle_cache.writes(case) if w["kind"] == "aotautograd"}
    torch_says = _torch_status(answer["lookups"], own)
    args = match_args_for(case, shapes)
    assert "--no-duck-shape" in args
    for flagged in (True, False):
        given = args if flagged else [a for a in args if a != "--no-duck-shape"]
        proc = run_fxcache("--cache-dir", str(oracle_cache.root), "match", "--json", "--fn", case, *given)
        rep = json.loads(proc.stdout)
        (fn,) = rep["verdicts"]["functions"]
        if flagged and torch_says == "miss" and fn["why_code"] == "bound-failed":
            # a failed bound of every entry: whose check it was the cache does not show
            assert fn["status"] == "undecided" and proc.returncode == 3, fn
        elif flagged:
            assert fn["status"] == torch_says, (fn, answer["lookups"])
            assert proc.returncode == {"hit": 0, "miss": 1, "new-graph": 1}[torch_says]
        else:
            assert fn["status"] in (torch_says, "undecided"), (fn, answer["lookups"])
            if fn["status"] == "undecided":
                assert "duck" in fn["line"] or any("duck" in u for r in rep["results"] for u in r["uncertain"])


def test_duck_sizing_off_anywhere_in_the_cache_makes_a_duck_conflict_undecided(oracle_cache):
    """matmul_shared (compiled with duck sizing on) called with m == k under dynamic=True:
    with --duck-shape another graph (the oracle call above checks it against torch);
    without it, duck_off_pair's key (two symbols of equal hint) shows the process may run
    with duck sizing off, under which torch hits: undecided, naming that key."""
    base = ["--cache-dir", str(oracle_cache.root), "match", "--json", "--fn", "matmul_shared",
            "--dynamic", "true", "--shapes", "x=[5,5]", "--shapes", "w=[5,2]"]
    rep = json.loads(run_fxcache(*base, "--duck-shape").stdout)
    assert [f["status"] for f in rep["verdicts"]["functions"]] == ["new-graph"]
    proc = run_fxcache(*base)
    assert proc.returncode == 3, proc.stdout
    rep = json.loads(proc.stdout)
    (aot,) = [r for r in rep["results"] if r["kind"] == "aotautograd"]
    assert aot["status"] == "undecided"
    whys = [u for u in aot["uncertain"] if "duck sizing" in u]
    duck_off = {w["key"][:12] for w in oracle_cache.writes("duck_off_pair") if w["kind"] == "aotautograd"}
    assert whys and all("(another function)" in why and any(k in why for k in duck_off) for why in whys), whys


@ahead(lambda timestep: [Call("unet_timestep", [[2, 4, 3, 3], timestep], "TinyUNet")])
@pytest.mark.parametrize("timestep", [10, 10.0, []], ids=["int", "float", "0-d-tensor"])
def test_a_timestep_int_float_or_0d_tensor_is_the_verdict_torch_gives(
        oracle_cache, oracle_suite_answers, timestep):
    """A UNet compiled under dynamic=True with an int timestep: torch.tensor([timestep])
    of a SymInt makes torch bypass the AOTAutograd cache, so the key has FX entries only
    and a call looks it up by its own guards. match names its inputs by its symbols'
    names and says what torch did: the int hits it; a float (a constant or a float64
    input, never a SymInt) and a 0-d tensor (a tensor input) trace another graph."""
    from tests.harness.oracle import call_id

    shapes = [[2, 4, 3, 3], timestep]
    answer = oracle_suite_answers[call_id("unet_timestep", shapes)]
    if timestep != []:  # torch.tensor([timestep]) of a SymInt or float: no AOTAutograd lookup
        assert {lk["kind"] for lk in answer["lookups"]} == {"fxgraph"}, answer["lookups"]
    v = assert_verdict_as_torch(oracle_cache.root, "unet_timestep", shapes, answer, "TinyUNet")
    if isinstance(timestep, int):
        assert v["status"] == "hit" and v["key"].startswith("f"), v  # the FX key itself
    else:
        assert v["why_code"] == "wrong-input-type", v


# --- automatic dynamic's two phases, and a saved profile --------------------------------

# Torch's answers for the phases of automatic_dynamic_cols (dynamic=None, built [4, 6] then
# [4, 9]): the call after a recompile (a fresh process calls [4, 6], then [4, 12]), and a
# fresh process's first call with the job id the session cache was built under, so that
# Dynamo reads the profile the build saved (RealCache.pgo: x.size(1) changed).
_JOB = "fxcache-tests"
AFTER_RECOMPILE = ("automatic_dynamic_cols", [[4, 12]], {"warm_up": [[[4, 6]]]})
WITH_PROFILE = ("automatic_dynamic_cols", [[4, 12]], {"job_id": _JOB})


@pytest.fixture(scope="session")
def phase_answers(oracle_cache: RealCache, tmp_path_factory) -> dict:
    """Torch's lookups for AFTER_RECOMPILE on a copy of the real cache, and for
    WITH_PROFILE on a copy with the saved profile put back (``with_profile_root``: that
    copy, made here), as recorded (``tests.harness.recorded``)."""
    import shutil

    from tests.harness.recorded import answers_for

    out = answers_for(oracle_cache.summary, "real")
    with_profile = tmp_path_factory.mktemp("real-cache-profile") / "inductor"
    shutil.copytree(oracle_cache.root, with_profile, symlinks=True)
    oracle_cache.with_pgo(with_profile)
    out.update(answers_for(oracle_cache.summary, "with_profile"))
    out["with_profile_root"] = with_profile
    return out


def _aot_hit(answer: dict) -> tuple[str, str]:
    (lk,) = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]
    assert answer["error"] is None and lk["hit"], answer
    return lk["key"], lk["hit"]


def _phases(root, *args: str) -> tuple[int, dict, dict]:
    proc = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", "automatic_dynamic_cols", *args)
    body = json.loads(proc.stdout)
    (fv,) = body["verdicts"]["functions"]
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    return proc.returncode, fv, body


def test_automatic_dynamic_says_both_phases_as_torch_does(oracle_cache, oracle_suite_answers, phase_answers):
    """--dynamic none says the first call in a fresh process (exit status) and the call
    after a recompile; --after-recompile makes the later calls decide, and judges the keys
    as that call is traced: each as torch looked them up, undecided where that rests on
    which sizes changed before the call."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    root = oracle_cache.root
    present = {k.key for k in scan_cache(root).keys}
    own = {w["key"] for w in oracle_cache.writes("automatic_dynamic_cols")}
    first_hit = _aot_hit(oracle_suite_answers[call_id("automatic_dynamic_cols", [[4, 6]])])
    first_new = oracle_suite_answers[call_id("automatic_dynamic_cols", [[4, 12]])]
    assert all(lk["key"] not in present for lk in first_new["lookups"] if lk["kind"] == "aotautograd")
    after = phase_answers[call_id(*AFTER_RECOMPILE)]
    after_hit = _aot_hit(after)
    assert after_hit[0] != first_hit[0]  # torch: another key, the one with x.size(1) symbolic

    rc, fv, _ = _phases(root, "--dynamic", "none", "--shapes", "x=[4,6]")
    assert rc == 0 and fv["phase"] == "first" and set(fv["phases"]) == {"first", "after-recompile"}
    assert (fv["key"], fv["entry"]) == first_hit
    assert fv["phases"]["first"]["heading"] == "first call in a fresh process"
    rc, fv, _ = _phases(root, "--dynamic", "none", "--shapes", "x=[4,12]")
    first, later = fv["phases"]["first"], fv["phases"]["after-recompile"]
    assert rc == 1 and first["status"] == "new-graph" and first["why_code"] == "static-never-compiled"
    assert first["line"].startswith("NEW GRAPH: static x=[4,12] was never compiled"), first["line"]
    # After a recompile: the key torch hit if exactly x.size(1) changed before the call, which
    # the call does not say (a change of x.size(0) too would trace another graph).
    assert (later["status"], later["key"]) == ("undecided", after_hit[0]), later
    assert later["why_code"] == "dynamic-after-recompile-unknown" and "x.size(1)" in later["line"], later
    rc, fv, body = _phases(root, "--dynamic", "none", "--shapes", "x=[4,12]", "--after-recompile")
    assert rc == 3 and fv["phase"] == "after-recompile" and body["phase"] == "after-recompile"
    assert assert_match_agrees_with_lookups(body["results"], after["lookups"], present, own)
    # Without --dynamic: dynamic=True would trace x.size(0) (static 4 in the key) as a
    # symbol too, so the mode changes both answers, and the verdict says so.
    rc, fv, _ = _phases(root, "--shapes", "x=[4,12]", "--after-recompile")
    assert rc == 3 and fv["status"] == "undecided", fv


def test_a_saved_profile_makes_the_first_call_dynamic_as_torch_does(oracle_cache, phase_answers):
    """With the profile torch saved under a job id (x.size(1) changed while building), a
    fresh process with that job id traces its first call with x.size(1) a symbol and
    hits the dynamic key; match reads the profile (never running it) and says so."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.decode.pgo import read_pgo_states
    from tests.harness.oracle import call_id

    root = phase_answers["with_profile_root"]
    (state,) = read_pgo_states(root)
    assert state.problem is None and state.job == _JOB
    (code,) = [c for c in state.codes if c.name == "automatic_dynamic_cols"]
    assert [(s.source, s.dims) for s in code.dynamic()] == [("L['x']", (1,))]
    answer = phase_answers[call_id(*WITH_PROFILE)]
    hit = _aot_hit(answer)
    rc, fv, body = _phases(root, "--dynamic", "none", "--shapes", "x=[4,12]")
    first = fv["phases"]["first"]
    assert rc == 0 and (first["status"], first["key"], first["entry"]) == ("hit", *hit)
    assert "saved profile" in first["heading"] and "x.size(1)" in first["heading"], first["heading"]
    present = {k.key for k in scan_cache(root).keys}
    own = {w["key"] for w in oracle_cache.writes("automatic_dynamic_cols")}
    assert assert_match_agrees_with_lookups(body["results"], answer["lookups"], present, own)
