"""Which ``torch.dtype`` a key's graph was traced with (fxcache_core/lookup/dtype_args.py),
and how a call writes one (``dtype=torch.float16``) and a dim marked static.

The graphs here are written by hand in the form torch 2.13 prints an AOTAutograd entry's
forward graph (``aot_forward_graph_str``), copied from the real entries of
``cast_to`` (tests/harness/cases_args.py) and varied where a real compile cannot give
the case cheaply (two dtype constants on one line, a factory, a dead ``.to``, the
convert of another value). What torch itself does with those calls is
tests/torch/test_scalar_arguments.py's.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup.binding import TensorArg, parse_shape_spec
from fxcache_core.lookup.dtype_args import default_dtype, dtype_provenance, graph_nodes
from fxcache_core.lookup.pyvalues import PyValue, TorchDtype, kind_of, same_value, text_of
from tests.synth import one_def

FILE = "/src/cast.py"
F16, F32, BF16 = TorchDtype("float16"), TorchDtype("float32"), TorchDtype("bfloat16")
SOURCES = {"arg0_1": "L['x'].size()[0]", "arg1_1": "L['x'].size()[1]", "arg2_1": "L['x']"}


def _graph(line: int, code: str, *ops: str) -> str:
    return "\n".join([
        "class <lambda>(torch.nn.Module):",
        "    def forward(",
        "        self,",
        '        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)',
        '        arg1_1: "Sym(s27)",  # PlainAOTInput(idx=1)',
        '        arg2_1: "f32[s77, s27][s27, 1]cpu",  # PlainAOTInput(idx=2)',
        "    ):",
        f"        # File: {FILE}:{line} in f, code: {code}",
        *(f"        {op}" for op in ops),
        "        return (add_6,)",
    ])


CAST = one_def("def f(x, dtype=torch.float16):\n    return (x * 2).to(dtype) + 1\n")
MUL = 'mul: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.mul.Tensor(arg2_1, 2);  arg2_1 = None'
CONVERT = ('convert_element_type: "f16[s77, s27][s27, 1]cpu" = torch.ops.prims.convert_element_type.default('
           'mul, torch.float16);  mul = None')
ADD = ('add_6: "f16[s77, s27][s27, 1]cpu" = torch.ops.aten.add.Tensor(convert_element_type, 1);  '
       'convert_element_type = None')
CAST_GRAPH = _graph(2, "return (x * 2).to(dtype) + 1", MUL, CONVERT, ADD)
NOOP_GRAPH = _graph(2, "return (x * 2).to(dtype) + 1", MUL,
                    'add_6: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.add.Tensor(mul, 1);  mul = None')


def _prov(fn: ast.FunctionDef, graph: str, value: TorchDtype):
    return dtype_provenance(fn, FILE, graph, "dtype", value, frozenset({"x"}), SOURCES.get)


def test_the_graphs_inputs_and_ops_are_read_with_their_dtypes():
    g = graph_nodes(CAST_GRAPH)
    assert g.inputs == (("arg0_1", None), ("arg1_1", None), ("arg2_1", "float32"))
    conv = next(n for n in g.nodes if n.op == "convert_element_type")
    assert (conv.dtype, conv.dtypes, conv.first_operand, conv.line) == ("float16", ["float16"], "mul", 2)


@pytest.mark.parametrize("value,status", [(F16, "same"), (BF16, "differs"), (F32, "differs")])
def test_the_convert_of_the_receiver_says_which_dtype_the_key_was_traced_with(value, status):
    p = _prov(CAST, CAST_GRAPH, value)
    assert p is not None and p.status == status and p.traced == F16, p
    assert "convert_element_type to torch.float16, line 2" in p.why


@pytest.mark.parametrize("value", [F16, BF16])
def test_no_convert_of_a_returned_to_rules_out_any_other_dtype(value):
    """``.to`` of a tensor's own dtype (float32, mul's) makes no op, and so do ``.to(None)``
    and ``.to`` of its device; the value is returned, so another dtype would have left a
    convert: another graph."""
    p = _prov(CAST, NOOP_GRAPH, value)
    assert p is not None and p.status == "differs" and p.traced is None, p
    assert "traced with another value than" in p.why


def test_no_convert_leaves_the_tensors_own_dtype_unknown():
    """float32 makes no op, but neither does None: Dynamo's graph (and the AOTAutograd
    key) keeps .to(None) apart from .to(torch.float32), and the printed graph does not."""
    p = _prov(CAST, NOOP_GRAPH, F32)
    assert p is not None and p.status == "unknown" and "given None or the tensor's device" in p.why, p


def test_no_convert_of_a_to_whose_result_is_not_shown_read_is_unknown():
    fn = one_def("def f(x, dtype=torch.float16):\n    y = (x * 2).to(dtype) + 1\n    return y\n")
    p = _prov(fn, NOOP_GRAPH.replace("code: return", "code: y ="), F32)
    assert p is not None and p.status == "unknown" and p.why.code == "dtype-provenance-unknown", p


def test_a_parameter_receiver_is_matched_to_its_graph_input():
    fn = one_def("def f(x, dtype=torch.float16):\n    return x.to(dtype=dtype) + 1\n")
    conv = ('convert_element_type: "f16[s77, s27][s27, 1]cpu" = torch.ops.prims.convert_element_type.default('
            'arg2_1, torch.float16)')
    p = _prov(fn, _graph(2, "return x.to(dtype=dtype) + 1", conv, ADD), F16)
    assert p is not None and p.status == "same", p
    # The same convert of another input (the graph's input is not x's): not read.
    q = dtype_provenance(fn, FILE, _graph(2, "return x.to(dtype=dtype) + 1", conv, ADD), "dtype", F16,
                         frozenset({"x"}), {**SOURCES, "arg2_1": "L['y']"}.get)
    assert q is not None and q.status == "unknown", q


def test_a_convert_of_another_value_is_not_taken_for_the_receivers():
    """A decomposition's convert on the line (of x, not of mul): which dtype .to had is
    not shown (it may have been a no-op)."""
    conv = ('convert_element_type: "f16[s77, s27][s27, 1]cpu" = torch.ops.prims.convert_element_type.default('
            'arg2_1, torch.float16)')
    p = _prov(CAST, _graph(2, "return (x * 2).to(dtype) + 1", conv, MUL, ADD), F16)
    assert p is not None and p.status == "unknown", p


def test_two_dtype_constants_on_the_line_are_unknown():
    conv2 = ('convert_element_type_1: "f32[s77, s27][s27, 1]cpu" = torch.ops.prims.convert_element_type.default('
             'add_6, torch.float32)')
    p = _prov(CAST, _graph(2, "return (x * 2).to(dtype) + 1", MUL, CONVERT, ADD, conv2), F16)
    assert p is not None and p.status == "unknown" and "several dtype constants" in p.why, p


def test_a_factorys_dtype_is_read_off_its_op():
    fn = one_def("def f(x, dtype=torch.float16):\n    return x + torch.zeros(x.shape[1], dtype=dtype)\n")
    full = ('full: "f16[s27][1]cpu" = torch.ops.aten.full.default([arg1_1], 0, dtype = torch.float16, '
            "layout = torch.strided, device = device(type='cpu'), pin_memory = False)")
    add = 'add_6: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.add.Tensor(arg2_1, full)'
    g = _graph(2, "return x + torch.zeros(x.shape[1], dtype=dtype)", full, add)
    assert _prov(fn, g, F16).status == "same"
    assert _prov(fn, g, BF16).status == "differs"


def test_a_factory_constant_dtype_none_would_make_too_is_no_evidence_of_it():
    """torch.zeros(..., dtype=None) records the default dtype as an explicit float32 does,
    and Dynamo's graphs of None and of torch.float32 differ: that constant rules out other
    dtypes but is not evidence that the key was traced with float32 (nor, for new_*, with
    the receiver's dtype)."""
    fn = one_def("def f(x, dtype=None):\n    return x + torch.zeros(x.shape[1], dtype=dtype)\n")
    full = ('full: "f32[s27][1]cpu" = torch.ops.aten.full.default([arg1_1], 0, dtype = torch.float32, '
            "layout = torch.strided, device = device(type='cpu'), pin_memory = False)")
    add = 'add_6: "f32[s77, s27][s27, 1]cpu" = torch.ops.aten.add.Tensor(arg2_1, full)'
    g = _graph(2, "return x + torch.zeros(x.shape[1], dtype=dtype)", full, add)
    same = _prov(fn, g, F32)
    assert same.status == "unknown" and "dtype=None" in same.why, same
    assert _prov(fn, g, BF16).status == "differs"
    fn = one_def("def f(x, dtype=None):\n    return x + x.new_zeros(x.shape[1], dtype=dtype)\n")
    g16 = _graph(2, "return x + x.new_zeros(x.shape[1], dtype=dtype)", full.replace("f32[s27]", "f16[s27]")
                 .replace("torch.float32", "torch.float16"), add)
    assert _prov(fn, g16, F16).status == "unknown"


def test_a_receiver_assigned_in_the_function_is_not_its_graph_input():
    """x = x.half(); x.to(dtype): no convert on the .to line says nothing of the graph
    input's float32 (x is another tensor by then)."""
    fn = one_def("def f(x, dtype=torch.float16):\n    x = x.half()\n    return x.to(dtype) + 1\n")
    half = ('convert_element_type: "f16[s77, s27][s27, 1]cpu" = torch.ops.prims.convert_element_type.default('
            'arg2_1, torch.float16)')
    add = ('add_6: "f16[s77, s27][s27, 1]cpu" = torch.ops.aten.add.Tensor(convert_element_type, 1)')
    g = "\n".join([_graph(2, "x = x.half()", half).rsplit("\n", 1)[0],
                   f"        # File: {FILE}:3 in f, code: return x.to(dtype) + 1", f"        {add}",
                   "        return (add_6,)"])
    p = _prov(fn, g, F16)
    assert p.status == "unknown" and "assigned" in p.why, p


@pytest.mark.parametrize("src,named", [
    ("def f(x, dtype=torch.float16):\n    return (x * 2).to(dtype if x.dim() == 2 else torch.float32) + 1\n",
     "dtype if x.dim() == 2 else torch.float32"),
    ("def f(x, dtype=torch.float16):\n    return (x * 2).to({'a': dtype}['a']) + 1\n", "{'a': dtype}"),
    ("def f(x, dtype=torch.float16):\n    d = dtype\n    return (x * 2).to(d) + 1\n", "d = dtype"),
    ("def f(x, dtype=torch.float16):\n    return (x * 2).sum(dtype=dtype) + 1\n", "dtype= to (x * 2).sum()"),
    ("def f(x, dtype=torch.float16):\n    return (x * 2).to(dtype) + x.to(dtype)\n", "read twice"),
])
def test_a_dtype_through_an_expression_is_unknown_naming_it(src, named):
    p = _prov(one_def(src), CAST_GRAPH, F16)
    assert p is not None and p.status == "unknown" and p.why.code == "dtype-provenance-unknown", p
    assert p.why.startswith("dtype: ") and named in p.why, p.why


def test_a_function_that_never_reads_it_gives_no_evidence():
    assert _prov(one_def("def f(x, dtype=None):\n    return x * 2\n"), CAST_GRAPH, F16) is None


@pytest.mark.parametrize("text,want", [
    ("torch.float16", F16), ("torch.half", F16), ("torch.float", F32), ("torch.bfloat16", BF16),
    ("float16", None), ("torch.strided", None), ("np.float16", None), ("torch.cuda.float16", None),
])
def test_a_default_is_a_dtype_only_as_a_dotted_torch_name(text, want):
    assert default_dtype(text) == want


def test_a_dtype_argument_is_written_as_torch_name_and_compared_as_one():
    assert parse_shape_spec("dtype=torch.float16") == ("L['dtype']", PyValue(F16))
    assert parse_shape_spec("dtype=torch.half") == ("L['dtype']", PyValue(F16))
    assert parse_shape_spec("dtype=float16") == ("L['dtype']", PyValue("float16"))  # a bare word: a str
    assert text_of(F16) == "torch.float16" and kind_of(F16) == "torch.dtype"
    assert same_value(F16, TorchDtype("float16")) and not same_value(F16, "torch.float16")
    with pytest.raises(ShapeSpecError, match="'torch.float17' is not a torch dtype"):
        parse_shape_spec("dtype=torch.float17")
    with pytest.raises(ShapeSpecError, match="'torch.' is not a torch dtype"):
        parse_shape_spec("dtype=torch.")


def test_mark_static_is_written_as_mark_dynamic_is():
    src, t = parse_shape_spec("x=[6,3]:mark_static=[0]")
    assert src == "L['x']" and t == TensorArg((6, 3), static=frozenset({0})) and str(t) == "[6,3]:mark_static=[0]"
    with pytest.raises(ShapeSpecError, match="marked both dynamic and static"):
        parse_shape_spec("x=[6,3]:mark_dynamic=[0]:mark_static=[0]")
    with pytest.raises(ShapeSpecError, match="mark_static dim 2 is not a dim"):
        parse_shape_spec("x=[6,3]:mark_static=[2]")
