"""The compiled frame, a float's constants and input names, read without torch.

Synthetic inputs (strings as torch writes them, small files): the real caches of
test_models_oracle.py and test_real_cache.py check the same code on what torch
writes.
"""

from __future__ import annotations

import os
import time

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import DecodedEntry, Origin, parse_linemap_frames
from fxcache_core.functions.frames import _enclosing, resume_parent
from fxcache_core.functions.trees import _parse
from fxcache_core.lookup.floats import floats_in_code
from fxcache_core.lookup.inputs import alias as _alias
from fxcache_core.lookup.inputs import candidates as _candidates
from fxcache_core.lookup.inputs import user_name
from fxcache_core.state.index import from_json, light, to_json


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
    # an attribute of the stack's value is named as a whole, as --inputs binds it
    assert user_name("L['___stack0'].last_hidden_state").endswith("name it ___stack0.last_hidden_state=[...])")


def test_a_resume_frame_the_call_cannot_bind_says_what_would_decide_it():
    from fxcache_core.cache.scan import CacheKey
    from fxcache_core.functions.frames import CompiledFrom
    from fxcache_core.lookup.match_report import MatchReport, UnboundKey
    from fxcache_core.lookup.prediction import verdicts

    frame = CompiledFrom("torch_dynamo_resume_in_forward_at_503", "/src/m.py", 470, parent="forward")
    key = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere/a", ())
    took = ("___stack0.last_hidden_state (a value left on the stack at the graph break, ...)", "logits_to_keep")
    report = MatchReport(inputs=(), results=(), keys_considered=1, unbound=(UnboundKey(key, frame, took),))
    (v,) = verdicts(report, count_all=True).functions
    assert v.status == "undecided" and v.why.code == "inputs-not-named"
    assert "the frame resumed after the graph break at line 503 starts with, which the cache does not record" \
        in v.why and "give each as that frame gets it" in v.why, v.why


def test_the_index_keeps_the_compiled_frame():
    o = Origin("forward", "/m.py", 40, ("forward",), (("wrapper", "/g.py", 5), ("forward", "/m.py", 40)))
    d = DecodedEntry(kind=KeyKind.FX_GRAPH, type_name="x.CompiledFxGraph", guards_expr=None,
                     inputs=(), origin=o)
    assert from_json(to_json(d)).origin == light(d).origin == o


# --- one name per function: decorator wrappers fold into the function they wrap ----------

_DECO = '''import functools
from functools import wraps


def can_return_tuple(func):
    @wraps(func)
    def wrapper(self, *args, **kwargs):
        out = func(self, *args, **kwargs)
        return out
    return wrapper


def deprecate(func):
    @functools.wraps(func)
    def wrapped_func(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapped_func


def plain(func):
    def inner(*args, **kwargs):
        return func(*args, **kwargs)
    return inner
'''

_MODEL = '''import torch


class T5Like(torch.nn.Module):
    @can_return_tuple
    @deprecate
    def forward(self, input_ids, attention_mask=None):
        h = self.encoder(input_ids)
        return self.head(h)


def llama_loss(ids, labels):
    return model(ids, labels=labels).loss


def step(*args, **kwargs):
    return model(*args, **kwargs)
'''


def _files(tmp_path):
    deco, model = tmp_path / "generic.py", tmp_path / "modeling.py"
    deco.write_text(_DECO)
    model.write_text(_MODEL)
    return str(deco), str(model)


def test_decorator_wrappers_fold_into_the_method_they_wrap_named_by_its_class(tmp_path):
    from fxcache_core.functions.frames import is_wrapper_frame, named

    deco, model = _files(tmp_path)
    outer = (("wrapper", deco, 8), ("wrapped_func", deco, 16), ("forward", model, 8))
    assert is_wrapper_frame(*outer[0]) and is_wrapper_frame(*outer[1])
    assert is_wrapper_frame("inner", deco, 22)  # a closure forwarding *args, **kwargs: no wraps needed
    c = named(outer)
    assert (c.name, c.line, c.params) == ("T5Like.forward", 5, ("input_ids", "attention_mask"))
    assert str(c) == "T5Like.forward (modeling.py:5)"  # its first line: the first decorator's
    assert [w[0] for w in c.wrappers] == ["wrapper", "wrapped_func"]
    assert {"T5Like", "T5Like.forward", "forward", "wrapper", "wrapped_func", str(c)} <= c.names()
    # Without the wrappers (a module whose forward is not decorated), the same function.
    assert named((("forward", model, 9),)).ident == c.ident == ("T5Like.forward", model)


def test_a_function_that_calls_a_model_is_the_function_compiled_not_a_wrapper(tmp_path):
    from fxcache_core.functions.frames import named

    deco, model = _files(tmp_path)
    c = named((("llama_loss", model, 13), ("wrapper", deco, 8), ("forward", model, 8)))
    assert (c.name, c.wrappers, str(c)) == ("llama_loss", (), "llama_loss (modeling.py:12)")
    # A wrapper the stack does not go past stays itself: there is nothing to fold it into.
    assert named((("wrapper", deco, 8),)).name == "wrapper"
    # A top-level function taking *args, **kwargs is no decorator's closure: it was compiled.
    assert named((("step", model, 17), ("forward", model, 8))).name == "step"


def test_without_the_source_files_the_common_wrapper_names_fold_and_the_stack_line_is_the_place():
    from fxcache_core.functions.frames import WRAPPER_NAMES, named

    assert {"wrapper", "wrapped_func"} <= WRAPPER_NAMES
    c = named((("wrapper", "/gone/generic.py", 1036), ("wrapped_func", "/gone/deprecation.py", 173),
               ("forward", "/gone/modeling_t5.py", 1014)))
    assert (c.name, str(c), c.module_class) == ("forward", "forward (modeling_t5.py:1014)", None)
    assert named((("loss_fn", "/gone/train.py", 12), ("forward", "/gone/m.py", 3))).name == "loss_fn"


def test_a_file_that_no_longer_matches_the_stack_is_not_read_for_the_name(tmp_path):
    from fxcache_core.functions.frames import named

    deco, model = _files(tmp_path)
    c = named((("forward", deco, 8),))  # line 8 of generic.py is inside `wrapper`, not `forward`
    assert (c.name, c.line, c.params) == ("forward", 8, ())


def test_a_resume_frame_is_named_after_the_method_it_resumes_and_is_the_same_function(tmp_path):
    from fxcache_core.functions.frames import label, named

    deco, model = _files(tmp_path)
    r = named((("wrapper", deco, 8), ("torch_dynamo_resume_in_forward_at_9", model, 9)))
    f = named((("forward", model, 8),))
    assert r.name == "T5Like.torch_dynamo_resume_in_forward_at_9" and r.ident == f.ident
    assert str(r) == "T5Like.forward, resumed after the graph break at line 9 (modeling.py:5)"
    assert label("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_3_at_5") == (
        "f, resumed after the graph break at line 5")
    assert label("loss_fn") == "loss_fn"


def test_fn_naming_several_functions_is_an_error_that_lists_them_and_resume_frames_do_not_count(
        tmp_path, monkeypatch):
    from types import SimpleNamespace

    import pytest

    from fxcache_core.errors import FunctionAmbiguousError
    from fxcache_core.functions import origin
    from fxcache_core.functions.frames import named

    deco, model = _files(tmp_path)
    other = tmp_path / "modeling_b.py"
    other.write_text(_MODEL.replace("T5Like", "BertLike"))
    frames = {
        "fa": named((("wrapper", deco, 8), ("forward", model, 8))),
        "fr": named((("torch_dynamo_resume_in_forward_at_9", model, 9),)),
        "fb": named((("wrapper", deco, 8), ("forward", str(other), 8))),
    }
    keys = [SimpleNamespace(key=k, kind=KeyKind.FX_GRAPH) for k in frames]
    monkeypatch.setattr(origin, "compiled_from", lambda cat, k: frames[k.key])
    cat = SimpleNamespace(scan=SimpleNamespace(keys=keys))
    assert [k.key for k in origin.keys_compiled_from(cat, "T5Like")[0]] == ["fa", "fr"]
    assert [k.key for k in origin.keys_compiled_from(cat, "BertLike.forward")[0]] == ["fb"]
    for name in ("forward", "wrapper"):
        with pytest.raises(FunctionAmbiguousError) as e:
            origin.keys_compiled_from(cat, name)
        assert e.value.candidates == ("BertLike.forward (modeling_b.py:5)", "T5Like.forward (modeling.py:5)")
        assert f"{name!r} names 2 functions" in str(e.value) and e.value.param == "function"


def test_the_index_keeps_the_stack_that_names_a_keys_function(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.functions.origin import function_name, key_origins
    from fxcache_core.state.index import Index, default_index_path

    monkeypatch.setenv("FXCACHE_INDEX_DIR", str(tmp_path / "idx"))
    root = tmp_path / "cache"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "torch_versions" / "2.15.0" / "cache", root)
    scan = scan_cache(root)
    cold_idx = Index(default_index_path(root), root)
    cold = key_origins(Catalog(scan, cold_idx), scan.keys)
    cold_idx.close()
    warm_idx = Index(default_index_path(root), root)
    rows = warm_idx.key_origins(scan.keys)  # what a warm ls reads, without decoding an entry
    warm = key_origins(Catalog(scan, warm_idx), scan.keys)
    warm_idx.close()
    assert rows == cold
    assert warm == cold and any(o is not None and o.outer for o in cold.values())
    assert {k: function_name(o).label for k, o in warm.items()} == {k: function_name(o).label for k, o in cold.items()}


def test_an_fx_key_shared_by_two_functions_lends_its_frame_only_to_the_one_it_was_traced_from():
    """Two functions whose graphs lower alike share one FX key, whose stacks are those of
    the compile that wrote it. An AOTAutograd key whose own graph was traced from another
    function does not take that frame (its parameters would be checked against the wrong
    code); one traced from the same code does, even when passes put another op first.
    (Synthetic origins: the layout needs two functions compiling to one FX graph.)"""
    from fxcache_core.functions.frames import _same_code

    fx = Origin("same_graph_two_regions", "/t/cases.py", 106, ("same_graph_two_regions",),
                (("same_graph_two_regions", "/t/cases.py", 106),))
    assert _same_code(Origin("same_graph_two_regions", "/t/cases.py", 107), fx)
    assert not _same_code(Origin("cast_to", "/t/cases_args.py", 158), fx)
    assert not _same_code(Origin("same_graph_two_regions", "/t/other.py", 106), fx)  # same name, other file
    inlined = Origin("forward", "/t/m.py", 40, ("forward", "helper"), (("forward", "/t/m.py", 40),))
    assert _same_code(Origin("helper", "/t/h.py", 3), inlined)
    assert _same_code(None, fx) and not _same_code(Origin("f", "/a.py", 1), None)


def test_a_frame_names_its_keyword_only_parameters_apart_from_the_positional_ones(tmp_path):
    from fxcache_core.functions.frames import named
    from fxcache_core.lookup.source_values import is_param

    src = tmp_path / "kw.py"
    src.write_text("def f(x, w, *, bias=None, scale=1.0):\n    return x * w\n\n\n"
                   "def g(x, *args, mask=None):\n    return x\n")
    f = named((("f", str(src), 2),))
    assert (f.params, f.keywords) == (("x", "w"), ("bias", "scale"))
    assert named((("g", str(src), 6),)).keywords == ("mask",)
    # A keyword-only parameter is the function's (given by name), never a closure's tensor;
    # only positional ones are L['args'][i] of a module's call.
    for src_name in ("L['bias']", "L['kwargs']['bias']", "L['x']", "L['args'][1]"):
        assert is_param(src_name, f.params, f.keywords), src_name
    for src_name in ("L['self'].weight", "L['other']", "L['args'][2]", "L['kwargs']['other']"):
        assert not is_param(src_name, f.params, f.keywords), src_name
    assert not is_param("L['bias']", f.params)  # without the keywords, as positional-only reading had it
