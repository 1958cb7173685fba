"""``fxcache match`` on a tensor given for a parameter that a key takes no input from
(``mask=None`` when the key was traced): where torch ops compute the parameter,
unconditionally, into what the function returns
(fxcache_core/lookup/tensor_flow.py), a trace with a tensor there takes it as an input,
so the key is not torch's; elsewhere the verdict stays UNDECIDED.

The cases of ``tests.harness.cases_slices`` (``attend_opt``, ``scores_mask``,
``helper_mask``, ``dead_mask``) are in the session's real cache, each built once without
its mask. Torch's own lookups (a fresh process's first call on a copy of the cache,
recorded by ``python -m tests.harness.recorded``) are the judge.
"""

from __future__ import annotations

import pytest

from tests.harness.match_runs import VERDICT
from tests.harness.oracle import call_id
from tests.helpers import assert_verdict_as_torch, match_call

pytestmark = pytest.mark.torch

_QKV = [[1, 2, 6, 8], [1, 2, 6, 8], [1, 2, 6, 8]]

# (case, call description: the tensors, then a dict of keyword values).
TENSOR_FLOW_CALLS = [
    ("attend_opt", [*_QKV, {"mask": [6, 6]}]),  # new graph: the mask is sdpa's attn_mask
    ("attend_opt", [*_QKV]),  # hit: left out, as built
    ("scores_mask", [[4, 8], {"mask": [4, 4]}]),  # new graph: added to what softmax returns
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
