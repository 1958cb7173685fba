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

Core's verdicts are asked in this process, on one catalog of the real cache (the session's
index, as the CLI reads it); one ``fxcache match`` run renders the call as built, and there
each lookup of cfg_clamp's keys is compared with torch's (``--fn``: the function's keys
alone, the keys torch looked up).
"""

from __future__ import annotations

import json

import pytest

from tests.harness.oracle import call_id
from tests.helpers import (
    assert_match_agrees_with_lookups,
    match_args_for,
    run_fxcache,
    torch_status,
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


@pytest.fixture(scope="module")
def catalog(real_cache):
    """The real cache's catalog, backed by the session's index (the CLI's): read once for
    every verdict of this file."""
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.state.index import Index, default_index_path

    scan = scan_cache(real_cache.root)
    idx = Index(default_index_path(scan.root), scan.root)
    yield Catalog(scan, idx)
    idx.close()


def _verdict(catalog, case: str, args: list[str]) -> dict:
    """Core's verdict (its JSON) for ``fxcache match --fn CASE ARGS`` (``--dynamic``,
    ``--shapes`` and ``--inputs`` only), asked in this process."""
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes
    from fxcache_core.lookup.match import match
    from fxcache_core.lookup.prediction import verdicts

    mode = DynamicMode(args[args.index("--dynamic") + 1]) if "--dynamic" in args else DynamicMode.UNKNOWN
    specs = [v for flag, v in zip(args, args[1:], strict=False) if flag in ("--shapes", "--inputs")]
    report = match(catalog, parse_shapes(specs), function=case, mode=mode)
    (v,) = verdicts(report, count_all=True, function=case).to_json()["functions"]
    return v


@pytest.mark.parametrize("case,shapes,code", CONTAINER_CALLS, ids=[call_id(*c[:2]) for c in CONTAINER_CALLS])
def test_each_item_and_bound_is_read_as_torch_reads_it(real_cache, arg_answers, catalog, case, shapes, code):
    """Each item of the dict or dataclass accounted as a parameter of its own, and clamp's
    bounds read by their op: the verdict is torch's (its recorded lookups), for the reason
    named."""
    from fxcache_core.cache.scan import scan_cache
    answer = arg_answers[call_id(case, shapes)]
    assert answer["error"] is None, answer["error"]
    want = torch_status(answer["lookups"], {k.key for k in scan_cache(real_cache.root).keys})
    v = _verdict(catalog, case, match_args_for(case, shapes))
    assert v["status"] == want == ("hit" if code is None else "new-graph"), (want, v)
    assert code is None or v["why_code"] == code, v
    if code is None:
        items = [p for p in v["params"] if p["name"].startswith("cfg")]
        assert items and all(p["status"] == "accounted" for p in items), v["params"]


def test_the_call_as_built_renders_a_hit_and_each_key_is_looked_up_as_torch_did(real_cache, arg_answers):
    """The one ``fxcache match`` run of this file: its exit code and JSON, and each of
    cfg_clamp's keys torch looked up bound and predicted as torch found it."""
    from fxcache_core.cache.scan import scan_cache
    shapes = [[4, 8], _BUILT]
    answer = arg_answers[call_id("cfg_clamp", shapes)]
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "cfg_clamp",
                       *match_args_for("cfg_clamp", shapes))
    report = json.loads(proc.stdout)
    assert proc.returncode == report["verdicts"]["exit_code"] == 0, proc.stderr
    (v,) = report["verdicts"]["functions"]
    assert v["status"] == "hit", v
    own = {w["key"] for w in real_cache.writes("cfg_clamp")}
    present = {k.key for k in scan_cache(real_cache.root).keys}
    assert assert_match_agrees_with_lookups(report["results"], answer["lookups"], present, own) > 0


def test_an_item_read_and_not_given_is_undecided(catalog):
    """An item the code reads that the call leaves out (``cfg['scale']``) is undecided,
    naming it and how to give it: the call may have any value there."""
    args = match_args_for("cfg_clamp", [[4, 8], {k: v for k, v in _BUILT.items() if k != "cfg['scale']"}])
    v = _verdict(catalog, "cfg_clamp", args)
    assert v["status"] == "undecided" and v["why_code"] == "item-not-given", v
    assert "cfg['scale']" in v["why"], v


def test_an_item_baked_in_without_the_compiles_dynamic_is_undecided(catalog):
    """Without ``--dynamic`` an int or float item read off the graph's constants is
    undecided: a fresh process's first call bakes it in under dynamic=None or False, while
    under dynamic=True it is a SymInt or a tensor input (Dynamo wraps an item as it wraps an
    argument), another key."""
    args = match_args_for("cfg_clamp", [[4, 8], _BUILT])
    i = args.index("--dynamic")
    v = _verdict(catalog, "cfg_clamp", args[:i] + args[i + 2:])
    assert v["status"] == "undecided", v
    assert any(p["how"] == "item-depends-on-mode" for p in v["params"]), v["params"]
