"""Decoding never executes cache content: malicious, corrupt and truncated entries."""

from __future__ import annotations

import pickle

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import decode_entry
from fxcache_core.decode.sources import source_name
from fxcache_core.decode.unpickler import Stub, load_stubs
from fxcache_core.errors import EntryDecodeError
from tests.synth import Call, fx_entry_bytes, stub_pickle


def _reduce_pickle(module: str, name: str, arg: str) -> bytes:
    """GLOBAL module.name; (arg,) REDUCE: what a malicious pickle calls on load."""
    return (b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n"
            + pickle.dumps((arg,), protocol=2)[2:-1] + b"R.")


def test_os_system_in_a_pickle_is_never_called(marker_dir):
    marker = marker_dir / "pwned"
    data = _reduce_pickle("os", "system", f"touch {marker}")
    root, seen = load_stubs(data)
    assert not marker.exists()
    assert isinstance(root, Stub) and root.qualname == "os.system"
    assert root._args == (f"touch {marker}",)
    assert seen == {"os.system"}
    # As an entry it is reported, not run: the code scan says what torch would call, first.
    with pytest.raises(EntryDecodeError, match="os.system") as err:
        decode_entry(data, KeyKind.FX_GRAPH)
    assert err.value.message.code == "foreign-global"
    assert err.value.message.startswith(f"names os.system('touch {marker}'), a global torch does not write")
    assert not marker.exists()


def test_builtins_eval_and_exec_are_stubs_too(tmp_path):
    marker = tmp_path / "pwned2"
    for fn in ("eval", "exec"):
        data = _reduce_pickle("builtins", fn, f"open({str(marker)!r}, 'w')")
        root, _ = load_stubs(data)
        assert isinstance(root, Stub) and root.stub_name == fn
        with pytest.raises(EntryDecodeError, match=f"names builtins.{fn}\\(\"open\\(") as err:
            decode_entry(data, KeyKind.AOT_AUTOGRAD)
        assert err.value.message.code == "foreign-global"
    assert not marker.exists()


def test_malicious_calls_nested_inside_a_valid_entry_are_inert(tmp_path):
    marker = tmp_path / "pwned3"
    data = stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": "2 <= L['t0']",
        "_fx_graph_cache_debug_lines": [Call("os", "system", f"touch {marker}")],
        "fx_kwargs": {"is_backward": Call("subprocess", "getoutput", f"touch {marker}")},
        "runnable_graph_str": Call("builtins", "exec", f"open({str(marker)!r}, 'w')"),
    })
    assert b"system" in data and b"getoutput" in data  # the calls really are in the pickle
    d = decode_entry(data, KeyKind.FX_GRAPH)
    assert not marker.exists()
    assert d.guards_expr == "2 <= L['t0']"
    assert {"os.system", "subprocess.getoutput", "builtins.exec"} <= d.globals_seen
    assert d.is_backward is None and d.hints == () and d.debug_lines == ()
    # The code scan finds each, with the call torch would make; CompiledFxGraph is torch's own.
    calls = {f.name: f.call for f in d.foreign}
    assert calls.keys() == {"builtins.exec", "os.system", "subprocess.getoutput"}
    assert calls["os.system"].startswith("os.system('touch /") and len(calls["os.system"]) <= 240
    assert calls["builtins.exec"].startswith("builtins.exec(\"open('/")  # each argument cut at 80
    assert all(f.uses == ("call",) and f.reason.code == "foreign-global" for f in d.foreign)


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


def _nested_shared(depth: int) -> list:
    """[l, l] nested ``depth`` times: tiny as a pickle, 2**depth leaves if copied naively."""
    node: list = ["leaf"]
    for _ in range(depth):
        node = [node, node]
    return node


def test_shared_nesting_is_converted_once_not_exponentially():
    from fxcache_core.decode.unpickler import plain

    root, _ = load_stubs(pickle.dumps(_nested_shared(60)))
    out = plain(root)
    assert out[0] is out[1]  # shared structure stays shared, visited once


def test_hostile_debug_lines_decode_in_linear_time():
    data = stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {
        "guards_expr": "2 <= L['t0']",
        "_fx_graph_cache_debug_lines": _nested_shared(60) + ["[h] example_inputs[0]: ('s0',)"],
        "fx_kwargs": _nested_shared(60),
    })
    assert len(data) < 2000
    d = decode_entry(data, KeyKind.FX_GRAPH)
    assert d.debug_lines == ("[h] example_inputs[0]: ('s0',)",)
    assert [i.expr for i in d.symints] == ["s0"]


@pytest.mark.parametrize("field,value", [
    ("runnable_graph_str", "s0 = " + "9" * 5000 + "\n"),  # int() would raise past 4300 digits
    ("runnable_graph_str", 42),
    ("_fx_graph_cache_debug_lines", "not a list"),
    ("_fx_graph_cache_debug_lines", [1, None, b"bytes", ["nested"]]),
    ("inductor_post_grad_graph_str", ["a", "list"]),
    ("inductor_post_grad_graph_str", "# File: " * 20000),
    ("fx_kwargs", "x"),
    ("_time_taken_ns", "soon"),
    ("_fx_graph_cache_key", 7),
])
def test_fx_fields_of_unexpected_shape_never_crash(field, value):
    state = {"guards_expr": None, "_fx_graph_cache_debug_lines": [], field: value}
    d = decode_entry(stub_pickle("torch._inductor.output_code", "CompiledFxGraph", state),
                     KeyKind.FX_GRAPH)
    assert d.guards_expr is None and d.hints == ()


@pytest.mark.parametrize("state", [
    {"backward_time_taken_ns": "str", "forward_time_taken_ns": 5},
    {"forward_time_taken_ns": "str"},
    {"compiled_fw": "not a stub"},
    {"sanitized_aot_config": 3},
    {"aot_forward_graph_str": 3.5},
    {"aot_forward_graph_str": "def forward(\n" + "    a: \"Sym(s0)\",  # PlainAOTInput(idx=999999)\n" * 3},
])
def test_aot_fields_of_unexpected_shape_never_crash(state):
    mod = "torch._functorch._aot_autograd.aot_autograd_result"
    d = decode_entry(stub_pickle(mod, "AOTAutogradResult", {"guards_expr": None, **state}),
                     KeyKind.AOT_AUTOGRAD)
    assert d.forward is None


def test_origin_scan_is_linear_and_collects_every_frame():
    from fxcache_core.decode.entries import parse_origin

    assert parse_origin("# File: " * 200_000) is None  # a quadratic scan would take minutes
    g = ("        # File: /a/m.py:3 in helper, code: return x + 1\n"
         "        # File: /a/m.py:9 in outer, code: return helper(x) * 2\n")
    o = parse_origin(g)
    assert (o.function, o.file, o.line, o.functions) == ("helper", "/a/m.py", 3, ("helper", "outer"))


def test_more_source_names_follow_torch_templates():
    x = _src("LocalSource", "d", True)
    key = _src("ConstDictKeySource", x, 0)
    assert source_name(_src("DictGetItemSource", x, key)) == "L['d'][list(dict.keys(L['d']))[0]]"
    assert source_name(_src("DictSubclassGetItemSource", x, key)) == \
        "dict.__getitem__(L['d'], list(dict.keys(L['d']))[0])"
    sliced = _src("GetItemSource", x, ("slice-stub", (1, 4, None)), True)
    assert source_name(sliced) == "L['d'][slice(1, 4, None)]"
    assert source_name(_src("GetItemSource", x, (0, "a"))) == "L['d'][(0, 'a')]"


def test_a_pickle_cannot_alter_the_stub_class_another_read_shares():
    """Stub classes are shared between reads (one per global); BUILD or SETITEM on a
    global must fail as corrupt, never change the class."""
    _p = pickle
    evil = (b"\x80\x04" + _p.GLOBAL + b"os\nsystem\n" + _p.NONE + _p.EMPTY_DICT
            + _p.SHORT_BINUNICODE + b"\x09stub_name" + _p.SHORT_BINUNICODE + b"\x04evil"
            + _p.SETITEM + _p.TUPLE2 + _p.BUILD + _p.STOP)
    with pytest.raises(EntryDecodeError):
        load_stubs(evil)
    evil2 = (b"\x80\x04" + _p.GLOBAL + b"os\nsystem\n" + _p.SHORT_BINUNICODE + b"\x09stub_name"
             + _p.SHORT_BINUNICODE + b"\x04evil" + _p.SETITEM + _p.STOP)
    with pytest.raises(EntryDecodeError):
        load_stubs(evil2)
    root, _ = load_stubs(b"\x80\x04" + _p.GLOBAL + b"os\nsystem\n" + _p.EMPTY_TUPLE + _p.REDUCE + _p.STOP)
    assert type(root).stub_module == "os" and type(root).stub_name == "system"
    for data in (evil, evil2):  # named before the read failed: the code scan still finds it
        with pytest.raises(EntryDecodeError) as err:
            decode_entry(data, KeyKind.FX_GRAPH)
        assert err.value.message.code == "foreign-global" and "import os; os.system" in err.value.message


def test_backward_and_annotated_origins_are_read():
    from fxcache_core.decode.entries import parse_origin

    g = ("        # Backward of forward node: File: /a/m.py:36 in train_step, code: loss = f(x)\n"
         "        # Annotation: {'stage': 1} recompute: MUST_SAVE File: /a/m.py:12 in helper, code: y\n"
         "        # No stacktrace found for following nodes\n")
    o = parse_origin(g)
    assert (o.function, o.file, o.line, o.functions) == ("train_step", "/a/m.py", 36,
                                                          ("train_step", "helper"))
    assert parse_origin("x = 'File: /a/m.py:3 in f, code: y'\n") is None  # not a comment
    assert parse_origin("# Backward of forward node: File: " * 100_000) is None


def test_hints_come_from_the_get_args_harness_by_placeholder_name_or_position():
    from fxcache_core.decode.entries import GraphInput, parse_get_args, symbol_hints

    src = ("def call(args):\n    pass\n\n\ndef get_args():\n"
           "    from torch._dynamo.testing import rand_strided\n"
           "    primals_3 = 7\n"
           "    primals_4 = rand_strided((7, 4), (4, 1), device='cpu', dtype=torch.float32)\n"
           "    primals_5 = 42\n"
           "    primals_6 = -3\n"
           "    return [primals_3, primals_4, primals_5, primals_6]\n\n\n"
           "def benchmark_compiled_module(args, times=10, repeat=10):\n    arg0_1 = 99\n")
    h = parse_get_args(src)
    assert h.ints == {"primals_3": 7, "primals_5": 42, "primals_6": -3}
    assert h.order == ("primals_3", "primals_4", "primals_5", "primals_6")
    inputs = (GraphInput(0, "primals_3", "Sym(s77)", "s77"), GraphInput(1, None, "f32[s77, 4]"),
              GraphInput(2, "primals_5", "Sym(u0)", "u0"),            # unbacked: 42 is made up
              GraphInput(3, None, "Sym(s9)", "s9"))                   # no name: by position
    assert symbol_hints(inputs, src) == (("s77", 7), ("s9", -3))
    # runnable_graph_str (torch 2.13) only adds what the harness did not give.
    assert symbol_hints(inputs, src, "s77 = 1\ns5 = 2\n\nimport os\n") == (("s77", 7), ("s9", -3), ("s5", 2))
    assert symbol_hints(inputs, None) == () and parse_get_args("def get_args():\n").ints == {}
    huge = "\ndef get_args():\n" + "    a = 1\n" * 300_000
    assert len(parse_get_args(huge).ints) == 1  # bounded: one name, and at most MAX_GRAPH_LINES lines


def test_sources_added_in_torch_2_14_and_2_15_follow_their_templates():
    cv = _src("GlobalSource", "cv")
    assert source_name(_src("ContextVarGetSource", cv, False, None)) == "G['cv'].get()"
    assert source_name(_src("ContextVarGetSource", cv, True, 3)) == "G['cv'].get(3)"
    assert source_name(_src("ContextVarGetSource", cv, True, _src("Opaque"))) is None
    x = _src("LocalSource", "x", True, None, False, False, False)
    assert source_name(_src("UnwrapCollectiveTensorSource", x)) == "___unwrap_async_collective_tensor(L['x'])"
    assert source_name(_src("ListReverseIteratorBackingListSource", x)) == \
        "___list_reverseiterator_backing_list(L['x'])"


# --- memory: no entry can make decoding allocate more than its budget ----------------

_MEMO_ATTACK = r'''
import json, resource, struct, sys, time
from fxcache_core.catalog.reader import Catalog
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from pathlib import Path

t, cpu = time.perf_counter(), time.process_time()
cat = Catalog(scan_cache(Path(sys.argv[1])))
out = {}
for e in cat.scan.entries():
    d = cat.load(e)
    out[e.name] = [type(d).__name__, getattr(d, "cause", None), getattr(d, "reason", None)]
# This process's own peak RSS and CPU time: what the decoding costs, whatever else
# the machine runs at the time (wall time is reported, for a message only).
print(json.dumps({"results": out, "seconds": time.perf_counter() - t,
                  "cpu_seconds": time.process_time() - cpu,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''


def _protocol2(obj) -> bytes:
    import io

    from tests.synth import _Pickler

    buf = io.BytesIO()
    _Pickler(buf, protocol=2).dump(obj)
    return buf.getvalue()


def test_a_huge_memo_index_cannot_make_decoding_allocate_gigabytes(tmp_path):
    """The 9-byte entry ``\\x80\\x02N r <4-byte index> .`` makes the C unpickler
    allocate and zero-fill a memo of twice the index (2 GB for 2**27, 32 GB for
    2**31). Decoded in a fresh process, with every variant in one cache: that
    process's own peak RSS stays far under 300 MB and its CPU time for the decoding
    under 2 s (zero-filling gigabytes would cost more; a generous timeout is the
    stall detector), measured in the child so that load elsewhere cannot fail it;
    each is reported as what it holds."""
    import json
    import struct
    import subprocess
    import sys

    from tests.cli_run import REPO_ROOT, child_env
    from tests.synth import Fake, fake_key, write_entry

    key = fake_key(KeyKind.FX_GRAPH, "memo")
    valid = _protocol2(Fake("torch._inductor.output_code", "CompiledFxGraph", guards_expr="2 <= L['t0']",
                            _fx_graph_cache_key=key, fx_kwargs={"is_backward": False}))
    entries = {
        "binput27": b"\x80\x02Nr" + struct.pack("<I", 2**27) + b".",
        "binput32": b"\x80\x02Nr" + struct.pack("<I", 2**32 - 1) + b".",
        "textput": b"\x80\x02Np99999999999999\n.",
        "bytes8": b"\x80\x04\x8e" + struct.pack("<Q", 2**40) + b"xx.",
        # A valid entry holding one LONG_BINPUT at 2**31: still a valid entry.
        "valid+put": valid[:-1] + b"r" + struct.pack("<I", 2**31) + b".",
    }
    names = {}
    for label, data in entries.items():
        names[write_entry(tmp_path, KeyKind.FX_GRAPH, key, data).name] = label
    proc = subprocess.run([sys.executable, "-c", _MEMO_ATTACK, str(tmp_path)], cwd=REPO_ROOT,
                          env=child_env({"FXCACHE_JOBS": "1"}), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    got = json.loads(proc.stdout)
    res = {names[n]: r for n, r in got["results"].items()}
    assert got["maxrss_kb"] < 300 * 1024, got["maxrss_kb"]
    assert got["cpu_seconds"] < 2, (got["cpu_seconds"], got["seconds"])
    assert res["valid+put"][0] == "DecodedEntry"  # a sparse memo is still a valid pickle
    for label in ("binput27", "binput32", "textput"):
        assert res[label] == ["Unreadable", "corrupt", "entry holds a NoneType, not a compiled graph"], label
    assert res["bytes8"][:2] == ["Unreadable", "corrupt"] and "truncated" in res["bytes8"][2]


_OVER_BUDGET = r'''
import json, sys
from pathlib import Path
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode import memlimit
from fxcache_core.prune.plan import plan_gc
from fxcache_core.prune.policy import GcPolicy
if not memlimit.ENFORCED:
    print(json.dumps({"enforced": False}))
    raise SystemExit(0)
memlimit.BASE_BUDGET_BYTES, memlimit.BUDGET_PER_BYTE, memlimit._SLACK = 1 << 20, 0, 0
cat = Catalog(scan_cache(Path(sys.argv[1])))
(e,) = cat.scan.entries()
d = cat.load(e)
print(json.dumps({"enforced": True, "unreadable": isinstance(d, Unreadable),
                  "cause": getattr(d, "cause", None), "reason": getattr(d, "reason", None),
                  "gc_removals": len(plan_gc(cat, GcPolicy(unreadable=True)).removals)}))
'''


def test_an_entry_that_needs_more_than_the_budget_is_too_large_not_corrupt(tmp_path):
    """What only more memory could decode is not evidence of a bad entry: gc
    --unreadable keeps it (a budget shrunk to 1 MiB stands in for a huge entry).
    Decoded in a child of its own: the budget is the whole process's address space,
    which no other thread may change meanwhile."""
    import json
    import subprocess
    import sys

    from tests.cli_run import REPO_ROOT, child_env
    from tests.synth import fake_key, write_entry

    key = fake_key(KeyKind.FX_GRAPH, "big")
    # Its first field is one 3 MB string, which neither unpickler can make within 1 MiB
    # (300,000 small ones after it: the C unpickler's failure may free memory the
    # pure-Python one then reuses, and whether it does varies from run to run).
    big = stub_pickle("torch._inductor.output_code", "CompiledFxGraph",
                      {"source_code": "x" * 3_000_000, "guards_expr": None,
                       "_fx_graph_cache_debug_lines": [str(i) for i in range(300_000)]})
    write_entry(tmp_path, KeyKind.FX_GRAPH, key, big)
    proc = subprocess.run([sys.executable, "-c", _OVER_BUDGET, str(tmp_path)], cwd=REPO_ROOT,
                          env=child_env({"FXCACHE_JOBS": "1"}), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    if not got["enforced"]:
        pytest.skip("RLIMIT_AS is only enforced on Linux")
    assert got["unreadable"] and got["cause"] == "too-large" and "memory budget" in got["reason"], got
    assert got["gc_removals"] == 0


def test_a_huge_int_in_an_int64_field_is_dropped_not_kept_to_crash_printing():
    """A time field holding a 20,000-bit int (LONG4) would break the index's JSON
    and any rendering (Python will not print an int of over 4,300 digits)."""
    from fxcache_core.state.index import from_json, light, to_json

    data = stub_pickle("torch._inductor.output_code", "CompiledFxGraph",
                       {"guards_expr": None, "_time_taken_ns": 2**20000})
    d = decode_entry(data, KeyKind.FX_GRAPH)
    assert d.compile_time_ns is None
    assert from_json(to_json(light(d))) == light(d)


@pytest.mark.parametrize("opcode", [b"\x90", b"e"], ids=["ADDITEMS calls add", "APPENDS calls extend"])
def test_each_call_a_pickle_makes_counts_once_against_the_object_bound(opcode):
    """GLOBAL (one call: find_class), NEWOBJ (one: __new__), then three items through
    ``add`` each (ADDITEMS on a non-set) or one ``extend`` (APPENDS): a bound of exactly
    the calls made reads it, one less refuses it. A stub method that counted the call
    it delegates to (``add`` through a counted ``append``) would refuse the first."""
    data = b"\x80\x04cmod\nname\n)\x81(K\x01K\x02K\x03" + opcode + b"."
    calls = 5 if opcode == b"\x90" else 3
    root, _ = load_stubs(data, max_objects=calls)
    assert root._items == [1, 2, 3]
    with pytest.raises(EntryDecodeError) as err:
        load_stubs(data, max_objects=calls - 1)
    assert err.value.message.code == "too-many-objects"


def test_a_stub_keeps_only_what_the_pickle_recorded_on_it():
    """A stub made with no arguments, state, items or dict entries holds nothing of its
    own: every empty value is the class's shared, read-only default."""
    root, _ = load_stubs(b"\x80\x04cmod\nname\n)\x81.")
    assert vars(root) == {}
    assert (root._args, root._state, root._items, dict(root._kwargs), dict(root._dict)) == ((), None, (), {}, {})
    with pytest.raises(TypeError):
        root._dict["planted"] = 1  # the shared default cannot be written through


_ROOT_OF_ATTACK = r'''
import json, resource, sys
from fxcache_core.decode.entries import entry_root
from fxcache_core.decode.unpickler import Stub
got = [entry_root(p) for p in sys.argv[1:]]
print(json.dumps({"roots": [None if r is None else "Stub" if isinstance(r, Stub) else "other" for r in got],
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''


def test_a_workers_field_read_of_an_entry_keeps_the_decoding_budget(tmp_path):
    """entry_root, which the match workers' tasks read a graph's text or lines through,
    decodes within the memory budget: a memo index that asks the C unpickler for
    gigabytes is None, in a fresh process whose peak stays small; an entry's object is its
    root, a missing file or other bytes None (synthetic bytes: hostility)."""
    import json
    import struct
    import subprocess
    import sys

    from tests.cli_run import REPO_ROOT, child_env

    files = {"memo": b"\x80\x02Nr" + struct.pack("<I", 2**27) + b".", "garbage": b"not a pickle",
             "none": b"\x80\x02N.", "stub": stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {"guards_expr": None})}
    paths = []
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))
    proc = subprocess.run([sys.executable, "-c", _ROOT_OF_ATTACK, *paths, str(tmp_path / "missing")],
                          cwd=REPO_ROOT, env=child_env({}), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["roots"] == [None, None, None, "Stub", None], got
    assert got["maxrss_kb"] < 300 * 1024, got["maxrss_kb"]
