"""Parameters a call leaves out, read from their defaults in the source.

An int parameter left at a literal default (``h=2``) that a key takes as a SymInt
(a guard placeholder whose source is ``L['h']``) has that default as its value: the
frame's local when Dynamo enters it. A tensor parameter whose default is a value of the
source (``bias=_ZERO``) is not None and not seen by the cache. Synthetic source files
and symbols: the rules read the ``def``, not torch (tests/torch/test_int_arguments.py
and the evaluation families compile real keys)."""

from __future__ import annotations

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.key_lookup import _with_int_defaults
from fxcache_core.lookup.optional_tensors import tensor_default_unseen
from fxcache_core.reasons import code_of

SRC = '''import torch

H = 2
_ZERO = torch.zeros(8)


def heads(x, h=2, n=-3, flag=True, m=H, w=None, bias=_ZERO, *, k=4):
    return x.view(h, -1)[:k] + bias
'''

SYMBOLS = tuple(SymbolInfo(f"t{i}", f"s{i}", src, None) for i, src in enumerate(
    ("L['x'].size()[0]", "L['h']", "L['n']", "L['flag']", "L['m']", "L['k']")))


def _frame(tmp_path, src: str = SRC, **kw) -> CompiledFrom:
    path = tmp_path / "fns.py"
    path.write_text(src)
    return CompiledFrom(function="heads", file=str(path), line=7, params=("x", "h", "n", "flag", "m", "w", "bias"), **kw)


def test_a_left_out_int_literal_default_binds_the_placeholder_that_reads_it(tmp_path):
    frame = _frame(tmp_path)
    inputs = {"L['x']": object()}
    got = _with_int_defaults(SYMBOLS, inputs, lambda: frame)
    assert {k: v for k, v in got.items() if k != "L['x']"} == {"L['h']": 2, "L['n']": -3, "L['k']": 4}
    # bool, a name (not a literal) and None are not bound


def test_a_given_value_wins_over_the_default(tmp_path):
    frame = _frame(tmp_path)
    got = _with_int_defaults(SYMBOLS, {"L['h']": 4}, lambda: frame)
    assert got["L['h']"] == 4 and got["L['k']"] == 4
    by_position = _with_int_defaults(SYMBOLS, {"L['args'][1]": 5}, lambda: frame)
    assert "L['h']" not in by_position and by_position["L['n']"] == -3  # args[1] is h


def test_nothing_is_bound_where_the_frame_is_not_the_def_as_called(tmp_path):
    inputs = {"L['x']": object()}
    for frame in (
        _frame(tmp_path, whole_module=True),
        _frame(tmp_path, parent="heads"),  # a resumed frame: its locals are not the arguments
        _frame(tmp_path, wrappers=(("wrapper", "w.py", 3),)),
        CompiledFrom(function="heads", file=str(tmp_path / "gone.py"), line=7),  # source not readable
        _frame(tmp_path, SRC.replace("def heads(x, h=2", "def heads(x, h=3", 1).replace("\n\n\ndef", "\n\n\n\ndef"),
               ),  # the def is no longer at the line the key records
        _frame(tmp_path, SRC + "\nfrom functools import partial\nheads4 = partial(heads, h=4)\n"),
    ):
        assert _with_int_defaults(SYMBOLS, inputs, lambda f=frame: f) is inputs, frame
    assert _with_int_defaults(SYMBOLS, inputs, None) is inputs


def test_a_tensor_default_of_the_source_is_said_unseen_not_none(tmp_path):
    frame = _frame(tmp_path)
    why = tensor_default_unseen("L['bias']", "f32[8][1]cpu", frame)
    assert why is not None and code_of(why) == "tensor-default-unseen"
    assert "_ZERO" in why.text and "None" in why.text and "f32[8][1]cpu" in why.text
    assert tensor_default_unseen("L['w']", "f32[8][1]cpu", frame) is None  # None: the optional-tensor rules
    assert tensor_default_unseen("L['x']", "f32[8][1]cpu", frame) is None  # no default
    assert tensor_default_unseen("L['bias']", "f32[8][1]cpu", None) is None
