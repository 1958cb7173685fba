"""A user thinks in functions: the verdict per function, keys by function, clauses in
the user's terms, and the JSON each core report gives (synthetic caches, no torch).

Synthetic on purpose: these check fxcache's own folding, rendering and JSON on
layouts built by hand (tests/synth.py); that the predictions agree with torch
is test_real_cache.py's and test_torch_oracle.py's job, on caches torch wrote.
"""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.functions.listing import by_function, key_rows
from fxcache_core.guards.user_terms import (
    clause_in_user_terms,
    render_range,
    user_source,
    user_text,
)
from fxcache_core.lookup.binding import DynamicMode, TensorArg
from fxcache_core.lookup.match import match
from fxcache_core.lookup.prediction import verdicts
from fxcache_core.reasons import code_of
from fxcache_core.state.index import Index
from tests.helpers import REPO_ROOT, run_fxcache
from tests.synth import (
    aot_entry_with_sources,
    fake_key,
    fx_entry_bytes,
    local_source,
    size_source,
    write_entry,
)

FILE = "/src/model.py"


def _function(root, name: str, guards: list[str], static: bool = False, line: int = 10):
    """An AOTAutograd key of function ``name`` (one entry per guards string) loading an
    FX key with the same entries: x is f32[s0, 3] (or f32[4, 3] with ``static``)."""
    fx = fake_key(KeyKind.FX_GRAPH, name + str(static))
    aot = fake_key(KeyKind.AOT_AUTOGRAD, name + str(static))
    for g in guards:
        write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes(g or None, fx, origin=(name, FILE, line)))
        inputs = ([("f32[4, 3][3, 1]cpu", local_source("x"))] if static else
                  [("Sym(s0)", size_source("x", 0)), ("f32[s0, 3][3, 1]cpu", local_source("x"))])
        write_entry(root, KeyKind.AOT_AUTOGRAD, aot,
                    aot_entry_with_sources(g or None, (fx, g or None), inputs, (name, FILE, line)))
    return aot, fx


@pytest.fixture
def cache(tmp_path):
    root = tmp_path / "cache"
    _function(root, "grow", ["16 <= L['t0']", "2 <= L['t0'] and L['t0'] <= 7"], line=10)
    _function(root, "always", [""], line=20)
    _function(root, "fixed", [""], static=True, line=30)
    return root


def _verdict(root, shapes, fn=None, mode=DynamicMode.TRUE):
    cat = Catalog(scan_cache(root))
    rep = match(cat, {"L['x']": TensorArg(tuple(shapes))}, function=fn, mode=mode)
    return rep, verdicts(rep, count_all=fn is not None)


# --- the verdict per function -----------------------------------------------------


def test_a_failed_bound_is_undecided_naming_the_clause_in_the_users_terms(cache):
    """x.size(0)=10 fails each entry's bound (>= 16, <= 7): whose check that was the cache
    does not show (a branch: another graph; an op: an error; neither: a new entry)."""
    _, v = _verdict(cache, [10, 3], fn="grow")
    (f,) = v.functions
    assert f.status == "undecided" and code_of(f.why) == "bound-failed" and v.exit_code == 3, f
    head = "UNDECIDED: this call fails "
    assert f.line.startswith((head + "x.size(0) >= 16 (#0) and x.size(0) <= 7 (#1), a check the trace",
                              head + "x.size(0) <= 7 (#0) and x.size(0) >= 16 (#1), a check the trace")), f.line


def test_a_hit_names_the_entry_and_exits_0(cache):
    _, v = _verdict(cache, [40, 3], fn="grow")
    (f,) = v.functions
    assert f.status == "hit" and f.line.startswith("HIT entry ") and v.exit_code == 0


def test_nothing_that_fits_is_a_new_graph_with_the_reason(cache):
    _, v = _verdict(cache, [5, 3], fn="fixed")
    (f,) = v.functions
    assert f.status == "new-graph" and v.exit_code == 1
    assert "dim 0 of x is static 4, got 5" in f.line  # x, not L['x']


def test_undecided_exits_3_and_a_miss_outweighs_it(cache):
    _, v = _verdict(cache, [10, 3], fn="always", mode=DynamicMode.UNKNOWN)
    assert {f.status for f in v.functions} == {"hit"} and v.exit_code == 0
    rep, _ = _verdict(cache, [10, 3])
    from fxcache_core.lookup.prediction import CallVerdict, FunctionVerdict

    und = FunctionVerdict("a", None, "undecided", "why")
    hit = FunctionVerdict("b", None, "hit", "", rep.results[0].key, "e")
    miss = FunctionVerdict("c", None, "miss", "why")
    assert CallVerdict((und, hit)).exit_code == 3
    assert CallVerdict((und, hit, miss)).exit_code == 1
    assert CallVerdict(()).exit_code == 1  # nothing takes the call: not a hit


def test_without_fn_functions_that_cannot_take_the_call_do_not_count(cache):
    _, v = _verdict(cache, [40, 3])
    assert {f.function for f in v.functions} == {"grow", "always"}
    assert [f.function for f in v.others] == ["fixed"] and v.exit_code == 0
    _, v = _verdict(cache, [40, 3], fn="fixed")  # named: it counts
    assert v.exit_code == 1


def test_match_cli_prints_the_verdict_first_and_exits_with_it(cache):
    d = ["--cache-dir", str(cache), "match", "--shapes", "x=[10,3]", "--dynamic", "True"]
    p = run_fxcache(*d, "--fn", "grow")
    assert p.returncode == 3, p.stderr
    assert p.stdout.splitlines()[0].startswith("grow: UNDECIDED: this call fails x.size(0) "), p.stdout
    assert "16 <= L['t0']" not in p.stdout  # the stored form only under --explain
    assert "(stored: 16 <= L['t0']" in run_fxcache(*d, "--fn", "grow", "--explain").stdout
    p = run_fxcache(*d[:-2], "--dynamic", "NONE", "--fn", "fixed")
    assert p.returncode == 1 and p.stdout.startswith("fixed: first call in a fresh process: NEW GRAPH: static x=[10,3]")
    assert "NO-FIT" in p.stdout  # the reasons, without --explain: --fn narrowed it to a few keys
    j = run_fxcache(*d, "--fn", "grow", "--json")
    body = json.loads(j.stdout)
    assert j.returncode == body["verdicts"]["exit_code"] == 3
    assert body["verdicts"]["functions"][0]["why_code"] == "bound-failed"
    entries = next(r for r in body["results"] if r["kind"] == "aotautograd")["entries"]
    assert {(e["user_clause"], e["failed_clause"]) for e in entries} == {
        ("x.size(0) >= 16", "16 <= L['t0']"), ("x.size(0) <= 7", "L['t0'] <= 7")}


def test_match_json_of_a_function_the_cache_lacks_is_a_usage_error_with_its_line(cache):
    p = run_fxcache("--cache-dir", str(cache), "match", "--shapes", "x=[10,3]", "--fn", "nosuch", "--json")
    assert p.returncode == 2 and p.stdout == "", p.stdout  # a usage error, as ls --json --fn nosuch
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "no key was compiled from a function named 'nosuch'" in p.stderr and "grow (" in p.stderr


# --- keys by function ------------------------------------------------------------------


def test_ls_shows_filters_groups_sorts_and_limits_by_function(cache):
    rows = key_rows(Catalog(scan_cache(cache)))
    assert {r.origin.function for r in rows} == {"grow", "always", "fixed"}
    groups = by_function(rows, "name")
    assert [g.function for g in groups] == ["always", "fixed", "grow"]
    assert all(len(g.keys) == 2 for g in groups) and groups[2].entries == 4
    d = ["--cache-dir", str(cache), "ls"]
    j = json.loads(run_fxcache(*d, "--fn", "grow", "--json").stdout)
    assert {k["function"] for k in j} == {"grow"} and j[0]["line"] == 10 and j[0]["file"] == FILE
    assert j[0]["origin"] == f"grow ({FILE}:10)"
    j = json.loads(run_fxcache(*d, "--sort", "size", "--limit", "1", "--json").stdout)
    assert len(j) == 1 and j[0]["function"] == "grow"  # two entries: the largest key
    j = json.loads(run_fxcache(*d, "--by", "function", "--json").stdout)
    assert [g["function"] for g in j] == ["always", "fixed", "grow"] and j[2]["aot_keys"] == 1
    text = run_fxcache(*d, "--fn", "grow", "--entries").stdout
    assert "serves x.size(0) >= 16" in text and "serves 2 <= x.size(0) <= 7" in text
    assert "last used" in text and "last modified" not in text
    bad = run_fxcache(*d, "--fn", "nosuch")
    assert bad.returncode == 2 and bad.stdout == ""
    assert "no key was compiled from a function named 'nosuch'" in bad.stderr
    for name in ("always (", "fixed (", "grow ("):  # the functions the cache does hold
        assert name in bad.stderr, bad.stderr


def test_a_warm_index_gives_each_keys_function_without_reading_an_entry(cache, tmp_path):
    idx_path = tmp_path / "index.sqlite"
    reads: list[int] = []
    for run in range(2):
        idx = Index(idx_path)
        cat = Catalog(scan_cache(cache), idx, on_read=lambda run=run: reads.append(run))
        rows = key_rows(cat)
        idx.close()
        assert {r.origin.function for r in rows} == {"grow", "always", "fixed"}
    assert reads.count(0) >= 6 and reads.count(1) == 0  # one decode per key, then none


def test_a_rewritten_entry_is_read_again_for_its_function(cache, tmp_path):
    idx = Index(tmp_path / "index.sqlite")
    key_rows(Catalog(scan_cache(cache), idx))
    fx = fake_key(KeyKind.FX_GRAPH, "growFalse")
    for p in KeyKind.FX_GRAPH.key_dir(cache, fx).iterdir():
        p.unlink()
    write_entry(cache, KeyKind.FX_GRAPH, fx, fx_entry_bytes(None, fx, origin=("renamed", FILE, 99)))
    rows = {r.key.key: r for r in key_rows(Catalog(scan_cache(cache), idx))}
    assert rows[fx].origin.function == "renamed"


# --- the user's terms ---------------------------------------------------------------


def test_sources_read_as_the_user_writes_them():
    assert user_source("L['x'].size()[0]") == "x.size(0)"
    assert user_source("L['xs'][1].stride()[0]") == "xs[1].stride(0)"
    assert user_source("L['self']._modules['lin']._parameters['weight'].size()[1]") == "self.lin.weight.size(1)"
    assert user_source("G['net'].storage_offset()") == "net.storage_offset()"
    assert user_text("dim 0 of L['x'] is static 4") == "dim 0 of x is static 4"


@pytest.mark.parametrize("text,want", [
    ("16 <= L['t0']", "x.size(0) >= 16"),
    ("(-1) < L['t0']", "x.size(0) > -1"),
    ("L['t0'] <= 7", "x.size(0) <= 7"),
    ("2 <= L['t0'] <= 7", "2 <= x.size(0) <= 7"),
    ("8 == L['t1']", "x.size(1) == 8"),
    ("(L['t0'] % 4) == 0", "x.size(0) % 4 == 0"),
])
def test_clauses_read_with_the_symbol_side_first(text, want):
    assert clause_in_user_terms(text, {"t0": "x.size(0)", "t1": "x.size(1)"}) == want


def test_a_clause_in_user_terms_means_what_the_stored_one_means():
    """Mirroring a comparison never changes its truth: both forms, evaluated by Python."""
    rng = random.Random(0)
    ops = ["<", "<=", ">", ">=", "==", "!="]
    for _ in range(300):
        a, op, b = rng.randint(-5, 20), rng.choice(ops), rng.choice(["L['t0']", "2*L['t0'] + L['t1']"])
        stored = f"{a} {op} {b}" if rng.random() < 0.5 else f"{b} {op} {a}"
        shown = clause_in_user_terms(stored, {"t0": "x0", "t1": "x1"})
        env = {"x0": rng.randint(0, 20), "x1": rng.randint(0, 20)}
        assert eval(stored, {"L": {"t0": env["x0"], "t1": env["x1"]}}) == eval(shown, dict(env))  # noqa: S307
        assert not re.match(r"\(?-?\d+\)? *[<>=!]", shown), shown  # the symbol side comes first
        ast.parse(shown, mode="eval")


def test_ranges_render_in_one_notation():
    assert render_range(2, 7, (), "s") == "2 <= s <= 7"
    assert render_range(16, None, (), "s") == "s >= 16"
    assert render_range(None, 7, (4,), "s") == "s <= 7, s != 4"
    assert render_range(3, 3, (), "s") == "s == 3"


# --- each core report's JSON, the CLI's JSON -------------------------------------------


def test_the_cli_json_is_the_core_reports_json(cache):
    from fxcache_core.guards.key_guards import key_guards
    from fxcache_core.lookup.audit import audit
    from fxcache_core.lookup.coverage import coverage

    scan = scan_cache(cache)
    cat = Catalog(scan)
    aot = scan.find(fake_key(KeyKind.AOT_AUTOGRAD, "growFalse"))
    d = ["--cache-dir", str(cache)]
    assert json.loads(run_fxcache(*d, "guards", aot.key, "--json").stdout) == key_guards(cat, aot).to_json()
    assert json.loads(run_fxcache(*d, "audit", "--json").stdout) == audit(cat).to_json()
    cov = coverage(cat, aot, "t0", 1, 20, mode=DynamicMode.TRUE)
    got = run_fxcache(*d, "coverage", aot.key[:10], "--range", "t0=1:20", "--dynamic", "true", "--json")
    assert json.loads(got.stdout) == cov.to_json()
    ls = json.loads(run_fxcache(*d, "ls", "--json").stdout)
    assert [k["key"] for k in ls] == [r.key.key for r in key_rows(cat)]
    assert ls == [r.to_json() for r in key_rows(cat)]
    rows = {r["key"]: r for r in ls}
    assert set(rows[aot.key]) >= {"kind", "key", "path", "size", "mtime", "last_used", "entries",
                                  "temp_files", "origin", "function", "file", "line"}
    assert set(rows[aot.key]["entries"][0]) >= {"entry", "size", "mtime", "last_used"}
    g = key_guards(cat, aot).to_json()
    assert set(g["entries"][0]) >= {"entry", "guards_expr", "clauses", "symbols", "summary", "trees", "region"}
    assert {e["region"]["text"] for e in g["entries"]} == {"x.size(0) >= 16", "2 <= x.size(0) <= 7"}
    assert set(g["comparison"]) == {"common", "only"}


def test_audit_ends_with_a_summary(cache):
    text = run_fxcache("--cache-dir", str(cache), "audit").stdout
    assert text.strip().splitlines()[-1].startswith("2 keys with several entries checked: 0 entries shadowed, ")


def test_writing_into_a_closed_pipe_ends_quietly_with_141(tmp_path):
    root = tmp_path / "many"
    for i in range(800):
        k = fake_key(KeyKind.FX_GRAPH, f"k{i}")
        write_entry(root, KeyKind.FX_GRAPH, k, fx_entry_bytes(None, k))
    proc = subprocess.Popen([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(root), "ls"],
                            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**__import__("os").environ, "PYTHONPATH": str(REPO_ROOT)})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away (`| head -1`)
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141 and err == b""


def test_an_fx_key_asked_for_by_name_is_looked_up_itself(cache):
    fx = fake_key(KeyKind.FX_GRAPH, "growFalse")
    d = ["--cache-dir", str(cache), "match", "--key", fx[:10]]
    hit = run_fxcache(*d, "--sym", "t0=40")
    assert hit.returncode == 0 and hit.stdout.startswith("grow: HIT entry "), hit.stdout
    failed = run_fxcache(*d, "--sym", "t0=10")
    assert failed.returncode == 3 and failed.stdout.startswith("grow: UNDECIDED: this call fails"), failed.stdout
