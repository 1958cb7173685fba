"""fxcache on caches written by other torch versions, with only torch 2.13 installed.

tests/fixtures/torch_versions/<version>/ holds a small cache that torch
<version> wrote (CPU, the cases ``same_graph_two_regions``, ``train_mlp``,
``int_arg_auto`` and ``calls_helper`` of tests/harness/cases.py) and ``truth.json``: what
that version's own lookup chose, in fresh processes, for a set of calls
(``tests.harness.oracle``), and the guard names it gives some Dynamo sources.
``tools/build_torch_versions.py`` rebuilds them (how: its docstring). Nothing here compiles or
needs another torch; the checks that need no recorded truth also run on a
cache torch 2.13 builds here (``real_cache``).
"""

from __future__ import annotations

import base64
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.sources import source_name
from fxcache_core.decode.unpickler import load_stubs
from fxcache_core.lookup.binding import DynamicMode, parse_shapes
from fxcache_core.lookup.coverage import coverage
from fxcache_core.lookup.match import match
from tests.helpers import assert_match_agrees_with_lookups, run_fxcache

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions"
RECORDED = sorted(p.name for p in FIXTURES.iterdir() if (p / "truth.json").is_file())
SOURCE_DIR = ("--source-dir", f"/work/wt-15={FIXTURES / 'src'}")
"""Where the recorded caches' source is here: they were built in /work/wt-15 (fixtures/torch_versions/src)."""
BUILT_HERE = "2.13 (built here)"


@dataclass(frozen=True)
class VersionCache:
    """A cache of one torch version and, for the recorded ones, what that torch did."""

    version: str
    root: Path
    truth: dict[str, Any] | None

    def writes(self, case: str) -> set[str]:
        assert self.truth is not None
        return {w["key"] for call in self.truth["build"]["cases"][case]["writes"] for w in call}


def _recorded(version: str) -> VersionCache:
    d = FIXTURES / version
    return VersionCache(version, d / "cache", json.loads((d / "truth.json").read_text()))


@pytest.fixture(params=[pytest.param(BUILT_HERE, marks=pytest.mark.torch), *RECORDED])
def any_version(request) -> VersionCache:
    if request.param == BUILT_HERE:
        rc = request.getfixturevalue("real_cache")
        return VersionCache(BUILT_HERE, rc.root, None)
    return _recorded(request.param)


def test_fixtures_are_there_and_small():
    assert {"2.14.1", "2.15.0"} <= set(RECORDED)
    for v in RECORDED:
        size = sum(f.stat().st_size for f in (FIXTURES / v).rglob("*") if f.is_file())
        assert size < 2_000_000, (v, size)
        assert _recorded(v).truth["torch_version"].startswith(v)


def _first(cat: Catalog, key: CacheKey) -> DecodedEntry:
    d = next((d for e in key.entries if isinstance(d := cat.load(e), DecodedEntry)), None)
    assert d is not None, key.key
    return d


def test_every_entry_decodes_and_matches_its_name(any_version):
    proc = run_fxcache("--cache-dir", str(any_version.root), "verify")
    # ... and the code scan finds nothing: every global the entries of 2.14.1 and 2.15.0 name
    # is one the recorded table holds (fxcache_core/decode/torch_globals.json)
    assert proc.returncode == 0 and "all match their names, decode, and name only globals torch writes" \
        in proc.stdout, proc.stdout


def test_every_symbol_of_every_entry_has_a_hint(any_version):
    """And a source (but a SymInt specialized to a number), learnt from the AOTAutograd entries that load it; an FX key no
    AOTAutograd entry loads (torch bypassed the AOTAutograd cache, as for tests/harness/cases.py's
    unet_timestep) has none to learn from."""
    from fxcache_core.cache.keys import KeyKind

    cat = Catalog(scan_cache(any_version.root))
    n = 0
    for e in cat.scan.entries():
        orphan = e.kind is KeyKind.FX_GRAPH and not cat.loaders_of(e.key)
        for s in cat.symbols(e):
            # a SymInt ShapeEnv specialized to a number (Sym(1)) has no symbol to take a
            # source by; its hint is the number
            specialized = s.expr is not None and s.expr.lstrip("-").isdigit()
            assert s.hint is not None and (s.source is not None or orphan or specialized), (e.kind, e.key, s)
            n += 1
    assert n >= 10


# The corpus's case whose graph keeps no stack trace (torch.cat of a list, then relu:
# Inductor drops them), so its keys record no function, on purpose (tests/harness/cases_args.py).
NO_ORIGIN_CASES = ("cat_rows",)


def test_every_key_has_an_origin_backward_keys_included(request, any_version):
    cat = Catalog(scan_cache(any_version.root))
    exempt: set[str] = set()
    if any_version.version == BUILT_HERE:
        rc = request.getfixturevalue("real_cache")
        exempt = {w["key"] for case in NO_ORIGIN_CASES for w in rc.writes(case)}
        assert exempt, "the corpus's case without an origin wrote no key"
    backward = []
    for k in cat.scan.keys:
        d = _first(cat, k)
        assert d.origin is not None or k.key in exempt, (k.kind, k.key)
        if d.origin is None:
            continue
        if d.is_backward:
            backward.append((k, d))
    assert backward
    for k, d in backward:  # the function of the training step that compiled it
        loaders = {_first(cat, cat.scan.key(e.key)).origin.function for e in cat.loaders_of(k.key)}
        assert loaders == {d.origin.function}, (k.key, loaders, d.origin)
    # So --fn finds them: the backward FX key of train_mlp's AOTAutograd entry.
    rep = match(cat, parse_shapes(["x=[7,4]", "target=[7,1]"]), function="train_mlp", mode=DynamicMode.TRUE)
    listed = {m.key.key for m in rep.results}
    loaded = {ld.key for m in rep.results for ld in m.loads if ld.role == "backward"}
    assert loaded and loaded <= listed


def test_coverage_needs_no_sym_for_the_other_placeholders(any_version):
    """Every key's t0 swept over 2..64, the other placeholders at their hints: no value undecided."""
    cat = Catalog(scan_cache(any_version.root))
    swept = 0
    for k in cat.scan.keys:
        table = cat.symbols(k.entries[0])
        if not table:
            continue
        cov = coverage(cat, k, "t0", 2, 64, {}, DynamicMode.TRUE)
        assert len(cov.fixed) == len(table) - 1
        assert not [g for g in cov.segments if g.outcome == "undecided"], (k.key, cov.segments)
        swept += len(table) > 1
    assert swept >= 2  # keys with more than one placeholder


# --- what only the recorded versions have ------------------------------------------------


@pytest.fixture(params=RECORDED)
def recorded(request) -> VersionCache:
    return _recorded(request.param)


CALLS = [(v, i) for v in RECORDED for i in range(len(_recorded(v).truth["calls"]))]


@pytest.mark.parametrize("version,i", CALLS, ids=[
    f"{v}-{c['case']}-{json.dumps(c['shapes']).replace(' ', '')}"
    for v, i in CALLS for c in [_recorded(v).truth["calls"][i]]])
def test_match_agrees_with_the_lookups_that_version_recorded(version, i):
    vc = _recorded(version)
    call = vc.truth["calls"][i]
    assert call["error"] is None, call["error"]
    proc = run_fxcache("--cache-dir", str(vc.root), *SOURCE_DIR, "match", "--json", *call["match_args"])
    report = json.loads(proc.stdout)
    assert proc.returncode == report["verdicts"]["exit_code"], proc.stderr  # 0 hit, 1 miss, 3 undecided
    results = report["results"]
    present = {k.key for k in scan_cache(vc.root).keys}
    assert_match_agrees_with_lookups(results, call["lookups"], present, vc.writes(call["case"]))


def test_the_recorded_int_argument_calls_are_the_issue_s(recorded):
    """int_arg_auto was built with n=2 then n=3 under dynamic=None; a fresh process's
    call with n=9 (or 3) looks up a key the cache does not have, and match says no key fits."""
    present = {k.key for k in scan_cache(recorded.root).keys}
    calls = {c["shapes"][1]: c for c in recorded.truth["calls"] if c["case"] == "int_arg_auto"}
    assert calls[2]["lookups"][0]["key"] in present and calls[2]["lookups"][0]["hit"]
    for n in (3, 9):
        assert calls[n]["lookups"][0]["key"] not in present
        proc = run_fxcache("--cache-dir", str(recorded.root), "match", "--json", *calls[n]["match_args"])
        statuses = {r["key"]: r["status"] for r in json.loads(proc.stdout)["results"]}
        own = recorded.writes("int_arg_auto")
        assert own <= set(statuses) and {statuses[k] for k in own} == {"no-fit"}


def test_sources_decode_to_the_names_that_version_gives_them(recorded):
    classes = set()
    for s in recorded.truth["sources"]:
        root, _ = load_stubs(base64.b64decode(s["pickle"]))
        assert source_name(root) == s["name"], s
        classes.add(s["class"])
    assert {"ContextVarGetSource", "UnwrapCollectiveTensorSource"} <= classes


def _fx_key_of(vc: VersionCache, function: str, symbols: int) -> CacheKey:
    cat = Catalog(scan_cache(vc.root))
    (k,) = [k for k in cat.scan.keys if k.kind is KeyKind.FX_GRAPH and _first(cat, k).origin.function == function
            and len(cat.symbols(k.entries[0])) == symbols]
    return k


def test_key_names_the_components_torch_2_14_and_2_15_added(recorded):
    k = _fx_key_of(recorded, "int_arg_auto", 0)
    proc = run_fxcache("--cache-dir", str(recorded.root), "key", k.key, "--json")
    assert proc.returncode == 0, proc.stderr
    comps = {c["name"]: c["value"] for c in json.loads(proc.stdout)["components"]}
    assert {"nested_inductor_config_patches", "provenance_tracking_to_timeline",
            "compile_on_one_rank", "torch_version", "system_info[hash]"} <= set(comps)
    if recorded.version >= "2.15":
        assert comps["system_info[version]"].startswith("triton ")


def test_diff_across_versions_names_the_build_and_the_new_components():
    a, b = _recorded(RECORDED[0]), _recorded(RECORDED[-1])
    ka, kb = _fx_key_of(a, "int_arg_auto", 0), _fx_key_of(b, "int_arg_auto", 0)
    proc = run_fxcache("--cache-dir", str(a.root), "diff", ka.key, kb.key,
                       "--other-cache-dir", str(b.root), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    differ = {d["name"]: d for pair in out["compared"] for d in pair["differ"]}
    assert "torch_version" in differ and "gm" not in differ  # the same graph, another build
    if b.version >= "2.15" and a.version < "2.15":
        assert differ["system_info[version]"]["a"] is None
        assert differ["system_info[version]"]["b"]["value"].startswith("triton ")


@pytest.mark.torch
def test_gc_stale_takes_every_entry_another_torch_built(recorded, tmp_path):
    pytest.importorskip("torch")
    copy = tmp_path / "cache"
    shutil.copytree(recorded.root, copy)
    proc = run_fxcache("--cache-dir", str(copy), "gc", "--stale", "--dry-run", "--json", imports_torch=True)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    removals = [r for r in plan["removals"] if r.get("entry")]
    fx = [r for r in removals if r["kind"] == "fxgraph"]
    assert len(fx) == sum(len(k.entries) for k in scan_cache(copy).keys if k.kind is KeyKind.FX_GRAPH)
    assert all("torch_version" in " ".join(r["reasons"]) for r in fx)


def test_gc_stale_finds_nothing_stale_under_the_torch_that_built_the_entries(recorded):
    """What ``current_build`` computed under that version (``key --current``, ``gc --stale``)
    equals every FX entry's build components, system_info[version] included (2.15)."""
    from fxcache_core.keying.anatomy import anatomy, stale_components
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy

    current = recorded.truth["current_build"]
    cat = Catalog(scan_cache(recorded.root))
    for k in cat.scan.keys:
        if k.kind is KeyKind.FX_GRAPH:
            comps = anatomy(cat, k).components
            names = {c.name for c in comps if c.group in ("torch_version", "system_info")}
            assert names == set(current), (names, set(current))
            assert stale_components(comps, current) == ()
    assert not plan_gc(cat, GcPolicy(stale_against=tuple(current.items()))).removals
    other = dict(current, torch_version="another")
    assert plan_gc(cat, GcPolicy(stale_against=tuple(other.items()))).removals
