"""Decoding never executes cache content: malicious, corrupt and truncated entries."""

from __future__ import annotations

import pickle

import pytest

from fxcache_core.decode import Stub, decode_entry, load_stubs, source_name
from fxcache_core.errors import EntryDecodeError
from fxcache_core.keys import KeyKind
from tests.synth import fx_entry_bytes, stub_pickle


def _reduce_pickle(module: str, name: str, arg: str) -> bytes:
    """GLOBAL module.name; (arg,) REDUCE: what a malicious pickle calls on load."""
    return (b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n"
            + pickle.dumps((arg,), protocol=2)[2:-1] + b"R.")


def test_os_system_in_a_pickle_is_never_called(tmp_path):
    marker = tmp_path / "pwned"
    data = _reduce_pickle("os", "system", f"touch {marker}")
    root, seen = load_stubs(data)
    assert not marker.exists()
    assert isinstance(root, Stub) and root.qualname == "os.system"
    assert root._args == (f"touch {marker}",)
    assert seen == {"os.system"}
    # As an entry it is reported, not run.
    with pytest.raises(EntryDecodeError, match="os.system"):
        decode_entry(data, KeyKind.FX_GRAPH)
    assert not marker.exists()


def test_builtins_eval_and_exec_are_stubs_too(tmp_path):
    marker = tmp_path / "pwned2"
    for fn in ("eval", "exec"):
        data = _reduce_pickle("builtins", fn, f"open({str(marker)!r}, 'w')")
        root, _ = load_stubs(data)
        assert isinstance(root, Stub) and root.stub_name == fn
    assert not marker.exists()


def test_nested_malicious_global_inside_a_valid_entry_is_inert(tmp_path):
    marker = tmp_path / "pwned3"
    evil = _reduce_pickle("subprocess", "getoutput", f"touch {marker}")
    # An entry whose guards_expr field is the result of a call: decoding must refuse the type.
    data = stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {"guards_expr": None})
    d = decode_entry(data, KeyKind.FX_GRAPH)
    assert d.guards_expr is None
    root, _ = load_stubs(evil)
    assert not marker.exists() and root.stub_name == "getoutput"


@pytest.mark.parametrize("cut", [1, 10, 100, -1])
def test_truncated_entry_is_a_decode_error(cut):
    data = fx_entry_bytes("2 <= L['t0']")
    with pytest.raises(EntryDecodeError, match="truncated|corrupt"):
        decode_entry(data[:cut], KeyKind.FX_GRAPH)


@pytest.mark.parametrize("junk", [b"", b"not a pickle", b"\x80\x05\x95garbage", b"\xff" * 64])
def test_garbage_is_a_decode_error(junk):
    with pytest.raises(EntryDecodeError):
        decode_entry(junk, KeyKind.AOT_AUTOGRAD)


def test_wrong_root_types_are_refused():
    with pytest.raises(EntryDecodeError, match="not a compiled graph"):
        decode_entry(pickle.dumps({"guards_expr": "True"}), KeyKind.FX_GRAPH)
    aot = stub_pickle("torch._functorch._aot_autograd.aot_autograd_result", "AOTAutogradResult", {})
    with pytest.raises(EntryDecodeError, match="not CompiledFxGraph"):
        decode_entry(aot, KeyKind.FX_GRAPH)
    with pytest.raises(EntryDecodeError, match="guards_expr is not a string"):
        decode_entry(stub_pickle("torch._inductor.output_code", "CompiledFxGraph",
                                 {"guards_expr": 42}), KeyKind.FX_GRAPH)


def test_synthetic_fx_entry_fields():
    d = decode_entry(fx_entry_bytes("2 <= L['t0'] and L['t1'] <= 8", key="fkey",
                                    symbols=("s0", "s1")), KeyKind.FX_GRAPH)
    assert d.guards_expr == "2 <= L['t0'] and L['t1'] <= 8"
    assert d.fx_key == "fkey" and d.is_backward is False
    assert [i.expr for i in d.symints] == ["s0", "s1"]
    assert dict(d.hints) == {"s0": 8, "s1": 8}


def _src(name, *args):
    """A stubbed Dynamo source, as the unpickler builds it (REDUCE with positional fields)."""
    cls = type(name, (Stub,), {"stub_module": "torch._dynamo.source", "stub_name": name})
    return cls(*args)


def test_source_names_follow_torch_templates():
    x = _src("LocalSource", "x", True)
    prop = type("TP", (Stub,), {"stub_name": "TensorProperty"})(0)
    assert source_name(x) == "L['x']"
    assert source_name(_src("TensorPropertySource", x, prop, 1)) == "L['x'].size()[1]"
    stride = type("TP", (Stub,), {"stub_name": "TensorProperty"})(1)
    assert source_name(_src("TensorPropertySource", x, stride, 0)) == "L['x'].stride()[0]"
    g = _src("GlobalSource", "net")
    mod = _src("UnspecializedBuiltinNNModuleSource", g)
    params = _src("UnspecializedParamBufferSource", mod, "_parameters")
    assert source_name(_src("DictGetItemSource", params, "weight")) == "G['net']._parameters['weight']"
    assert source_name(_src("GetItemSource", _src("LocalSource", "xs"), 0)) == "L['xs'][0]"
    assert source_name(_src("AttrSource", x, "not-an-identifier")) == "getattr(L['x'], 'not-an-identifier')"
    assert source_name(_src("SomethingNew", x)) is None  # unknown class: no guess
