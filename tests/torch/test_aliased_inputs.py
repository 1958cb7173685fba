"""One tensor passed for two parameters (``b=@a``: fxcache_core/lookup/aliased_inputs.py), as
torch's lookups show.

``two_inputs(a, b)`` (tests/harness/evaluation/fns_r14fg.py) compiled with ``dynamic=True``,
once called ``f(x, x)`` (Dynamo takes one graph input for both) and once with two tensors.
Torch is asked in fresh processes (tests/harness/family_runs.py) about the other kind of
call on each cache: a new graph both ways. ``fxcache match`` says so for ``b=@a`` on the
two-input key, is undecided (naming ``b=@a``) for two tensors of one shape on the one-input
key, and for a call of the build's kind says torch's hit.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch

SAME = {"same": "a"}
# family -> the calls asked: first of the build's kind, then of the other kind
CALLS = {
    "aliased_built_dyn": [{"a": [6, 8], "b": SAME}, {"a": [6, 8], "b": [6, 8]}],
    "distinct_built_dyn": [{"a": [6, 8], "b": [6, 8]}, {"a": [6, 8], "b": SAME}],
}


@builder("aliased_inputs", order=7)
def _built() -> dict:
    from tests.harness.background import build_dir
    from tests.harness.family_runs import family_answers

    base = build_dir("aliased-inputs")
    out = {}
    for family, calls in CALLS.items():
        (base / family).mkdir()
        out[family] = family_answers(family, base / family, calls)
    return out


@pytest.fixture(scope="session")
def aliased_inputs() -> dict:
    return prebuilt("aliased_inputs")


def _match(cache, call: dict) -> tuple[int, dict]:
    from tests.harness.evaluation.calls import describe

    proc = run_fxcache("--cache-dir", str(cache), "match", "--json", "--fn", "two_inputs", "--dynamic", "true",
                       *describe(call))
    (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
    return proc.returncode, fv


@pytest.mark.parametrize("family", list(CALLS))
def test_a_call_of_the_builds_kind_hits_and_the_other_kind_is_not_a_hit(aliased_inputs, family):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.evaluation.compare import torch_verdict

    built = aliased_inputs[family]
    present = {k.key for k in scan_cache(built["cache"]).keys}
    same, other = (torch_verdict(a["lookups"][0], present, a["error"], a["writes"][0]) for a in built["answers"])
    assert same.status == "hit" and other.status == "new-graph", (same, other)
    rc, fv = _match(built["cache"], CALLS[family][0])
    assert (rc, fv["status"], fv["key"], fv["entry"]) == (0, "hit", same.key, same.entry), fv
    rc, fv = _match(built["cache"], CALLS[family][1])
    if family == "distinct_built_dyn":  # b=@a on the key traced with an input from each: exact
        assert (rc, fv["status"]) == (1, "new-graph"), fv
        assert "aliased-call-two-inputs" in json.dumps(fv), fv
    else:  # two tensors of one shape on the key traced with one input for both: b=@a would say otherwise
        assert (rc, fv["status"], fv["why_code"]) == (3, "undecided", "aliased-inputs-unknown"), fv
        assert "b=@a" in fv["why"], fv
