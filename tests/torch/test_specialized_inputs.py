"""``fxcache match`` where torch specializes what a mode would make an input, as torch's lookups show.

The cases of ``tests.harness.cases_slices`` in the session's real cache: under
``dynamic=True`` a float that reaches an op needing a Python number (``torch.where``'s
scalar, clamp's bound) is specialized after all (AOTAutograd's tensorify pass restarts the
trace), so the key holds it as a constant and the same value hits; and a stride automatic
dynamic made a symbol at a recompile, which a fresh process's first call traces static.
Torch's recorded answers (``python -m tests.harness.recorded``) are the judge.
"""

from __future__ import annotations

import pytest

from tests.helpers import aot_hit, call_label, match_call, torch_status

pytestmark = pytest.mark.torch

# where_fill_dyn (built with its default s=0.5) and clamp_low_dyn (built with lo=0.25), dynamic=True:
# the key has the float baked in; the same value hits (any size), another value is another graph.
FLOAT_RESTART_CALLS = [
    ("where_fill_dyn", [[6, 8]]),  # hit: s left at 0.5
    ("where_fill_dyn", [[4, 8], {"s": 0.5}]),  # hit: the same, given
    ("where_fill_dyn", [[4, 8], {"s": 1.5}]),  # new graph: scalar_tensor(1.5)
    ("clamp_low_dyn", [[6, 8], {"lo": 0.25}]),  # hit
    ("clamp_low_dyn", [[4, 8], {"lo": 0.5}]),  # new graph: clamp_min(x, 0.5)
]
_FLOAT = {"where_fill_dyn": "s", "clamp_low_dyn": "lo"}  # the float parameter of each case
_BUILT = {"where_fill_dyn": 0.5, "clamp_low_dyn": 0.25}  # its value in the build
# strided_add (dynamic=None), built with y contiguous then transposed in one process: the second
# key has y.stride(1) a symbol of its own. A fresh process's first call with y transposed traces
# the stride static (another graph); after a recompile (a contiguous call first) it hits that key.
STRIDE_CALLS = [("strided_add", [[6, 4], [6, 4], {"@transposed": [1]}])]
STRIDE_AFTER_RECOMPILE = [
    ("strided_add", [[6, 4], [6, 4], {"@transposed": [1]}], {"warm_up": [[[6, 4], [6, 4]]]})
]


@pytest.mark.parametrize(
    "case,shapes", FLOAT_RESTART_CALLS, ids=[call_label(*c) for c in FLOAT_RESTART_CALLS]
)
def test_a_float_dynamic_true_cannot_keep_an_input_is_the_keys_constant(
    real_cache, arg_answers, case, shapes
):
    """The key's constant is evidence torch specialized the float there (the op it reaches
    takes no tensor): another value is torch's new graph; the same value is undecided."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    torch_did = torch_status(answer["lookups"], present)
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    if dict(shapes[1] if len(shapes) > 1 else {}).get(_FLOAT[case], _BUILT[case]) == _BUILT[case]:
        # The same value: torch traces again with the float specialized, and which key that
        # trace writes depends on what the process traced before (a fresh process's first
        # call and the build process's wrote different keys for the same graph): undecided.
        assert fv["status"] == "undecided" and fv["why_code"] == "float-restarted", fv
        return
    assert fv["status"] == torch_did, (fv, answer["lookups"])
    if torch_did == "hit":
        assert (fv["key"], fv["entry"]) == aot_hit(answer), fv
        assert rc == 0
    else:
        assert fv["why_code"] in ("float-constant-differs", "float-op-differs"), fv


@pytest.mark.parametrize("case,shapes", STRIDE_CALLS, ids=[call_label(*c) for c in STRIDE_CALLS])
def test_a_stride_symbol_is_not_a_first_calls(real_cache, arg_answers, case, shapes):
    """The key whose y.stride(1) is a symbol of its own does not fit a fresh process's first
    call (dynamic=None traces strides from the sizes): torch traced another graph."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) == "new-graph", answer["lookups"]
    rc, body = match_call(real_cache.root, case, shapes)
    (fv,) = body["verdicts"]["functions"]
    assert rc == 1 and fv["status"] == "new-graph", fv
    strided = [
        r
        for r in body["results"]
        if r["kind"] == "aotautograd" and "stride-traced-static" in r["reason_codes"]
    ]
    assert strided, body["results"]


@pytest.mark.parametrize(
    "case,shapes,options",
    STRIDE_AFTER_RECOMPILE,
    ids=[call_label(*c) for c in STRIDE_AFTER_RECOMPILE],
)
def test_after_a_recompile_the_stride_symbol_key_hits(
    real_cache, arg_answers, case, shapes, options
):
    """After a contiguous call, the transposed one recompiles with y.stride(1) a symbol:
    torch hits the key built so, and --after-recompile names that hit as what the lookup is
    if exactly y.stride(1) changed before the call (undecided: the call does not say)."""
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes, options)]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert torch_status(answer["lookups"], present) == "hit", answer["lookups"]
    rc, body = match_call(real_cache.root, case, shapes, "--after-recompile")
    (fv,) = body["verdicts"]["functions"]
    assert rc == 3 and fv["phase"] == "after-recompile" and fv["status"] == "undecided", fv
    assert fv["why_code"] == "dynamic-after-recompile-unknown" and fv["key"] == aot_hit(answer)[0], fv
    (r,) = [r for r in body["results"] if r["key"] == fv["key"]]
    assert r["hit"] == aot_hit(answer)[1], r
