"""``pack --from-trace``: what of a run no pack can warm (bypassed lookups, misses torch did not
save). Synthetic lookups in the shape ``fxcache_core.trace.explain_report`` gives them (a run whose
lookups bypass, e.g. under freezing, is compiled by hand in the pack evaluation; a test
compile would add to ``make test``'s time)."""

from __future__ import annotations

from types import SimpleNamespace

from fxcache_core.pack.select import run_not_warmed


def _lookup(cache: str, state: str, *, reason: str | None = None, wrote: str | None = None,
            restarted: bool = False) -> SimpleNamespace:
    return SimpleNamespace(lookup=SimpleNamespace(cache=cache, state=state, bypass_reason=reason),
                           wrote=wrote, restarted=restarted)


def test_bypassed_lookups_and_unsaved_misses_are_named_per_cache_and_reason():
    report = SimpleNamespace(lookups=[
        _lookup("aotautograd", "bypass", reason="Cannot cache a graph with freezing enabled"),
        _lookup("fxgraph", "bypass", reason="mkldnn tensors unpickleable"),
        _lookup("fxgraph", "bypass", reason="mkldnn tensors unpickleable"),
        _lookup("fxgraph", "miss"),
        _lookup("fxgraph", "miss", wrote="abc"),
        _lookup("fxgraph", "hit"),
        _lookup("aotautograd", "bypass", reason="x", restarted=True),
    ])
    got = [(r.code, r.text) for r in run_not_warmed(report)]
    assert got == [
        ("run-bypassed", "1 lookup of the run bypassed the aotautograd cache (Cannot cache a graph with freezing enabled)"),
        ("run-bypassed", "2 lookups of the run bypassed the fxgraph cache (mkldnn tensors unpickleable)"),
        ("run-miss-not-saved", "1 lookup of the run missed the fxgraph cache and saved no entry"),
    ]


def test_a_run_that_hit_or_saved_everything_has_nothing_unwarmed():
    report = SimpleNamespace(lookups=[_lookup("fxgraph", "hit"), _lookup("aotautograd", "miss", wrote="e")])
    assert run_not_warmed(report) == ()
