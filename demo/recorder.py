"""Record what torch's compile caches look up and write, by wrapping torch's own methods.

:func:`install_recorder` wraps ``FxGraphCache.find_guarded_entry`` and
``AOTAutogradCache.find_guarded_entry`` (the originals still run, unchanged), their
``_write_to_local_cache`` and ``FxGraphCache.load_with_key`` (to tell the forward
graph from the backward one), and returns a :class:`Recorder` that collects one
record per lookup and per entry file written. The record format is described in
``tests/harness/oracle.py`` (torch's own lookup, the ground truth of the tests).

``demo.build_cache`` records what building each case looked up and wrote (and
:func:`counters`, torch's cache counters); the test harness (``tests.harness``)
records the lookups of later calls. This module imports nothing of ``demo``;
importing it does not import torch, :func:`install_recorder` does.
"""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field
from typing import Any

_GRAPH: contextvars.ContextVar[str | None] = contextvars.ContextVar("fxcache_graph", default=None)


@dataclass
class Recorder:
    """Lookups and entry writes seen since the last :meth:`clear`."""

    lookups: list[dict[str, Any]] = field(default_factory=list)
    writes: list[dict[str, Any]] = field(default_factory=list)
    phase: str | None = None  # "forward" (the compiled call) / "backward" (loss.backward())

    def clear(self) -> None:
        self.lookups.clear()
        self.writes.clear()
        self.phase = None

    def set_phase(self, phase: str) -> None:
        self.phase = phase


_RECORDER: Recorder | None = None


def _entry_names(subdir: str) -> list[str]:
    # Same filter and order as GuardedCache.iterate_over_candidates.
    if not os.path.isdir(subdir):
        return []
    return [p for p in sorted(os.listdir(subdir)) if not p.startswith(".")]


def _mode(evaluate_guards: Any) -> str:
    name = getattr(evaluate_guards, "__name__", "")
    if name == "check_exact_guard_match":
        return "exact"  # AOTAutograd hit: FX entry must have the identical guard string
    if name == "<lambda>":
        return "skip"  # inductor.config.unsafe_skip_cache_dynamic_shape_guards
    return "guards"  # shape_env.evaluate_guards_expression(expr, hints)


def install_recorder() -> Recorder:
    """Wrap torch's cache lookups/writes (idempotent); the originals still run."""
    global _RECORDER
    if _RECORDER is not None:
        return _RECORDER
    from torch._functorch._aot_autograd.autograd_cache import AOTAutogradCache
    from torch._inductor.codecache import FxGraphCache, sha256_hash

    rec = Recorder()

    def wrap_find(kind: str, cls: type) -> None:
        orig = cls.find_guarded_entry  # bound classmethod of the GuardedCache mixin

        def find_guarded_entry(cls_, key, local, remote_cache, evaluate_guards, hints):
            subdir = cls_._get_tmp_dir_for_key(key)
            candidates = _entry_names(subdir) if local else []
            try:
                entry, content, info = orig(key, local, remote_cache, evaluate_guards, hints)
            except Exception as e:  # a guard raised: record it, let torch handle it as it does
                rec.lookups.append({
                    "kind": kind, "key": key, "hit": None, "hints": [int(h) for h in hints],
                    "status": "raised", "raised": type(e).__name__, "mode": _mode(evaluate_guards),
                    "candidates": candidates, "phase": rec.phase,
                })
                raise
            record: dict[str, Any] = {
                "kind": kind,
                "key": key,
                "hit": sha256_hash(content) if content is not None else None,
                "hints": [int(h) for h in hints],
                "status": info.get("cache_status_detailed"),
                "mode": _mode(evaluate_guards),
                "candidates": candidates,
                "phase": rec.phase,
            }
            if kind == "fxgraph":
                record["graph"] = _GRAPH.get()
            if entry is not None:
                record["guards_expr"] = getattr(entry, "guards_expr", None)
                if kind == "aotautograd":
                    refs = {}
                    for part in ("compiled_fw", "compiled_bw"):
                        loadable = getattr(entry, part, None)
                        info_ = getattr(loadable, "fx_graph_cache_info", None)
                        if info_ is not None:
                            refs[part] = {
                                "key": info_[0],
                                "guards_expr": getattr(loadable, "fx_graph_guard_expr", None),
                            }
                    record["fx_refs"] = refs
            rec.lookups.append(record)
            return entry, content, info

        cls.find_guarded_entry = classmethod(find_guarded_entry)

    def wrap_write(kind: str, cls: type) -> None:
        orig = cls._write_to_local_cache  # staticmethod -> plain function

        def _write_to_local_cache(key, content):
            orig(key, content)
            rec.writes.append(
                {"kind": kind, "key": key, "entry": sha256_hash(content), "phase": rec.phase}
            )

        cls._write_to_local_cache = staticmethod(_write_to_local_cache)

    orig_load = FxGraphCache.load_with_key

    def load_with_key(*args, **kwargs):
        token = _GRAPH.set("backward" if kwargs.get("is_backward") else "forward")
        try:
            return orig_load(*args, **kwargs)
        finally:
            _GRAPH.reset(token)

    FxGraphCache.load_with_key = staticmethod(load_with_key)
    wrap_find("fxgraph", FxGraphCache)
    wrap_find("aotautograd", AOTAutogradCache)
    wrap_write("fxgraph", FxGraphCache)
    wrap_write("aotautograd", AOTAutogradCache)
    _RECORDER = rec
    return rec


def counters() -> dict[str, int]:
    """Torch's cache counters now: ``fxgraph_cache_{hit,miss,bypass}`` (Inductor's) and
    ``autograd_cache_{hit,miss,guard_miss,bypass,saved}`` (AOTAutograd's), from
    ``torch._dynamo.utils.counters`` (imports torch)."""
    from torch._dynamo.utils import counters as torch_counters

    out: dict[str, int] = {}
    for name in ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass"):
        out[name] = int(torch_counters["inductor"][name])
    for name in (
        "autograd_cache_hit",
        "autograd_cache_miss",
        "autograd_cache_guard_miss",
        "autograd_cache_bypass",
        "autograd_cache_saved",
    ):
        out[name] = int(torch_counters["aot_autograd"][name])
    return out


