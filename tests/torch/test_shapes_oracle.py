"""``fxcache match`` against torch where the call's values reach the graph indirectly.

The cases of tests/harness/cases.py's last block (``_SHAPES_CASES``), in the session's
real cache: float arguments folded into constants through expressions (``-lr``,
``1 / scale``, ``2 * lim``; and one through ``math.sqrt`` and a helper, which must stay
undecided); a size the call brings to 1 inside the graph (``x[1:]`` of 2 rows: another
graph; ``x[: s0 // 2]``: undecided); a marked dim's range (not part of the key; a wider
range hits, then raises); an optional tensor given and left out, with a key for each;
automatic dynamic's partly static key asked under ``dynamic=True``; a UNet's int
timestep under ``dynamic=None``, whose recompile left an FX key only.

Torch's answers (each a fresh process's first call on a copy of the real cache) are
recorded with the suite's others (``python -m tests.harness.recorded``,
tests/data/oracle-answers.json). Each call states the verdict fxcache must give: torch's
own (hit, miss, new graph, or the error torch raised), or ``undecided`` where the cache
cannot tell, with what torch did written beside it.
"""

from __future__ import annotations

import json

import pytest

from tests.harness.match_runs import Call, ahead, match_call
from tests.helpers import assert_match_agrees_with_lookups, torch_status

pytestmark = pytest.mark.torch



def _floats(values: str) -> list[str]:
    return ["--fn", "float_exprs", "--dynamic", "none", "--shapes", "p=[4,3],g=[4,3]," + values]


# (case, shapes as the case's make_inputs takes them, match's arguments, the verdict fxcache
# must give: "torch" for torch's own, else "undecided", with torch's answer in the comment).
SHAPES_CALLS = [
    # Floats through expressions (dynamic=None: the first call bakes the expressions' values,
    # built lr=0.1, scale=4.0, lim=0.5: alpha=-0.1, * 0.25, max=1.0).
    ("float_exprs", [[4, 3], [4, 3], 0.1, 4.0, 0.5], _floats("lr=0.1,scale=4.0,lim=0.5"), "torch"),   # hit
    ("float_exprs", [[4, 3], [4, 3], 0.2, 4.0, 0.5], _floats("lr=0.2,scale=4.0,lim=0.5"), "torch"),   # new graph
    ("float_exprs", [[4, 3], [4, 3], -0.1, 4.0, 0.5], _floats("lr=-0.1,scale=4.0,lim=0.5"), "torch"),  # new: -lr = 0.1
    ("float_exprs", [[4, 3], [4, 3], 0.1, 0.25, 0.5], _floats("lr=0.1,scale=0.25,lim=0.5"), "torch"),  # new: 1 / 4.0
    ("float_exprs", [[4, 3], [4, 3], 0.1, 4.0, 1.0], _floats("lr=0.1,scale=4.0,lim=1.0"), "torch"),   # new: 2 * 0.5
    ("opaque_scale", [[4, 3], 4.0], ["--fn", "opaque_scale", "--dynamic", "none", "--shapes",
                                     "x=[4,3],scale=4.0"], "undecided"),            # torch: hit
    ("opaque_scale", [[4, 3], 9.0], ["--fn", "opaque_scale", "--dynamic", "none", "--shapes",
                                     "x=[4,3],scale=9.0"], "undecided"),            # torch: new graph
    # A size the call brings to 1 inside the graph (dynamic=True).
    ("slice_from_one", [[2, 4]], ["--fn", "slice_from_one", "--dynamic", "true", "--shapes",
                                  "x=[2,4]"], "torch"),                             # new graph: x.size(0) - 1 == 1
    ("slice_from_one", [[6, 4]], ["--fn", "slice_from_one", "--dynamic", "true", "--shapes",
                                  "x=[6,4]"], "torch"),                             # hit
    ("half_slice", [[3, 5]], ["--fn", "half_slice", "--dynamic", "true", "--shapes",
                              "x=[3,5]"], "undecided"),                             # torch: miss (s0 // 2 == 1)
    # A marked range (dynamic=None; built marked min=2, max=16).
    ("marked_range", [[8, 3], []], ["--fn", "marked_range", "--dynamic", "none", "--shapes",
                                    "x=[8,3]:mark_dynamic=[0]"], "torch"),          # hit: no range
    ("marked_range", [[8, 3], [4, 12]], ["--fn", "marked_range", "--dynamic", "none", "--shapes",
                                         "x=[8,3]:mark_dynamic=[0]:min=4:max=12"], "torch"),  # hit
    ("marked_range", [[8, 3], [2, 32]], ["--fn", "marked_range", "--dynamic", "none", "--shapes",
                                         "x=[8,3]:mark_dynamic=[0]:min=2:max=32"], "torch"),  # hit, then raises
    ("marked_range", [[40, 3], [2, 16]], ["--fn", "marked_range", "--dynamic", "none", "--shapes",
                                          "x=[40,3]:mark_dynamic=[0]:min=2:max=16"], "torch"),  # raises, no lookup
    ("marked_range", [[40, 3], []], ["--fn", "marked_range", "--dynamic", "none", "--shapes",
                                     "x=[40,3]:mark_dynamic=[0]"], "undecided"),    # torch: miss (<= 16)
    # An optional tensor: built left out, then given (a key each).
    ("masked_sum", [[4, 3]], ["--fn", "masked_sum", "--dynamic", "none", "--shapes", "x=[4,3]"],
     "torch"),                                                                      # hit, the key without it
    ("masked_sum", [[4, 3], [4, 3]], ["--fn", "masked_sum", "--dynamic", "none", "--shapes",
                                      "x=[4,3],mask=[4,3]"], "torch"),              # hit, the key with it
    # automatic_dynamic_cols's keys (dynamic=None: static [4, 6], then x.size(1) symbolic)
    # asked under dynamic=True: x.size(0) would be a symbol too.
    ("automatic_dynamic_cols_true", [[4, 12]], ["--fn", "automatic_dynamic_cols", "--dynamic", "true",
                                                "--shapes", "x=[4,12]"], "undecided"),  # torch: new graph
    # A UNet's int timestep under dynamic=None: built 10 (static key), then 20 (an FX key only).
    ("unet_timestep_auto", [[2, 4, 3, 3], 10], ["--fn", "TinyUNetAuto", "--dynamic", "none", "--shapes",
                                                "sample=[2,4,3,3],timestep=10"], "undecided"),  # torch: hit
]

_IDS = [f"{c}-{json.dumps(s).replace(' ', '')}" for c, s, _, _ in SHAPES_CALLS]


def _torch_verdict(answer: dict, present: set[str]) -> tuple[str, str | None]:
    """What torch did, as match's verdict says it: (status, the entry a hit loaded)."""
    hit = next((lk["hit"] for lk in answer["lookups"] if lk["mode"] == "guards" and lk["hit"]), None)
    if answer["error"] is not None:
        assert answer["error"]["type"] == "ConstraintViolationError", answer["error"]
        return "error", hit
    return torch_status(answer["lookups"], present), hit


@ahead(lambda args, **_: [Call.argv("match", "--json", *args)])  # run ahead on the build threads
@pytest.mark.parametrize("case,shapes,args,want", SHAPES_CALLS, ids=_IDS)
def test_match_says_what_torch_does(real_cache, arg_answers, case, shapes, args, want):
    from fxcache_core.cache.scan import scan_cache
    from tests.harness.oracle import call_id

    answer = arg_answers[call_id(case, shapes)]
    proc = match_call(real_cache.root, Call.argv("match", "--json", *args))
    report = json.loads(proc.stdout)
    assert proc.returncode == report["verdicts"]["exit_code"], proc.stderr
    (verdict,) = report["verdicts"]["functions"]
    present = {k.key for k in scan_cache(real_cache.root).keys}
    status, hit = _torch_verdict(answer, present)
    if want == "undecided":
        assert verdict["status"] == "undecided", (verdict, status)
        if case == "unet_timestep_auto":
            # The static key's timestep is read against the FX key the recompile wrote (a
            # SymInt there); the graphs differ in more than the constant (torch folds it).
            recompiled = {w["key"] for w in real_cache.summary["cases"][case]["writes"][1]}
            assert verdict["why_code"] == "int-graphs-differ", verdict
            assert any(k[:12] in verdict["why"] for k in recompiled), verdict
        return
    assert verdict["status"] == status, (verdict["line"], status, answer["lookups"])
    if hit is not None:
        assert verdict["entry"] == hit, (verdict, hit)  # an error after a hit names the entry
    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_lookups(report["results"], answer["lookups"], present, own)


def test_the_calls_cover_each_rule_and_each_undecided_case_is_one_torch_decides_both_ways(arg_answers):
    """Every rule has a call that decides against what the old rules said, and the calls
    left undecided include one torch hits and one it does not: undecided is not a
    shortcut for either."""
    from tests.harness.oracle import call_id

    cases = {c for c, _, _, _ in SHAPES_CALLS}
    assert {"float_exprs", "slice_from_one", "marked_range", "masked_sum"} <= cases
    undecided = [arg_answers[call_id(c, s)] for c, s, _, w in SHAPES_CALLS if w == "undecided"]
    hits = [any(lk["hit"] for lk in a["lookups"] if lk["mode"] == "guards") for a in undecided]
    assert True in hits and False in hits, hits
