"""Synthetic cache layouts and pickles for damaged-input and edge-case tests.

Real entries come from torch (see conftest's ``real_cache``); these helpers
build directory shapes and pickles by hand, without torch: :class:`Fake`
objects pickle as instances of any named class, which need not exist here.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fxcache_core.cache.keys import KeyKind, sha256_hash


class Fake:
    """Pickles as ``module.name`` built by NEWOBJ and BUILD(state)."""

    def __init__(self, module: str, name: str, **state: Any):
        self.module, self.name, self.state = module, name, state


class Call:
    """Pickles as a call ``module.name(*args)`` on load (REDUCE): what an attack looks like."""

    def __init__(self, module: str, name: str, *args: Any):
        self.module, self.name, self.args = module, name, args


class _FakeClass:
    def __init__(self, module: str, name: str):
        self.module, self.name = module, name


class _Pickler(pickle._Pickler):  # the pure-Python pickler lets us add a dispatch entry
    dispatch = dict(pickle._Pickler.dispatch)

    def _save_fake_class(self, obj: _FakeClass) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())

    def _save_fake(self, obj: Fake) -> None:
        import copyreg

        self.save_reduce(copyreg.__newobj__, (_FakeClass(obj.module, obj.name),),
                         state=obj.state)

    def _save_call(self, obj: Call) -> None:
        self._save_fake_class(_FakeClass(obj.module, obj.name))
        self.save(obj.args)
        self.write(pickle.REDUCE)

    dispatch[_FakeClass] = _save_fake_class
    dispatch[Fake] = _save_fake
    dispatch[Call] = _save_call


def dumps(obj: Any) -> bytes:
    buf = io.BytesIO()
    _Pickler(buf, protocol=4).dump(obj)
    return buf.getvalue()


def fake_key(kind: KeyKind, seed: str) -> str:
    return kind.prefix + sha256_hash(seed.encode())


def write_entry(root: Path, kind: KeyKind, key: str, content: bytes, name: str | None = None) -> Path:
    d = kind.key_dir(root, key)
    d.mkdir(parents=True, exist_ok=True)
    p = d / (name or sha256_hash(content))
    p.write_bytes(content)
    return p


def stub_pickle(module: str, name: str, state: dict) -> bytes:
    """A pickle of one ``module.name`` object with ``state``."""
    return dumps(Fake(module, name, **state))


def graph_str(origin: tuple[str, str, int] | None, placeholders: str = "") -> str:
    """A printed graph whose first op is annotated ``# File: FILE:LINE in FN`` (``origin``:
    (function, file, line)), as torch's ``print_readable`` writes it."""
    body = "class GraphModule(torch.nn.Module):\n    def forward(\n        self,\n" + placeholders + "    ):\n"
    if origin is not None:
        fn, file, line = origin
        body += f"        # File: {file}:{line} in {fn}, code: return x + 1\n        add = x + 1\n"
    return body


def fx_entry_bytes(guards_expr: str | None, key: str = "", symbols: tuple[str, ...] = ("s0",),
                   origin: tuple[str, str, int] | None = None, extra_lines: tuple[str, ...] = ()) -> bytes:
    """A minimal CompiledFxGraph-shaped pickle with the fields fxcache reads; ``origin``:
    (function, file, line) its graph string names; ``extra_lines``: more debug lines
    (``[hash] name: value``), e.g. config components."""
    lines = [f"[abc] example_inputs[{i}]: ('{s}',)" for i, s in enumerate(symbols)] + list(extra_lines)
    state = {
        "guards_expr": guards_expr,
        "_fx_graph_cache_key": key,
        "_fx_graph_cache_debug_lines": lines,
        "fx_kwargs": {"is_backward": False},
        "runnable_graph_str": "".join(f"{s} = 8\n" for s in symbols) + "\nimport torch\n",
    }
    if origin is not None:
        state["inductor_post_grad_graph_str"] = graph_str(origin)
    return stub_pickle("torch._inductor.output_code", "CompiledFxGraph", state)


_SRC = "torch._dynamo.source"


def local_source(name: str) -> Call:
    """Dynamo's ``LocalSource(name)``: ``L['name']``."""
    return Call(_SRC, "LocalSource", name, True)


def size_source(name: str, dim: int) -> Call:
    """Dynamo's ``TensorPropertySource(LocalSource(name), SIZE, dim)``: ``L['name'].size()[dim]``."""
    return Call(_SRC, "TensorPropertySource", local_source(name), Call(_SRC, "TensorProperty", 0), dim)


def aot_entry_with_sources(guards_expr: str | None, fw: tuple[str, str | None],
                           inputs: list[tuple[str, object]], origin: tuple[str, str, int] | None = None) -> bytes:
    """An AOTAutogradResult whose graph inputs carry Dynamo sources: ``inputs`` is
    (printed type, source) per flat input in order, e.g. ``("Sym(s0)", size_source("x", 0))``
    and ``("f32[s0, 3][3, 1]cpu", local_source("x"))``."""
    mod = "torch._functorch._aot_autograd.aot_autograd_result"
    ph = "".join(f'        arg{i}_1: "{t}",  # PlainAOTInput(idx={i})\n' for i, (t, _) in enumerate(inputs))
    return dumps(Fake(mod, "AOTAutogradResult",
                      guards_expr=guards_expr,
                      compiled_fw=Fake(mod, "CompiledForward", fx_graph_cache_info=(fw[0], []),
                                       fx_graph_guard_expr=fw[1]),
                      compiled_bw=None,
                      aot_forward_graph_str=graph_str(origin, ph),
                      sanitized_aot_config=Fake("torch._functorch._aot_autograd.schemas", "CacheableAOTConfig",
                                                aot_autograd_arg_pos_to_source=[s for _, s in inputs])))


def aot_entry_bytes(guards_expr: str | None, fw: tuple[str, str | None],
                    bw: tuple[str, str | None] | None = None) -> bytes:
    """A minimal AOTAutogradResult-shaped pickle pointing at FX (key, guards) pairs."""
    mod = "torch._functorch._aot_autograd.aot_autograd_result"
    return dumps(Fake(mod, "AOTAutogradResult",
                      guards_expr=guards_expr,
                      compiled_fw=Fake(mod, "CompiledForward", fx_graph_cache_info=(fw[0], []),
                                       fx_graph_guard_expr=fw[1]),
                      compiled_bw=None if bw is None else Fake(
                          mod, "CompiledBackward", fx_graph_cache_info=(bw[0], []),
                          fx_graph_guard_expr=bw[1]),
                      aot_forward_graph_str=(
                          "class GraphModule(torch.nn.Module):\n    def forward(\n        self,\n"
                          '        arg0_1: "Sym(s0)",  # PlainAOTInput(idx=0)\n'
                          '        arg1_1: "f32[s0][1]cpu",  # PlainAOTInput(idx=1)\n    ):\n'),
                      sanitized_aot_config=None))


TRITON_LAYOUT = Path(__file__).resolve().parent / "data" / "triton_cache"
"""A Triton cache layout written by Triton's own ``FileCacheManager`` (see
tools/make_triton_layout.py): three kernel dirs with IR stages, a cubin,
metadata and a ``__grp__`` group file each. No GPU made it: the payloads are
stand-ins; names, dirs and group files are Triton's."""


def install_triton_layout(dst: Path) -> list[Path]:
    """Copy the Triton layout fixture to ``dst`` (a ``$TRITON_CACHE_DIR``, or an
    Inductor cache dir's ``triton/<device>``), with its group files' absolute
    paths pointing into ``dst`` as Triton writes them. Returns the kernel dirs."""
    import shutil

    shutil.copytree(TRITON_LAYOUT, dst, dirs_exist_ok=True)
    for grp in dst.rglob("__grp__*.json"):
        grp.write_text(grp.read_text().replace("@@TRITON_CACHE_DIR@@", str(dst)))
    return sorted(p for p in dst.iterdir() if p.is_dir())


def best_config_bytes(triton_cache_hash: str = "") -> bytes:
    """An autotune result as torch's ``LocalAutotuneCache`` writes it
    (``<root>/<key[1:3]>/<key>.best_config``, torch/_inductor/runtime/autotune_cache.py)."""
    import json

    return json.dumps({"XBLOCK": 128, "num_warps": 4, "num_stages": 1, "configs_hash": "0" * 64,
                       "found_by_coordesc": False, "time_taken_ms": 12,
                       "triton_cache_hash": triton_cache_hash}).encode()


# --- CPU bombs: pickles that cost more to read than any budget ------------------------


def _nonce(nonce: int) -> bytes:
    """Opcodes that push the string ``nonce`` and drop it (SHORT_BINSTRING, POP): other
    bytes, so another sha256 name, for the same pickle."""
    word = str(nonce).encode()
    return b"U" + bytes([len(word)]) + word + b"0" if nonce else b""


def hash_bomb(depth: int = 60, nonce: int = 0) -> bytes:
    """A pickle of ``{t_depth: None}`` where ``t_0 = ()`` and ``t_i = (t_{i-1}, t_{i-1})``
    through the memo: a few hundred bytes whose ``SETITEM`` hashes 2**depth tuples,
    inside C (torch's ``pickle.loads`` never comes back either). ``nonce`` changes the
    bytes (:func:`_nonce`), not what they cost."""
    out = bytearray(b"\x80\x02" + _nonce(nonce))
    out += b"}q\x00)q\x010"  # EMPTY_DICT (memo 0); t_0 = () (memo 1), popped
    for i in range(1, depth + 1):  # BINGET i twice, TUPLE2, BINPUT i+1, POP
        out += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86q" + bytes([i + 1]) + b"0"
    return bytes(out + b"h" + bytes([depth + 1]) + b"Ns.")  # t_depth: None, SETITEM, STOP


def hash_flood(n: int = 100_000, nonce: int = 0) -> bytes:
    """A pickle of a ``frozenset`` of ``n`` distinct ints that all hash to 0 (multiples
    of 2**61 - 1, the modulus of Python's int hash): building it compares each new
    item with every earlier one, n**2 / 2 comparisons inside C (about a minute for
    100,000, in 1.2 MB). Another shape of the family: quadratic, not exponential.
    ``nonce``: as :func:`hash_bomb`'s."""
    return b"\x80\x04" + _nonce(nonce) + _flood_body(n)


@functools.lru_cache(maxsize=2)
def _flood_body(n: int) -> bytes:
    out = bytearray(b"(")  # MARK
    m = (1 << 61) - 1
    for i in range(1, n + 1):
        v = (i * m).to_bytes(((i * m).bit_length() + 8) // 8, "little", signed=True)
        out += b"\x8a" + bytes([len(v)]) + v  # LONG1
    return bytes(out + b"\x91.")  # FROZENSET, STOP

HOSTILE_NAMES = ("</script><script>alert(1)</script>", '"><img src=x onerror=alert(1)>')
"""Names that would run script if a page wrote them as markup (``fxcache report``'s tests)."""
REPORT_GUARDS = ("2 <= L['t0'] <= 7 and 2 <= L['t1']", "16 <= L['t0'] and 2 <= L['t1']")
"""The two entries of :func:`report_cache`'s key: ``x.size(0)`` in 2..7, and 16 and up."""


def report_cache(root: Path) -> dict[str, Any]:
    """A small cache, and a trace of a run on it, whose every name a report shows is
    hostile (synthetic because hostile: torch writes no such names). One FX key with the
    two entries of :data:`REPORT_GUARDS` over ``x.size(0)`` and ``x.size(1)`` (sources
    from the AOTAutograd entry that loads the first), compiled from a function and a file
    whose names are markup; the second entry's file name is markup too. The trace
    (``root/trace``) is a run of a function named :data:`HOSTILE_NAMES` ``[0]`` in a file
    named ``[1]``: a hit on the first entry at x=[4, 3], then a guard miss at x=[10, 3].
    Returns ``{"cache", "trace", "fx", "aot", "function", "file", "entry"}``."""
    from tests.synth_trace import artifact, clock, rec, start, symbol, tensor, write_trace

    cache = root / "cache"
    fn, file = "<script>pwned<img.onerror>", f"/src/{HOSTILE_NAMES[0]}/{HOSTILE_NAMES[1]}.py"
    fx = fake_key(KeyKind.FX_GRAPH, "report")
    odd = HOSTILE_NAMES[1].replace("/", "_")
    for g, name in zip(REPORT_GUARDS, (None, odd), strict=True):
        write_entry(cache, KeyKind.FX_GRAPH, fx, fx_entry_bytes(g, fx, ("s0", "s1"), origin=(fn, file, 12)), name)
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "report")
    write_entry(cache, KeyKind.AOT_AUTOGRAD, aot, aot_entry_with_sources(
        REPORT_GUARDS[0], (fx, REPORT_GUARDS[0]),
        [("Sym(s0)", size_source("x", 0)), ("Sym(s1)", size_source("x", 1)),
         ("f32[s0, s1][s1, 1]cpu", local_source("x"))], origin=(fn, file, 12)))
    components = ["[abc] example_inputs[0]: ('s0',)", "[abc] example_inputs[1]: ('s1',)"]
    lookup = {"key": fx, "time_saved_ns": 2e9, "time_taken_ns": 5e8, "cache_event_time": 1.7e18,
              "components": components}
    second = {"frame_id": 0, "frame_compile_id": 1, "attempt": 0}
    text = (clock() + start(HOSTILE_NAMES[0], HOSTILE_NAMES[1])
            + symbol("s0", "4", "L['x'].size()[0]") + symbol("s1", "3", "L['x'].size()[1]")
            + tensor("L['x']", ["s0", "s1"], ["s1", 1])
            + artifact("fx_graph_cache_hit", {**lookup, "cache_state": "hit", "cache_status_detailed": "hit",
                                              "cache_status_guard_expr": REPORT_GUARDS[0]})
            + rec("str", [HOSTILE_NAMES[1], 8])
            + rec("dynamo_start", {"stack": [{"line": 3, "name": HOSTILE_NAMES[0], "filename": 8}]}, **second)
            + rec("create_symbol", {"symbol": "s0", "val": "10", "source": "L['x'].size()[0]",
                                    "vr": "[2, int_oo]"}, **second)
            + rec("create_symbol", {"symbol": "s1", "val": "3", "source": "L['x'].size()[1]",
                                    "vr": "[2, int_oo]"}, **second)
            + rec("artifact", {"name": "fx_graph_cache_miss", "encoding": "json"}, json.dumps(
                {**lookup, "cache_state": "miss", "cache_status_detailed": "guard_miss",
                 "cache_status_guard_expr": REPORT_GUARDS[1]}), **second))
    return {"cache": cache, "trace": write_trace(root / "trace", text), "fx": fx, "aot": aot,
            "function": fn, "file": file, "entry": odd}


@functools.cache
def torch_importing_module() -> str:
    """The path of a module file that only imports ``torch`` and ``torch.nn.functional as
    F`` (written once per session, removed at exit): the ``file`` of a function parsed by
    :func:`one_def` whose calls a rule reads as torch's only where its module's imports say
    so (fxcache_core/lookup/torch_names.py)."""
    import tempfile

    from tests.harness.cleanup import remove_at_exit

    d = tempfile.mkdtemp(prefix="fxcache-test-module-")
    remove_at_exit(d)
    path = Path(d) / "fns.py"
    path.write_text("import torch\nimport torch.nn.functional as F\n")
    return str(path)


def one_def(src: str) -> ast.FunctionDef:
    """The one function ``src`` defines, parsed with ``ast`` (never run), as the
    lookup rules read a compiled function's source."""
    (fn,) = ast.parse(src).body
    assert isinstance(fn, ast.FunctionDef)
    return fn


def op_graph(file: str, line: int, code: str, ops: Sequence[str], *, tensor: str, returns: str,
             fn: str = "f") -> str:
    """A printed AOTAutograd forward graph of one tensor input (``tensor``: its printed
    type, ``f32[4, 8][8, 1]cpu``) whose ``ops`` were traced from ``file:line`` in ``fn``
    (``code``: that line's text), returning the node ``returns``, as torch prints it."""
    out = ["class <lambda>(torch.nn.Module):", f'    def forward(self, arg0_1: "{tensor}"):',
           f"        # File: {file}:{line} in {fn}, code: {code}"]
    return "\n".join([*out, *(f"        {op}" for op in ops), f"        return ({returns},)"])
