"""The compiled frame, a float's constants and input names, read without torch.

Synthetic inputs (strings as torch writes them, small files): the real caches of
test_models_oracle.py and test_real_cache.py check the same code on what torch
writes.
"""

from __future__ import annotations

import os
import time

from fxcache_core.cache.keys import KeyKind
from fxcache_core.catalog.index import from_json, light, to_json
from fxcache_core.decode.entries import DecodedEntry, Origin, parse_linemap_frames
from fxcache_core.functions.frames import _enclosing, _parse, resume_parent
from fxcache_core.lookup.floats import floats_in_code
from fxcache_core.lookup.inputs import alias as _alias
from fxcache_core.lookup.inputs import candidates as _candidates
from fxcache_core.lookup.inputs import user_name


def _stack(*frames: tuple[str, str, int]) -> str:
    return "".join(f'  File "{f}", line {n}, in {fn}\n    code()\n    ^^^^^^\n' for fn, f, n in frames)


def test_the_compiled_frame_is_the_outer_frame_every_op_shares():
    lm = [
        (10, _stack(("wrapper", "/g.py", 5), ("forward", "/m.py", 40), ("forward", "/b.py", 7))),
        (20, _stack(("wrapper", "/g.py", 5), ("forward", "/m.py", 44), ("lm_head", "/h.py", 2))),
    ]
    assert parse_linemap_frames(lm) == (("wrapper", "/g.py", 5), ("forward", "/m.py", 40))


def test_a_linemap_of_the_wrong_shape_gives_no_frame():
    assert parse_linemap_frames(None) == ()
    assert parse_linemap_frames([(1, 2), "x", (3, None)]) == ()
    assert parse_linemap_frames([(1, _stack(("f", "/a.py", 1))), (2, _stack(("g", "/b.py", 1)))]) == ()


def test_a_resume_frame_belongs_to_the_function_it_resumes():
    assert resume_parent("torch_dynamo_resume_in_loss_fn_at_12") == "loss_fn"
    assert resume_parent("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_5") == "f"
    assert resume_parent("loss_fn") is None


def test_the_class_and_parameters_of_a_forward_are_read_from_its_file_without_running_it(tmp_path):
    src = tmp_path / "net.py"
    src.write_text("import os\nos.system('exit 3')\n\nclass TinyNet:\n    def forward(self, x, mask=None):\n"
                   "        return x\n\ndef loss_fn(ids, labels):\n    return ids\n")
    assert _enclosing(str(src), 6) == ("TinyNet", ("x", "mask"))
    assert _enclosing(str(src), 9) == (None, ("ids", "labels"))
    assert _enclosing(str(src), 2) is None


def test_a_fifo_or_missing_file_named_by_a_cache_is_never_opened_for_reading(tmp_path):
    fifo = tmp_path / "evil.py"
    os.mkfifo(fifo)
    t = time.monotonic()
    assert _parse(str(fifo)) is None  # would block forever if it were read
    assert _parse(str(tmp_path / "gone.py")) is None
    assert _parse("/etc/passwd") is None  # not a .py file
    assert time.monotonic() - t < 5


def test_a_specialized_float_is_found_in_the_ops_of_the_code_that_reads_it():
    graph = (
        "class <lambda>(torch.nn.Module):\n"
        '    def forward(self, arg0_1: "f32[4, 3][3, 1]cpu"):\n'
        "        # File: /c.py:9 in scale_auto, code: return x.cos() * scale\n"
        '        cos: "f32[4, 3][3, 1]cpu" = torch.ops.aten.cos.default(arg0_1)\n'
        '        mul: "f32[4, 3][3, 1]cpu" = torch.ops.aten.mul.Tensor(cos, 2.5);  cos = None\n'
        "        # File: /c.py:10 in scale_auto, code: y = x + 1.0\n"
        '        add: "f32[4, 3][3, 1]cpu" = torch.ops.aten.add.Tensor(mul, 1.0)\n'
    )
    assert floats_in_code(graph, "scale") == (2.5,)
    assert floats_in_code(graph, "eps") is None


def test_inputs_bind_by_keyword_parameter_name_or_position_and_read_back_in_user_terms():
    assert _candidates("L['input_ids']", ()) == ["L['input_ids']", "L['kwargs']['input_ids']"]
    assert "L['args'][0]" in _candidates("L['pixel_values']", ("pixel_values",))
    assert _candidates("L['args'][0]", ("x",))[1] == "L['x']"
    got, bound = _alias({"L['input_ids']": 3, "L['other']": 1},
                        {"L['kwargs']['input_ids']", "L['self']._modules['wte']._parameters['weight']"},
                        None)
    assert bound == (("L['input_ids']", "L['kwargs']['input_ids']"),)
    assert got["L['kwargs']['input_ids']"] == 3 and got["L['other']"] == 1
    assert user_name("L['kwargs']['input_ids']") == "input_ids"
    assert user_name("L['args'][0]", ("x",)) == "args[0] (x)"
    assert user_name("L['xs'][1]") == "xs[1]"
    assert user_name("L['___stack0']").startswith("___stack0 (a value left on the stack")


def test_the_index_keeps_the_compiled_frame():
    o = Origin("forward", "/m.py", 40, ("forward",), (("wrapper", "/g.py", 5), ("forward", "/m.py", 40)))
    d = DecodedEntry(kind=KeyKind.FX_GRAPH, type_name="x.CompiledFxGraph", guards_expr=None,
                     inputs=(), origin=o)
    assert from_json(to_json(d)).origin == light(d).origin == o
