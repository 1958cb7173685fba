"""``fxcache match`` reads a bool or float that a torch function's op keeps verbatim:
``F.scaled_dot_product_attention``'s ``is_causal``, ``dropout_p``, ``scale`` and whether its
``attn_mask`` was None (fxcache_core/lookup/fn_op_args.py), as torch's lookups show.

The cases of ``tests.harness.cases_slices`` (``attend_flags``, ``attend_flags_dyn``,
``drop_attend``, ``drop_attend_dyn``, ``resize_mode``, ``attend_again``, ``attend_forced``,
``masked_dropped``) are in the session's real cache, each
built once. Torch's own lookups (a fresh process's first call on a copy of the cache,
recorded by ``python -m tests.harness.recorded``) are the judge: where the op holds the
call's value, the verdict is torch's; where a restart specialized a float (dynamic=True, the
same value), no op keeps the value (``F.interpolate``'s ``mode`` and ``align_corners``,
decomposed into index arithmetic), the op may be another run's (the function calls itself)
or a decorator's wrapper passes its own value, the verdict is UNDECIDED, whatever torch did.
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

_QKV = [[1, 2, 6, 8], [1, 2, 6, 8], [1, 2, 6, 8]]
_QKV7 = [[1, 2, 7, 8], [1, 2, 7, 8], [1, 2, 7, 8]]

# (case, call description: the tensors, then a dict of keyword values).
FN_ARG_CALLS = [
    ("attend_flags", [*_QKV]),  # hit: the op prints no is_causal (False) and no attn_mask
    ("attend_flags", [*_QKV, {"is_causal": False}]),  # hit: the default, given
    ("attend_flags", [*_QKV, {"is_causal": True}]),  # new graph: the op has is_causal False
    ("attend_flags", [*_QKV, {"mask": [6, 6]}]),  # new graph: the op holds no attn_mask
    ("attend_flags_dyn", [*_QKV7, {"is_causal": True}]),  # hit: the op has 0.0, True
    ("attend_flags_dyn", [*_QKV7]),  # new graph: is_causal left out (False)
    ("drop_attend", [*_QKV]),  # hit: no dropout_p (0.0), no scale (None)
    ("drop_attend", [*_QKV, {"dropout_p": 0.0, "scale": None}]),  # hit: the defaults, given
    ("drop_attend", [*_QKV, {"scale": 0.5}]),  # new graph: the op has no scale
    ("drop_attend", [*_QKV, {"dropout_p": 0.25}]),  # new graph: the op has dropout_p 0.0
]
# Not exact, whatever torch did: under dynamic=True the same dropout_p is specialized by a
# restart, whose key the graph does not fix; F.interpolate's mode and align_corners are
# decomposed into index arithmetic, which no op keeps as given.
# Nor where the op may hold another run's value (the function calls itself: torch hits for
# either causal) or a decorator's wrapper passes its own (torch hits for either causal), nor
# a mask a wrapper replaces by None (torch hits with the mask given).
FN_ARG_UNDECIDED = [
    ("attend_again", [*_QKV, {"bias": [6, 8]}]),
    ("attend_again", [*_QKV, {"bias": [6, 8], "causal": True}]),
    ("attend_forced", [*_QKV]),
    ("attend_forced", [*_QKV, {"causal": True}]),
    ("masked_dropped", [[4, 8], {"mask": [4, 8]}]),
    ("masked_dropped", [[4, 8], {"mask": [3, 8]}]),
    ("drop_attend_dyn", [*_QKV7]),
    ("resize_mode", [[1, 2, 4, 4]]),
    ("resize_mode", [[1, 2, 4, 4], {"align_corners": True}]),
]


@VERDICT
@pytest.mark.parametrize("case,shapes", FN_ARG_CALLS, ids=[call_id(*c[:2]) for c in FN_ARG_CALLS])
def test_an_argument_a_functions_op_keeps_is_read_off_it(real_cache, arg_answers, case, shapes):
    v = assert_verdict_as_torch(
        real_cache.root, case, shapes, arg_answers[call_id(case, shapes)], case
    )
    assert v["status"] in ("hit", "new-graph"), v


@VERDICT
@pytest.mark.parametrize(
    "case,shapes", FN_ARG_UNDECIDED, ids=[call_id(*c[:2]) for c in FN_ARG_UNDECIDED]
)
def test_a_value_no_op_fixes_leaves_the_verdict_undecided(real_cache, arg_answers, case, shapes):
    from fxcache_core.cache.scan import scan_cache

    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["status"] == "undecided", fv
    answer = arg_answers[call_id(case, shapes)]
    assert answer["error"] is None, answer["error"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) in ("hit", "new-graph")
