"""What a call's tensors say about a key that takes nothing from them, or that takes a
tensor the call leaves out (fxcache_core/lookup/int_args.py), and which parameters a
function's source never reads (fxcache_core/functions/frames.py). Hand-made entries and
a source file written here: the real cases (GPT-2 given a mask, BERT without one) are in
tests/torch/test_models_oracle.py."""

from __future__ import annotations

import textwrap

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import DecodedEntry, GraphInput
from fxcache_core.functions.frames import named
from fxcache_core.lookup.binding import parse_shapes
from fxcache_core.lookup.given_tensors import tensors_not_given


def test_a_parameter_the_body_never_names_is_unread(tmp_path):
    src = tmp_path / "m.py"
    src.write_text(textwrap.dedent('''\
        def f(x, mask=None, unused=None, *, w=None):
            y = x * 2
            if mask is not None:
                y = y + mask
            return (lambda: y + w)()


        def g(x, **kwargs):
            return x
    '''))
    f = named((("f", str(src), 2),))
    assert f.params == ("x", "mask", "unused") and f.unread == frozenset({"unused"})
    # **kwargs could carry any of them: nothing is known to be unread.
    assert named((("g", str(src), 10),)).unread is None
    # An unreadable file: not known.
    assert named((("f", str(tmp_path / "gone.py"), 2),)).unread is None


def _entry(*sources: str) -> DecodedEntry:
    return DecodedEntry(kind=KeyKind.AOT_AUTOGRAD, type_name="AOTAutogradResult", guards_expr=None,
                        inputs=tuple(GraphInput(n, None, "i64[2, 8][8, 1]cpu", source=s)
                                     for n, s in enumerate(sources)))


def test_a_tensor_input_of_the_key_the_call_leaves_out_is_said():
    d = _entry("L['kwargs']['input_ids']", "L['kwargs']['attention_mask']", "L['self']._buffers['pos']")
    ((src, why),) = tensors_not_given(d, parse_shapes(["input_ids=[2,8]"]), ("input_ids", "attention_mask"))
    assert src == "L['kwargs']['attention_mask']"
    assert why.code == "input-not-given" and why.startswith("attention_mask is a tensor input")
    assert not tensors_not_given(d, parse_shapes(["input_ids=[2,8]", "attention_mask=[2,8]"]),
                                  ("input_ids", "attention_mask"))
    # Elements of a list argument are given by index.
    d = _entry("L['xs'][0]", "L['xs'][1]")
    assert [r.code for _, r in tensors_not_given(d, parse_shapes(["xs[0]=[2,8]"]), ("xs",))] == ["input-not-given"]
