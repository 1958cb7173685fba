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
from collections.abc import Callable
from typing import Any

import pytest

from tests.harness.match_runs import Call, ahead, match_call
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


# window_mean: ints, a tuple and a bool that its graphs keep as constants (slice bounds,
# an arithmetic scalar, a reduction's dim and keepdim); its n=16 key sliced all of dim 1,
# which the graph leaves out, so nothing there says which n it was traced with.
CONSTANT_CALLS = [
    ("window_mean", [[4, 32], 4]),                               # hit: every constant read, the call's
    ("window_mean", [[4, 32], 5, {"dims": {"tuple": [0, 1]}}]),              # new graph: 10 and 6, not 8 and 5
    ("window_mean", [[4, 32], 4, {"dims": {"tuple": [1, 0]}}]),              # new graph: Dynamo's graph keeps the order
    ("window_mean", [[4, 32], 4, {"keepdim": True}]),             # new graph: mean.dim's keepdim
]
CONSTANT_UNDECIDED = [("window_mean", [[4, 32], 16])]             # torch: a hit on the n=16 key
# sum_dim (dynamic=True): dim and dims[0] are SymInts Dynamo specialized (guards dim == 1,
# dims[0] == 0); a second key was traced with dim=0.
PINNED_CALLS = [
    ("sum_dim", [[5, 6]]),                                        # hit: dim left out is 1, not the dim=0 key's
    ("sum_dim", [[4, 6], {"dim": 0}]),                            # hit: the dim=0 key, not a miss of the first
    ("sum_dim", [[4, 6], {"dims": {"tuple": [1]}}]),              # new graph, not a miss of dims[0] == 0
    ("sum_dim", [[4, 6], {"dim": -1}]),                           # new graph, not a miss of dim == 1 and dim == 0
]
# sum_dim's dims as a tuple of another length than the keys were traced with ((0,)): Dynamo
# guards a tuple's length. Shorter than an item a key takes an input from (dims[0]): no trace
# of the call has that input, another graph. Longer: another graph unless the code never
# reads the items past dims[0], which the key's inputs do not say (x.sum(dims) reads them).
TUPLE_CALLS = [("sum_dim", [[4, 6], {"dims": {"tuple": []}}])]     # new graph: no dims[0]
TUPLE_UNDECIDED = [("sum_dim", [[4, 6], {"dims": {"tuple": [0, 1]}}])]  # torch: another graph
# fill_where (dynamic=False, built with its defaults fill=0.0, thresh=0, t=0.5): each scalar
# read off the graph where it lands (scalar_tensor's 0.0, gt.Scalar's 0, div's 0.5).
SCALAR_CALLS = [
    ("fill_where", [[4, 8]]),                                     # hit: every constant the call's
    ("fill_where", [[4, 8], {"fill": -2.0}]),                     # new graph: scalar_tensor(-2.0)
    ("fill_where", [[4, 8], {"thresh": 1}]),                      # new graph: gt.Scalar(x, 1)
    ("fill_where", [[4, 8], {"fill": 0}]),                        # new graph: an int, traced a float
    ("fill_where", [[4, 8], {"t": 1}]),                           # new graph: an int, traced a float
    ("fill_where", [[4, 8], {"thresh": 0.5}]),                    # new graph: gt.Scalar's 0, not 0.5
]
# regroup (dynamic=True): groups a SymInt whose guards hold the trace's checks on it.
RETRACE_CALLS = [
    ("regroup", [[4, 12], 4]),                                    # hit: another value, every clause holds
    ("unflat_heads", [[4, 12], 2]),                               # hit: the or's divisibility holds
]
RETRACE_UNDECIDED = [
    ("regroup", [[4, 12], 5]),                                    # torch: raises (12 columns into 5 groups)
    ("unflat_heads", [[4, 8], 3]),                                # torch: raises; fails x.size(1) % heads == 0 in an or
]
# A call given the value a clause ``n != c`` excludes: Dynamo specializes n to c, and the
# cache does not show whether that changes the graph it records.
SPECIALIZED_UNDECIDED = [
    ("regroup", [[4, 12], 1]),                                    # torch: another graph (view's sizes hold 1)
    ("neg_tail", [[4, 10], 1]),                                   # torch: a new entry of the same key
]
# ramp (dynamic=True), built with n=8 of 16 columns: guards n <= x.size(1), x.size(1) != n, n >= 2.
RAMP_CALLS = [("ramp", [[6, 16], 6])]                              # hit: every clause holds
RAMP_UNDECIDED = [
    ("ramp", [[4, 16], 20]),                                      # torch: raises (the slice clamped at 16)
    ("ramp", [[4, 16], 0]),                                       # torch: another graph, n kept an input
]
# mode_net: a module compiled whole in eval mode; the mode given as self.training.
MODE_UNDECIDED = [
    ("mode_net", [[8, 16], {"self.training": True}]),             # torch: another graph (batch norm, dropout)
    ("mode_net", [[8, 16], {"self.training": False}]),            # torch: a hit
]

# cat_rows (dynamic=True, built xs=[[2,4],[3,4]], dim=0): no entry of its keys records the
# function (Inductor keeps no stack trace of these ops). A call none of the keys that record
# no function can take is a new graph whichever function they are; one that such a key would
# serve is undecided, as that key may be another function's.
UNATTRIBUTED_CALLS = [
    ("cat_rows", [[[5, 4], [1, 4]], 0]),                          # new graph: xs[1]'s rows are 1
    ("cat_rows", [[[2, 4], [2, 4]], 1]),                          # new graph: equal rows, one symbol
]
UNATTRIBUTED_UNDECIDED = [
    ("cat_rows", [[[2, 4], [3, 4]], 0]),                          # torch: a hit, if the key is cat_rows's
    ("cat_rows", [[[2, 4], [3, 4], [1, 4]], 0]),                  # torch: another graph (three tensors)
]

# star_sum / star_pair (dynamic=None, built with two [4, 4] tensors as *xs): fewer elements
# than a key takes, or more where the loop reads every one, trace another graph; more where
# the code reads by index only are undecided (torch hits: the graph is the same).
STAR_CALLS = [
    ("star_sum", [[[4, 4], [4, 4]]]),                             # hit
    ("star_sum", [[[4, 4], [4, 4], [4, 4]]]),                     # new graph: the loop reads xs[2]
    ("star_sum", [[[4, 4]]]),                                     # new graph: the key takes xs[1]
]
STAR_UNDECIDED = [("star_pair", [[[4, 4], [4, 4], [4, 4]]])]      # torch: a hit (xs[2] never read)

# split_sum (dynamic=True, built x=[6,12], n=4: 3 pieces, the loop reads each) and split_two
# (built x=[4,12], n=4, pieces 0 and 1 read): a call that splits into another number of pieces
# is another graph where every piece is read; with two read by index it stays undecided.
SPLIT_CALLS = [
    ("split_sum", [[4, 9], 3]),                                   # hit: 3 pieces
    ("split_sum", [[4, 16], 4]),                                  # new graph: 4 pieces
    ("split_sum", [[4, 12], 6]),                                  # new graph: 2 pieces (the last 0 wide)
]
SPLIT_UNDECIDED = [("split_two", [[4, 16], 4])]                   # 4 pieces, two read

# decay_step / decay_neg (dynamic=None), built with step=1 then step=2: the second key takes
# step as a SymInt, and lr stays a constant folded beside it. Each call is the one after a
# recompile (a first call with step=1, then this one), asked with --after-recompile.
_WARM = {"warm_up": [[[4, 3], {"step": 1}]]}
SYMBOLIC_CALLS = [
    ("decay_step", [[4, 3], {"step": 3}], _WARM),                 # hit: -lr is the graph's -0.1
    ("decay_step", [[4, 3], {"step": 3, "lr": 0.2}], _WARM),      # new graph: -0.2, not -0.1
]
# torch: a hit; the graph tensorifies the scalar and records no compiled frame: not a HIT
# resting on checked parameters
SYMBOLIC_UNDECIDED = [("decay_neg", [[4, 3], {"step": 3}], _WARM)]

# A flag through **kwargs (kw_built_with: built with flag=True; kw_built_without: built with
# no keyword): the cache never says which keywords a key was compiled with, so every verdict
# is undecided without a run's trace (tests/torch/test_explain.py gives it the replay's).
KWARGS_CALLS = [
    ("kw_built_with", [[6, 5]]),                                  # torch: a new graph
    ("kw_built_with", [[6, 5], {"flag": True}]),                  # torch: a hit
    ("kw_built_without", [[6, 5]]),                               # torch: a hit
    ("kw_built_without", [[6, 5], {"flag": True}]),               # torch: a new graph
]

# kw_tensor (dynamic=False, built with bias=[5]): a tensor through a **kw dict not named
# kwargs, the key's input L['kw']['bias'] (tests/torch/test_explain.py, with the replay's trace).
KW_DICT_CALLS = [
    ("kw_tensor", [[6, 5], {"bias": [5]}]),                       # torch: a hit
    ("kw_tensor", [[6, 5], {"bias": [6, 5]}]),                    # torch: a new graph (bias's sizes)
    ("kw_tensor", [[6, 5], {"shift": [5]}]),                      # torch: raises (KeyError: the code reads kw['bias'])
]

# regroup_baked (dynamic=False, built with groups=3): groups is an item of view's and
# repeat's size lists, [4, 3, -1] and [3] in the key's graph.
SIZES_CALLS = [
    ("regroup_baked", [[4, 12], 3]),                              # hit: the lists hold 3 where the code has groups
    ("regroup_baked", [[4, 12], 4]),                              # new graph: 4, where the graph has 3
]
# spread_ops (dynamic=False, built with dim=1): aten.var.correction(x, [1], correction = 1.0)
# then aten.unsqueeze.default(var, -1); keepdim=False and d=-1 as left out.
OPS_CALLS = [
    ("spread_ops", [[4, 6], {"dim": 1}]),                         # hit: [1], no keepdim, -1
    ("spread_ops", [[4, 6], {"dim": -1}]),                        # new graph: [-1], where the graph has [1]
    ("spread_ops", [[4, 6], {"dim": 1, "keepdim": True}]),        # new graph: keepdim = True, not printed here
    ("spread_ops", [[4, 6], {"dim": 1, "d": 1}]),                 # new graph: unsqueeze's 1 (the same place as -1)
    ("spread_ops", [[4, 6]]),                                     # new graph: dim=None, no dim in the op
]
# dim_sized (dynamic=False, built with d=1): d is also torch.ones's d + 5 (aten.full's list),
# where the float rule finds no float constant: undecided, though torch hits.
OPS_UNDECIDED = [("dim_sized", [[4, 6], 1])]
# gated (dynamic=None, built with n=3): a data-dependent if breaks the graph, and n is read
# only after it: the first frame's key serves every n, the resume frame's (its local y
# named, as the docs say) baked n in. gated_early reads n before the break too, where no
# op takes its value: the first frame's verdict stays undecided though torch hits.
BREAK_CALLS = [
    ("gated", [[4, 8], 3]),                                       # hit in both frames
    ("gated", [[4, 8], 4]),                                       # the first frame hits; the resume frame: new graph
]
BREAK_UNDECIDED = [("gated_early", [[4, 8], 4])]                   # torch: the first frame hits


# A module whose parameters need grad, called without a backward: the forward's FX key alone.
UNNAMED_CALLS = [("grad_forward", [[4, 8]])]                       # torch: a hit on that FX key

# cast_to (dynamic=True), built with its default dtype=torch.float16 (a convert_element_type
# in the graph) and with torch.float32, x's own dtype (.to returns x: no op in that graph);
# cast_through reaches its dtype through an expression, which no graph constant shows.
DTYPE_CALLS = [
    ("cast_to", [[6, 8]]),                                        # hit: the default's key
    ("cast_to", [[6, 8], {"dtype": {"dtype": "float16"}}]),       # hit: the default, given
    ("cast_to", [[6, 8], {"dtype": {"dtype": "bfloat16"}}]),      # new graph: another convert
    ("cast_to", [[6, 8], {"@static": [0]}]),                      # new graph: mark_static keeps dim 0 at 6
]
# Undecided, torch: a hit. float32 is x's own dtype, for which .to makes no op in the key built
# with it, and neither does .to(None), another graph; cast_through's dtype through an expression.
DTYPE_UNDECIDED = [
    ("cast_to", [[6, 8], {"dtype": {"dtype": "float32"}}]),
    ("cast_through", [[6, 8], {"dtype": {"dtype": "float16"}}]),
]


# grad_mix (dynamic=True), built with grad enabled and w requiring grad: a training graph.
# The grad mode and each input's requires_grad are hashed into the AOTAutograd key; the
# entry records its backward (so grad was enabled) and which input required grad. Each call
# says both, as a user who knows how the cache was built would not need to.
_GRAD = "torch.is_grad_enabled()"
GRAD_CALLS = [
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True}]),   # hit: as built, another size
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": False}]),  # new graph: requires_grad hashed
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: False, "w.requires_grad": True}]),  # new graph: grad mode hashed
]
# Global state beside the grad mode (fxcache_core/lookup/global_state.py): inference mode
# turns grad off, which the training entry shows it was not compiled with; autocast and the
# default dtype are hashed into the keys and recorded nowhere in the cache: undecided, whether
# torch hits (as built) or not.
STATE_CALLS = [
    ("grad_mix", [[6, 8], [8, 8], {"torch.is_inference_mode_enabled()": True, "w.requires_grad": True}]),  # new graph
]
STATE_UNDECIDED = [
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True, "torch.is_autocast_enabled()": False}]),
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True, "torch.is_autocast_enabled()": True}]),
    ("grad_mix", [[6, 8], [8, 8], {_GRAD: True, "w.requires_grad": True,
                                   "torch.get_default_dtype()": {"dtype": "float64"}}]),
]
# regroup's key (no input requires grad) has no backward: compiled with grad enabled (as it
# was: torch hits) or under no_grad, the cache does not record which.
GRAD_UNDECIDED = [("regroup", [[4, 12], 3, {_GRAD: True}])]
# scale_default (dynamic=None), built with scale left out, then scale=2.0 in the same process:
# the second key takes scale as a tensor. A fresh process's first call specializes the float.
FLOAT_DEFAULT_CALLS = [
    ("scale_default", [[4, 4]]),                                  # hit: the first key, not the tensor one
    ("scale_default", [[4, 4], {"scale": 1.0}]),                  # the same, given
]

# shift_kw (dynamic=None, built with shift left out): a keyword-only int that meets x in
# arithmetic only, the scalar of aten.add.Tensor(mul, 0). sized_kw's n is also arange's
# length, which no constant of the graph shows: undecided.
INT_KW_CALLS = [
    ("shift_kw", [[4, 4]]),                                       # hit: shift left out is add's 0
    ("shift_kw", [[4, 4], {"shift": 0}]),                         # hit: the default, given
    ("shift_kw", [[4, 4], {"shift": 1}]),                         # new graph: add's 1, not 0
]
INT_KW_UNDECIDED = [("sized_kw", [[4, 2]])]                        # torch: a hit
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


# The match runs each test makes, run ahead on the build threads (tests.harness.match_runs):
# assert_match_agrees_with_answer's (no --fn), assert_verdict_as_torch's and _match's (--fn case).
_AGREES = ahead(lambda case, shapes, **_: [Call(case, shapes)])
_VERDICT = ahead(lambda case, shapes, **_: [Call(case, shapes, case)])
_BOTH = ahead(lambda case, shapes, **_: [Call(case, shapes), Call(case, shapes, case)])


def _both_for(agreeing: list) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The verdict's run, and the lookups' too for the calls of ``agreeing``."""
    return ahead(lambda case, shapes, **_: [*([Call(case, shapes)] if (case, shapes) in agreeing else []),
                                            Call(case, shapes, case)])


def _id(case: str, shapes: list, *options: dict) -> str:
    return f"{case}-{json.dumps(shapes).replace(' ', '')}" + ("-after-recompile" if options else "")


@pytest.fixture(scope="session")
def arg_answers(real_cache) -> dict[str, dict]:
    from tests.harness.recorded import answers_for

    return answers_for(real_cache.summary, "real")


def _match(root, case: str, shapes: list, *extra: str) -> tuple[int, dict]:
    proc = match_call(root, Call(case, shapes, case, extra))
    body = json.loads(proc.stdout)
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    return proc.returncode, body


@_AGREES
@pytest.mark.parametrize("case,shapes", ARG_CALLS, ids=[_id(*c) for c in ARG_CALLS])
def test_each_key_is_looked_up_as_torch_looked_it_up(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], own)


@_VERDICT
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
    rc, body = _match(real_cache.root, "flags", [[8, 16], {"act": "gelu"}])
    (fv,) = body["verdicts"]["functions"]
    assert rc == 1 and fv["phases"]["first"]["status"] == "new-graph", fv
    why = {r["key"]: r["reasons"] for r in body["results"] if r["kind"] == "aotautograd"}
    assert any("clip=False (its default) fails `if clip:`" in w for ws in why.values() for w in ws), why
    assert any("act='gelu' passes `if act == 'gelu':`" in w for ws in why.values() for w in ws), why
    rc, body = _match(real_cache.root, "flags", [[8, 16], {"clip": True, "act": "gelu"}])
    (fv,) = body["verdicts"]["functions"]
    clip = next(p for p in fv["params"] if p["name"] == "clip")
    assert rc == 0 and clip == {"name": "clip", "value": "True", "given": True, "status": "accounted",
                                "how": "branch", "detail": clip["detail"]}, clip
    human = run_fxcache("--cache-dir", str(real_cache.root), "match", "--fn", "flags",
                        *match_args_for("flags", [[8, 16], {"clip": True, "act": "gelu"}]))
    assert "rests on clip=True: the graph went through `if clip:`" in human.stdout, human.stdout
    assert "act='gelu': the graph went through `if act == 'gelu':`" in human.stdout, human.stdout


@_VERDICT
@pytest.mark.parametrize("case,shapes", UNDECIDED_CALLS, ids=[_id(*c) for c in UNDECIDED_CALLS])
def test_without_evidence_the_verdict_stays_undecided_whatever_torch_does(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
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
    rc, body = _match(real_cache.root, "step_loss", [[6, 5]])
    present = {k.key for k in scan_cache(real_cache.root).keys}
    aot = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]
    assert len(aot) == 2 and all(lk["hit"] and lk["key"] in present for lk in aot), aot
    statuses = {f["function"]: f["status"] for f in body["verdicts"]["functions"]}
    assert rc == 0 and set(statuses.values()) == {"hit"} and len(statuses) == 2, statuses
    assert torch_status(answer["lookups"], present) == "hit"


@_BOTH
@pytest.mark.parametrize("case,shapes", CONSTANT_CALLS, ids=[_id(*c) for c in CONSTANT_CALLS])
def test_ints_a_tuple_and_a_bool_are_read_off_the_graphs_constants(real_cache, arg_answers, case, shapes):
    """Each key is looked up as torch looked it up, and the verdict is torch's: a hit
    accounts for n, dims and keepdim by the constants of the key's graph (a tuple's
    said to assume a tuple); another value rules each key out by a constant that differs."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        how = {p["name"]: p["how"] for p in v["params"]}
        assert how == {"x": "key-input", "n": "baked-constant", "dims": "tuple-assumed",
                       "keepdim": "baked-constant"}, v["params"]
    else:
        assert v["status"] == "new-graph" and v["why_code"] == "baked-value-differs", v


@_VERDICT
@pytest.mark.parametrize("case,shapes", CONSTANT_UNDECIDED, ids=[_id(*c) for c in CONSTANT_UNDECIDED])
def test_a_slice_the_graph_left_out_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "baked-value-unknown", fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@_BOTH
@pytest.mark.parametrize("case,shapes", PINNED_CALLS, ids=[_id(*c) for c in PINNED_CALLS])
def test_an_int_dynamo_specialized_given_another_value_is_another_graph(real_cache, arg_answers, case, shapes):
    """A SymInt input Dynamo specialized while tracing (``Sym(1)``) pins the int with a
    guard; another value fails it, and torch traces a graph with that value in it: another
    key (a new graph), not a new entry of this one."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    assert v["status"] == "hit" or v["why_code"] == "specialized-int-differs", v


@_BOTH
@pytest.mark.parametrize("case,shapes", SCALAR_CALLS, ids=[_id(*c) for c in SCALAR_CALLS])
def test_a_python_scalar_is_read_where_it_lands_in_the_graph_and_by_its_type(real_cache, arg_answers, case, shapes):
    """A float fill of torch.where is the constant of the scalar_tensor aten wraps it in; an
    int compared with a tensor is gt.Scalar's, and a float compared where the key was traced
    with an int is read off gt.Scalar by its place (fxcache_core/lookup/float_ops.py); an int
    given where the graph holds a float read from that parameter itself fails Dynamo's type
    guard: each verdict is torch's, and each key looked up as torch looked it up."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    given = shapes[1] if len(shapes) > 1 else {}
    looked = answer
    if given == {"fill": 0}:
        # The int fill's AOTAutograd graph is another, but Inductor's graph of it is the
        # float's (its post-grad graph converts the fill): torch, compiling the new key,
        # finds that FX entry. match judges an FX key through the AOTAutograd keys that
        # load it, none of which takes this call: compare the AOTAutograd lookups.
        looked = {**answer, "lookups": [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, looked, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    code = {"fill": "float-constant-differs" if given.get("fill") != 0 else "scalar-type-differs",
            "thresh": "baked-value-differs" if given.get("thresh") != 0.5 else "float-op-differs",
            "t": "scalar-type-differs"}.get(next(iter(given), ""))
    assert v["status"] == ("hit" if code is None else "new-graph"), v
    assert code is None or v["why_code"] == code, v


@_both_for(TUPLE_CALLS)
@pytest.mark.parametrize("case,shapes", TUPLE_CALLS + TUPLE_UNDECIDED, ids=[_id(*c) for c in TUPLE_CALLS + TUPLE_UNDECIDED])
def test_a_tuple_of_another_length_is_another_graph_where_the_keys_inputs_show_it(real_cache, arg_answers, case, shapes):
    """A tuple shorter than an item the keys take an input from is a new graph, as torch
    did; a longer one is undecided (whether the code reads the items past those the key
    takes, the cache does not show), though torch traced another graph, never a HIT."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    if (case, shapes) in TUPLE_CALLS:
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        assert v["status"] == "new-graph" and v["why_code"] == "sequence-shorter", v
        assert "dims is a tuple of 0 items here, and this key takes an input from dims[0]" in v["why"], v
        return
    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "sequence-longer-unknown", fv
    assert fv["line"].startswith("UNDECIDED: dims=(0, 1): 2 items"), fv["line"]
    assert torch_status(answer["lookups"], {k.key for k in scan_cache(real_cache.root).keys}) == "new-graph"


@_BOTH
@pytest.mark.parametrize("case,shapes", RETRACE_CALLS, ids=[_id(*c) for c in RETRACE_CALLS])
def test_an_int_symbol_hits_where_every_clause_holds(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    assert assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)["status"] == "hit"


@_VERDICT
@pytest.mark.parametrize("case,shapes", SPECIALIZED_UNDECIDED, ids=[_id(*c) for c in SPECIALIZED_UNDECIDED])
def test_an_int_given_the_value_its_guard_excludes_is_undecided(real_cache, arg_answers, case, shapes):
    """An int argument is a SymInt whatever its value; where the trace checked whether it is
    1 (``groups != 1``, ``k != 1``), a call with 1 makes Dynamo specialize it. regroup's view
    then records another graph (torch: another key); neg_tail's slice the same graph (torch:
    a new entry of the key). The cache does not tell them apart: undecided, both."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "value-specialized", fv
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    want = {"regroup": "new-graph", "neg_tail": "miss"}[case]
    assert answer["error"] is None and torch_status(answer["lookups"], present) == want, answer


@_VERDICT
@pytest.mark.parametrize("case,shapes", RETRACE_UNDECIDED, ids=[_id(*c) for c in RETRACE_UNDECIDED])
def test_a_failed_equality_of_the_trace_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes):
    """A call that fails an equality the trace relied on (the view's dim dividing) is traced
    again: another graph, or (here) an error; never a new entry of this key by the cache
    alone."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "equality-failed", fv
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert answer["error"] is not None or torch_status(answer["lookups"], present) != "miss", answer


@_BOTH
@pytest.mark.parametrize("case,shapes", RAMP_CALLS, ids=[_id(*c) for c in RAMP_CALLS])
def test_an_int_that_slices_and_sizes_hits_where_every_clause_holds(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    assert assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)["status"] == "hit"


@_VERDICT
@pytest.mark.parametrize("case,shapes,code", [(*RAMP_UNDECIDED[0], "relation-failed"), (*RAMP_UNDECIDED[1], "size-boundary")],
                         ids=[_id(*c) for c in RAMP_UNDECIDED])
def test_a_failed_relation_or_an_int_size_at_0_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes,
                                                                          code):
    """``x[:, :n] + torch.arange(n)`` with n past x.size(1) fails ``n <= x.size(1)``: the slice
    is clamped and torch raises on the add; with n=0 it fails ``n >= 2`` (n sizes the arange)
    and torch traces another graph. Neither is a new entry of the key by the cache alone."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == code, fv
    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert answer["error"] is not None or torch_status(answer["lookups"], present) != "miss", answer


@pytest.mark.parametrize("case,shapes", MODE_UNDECIDED, ids=[_id(*c) for c in MODE_UNDECIDED])
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

@_VERDICT
@pytest.mark.parametrize("case,shapes", UNATTRIBUTED_CALLS + UNATTRIBUTED_UNDECIDED,
                         ids=[_id(*c) for c in UNATTRIBUTED_CALLS + UNATTRIBUTED_UNDECIDED])
def test_keys_that_record_no_function_decide_only_what_holds_whichever_function_they_are(
        real_cache, arg_answers, case, shapes):
    """``--fn cat_rows`` where no key records that function and its keys record none: not
    a usage error. A call none of those keys can take is torch's new graph, naming them; a
    call one of them would serve is undecided (torch hits only if the key is cat_rows's, and
    a key of another function would not be looked up), whatever torch did."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    own = {w["key"] for w in real_cache.writes(case) if w["kind"] == "aotautograd"}
    assert own and set(body["unattributed"]) >= own, body["unattributed"]
    if (case, shapes) in UNATTRIBUTED_CALLS:
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        assert v["status"] == "new-graph" and "no function (the entries keep no stack traces)" in v["why"], v
    else:
        assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "function-unattributed", fv
        present = {k.key for k in scan_cache(real_cache.root).keys}
        expected = "hit" if len(shapes[0]) == 2 else "new-graph"
        assert torch_status(answer["lookups"], present) == expected  # torch varies with it


@pytest.mark.parametrize("shapes,given_dim", [([[[2, 4], [3, 4], [1, 4]], 0], False),
                                              ([[[2, 4], [3, 4]], 0], False),
                                              ([[[2, 4], [3, 4]], 0], True)],
                         ids=["three", "two", "two-dim"])
def test_without_fn_a_key_that_records_no_function_hits_only_a_call_its_inputs_account_for(
        real_cache, arg_answers, shapes, given_dim):
    """No --fn: cat_rows's key (built with two tensors) records no function, so nothing but
    its inputs is known. Three tensors (a list of another length: torch traces another
    graph) are undecided, naming xs[2], not a HIT on the two it takes; two tensors, all the
    call gives bound to the key's inputs, hit as torch hit, with dim=0 given too: under
    dynamic=True the key has dim as a symbol its guards pin (torch.cat specializes it), so
    they decide it as they decide the sizes."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    args = match_args_for("cat_rows", shapes)
    assert args[-2:] == ["--shapes", "dim=0"], args
    args = args if given_dim else args[:-2]
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", *args)
    body = json.loads(proc.stdout)
    (fv,) = [v for v in body["verdicts"]["functions"] if v["function"] is None]
    writes = real_cache.writes("cat_rows")
    assert {w["key"] for w in writes if w["kind"] == "aotautograd"} <= set(fv["keys"]) <= {w["key"] for w in writes}
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(arg_answers[call_id("cat_rows", shapes)]["lookups"], present)
    assert torch_did == ("hit" if len(shapes[0]) == 2 else "new-graph"), torch_did
    if len(shapes[0]) == 2:
        assert fv["status"] == "hit", fv
        assert (fv["key"], fv["entry"]) == _aot_hit(arg_answers[call_id("cat_rows", shapes)]), fv
        return
    assert proc.returncode == 3 and fv["status"] == "undecided" and fv["why_code"] == "argument-unaccounted", fv
    assert fv["line"].startswith("UNDECIDED: xs[2]=[1,4]: an element of xs"), fv["line"]


@_both_for(STAR_CALLS)
@pytest.mark.parametrize("case,shapes", STAR_CALLS + STAR_UNDECIDED, ids=[_id(*c) for c in STAR_CALLS + STAR_UNDECIDED])
def test_a_star_args_tuple_of_another_length_is_another_graph_where_the_keys_inputs_or_a_loop_show_it(
        real_cache, arg_answers, case, shapes):
    """``*xs``: a call with fewer tensors than the key takes, or more where the code loops
    over every element from the second on, is torch's new graph, naming the rule; as
    built, a hit. Read by index only, a longer call is undecided: torch hits (the third
    tensor is never read), which the cache alone does not show."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    if (case, shapes) in STAR_CALLS:
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        n = len(shapes[0])
        assert v["status"] == "hit" if n == 2 else v["why_code"] == ("list-longer" if n == 3 else "list-shorter"), v
        return
    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "list-element-not-input", fv
    assert torch_status(answer["lookups"], {k.key for k in scan_cache(real_cache.root).keys}) == "hit"


@_both_for(SPLIT_CALLS)
@pytest.mark.parametrize("case,shapes", SPLIT_CALLS + SPLIT_UNDECIDED, ids=[_id(*c) for c in SPLIT_CALLS + SPLIT_UNDECIDED])
def test_a_split_into_another_number_of_pieces_is_another_graph_where_the_code_reads_every_piece(
        real_cache, arg_answers, case, shapes):
    """``x.split(n, 1)`` under dynamic=True guards the number of pieces: a call that makes
    another number is torch's new graph where the loop reads every piece (naming the
    clause), a hit where it makes as many; where the code reads two pieces by index, the
    failed clause leaves the verdict undecided, whatever torch did."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    if (case, shapes) in SPLIT_CALLS:
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
        v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
        assert v["status"] == "hit" if shapes == [[4, 9], 3] else v["why_code"] == "split-pieces-differ", v
        return
    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "equality-failed", fv


@ahead(lambda case, shapes, **_: [Call(case, shapes, case, ("--after-recompile",))])
@pytest.mark.parametrize("case,shapes,options", SYMBOLIC_CALLS + SYMBOLIC_UNDECIDED,
                         ids=[_id(*c) for c in SYMBOLIC_CALLS + SYMBOLIC_UNDECIDED])
def test_a_float_folded_beside_a_symbolic_int_is_read_off_the_symbolic_nodes(
        real_cache, arg_answers, case, shapes, options):
    """After a recompile that made step a SymInt, lr's value reaches the graph as the
    constant operand of a node on SymNodes (``-0.1 / sub``): the call after a recompile
    hits where the call's -lr is that constant, and is another graph where it is not, as
    torch did. decay_neg (a minus over the symbolic part) is traced otherwise: torch
    tensorifies the scalar and the key records no compiled frame, so its parameters go
    unchecked and its verdict must say so (the node forms not read: tests/unit/test_sym_floats.py)."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes, options)]
    rc, body = _match(real_cache.root, case, shapes, "--after-recompile")
    (fv,) = body["verdicts"]["functions"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(answer["lookups"], present)
    if (case, shapes, options) in SYMBOLIC_UNDECIDED:
        # Torch tensorifies decay_neg's symbolic scalar after the recompile, and that key's
        # entries record no compiled frame: nothing but its inputs is known. step=3 is one
        # of them (a symbol its guards check), so the verdict is torch's hit; lr, left out,
        # is never said to be accounted, and the parameters are said to be unchecked.
        assert torch_did == "hit", answer["lookups"]
        assert rc == 0 and fv["status"] == "hit" and (fv["key"], fv["entry"]) == _aot_hit(answer), fv
        assert not any(p["name"] == "lr" for p in fv["params"]) and fv["params_unchecked_code"] == "params-unchecked"
        return
    assert fv["status"] == torch_did, (fv, answer["lookups"])
    if torch_did == "hit":
        assert (fv["key"], fv["entry"]) == _aot_hit(answer), fv
        lr = next(p for p in fv["params"] if p["name"] == "lr")
        assert lr["status"] == "accounted" and "-0.1 beside a symbol" in lr["detail"], lr
    else:
        why = [w for r in body["results"] for w in r["reasons"]]
        assert any("-0.1 there, the call gives -0.2" in w for w in why), why


def _aot_hit(answer: dict) -> tuple[str, str]:
    (lk,) = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd" and lk["hit"]]
    return lk["key"], lk["hit"]


@_VERDICT
@pytest.mark.parametrize("case,shapes", KWARGS_CALLS, ids=[_id(*c) for c in KWARGS_CALLS])
def test_keywords_through_kwargs_are_undecided_without_a_trace_whatever_torch_does(real_cache, arg_answers,
                                                                                   case, shapes):
    """Given or not, the keywords that reach **kwargs are recorded nowhere in the cache
    (torch hits where the call's keywords are the build's, and traces another graph where
    they are not): undecided, naming **kwargs and the trace that would decide it, one code
    for both directions."""
    from tests.harness.oracle import call_id

    torch_hit = any(lk["hit"] for lk in arg_answers[call_id(case, shapes)]["lookups"])
    assert torch_hit == ((case == "kw_built_with") == ("flag" in json.dumps(shapes)))  # the keywords as built
    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "kwargs-unrecorded", fv
    assert "**kwargs" in fv["line"] and "fxcache explain TRACE" in fv["line"], fv


@pytest.mark.parametrize("case,shapes", UNNAMED_CALLS, ids=[_id(*c) for c in UNNAMED_CALLS])
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

@_BOTH
@pytest.mark.parametrize("case,shapes", SIZES_CALLS, ids=[_id(*c) for c in SIZES_CALLS])
def test_an_int_in_a_size_list_is_read_off_the_items_of_the_graphs_lists(real_cache, arg_answers, case, shapes):
    """x.view(x.shape[0], groups, -1) and y.repeat(groups), traced with groups=3, hold 3 in
    their ops' lists: the call's groups is that item or another graph, as torch did."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        groups = next(p for p in v["params"] if p["name"] == "groups")
        assert groups["how"] == "baked-constant" and "the size lists at line" in groups["detail"], groups
    else:
        assert v["status"] == "new-graph" and v["why_code"] == "baked-value-differs", v


@_BOTH
@pytest.mark.parametrize("case,shapes", OPS_CALLS, ids=[_id(*c) for c in OPS_CALLS])
def test_an_int_bool_or_none_an_op_keeps_is_read_off_that_ops_argument(real_cache, arg_answers, case, shapes):
    """std's dim and keepdim and unsqueeze's dim, traced with dim=1, keepdim=False, d=-1:
    the call's values are the op's, or torch traces another graph, as it did (d=1 is the
    same place as -1 in a rank-2 tensor, and still another graph)."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        for name in ("dim", "keepdim", "d"):
            p = next(p for p in v["params"] if p["name"] == name)
            assert p["how"] == "baked-constant" and "the arguments of its ops at line" in p["detail"], p
    else:
        assert v["status"] == "new-graph" and v["why_code"] == "baked-value-differs", v


@_VERDICT
@pytest.mark.parametrize("case,shapes", OPS_UNDECIDED, ids=[_id(*c) for c in OPS_UNDECIDED])
def test_an_int_that_is_a_dim_and_sizes_a_tensor_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    v = body["verdicts"]["functions"][0]
    assert rc == 3 and v["status"] == "undecided", v
    assert v["why_code"] in ("baked-value-unknown", "float-provenance-unknown"), v
    assert v["line"].startswith("UNDECIDED: d reaches this key's graph"), v["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@_BOTH
@pytest.mark.parametrize("case,shapes", BREAK_CALLS, ids=[_id(*c) for c in BREAK_CALLS])
def test_an_int_read_only_after_the_graph_break_is_the_resume_frames_alone(real_cache, arg_answers, case, shapes):
    """The first frame's graph ends at the data-dependent if, before any read of n: its
    verdict is torch's hit for every n, n accounted as read after the break; the resume
    frame's key baked n in, and is looked up as torch looked it up."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    rc, body = _match(real_cache.root, case, shapes)
    present = {k.key for k in scan_cache(real_cache.root).keys}
    aot = [lk for lk in answer["lookups"] if lk["kind"] == "aotautograd"]
    assert len(aot) == 2 and aot[0]["hit"] and aot[0]["key"] in present, aot
    resumed = (aot[1]["hit"] is not None) == (shapes[1] == 3) and (aot[1]["key"] in present) == (shapes[1] == 3)
    assert resumed, aot  # torch: the resume frame's key is the built one for n=3 only
    by = {"resume" if (f["function"] or "").startswith("torch_dynamo_resume_in_") else "first": f
          for f in body["verdicts"]["functions"]}
    assert by["first"]["status"] == "hit", by
    n = next(p for p in by["first"]["params"] if p["name"] == "n")
    assert n["status"] == "accounted" and n["how"] == "after-break", n
    assert by["resume"]["status"] == ("hit" if shapes[1] == 3 else "new-graph"), by
    assert rc == (0 if shapes[1] == 3 else 1), rc


@_VERDICT
@pytest.mark.parametrize("case,shapes", BREAK_UNDECIDED, ids=[_id(*c) for c in BREAK_UNDECIDED])
def test_an_int_read_before_the_graph_break_too_leaves_the_first_frame_undecided(real_cache, arg_answers,
                                                                                 case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    first = next(f for f in body["verdicts"]["functions"] if f["function"] == case)
    assert rc == 3 and first["status"] == "undecided" and first["why_code"] == "baked-value-unknown", first
    assert first["line"].startswith("UNDECIDED: n reaches this key's graph at line"), first["line"]
    aot = [lk for lk in arg_answers[call_id(case, shapes)]["lookups"] if lk["kind"] == "aotautograd"]
    assert aot[0]["hit"] and aot[0]["key"] in {k.key for k in scan_cache(real_cache.root).keys}, aot

@_BOTH
@pytest.mark.parametrize("case,shapes", DTYPE_CALLS, ids=[_id(*c) for c in DTYPE_CALLS])
def test_a_dtype_is_read_off_the_convert_its_graph_has_or_lacks(real_cache, arg_answers, case, shapes):
    """Each key is looked up as torch looked it up, and the verdict is torch's: a hit
    accounts for dtype (given, or its default torch.float16 read from the source) by the
    dtype the key's graph converts to; another dtype rules each key out, the float32 key
    too (a .to() of another dtype than x's would have left a convert in its graph); a dim
    marked static rules out the keys that have it symbolic."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        how = {p["name"]: (p["how"], p["given"]) for p in v["params"]}
        assert how == {"x": ("key-input", True), "dtype": ("baked-constant", len(shapes) > 1)}, v["params"]
    else:
        code = "marked-static-dim-symbolic" if "@static" in shapes[-1] else "dtype-constant-differs"
        assert v["status"] == "new-graph" and v["why_code"] == code, v


@_VERDICT
@pytest.mark.parametrize("case,shapes", DTYPE_UNDECIDED, ids=[_id(*c) for c in DTYPE_UNDECIDED])
def test_a_dtype_through_an_expression_or_no_convert_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "dtype-provenance-unknown", fv
    named = "dtype if x.dim() == 2 else torch.float32" if case == "cast_through" else "given None"
    assert named in fv["line"], fv["line"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"

@_VERDICT
@pytest.mark.parametrize("case,shapes", GRAD_CALLS, ids=[_id(*c) for c in GRAD_CALLS])
def test_grad_mode_and_requires_grad_are_read_off_the_training_entry(real_cache, arg_answers, case, shapes):
    """A call that says its grad mode and whether the weight requires grad: the verdict is
    torch's, from what the AOTAutograd entry records (its backward: compiled with grad
    enabled; which input required grad), never a hit that ignored either."""
    from tests.harness.oracle import call_id

    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    said = shapes[-1]
    if v["status"] == "hit":
        how = {p["name"]: p["how"] for p in v["params"]}
        assert how.get(_GRAD) == "grad-mode" and how.get("w.requires_grad") == "requires-grad", v["params"]
    else:
        assert v["status"] == "new-graph", v
        want = "requires-grad-differs" if not said["w.requires_grad"] else "grad-mode-differs"
        assert want in v["line"] or v["why_code"] == want, v


@_VERDICT
@pytest.mark.parametrize("case,shapes", GRAD_UNDECIDED, ids=[_id(*c) for c in GRAD_UNDECIDED])
def test_grad_mode_given_for_an_entry_without_backward_is_undecided(real_cache, arg_answers, case, shapes):
    """An inference entry was compiled under no_grad, or with grad enabled and nothing that
    needed a backward: the grad mode given is undecided, naming it, though torch hits."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "grad-mode-unrecorded", fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


@_VERDICT
@pytest.mark.parametrize("case,shapes", STATE_CALLS, ids=[_id(*c) for c in STATE_CALLS])
def test_inference_mode_turns_grad_off_and_a_training_entry_is_another_key(real_cache, arg_answers, case, shapes):
    """A call under torch.inference_mode() runs with grad off, which AOTAutograd hashes: the
    training entry (it has a backward) is not torch's, and the verdict is torch's new graph,
    naming the grad mode."""
    from tests.harness.oracle import call_id

    v = assert_verdict_as_torch(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case)
    assert v["status"] == "new-graph", v
    assert "grad-mode-differs" in v["line"] or v["why_code"] == "grad-mode-differs", v


@_VERDICT
@pytest.mark.parametrize("case,shapes", STATE_UNDECIDED, ids=[_id(*c) for c in STATE_UNDECIDED])
def test_autocast_or_the_default_dtype_given_is_undecided_whatever_torch_does(real_cache, arg_answers, case,
                                                                              shapes):
    """Autocast and the default dtype are hashed into the keys and recorded nowhere in the
    cache: given, the verdict is undecided, naming the state, whether torch hit (the value
    the key was compiled with) or looked up another key."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] in ("autocast-unrecorded", "default-dtype-unrecorded"), fv
    as_built = shapes[-1].get("torch.is_autocast_enabled()") is False  # the build's state, said
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == ("hit" if as_built else "new-graph")


@_BOTH
@pytest.mark.parametrize("case,shapes", FLOAT_DEFAULT_CALLS, ids=[_id(*c) for c in FLOAT_DEFAULT_CALLS])
def test_a_float_left_at_its_default_is_not_taken_as_a_tensor_on_a_first_call(real_cache, arg_answers, case,
                                                                              shapes):
    """The key automatic dynamic compiled with the float as a tensor is never looked up by a
    fresh process's first call, whether the call gives the float or leaves it at its default:
    each key's lookup is torch's (that key is never a hit), and the verdict is torch's hit of
    the static key, or undecided, never another decided answer."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    rc, body = _match(real_cache.root, case, shapes)
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) == "hit"
    (fv,) = body["verdicts"]["functions"]
    assert fv["status"] in ("hit", "undecided"), fv
    tensor_key = [r for r in body["results"] if r["kind"] == "aotautograd" and r["status"] != "hit"]
    assert tensor_key and all(r["status"] in ("no-fit", "undecided") for r in tensor_key), tensor_key


@_BOTH
@pytest.mark.parametrize("case,shapes", INT_KW_CALLS, ids=[_id(*c) for c in INT_KW_CALLS])
def test_a_keyword_only_int_in_arithmetic_is_read_off_its_op(real_cache, arg_answers, case, shapes):
    """A keyword-only int given or left at its default is the scalar of the op it meets a
    tensor in: the same value accounts for it (a hit), another rules the key out (torch
    traces another graph), as torch looked the keys up."""
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, {w["key"] for w in real_cache.writes(case)})
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    if v["status"] == "hit":
        assert {p["name"]: p["how"] for p in v["params"]} == {"x": "key-input", "shift": "baked-constant"}, v
    else:
        assert v["why_code"] == "baked-value-differs", v


@_VERDICT
@pytest.mark.parametrize("case,shapes", INT_KW_UNDECIDED, ids=[_id(*c) for c in INT_KW_UNDECIDED])
def test_an_int_that_is_also_a_size_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    rc, body = _match(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and "n=2" in fv["line"], fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"


def _attr_call(shapes: list) -> Call:
    """``fxcache match --json --fn AttrNet`` for a call of ``attr_net``: its tensor as
    forward names it (``x``; the module's own signature is ``*args``), its state as
    ``--inputs self.scale=3.0``, ``G['GAIN']=3.0``."""
    state = [a for n, v in shapes[-1].items() for a in ("--inputs", f"{n}={v!r}")]
    return Call.argv("match", "--json", "--fn", "AttrNet", "--dynamic", "none",
                     "--shapes", "x=" + json.dumps(shapes[0]).replace(" ", ""), *state)


_ATTR = ahead(lambda shapes, **_: [_attr_call(shapes)])


def _attr_net(root, shapes: list) -> tuple[int, dict]:
    """:func:`_attr_call`'s run: its exit code and the function's verdict."""
    proc = match_call(root, _attr_call(shapes))
    body = json.loads(proc.stdout)
    assert proc.returncode == body["verdicts"]["exit_code"], proc.stderr
    (fv,) = body["verdicts"]["functions"]
    return proc.returncode, fv


@_ATTR
@pytest.mark.parametrize("case,shapes", ATTR_CALLS, ids=[_id(*c) for c in ATTR_CALLS])
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
@pytest.mark.parametrize("case,shapes", ATTR_UNDECIDED, ids=[_id(*c) for c in ATTR_UNDECIDED])
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
