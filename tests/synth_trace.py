"""Synthetic TORCH_TRACE files, for hostile-trace tests (no torch).

Each record is written as ``TorchLogsFormatter`` writes it
(torch/_logging/_internal.py): a glog prefix, the JSON metadata (the event
first, then the compile context), ``has_payload`` = the md5 of the payload,
and the payload's lines after a tab. A real traced run cannot be made to hold
what these hold (400-digit times, forged newlines, 100,000 guard lines).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

PREFIX = "V1201 11:57:15.562000 5039 torch/_dynamo/utils.py:2350] "
C00 = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
TRACE_NAME = "dedicated_log_torch_trace_ab12.log"


def rec(event: str, meta: Any, payload: str | None = None, **ctx: Any) -> str:
    """One record as torch writes it."""
    obj: dict[str, Any] = {event: meta, **ctx}
    if payload is not None:
        obj["has_payload"] = hashlib.md5(payload.encode("utf-8", "surrogatepass")).hexdigest()
    text = PREFIX + json.dumps(obj)
    if payload is not None:
        text += "".join(f"\n\t{ln}" for ln in payload.split("\n"))
    return text + "\n"


def clock(ts_us: float = 1.7e15) -> str:
    """The chromium event torch logs first (its payload's epoch timestamp sets the clock)."""
    return rec("chromium_event", {}, json.dumps({"name": "dynamo", "ts": ts_us, "ph": "B"}))


def start(fn: str = "f", filename: str = "/src/model.py", **ctx: Any) -> str:
    """``dynamo_start`` of compile 0/0, its file name interned as torch does."""
    return (rec("str", [filename, 7])
            + rec("dynamo_start", {"stack": [{"line": 3, "name": fn, "filename": 7}]}, **{**C00, **ctx}))


def artifact(name: str, info: dict[str, Any], **ctx: Any) -> str:
    """A JSON artifact of compile 0/0 (the cache lookups, ``recompile_reasons``...)."""
    return rec("artifact", {"name": name, "encoding": "json"}, json.dumps(info), **{**C00, **ctx})


def fx_hit(guards: str = "L['t0'] <= 8", key: str = "fK", **info: Any) -> str:
    """An FX graph cache hit whose one placeholder is symbol ``s0`` (as its key's
    ``example_inputs`` component says), so explain checks its guards."""
    return artifact("fx_graph_cache_hit", {
        "key": key, "cache_state": "hit", "cache_status_detailed": "hit", "cache_status_guard_expr": guards,
        "time_saved_ns": 2e9, "cache_event_time": 1.7e18,
        "components": ["[abc] example_inputs[0]: ('s0',)"], **info})


def fx_miss(key: str, **info: Any) -> str:
    return artifact("fx_graph_cache_miss", {"key": key, "cache_state": "miss",
                                            "cache_status_detailed": "full_miss", "time_taken_ns": 5e8,
                                            "cache_event_time": 1.7e18, "components": [], **info})


def symbol(name: str = "s0", val: Any = "5", source: str = "L['x'].size()[0]") -> str:
    return rec("create_symbol", {"symbol": name, "val": val, "source": source, "vr": "[2, int_oo]"}, **C00)


def tensor(source: str, size: list[Any], stride: list[Any], tid: int = 1, **meta: Any) -> str:
    """``describe_tensor`` + ``describe_source`` of one input."""
    return (rec("describe_tensor", {"id": tid, "describer_id": 0, "dtype": "torch.float32", "size": size,
                                    "stride": stride, **meta}, **C00)
            + rec("describe_source", {"id": tid, "describer_id": 0, "source": source}, **C00))


def final_guards(codes: list[str]) -> str:
    """``dynamo_cpp_guards_str``: the guards Dynamo installed, one ``+- KIND: code`` line each."""
    return rec("dynamo_cpp_guards_str", {}, "\n".join(f"+- LAMBDA_GUARD: {c}" for c in codes), **C00)


def normal() -> str:
    """A small ordinary run: one input, its guards in force, a hit, a miss."""
    return (clock() + start() + symbol() + tensor("L['x']", [5, 4], [4, 1])
            + final_guards(["___check_type_id(L['x'], 9)", "2 <= L['x'].size()[0] <= 8"])
            + fx_hit() + fx_miss("fK2"))


def write_trace(d: Path, text: str | bytes, name: str | bytes = TRACE_NAME) -> Path:
    """Write one trace file into dir ``d`` (made); return the dir."""
    d.mkdir(parents=True, exist_ok=True)
    path = os.path.join(os.fsencode(d), name) if isinstance(name, bytes) else d / name
    with open(path, "wb") as f:
        f.write(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    return d
