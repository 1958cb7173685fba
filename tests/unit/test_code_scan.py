"""The code scan: what an entry's pickle names, held against what torch writes there.

Synthetic pickles on purpose (hostile globals a real cache never holds); the real
caches' side (nothing foreign in what torch wrote) is asserted where those caches are
read: tests/cli/test_torch_versions.py (2.14.1, 2.15.0 and the session's 2.13 cache),
tests/torch/test_real_cache.py and test_models_oracle.py.
"""

from __future__ import annotations

import pickle

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.code_scan import allowed, describe, foreign_globals
from fxcache_core.decode.entries import decode_entry
from fxcache_core.decode.unpickler import GlobalUse, ReadUses, load_stubs
from fxcache_core.errors import EntryDecodeError
from fxcache_core.state.index import from_json, light, to_json
from tests.synth import Call, Fake, dumps, fx_entry_bytes


def _uses(data: bytes) -> dict[str, GlobalUse]:
    uses: dict[str, GlobalUse] = {}
    load_stubs(data, uses=uses)
    return uses


def test_the_unpickler_records_called_made_and_named_globals():
    data = dumps(Fake("torch._inductor.output_code", "CompiledFxGraph",
                      f=Call("posix", "system", "ls"), g=Call("builtins", "getattr", Fake("a", "B"), "x")))
    uses = _uses(data)
    assert uses["posix.system"] == GlobalUse("posix.system", frozenset({"call"}), ("ls",), None)
    assert uses["torch._inductor.output_code.CompiledFxGraph"].uses == {"new"}
    assert uses["a.B"].uses == {"new"}
    named = pickle.dumps(len, protocol=4)  # a global passed as a value, never called
    assert _uses(named) == {"builtins.len": GlobalUse("builtins.len")}
    kept = ReadUses()  # the same uses, made when looked at (arguments: this read's stubs)
    load_stubs(data, uses=kept)
    assert {n: (u.uses, repr(u.args)) for n, u in kept.items()} == {n: (u.uses, repr(u.args)) for n, u in uses.items()}


def test_what_torch_writes_is_allowed_and_a_call_of_it_is_not():
    assert foreign_globals("fxgraph", _uses(fx_entry_bytes("2 <= L['t0']"))) == ()
    called = dumps(Call("torch._inductor.output_code", "CompiledFxGraph", "x"))  # torch makes it, never calls it
    (f,) = foreign_globals("fxgraph", _uses(called))
    assert (f.name, f.uses, f.call) == ("torch._inductor.output_code.CompiledFxGraph", ("call",),
                                        "torch._inductor.output_code.CompiledFxGraph('x')")


def test_a_read_naming_what_a_clean_read_named_is_still_checked_for_how_it_uses_them():
    made = fx_entry_bytes("2 <= L['t0']")  # torch's: CompiledFxGraph made, never called
    assert decode_entry(made, KeyKind.FX_GRAPH).foreign == ()  # remembered as naming nothing foreign
    called = dumps(Call("torch._inductor.output_code", "CompiledFxGraph", "x"))  # the same globals, one called
    with pytest.raises(EntryDecodeError) as err:  # no guards_expr: not valid, its call named first
        decode_entry(called, KeyKind.FX_GRAPH)
    assert err.value.message.code == "foreign-global"
    assert "torch._inductor.output_code.CompiledFxGraph('x')" in err.value.message


def test_a_class_of_a_module_torch_writes_many_of_is_allowed_but_not_a_function_of_it():
    row = allowed("aotautograd")
    assert "ConstantSource" in row.classes["torch._dynamo.source"][1]  # not in the recorded caches
    assert "torch._dynamo.source.ConstantSource" not in row.seen
    ok = dumps(Call("torch._dynamo.source", "ConstantSource", "c"))
    assert foreign_globals("aotautograd", _uses(ok)) == ()
    fn = dumps(Call("torch._dynamo.source", "is_from_local_source", "c"))
    assert [f.name for f in foreign_globals("aotautograd", _uses(fn))] == ["torch._dynamo.source.is_from_local_source"]
    deep = dumps(Call("torch._dynamo.source", "LocalSource.__init__.__globals__", "c"))  # a dotted walk
    assert len(foreign_globals("aotautograd", _uses(deep))) == 1
    # the same class is foreign in another kind of pickle: the table is per kind
    assert [f.name for f in foreign_globals("fxgraph", _uses(ok))] == ["torch._dynamo.source.ConstantSource"]


def test_the_call_is_quoted_escaped_and_cut():
    evil = "\x1b[31mrm -rf ~\n" + "A" * 500
    (f,) = foreign_globals("pgo", _uses(dumps(Call("os", "system", evil))))
    assert f.call.startswith("os.system('\\x1b[31mrm -rf ~\\n") and f.call.endswith("…)")
    assert f.call.isprintable() and len(f.call) == len("os.system()") + 80  # no control character; cut
    made = describe(GlobalUse("evil\x07mod.Cls", frozenset({"new"}), (1, b"\x00", [1, 2]), {}))
    assert made == "evil\\x07mod.Cls.__new__(evil\\x07mod.Cls, 1, b'\\x00', [… 2 items])"
    assert describe(GlobalUse("posix.system")) == "import posix; posix.system"
    huge = describe(GlobalUse("m.f", frozenset({"call"}), (10**400,), {"k\x1b": "v"}))
    assert huge == "m.f(<an int of 1329 bits>, k\\x1b='v')"


def test_a_foreign_global_inside_an_entry_is_reported_not_run(marker_dir):
    marker = marker_dir / "ran"
    data = dumps(Fake("torch._inductor.output_code", "CompiledFxGraph", guards_expr=None,
                      source_code=Call("posix", "system", f"touch {marker}")))
    d = decode_entry(data, KeyKind.FX_GRAPH)
    assert [(f.name, f.call) for f in d.foreign] == [("posix.system", f"posix.system('touch {marker}')")]
    assert not marker.exists()
    # kept in the light form that worker processes send back and the index stores
    assert from_json(to_json(light(d))).foreign == d.foreign
