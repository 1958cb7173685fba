"""A command that reads only some fields of an entry (a projection: ``LIGHT`` for the
index's rows, ``ORIGIN`` for ``ls``) reads them as the whole decode does, and judges
an entry valid or corrupt exactly as the whole decode does: one field layer, the same
unpickle.

On the real caches of the recorded torch builds (tests/fixtures), and on synthetic
damaged and hostile entries (tests/synth.py; no compile makes them).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import LIGHT, ORIGIN, decode_entry
from fxcache_core.decode.printed import head_lines
from fxcache_core.errors import EntryDecodeError
from fxcache_core.state.index import light
from tests.synth import Fake, dumps, fake_key, fx_entry_bytes, stub_pickle, write_entry
from tests.unit.test_total_fields import HUGE, _huge_aot

_ROOTS = sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("**/cache"))


def _damaged() -> list[tuple[KeyKind, bytes]]:
    good = fx_entry_bytes("L['t0'] <= 8", "fk", origin=("f", "/m.py", 3))
    return [
        (KeyKind.FX_GRAPH, good[:40]), (KeyKind.FX_GRAPH, b"not a pickle"),
        (KeyKind.FX_GRAPH, dumps({"guards_expr": "True"})),
        (KeyKind.FX_GRAPH, stub_pickle("torch._inductor.output_code", "CompiledFxGraph", {"guards_expr": 7})),
        (KeyKind.AOT_AUTOGRAD, good), (KeyKind.FX_GRAPH, b"\x80\x02Nr" + struct.pack("<I", 2**31) + b"."),
        (KeyKind.FX_GRAPH, fx_entry_bytes("L['t0'] <= 8", "fk", extra_lines=(f"[abc] example_inputs[{HUGE}]: ('s1',)",))),
        (KeyKind.AOT_AUTOGRAD, _huge_aot("fk")),
        (KeyKind.FX_GRAPH, stub_pickle("posix", "system", {"guards_expr": "True"})),
        (KeyKind.AOT_AUTOGRAD, dumps(Fake("torch._functorch._aot_autograd.aot_autograd_result", "AOTAutogradResult",
                                          guards_expr=None, compiled_fw=Fake("os", "system", fx_graph_cache_info=7)))),
    ]


def _cases() -> list[tuple[KeyKind, bytes]]:
    real = [(e.kind, e.path.read_bytes()) for root in _ROOTS for e in scan_cache(root).entries()]
    assert len(real) >= 20
    return real + _damaged()


def _decode(data: bytes, kind: KeyKind, fields=None):
    try:
        return decode_entry(data, kind) if fields is None else decode_entry(data, kind, fields)
    except EntryDecodeError as e:
        return ("corrupt", type(e).__name__, str(e), getattr(e.args[0], "code", None))


def test_the_light_projection_is_the_light_form_of_the_whole_entry_and_judges_alike():
    for kind, data in _cases():
        whole, part = _decode(data, kind), _decode(data, kind, LIGHT)
        assert part == (whole if isinstance(whole, tuple) else light(whole)), data[:60]


def test_the_origin_projection_reads_the_origin_and_forward_graph_and_judges_alike():
    seen = 0
    for kind, data in _cases():
        whole, part = _decode(data, kind), _decode(data, kind, ORIGIN)
        if isinstance(whole, tuple):
            assert part == whole
            continue
        seen += whole.origin is not None
        assert (part.origin, part.guards_expr, part.type_name, part.foreign) == (
            whole.origin, whole.guards_expr, whole.type_name, whole.foreign)
        assert (part.forward and (part.forward.key, part.forward.guards_expr)) == (
            whole.forward and (whole.forward.key, whole.forward.guards_expr))
        assert part.inputs == part.hints == part.debug_lines == () and part.backward is None
    assert seen >= 20


def test_ls_reads_the_same_entries_corrupt_as_a_whole_decode(tmp_path):
    fx = fake_key(KeyKind.FX_GRAPH, "fx")
    for i, (kind, data) in enumerate(_damaged()):
        write_entry(tmp_path, kind, fx if kind is KeyKind.FX_GRAPH else fake_key(kind, "aot"), data, name=f"e{i}")
    scan = scan_cache(tmp_path)
    whole = {u.entry.path: (u.reason, u.cause) for u in Catalog(scan).unreadable()}
    origins = Catalog(scan).origins(scan.entries())
    assert {e.path: (d.reason, d.cause) for e in scan.entries()
            if isinstance(d := origins[e.file.where], Unreadable)} == whole
    assert len(whole) == 7


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\n\n", "\r\n", "x\r\ny\rz\x0bq\x1c\u2028w\x85", "\n\n\n  \n"])
def test_head_lines_are_the_first_lines_splitlines_gives(text):
    assert list(head_lines(text, 10**6)) == text.splitlines()
    assert list(head_lines(text, 2)) == text.splitlines()[:2]


def test_a_decoded_entry_is_made_with_the_dataclass_fields_in_order_with_their_defaults():
    """DecodedEntry writes its own __init__ (one dict update): its parameters are the
    fields, in order, with the same defaults, and it stays frozen."""
    import dataclasses
    import inspect

    from fxcache_core.decode.entries import DecodedEntry

    params = list(inspect.signature(DecodedEntry.__init__).parameters.values())[1:]
    fields = dataclasses.fields(DecodedEntry)
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields]
    d = DecodedEntry(KeyKind.FX_GRAPH, "t", None, ())
    assert dataclasses.replace(d, fx_key="k") == DecodedEntry(KeyKind.FX_GRAPH, "t", None, (), fx_key="k")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.fx_key = "k"  # type: ignore[misc]
