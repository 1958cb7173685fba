"""Hostile traces and a hostile index dir against explain, match --from-trace and gc (issue 23).

Synthetic on purpose: the traces (tests/synth_trace.py) and caches (tests/synth.py)
hold what an attacker who writes a trace file, or the index dir, can write; no
torch compile can be made to. Each attack runs the command in a fresh process,
measured by a parent process (peak RSS and CPU of the command, from
``RUSAGE_CHILDREN``) under a timeout, and checks the promises of docs/safety.md:
no traceback (one line and exit 2, or the item reported), under
300 MB, CPU under 2 s over the normal case, nothing outside the cache and index
dir changed (checksums of a victim dir before and after), no control character
from the trace written raw, no hang.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.cli_run import Run, run_measured
from tests.synth import fake_key, fx_entry_bytes, write_entry
from tests.synth_trace import (
    artifact,
    clock,
    final_guards,
    fx_hit,
    fx_miss,
    normal,
    rec,
    start,
    symbol,
    tensor,
    write_trace,
)

RSS_LIMIT_KB = 300 * 1024
CPU_OVER_NORMAL_S = 2.0
STALL_S = 30  # a stall detector: these take a second or two

def fxcache(*args: str, env: dict[str, str], pipe_closed: bool = False) -> Run:
    """``fxcache ARGS`` in a fresh process, measured; never waits past STALL_S. A
    ``pipe_closed`` run gets a stdout whose reader is already gone."""
    return run_measured([sys.executable, "-m", "fxcache_cli", *args],
                        env={"FXCACHE_JOBS": "1", "COLUMNS": "200", **env}, timeout=STALL_S,
                        pipe_closed=pipe_closed)


def tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` -> a checksum of what it is (content, link target, dir)."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[str(p)] = "link:" + os.readlink(p)
            elif p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[str(p)] = "dir"
    return out


@pytest.fixture
def env(tmp_path) -> dict:
    """An empty cache dir, an index dir, and a victim dir outside both."""
    cache, index, victim = tmp_path / "cache", tmp_path / "index", tmp_path / "victim"
    for d in (cache, index, victim):
        d.mkdir()
    (victim / "notes.txt").write_text("keep me\n")
    return {"cache": str(cache), "index": index, "victim": victim,
            "env": {"FXCACHE_INDEX_DIR": str(index)}, "tmp": tmp_path}


@pytest.fixture(scope="module")
def normal_cpu(tmp_path_factory) -> float:
    """CPU of explain on a small ordinary trace: what the attacks are measured against."""
    d = write_trace(tmp_path_factory.mktemp("normal") / "trace", normal())
    r = fxcache("explain", str(d), env={"FXCACHE_NO_INDEX": "1"})
    assert r.returncode == 0, r
    return r.cpu


def assert_sane(r: Run, codes: tuple[int, ...] = (0,), normal_cpu: float | None = None) -> None:
    """No traceback, an expected exit code, bounded memory and CPU, no raw control character."""
    assert "Traceback" not in r.stderr, r
    assert r.returncode in codes, r
    assert r.maxrss_kb < RSS_LIMIT_KB, r
    if normal_cpu is not None:
        assert r.cpu < normal_cpu + CPU_OVER_NORMAL_S, (normal_cpu, r)
    for stream in (r.stdout_bytes, r.stderr_bytes):
        bad = {b for b in stream if b < 0x20 and b != 0x0A or b == 0x7F}
        assert not bad, (sorted(bad), r)


def explain(e: dict, trace: Path, *more: str) -> Run:
    return fxcache("--cache-dir", e["cache"], "explain", str(trace), *more, env=e["env"])


# --- 1, 2: numbers -----------------------------------------------------------------


def test_huge_numbers_in_a_trace_are_unknown_values_not_tracebacks(env):
    """Item 1: 400-digit times, a 5000-digit symbol value and size index."""
    huge = int("9" * 400)
    text = (clock() + start() + rec("compilation_metrics", {"co_name": "f", "start_time": huge}, **{
        "frame_id": 0, "frame_compile_id": 0, "attempt": 0})
            + rec("create_symbol", {"symbol": "s0", "val": "9" * 5000, "source": "L['x'].size()[0]"},
                  frame_id=0, frame_compile_id=0, attempt=0)
            + symbol("s1", "5", "L['x'].size()[" + "9" * 5000 + "]")
            + fx_hit(cache_event_time=huge, time_saved_ns=huge) + fx_miss("fK2", time_taken_ns=huge))
    d = write_trace(env["tmp"] / "trace", text)
    for args in ((), ("--json",)):
        r = explain(env, d, *args)
        assert_sane(r)
    assert json.loads(r.stdout)["lookups"][0]["seconds"] is None
    r = fxcache("--cache-dir", env["cache"], "match", "--from-trace", str(d), "--compile", "0/0",
                env=env["env"])
    assert_sane(r, codes=(2,))
    assert "recorded no input" in r.stderr, r


@pytest.mark.parametrize("size,why", [([-5, 4], "cannot be negative"), ([2**70, 4], "out of range")])
def test_from_trace_refuses_the_sizes_shapes_refuses(env, size, why):
    """Item 2: one validation for --inputs and the sizes a trace gives."""
    d = write_trace(env["tmp"] / "trace", clock() + start() + tensor("L['x']", size, [4, 1]) + fx_hit())
    r = fxcache("--cache-dir", env["cache"], "match", "--from-trace", str(d), "--compile", "0/0",
                env=env["env"])
    assert_sane(r, codes=(2,))
    assert "--from-trace" in r.stderr and why in r.stderr and len(r.stderr.splitlines()) == 1, r
    r = fxcache("--cache-dir", env["cache"], "match", "--shapes", f"x=[{size[0]},4]", env=env["env"])
    assert_sane(r, codes=(2,))
    assert "--inputs" in r.stderr and why in r.stderr, r


# --- 3, 4: guards in force ------------------------------------------------------------


def test_deep_guards_in_force_are_unread_not_a_recursion_error(env, normal_cpu):
    """Item 3: a 2 KB sum of 400 ones and a 500-deep attribute chain as final guards."""
    deep = [" + ".join(["1"] * 400) + " <= L['x'].size()[0]", "L['x'].size()[0]" + ".a" * 500 + " == 1"]
    d = write_trace(env["tmp"] / "trace", clock() + start() + symbol() + final_guards(deep) + fx_hit())
    r = explain(env, d, "--json")
    assert_sane(r, normal_cpu=normal_cpu)
    (clause,) = json.loads(r.stdout)["lookups"][0]["guards_check"]["clauses"]
    assert clause["status"] == "undecided" and clause["reason_code"] == "guard-in-force-unread", clause


@pytest.mark.parametrize("n", [20_000, 100_000])
def test_many_guards_in_force_cost_bounded_cpu_and_memory(env, normal_cpu, n):
    """Item 4: 20,000 (0.9 MB) and 100,000 (4.4 MB) final-guard lines on one size."""
    codes = [f"L['x'].size()[0] <= {100000 + i}" for i in range(n)]
    d = write_trace(env["tmp"] / "trace", clock() + start() + symbol() + final_guards(codes) + fx_hit())
    r = explain(env, d)
    assert_sane(r, normal_cpu=normal_cpu)
    assert "guards undecided" in r.stdout and "than fxcache reads" in r.stdout, r


# --- 5: memory ----------------------------------------------------------------------


def test_big_records_are_not_held_whole(env):
    """Item 5: 16 MB of describe_tensor records, each with a 4 KB field nobody reads (1,300
    empty lists: 80 KB each once parsed), and one cache artifact of 2 million components (20 MB)."""
    pad = [[]] * 1300
    tensors = "".join(tensor(f"L['x{i}']", [i, 4], [4, 1], tid=i, stack=pad) for i in range(4000))
    comps = json.dumps({"key": "fBIG", "cache_state": "miss", "cache_status_detailed": "full_miss",
                        "components": ["c"] * 2_000_000})
    big = rec("artifact", {"name": "fx_graph_cache_miss", "encoding": "json"}, comps,
              frame_id=0, frame_compile_id=0, attempt=0)
    d = write_trace(env["tmp"] / "trace", clock() + start() + tensors + big + fx_hit())
    assert sum(f.stat().st_size for f in d.iterdir()) > 30e6  # 16 MB + 20 MB
    r = explain(env, d, "--json")
    assert_sane(r)
    assert [x["key"] for x in json.loads(r.stdout)["lookups"]] == ["fBIG", "fK"], r


# --- 6, 7: file names and kinds ---------------------------------------------------------


def test_a_trace_file_name_that_is_not_utf8_is_recorded(env):
    """Item 6: the usage store fingerprints the file by its name's bytes."""
    d = write_trace(env["tmp"] / "trace", normal(), name=b"dedicated_log_torch_trace_\xff\x1b.log")
    r = explain(env, d)
    assert_sane(r)
    assert "\\xff\\x1b" in r.stdout, r  # the name, shown escaped
    (usage,) = env["index"].glob("usage-*.sqlite")
    assert sqlite3.connect(usage).execute("SELECT count(*) FROM traces").fetchone() == (1,)


def test_a_trace_path_that_is_a_fifo_is_refused_at_once(env):
    """Item 7: opened O_NONBLOCK and checked with fstat, never waited on (the run's timeout)."""
    fifo = env["tmp"] / "fifo"
    os.mkfifo(fifo)
    for args in (("explain", str(fifo)), ("match", "--from-trace", str(fifo), "--compile", "0/0")):
        r = fxcache("--cache-dir", env["cache"], *args, env=env["env"])
        assert_sane(r, codes=(2,))
        assert "not a regular file" in r.stderr, r


# --- 8: forged lines ------------------------------------------------------------------


def test_newlines_in_trace_strings_cannot_forge_report_lines(env):
    """Item 8: function name, file, torch version, recompile and bypass reasons, key."""
    nl = "\n[7/7] FORGED injected_function (/etc/passwd:1)\n"
    text = (clock() + start(fn="f" + nl, filename="/src/m.py" + nl)
            + artifact("torch_version", {"pytorch_version": "2.13" + nl})
            + artifact("recompile_reasons", ["size changed" + nl])
            + fx_hit(key="fK\nfx FORGED fFAKEKEY HIT  saved 99.0 s")
            + artifact("fx_graph_cache_bypass", {"cache_state": "bypass", "cache_bypass_reason": "r" + nl}))
    d = write_trace(env["tmp"] / "trace", text)
    r = explain(env, d)
    assert_sane(r)
    assert not [ln for ln in r.stdout.splitlines() if ln.lstrip().startswith(("[7/7]", "fx FORGED"))], r
    assert r.stdout.count("\\n[7/7] FORGED") >= 3, r
    assert "r [7/7] FORGED injected_function" in r.stdout, r  # a bypass reason is made one line


# --- 9, 10: the usage store and the index -------------------------------------------------


def _store_paths(e: dict) -> tuple[Path, Path]:
    from fxcache_core.state.index import default_index_path

    old = os.environ.get("FXCACHE_INDEX_DIR")
    os.environ["FXCACHE_INDEX_DIR"] = str(e["index"])
    try:
        idx = default_index_path(Path(e["cache"]))
    finally:
        if old is None:
            del os.environ["FXCACHE_INDEX_DIR"]
        else:
            os.environ["FXCACHE_INDEX_DIR"] = old
    assert idx is not None
    return idx, idx.with_name(idx.name.replace("index-", "usage-"))


@pytest.mark.parametrize("target", ["empty", "other-db", "dangling"])
def test_the_usage_store_and_index_never_write_through_a_symlink(env, target):
    """Item 9: usage-<digest>.sqlite and index-<digest>.sqlite as links to files outside."""
    victim = env["victim"]
    if target == "empty":
        (victim / "u").write_bytes(b"")
        (victim / "i").write_bytes(b"")
    elif target == "other-db":
        for name in ("u", "i"):
            db = sqlite3.connect(victim / name)
            db.execute("CREATE TABLE mail (body TEXT)")
            db.commit()
            db.close()
    idx, usage = _store_paths(env)
    usage.symlink_to(victim / "u")
    idx.symlink_to(victim / "i")
    before = tree(victim)
    root = Path(env["cache"])
    key = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(root, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] <= 8", key))
    d = write_trace(env["tmp"] / "trace", normal())
    assert_sane(explain(env, d))
    assert_sane(fxcache("--cache-dir", env["cache"], "ls", env=env["env"]))
    assert tree(victim) == before
    for p in (idx, usage):  # each link replaced by fxcache's own file
        assert not p.is_symlink() and p.is_file()


def test_a_database_fxcache_did_not_make_is_never_written(env):
    """Item 9: another application's database placed (not linked) at the usage store's name."""
    _, usage = _store_paths(env)
    db = sqlite3.connect(usage)
    db.execute("CREATE TABLE mail (body TEXT)")
    db.commit()
    db.close()
    before = hashlib.sha256(usage.read_bytes()).hexdigest()
    assert_sane(explain(env, write_trace(env["tmp"] / "trace", normal())))
    assert hashlib.sha256(usage.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("args", [["--older-than", "1d"], ["--max-size", "1B", "--keep-costly", "1s"]],
                         ids=["older-than", "keep-costly"])
def test_usage_rows_holding_text_are_left_out(env, args):
    """Item 10: a usage-store row whose last_use and compile_s hold text."""
    root = Path(env["cache"])
    key = fake_key(KeyKind.FX_GRAPH, "k")
    entry = write_entry(root, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] <= 8", key))
    os.utime(entry, (1e9, 1e9))
    from fxcache_core.state.usage import UsageStore

    _, usage = _store_paths(env)
    UsageStore(usage).close()  # fxcache's own file, then doctored
    db = sqlite3.connect(usage)
    db.execute("INSERT INTO entry_use VALUES ('fxgraph', ?, ?, 'yesterday', 3, 'slow', 'x')", (key, entry.name))
    db.commit()
    db.close()
    r = fxcache("--cache-dir", env["cache"], "gc", "--dry-run", *args, env=env["env"])
    assert_sane(r, codes=(0, 1))
    assert entry.name[:16] in r.stdout, r  # planned as if no trace had spoken of it


# --- 18, 19: output -------------------------------------------------------------------------


def test_explain_json_is_streamed(env):
    """Item 18: --json holds no more than the text output (10,000 lookups)."""
    lookups = "".join(fx_miss(f"f{i:040d}") for i in range(10_000))
    d = write_trace(env["tmp"] / "trace", clock() + start() + lookups)
    env["env"]["FXCACHE_NO_INDEX"] = "1"
    text, as_json = explain(env, d), explain(env, d, "--json")
    assert_sane(text)
    assert_sane(as_json)
    assert len(json.loads(as_json.stdout)["lookups"]) == 10_000
    # Built whole, the JSON cost 0.9 KB a lookup more (9 MB here).
    assert as_json.maxrss_kb < text.maxrss_kb + 3 * 1024, (text, as_json)


def test_a_reader_gone_before_the_first_write_is_exit_141(env):
    """Item 19: guards, key --all and diff print through rich, whose own handler exits 1."""
    root = Path(env["cache"])
    a, b = fake_key(KeyKind.FX_GRAPH, "a"), fake_key(KeyKind.FX_GRAPH, "b")
    write_entry(root, KeyKind.FX_GRAPH, a, fx_entry_bytes("L['t0'] <= 8", a))
    write_entry(root, KeyKind.FX_GRAPH, b, fx_entry_bytes("L['t0'] <= 9", b))
    for args in (["guards", a], ["key", a, "--all"], ["diff", a, b], ["ls"]):
        r = fxcache("--cache-dir", env["cache"], *args, env=env["env"], pipe_closed=True)
        assert "Traceback" not in r.stderr and r.returncode == 141, (args, r)
