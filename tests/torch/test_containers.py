"""``fxcache match`` reads a dict or a dataclass of Python values item by item, and an op's
scalar arguments by their place, as torch's lookups show.

``cfg_clamp`` (tests/harness/cases_args.py, dynamic=None) was built with
``cfg={'n': 4, 'scale': 0.5, 'act': 'relu'}`` and ``lo=-1.0`` (``hi`` at its default 1.0):
Dynamo guards each item the code reads under its own source (``L['cfg']['n'] == 4``), and
none it does not read; the graph holds ``n`` as a slice bound, ``scale`` as mul's scalar,
and ``clamp_min(lo)``, ``clamp_max(hi)``, no op for a bound that is None
(fxcache_core/lookup/container_items.py, fxcache_core/lookup/float_ops.py). ``attr_cfg``
reads a frozen dataclass's fields by attribute (``L['cfg'].n``). Torch's answers are
recorded (``python -m tests.harness.recorded``), each a fresh process's first call on a
copy of the session's real cache.
"""

from __future__ import annotations

import json

import pytest

from tests.helpers import (
    assert_match_agrees_with_answer,
    assert_verdict_as_torch,
    match_args_for,
    run_fxcache,
)

pytestmark = pytest.mark.torch

_BUILT = {"cfg['n']": 4, "cfg['scale']": 0.5, "cfg['act']": "relu", "lo": -1.0}
# (case, call, the reason code of a new graph; None for a hit).
CONTAINER_CALLS = [
    ("cfg_clamp", [[4, 8], _BUILT], None),                                        # hit: every item and bound as built
    ("cfg_clamp", [[4, 8], {**_BUILT, "cfg['unused']": 1}], None),                # hit: an item never read is not guarded
    ("cfg_clamp", [[4, 8], {**_BUILT, "cfg['n']": 6}], "baked-value-differs"),    # the slice's end is 4
    ("cfg_clamp", [[4, 8], {**_BUILT, "cfg['scale']": 0.25}], "float-constant-differs"),  # mul's 0.5
    ("cfg_clamp", [[4, 8], {k: v for k, v in _BUILT.items() if k != "lo"}], "float-op-differs"),  # lo None: no clamp_min
    ("cfg_clamp", [[4, 8], {**_BUILT, "hi": None}], "float-op-differs"),          # no clamp_max
    ("cfg_clamp", [[4, 8], {**_BUILT, "lo": 1.0, "hi": -1.0}], "float-op-differs"),  # the bounds swapped: by place
    ("cfg_clamp", [[4, 8], {**_BUILT, "cfg['act']": "tanh"}], "branch-not-taken"),  # no relu: the if's body skipped
    ("attr_cfg", [[4, 8], {"cfg.n": 4, "cfg.scale": 0.5}], None),                 # hit
    ("attr_cfg", [[4, 8], {"cfg.n": 6, "cfg.scale": 0.5}], "baked-value-differs"),
]


def _id(case: str, shapes: list, *_: object) -> str:
    return f"{case}-{json.dumps(shapes).replace(' ', '')}"


@pytest.fixture(scope="session")
def container_answers(real_cache) -> dict[str, dict]:
    from tests.harness.recorded import answers_for

    return answers_for(real_cache.summary, "real")


@pytest.mark.parametrize("case,shapes,code", CONTAINER_CALLS, ids=[_id(*c) for c in CONTAINER_CALLS])
def test_each_item_and_bound_is_read_as_torch_reads_it(real_cache, container_answers, case, shapes, code):
    """Each item of the dict or dataclass accounted as a parameter of its own, and clamp's
    bounds read by their op: the verdict is torch's, for the reason named; for the call as
    built each key of the cache is looked up as torch looked it up too (a match over every
    key: that one call pays for it)."""
    from tests.harness.oracle import call_id

    answer = container_answers[call_id(case, shapes)]
    if shapes == [[4, 8], _BUILT]:
        own = {w["key"] for w in real_cache.writes(case)}
        assert_match_agrees_with_answer(real_cache.root, case, shapes, answer, own)
    v = assert_verdict_as_torch(real_cache.root, case, shapes, answer, case)
    assert v["status"] == ("hit" if code is None else "new-graph"), v
    assert code is None or v["why_code"] == code, v
    if code is None:
        items = [p for p in v["params"] if p["name"].startswith("cfg")]
        assert items and all(p["status"] == "accounted" for p in items), v["params"]


def test_an_item_read_and_not_given_is_undecided(real_cache):
    """An item the code reads that the call leaves out (``cfg['scale']``) is undecided,
    naming it and how to give it: the call may have any value there."""
    args = match_args_for("cfg_clamp", [[4, 8], {k: v for k, v in _BUILT.items() if k != "cfg['scale']"}])
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "cfg_clamp", *args)
    v = json.loads(proc.stdout)["verdicts"]["functions"][0]
    assert v["status"] == "undecided" and v["why_code"] == "item-not-given", v
    assert "cfg['scale']" in v["why"], v


def test_an_item_baked_in_without_the_compiles_dynamic_is_undecided(real_cache):
    """Without ``--dynamic`` an int or float item read off the graph's constants is
    undecided: a fresh process's first call bakes it in under dynamic=None or False, while
    under dynamic=True it is a SymInt or a tensor input (Dynamo wraps an item as it wraps an
    argument), another key."""
    args = match_args_for("cfg_clamp", [[4, 8], _BUILT])
    i = args.index("--dynamic")
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "cfg_clamp",
                       *args[:i], *args[i + 2:])
    v = json.loads(proc.stdout)["verdicts"]["functions"][0]
    assert v["status"] == "undecided", v
    assert any(p["how"] == "item-depends-on-mode" for p in v["params"]), v["params"]
