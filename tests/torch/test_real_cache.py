"""fxcache on a real cache compiled by torch, checked against torch itself.

``real_cache`` is built once per session by ``demo.build_cache`` (torch.compile
on CPU). The truth comes from torch: ``pickle.loads`` of the entries with torch
imported (allowed in tests only), and ``tests.harness.oracle``, which records what
torch's own ``find_guarded_entry`` chose when the compiled function is called
again in a fresh process.
"""

from __future__ import annotations

import os
import pickle
import re
import time
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
from tests.harness.match_runs import Call, ahead
from tests.helpers import assert_match_agrees_with_answer, assert_verdict_as_torch, run_fxcache
from tests.helpers import cli_json as _json

pytestmark = pytest.mark.torch


def _files_on_disk(root: Path) -> dict[str, int]:
    out = {}
    for sub in ("fxgraph", "aotautograd"):
        for dirpath, _dirs, files in os.walk(root / sub):
            for f in files:
                if not f.startswith("."):
                    p = Path(dirpath) / f
                    out[str(p)] = p.stat().st_size
    return out


# --- ls -------------------------------------------------------------------------


def test_ls_json_lists_every_entry_file_on_disk(real_cache):
    keys = _json(run_fxcache("--cache-dir", str(real_cache.root), "ls", "--json"))
    listed = {}
    for k in keys:
        assert k["size"] == sum(e["size"] for e in k["entries"])
        assert [e["entry"] for e in k["entries"]] == sorted(e["entry"] for e in k["entries"])
        for e in k["entries"]:
            listed[str(Path(k["path"]) / e["entry"])] = e["size"]
    assert listed == _files_on_disk(real_cache.root)
    kinds = {k["kind"] for k in keys}
    assert kinds == {"fxgraph", "aotautograd"}
    assert any(len(k["entries"]) >= 2 for k in keys)  # same_graph_two_regions


def test_ls_and_guards_run_with_torch_blocked(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    ls = run_fxcache(*d, "ls", block_torch=True)
    assert ls.returncode == 0, ls.stderr
    assert "entries" in ls.stdout and "keys (" in ls.stdout
    key = _json(run_fxcache(*d, "ls", "--json", block_torch=True))[0]["key"]
    g = run_fxcache(*d, "guards", key[:12], block_torch=True)
    assert g.returncode == 0, g.stderr
    assert key in g.stdout


def test_match_and_gc_dry_run_run_with_torch_blocked(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    m = run_fxcache(*d, "match", "--shapes", "x=[40,3]", "--json", block_torch=True)
    assert _json(m)["results"]
    g = run_fxcache(*d, "gc", "--dry-run", "--json", block_torch=True)
    assert _json(g)["dry_run"] is True


# --- guards and decoding against torch's own unpickling -------------------------


@pytest.fixture(scope="module")
def torch_view(real_cache):
    """Every entry unpickled by torch itself (truth), keyed by path."""
    import torch  # noqa: F401  (classes must be importable for pickle.loads)

    truth = {}
    for e in scan_cache(real_cache.root).entries():
        truth[e.path] = pickle.loads(e.path.read_bytes())
    return truth


def test_entry_names_are_the_content_hash(real_cache):
    for e in scan_cache(real_cache.root).entries():
        assert e.name == sha256_hash(e.path.read_bytes())


def test_decoded_fields_equal_what_torch_unpickles(real_cache, torch_view):
    from fxcache_core.decode.pgo import read_pgo_states

    cat = Catalog(scan_cache(real_cache.root))
    n_fx = n_aot = 0
    for e in cat.scan.entries():
        d = cat.load(e, full=True)
        assert isinstance(d, DecodedEntry), d
        assert d.foreign == (), (e.path, d.foreign)  # the code scan: every global one torch writes
        t = torch_view[e.path]
        assert d.guards_expr == t.guards_expr
        if e.kind is KeyKind.FX_GRAPH:
            n_fx += 1
            assert d.fx_key == t._fx_graph_cache_key == e.key
            assert d.debug_lines == tuple(t._fx_graph_cache_debug_lines)
            assert d.is_backward == t.fx_kwargs["is_backward"]
            assert d.wrapper_key == t.cache_key
        else:
            n_aot += 1
            cfg = t.sanitized_aot_config
            assert d.arg_sources == tuple(s.name for s in cfg.aot_autograd_arg_pos_to_source)
            assert d.forward.key == t.compiled_fw.fx_graph_cache_info[0]
            assert d.forward.guards_expr == t.compiled_fw.fx_graph_guard_expr
            if t.compiled_bw is None:
                assert d.backward is None
            else:
                assert d.backward.key == t.compiled_bw.fx_graph_cache_info[0]
                assert d.backward.guards_expr == t.compiled_bw.fx_graph_guard_expr
    assert n_fx >= 10 and n_aot >= 5
    profiles = read_pgo_states(real_cache.pgo)  # Dynamo's saved profile, which torch unpickles too
    assert profiles and all(p.codes and p.foreign == () for p in profiles), profiles


def test_placeholders_trace_to_the_sources_torch_recorded(real_cache, torch_view):
    """tN is the N-th backed SymInt input; its source is aot_autograd_arg_pos_to_source there."""
    cat = Catalog(scan_cache(real_cache.root))
    checked = 0
    for e in cat.scan.entries():
        if e.kind is not KeyKind.AOT_AUTOGRAD:
            continue
        t = torch_view[e.path]
        srcs = [s.name for s in t.sanitized_aot_config.aot_autograd_arg_pos_to_source]
        # Torch's own placeholders: "Sym(...)" inputs of the stored forward graph, in order.
        import re

        sym_idx = [int(m.group(2)) for m in re.finditer(
            r'\w+: "Sym\((\w+)\)",?\s*# PlainAOTInput\(idx=(\d+)\)', t.aot_forward_graph_str)]
        table = cat.symbols(e)
        assert [s.source for s in table] == [srcs[i] for i in sym_idx]
        used = {int(n) for n in re.findall(r"L\['t(\d+)'\]", t.guards_expr or "")}
        assert used <= set(range(len(table)))
        checked += len(table)
    assert checked >= 5


def test_guards_json_shape_and_sources(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    keys = _json(run_fxcache(*d, "ls", "--json"))
    aot = [k for k in keys if k["kind"] == "aotautograd"]
    seen_source = False
    for k in aot:
        g = _json(run_fxcache(*d, "guards", k["key"][:14], "--json"))
        assert g["key"] == k["key"]
        for row in g["entries"]:
            assert set(row) >= {"entry", "guards_expr", "clauses", "symbols"}
            if row["guards_expr"]:
                assert row["clauses"]
            for ph, s in row["symbols"].items():
                assert ph.startswith("t") and set(s) >= {"symbol", "source"}
                seen_source |= bool(s["source"] and s["source"].startswith("L['x'].size()"))
    assert seen_source


def test_fx_entries_get_sources_through_their_aot_entries(real_cache):
    cat = Catalog(scan_cache(real_cache.root))
    fx_with_syms = [e for e in cat.scan.entries()
                    if e.kind is KeyKind.FX_GRAPH and cat.symbols(e) and cat.loaders_of(e.key)]
    assert fx_with_syms
    # The FX keys no AOTAutograd entry loads are those of the graph whose AOTAutograd
    # cache torch bypassed (match names their inputs by their symbols' names), and the
    # forward of a training graph whose backward never compiled (grad_forward: AOTAutograd
    # saves its entry with the backward).
    alone = {e.key for e in cat.scan.entries() if e.kind is KeyKind.FX_GRAPH and not cat.loaders_of(e.key)}
    # (unet_timestep_auto's second call, with the timestep a SymInt, writes one too.)
    recompiled = real_cache.summary["cases"]["unet_timestep_auto"]["writes"][1]
    assert alone == {w["key"] for w in (*real_cache.writes("unet_timestep"), *recompiled,
                                        *real_cache.writes("grad_forward"))}
    specialized = 0
    for e in fx_with_syms:
        for s in cat.symbols(e):
            assert s.hint is not None  # from the get_args() harness of the entry's source_code
            if s.expr is not None and s.expr.lstrip("-").isdigit():
                # A SymInt ShapeEnv specialized (Sym(1): sum_dim's dim under dynamic=True): no
                # symbol to take a source by, its hint the number itself.
                assert s.hint == int(s.expr), (e.key, s)
                specialized += 1
                continue
            assert s.source is not None, (e.key, s)
    assert specialized  # the corpus has such an input (sum_dim), so the rule above is exercised


def test_hints_from_the_compiled_module_equal_torch_2_13s_runnable_graph_str(real_cache):
    """Torch 2.13 heads runnable_graph_str with ``s77 = 4`` per symbol; 2.14+ leaves it
    empty. The get_args() harness of source_code, which every version writes, gives the
    same value for every symbol of every FX entry's inputs, without runnable_graph_str."""
    from fxcache_core.decode.entries import parse_hints, symbol_hints

    compared = 0
    cat = Catalog(scan_cache(real_cache.root))
    for e in cat.scan.entries():
        if e.kind is not KeyKind.FX_GRAPH:
            continue
        data = e.path.read_bytes()
        d = cat.load(e)
        graph = pickle.loads(data)  # torch's own object (tests only)
        from_torch = dict(parse_hints(graph.runnable_graph_str))
        ours = dict(symbol_hints(d.inputs, graph.source_code))  # no runnable_graph_str
        # every SymInt input is a plain symbol, but one ShapeEnv specialized to a number (Sym(1))
        syms = [i.symbol for i in d.symints if not i.expr.lstrip("-").isdigit()]
        assert all(s is not None for s in syms), d.inputs
        assert {s: ours.get(s) for s in syms} == {s: from_torch[s] for s in syms}, e.path
        assert dict(d.hints) == {**ours, **from_torch}
        compared += len(syms)
    assert compared >= 20


# --- match against torch's own lookup ---------------------------------------------


def test_saved_pgo_state_makes_the_int_rule_undecided(cache_copy):
    """With Dynamo's PGO state in the cache dir, a fresh process's first call may trace n
    as a SymInt: neither int_arg_auto key is ruled out for n=9."""
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes
    from fxcache_core.lookup.match import match

    (cache_copy / "dynamo").mkdir()
    (cache_copy / "dynamo" / "code_state_job1:0:.pkl").write_bytes(b"")
    rep = match(Catalog(scan_cache(cache_copy)), parse_shapes(["x=[5]", "n=9"]),
                function="int_arg_auto", mode=DynamicMode.NONE)
    got = [(m.status, " ".join(m.uncertain)) for m in rep.results if m.key.kind is KeyKind.AOT_AUTOGRAD]
    assert [s for s, _ in got] == ["undecided", "undecided"], got
    assert all("profile-guided" in why for _, why in got), got


# (case, call shapes): new shapes inside, between and outside the compiled regions.
ORACLE_CALLS = [
    ("same_graph_two_regions", [[40, 3]]),
    ("same_graph_two_regions", [[5, 3]]),
    ("same_graph_two_regions", [[10, 3]]),
    ("branch_on_size", [[7, 3]]),
    ("branch_on_size", [[16, 3]]),
    ("view_divisible", [[12]]),
    ("train_mlp", [[7, 4], [7, 1]]),
    ("train_mlp", [[30, 4], [30, 1]]),
    ("int_arg", [[9], 11]),
    ("broadcast_shared", [[8, 6], [6]]),
    ("mark_dynamic_range", [[40, 3]]),
    # Duck sizing: equal tensor sizes share a symbol, so torch traces another graph (key);
    # an int equal to a tensor size is not duck-sized (int_arg [[5], 5] hits the built key).
    ("same_graph_two_regions", [[3, 3]]),
    ("broadcast_shared", [[5, 5], [5]]),
    ("int_arg", [[5], 5]),
    # Automatic dynamic: a fresh process compiles its first call statically.
    ("automatic_dynamic", [[4, 3]]),
    ("automatic_dynamic", [[10, 3]]),
    # ... and bakes an int argument into the graph: built n=2 (static key), n=3 (n a SymInt).
    ("int_arg_auto", [[5], 2]),                  # hit, the static key
    ("int_arg_auto", [[5], 9]),                  # a key the cache does not have (match: no fit)
    # The static key baked the int 2: a 0-d tensor is a tensor input, another graph.
    ("int_arg_auto", [[5], []]),
]


@ahead(lambda case, shapes: [Call(case, shapes)])  # run ahead on the build threads
@pytest.mark.parametrize("case,shapes", ORACLE_CALLS, ids=[f"{c}-{s}" for c, s in ORACLE_CALLS])
def test_match_agrees_with_torch_lookup(real_cache, arg_answers, case, shapes):
    from tests.harness.oracle import call_id

    own = {w["key"] for w in real_cache.writes(case)}
    assert_match_agrees_with_answer(real_cache.root, case, shapes,
                                    arg_answers[call_id(case, shapes)], own)


def test_match_explains_failures_with_the_failing_clause(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    rep = _json(run_fxcache(*d, "match", "--shapes", "x=[10,3]", "--json"))
    missed = [r for r in rep["results"] if r["status"] == "undecided" and len(r["entries"]) >= 2
              and r["uncertain_codes"] == ["bound-failed"]]
    assert missed, rep
    for v in missed[0]["entries"]:
        assert v["passed"] is False and v["failed_clause"] and "t0=10" in v["reason"]


def test_match_reports_static_dims_that_do_not_fit(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    rep = _json(run_fxcache(*d, "match", "--shapes", "x=[7,5]", "--shapes", "target=[7,1]", "--json"))
    nofit = [r for r in rep["results"] if r["status"] == "no-fit"]
    assert any("dim 1 of L['x'] is static 4, got 5" in why for r in nofit for why in r["reasons"])


# --- gc against the directory ---------------------------------------------------


def test_gc_dry_run_changes_nothing_and_yes_removes_exactly_the_plan(cache_copy):
    d = ["--cache-dir", str(cache_copy)]
    before = _files_on_disk(cache_copy)
    total = sum(before.values())
    budget = f"{total // 2}B"
    plan = _json(run_fxcache(*d, "gc", "--max-size", budget, "--dry-run", "--json"))
    assert _files_on_disk(cache_copy) == before
    planned = {r["path"] for r in plan["removals"]}
    assert planned and plan["bytes_freed"] == sum(before[p] for p in planned)
    assert total - plan["bytes_freed"] <= total // 2
    done = _json(run_fxcache(*d, "gc", "--max-size", budget, "--yes", "--json"))
    assert set(done["removed"]) == planned
    after = _files_on_disk(cache_copy)
    assert set(after) == set(before) - planned


def test_gc_refuses_to_prompt_without_a_terminal(cache_copy):
    p = run_fxcache("--cache-dir", str(cache_copy), "gc", "--older-than", "0s", input="y\n")
    assert p.returncode == 2
    assert "pass --yes" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert sum(1 for _ in cache_copy.rglob("*")) > 0


def test_gc_removes_a_wrapper_module_with_its_only_fx_entry(cache_copy):
    from fxcache_core.cache.scan import scan_artifacts

    rep = _json(run_fxcache("--cache-dir", str(cache_copy), "gc", "--max-size", "1B", "--dry-run", "--json"))
    assert not [r for r in rep["removals"] if r["what"] == "code"]  # all used within the hour: kept
    old = time.time() - 3 * 3600
    for a in scan_artifacts(cache_copy):
        os.utime(a.file.path, (old, old))
    rep = _json(run_fxcache("--cache-dir", str(cache_copy), "gc", "--max-size", "1B", "--dry-run", "--json"))
    # (At a 1-byte budget all other old code goes too, on its own: --max-size counts every file.)
    wrappers = [r for r in rep["removals"] if r["what"] == "code" and r["reasons"][0].startswith("wrapper module")]
    fx_removed = [r for r in rep["removals"] if r["kind"] == "fxgraph"]
    assert wrappers and all(r["path"].endswith(".py") for r in wrappers)
    assert len(wrappers) <= len(fx_removed)
    py = {a.key for a in scan_artifacts(cache_copy) if a.file.name.endswith(".py")}
    assert {r["key"] for r in wrappers} <= py
    # Everything goes at a 1-byte budget: its bytes freed count each file once.
    assert rep["bytes_freed"] == sum(r["size"] for r in rep["removals"])
    assert len({r["path"] for r in rep["removals"]}) == len(rep["removals"])


# --- bad input ------------------------------------------------------------------


@pytest.mark.parametrize("args,needle", [
    (["--cache-dir", "/nonexistent/cache", "ls"], "does not exist"),
    (["guards", "fzzzzzzz"], "no key starts with"),
    (["guards", "f"], "ambiguous"),
    (["guards", "NOT-A-KEY"], "not a key prefix"),
    (["match", "--shapes", "x=[16,"], "not a list of integers"),
    (["match", "--shapes", "x"], "expected NAME="),
    (["match", "--sym", "t0=3"], "give --key"),
    (["gc", "--older-than", "soon"], "not a duration"),
])
def test_bad_input_is_one_line_and_exit_2(real_cache, args, needle):
    if args[0] != "--cache-dir":
        args = ["--cache-dir", str(real_cache.root), *args]
    p = run_fxcache(*args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], p.stderr
    assert "Traceback" not in p.stderr


def test_truncated_entry_is_reported_and_skipped(cache_copy):
    scan = scan_cache(cache_copy)
    key = next(k for k in scan.keys if k.kind is KeyKind.AOT_AUTOGRAD and len(k.entries) >= 2)
    victim = key.entries[0]
    data = victim.path.read_bytes()
    victim.path.write_bytes(data[: len(data) // 3])
    cat = Catalog(scan_cache(cache_copy))
    assert isinstance(cat.load(cat.scan.key(key.key).entries[0]), Unreadable)
    g = run_fxcache("--cache-dir", str(cache_copy), "guards", key.key[:14], "--json")
    rows = _json(g)["entries"]
    assert "truncated" in rows[0]["error"] and rows[1]["guards_expr"]
    ls = run_fxcache("--cache-dir", str(cache_copy), "ls", "--check")
    assert ls.returncode == 0 and "1 unreadable" in ls.stdout and victim.name in ls.stdout
    assert "truncated" in ls.stdout
    lsj = _json(run_fxcache("--cache-dir", str(cache_copy), "ls", "--check", "--json"))
    flagged = [e["entry"] for k in lsj for e in k["entries"] if e["unreadable"]]
    assert flagged == [victim.name]
    text = run_fxcache("--cache-dir", str(cache_copy), "guards", key.key[:14])
    assert text.returncode == 0 and "unreadable" in text.stdout
    m = _json(run_fxcache("--cache-dir", str(cache_copy), "match", "--key", key.key[:14],
                          "--sym", "t0=40", "--json"))
    assert m["results"][0]["entries"][0]["outcome"] == "unreadable"


def test_guards_groups_ranges_and_shows_what_separates_entries(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    keys = _json(run_fxcache(*d, "ls", "--json"))
    multi = next(k for k in keys if k["kind"] == "fxgraph" and len(k["entries"]) >= 2)
    g = _json(run_fxcache(*d, "guards", multi["key"][:14], "--json"))
    only = g["comparison"]["only"]
    assert set(only) == {e["entry"] for e in multi["entries"]}
    assert all(only.values())  # each entry has clauses of its own: its region
    for row in g["entries"]:
        assert len(row["trees"]) == len(row["clauses"])
        s0 = next(r for r in row["summary"]["ranges"] if r["placeholder"] == "t0")
        hint = row["symbols"]["t0"]["hint"]
        assert (s0["lower"] is None or s0["lower"] <= hint) and (s0["upper"] is None or hint <= s0["upper"])
    text = run_fxcache(*d, "guards", multi["key"][:14])
    assert "What separates the entries" in text.stdout and "  range " in text.stdout and " >= " in text.stdout
    latex = run_fxcache(*d, "guards", multi["key"][:14], "--format", "latex")
    assert r"\leq" in latex.stdout
    raw = run_fxcache(*d, "guards", multi["key"][:14], "--raw")
    assert g["entries"][0]["guards_expr"] in raw.stdout


def test_coverage_maps_the_regions_of_a_real_key(real_cache):
    d = ["--cache-dir", str(real_cache.root)]
    rep = _json(run_fxcache(*d, "match", "--fn", "same_graph_two_regions", "--shapes", "x=[40,3]", "--json"))
    (aot,) = [r for r in rep["results"] if r["kind"] == "aotautograd"]
    cov = _json(run_fxcache(*d, "match", "--coverage", aot["key"][:14], "--range",
                            "L['x'].size()[0]=1:64", "--dynamic", "true", "--json"))
    seg = {(g["start"], g["end"]): g for g in cov["segments"]}
    assert seg[(1, 1)]["outcome"] == "other-graph"      # 0/1 specialization
    assert seg[(3, 3)]["outcome"] == "other-graph"      # equals x.size(1) = 3: duck sizing
    assert seg[(8, 15)]["outcome"] == "miss"            # between the two compiled regions
    assert seg[(16, 64)]["entry"] == aot["hit"]         # the region x=[40,3] hits
    text = run_fxcache(*d, "match", "--coverage", aot["key"][:14], "--range", "s77=1:64")
    assert text.returncode == 0 and "8..15" in text.stdout
    # Without --dynamic, whether 3 is duck-sized (dynamic=True) or not (marked) is unknown.
    cov = _json(run_fxcache(*d, "match", "--coverage", aot["key"][:14], "--range", "s77=3:3", "--json"))
    assert [g["outcome"] for g in cov["segments"]] == ["undecided"] and "dynamic=True" in cov["segments"][0]["note"]
    cov = _json(run_fxcache(*d, "match", "--coverage", aot["key"][:14], "--range", "s77=3:3",
                            "--dynamic", "none", "--json"))
    assert [g["outcome"] for g in cov["segments"]] == ["hit"]  # marked: its own symbol, t0 <= 7


# --- how the call is compiled: what the cache does not record ---------------------


def _key_match(real_cache, fn: str, mode: str, duck_shape: bool | None = None, **shapes: str):
    """The AOTAutograd key of ``fn`` matched under ``mode``; under ``true`` with duck
    sizing on (torch's default, as these cases are compiled) unless ``duck_shape`` says:
    the session's cache holds keys compiled with it off, which make it undecided."""
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes
    from fxcache_core.lookup.match import match

    if duck_shape is None and mode == "true":
        duck_shape = True
    inputs = parse_shapes([f"{k}={v}" for k, v in shapes.items()])
    rep = match(Catalog(scan_cache(real_cache.root)), inputs, function=fn, mode=DynamicMode(mode),
                duck_shape=duck_shape)
    (m,) = [m for m in rep.results if m.key.kind is KeyKind.AOT_AUTOGRAD]
    return m


@pytest.mark.parametrize("mode,x,status,why", [
    # Built from x[8, 3] with both dims marked: two symbols, s77 and s27.
    ("unknown", "[6,6]", "undecided", "duck sizing gives them one symbol"),
    ("true", "[6,6]", "no-fit", "duck sizing gives equal sizes one symbol"),
    ("true", "[6,6]:mark_dynamic=[0]", "hit", None),          # a marked dim is never duck-sized
    ("none", "[6,6]:mark_dynamic=[0,1]", "hit", None),
    ("none", "[6,6]:mark_dynamic=[0]", "no-fit", "traces an unmarked dim static"),
    ("false", "[6,7]", "no-fit", "traces an unmarked dim static"),
    ("unknown", "[6,7]", "hit", None),                         # unequal sizes: no mode needed
])
def test_the_dynamic_mode_decides_duck_sizing_and_static_dims(real_cache, mode, x, status, why):
    m = _key_match(real_cache, "mark_dynamic_min", mode, x=x)
    assert m.status == status, (m.reasons, m.uncertain)
    said = " ".join(m.reasons + m.uncertain)
    assert (why is None and not m.uncertain) or (why is not None and why in said), said


def test_an_int_argument_is_specialized_on_the_first_call_under_dynamic_none(real_cache):
    assert _key_match(real_cache, "int_arg", "true", x="[5]", n="3").status == "hit"
    m = _key_match(real_cache, "int_arg", "none", x="[5]:mark_dynamic=[0]", n="3")
    assert m.status == "no-fit" and "specializes it" in m.reasons[0]


def test_an_int_baked_into_a_static_key_is_read_from_its_graph(real_cache):
    # int_arg_auto, dynamic=None, built with n=2 (n a constant in the graph) then n=3
    # (automatic dynamic: n a SymInt). A fresh process's first call bakes its own n in.
    def statuses(mode: str, n: int) -> list[tuple[str, str]]:
        return sorted(_statuses(real_cache, "int_arg_auto", mode, x="[5]", n=str(n)).values())

    (static, dyn) = statuses("none", 2)
    assert static[0] == "hit" and dyn[0] == "no-fit" and "specializes it" in dyn[1]
    for n in (3, 9):
        got = statuses("none", n)
        assert [s for s, _ in got] == ["no-fit", "no-fit"], got
        assert any("L['n'] was 2 when this key was traced" in why and f"L['n']={n}" in why
                   for _, why in got), got
    # Without --dynamic: dynamic=True would look up the SymInt key, dynamic=None the static one.
    got = statuses("unknown", 2)
    assert [s for s, _ in got] == ["undecided", "undecided"], got
    assert statuses("unknown", 9)[0][0] == "no-fit"


def test_a_size_equal_to_a_specialized_dim_is_duck_sized_only_under_dynamic_true(real_cache):
    # conv1d_small: channels (dim 1 of x) specialized to 3; a batch of 3 under dynamic=True
    # shares its symbol, which the specialization makes static: another graph (the oracle
    # suite checks this against torch).
    assert _key_match(real_cache, "conv1d_small", "true", x="[3,3,12]").status == "no-fit"
    assert _key_match(real_cache, "conv1d_small", "unknown", x="[3,3,12]").status == "undecided"
    assert _key_match(real_cache, "conv1d_small", "true", x="[5,3,12]").status == "hit"


def test_a_graph_breaks_resume_frame_is_named_by_its_own_locals(real_cache):
    # calls_helper calls _helper_tail, whose graph break leaves the frame
    # torch_dynamo_resume_in__helper_tail_at_N, keyed on the helper's local t.
    d = ["--cache-dir", str(real_cache.root), "match", "--fn", "_helper_tail", "--dynamic", "true", "--json"]
    rep = _json(run_fxcache(*d, "--shapes", "x=[9,5]"))
    assert rep["results"] == []
    (ub,) = rep["unbound"]
    assert ub["kind"] == "aotautograd" and ub["takes"] == ["t"]
    cases = (Path(__file__).resolve().parents[2] / "demo" / "cases.py").read_text().splitlines()
    first = next(n for n, ln in enumerate(cases, 1) if ln.startswith("def _helper_tail("))  # its place
    assert re.fullmatch(rf"_helper_tail, resumed after the graph break at line \d+ \(cases\.py:{first}\)",
                        ub["origin"]), ub["origin"]
    rep = _json(run_fxcache(*d, "--shapes", "t=[9,5]:mark_dynamic=[0,1]"))
    assert rep["unbound"] == [] and [r["status"] for r in rep["results"] if r["key"] == ub["key"]] == ["hit"]
    text = run_fxcache(*d[:-1], "--shapes", "x=[9,5]").stdout
    assert "NOT BOUND" in text and "takes t:" in text


def _statuses(real_cache, fn: str, mode: str, **shapes: str) -> dict[str, tuple[str, str]]:
    """AOTAutograd key -> (status, what was said) for every such key of ``fn`` (duck
    sizing on under ``true``, as in :func:`_key_match`)."""
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes
    from fxcache_core.lookup.match import match

    inputs = parse_shapes([f"{k}={v}" for k, v in shapes.items()])
    rep = match(Catalog(scan_cache(real_cache.root)), inputs, function=fn, mode=DynamicMode(mode),
                duck_shape=True if mode == "true" else None)
    return {m.key.key: (m.status, " ".join(m.reasons + m.uncertain))
            for m in rep.results if m.key.kind is KeyKind.AOT_AUTOGRAD}


def test_a_marked_dim_never_takes_a_key_where_it_is_static(real_cache):
    # automatic_dynamic_cols: a static key (x[4, 6]) and one with dim 1 symbolic.
    got = _statuses(real_cache, "automatic_dynamic_cols", "none", x="[4,6]:mark_dynamic=[1]")
    assert sorted(s for s, _ in got.values()) == ["hit", "no-fit"]
    assert any("marked dynamic but static 6" in why for s, why in got.values() if s == "no-fit")
    # Unmarked, a fresh process's first call is the static key's.
    got = _statuses(real_cache, "automatic_dynamic_cols", "none", x="[4,6]")
    assert sorted(s for s, _ in got.values()) == ["hit", "no-fit"]


def test_under_dynamic_true_automatic_dynamics_static_dims_are_not_taken(real_cache):
    """automatic_dynamic_cols (dynamic=None: a static key x[4, 6], then one with x.size(1)
    symbolic) asked under dynamic=True, where torch traces both dims as symbols (recorded in
    test_shapes_oracle.py: a new key): the static key does not fit (the other key has
    x.size(1) symbolic, so the code does not fix it), and the other is undecided (its
    static x.size(0) may be one the code fixes)."""
    got = _statuses(real_cache, "automatic_dynamic_cols", "true", x="[4,6]")
    assert sorted(s for s, _ in got.values()) == ["no-fit", "undecided"], got
    assert any(s == "no-fit" and "another key of this function has it symbolic" in why for s, why in got.values())
    assert any(s == "undecided" and "unless the code fixes that size" in why for s, why in got.values())


def test_a_symbol_shared_by_marked_dims_does_not_fit(real_cache):
    """two_tensors' duck key (a[4], b[4] built with one symbol, one graph input): marked,
    a and b get a symbol and a graph input each (an op that made them equal would keep
    both inputs and add an equality guard), so torch traces the two-symbol graph. Checked
    against torch 2.13 in a fresh process: marked a[7], b[7] (or a alone marked) look up
    the two-symbol FX key and hit; unmarked, the one-symbol key."""
    got = _statuses(real_cache, "two_tensors", "true", a="[7]", b="[7]")
    assert sorted(s for s, _ in got.values()) == ["hit", "no-fit"]       # duck: the one-symbol key
    one_symbol = next(k for k, (s, _) in got.items() if s == "hit")
    got = _statuses(real_cache, "two_tensors", "true", a="[7]:mark_dynamic=[0]", b="[7]:mark_dynamic=[0]")
    assert sorted(s for s, _ in got.values()) == ["hit", "no-fit"]
    status, why = got[one_symbol]
    assert status == "no-fit" and "marked dims get a symbol each" in why, why
    # One marked dim is enough: no duck dim reuses a marked dim's symbol (torch: hints
    # [7, 7], the two-symbol FX key).
    got = _statuses(real_cache, "two_tensors", "true", a="[7]:mark_dynamic=[0]", b="[7]")
    assert sorted(s for s, _ in got.values()) == ["hit", "no-fit"]
    status, why = got[one_symbol]
    assert status == "no-fit" and "is marked dynamic and gets a symbol of its own" in why, why


def test_saved_pgo_state_makes_traced_static_undecided(cache_copy):
    """With Dynamo's local PGO state in the cache dir (a job id was set), a fresh
    process's first call may trace a dim dynamic: dynamic=None cannot rule the key out."""
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes
    from fxcache_core.lookup.match import match

    def statuses():
        rep = match(Catalog(scan_cache(cache_copy)), parse_shapes(["x=[6,7]"]),
                    function="mark_dynamic_min", mode=DynamicMode.NONE)
        return [(m.status, " ".join(m.reasons + m.uncertain)) for m in rep.results
                if m.key.kind is KeyKind.AOT_AUTOGRAD]

    assert [s for s, _ in statuses()] == ["no-fit"]
    (cache_copy / "dynamo").mkdir()
    (cache_copy / "dynamo" / "code_state_job1:0:.pkl").write_bytes(b"")
    ((status, why),) = statuses()
    assert status == "undecided" and "profile-guided" in why


@ahead(lambda: [Call("int_arg_auto", [[5], []], "int_arg_auto")])
def test_an_int_baked_into_the_key_is_no_0d_tensor_as_torch_says(real_cache, arg_answers):
    """int_arg_auto's static key baked n=2 (read off its SymInt sibling): a 0-d tensor n
    is a tensor input, another graph, as torch's lookup of an absent key says; the
    static key says why (not undecided)."""
    from tests.harness.oracle import call_id

    shapes = [[5], []]
    v = assert_verdict_as_torch(real_cache.root, "int_arg_auto", shapes,
                                arg_answers[call_id("int_arg_auto", shapes)], "int_arg_auto")
    rep = _json(run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--fn", "int_arg_auto",
                            "--dynamic", "none", "--shapes", "x=[5]", "--shapes", "n=[]"))
    codes = {c for r in rep["results"] for c in r["reason_codes"]}
    assert v["status"] == "new-graph" and "scalar-kind-differs" in codes, (v, codes)
