"""``fxcache match`` reads an int that only says how many last positions a slice keeps (a
causal LM's ``logits_to_keep``) off the subscript's op: an ``aten.alias`` where it kept the
whole dim (``keep=0``), a slice from ``-keep`` otherwise (fxcache_core/lookup/kept_slices.py),
as torch's lookups show.

The cases of ``tests.harness.cases_slices`` (``keep_last``: the slice inline, built with
``keep`` left at 0; ``keep_tail``: through a helper like transformers'
``slice_logits_to_keep``, built with ``keep=1``) are in the session's real cache, each built
once. Torch's own lookups (a fresh process's first call on a copy of the cache, recorded by
``python -m tests.harness.recorded``) are the judge: where the op holds the call's start,
the verdict is torch's (``keep=8``, all of a length 8, still traces a slice: another graph
than ``keep=0``); a negative ``keep`` (a slice from a positive start) stays UNDECIDED,
whatever torch did.
"""

from __future__ import annotations

import pytest

from tests.harness.match_runs import VERDICT
from tests.harness.oracle import call_id
from tests.helpers import assert_undecided_where_torch_decided, assert_verdict_as_torch

pytestmark = pytest.mark.torch

_XW = [[2, 8, 4], [4, 5]]

# (case, call description: the tensors, then a dict of keyword values).
KEPT_CALLS = [
    ("keep_last", [*_XW]),  # hit: keep left at 0, the alias
    ("keep_last", [*_XW, {"keep": 0}]),  # hit: the default, given
    ("keep_last", [*_XW, {"keep": 1}]),  # new graph: a slice from -1
    ("keep_last", [*_XW, {"keep": 8}]),  # new graph: all of the length, still a slice from -8
    ("keep_tail", [*_XW, {"keep": 1}]),  # hit: the helper's slice from -1
    ("keep_tail", [*_XW]),  # new graph: keep=0 keeps the whole dim (an alias)
    ("keep_tail", [*_XW, {"keep": 2}]),  # new graph: a slice from -2
]
# A negative keep starts the slice at a positive index, which the rule does not read.
KEPT_UNDECIDED = [
    ("keep_tail", [*_XW, {"keep": -1}]),
]


@VERDICT
@pytest.mark.parametrize("case,shapes", KEPT_CALLS, ids=[call_id(*c[:2]) for c in KEPT_CALLS])
def test_a_kept_slice_start_is_read_off_its_op(real_cache, arg_answers, case, shapes):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    assert v["status"] in ("hit", "new-graph"), v


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", KEPT_UNDECIDED, ids=[call_id(*c[:2]) for c in KEPT_UNDECIDED]
)
def test_a_start_the_rule_does_not_read_leaves_the_verdict_undecided(
    real_cache, arg_answers, case, shapes
):
    assert_undecided_where_torch_decided(real_cache.root, case, shapes, arg_answers[call_id(case, shapes)])
