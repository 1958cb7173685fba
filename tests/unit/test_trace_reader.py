"""Reading TORCH_TRACE files (fxcache_core.trace.reader, trace_run) on hand-made traces.

Synthetic on purpose: damaged and cut files, odd layouts, and record orders a
CI run does not produce on demand. Each record is written the way
``TorchLogsFormatter`` writes it (torch/_logging/_internal.py): a glog prefix,
the JSON metadata, ``has_payload`` = md5 of the payload, payload lines after a
tab. Real traces are read in tests/torch/test_explain.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from fxcache_core.errors import FxcacheError
from fxcache_core.trace.reader import TraceError, TraceFileReader, trace_files
from fxcache_core.trace.run import read_run

_PREFIX = "V1201 11:57:15.562000 5039 torch/_dynamo/utils.py:2350] "


def rec(event: str, meta: Any, payload: str | None = None, *, glog: str = _PREFIX, **ctx: Any) -> str:
    """One trace record as torch writes it."""
    obj: dict[str, Any] = {event: meta, **ctx}
    if payload is not None:
        obj["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    text = glog + json.dumps(obj)
    if payload is not None:
        text += "".join(f"\n\t{ln}" for ln in payload.split("\n"))
    return text + "\n"


def clock(ts_us: float) -> str:
    """The chromium event torch logs first: its payload carries an epoch timestamp."""
    return rec("chromium_event", {}, json.dumps({"name": "dynamo", "ts": ts_us, "ph": "B"}, indent=0))


C00 = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}


def cache(name: str, info: dict[str, Any], **ctx: Any) -> str:
    return rec("artifact", {"name": name, "encoding": "json"}, json.dumps(info), **{**C00, **ctx})


def start(fn: str = "f", line: int = 3, **ctx: Any) -> str:
    return (rec("str", ["/src/model.py", 7]) +
            rec("dynamo_start", {"stack": [{"line": 9, "name": "<module>", "filename": 7},
                                           {"line": line, "name": fn, "filename": 7}]}, **{**C00, **ctx}))


def write(tmp: Path, text: str | bytes, name: str = "dedicated_log_torch_trace_ab12.log") -> Path:
    d = tmp / "trace"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def _read(path: Path, keep=lambda e, m: True) -> tuple[list[Any], Any]:
    r = TraceFileReader(path, keep)
    out = list(r)
    return out, r.info


def test_records_payloads_and_interned_strings_are_read(tmp_path):
    p = write(tmp_path, clock(1796126234662000) + start() + cache("aotautograd_cache_miss", {"key": "a1"}))
    recs, info = _read(p)
    assert [r.event for r in recs] == ["chromium_event", "dynamo_start", "artifact"]
    assert json.loads(recs[2].payload) == {"key": "a1"}
    assert str(recs[2].compile) == "0/0" and recs[2].rank is None
    assert info.truncated is None and info.skipped == 0 and info.records == 3


def test_times_come_from_the_files_own_epoch_timestamp_whatever_the_time_zone(tmp_path):
    # The chromium event was logged at 11:57:14.662 local time; its ts says which epoch that is.
    ts = 1796126234.662
    p = write(tmp_path, rec("chromium_event", {}, json.dumps({"ts": ts * 1e6}),
                            glog="V1201 13:57:14.662000 1 a.py:1] ") +
              rec("dynamo_start", {"stack": []}, glog="V1201 13:57:20.000000 1 a.py:1] ", **C00))
    recs, info = _read(p)
    assert info.clock == "trace"
    assert recs[0].time == pytest.approx(ts, abs=1e-3)
    assert recs[1].time == pytest.approx(ts + 5.338, abs=1e-3)


def test_without_an_epoch_timestamp_times_are_local_and_said_so(tmp_path):
    p = write(tmp_path, start())
    _, info = _read(p)
    assert info.clock == "local"


def test_a_last_line_without_newline_is_a_cut_record_dropped_and_reported(tmp_path):
    text = clock(1.7e15) + start() + cache("fx_graph_cache_miss", {"key": "f1", "components": ["x"] * 50})
    p = write(tmp_path, text[:-40])
    recs, info = _read(p)
    assert [r.event for r in recs] == ["chromium_event", "dynamo_start"]
    assert info.truncated and "killed" in info.truncated and "fx_graph_cache_miss" in info.truncated


@pytest.mark.parametrize("kept", [True, False])
def test_a_payload_cut_at_a_line_boundary_fails_its_md5_and_is_reported(tmp_path, kept):
    payload = "\n".join(f"line {i}" for i in range(20))
    text = clock(1.7e15) + rec("dynamo_cpp_guards_str", {}, payload, **C00)
    text = text[: text.index("\tline 12")]  # whole lines, the rest of the payload missing
    p = write(tmp_path, text)
    recs, info = _read(p, keep=(lambda e, m: True) if kept else (lambda e, m: False))
    assert [r.event for r in recs] == ["chromium_event"]
    assert info.truncated and "md5" in info.truncated


def test_damage_in_the_middle_is_skipped_and_counted(tmp_path):
    bad_payload = rec("artifact", {"name": "recompile_reasons", "encoding": "json"}, "reason", **C00)
    bad_payload = bad_payload.replace("\treason", "\treasom")
    text = clock(1.7e15) + "garbage line\n\tstray payload\n" + bad_payload + start()
    recs, info = _read(write(tmp_path, text))
    assert [r.event for r in recs] == ["chromium_event", "dynamo_start"]
    assert info.skipped == 3 and info.truncated is None


def test_not_a_trace_is_a_trace_error(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    with pytest.raises(TraceError, match="no TORCH_TRACE files"):
        trace_files(d)
    (d / "dedicated_log_torch_trace_1.log").write_bytes(b"\x00\x01binary\xff\n")
    with pytest.raises(TraceError, match="not a TORCH_TRACE file"):
        trace_files(d)
    with pytest.raises(TraceError, match="does not exist"):
        trace_files(tmp_path / "nope")
    assert issubclass(TraceError, FxcacheError)


def test_an_empty_trace_file_is_a_run_that_logged_nothing(tmp_path):
    p = write(tmp_path, "")
    run = read_run(p.parent)
    assert run.lookups == () and run.compiles == () and run.files[0].records == 0


def test_an_aotautograd_hit_comes_before_the_fx_loads_torch_logged_first(tmp_path):
    text = (clock(1.7e15) + start() +
            cache("fx_graph_cache_hit", {"key": "f1", "cache_state": "hit", "cache_status_detailed": "hit",
                                         "time_saved_ns": 2e9, "cache_event_time": 1.7e18,
                                         "components": ["[abc] fx_kwargs[is_backward]: False"]}) +
            rec("guard_added_fast", {"expr": "s77 <= 24"}, **C00) +
            cache("aotautograd_cache_hit", {"key": "a1", "cache_state": "hit", "cache_status_detailed": "hit",
                                            "time_saved_ms": 3000.0}) +
            cache("fx_graph_cache_miss", {"key": "f2", "cache_state": "miss",
                                          "cache_status_detailed": "full_miss", "time_taken_ns": 5e8}))
    run = read_run(write(tmp_path, text))
    got = [(x.cache, x.key, x.state, x.for_aot) for x in run.lookups]
    assert got == [("aotautograd", "a1", "hit", False), ("fxgraph", "f1", "hit", True),
                   ("fxgraph", "f2", "miss", False)]
    aot, fx, _ = run.lookups
    assert (aot.seconds_saved, fx.seconds_saved) == (3.0, 2.0) and fx.graph == "forward"
    (c,) = run.compiles
    assert c.function == "f" and c.filename == "/src/model.py" and c.firstlineno == 3
    assert [g.expr for g in c.guards_added if aot.since_line < g.line <= aot.line] == ["s77 <= 24"]


def test_a_compile_id_used_again_after_a_reset_is_another_compile(tmp_path):
    text = (clock(1.7e15) + start("f") + cache("aotautograd_cache_miss", {"key": "a1", "cache_state": "miss"}) +
            start("g") + cache("aotautograd_cache_miss", {"key": "a2", "cache_state": "miss"}))
    run = read_run(write(tmp_path, text))
    assert [c.function for c in run.compiles] == ["f", "g"]
    assert [run.compile_of(x).function for x in run.lookups] == ["f", "g"]


def test_ranks_come_from_records_or_file_names_and_order_the_lookups(tmp_path):
    r1 = clock(1.7e15) + start(rank=1) + cache("aotautograd_cache_miss", {"key": "a1"}, rank=1)
    r0 = clock(1.7e15) + start() + cache("aotautograd_cache_miss", {"key": "a0"})
    write(tmp_path, r1, "dedicated_log_torch_trace_zz.log")
    write(tmp_path, r0, "dedicated_log_torch_trace_rank_0_aa.log")
    run = read_run(tmp_path / "trace")
    assert [(x.rank, x.key) for x in run.lookups] == [(0, "a0"), (1, "a1")]
    assert sorted(f.rank for f in run.files) == [0, 1]


def test_final_guards_are_each_guard_lines_code_without_its_comment(tmp_path):
    payload = ("\nTREE_GUARD_MANAGER:\n+- RootGuardManager\n"
               "| +- TYPE_MATCH: ___check_type_id(L['x'], 9)  # x.sin()  # a.py:3 in f\n"
               "+- LAMBDA_GUARD: 2 <= L['x'].size()[0] <= 8  # if x.shape[0] > 8:  # a.py:4 in f\n"
               "\nGuard latency = 1.00 us")
    run = read_run(write(tmp_path, clock(1.7e15) + start() + rec("dynamo_cpp_guards_str", {}, payload, **C00)))
    assert run.compiles[0].final_guards == ("___check_type_id(L['x'], 9)", "2 <= L['x'].size()[0] <= 8")


def test_an_overlong_line_or_payload_is_skipped_without_being_held(tmp_path, monkeypatch):
    import fxcache_core.trace.reader as trace

    monkeypatch.setattr(trace, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(trace, "MAX_PAYLOAD_BYTES", 64 * 1024)
    huge_line = "\t" + "x" * 20000  # one payload line over the line limit
    many = "\n".join("y" * 1000 for _ in range(100))  # lines under it, a payload over its limit
    text = (clock(1.7e15)
            + rec("artifact", {"name": "recompile_reasons", "encoding": "json"}, "r", **C00).rstrip("\n")
            + "\n" + huge_line + "\n"
            + rec("dynamo_cpp_guards_str", {}, many, **C00) + start())
    recs, info = _read(write(tmp_path, text))
    assert [r.event for r in recs] == ["chromium_event", "dynamo_start"]
    assert info.skipped == 3 and info.truncated is None
