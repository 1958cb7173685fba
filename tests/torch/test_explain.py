"""``fxcache explain``: real workloads run under TORCH_TRACE, compared with torch's own lookups.

One session fixture runs the plans of ``tests.harness.traced`` once each, in processes
of their own (forked from the session's zygote, as fresh processes: nothing compiled
before the fork, the trace started as torch's import would have; ``env`` fresh), on
copies of the session's real cache: ``replay`` (a hit, a Dynamo
recompile on a branch, a config change, a dtype change, a first compile, a
guard miss on a mark_dynamic range, a bypass, a training step with backward, a hit
whose key only Dynamo's guard ties to the value of a bool the code reads),
``suppressed`` (the same hits with torch patched so that a hit installs no
guard), ``ranks`` (two gloo ranks, one trace file each) and ``eager`` (Dynamo
without Inductor: nothing looked up). Each process also records what torch's
``find_guarded_entry`` did (``tests.harness.oracle``'s recorder): the ground truth.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import run_fxcache

pytestmark = pytest.mark.torch


def _cli_explain(cache: Path, trace: Path, *extra: str) -> dict[str, Any]:
    """``fxcache explain --json`` in a fresh process (no torch in it: blocked)."""
    proc = run_fxcache("--cache-dir", str(cache), "explain", "--json", "--no-record", str(trace), *extra,
                       block_torch=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _explain(cache: Path, trace: Path) -> dict[str, Any]:
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.trace.explain import explain
    from fxcache_core.trace.run import read_run

    return explain(read_run(trace), Catalog(scan_cache(cache))).to_json()


@builder("traced", needs=("real_cache",), order=5)
def _traced() -> dict[str, Any]:
    from tests.harness.background import build_dir
    from tests.harness.traced import traced_ranks, traced_subprocess

    base = build_dir("traced")
    runs: dict[str, Any] = {}
    for plan in ("replay", "suppressed", "ranks", "eager", "env"):
        cache = base / plan / "cache"
        shutil.copytree(prebuilt("real_cache").root, cache, symlinks=True)
        runs[plan] = {"cache": cache, "trace": base / plan / "trace"}
    for plan in ("replay", "suppressed", "eager", "env", "ranks"):  # one build thread: one at a time
        r = runs[plan]
        if plan == "ranks":
            r["torch"] = traced_ranks(r["cache"], r["trace"], plan)
        else:
            r["torch"] = traced_subprocess(r["cache"], r["trace"], plan, suppress=plan == "suppressed")
    return runs


@pytest.fixture(scope="session")
def traced() -> dict[str, Any]:
    """plan -> {"cache", "trace", "torch" (the recorder's JSON; a list per rank for ``ranks``),
    "explain" (``fxcache explain --json``, against the cache as the run left it)}."""
    runs = prebuilt("traced")
    for r in runs.values():
        for t in r["torch"] if isinstance(r["torch"], list) else [r["torch"]]:
            assert t["errors"] == {}, t["errors"]
        if "explain" not in r:
            r["explain"] = _cli_explain(r["cache"], r["trace"])
    return runs


def _agree(ours: list[dict[str, Any]], torch_lookups: list[dict[str, Any]],
           writes: list[dict[str, Any]]) -> None:
    """explain's lookups (bypasses aside: torch makes no lookup for them) are torch's:
    same caches, keys and states in the same order; a hit loads torch's entry; a
    guard miss tried torch's candidates and each failed; a new key had none; a
    miss wrote the entry torch wrote."""
    mine = [x for x in ours if x["state"] != "bypass"]
    assert [(x["cache"], x["key"]) for x in mine] == [(t["kind"], t["key"]) for t in torch_lookups]
    for n, (x, t) in enumerate(zip(mine, torch_lookups, strict=True)):
        assert x["for_aot"] == (t["mode"] == "exact"), (x, t)
        if x["cause"] == "fx-entry-missing":
            # torch's lookup found the entry; an FX entry it loads was gone: a miss, it compiled.
            assert t["hit"] and x["entry"] == t["hit"] and x["state"] == "miss", (x, t)
            assert mine[n + 1]["for_aot"] and torch_lookups[n + 1]["hit"] is None
            continue
        want_cause = {"hit": "hit", "full_miss": "new-key", "guard_miss": "guard-miss"}[t["status"]]
        assert (x["state"], x["cause"]) == ("hit" if t["hit"] else "miss", want_cause), (x, t)
        if t["hit"]:
            assert x["entry"] == t["hit"], (x, t)
        elif t["status"] == "guard_miss":
            assert [f["entry"] for f in x["failed"]] == t["candidates"], (x, t)
            if x["for_aot"]:  # looked up by the exact string, not by evaluating guards
                assert all(f["status"] == "differs" for f in x["failed"]), x
            else:
                assert all(f["status"] in ("fail", "error") and f["clause"] for f in x["failed"]), x
        else:
            assert t["candidates"] == [] and x["failed"] == []
        if not t["hit"] and not x["for_aot"]:
            assert x["wrote"] in {w["entry"] for w in writes if w["key"] == x["key"]}, (x, writes)


def _by_step(run: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """explain's non-bypass lookups grouped by the recorder's step (same order)."""
    out: dict[str, list[dict[str, Any]]] = {}
    mine = [x for x in run["explain"]["lookups"] if x["state"] != "bypass"]
    for x, t in zip(mine, run["torch"]["lookups"], strict=True):
        out.setdefault(t["step"], []).append(x)
    return out


@pytest.mark.parametrize("plan", ["replay", "suppressed"])
def test_explain_agrees_with_torchs_own_lookups(traced, plan):
    run = traced[plan]
    _agree(run["explain"]["lookups"], run["torch"]["lookups"], run["torch"]["writes"])


def test_each_rank_has_its_file_and_its_lookups_agree_with_that_ranks_torch(traced):
    run = traced["ranks"]
    files = run["explain"]["trace"]["files"]
    assert sorted(f["rank"] for f in files) == [0, 1]
    assert all(Path(f["path"]).name.startswith(f"dedicated_log_torch_trace_rank_{f['rank']}_") for f in files)
    for rank, t in enumerate(run["torch"]):
        _agree([x for x in run["explain"]["lookups"] if x["rank"] == rank], t["lookups"], t["writes"])
    assert [x["rank"] for x in run["explain"]["lookups"]] == sorted(x["rank"] for x in run["explain"]["lookups"])


def test_a_hit_names_the_entry_its_compile_time_and_passes_the_installed_guards_check(traced):
    steps = _by_step(traced["replay"])
    for x in steps["hit"] + steps["train"]:
        assert x["cause"] == "hit" and x["entry"]
        assert x["seconds"] and x["seconds"] > 0
        assert x["guards_check"]["status"] == "passed", x["guards_check"]
        assert x["guards_check"]["clauses"], "the entries of these keys have guards"
        assert all(c["status"] == "installed" for c in x["guards_check"]["clauses"])
    aot = steps["train"][0]
    assert aot["cache"] == "aotautograd" and [x["graph"] for x in steps["train"][1:]] == ["forward", "backward"]
    assert all(x["for_aot"] for x in steps["train"][1:])


def test_a_hit_that_installs_no_guard_fails_the_check_with_a_call_that_would_run_the_wrong_graph(traced):
    ok = {(x["cache"], x["key"]): x for x in _by_step(traced["replay"])["train"]}
    for x in _by_step(traced["suppressed"])["train"]:
        assert x["cause"] == "hit"
        check = x["guards_check"]
        assert check["status"] == "failed", check
        missing = [c for c in check["clauses"] if c["status"] == "missing"]
        assert missing
        for c in missing:
            # A witness: sizes that pass every guard Dynamo installed but fail the entry's clause.
            assert c["witness"] and c["as_sources"]
            from fxcache_core.guards.expr import parse_guards

            clause = parse_guards(c["clause"])
            t = {v["source"]: k for k, v in x["values"].items()}
            env = {t[s]: v for s, v in c["witness"].items() if s in t}
            assert not clause.holds(env), (c, env)
        # The same entry passes where torch installed its guards: the suppression is what fails it.
        assert ok[(x["cache"], x["key"])]["guards_check"]["status"] == "passed"
        assert ok[(x["cache"], x["key"])]["entry"] == x["entry"]


def test_a_dynamo_recompile_on_a_branch_is_a_new_graph_with_the_guard_that_failed(traced):
    for x in _by_step(traced["replay"])["recompile"]:
        assert x["cause"] == "new-key" and x["compile_id"].endswith("/1")
        assert x["nearest"] is not None and "gm" in x["nearest"]["differs"]
        assert "x.size()[0] <= 8" in x["recompile_reason"]
    fx = _by_step(traced["replay"])["recompile"][1]
    gm = next(d for d in fx["nearest"]["details"] if d["name"] == "gm")
    assert "relu" in gm["this"] and "sigmoid" in gm["this"], "a unified diff of the two graphs"


def test_a_config_change_names_the_config_component(traced):
    for x in _by_step(traced["replay"])["config"]:
        assert x["cause"] == "new-key"
        assert x["nearest"]["differs"] == ["inductor_config[size_asserts]"], x["nearest"]
        d = x["nearest"]["details"][0]
        assert (d["this"], d["nearest"]) == ("False", "True")


def test_a_dtype_change_names_the_input_with_both_values(traced):
    steps = _by_step(traced["replay"])
    for x in steps["dtype"]:
        assert x["cause"] == "new-key"
        assert x["nearest"]["key"] in {y["key"] for y in steps["hit"]}
        assert x["nearest"]["differs"] and all(n.startswith("example_inputs[") for n in x["nearest"]["differs"])
        d = x["nearest"]["details"][0]
        assert d["this"].startswith("float64[") and d["nearest"].startswith("float32[")


def test_an_aotautograd_hit_whose_fx_entry_is_gone_is_a_miss_that_names_the_entry_torch_found(traced):
    aot, fx_exact, fx_again = _by_step(traced["replay"])["fx_gone"]
    assert (aot["cache"], aot["state"], aot["cause"]) == ("aotautograd", "miss", "fx-entry-missing")
    assert aot["entry"] and aot["wrote"] and aot["wrote"] != aot["entry"]
    assert fx_exact["for_aot"] and fx_exact["cause"] == "guard-miss"
    assert fx_exact["failed"] and all("not the one the AOTAutograd entry recorded" in f["error"]
                                      for f in fx_exact["failed"])
    assert not fx_again["for_aot"] and fx_again["cause"] == "guard-miss" and fx_again["wrote"]
    s = traced["replay"]["explain"]["summary"]["aotautograd"]
    assert s["misses"]["fx-entry-missing"] == 1


def test_a_first_compile_has_no_near_key(traced):
    for x in _by_step(traced["replay"])["first"]:
        assert x["cause"] == "new-key" and x["nearest"] is None and x["first_compile"]
        assert x["function"] == "fresh_graph"


def test_a_guard_miss_on_a_mark_dynamic_range_names_the_clause_and_the_calls_values(traced):
    for x in _by_step(traced["replay"])["guard_miss"]:
        assert x["cause"] == "guard-miss"
        (f,) = x["failed"]
        assert f["clause"] == "L['t0'] <= 64"
        assert f["values"]["t0"] == {"symbol": "s77", "source": "L['x'].size()[0]", "value": 100}


def test_bypasses_carry_torchs_reason_grouped_in_the_summary(traced):
    ex = traced["replay"]["explain"]
    bypasses = [x for x in ex["lookups"] if x["state"] == "bypass"]
    assert {x["cache"] for x in bypasses} == {"aotautograd", "fxgraph"}
    assert all(x["bypass_reason"] == "Unsupported post grad custom pass" for x in bypasses)
    for cache in ("aotautograd", "fxgraph"):
        s = ex["summary"][cache]
        assert s["bypasses"] == {"Unsupported post grad custom pass": 1}
        mine = [x for x in ex["lookups"] if x["cache"] == cache]
        assert s["lookups"] == len(mine)
        assert s["hits"] == sum(x["state"] == "hit" for x in mine)
        assert s["misses"]["new-key"] == sum(x["cause"] == "new-key" for x in mine)
        assert s["misses"]["guard-miss"] == {"aotautograd": 1, "fxgraph": 3}[cache]
        assert s["seconds_saved"] == pytest.approx(sum(x["seconds"] for x in mine if x["state"] == "hit"), abs=1e-3)


def test_the_nearest_key_existed_before_the_lookup_and_is_never_the_key_it_wrote(traced):
    from fxcache_core.cache.scan import scan_cache

    run = traced["replay"]
    scan = scan_cache(run["cache"])
    checked = 0
    for x in run["explain"]["lookups"]:
        n = x["nearest"]
        if n is None:
            continue
        assert n["key"] != x["key"]
        assert any(e.mtime < x["time"] for e in scan.key(n["key"]).entries)
        checked += 1
    assert checked >= 6


def test_a_run_that_compiled_nothing_has_no_lookups(traced):
    ex = traced["eager"]["explain"]
    assert ex["lookups"] == [] and "aotautograd" not in ex["summary"] and "fxgraph" not in ex["summary"]
    assert ex["summary"]["verdict"].startswith("no cache lookup") and ex["summary"]["causes"] == []
    assert ex["trace"]["compiles"] >= 1


def _rewrite(path: Path, name: str, change, rename: str | None = None) -> None:
    """Rewrite the payload of the first ``name`` artifact in a trace file (md5 kept
    right), and rename the artifact to ``rename`` if given."""
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        if f'"name": "{name}"' in line:
            j = i + 1
            while j < len(lines) and lines[j].startswith("\t"):
                j += 1
            payload = json.loads("\n".join(ln[1:] for ln in lines[i + 1:j]))
            text = json.dumps(change(payload))
            head = line.replace(line.split('"has_payload": "')[1].split('"')[0],
                                hashlib.md5(text.encode()).hexdigest())
            if rename is not None:
                head = head.replace(f'"name": "{name}"', f'"name": "{rename}"')
            lines[i:j] = [head, "\t" + text]
            path.write_text("\n".join(lines))
            return
    raise AssertionError(f"no {name} in {path}")


def test_a_trace_from_another_torch_names_torch_version_against_this_cache(traced, tmp_path):
    # Synthetic: CI has one machine. The hit's FX record is rewritten into the miss another
    # torch build would log for the same graph (another torch_version component, so another key).
    run = traced["replay"]
    trace = tmp_path / "trace"
    shutil.copytree(run["trace"], trace)
    (f,) = trace.iterdir()

    def other_torch(p: dict[str, Any]) -> dict[str, Any]:
        p["components"] = [("[" + "a" * 51 + "] torch_version: " + c.split(": ", 1)[1])
                           if "] torch_version: " in c else c for c in p["components"]]
        return {**p, "cache_state": "miss", "cache_status_detailed": "full_miss", "key": "f" + "b" * 51,
                "time_taken_ns": 1_000_000_000}

    _rewrite(f, "fx_graph_cache_hit", other_torch, rename="fx_graph_cache_miss")
    x = _explain(run["cache"], trace)["lookups"][1]
    assert (x["cache"], x["cause"]) == ("fxgraph", "new-key")
    assert x["nearest"]["key"] == _by_step(run)["hit"][1]["key"]
    assert x["nearest"]["differs"] == ["torch_version"]


def test_a_trace_cut_short_by_a_killed_run_is_explained_up_to_the_cut(traced, tmp_path):
    run = traced["replay"]
    (src,) = run["trace"].iterdir()
    data = src.read_bytes()
    cut = data.index(b'"name": "aotautograd_cache_miss"')  # the recompile's AOT record...
    cut = data.index(b"\n\t", cut) + 200  # ... cut inside the FX components that follow
    cut = data.index(b'"name": "fx_graph_cache_miss"', cut) + 500
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / src.name).write_bytes(data[:cut])
    ex = _explain(run["cache"], trace)
    full = run["explain"]["lookups"]
    assert [(x["key"], x["cause"]) for x in ex["lookups"]] == [(x["key"], x["cause"]) for x in full[:len(ex["lookups"])]]
    assert 2 <= len(ex["lookups"]) < len(full)
    (f,) = ex["trace"]["files"]
    assert f["truncated"] and "killed" in f["truncated"]
    assert any("killed" in n for n in ex["notes"])


def test_a_dir_that_is_not_a_trace_is_one_line_and_exit_2(traced, tmp_path):
    from fxcache_core.errors import FxcacheError
    from fxcache_core.trace.run import read_run

    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("hello\n")
    for bad in (junk, traced["replay"]["cache"], junk / "notes.txt", tmp_path / "missing"):
        with pytest.raises(FxcacheError):
            read_run(bad)
    (junk / "dedicated_log_torch_trace_x.log").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    with pytest.raises(FxcacheError, match="not a TORCH_TRACE file"):
        read_run(junk)


def test_traces_record_last_use_and_compile_cost_for_gc_outside_the_cache(traced, tmp_path, monkeypatch):
    import os

    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy
    from fxcache_core.state.usage import UsageStore, usage_path
    from fxcache_core.trace.explain import explain
    from fxcache_core.trace.run import read_run

    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    run = traced["replay"]
    cache = tmp_path / "cache"
    shutil.copytree(run["cache"], cache)
    before = sorted(p.name for p in cache.rglob("*"))
    report = explain(read_run(run["trace"]), Catalog(scan_cache(cache)))
    store = UsageStore(usage_path(cache))
    assert store.record(report) > 0
    assert store.record(report) > 0  # a second time: use times kept, hits not counted again
    facts = store.load()
    assert sorted(p.name for p in cache.rglob("*")) == before  # nothing written in the cache
    hits = [x for x in report.lookups if x.lookup.state == "hit"]
    for x in hits:
        f = facts[x.entry]
        assert f.hits == 1 and f.last_use == pytest.approx(x.lookup.time)
    for x in report.lookups:
        if x.lookup.state == "miss" and x.lookup.cache == "fxgraph" and not x.lookup.for_aot:
            assert facts[x.wrote].compile_s == pytest.approx(x.lookup.seconds_taken)
    # gc: an entry hit in the trace counts as used then, though its file looks a year old.
    now = max(x.lookup.time for x in hits) + 3600
    year = now - 365 * 86400
    for p in cache.rglob("*"):
        if p.is_file():
            os.utime(p, (year, year))
    use = tuple((name, f.last_use or 0.0, f.compile_s) for name, f in facts.items())
    plan = plan_gc(Catalog(scan_cache(cache)), GcPolicy(older_than_s=7 * 86400, now=now, trace_use=use))
    gone = {r.entry for r in plan.removals}
    assert gone and not gone & {x.entry for x in hits}
    assert "last hit in a trace" in plan.last_use


def test_a_traced_call_is_matched_against_the_cache_as_torch_looked_it_up(traced, real_cache):
    # The traced calls' inputs, matched against the cache as it was before the run
    # (the session's real cache: the runs worked on copies), give torch's verdicts.
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.lookup.match import match
    from fxcache_core.reasons import code_of
    from fxcache_core.trace.call import call_inputs
    from fxcache_core.trace.run import read_run

    run = traced["replay"]
    trace = read_run(run["trace"])
    cat = Catalog(scan_cache(real_cache.root))
    steps = _by_step(run)
    for step in ("hit", "train", "guard_miss"):
        x = steps[step][0]
        call = call_inputs(trace, x["compile"])
        assert call.function == x["function"]
        # The trace's dtypes (describe_tensor) come along: matched, not assumed.
        tensors = [v for v in call.inputs.values() if hasattr(v, "shape")]
        assert tensors and all(t.dtype in ("float32", "int64") for t in tensors), call.inputs
        got = {m.key.key: m for m in match(cat, call.inputs, function=call.function, mode=call.mode).results}
        for y in steps[step]:
            m = got[y["key"]]
            if y["state"] == "miss" and m.status == "undecided":
                # A call that fails a bound of every entry: torch traces again, and the cache
                # does not show whether that gives this key's graph (lookup/retrace.py).
                assert "bound-failed" in {code_of(r) for r in m.uncertain}, (step, y["key"], m.uncertain)
                continue
            assert m.status == y["state"], (step, y["key"], m.status, m.reasons)
            if y["state"] == "hit" and y["for_aot"]:  # loaded by the AOTAutograd hit
                assert (y["key"], y["entry"]) in {(ld.key, ld.entry) for mm in got.values() for ld in mm.loads}
            elif y["state"] == "hit":
                assert m.hit.name == y["entry"]
    with pytest.raises(Exception, match="used 3 times|used [0-9]+ times"):
        call_inputs(trace, "0/0")


def test_the_command_relates_the_trace_to_the_cache_the_run_wrote_to_by_default(traced):
    import os
    import subprocess
    import sys

    from tests.helpers import REPO_ROOT

    run = traced["replay"]
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    proc = subprocess.run([sys.executable, "-m", "fxcache_cli", "explain", "--json", "--no-record",
                           str(run["trace"])], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert Path(json.loads(proc.stdout)["cache_dir"]) == run["cache"]


def test_the_command_says_each_cause_in_words_and_sums_up_like_ccache(traced):
    run = traced["replay"]
    proc = run_fxcache("--cache-dir", str(run["cache"]), "explain", "--no-record", str(run["trace"]))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    for phrase in ("HIT", "new key", "guard miss", "BYPASS", "first compile of this graph",
                   "TORCHINDUCTOR_SIZE_ASSERTS", "fails x.size(0) <= 64  with x.size(0) = 100  (L['t0'] <= 64; t0 = 100 (s77, L['x'].size()[0]))",
                   "recompiled: 0/0:", "guards installed", "Unsupported post grad custom pass", "lookups", "hits",
                   "compile saved by hits"):
        assert phrase in text, phrase
    bad = run_fxcache("--cache-dir", str(traced["suppressed"]["cache"]), "explain", "--no-record",
                      str(traced["suppressed"]["trace"]))
    assert "guard not installed" in bad.stdout and "hits missing a guard" in bad.stdout


def test_not_a_trace_is_one_line_on_stderr_and_exit_2(traced, tmp_path):
    (tmp_path / "x.txt").write_text("hello")
    for bad in (tmp_path, tmp_path / "x.txt", tmp_path / "missing"):
        proc = run_fxcache("explain", str(bad), block_torch=True)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("fxcache: error:"), proc.stderr


def test_match_from_trace_takes_the_traced_calls_inputs(traced, real_cache):
    run = traced["replay"]
    x = _by_step(run)["guard_miss"][0]
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--json", "--from-trace", str(run["trace"]),
                       "--compile", x["compile"], block_torch=True)
    got = json.loads(proc.stdout)
    # a guard miss in torch; the call fails a bound of every entry, whose check the cache does not show
    assert proc.returncode == got["verdicts"]["exit_code"] == 3, proc.stderr
    # The traced dtype comes along (describe_tensor): nothing assumed.
    assert got["inputs"] == {"L['x']": "[100,3]:stride=[3,1]:mark_dynamic=[0]:dtype=float32"}
    assert all(r["assumed"] == {} for r in got["results"])
    by_key = {r["key"]: r for r in got["results"]}
    assert by_key[x["key"]]["status"] == "undecided" and by_key[x["key"]]["uncertain_codes"] == ["bound-failed"]
    proc = run_fxcache("--cache-dir", str(real_cache.root), "match", "--from-trace", str(run["trace"]),
                       "--compile", "0/0", block_torch=True)
    assert proc.returncode == 2 and "0/0#1" in proc.stderr


def test_gc_ranks_by_the_hits_explain_recorded_and_says_so_in_the_plan(traced, tmp_path):
    import os

    run = traced["replay"]
    cache = tmp_path / "cache"
    shutil.copytree(run["cache"], cache)
    env = {"FXCACHE_INDEX_DIR": str(tmp_path / "idx")}
    hits = {x["entry"] for x in run["explain"]["lookups"] if x["state"] == "hit"}
    proc = run_fxcache("--cache-dir", str(cache), "explain", str(run["trace"]), env=env)  # records
    assert proc.returncode == 0, proc.stderr
    now = max(x["time"] for x in run["explain"]["lookups"])
    for p in cache.rglob("*"):  # every file a year old, as on a copy or with noatime
        if p.is_file():
            os.utime(p, (now - 365 * 86400, now - 365 * 86400))
    # --older-than 7d counts from now: the trace's hits are at most minutes old.
    proc = run_fxcache("--cache-dir", str(cache), "gc", "--older-than", "7d", "--dry-run", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["last_use"] == "max(atime, mtime, last hit in a trace)"
    gone = {r["entry"] for r in plan["removals"]}
    assert gone and not gone & hits
    proc = run_fxcache("--cache-dir", str(cache), "gc", "--keep-costly", "30s", env=env)
    assert proc.returncode == 2 and "--max-size" in proc.stderr


def test_a_decorated_forward_has_one_name_in_explain_ls_and_match_and_its_hit_exits_0(traced):
    # torch.compile(module) whose forward a functools.wraps decorator wraps: Dynamo compiles
    # the decorator's `wrapper`; every command names the module's forward instead.
    run = traced["replay"]
    mine = _by_step(run)["decorated"]
    names = {(x["function"], x["compiled_from"]) for x in mine}
    ((function, label),) = names
    assert function == "DecoratedNet.forward" and label.startswith("DecoratedNet.forward (traced.py:"), names
    assert [x["cause"] for x in mine] == ["new-key", "new-key"]
    d = ["--cache-dir", str(run["cache"])]
    text = run_fxcache(*d, "explain", "--no-record", str(run["trace"])).stdout
    assert f"] {label}\n" in text and "] wrapper (" not in text, text
    keys = {x["key"] for x in mine}
    rows = [r for r in json.loads(run_fxcache(*d, "ls", "--json").stdout) if r["key"] in keys]
    assert len(rows) == 2 and {(r["function"], r["compiled_from"]) for r in rows} == names
    groups = json.loads(run_fxcache(*d, "ls", "--by", "function", "--json").stdout)
    (g,) = [g for g in groups if keys & {k["key"] for k in g["keys"]}]
    assert (g["function"], g["compiled_from"]) == names.pop() and {k["key"] for k in g["keys"]} == keys
    for fn in ("DecoratedNet", "DecoratedNet.forward", "wrapper", label):
        r = run_fxcache(*d, "match", "--json", "--fn", fn, "--shapes", "x=[6,5]", "--dynamic", "none")
        assert r.returncode == 0, (fn, r.stdout[-2000:], r.stderr)
        v = json.loads(r.stdout)["verdicts"]
        assert [(f["function"], f["status"]) for f in v["functions"]] == [(function, "hit")], (fn, v)


def test_a_clean_hit_rebuilt_nothing_and_saved_what_torch_recorded(traced):
    hits = [x for x in traced["replay"]["explain"]["lookups"] if x["state"] == "hit"]
    assert hits
    for x in hits:
        assert x["rebuilt"] is None and x["seconds_saved"] == pytest.approx(x["seconds"], abs=1e-3)


def test_a_guard_miss_on_a_copy_with_fresh_mtimes_lists_only_the_entries_that_existed(traced, tmp_path):
    """``cp -r`` keeps no mtime: the entry the miss wrote looks as old as the others.
    Its guards hold for the call, so it was written later: not among the failed."""
    run = traced["replay"]
    cache = tmp_path / "cache"
    shutil.copytree(run["cache"], cache)
    now = time.time() + 5
    for p in cache.rglob("*"):
        os.utime(p, (now, now), follow_symlinks=False)
    ex = _cli_explain(cache, run["trace"])
    mine = [x for x in ex["lookups"] if x["state"] != "bypass"]
    by_torch = list(zip(mine, run["torch"]["lookups"], strict=True))
    misses = [(x, t) for x, t in by_torch if t["status"] == "guard_miss" and t["step"] == "guard_miss"]
    assert misses
    for x, t in misses:
        assert [f["entry"] for f in x["failed"]] == t["candidates"], (x, t)
        assert x["wrote"] not in {f["entry"] for f in x["failed"]}
        if x["cache"] == "fxgraph" and not x["for_aot"]:
            (f,) = x["failed"]
            assert f["user_clause"] == "x.size(0) <= 64" and f["user_values"] == {"x.size(0)": 100}
            assert "written-later" in x["note_codes"]


def test_a_runs_trace_decides_a_python_argument_the_cache_alone_cannot(traced, real_cache, tmp_path):
    """clip_default's key (tests/harness/cases_args.py), built with the default: the cache
    alone cannot say which way its `if clip:` went, and match is undecided
    (tests/torch/test_arguments.py). The replay's ``flags`` step called it with the default
    and hit that key; Dynamo's guard L['clip'] == False in the trace decides: given as the
    call (--from-trace), or explained into the usage store for later matches."""
    from tests.helpers import match_args_for

    run = traced["replay"]
    (aot,) = [lk for lk in run["torch"]["lookups"] if lk["step"] == "flags" and lk["kind"] == "aotautograd"]
    assert aot["hit"], aot
    (compile_id,) = {x["compile"] for x in _by_step(run)["flags"]}  # as --compile names it
    root = tmp_path / "cache"
    shutil.copytree(real_cache.root, root, symlinks=True)
    env = {"FXCACHE_INDEX_DIR": str(tmp_path / "index")}

    proc = run_fxcache("--cache-dir", str(root), "match", "--json", "--from-trace", str(run["trace"]),
                       "--compile", compile_id, env=env)
    body = json.loads(proc.stdout)
    (fv,) = body["verdicts"]["functions"]
    assert proc.returncode == 0 and (fv["key"], fv["entry"]) == (aot["key"], aot["hit"]), fv
    assert body["inputs"]["L['clip']"] == "False"
    (clip,) = [p for p in fv["params"] if p["name"] == "clip"]
    assert (clip["how"], clip["status"]) == ("trace-guard", "accounted"), clip

    args = ["match", "--json", "--fn", "clip_default", *match_args_for("clip_default", [[6, 5]])]
    before = run_fxcache("--cache-dir", str(root), *args, env=env)
    assert before.returncode == 3, before.stdout  # the cache alone: undecided
    assert run_fxcache("--cache-dir", str(root), "explain", str(run["trace"]), env=env).returncode == 0
    after = run_fxcache("--cache-dir", str(root), *args, env=env)
    (fv,) = json.loads(after.stdout)["verdicts"]["functions"]
    assert after.returncode == 0 and (fv["key"], fv["entry"]) == (aot["key"], aot["hit"]), fv


def test_the_builds_trace_decides_a_kwargs_call_that_passes_its_guards(traced, real_cache, tmp_path):
    """kw_built_with (built with flag=True through **kwargs) and kw_built_without (built
    with no keyword): the cache alone leaves every call undecided
    (tests/torch/test_star_arguments.py). The replay's ``kwargs`` step called each as built; its
    trace, explained, records Dynamo's guards on L['kwargs'] for their keys. A call that
    passes them is decided as torch decides it (a hit on the key); one that fails them
    stays undecided, naming the guard: torch traces again, and whether that graph is the
    key's the guards cannot tell. kw_tensor: a tensor through a ``**kw`` dict not named
    ``kwargs`` is the key's input ``L['kw']['bias']``, named by the call's ``bias=``."""
    from tests.harness.oracle import call_id
    from tests.harness.recorded import answers_for
    from tests.helpers import match_args_for
    from tests.torch.test_star_arguments import KW_DICT_CALLS

    answers = answers_for(real_cache.summary, "real")
    run = traced["replay"]
    root = tmp_path / "cache"
    shutil.copytree(real_cache.root, root, symlinks=True)
    env = {"FXCACHE_INDEX_DIR": str(tmp_path / "index")}

    def match(case: str, shapes: list) -> tuple[int, dict, dict]:
        proc = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", case,
                           *match_args_for(case, shapes), env=env)
        (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
        aot = [lk for lk in answers[call_id(case, shapes)]["lookups"] if lk["kind"] == "aotautograd"]
        return proc.returncode, fv, aot[0] if aot else {"hit": None}

    # kw_tensor(x, **kw) reads kw['bias'], built with bias=[5] (dynamic=False): the key's input
    # L['kw']['bias'] is what a call's bias=[...] names, and its sizes decide as any input's,
    # from the cache alone and with the trace (whose guards on the dict pass any tensor).
    built, reshaped, renamed = KW_DICT_CALLS
    rc, fv, aot = match(*reshaped)
    assert not aot["hit"] and rc == 1 and fv["status"] == "new-graph", fv
    assert run_fxcache("--cache-dir", str(root), "explain", str(run["trace"]), env=env).returncode == 0
    rc, fv, aot = match(*built)
    assert aot["hit"] and rc == 0 and (fv["key"], fv["entry"]) == (aot["key"], aot["hit"]), fv
    rc, fv, aot = match(*reshaped)
    assert not aot["hit"] and rc == 1 and fv["status"] == "new-graph", fv
    rc, fv, aot = match(*renamed)  # torch raises (kw['bias'] is read): no lookup
    assert answers[call_id(*renamed)]["error"]["type"] == "KeyError" and not aot["hit"]
    assert rc == 3 and fv["why_code"] == "kwargs-differs-from-record", fv
    for case, shapes, decided in [("kw_built_with", [[6, 5], {"flag": True}], True),
                                  ("kw_built_without", [[6, 5]], True),
                                  ("kw_built_with", [[6, 5]], False),
                                  ("kw_built_without", [[6, 5], {"flag": True}], False)]:
        proc = run_fxcache("--cache-dir", str(root), "match", "--json", "--fn", case,
                           *match_args_for(case, shapes), env=env)
        (fv,) = json.loads(proc.stdout)["verdicts"]["functions"]
        (aot,) = [lk for lk in answers[call_id(case, shapes)]["lookups"] if lk["kind"] == "aotautograd"]
        if decided:
            assert aot["hit"] and proc.returncode == 0 and (fv["key"], fv["entry"]) == (aot["key"], aot["hit"]), fv
            kw = [p for p in fv["params"] if p["name"] in ("**kwargs", "flag")]
            assert kw and {(p["status"], p["how"]) for p in kw} == {("accounted", "trace-guard")}, fv["params"]
        else:
            assert not aot["hit"], aot  # torch: another graph
            assert proc.returncode == 3 and fv["why_code"] == "kwargs-differs-from-record", fv
