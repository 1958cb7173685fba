"""gc with what traces said about entries (GcPolicy.trace_use, keep_costly_s), on hand-made caches.

Synthetic caches (tests/synth.py): entry ages and compile times set by hand.
Recording trace facts from a real traced run is tested in tests/torch/test_explain.py.
"""

from __future__ import annotations

import os
import time

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.state.usage import UsageStore, usage_path
from tests.helpers import plan_gc_on as _plan
from tests.synth import Fake, dumps, fake_key, write_entry

DAY = 86400.0


def _fx(guards: str, key: str, compile_ns: int | None) -> bytes:
    return dumps(Fake("torch._inductor.output_code", "CompiledFxGraph", guards_expr=guards,
                      _fx_graph_cache_key=key, _fx_graph_cache_debug_lines=[],
                      fx_kwargs={"is_backward": False}, _time_taken_ns=compile_ns))


def _cache(root, now):
    """One FX key, three entries of one size: 10 days old (compiled in 60 s), 5 and 1 days
    old (5 s each)."""
    key = fake_key(KeyKind.FX_GRAPH, "K")
    paths = {}
    for days, guards, ns in ((10, "L['t0'] > 300", 60 * 10**9), (5, "L['t0'] > 200", 5 * 10**9),
                             (1, "L['t0'] > 100", 5 * 10**9)):
        p = write_entry(root, KeyKind.FX_GRAPH, key, _fx(guards, key, ns))
        os.utime(p, (now - days * DAY, now - days * DAY))
        paths[days] = p
    return paths


def test_a_hit_seen_in_a_trace_is_a_use_whatever_atime_says(tmp_path):
    now = time.time()
    paths = _cache(tmp_path, now)
    plain = _plan(tmp_path, older_than_s=3 * DAY, now=now)
    assert {r.file.path for r in plain.removals} == {paths[10], paths[5]}
    seen = ((paths[10].name, now - DAY, None),)  # a trace hit it yesterday
    plan = _plan(tmp_path, older_than_s=3 * DAY, now=now, trace_use=seen)
    assert {r.file.path for r in plan.removals} == {paths[5]}
    assert "last hit in a trace" in plan.last_use


def test_max_size_keeps_entries_that_are_expensive_to_compile_until_cheaper_ones_are_gone(tmp_path):
    now = time.time()
    paths = _cache(tmp_path, now)
    one = paths[10].stat().st_size
    assert {p.stat().st_size for p in paths.values()} == {one}
    budget = scan_cache(tmp_path).size - one  # one entry must go
    assert [r.file.path for r in _plan(tmp_path, max_size_bytes=budget, now=now).removals] == [paths[10]]
    plan = _plan(tmp_path, max_size_bytes=budget, now=now, keep_costly_s=30.0)
    assert [r.file.path for r in plan.removals] == [paths[5]]
    # A trace's recorded cost counts where the entry stores none (or another).
    cheap = ((paths[10].name, 0.0, 0.2),)
    plan = _plan(tmp_path, max_size_bytes=budget, now=now, keep_costly_s=30.0, trace_use=cheap)
    assert [r.file.path for r in plan.removals] == [paths[10]]
    # Over budget by all: the costly one goes too, and the plan says it was kept till last.
    plan = _plan(tmp_path, max_size_bytes=0, now=now, keep_costly_s=30.0)
    why = {r.file.path: r.reasons[0] for r in plan.removals}
    assert set(why) == set(paths.values())
    assert "kept until every cheaper entry went" in why[paths[10]]
    assert all("kept until" not in why[paths[d]] for d in (1, 5))


def test_the_usage_store_lives_beside_the_index_never_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    p = usage_path(tmp_path / "cache")
    assert p is not None and p.parent == tmp_path / "idx" and p.name.startswith("usage-")
    store = UsageStore(p)
    assert store.enabled and store.load() == {}
    store.close()
    monkeypatch.setenv("FXCACHE_NO_INDEX", "1")
    assert usage_path(tmp_path / "cache") is None
    assert not UsageStore(None).enabled


def test_the_usage_store_takes_trace_facts_and_loads_no_trace_module(tmp_path):
    """gc reads the store: importing it (or the planner) loads neither explain nor
    the trace reader; any object with ``cache_dir``, ``uses()`` and
    ``trace_paths()`` can be recorded, once per trace file set."""
    import subprocess
    import sys

    from fxcache_core.state.usage import TracedUse

    code = ("import sys, fxcache_core.state.usage, fxcache_core.prune.plan, fxcache_core.prune.execute; "
            "print(sorted(m for m in sys.modules if m.startswith('fxcache_core.trace')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"  # the store lives in fxcache_core.state: no trace module at all

    trace = tmp_path / "dedicated_log_torch_trace_rank_0.log"
    trace.write_text("")

    class Facts:
        cache_dir = str(tmp_path / "cache")

        def uses(self):
            return [TracedUse("fxgraph", "fK", "e1", True, 100.0),
                    TracedUse("fxgraph", "fK", "e2", False, 50.0, 7.5)]

        def trace_paths(self):
            return [trace]

    store = UsageStore(tmp_path / "usage.sqlite")
    assert store.record(Facts()) == 2 and store.record(Facts()) == 2
    facts = store.load()
    store.close()
    assert (facts["e1"].hits, facts["e1"].last_use) == (1, 100.0)  # counted once
    assert (facts["e2"].compile_s, facts["e2"].written, facts["e2"].hits) == (7.5, 50.0, 0)


def test_plan_gc_takes_the_trace_facts_explain_recorded_for_the_cache_dir(tmp_path, monkeypatch):
    """gc's caller gives the cache dir only: the planner reads the usage store itself."""
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.prune.plan import plan_gc
    from fxcache_core.prune.policy import GcPolicy
    from fxcache_core.state.usage import TracedUse

    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    monkeypatch.delenv("FXCACHE_NO_INDEX", raising=False)
    now = time.time()
    root = tmp_path / "cache"
    root.mkdir()
    paths = _cache(root, now)
    trace = tmp_path / "dedicated_log_torch_trace_rank_0.log"
    trace.write_text("")

    class Facts:
        cache_dir = str(root)

        def uses(self):
            return [TracedUse("fxgraph", "K", paths[10].name, True, now - DAY)]  # hit yesterday

        def trace_paths(self):
            return [trace]

    policy = GcPolicy(older_than_s=3 * DAY, now=now)
    store = UsageStore(usage_path(root))
    store.record(Facts())
    store.close()
    without = plan_gc(Catalog(scan_cache(root)), policy)
    assert {r.file.path for r in without.removals} == {paths[10], paths[5]}
    plan = plan_gc(Catalog(scan_cache(root)), policy, trace_facts=True)
    assert {r.file.path for r in plan.removals} == {paths[5]}
    assert [n for n, _, _ in plan.policy.trace_use] == [paths[10].name]


def test_keep_costly_without_max_size_is_a_policy_error():
    import pytest

    from fxcache_core.prune.policy import GcPolicy, PolicyError

    with pytest.raises(PolicyError) as e:
        GcPolicy(keep_costly_s=30.0)
    assert e.value.param == "keep_costly_s" and "max_size_bytes" in str(e.value)
    assert GcPolicy(keep_costly_s=30.0, max_size_bytes=1).keep_costly_s == 30.0
