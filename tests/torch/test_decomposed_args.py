"""``fxcache match`` reads an argument that an op's decomposition keeps verbatim: the dims
of ``log_softmax`` and ``cumsum`` (fxcache_core/lookup/int_ops.py), the eps of
``layer_norm`` and ``group_norm`` and the value of ``masked_fill``
(fxcache_core/lookup/float_exprs.py), as torch's lookups show.

The cases of ``tests.harness.cases_slices`` (``soft_cum``, ``norm_fill``, ``group_eps``,
``norm_fill_dyn``) are in the session's real cache, each built once with its defaults.
Torch's own lookups (a fresh process's first call on a copy of the cache, recorded by
``python -m tests.harness.recorded``) are the judge: where the op holds the call's value,
the verdict is torch's; where no constant shows the value (group_norm's group count, in a
view's sizes only) or a restart specialized it (dynamic=True, the same value), the verdict
is UNDECIDED, whatever torch did.
"""

from __future__ import annotations

import pytest

from tests.harness.match_runs import VERDICT
from tests.harness.oracle import call_id
from tests.helpers import assert_undecided_where_torch_decided, assert_verdict_as_torch

pytestmark = pytest.mark.torch

# (case, call description: the tensor, then a dict of keyword values).
DECOMPOSED_CALLS = [
    ("soft_cum", [[4, 6]]),  # hit: amax's and sum's [-1], cumsum's 0
    ("soft_cum", [[4, 6], {"dim": -1, "cdim": 0}]),  # hit: the defaults, given
    ("soft_cum", [[4, 6], {"dim": 1}]),  # new graph: [1] where the graph has [-1] (the same dim)
    ("soft_cum", [[4, 6], {"cdim": -2}]),  # new graph: cumsum's -2 where the graph has 0
    ("norm_fill", [[4, 8]]),  # hit: add's 1e-05, scalar_tensor's -1.0
    ("norm_fill", [[4, 8], {"eps": 1e-5, "value": -1.0}]),  # hit: the defaults, given
    ("norm_fill", [[4, 8], {"eps": 1e-6}]),  # new graph: 1e-06 where the graph has 1e-05
    ("norm_fill", [[4, 8], {"value": -2.0}]),  # new graph: -2.0 where the graph has -1.0
    ("norm_fill", [[4, 8], {"value": -1}]),  # new graph: an int where the graph has a float
    ("group_eps", [[2, 8, 4], {"eps": 1e-3}]),  # new graph: 0.001 where the graph has 1e-05
    ("norm_fill_dyn", [[4, 8], {"eps": 1e-6}]),  # new graph: the restart specializes 1e-06
]
# Not exact, whatever torch did: group_norm's group count is an item of a view's sizes only
# (torch: a hit, and a new graph for 4); under dynamic=True the same eps is specialized by a
# restart, whose key the graph does not fix (torch: its first trace, eps an input, looks up
# a key the cache does not hold; the restarted trace then loads this key's entry).
DECOMPOSED_UNDECIDED = [
    ("group_eps", [[2, 8, 4]]),
    ("group_eps", [[2, 8, 4], {"groups": 4}]),
    ("norm_fill_dyn", [[4, 8]]),
]


@VERDICT
@pytest.mark.parametrize("case,shapes", DECOMPOSED_CALLS, ids=[call_id(*c[:2]) for c in DECOMPOSED_CALLS])
def test_an_argument_a_decomposition_keeps_is_read_off_its_op(
    real_cache, arg_answers, case, shapes
):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    assert v["status"] in ("hit", "new-graph"), v


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", DECOMPOSED_UNDECIDED, ids=[call_id(*c[:2]) for c in DECOMPOSED_UNDECIDED]
)
def test_a_value_no_constant_fixes_leaves_the_verdict_undecided(
    real_cache, arg_answers, case, shapes
):
    status = assert_undecided_where_torch_decided(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)])
    assert status == {"group_eps": "hit" if len(shapes) == 1 else "new-graph", "norm_fill_dyn": "new-graph"}[case]
