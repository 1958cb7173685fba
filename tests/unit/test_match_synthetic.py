"""match on hand-made keys: torch's lookup rules where real caches rarely go."""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.lookup.match import match
from fxcache_core.reasons import code_of
from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry


def _match(root, key, **sym):
    scan = scan_cache(root)
    (m,) = match(Catalog(scan), {}, sym, scan.find(key)).results
    return m


def test_first_passing_entry_in_name_order_wins_and_later_ones_are_shadowed(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] > 100", k), name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] > 2", k), name="b")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(None, k), name="c")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, b"garbage", name="0")
    m = _match(tmp_path, k, t0=5)
    assert [v.outcome for v in m.entries] == ["unreadable", "fail", "pass", "pass"]
    assert m.hit.name == "b" and [e.name for e in m.shadowed] == ["c"] and m.status == "hit"


def test_a_raising_guard_stops_an_fx_lookup_with_an_error(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("(L['t0'] // 0) == 1", k), name="a")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] > 2", k), name="b")
    m = _match(tmp_path, k, t0=5)
    assert [v.outcome for v in m.entries] == ["error", "pass"]
    assert "ZeroDivisionError" in m.entries[0].reason
    assert m.hit is None and m.status == "error" and "compile fails" in m.aborted


def test_a_raising_guard_makes_an_aot_lookup_a_miss(tmp_path):
    k = fake_key(KeyKind.AOT_AUTOGRAD, "k")
    fx = fake_key(KeyKind.FX_GRAPH, "f")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 2", fx))
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, k, aot_entry_bytes("(L['t0'] % 0) == 1", (fx, "L['t0'] > 2")), name="a")
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, k, aot_entry_bytes("L['t0'] > 2", (fx, "L['t0'] > 2")), name="b")
    m = _match(tmp_path, k, t0=5)
    assert m.status == "miss" and m.hit is None and "AOTAutograd recompiles" in m.aborted
    # A guard that is merely False does not stop the lookup; the raising one still does.
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, k, aot_entry_bytes("L['t0'] > 100", (fx, None)), name="0")
    m = _match(tmp_path, k, t0=5)
    assert [v.outcome for v in m.entries] == ["fail", "error", "pass"] and m.status == "miss"


def test_a_placeholder_beyond_the_graph_inputs_raises_like_torch(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] > 2 and L['t3'] > 2", k, ("s0",)), name="a")
    m = _match(tmp_path, k, t0=5)
    assert m.entries[0].outcome == "error" and "KeyError: 't3'" in m.entries[0].reason
    m = _match(tmp_path, k, t0=1)  # the first clause fails first: no KeyError reached
    assert m.entries[0].outcome == "fail"


def test_aot_hit_whose_fx_entry_is_gone_is_a_miss(tmp_path):
    k = fake_key(KeyKind.AOT_AUTOGRAD, "k")
    fx = fake_key(KeyKind.FX_GRAPH, "f")
    write_entry(tmp_path, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] > 3", fx))  # other guards
    write_entry(tmp_path, KeyKind.AOT_AUTOGRAD, k, aot_entry_bytes("L['t0'] > 2", (fx, "L['t0'] > 2")))
    m = _match(tmp_path, k, t0=5)
    assert m.hit is not None and [ld.entry for ld in m.loads] == [None]
    assert m.status == "miss"  # torch: FXGraphCacheMiss, recompile


def test_symint_inputs_that_are_expressions_are_computed(tmp_path):
    """A backward graph's SymInt input can be s0*s1: its value follows from the symbols."""
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(
        "L['t2'] == L['t1']*L['t0'] and L['t2'] <= 100", k, ("s0", "s1", "s0*s1")))
    m = _match(tmp_path, k, s0=3, s1=5)
    assert dict(m.values) == {"t0": 3, "t1": 5, "t2": 15} and m.status == "hit"
    m = _match(tmp_path, k, s0=30, s1=5)
    assert m.status == "undecided" and "L['t2'] <= 100" in m.entries[0].failed_clause
    assert [code_of(r) for r in m.uncertain] == ["bound-failed"] and "s0*s1 <= 100" in m.uncertain[0], m.uncertain


@pytest.mark.parametrize("guards,values", [
    ("L['t0'] <= 7", {"s0": 10}),                                         # a bound on one input
    ("L['t1']*L['t0'] <= 64", {"s0": 4, "s1": 32}),                      # x.numel() > 64
    ("not (L['t0'] == 2 or L['t0'] == 3)", {"s0": 3, "s1": 4}),           # x.shape[0] in (2, 3)
])
def test_a_failed_clause_no_rule_reads_is_undecided_never_a_new_entry(tmp_path, guards, values):
    """The cache does not show whose check a failed clause was: the code's branch
    (another graph), an op's (an error) or neither (a new entry): undecided, named."""
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes(guards, k, ("s0", "s1")))
    m = _match(tmp_path, k, **values)
    assert m.status == "undecided" and [code_of(r) for r in m.uncertain] == ["bound-failed"], m.uncertain
    assert "this call fails" in m.uncertain[0] and "another graph" in m.uncertain[0], m.uncertain[0]


def test_entries_on_each_side_of_a_bound_do_not_make_a_call_between_them_a_new_entry(tmp_path):
    """Two entries of one key, x.size(0) <= 7 and x.size(0) >= 16: a call with 10 fails
    both, and each passes where the other fails. That is not evidence the trace of 10 is
    this key's graph (``if (a > 16) != (b > 8):`` built at (8, 4) and (20, 12) traces
    another graph for (20, 4)): undecided."""
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 7", k, ("s0",)), name="e1")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("16 <= L['t0']", k, ("s0",)), name="e2")
    m = _match(tmp_path, k, s0=10)
    assert [v.outcome for v in m.entries] == ["fail", "fail"], m.entries
    assert m.status == "undecided" and [code_of(r) for r in m.uncertain] == ["bound-failed"], m.uncertain


def _aot_with_input(root, graph_inputs: str):
    from tests.synth import Fake, dumps

    mod = "torch._functorch._aot_autograd.aot_autograd_result"
    src = "torch._dynamo.source"
    x = Fake(src, "LocalSource", local_name="x")  # state-based; fxcache reads fields by name too
    data = dumps(Fake(mod, "AOTAutogradResult", guards_expr="2 <= L['t0']",
                      compiled_fw=None, compiled_bw=None,
                      sanitized_aot_config=Fake("torch._functorch._aot_autograd.schemas",
                                                "CacheableAOTConfig",
                                                aot_autograd_arg_pos_to_source=[None, x]),
                      aot_forward_graph_str="class GraphModule(torch.nn.Module):\n"
                      "    def forward(\n        self,\n" + graph_inputs + "    ):\n"))
    k = fake_key(KeyKind.AOT_AUTOGRAD, graph_inputs)
    write_entry(root, KeyKind.AOT_AUTOGRAD, k, data)
    return k


def test_strides_and_duck_sizing_decide_whether_a_key_fits(tmp_path):
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes

    transposed = _aot_with_input(tmp_path, (
        '        arg0_1: "Sym(s0)",  # PlainAOTInput(idx=0)\n'
        '        arg1_1: "f32[s0, s1][1, s0]cpu",  # PlainAOTInput(idx=1)\n'))
    scan = scan_cache(tmp_path)

    def run(*shapes, mode=DynamicMode.TRUE):
        (m,) = match(Catalog(scan), parse_shapes(shapes), None, scan.find(transposed), mode=mode).results
        return m

    assert not run("x=[5,3]").fits  # contiguous: stride 0 is 3, the key wants 1
    assert "stride" in run("x=[5,3]").reasons[0]
    assert run("x=[5,3]:stride=[1,5]").fits
    m = run("x=[4,4]:stride=[1,4]")
    assert not m.fits and "duck sizing" in m.reasons[0]
    m = run("x=[4,4]:stride=[1,4]", mode=DynamicMode.UNKNOWN)  # dynamic=True or marked? undecided
    assert m.fits and m.status == "undecided" and "duck sizing" in m.uncertain[0]
    assert run("x=[4,4]:stride=[1,4]:mark_dynamic=[0,1]", mode=DynamicMode.NONE).fits


def _fx_only_key(root, guards, sig):
    from tests.synth import stub_pickle

    k = fake_key(KeyKind.FX_GRAPH, guards + sig)
    write_entry(root, KeyKind.FX_GRAPH, k, stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": guards, "_fx_graph_cache_key": k,
        "inductor_post_grad_graph_str": f"class <lambda>(torch.nn.Module):\n    def forward(self, {sig}):\n"}))
    return k


def test_positional_shapes_bind_fx_keys_without_aot_entries(tmp_path):
    from fxcache_core.lookup.binding import TensorArg

    k = _fx_only_key(tmp_path, "2 <= L['t0'] and L['t0'] <= 8",
                     'arg0_1: "Sym(s0)", arg1_1: "f32[s0, 4][4, 1]cpu", arg2_1: "f32[4][1]cpu"')
    scan = scan_cache(tmp_path)
    cat = Catalog(scan)
    (m,) = match(cat, {}, None, None, positional=[TensorArg((6, 4)), TensorArg((4,))]).results
    assert m.key.key == k and dict(m.values) == {"t0": 6} and m.status == "hit"
    (m,) = match(cat, {}, None, None, positional=[TensorArg((9, 4)), TensorArg((4,))]).results
    assert m.status == "undecided" and [code_of(r) for r in m.uncertain] == ["bound-failed"], m.uncertain
    (m,) = match(cat, {}, None, None, positional=[TensorArg((6, 5)), TensorArg((4,))]).results
    assert not m.fits and "static 4, got 5" in m.reasons[0]
    assert match(cat, {}, None, None, positional=[TensorArg((6, 4))]).results == ()  # arity differs
    (m,) = match(cat, {}, None, scan.find(k), positional=[TensorArg((6, 4))]).results
    assert not m.fits and "3 tensor inputs" not in m.reasons[0] and "2 tensor inputs" in m.reasons[0]


def test_a_resume_frame_is_traced_from_the_function_it_resumes():
    from fxcache_core.decode.entries import Origin

    o = Origin("torch_dynamo_resume_in_f_at_12", "m.py", 13, ("torch_dynamo_resume_in_f_at_12", "g"))
    assert o.traced_from("f") and o.traced_from("g")
    assert not o.traced_from("torch_dynamo_resume_in") and not o.traced_from("f_at")
    assert not Origin("torch_dynamo_resume_in_f_at_x", "m.py", 1, ("torch_dynamo_resume_in_f_at_x",)).traced_from("f")


def _aot_with_sources(root, inputs):
    from tests.synth import aot_entry_with_sources

    data = aot_entry_with_sources(None, (fake_key(KeyKind.FX_GRAPH, repr(inputs)), None), inputs)
    k = fake_key(KeyKind.AOT_AUTOGRAD, repr(inputs))
    write_entry(root, KeyKind.AOT_AUTOGRAD, k, data)
    return k


def test_another_dtype_is_another_graph_and_an_unsaid_one_is_assumed(tmp_path):
    from fxcache_core.lookup.binding import parse_shapes
    from tests.synth import local_source

    k = _aot_with_sources(tmp_path, [("i64[2, 8][8, 1]cpu", local_source("mask")),
                                     ("f32[2, 8][8, 1]cpu", local_source("x"))])
    scan = scan_cache(tmp_path)

    def run(*shapes):
        (m,) = match(Catalog(scan), parse_shapes(shapes), None, scan.find(k)).results
        return m

    m = run("x=[2,8]", "mask=[2,8]:dtype=bool")
    assert not m.fits and m.reasons[0].code == "dtype-differs"
    assert "L['mask'] is int64 here (i64[2, 8][8, 1]cpu), given bool" in m.reasons[0]
    m = run("x=[2,8]", "mask=[2,8]:dtype=int64")
    assert m.fits and dict(m.assumed) == {"L['x']": "float32"} and not m.uncertain
    m = run("x=[2,8]", "mask=[2,8]")
    assert m.fits and dict(m.assumed) == {"L['mask']": "int64", "L['x']": "float32"}
    assert m.to_json()["assumed"] == {"L['mask']": "int64", "L['x']": "float32"}
    assert "mask'] int64" in m.assumptions[0] and m.assumptions[0].code == "dtype-assumed"
    assert not m.uncertain  # an integer input's dtype is the key's (a tokenizer's ids, a mask)


def test_a_bare_shape_reads_as_float32_so_a_half_key_leaves_it_open(tmp_path):
    from fxcache_core.lookup.binding import parse_shapes
    from tests.synth import local_source

    k = _aot_with_sources(tmp_path, [("f16[2, 8][8, 1]cpu", local_source("x")),
                                     ("i64[2][1]cpu", local_source("ids"))])
    scan = scan_cache(tmp_path)

    def run(*shapes):
        (m,) = match(Catalog(scan), parse_shapes(shapes), None, scan.find(k)).results
        return m

    m = run("x=[2,8]", "ids=[2]")
    assert m.fits and dict(m.assumed) == {"L['x']": "float16", "L['ids']": "int64"}
    assert [r.code for r in m.uncertain] == ["dtype-not-given"], m.uncertain
    assert "L['x'] is float16 here" in m.uncertain[0] and ":dtype=float16" in m.uncertain[0]
    m = run("x=[2,8]:dtype=float16", "ids=[2]")
    assert m.fits and not m.uncertain
    m = run("x=[2,8]:dtype=float32", "ids=[2]")
    assert not m.fits and m.reasons[0].code == "dtype-differs"


def test_keys_taking_a_mask_as_different_dtypes_make_an_unsaid_dtype_undecided(tmp_path):
    from fxcache_core.lookup.binding import parse_shapes
    from fxcache_core.lookup.prediction import verdicts
    from tests.synth import local_source

    for dtype in ("i64", "b8"):
        _aot_with_sources(tmp_path, [(f"{dtype}[2, 8][8, 1]cpu", local_source("mask"))])
    cat = Catalog(scan_cache(tmp_path))
    rep = match(cat, parse_shapes(["mask=[2,8]"]))
    assert {m.status for m in rep.results} == {"undecided"}
    assert all(m.uncertain[0].code == "dtype-not-given" for m in rep.results)
    assert verdicts(rep).exit_code == 3
    rep = match(cat, parse_shapes(["mask=[2,8]:dtype=bool"]))
    # The bool key is the call's (a miss here: its FX entry is not in this cache).
    assert sorted(m.status for m in rep.results) == ["miss", "no-fit"]
    (fits,) = [m for m in rep.results if m.fits]
    assert not fits.uncertain and not fits.assumed


def test_an_fx_only_key_is_bound_by_its_symbols_names(tmp_path):
    """Torch names a symbol s{sha256(source) % 100}: L['timestep'] is s21 and
    L['sample'].size()[0] is s53. A key with FX entries only (AOTAutograd cache bypassed)
    is bound through them; an int, a float and a 0-d tensor are three inputs."""
    from fxcache_core.lookup.binding import DynamicMode, parse_shapes
    from fxcache_core.lookup.symbol_names import symbol_id

    assert (symbol_id("L['timestep']"), symbol_id("L['sample'].size()[0]"), symbol_id("L['x'].size()[0]")) == (
        21, 53, 77)
    k = _fx_only_key(tmp_path, "2 <= L['t1'] and L['t1'] <= 8",
                     'arg0_1: "Sym(s21)", arg1_1: "Sym(s53)", arg2_1: "f32[s53, 4][4, 1]cpu", '
                     'arg3_1: "f32[4][1]cpu"')
    cat = Catalog(scan_cache(tmp_path))

    def run(*shapes, mode=DynamicMode.TRUE):
        return match(cat, parse_shapes(shapes), mode=mode).results

    (m,) = run("sample=[6,4]", "timestep=10")
    # Bound, and its entry's guards pass. Its entries record no compiled frame (no stack
    # trace here), but the int the call gives is an input of the key (s21): its guards
    # decide it, as they do the tensor's sizes. A Python value the key does not take is
    # unaccounted: undecided, naming it (a real FX key records its frame:
    # tests/torch/test_oracle_suite.py hits it as torch did).
    assert m.key.key == k and dict(m.values) == {"t0": 10, "t1": 6} and m.hit is not None
    assert m.status == "hit" and not m.uncertain, m.uncertain
    (m,) = run("sample=[6,4]", "timestep=10", "flag=True")
    assert m.status == "undecided" and m.uncertain[0].code == "argument-unaccounted", m.uncertain
    assert m.uncertain[0].startswith("flag=True: a Python value"), m.uncertain
    assert dict(m.bound) == {"L['sample']": "L['sample']", "L['timestep']": "L['timestep']"}
    (m,) = run("sample=[9,4]", "timestep=10")
    assert m.hit is None and all(not e.passed for e in m.entries), m.entries
    for t, needle in [("10.0", "given the float 10.0"), ("[]", "given a 0-d tensor []")]:
        (m,) = run("sample=[6,4]", f"timestep={t}")
        assert not m.fits and m.reasons[0].code == "wrong-input-type" and needle in m.reasons[0], m.reasons
    (m,) = run("sample=[6,4]:dtype=bool", "timestep=10")
    assert not m.fits and m.reasons[0].code == "dtype-differs"
    (m,) = run("sample=[6,5]", "timestep=10")
    assert not m.fits and "static 4, got 5" in m.reasons[0]
    (m,) = run("sample=[6,4]", "timestep=10", mode=DynamicMode.NONE)
    assert not m.fits and m.reasons[0].code == "int-specialized"
    assert run("sample=[6,4]") == ()  # s21 explained by no input given: not bound
    assert run("x=[6,4]", "timestep=10") == ()
