"""Validity comes from the unpickle alone: a field fxcache cannot parse is absent, not corrupt.

Synthetic entries (tests/synth.py): torch never writes a 5,000-digit input index, but
an entry holding one is still a pickle torch loads, since torch never parses its debug
lines or printed graphs on load; a real compile cannot produce it.
"""

from __future__ import annotations

import struct
import time

import pytest

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.catalog.verify import verify
from fxcache_core.decode import unpickler
from fxcache_core.decode.entries import decode_entry
from fxcache_core.lookup.match import match
from fxcache_core.lookup.prediction import verdicts
from fxcache_core.reasons import code_of
from fxcache_core.state.index import Index, from_json, to_json
from tests.helpers import plan_gc_on
from tests.synth import (
    Fake,
    aot_entry_bytes,
    dumps,
    fake_key,
    fx_entry_bytes,
    stub_pickle,
    write_entry,
)

TICK_S = 0.05  # past the kernel's timestamp tick and RACY_FINE_NS
HUGE = "9" * 5000  # past Python's 4,300-digit int conversion limit
_AOT = "torch._functorch._aot_autograd.aot_autograd_result"


def _huge_aot(fx: str) -> bytes:
    """An AOTAutogradResult whose forward graph names an input ``PlainAOTInput(idx=<5000 digits>)``."""
    return dumps(Fake(_AOT, "AOTAutogradResult", guards_expr="L['t0'] > 2",
                      compiled_fw=Fake(_AOT, "CompiledForward", fx_graph_cache_info=(fx, []),
                                       fx_graph_guard_expr="L['t0'] > 2"),
                      compiled_bw=None,
                      aot_forward_graph_str=(
                          "class GraphModule(torch.nn.Module):\n    def forward(\n        self,\n"
                          f'        arg0_1: "Sym(s0)",  # PlainAOTInput(idx={HUGE})\n    ):\n'),
                      sanitized_aot_config=None))


def test_a_5000_digit_example_input_index_leaves_the_inputs_absent_and_the_entry_valid():
    data = fx_entry_bytes("L['t0'] <= 8", "fk", symbols=("s0",),
                          extra_lines=(f"[abc] example_inputs[{HUGE}]: ('s1',)",))
    d = decode_entry(data, KeyKind.FX_GRAPH)
    assert d.guards_expr == "L['t0'] <= 8" and d.fx_key == "fk" and d.is_backward is False
    assert d.inputs == ()
    assert [name for name, _ in d.absent] == ["inputs"]
    assert "ValueError" in d.absent[0][1]
    assert from_json(to_json(d)).absent == d.absent  # the index keeps what was absent


def test_a_5000_digit_plain_aot_input_index_leaves_the_inputs_absent_and_the_entry_valid():
    d = decode_entry(_huge_aot("fk"), KeyKind.AOT_AUTOGRAD)
    assert d.guards_expr == "L['t0'] > 2" and d.forward is not None and d.forward.key == "fk"
    assert d.inputs == () and [name for name, _ in d.absent] == ["inputs"]


def test_a_field_too_entangled_to_convert_is_absent(monkeypatch):
    monkeypatch.setattr(unpickler, "MAX_PLAIN_NODES", 10)  # the limit, small enough for a small pickle
    data = dumps(Fake(_AOT, "AOTAutogradResult", guards_expr="L['t0'] > 2", compiled_bw=None,
                      compiled_fw=Fake(_AOT, "CompiledForward", fx_graph_cache_info=("fk", []),
                                       fx_graph_guard_expr=None),
                      sanitized_aot_config=Fake("torch._functorch._aot_autograd.schemas", "CacheableAOTConfig",
                                                aot_autograd_arg_pos_to_source=[[] for _ in range(20)])))
    d = decode_entry(data, KeyKind.AOT_AUTOGRAD)
    assert d.guards_expr == "L['t0'] > 2" and d.forward is not None and d.forward.key == "fk"
    assert d.arg_sources == () and [name for name, _ in d.absent] == ["arg_sources"]
    assert "too" in d.absent[0][1] or "nested" in d.absent[0][1]


def test_ls_match_gc_and_verify_agree_on_which_entries_are_corrupt(tmp_path):
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "aot")
    good = fx_entry_bytes("L['t0'] <= 8", fx)
    corrupt = {
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, good[:40], name="truncated"),
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, b"not a pickle", name="garbage"),
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, dumps({"guards_expr": "True"}), name="not-a-graph"),
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, stub_pickle(
            "torch._inductor.output_code", "CompiledFxGraph", {"guards_expr": 7}), name="int-guards"),
        write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, aot, good, name="wrong-type"),
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, b"\x80\x02Nr" + struct.pack("<I", 2**31) + b".",
                    name="memo-bomb"),
        write_entry(tmp_path, KeyKind.FX_GRAPH, fx, stub_pickle("posix", "system", {"guards_expr": "True"}),
                    name="foreign-root"),
        write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, aot, stub_pickle(_AOT, "AOTAutogradResult",
                                                                     {"guards_expr": 10**5000}), name="huge-guards"),
    }
    fx2 = fake_key(KeyKind.FX_GRAPH, "fx2")  # its own key: an entry without inputs binds no symbols
    huge_fx = fx_entry_bytes("L['t0'] <= 8", fx2, extra_lines=(f"[abc] example_inputs[{HUGE}]: ('s1',)",))
    # Named by their content's sha256, as torch names them, so only corruption is at stake.
    valid = {write_entry(tmp_path, kind, key, d, name=sha256_hash(d)) for kind, key, d in (
        (KeyKind.FX_GRAPH, fx, good), (KeyKind.FX_GRAPH, fx2, huge_fx),
        (KeyKind.AOT_AUTOGRAD, aot, _huge_aot(fx)),
        (KeyKind.AOT_AUTOGRAD, aot, aot_entry_bytes("L['t0'] > 2", (fx, None))),
        # valid, naming a global torch does not write in a field: verify's finding, not corruption
        (KeyKind.AOT_AUTOGRAD, aot, dumps(Fake(_AOT, "AOTAutogradResult", guards_expr=None,
                                               compiled_fw=Fake("os", "system", fx_graph_cache_info=7)))))}
    scan = scan_cache(tmp_path)
    cat = Catalog(scan)
    ls_bad = {u.entry.path for u in cat.unreadable() if u.cause in ("corrupt", "too-large")}
    verify_bad = {b.entry.path for b in verify(Catalog(scan_cache(tmp_path))).bad
                  if any(p.code == "unreadable" for p in b.problems)
                  or (not b.foreign and b.problems[0].code == "foreign-global")}  # not valid: its globals first
    removals = plan_gc_on(tmp_path, unreadable=True).removals
    gc_bad = {r.file.path for r in removals if r.entry is not None}
    assert all([x.code for x in r.reasons] == ["unreadable"] for r in removals)  # none for its name alone
    match_bad = set()
    for key, sym in ((fx, {"t0": 5}), (fx2, {}), (aot, {})):  # fx2's and aot's inputs: absent, nothing to bind
        s = scan_cache(tmp_path)
        (m,) = match(Catalog(s), {}, sym, s.find(key)).results
        match_bad |= {v.entry.path for v in m.entries  # skipped, or corrupt but read by torch: undecided
                      if v.outcome == "unreadable" or code_of(v.reason) == "corrupt-entry-torch-loads"}
    assert ls_bad == verify_bad == gc_bad == match_bad == corrupt
    assert not valid & (ls_bad | verify_bad | gc_bad | match_bad)


def test_match_is_undecided_not_an_error_on_an_entry_whose_inputs_are_absent(tmp_path):
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes(
        "L['t0'] <= 8", fx, origin=("f", "/m.py", 3), extra_lines=(f"[abc] example_inputs[{HUGE}]: ('s1',)",)))
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {"x": [4]}, {}, s.find(fx)).results
    # torch has the inputs fxcache could not read: whether L['t0'] exists is unknown, not a KeyError
    assert [v.outcome for v in m.entries] == ["unknown"] and m.status == "undecided"


def test_every_recorded_torch_entry_reads_with_no_field_absent():
    # Real caches of the recorded torch builds (tests/fixtures): a parser that fails on
    # what torch writes would now leave a field absent silently, not make a corrupt entry.
    from pathlib import Path

    roots = sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("**/cache"))
    entries = [e for root in roots for e in scan_cache(root).entries()]
    assert len(entries) >= 20
    absent = {e.path.name: d.absent for e in entries
              if (d := decode_entry(e.path.read_bytes(), e.kind)).absent}
    assert absent == {}


_FX_ROOT = ("torch._inductor.output_code", "CompiledFxGraph")
_LOADED = {  # corrupt to fxcache, but pickle.loads reads them (synthetic: torch writes a str or None)
    "falsy-bytes": stub_pickle(*_FX_ROOT, {"guards_expr": b""}),  # torch: no guards, a hit
    "zero": stub_pickle(*_FX_ROOT, {"guards_expr": 0}),  # torch: no guards, a hit
    "bytes": stub_pickle(*_FX_ROOT, {"guards_expr": b"L['t0'] > 2"}),  # torch evaluates the bytes
    "int": stub_pickle(*_FX_ROOT, {"guards_expr": 7}),  # torch's eval raises TypeError
    "no-guards-attribute": stub_pickle(*_FX_ROOT, {}),  # torch's assert hasattr fails
    "dict-root": dumps({"guards_expr": None}),  # a dict: torch's assert hasattr fails
    "aot-root-in-fxgraph": aot_entry_bytes(None, ("f" * 52, None)),  # torch takes its guards_expr
}


@pytest.mark.parametrize("data", list(_LOADED.values()), ids=list(_LOADED))
def test_an_entry_that_unpickles_is_not_judged_as_one_torch_skips(tmp_path, data):
    # torch skips only an entry whose pickle.loads raises (GuardedCache.iterate_over_candidates);
    # one that loads is judged by find_guarded_entry: it asserts a guards_expr attribute, takes a
    # falsy one as no guards (a hit) and evaluates any other, bytes included (eval reads them as
    # source). Each is corrupt to ls/verify/gc, and leaves match undecided, cold and from the index.
    # Synthetic entries (torch writes a str or None), checked against torch 2.13 by hand: each
    # planted first in the FX key of a real CPU cache (autograd cache off), a fresh process's
    # call failed to compile (BackendCompilerFailed: the stub hit and could not run, eval's
    # TypeError, the hasattr assert) where fxcache said HIT before; b"L['t0'] > 100" missed
    # and the next entry hit; a truncated pickle was skipped (below, still a decided HIT).
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, data, name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx), name="b")
    time.sleep(TICK_S)  # the readings are proven: the index keeps their rows
    idx = tmp_path.parent / f"{tmp_path.name}.sqlite"
    for _run in ("cold", "warm"):
        s = scan_cache(tmp_path)
        cat = Catalog(s, Index(idx))
        assert isinstance(cat.load(s.find(fx).entries[0]), Unreadable)  # corrupt, for ls/verify/gc
        report = match(cat, {}, {"t0": 5}, s.find(fx))
        cat.index.close()
        (m,) = report.results
        assert m.status == "undecided" and m.hit is None
        first = m.entries[0]
        assert first.outcome == "unknown" and code_of(first.reason) == "corrupt-entry-torch-loads"
        assert first.entry.name in first.reason and "torch does not skip it" in first.reason
        (fn,) = verdicts(report, count_all=True).functions
        assert fn.status == "undecided" and code_of(fn.why) == "corrupt-entry-torch-loads"


def test_an_entry_that_unpickles_after_the_hit_leaves_the_hit_decided(tmp_path):
    # torch stops at the first entry whose guards hold: what follows is never read.
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx), name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, _LOADED["bytes"], name="b")
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {}, {"t0": 5}, s.find(fx)).results
    assert m.status == "hit" and m.hit is not None and m.hit.name == "a"


def test_an_entry_whose_pickle_does_not_load_is_still_skipped(tmp_path):
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx)[:40], name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx), name="b")
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {}, {"t0": 5}, s.find(fx)).results
    assert [v.outcome for v in m.entries] == ["unreadable", "pass"] and m.status == "hit"


def test_coverage_sweeps_an_entry_that_unpickles_as_undecided(tmp_path):
    from fxcache_core.lookup.coverage import coverage

    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, _LOADED["falsy-bytes"], name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx), name="b")
    s = scan_cache(tmp_path)
    (seg,) = coverage(Catalog(s), s.find(fx), "t0", 2, 10).segments
    assert (seg.start, seg.end, seg.outcome) == (2, 10, "undecided") and code_of(seg.note) == "corrupt-entry-torch-loads"


def test_an_fx_entry_that_unpickles_before_the_one_an_aot_hit_loads_leaves_it_undecided(tmp_path):
    # FxGraphCacheLoadable looks the FX key up by the exact guards string through the same
    # find_guarded_entry: a falsy guards_expr is taken, a missing one fails the assert.
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "aot")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, _LOADED["zero"], name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes(None, fx), name="b")
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, aot, aot_entry_bytes(None, (fx, None)))
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {}, {}, s.find(aot)).results
    assert m.hit is not None and m.status == "undecided"
    assert [code_of(u) for u in m.uncertain] == ["corrupt-entry-torch-loads"] and "forward FX graph" in m.uncertain[0]
    (tmp_path / "fxgraph" / fx[1:3] / fx / "a").unlink()  # without it, the hit loads "b"
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {}, {}, s.find(aot)).results
    assert m.status == "hit" and [ld.entry for ld in m.loads] == ["b"]


def _over_budget(monkeypatch, names: set[str]) -> None:
    """Entries ``names`` read as over fxcache's size limit (a stand-in for a 600 MB entry,
    which a test cannot write: torch, with the memory, reads it)."""
    import fxcache_core.catalog.reader as reader

    orig = reader.Catalog._not_to_read

    def not_to_read(self, e):
        if e.name in names:
            return (f"600000000 bytes, over fxcache's {unpickler.MAX_ENTRY_BYTES} byte decoding limit",
                    "too-large")
        return orig(self, e)

    monkeypatch.setattr(reader.Catalog, "_not_to_read", not_to_read)


def test_an_entry_over_fxcaches_size_limit_before_the_hit_leaves_it_undecided(tmp_path, monkeypatch):
    # torch tries the big entry first: it may hit it or raise; the next entry's pass decides nothing.
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 2", fx), name="a_big")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 1", fx), name="b_small")
    _over_budget(monkeypatch, {"a_big"})
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {}, {"t0": 5}, s.find(fx)).results
    assert m.status == "undecided" and [v.outcome for v in m.entries][:1] == ["unknown"], m
    assert code_of(m.entries[0].reason) == "over-size-limit"


def test_an_fx_entry_over_fxcaches_size_limit_leaves_an_aot_hit_undecided_not_a_miss(tmp_path, monkeypatch):
    # The FX entry torch loads is one fxcache did not read: not "gone" (a MISS), but not known.
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "aot")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 2", fx), name="a_big")
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, aot, aot_entry_bytes("L['t0'] > 2", (fx, "L['t0'] > 2")))
    _over_budget(monkeypatch, {"a_big"})
    s = scan_cache(tmp_path)
    (m,) = match(Catalog(s), {}, {"t0": 5}, s.find(aot)).results
    assert m.status == "undecided", m
    assert [code_of(u) for u in m.uncertain] == ["over-size-limit"] and "forward FX graph" in m.uncertain[0]


def test_coverage_sweeps_an_entry_over_fxcaches_size_limit_as_undecided(tmp_path, monkeypatch):
    from fxcache_core.lookup.coverage import coverage

    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 2", fx), name="a_big")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx), name="b")
    _over_budget(monkeypatch, {"a_big"})
    s = scan_cache(tmp_path)
    (seg,) = coverage(Catalog(s), s.find(fx), "t0", 2, 10).segments
    assert seg.outcome == "undecided" and code_of(seg.note) == "over-size-limit"
