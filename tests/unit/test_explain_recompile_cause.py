"""Root causes of new keys that the shipped-cache tests do not make: a recompile that
automatic dynamic made with more symbolic dims, and a setting outside ``inductor_config``.

Synthetic components shaped as torch 2.13 wrote them for a transformers Qwen2 model
called with two sequence lengths (the second compile made ``input_ids.size(1)``
symbolic: a SymInt input added in front, every other input one place later, the
graph's sizes now symbols, ``static_input_idxs`` shifted by one); the real run is in
the evaluation report of this change (/tmp/explain-eval, not in CI: a transformers
compile costs a minute on 2 cores).
"""

from __future__ import annotations

from fxcache_core.keying.anatomy import Component, ComponentDiff
from fxcache_core.trace.dynamic_dims import dynamic_root_cause
from fxcache_core.trace.explain_report import RootCause
from fxcache_core.trace.run_summary import consequence_words, root_cause_words


def _tm(dtype: str, shape: str, stride: str) -> str:
    return (f"TensorMetadata(dtype=torch.{dtype}, shape=torch.Size([{shape}]), stride=({stride}), "
            "device=cpu, layout=torch.strided, memory_format=torch.contiguous_format, storage_offset=0, "
            "storage_bytes=None, requires_grad=False, is_quantized=False, is_conj=False, is_neg=False, "
            "is_inference=True, is_sparse=False, is_coalesced=None, dense_dim=None, sparse_dim=None)")


def _diff(name: str, a: str | None, b: str | None) -> ComponentDiff:
    return ComponentDiff(name, Component(name, "h" + str(hash(a)), a) if a is not None else None,
                         Component(name, "k" + str(hash(b)), b) if b is not None else None)


_GM_STATIC = """def forward(self, arg0_1, arg1_1):
    embedding = torch.ops.aten.embedding.default(arg1_1, arg0_1);  arg1_1 = arg0_1 = None
    view = torch.ops.aten.view.default(embedding, [8, 32]);  embedding = None
    return (view,)"""
_GM_SYMBOLIC = """def forward(self, arg0_1, arg1_1, arg2_1):
    embedding = torch.ops.aten.embedding.default(arg2_1, arg1_1);  arg2_1 = arg1_1 = None
    sym_size_int = torch.ops.aten.sym_size.int(embedding, 1)
    view = torch.ops.aten.view.default(embedding, [arg0_1, 32]);  embedding = None
    return (view,)"""

_DIFFS = (_diff("gm", _GM_SYMBOLIC, _GM_STATIC),
          _diff("example_inputs[0]", "('s27',)", _tm("int64", "1, 8", "8, 1")),
          _diff("example_inputs[1]", _tm("int64", "1, s27", "s27, 1"), _tm("float32", "64, 32", "32, 1")),
          _diff("example_inputs[2]", _tm("float32", "64, 32", "32, 1"), None),
          _diff("fx_kwargs[static_input_idxs]", "[2]", "[1]"))
_DIMS = (("L['kwargs']['input_ids'].size()[1]", 8),)


def test_a_recompile_with_a_new_symbolic_dim_is_the_root_cause_and_the_shifted_inputs_follow():
    rc = dynamic_root_cause(_DIMS, _DIFFS)
    assert rc is not None
    assert (rc.component, rc.this, rc.cache, rc.code, rc.input) == (
        "L['kwargs']['input_ids'].size()[1]", "symbolic", "8", "more-dynamic-dims", "kwargs['input_ids']")
    assert set(rc.consequences) == {d.name for d in _DIFFS} and rc.also == ()
    words = root_cause_words(rc)
    assert "kwargs['input_ids'].size(1)" in words and "8" in words and "static_input_idxs" not in words
    assert "3 example inputs" in consequence_words(rc)


def test_a_dtype_that_changed_with_the_new_dim_stays_a_second_cause():
    # The same recompile, but an input changed dtype: that does not follow from a symbolic size.
    other = (_diff("gm", _GM_SYMBOLIC, _GM_STATIC),
             _diff("example_inputs[1]", _tm("int32", "1, s27", "s27, 1"), _tm("int64", "1, 8", "8, 1")),
             _diff("fx_kwargs[static_input_idxs]", "[2]", "[1]"))
    rc = dynamic_root_cause(_DIMS, other)
    assert rc is not None and rc.consequences == ("gm", "fx_kwargs[static_input_idxs]")
    assert rc.also == ("example_inputs[1]",)


def test_a_recompile_whose_graph_calls_other_ops_is_not_explained_by_its_new_dims():
    # A branch on a size taken the other way: the graph changed beyond its sizes.
    other = (_diff("gm", _GM_SYMBOLIC.replace("aten.view.default", "aten.reshape.default"), _GM_STATIC),) + _DIFFS[1:]
    assert dynamic_root_cause(_DIMS, other) is None


def test_no_new_dim_or_nothing_it_explains_leaves_the_root_cause_to_the_components():
    assert dynamic_root_cause((), _DIFFS) is None
    cfg = (_diff("inductor_config[max_autotune]", "True", "False"),)
    assert dynamic_root_cause(_DIMS, cfg) is None


def test_a_setting_outside_inductor_config_keeps_its_whole_name():
    rc = RootCause("fx_kwargs[cpp_wrapper]", "True", "False", "setting")
    assert root_cause_words(rc) == "fx_kwargs[cpp_wrapper] is True in this run, False in the cache"
    rc = RootCause("inductor_config[max_autotune]", "True", "False", "inductor-config",
                   env="TORCHINDUCTOR_MAX_AUTOTUNE")
    assert root_cause_words(rc).startswith("max_autotune (TORCHINDUCTOR_MAX_AUTOTUNE) is True")


def test_a_child_of_a_sequential_reads_as_an_index():
    from fxcache_core.trace.user_terms import user_source

    assert user_source("L['fn']._modules['0']._parameters['weight']") == "fn[0].weight"
    assert user_source("L['self']._modules['blocks']._modules['11']._modules['attn']") == "self.blocks[11].attn"


def test_a_backward_graphs_input_is_not_named_after_a_traced_argument_of_its_shape():
    # A dtype change seen by the backward graph: its example_inputs[0] is the saved
    # input (float64[8, 16]), the same dtype and shape as the traced argument, but not it.
    from pathlib import Path

    from fxcache_core.trace.nearest import Nearest
    from fxcache_core.trace.root_cause import root_cause
    from fxcache_core.trace.run import TensorFact, TraceCompile

    diffs = (_diff("example_inputs[0]", _tm("float64", "8, 16", "16, 1"), _tm("float32", "8, 16", "16, 1")),)
    near = Nearest("fK", ("example_inputs[0]",), (), diffs=diffs)
    fields = {f: None for f in TraceCompile.__dataclass_fields__}
    fields.update(index=0, tensors=(TensorFact("L['args'][0]", "torch.float64", (8, 16), (16, 1), 0),),
                  symbols=(), guards_added=(), file=Path("t.log"))
    c = TraceCompile(**fields)  # type: ignore[arg-type]
    fwd = root_cause(near, c, None)
    assert fwd is not None and (fwd.code, fwd.input) == ("input-dtype", "args[0]")
    bwd = root_cause(near, c, None, graph="backward")
    assert bwd is not None and (bwd.code, bwd.this, bwd.cache, bwd.input) == ("input-dtype", "float64", "float32", None)


def test_a_model_cast_to_another_dtype_is_one_cause_not_one_per_input():
    # torch 2.13's components of a Sequential cast to float64 (every parameter and the
    # argument), and one input whose shape changed too: that one is a second cause.
    from fxcache_core.trace.nearest import Nearest
    from fxcache_core.trace.root_cause import root_cause

    diffs = (_diff("example_inputs[0]", _tm("float64", "32, 16", "16, 1"), _tm("float32", "32, 16", "16, 1")),
             _diff("example_inputs[1]", _tm("float64", "32", "1"), _tm("float32", "32", "1")),
             _diff("example_inputs[2]", _tm("float64", "8, 16", "16, 1"), _tm("float32", "8, 16", "16, 1")),
             _diff("example_inputs[3]", _tm("float32", "4, 32", "32, 1"), _tm("float32", "4, 16", "16, 1")))
    rc = root_cause(Nearest("fK", tuple(d.name for d in diffs), (), diffs=diffs), None, None)
    assert rc is not None and (rc.code, rc.this, rc.cache) == ("input-dtype", "float64", "float32")
    assert rc.consequences == ("example_inputs[1]", "example_inputs[2]") and rc.also == ("example_inputs[3]",)
    assert consequence_words(rc) == "2 more inputs with the same dtype change"
