"""An AOTAutograd key's function comes from the compiled frames of the FX entry it
loads: ``key_origins`` reads those FX entries ahead in rounds; it must name the
same entry torch loads (the first, in name order, whose guards string is the one
the AOTAutograd entry recorded) as reading one by one does.

Synthetic (the layout CI cannot produce from one compile: one FX key whose entries
record different stacks, each loaded by another AOTAutograd key)."""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.functions.origin import key_origins
from tests.synth import aot_entry_with_sources, fake_key, local_source, stub_pickle, write_entry


def _fx_entry(key: str, guards: str, function: str) -> bytes:
    stack = f'  File "/src/m.py", line 3, in {function}\n    return x + 1\n'
    return stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": guards, "_fx_graph_cache_key": key, "_fx_graph_cache_debug_lines": [],
        "fx_kwargs": {"is_backward": False}, "cache_linemap": [(10, stack)]})


@pytest.mark.parametrize("n_fx", [1, 3, 6])
def test_each_aot_key_is_named_by_the_fx_entry_it_loads(tmp_path, n_fx):
    fx = fake_key(KeyKind.FX_GRAPH, "shared")
    for j in range(n_fx):
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, _fx_entry(fx, f"L['t0'] == {j + 2}", f"fn{j}"))
    want = {}
    for j in reversed(range(n_fx)):  # every FX entry is some key's, the last ones too
        a = fake_key(KeyKind.AOT_AUTOGRAD, f"a{j}")
        write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, a, aot_entry_with_sources(
            f"L['t0'] == {j + 2}", (fx, f"L['t0'] == {j + 2}"), [("f32[3][1]cpu", local_source("x"))],
            origin=("forward", "/src/m.py", 3)))
        want[a] = f"fn{j}"
    scan = scan_cache(tmp_path)
    ahead = key_origins(Catalog(scan), scan.keys)
    one_by_one = Catalog(scan)  # the entries read in order, as fx_entry_for does, no read-ahead
    for k in scan.keys:
        if k.kind is KeyKind.AOT_AUTOGRAD:
            ref = one_by_one.load(k.entries[0]).forward
            loaded = one_by_one.load(one_by_one.fx_entry_for(ref.key, ref.guards_expr))
            assert ahead[k.key].outer == loaded.origin.outer
            assert ahead[k.key].outer[-1][0] == want[k.key]
