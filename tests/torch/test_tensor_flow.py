"""``fxcache match`` on a tensor given for a parameter that a key takes no input from
(``mask=None`` when the key was traced): where torch ops compute the parameter,
unconditionally, into what the function returns
(fxcache_core/lookup/tensor_flow.py), a trace with a tensor there takes it as an input,
so the key is not torch's; elsewhere the verdict stays UNDECIDED.

The cases of ``tests.harness.cases_slices`` (``attend_opt``, ``scores_mask``,
``helper_mask``, ``dead_mask``) are in the session's real cache, each built once without
its mask. So are ``unsq_opt`` (built without its optional int) and ``float_opt`` (built
with its flag), whose ``if p is not None:`` bodies the key's graph has no op from: where
the body makes an op whatever ``p`` is, the key was traced with ``p`` None. Torch's own lookups (a fresh process's first call on a copy of the cache,
recorded by ``python -m tests.harness.recorded``) are the judge.
"""

from __future__ import annotations

import pytest

from tests.harness.match_runs import VERDICT
from tests.harness.oracle import call_id
from tests.helpers import assert_verdict_as_torch, match_call, torch_status

pytestmark = pytest.mark.torch

_QKV = [[1, 2, 6, 8], [1, 2, 6, 8], [1, 2, 6, 8]]

# (case, call description: the tensors, then a dict of keyword values).
TENSOR_FLOW_CALLS = [
    ("attend_opt", [*_QKV, {"mask": [6, 6]}]),  # new graph: the mask is sdpa's attn_mask
    ("attend_opt", [*_QKV]),  # hit: left out, as built
    ("scores_mask", [[4, 8], {"mask": [4, 4]}]),  # new graph: added to what softmax returns
    # new graph: w folded into x, which is rebound under `if w is not None:`, then into the return
    ("rebind_opt", [[4, 8], {"w": [8], "n": 3}]),
]
# Not exact, whatever torch did: the mask goes to a helper the rule does not read (torch: a
# hit), or is computed with into a value the function drops (torch: a new graph).
TENSOR_FLOW_UNDECIDED = [
    ("helper_mask", [[4, 8], {"mask": [4, 8]}]),
    ("dead_mask", [[4, 8], {"mask": [4, 8]}]),
    # Left out, as built (torch: a hit), but undecided by another rule: the graph has no op
    # that shows which way `if mask is not None:` went, and the cache does not record mask.
    ("scores_mask", [[4, 8]]),
]
# An optional int whose `if n is not None:` body makes an op whatever n is (an unsqueeze of a
# tensor computed from x) that reaches the return: the key has no op from that line, so it was
# traced with n None (fxcache_core/lookup/tensor_flow.py body_op_into_output).
BODY_OP_CALLS = [
    ("unsq_opt", [[4, 8]]),  # hit: left out, as built
    ("unsq_opt", [[4, 8], {"n": 3}]),  # new graph: the body runs
]
# Built with flag=True, a body whose op may be none (.float() of a float32 tensor): the key's
# graph shows nothing of which way the test went. Torch: a new graph (Dynamo's graph holds the
# .float() call, which AOTAutograd's printed graph does not): a HIT here would be wrong.
BODY_OP_UNDECIDED = [("float_opt", [[4, 8]])]
# A keyword-only optional tensor (after `*`), built without it, then given: torch traces a new
# graph; the key takes no input from it, and the source adds it to the output only under
# `if bias is not None:`, so nothing shows what the key was traced with (a HIT here, as
# when keyword-only parameters were taken for a closure's tensors, would be wrong).
KEYWORD_ONLY_UNDECIDED = [("kw_bias", [[4, 8], [8], {"bias": [8]}])]
# Built with w and alt given: `x = alt` under `if alt is not None:` leaves the product of w dead,
# so the key takes no input from w, and torch hits. The reading of x through that test keeps no
# kind for it (the sides leave it differently): no verdict from w (a NEW GRAPH would be wrong).
REBOUND_UNDECIDED = [("swap_opt", [[4, 8], {"w": [8], "alt": [2, 3]}])]
_UNDECIDED_CODE = {
    "helper_mask": "tensor-not-input",
    "dead_mask": "tensor-not-input",
    "scores_mask": "branch-unknown",
}


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", TENSOR_FLOW_CALLS, ids=[call_id(*c[:2]) for c in TENSOR_FLOW_CALLS]
)
def test_a_mask_computed_into_the_output_decides_against_a_key_traced_without_it(
    real_cache, arg_answers, case, shapes
):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    assert v["status"] in ("hit", "new-graph"), v
    if isinstance(shapes[-1], dict):
        assert v["why_code"] == "tensor-into-output", v


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", TENSOR_FLOW_UNDECIDED, ids=[call_id(*c[:2]) for c in TENSOR_FLOW_UNDECIDED]
)
def test_a_mask_the_source_does_not_show_in_the_output_stays_undecided(
    real_cache, arg_answers, case, shapes
):
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    assert fv["why_code"] == _UNDECIDED_CODE[case], fv
    assert arg_answers[call_id(case, shapes)]["error"] is None


@VERDICT
@pytest.mark.parametrize("case,shapes", BODY_OP_CALLS, ids=[call_id(*c[:2]) for c in BODY_OP_CALLS])
def test_a_body_that_makes_an_op_whatever_it_is_given_decides_which_way_the_key_went(
    real_cache, arg_answers, case, shapes
):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    if isinstance(shapes[-1], dict):
        assert v["status"] == "new-graph" and v["why_code"] == "branch-not-taken", v
    else:
        assert v["status"] == "hit", v
        assert {p["name"]: p["how"] for p in v["params"]}.get("n") == "branch", v["params"]


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", BODY_OP_UNDECIDED, ids=[call_id(*c[:2]) for c in BODY_OP_UNDECIDED]
)
def test_a_body_whose_op_may_be_none_stays_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] == "branch-unknown", fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "new-graph"


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", KEYWORD_ONLY_UNDECIDED, ids=[call_id(*c[:2]) for c in KEYWORD_ONLY_UNDECIDED]
)
def test_a_keyword_only_tensor_given_where_the_key_takes_none_stays_undecided(
    real_cache, arg_answers, case, shapes
):
    from fxcache_core.cache.scan import scan_cache

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    # w is a tensor of bias's shape: the call may pass one tensor for both (b=@a), which the
    # aliasing rule names; either way the key's lookup is not decided
    assert rc == 3 and fv["status"] == "undecided" and fv["why_code"] in ("tensor-not-input",
                                                                         "aliased-inputs-unknown"), fv
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "new-graph"


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", REBOUND_UNDECIDED, ids=[call_id(*c[:2]) for c in REBOUND_UNDECIDED]
)
def test_a_fold_another_test_may_replace_decides_nothing_from_it(
    real_cache, arg_answers, case, shapes
):
    from fxcache_core.cache.scan import scan_cache

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(arg_answers[call_id(case, shapes)]["lookups"], present) == "hit"
    assert fv["status"] in ("hit", "undecided"), fv
    assert fv.get("why_code") != "tensor-into-output", fv
