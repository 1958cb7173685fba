"""The library's defences against a hostile trace or index dir, in-process (issue 23).

Synthetic traces (tests/synth_trace.py) and hand-made SQLite files: no torch
compile. The commands themselves, measured in a child process, are in
tests/cli/test_trace_hostile.py; these pin the layer each defence lives in.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from fxcache_core.errors import ShapeSpecError
from fxcache_core.guards import in_force_code
from fxcache_core.guards.in_force import CheckBudget, check_installed
from fxcache_core.state.index import Index
from fxcache_core.state.own_db import APPLICATION_ID, open_own_db
from fxcache_core.state.usage import UsageStore
from fxcache_core.trace.call import call_inputs
from fxcache_core.trace.reader import TraceError, bounded_json, open_trace_file
from fxcache_core.trace.run import read_run
from tests.synth_trace import clock, fx_hit, start, symbol, tensor, write_trace

X0 = "L['x'].size()[0]"


@pytest.fixture
def alarm():
    """Fail, never hang: SIGALRM after 10 s."""
    def hung(*_):
        raise TimeoutError("hung")
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# --- the trace ---------------------------------------------------------------------------


def test_numbers_past_a_float_or_int64_are_unknown_or_refused(tmp_path):
    huge = int("9" * 400)
    text = (clock() + start() + symbol("s0", "9" * 5000) + symbol("s1", str(2**70), "L['n']")
            + symbol("s2", "3", "L['x'].size()[" + "9" * 5000 + "]")
            + fx_hit(cache_event_time=huge, time_saved_ns=huge) + fx_hit(time_saved_ns=float("inf")))
    run = read_run(write_trace(tmp_path / "t", text))
    assert [s.value for s in run.compiles[0].symbols] == [None, 2**70, 3]
    assert [lk.seconds_saved for lk in run.lookups] == [None, None]
    with pytest.raises(ShapeSpecError, match="out of range"):
        call_inputs(run, "0/0")  # L['n'] = 2**70: what --shapes n=2**70 says
    assert run.find_compile("0/0#" + "9" * 5000) == ()


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, alarm):
    fifo = tmp_path / "dedicated_log_torch_trace_x.log"
    os.mkfifo(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        open_trace_file(fifo)
    with pytest.raises(TraceError, match="not a regular file"):
        read_run(fifo)


def test_json_past_the_value_bound_is_not_parsed():
    assert bounded_json("[" + "[]," * 300_000 + "[]]") is None  # 64 bytes a value once parsed
    assert bounded_json('["' + "," * 300_000 + '"]') == ["," * 300_000]  # commas in a string: one value
    assert bounded_json("9" * 5000) is None and bounded_json("[" * 100_000) is None


def test_describe_tensor_keeps_what_a_call_needs_not_the_record(tmp_path):
    pad = {"stack": [[]] * 1000, "view_func": "x" * 1000}
    run = read_run(write_trace(tmp_path / "t", clock() + start() + tensor("L['x']", [6, 4], [4, 1], **pad)))
    (t,) = run.compiles[0].tensors
    assert (t.source, t.size, t.stride) == ("L['x']", (6, 4), (4, 1))


# --- guards in force ----------------------------------------------------------------------


def test_a_guard_too_deep_to_read_blocks_witnesses_on_the_sizes_it_may_name():
    deep = " + ".join(["1"] * 400) + f" <= {X0}"
    r = check_installed("L['t0'] <= 8", {"t0": X0}, {X0: 5}, [f"2 <= {X0}", deep])
    assert r.status == "undecided" and r.clauses[0].reason.code == "guard-in-force-unread"  # type: ignore[union-attr]
    r = check_installed(" + ".join(["1"] * 400) + " <= L['t0']", {"t0": X0}, {X0: 5}, [f"2 <= {X0}"])
    assert r.clauses[0].status == "undecided"


def test_guards_on_other_sizes_are_never_read_and_change_nothing(monkeypatch):
    seen = []
    real = in_force_code._read_guard.__wrapped__

    def spy(code):
        seen.append(code)
        return real(code)

    monkeypatch.setattr(in_force_code, "_read_guard", spy)
    others = [f"L['y{i}'].size()[0] <= {i + 10}" for i in range(20_000)]
    mine = [f"L['z'].size()[0] == {X0}", "L['z'].size()[0] <= 24", f"2 <= {X0}"]
    t0 = time.process_time()
    r = check_installed("L['t0'] <= 16", {"t0": X0}, {X0: 6, "L['z'].size()[0]": 6}, [*others, *mine])
    assert time.process_time() - t0 < 1.0
    assert sorted(set(seen)) == sorted(mine)  # the closure over X0: z through the equality
    (c,) = r.clauses
    assert c.status == "missing" and c.witness == {X0: 17, "L['z'].size()[0]": 17}, c


def test_the_guards_a_run_reads_are_bounded_across_its_hits():
    codes = [f"{X0} <= {100_000 + i}" for i in range(40)]  # 1,040 characters
    budget = CheckBudget(chars=3000)
    checks = [check_installed(f"L['t0'] <= {8 + i}", {"t0": X0}, {X0: 5}, codes, budget) for i in range(4)]
    assert [c.status for c in checks] == ["failed", "failed", "undecided", "undecided"]
    assert checks[-1].reason.code == "check-budget-spent"  # type: ignore[union-attr]


# --- the usage store and the index ------------------------------------------------------------


SCHEMA = "CREATE TABLE IF NOT EXISTS t (x TEXT);"
LEGACY = (frozenset({"t"}),)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind", ["symlink-to-empty", "symlink-to-db", "dangling", "hardlink", "empty"])
def test_open_own_db_replaces_a_link_and_writes_only_its_own_file(tmp_path, kind):
    own, victim = tmp_path / "index", tmp_path / "victim"
    own.mkdir()
    victim.mkdir()
    path = own / "index-0.sqlite"
    target = victim / "db"
    if kind in ("symlink-to-empty", "hardlink", "empty"):
        target.write_bytes(b"")
    elif kind == "symlink-to-db":
        other = sqlite3.connect(target)
        other.execute("CREATE TABLE mail (body TEXT)")
        other.commit()
        other.close()
    if kind.startswith("symlink") or kind == "dangling":
        path.symlink_to(target)
    elif kind == "hardlink":
        os.link(target, path)
    else:
        path.write_bytes(b"")
    before = {p.name: _sha(p) for p in victim.iterdir()}
    db = open_own_db(path, SCHEMA, LEGACY)
    assert db is not None
    db.execute("INSERT INTO t VALUES ('x')")
    db.commit()
    db.close()
    assert {p.name: _sha(p) for p in victim.iterdir()} == before
    assert not path.is_symlink() and path.stat().st_nlink == 1
    assert sqlite3.connect(path).execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)


def test_open_own_db_refuses_a_database_it_did_not_make_and_keeps_an_older_own_one(tmp_path):
    foreign = tmp_path / "foreign.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE mail (body TEXT)")
    db.commit()
    db.close()
    before = _sha(foreign)
    assert open_own_db(foreign, SCHEMA, LEGACY) is None
    assert Index(foreign).enabled is False and UsageStore(foreign).enabled is False
    assert _sha(foreign) == before
    older = tmp_path / "older.sqlite"  # made by an fxcache before application_id: its own tables
    db = sqlite3.connect(older)
    db.executescript(SCHEMA)
    db.close()
    db = open_own_db(older, SCHEMA, LEGACY)
    assert db is not None and db.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)


def test_usage_rows_fxcache_did_not_write_are_left_out(tmp_path):
    path = tmp_path / "usage.sqlite"
    UsageStore(path).close()
    db = sqlite3.connect(path)
    rows = [("fxgraph", "k", "good", 10.0, 1, 2.5, 5.0), ("fxgraph", "k", "text", "yesterday", 1, None, None),
            ("fxgraph", "k", "cost", None, 0, "slow", None), ("fxgraph", "k", "neg", None, -1, None, None),
            ("fxgraph", "k", "blob", b"\x00", 0, None, None), (b"\x01", "k", "kind", None, 0, None, None)]
    db.executemany("INSERT INTO entry_use VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    store = UsageStore(path)
    assert list(store.load()) == ["good"]
    store.close()
