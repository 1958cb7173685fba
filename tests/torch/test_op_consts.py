"""``fxcache match`` reads a tuple of ints or a str that a torch function's ops show exactly:
``F.pad``'s pads and ``mode`` (one ``constant_pad_nd`` op) and ``F.gelu``'s ``approximate``
(an ``erf`` or a ``tanh`` op) (fxcache_core/lookup/op_consts.py), as torch's lookups show.

The cases of ``tests.harness.cases_slices`` (``pad_act``, ``pad_act_mixed``) are in the
session's real cache, each built once with its defaults. Torch's own lookups (a fresh
process's first call on a copy of the cache, recorded by ``python -m tests.harness.recorded``)
are the judge: where the ops show the call's value, the verdict is torch's; where a second pad
may have made the op, or a ``tanh`` beside the gelu may be either's, the verdict is UNDECIDED,
whatever torch did.
"""

from __future__ import annotations

import pytest

from tests.harness.match_runs import VERDICT
from tests.harness.oracle import call_id
from tests.helpers import assert_undecided_where_torch_decided, assert_verdict_as_torch

pytestmark = pytest.mark.torch

_X = [2, 3, 8]

# (case, call description: the tensor, then a dict of keyword values).
OP_CONST_CALLS = [
    ("pad_act", [_X]),  # hit: constant_pad_nd [1, 1], an erf
    ("pad_act", [_X, {"pad": {"tuple": [1, 1]}, "mode": "constant", "approximate": "none"}]),  # hit
    ("pad_act", [_X, {"pad": {"tuple": [2, 0]}}]),  # new graph: the op pads [1, 1]
    ("pad_act", [_X, {"mode": "reflect"}]),  # new graph: constant_pad_nd is constant mode's
    ("pad_act", [_X, {"approximate": "tanh"}]),  # new graph: the graph has an erf
]
# Not exact, whatever torch did: the graph has two ops of F.pad (which is the pads'?), and a
# tanh beside the gelu (gelu's, or y.tanh()'s?).
OP_CONST_UNDECIDED = [
    ("pad_act_mixed", [_X]),
    ("pad_act_mixed", [_X, {"approximate": "tanh"}]),
]


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", OP_CONST_CALLS, ids=[call_id(*c[:2]) for c in OP_CONST_CALLS]
)
def test_a_value_a_functions_ops_show_is_read_off_them(real_cache, arg_answers, case, shapes):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    assert v["status"] in ("hit", "new-graph"), v


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", OP_CONST_UNDECIDED, ids=[call_id(*c[:2]) for c in OP_CONST_UNDECIDED]
)
def test_a_value_no_op_shows_alone_leaves_the_verdict_undecided(
    real_cache, arg_answers, case, shapes
):
    assert_undecided_where_torch_decided(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)])
