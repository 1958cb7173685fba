"""``fxcache match`` reads a baked int or float through builtins, conditionals and the sizes
a key fixes, as torch's lookups show.

The expression cases of ``tests.harness.cases_slices`` (``head_cols``: ``min(n,
x.shape[1])`` through a local; ``tail_wrap``: ``n if n > 0 else x.shape[1] + n``;
``floor_gain``: ``max(s, 0.25)``; ``eps_norm``: ``if eps > 0:``; ``log_gain``:
``math.log1p(s)``) are in the session's real cache, each built once under
``dynamic=None``. Torch's own lookups (a fresh process's first call on a copy of the cache,
recorded by ``python -m tests.harness.recorded``) are the judge: where the expression,
computed on the call's values, gives the graph's constants (or its side of the ``if``), the
verdict is torch's; where it is not computable or the graph does not show the value, the
verdict is UNDECIDED, whatever torch did.
"""

from __future__ import annotations

import pytest

from tests.harness.match_runs import VERDICT
from tests.harness.oracle import call_id
from tests.helpers import (
    assert_verdict_as_torch,
    match_call,
    torch_status,
)

pytestmark = pytest.mark.torch

# (case, call description: the tensor, then a dict of keyword values).
EXPR_CALLS = [
    ("head_cols", [[4, 8], {"n": 64}]),  # hit: min(64, 8) slices all of dim 1, as 100 did
    ("head_cols", [[4, 8], {"n": 8}]),  # hit: the width itself
    ("tail_wrap", [[4, 8], {"n": 5}]),  # hit: 5 ends where 8 - 3 did
    ("tail_wrap", [[4, 8], {"n": 4}]),  # new graph: the slice ends at 4
    ("floor_gain", [[4, 8], {"s": 0.25}]),  # hit: the factor is 0.25 either way
    ("floor_gain", [[4, 8], {"s": 0.5}]),  # new graph: 0.5
    ("eps_norm", [[4, 8], {"eps": 1e-3}]),  # new graph: the body's constant is 0.001
    ("eps_norm", [[4, 8], {"eps": 0.0}]),  # new graph: the body is skipped
]
# At the edge of what the rules read (recorded in this order): n=5 slices, where the key's
# graph has no slice to compare it with (torch: a new graph), and math.log1p is outside what
# fxcache computes (torch: a hit): not exact, whatever torch did. An int eps is read by no float
# rule, but `if eps > 0:` is an ordering the branch rule reads: 0 skips the body whose ops the
# key's graph has, and nothing else makes them (torch: a new graph).
EXPR_EDGE_CALLS = [
    ("head_cols", [[4, 8], {"n": 5}]),
    ("eps_norm", [[4, 8], {"eps": 0}]),
    ("log_gain", [[4, 8], {"s": 0.5}]),
]
EXPR_UNDECIDED = [c for c in EXPR_EDGE_CALLS if c[0] != "eps_norm"]
EXPR_BY_BRANCH = [c for c in EXPR_EDGE_CALLS if c[0] == "eps_norm"]


@VERDICT
@pytest.mark.parametrize("case,shapes", EXPR_CALLS + EXPR_BY_BRANCH,
                         ids=[call_id(*c[:2]) for c in EXPR_CALLS + EXPR_BY_BRANCH])
def test_an_expression_of_a_baked_scalar_is_computed_on_the_calls_value(
    real_cache, arg_answers, case, shapes
):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    assert v["status"] in ("hit", "new-graph"), v


@VERDICT
@pytest.mark.parametrize("case,shapes", EXPR_UNDECIDED, ids=[call_id(*c[:2]) for c in EXPR_UNDECIDED])
def test_an_expression_not_computed_or_not_shown_leaves_the_verdict_undecided(
    real_cache, arg_answers, case, shapes
):
    from fxcache_core.cache.scan import scan_cache
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    answer = arg_answers[call_id(case, shapes)]
    assert answer["error"] is None, answer["error"]
    want = {"head_cols": "new-graph", "log_gain": "hit"}[case]
    assert (
        torch_status(answer["lookups"], {k.key for k in scan_cache(real_cache.root).keys}) == want
    )
