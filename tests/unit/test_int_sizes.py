"""An int read off the items of a size list (fxcache_core/lookup/int_sizes.py, through
fxcache_core/lookup/int_exprs.py's ``value_provenance``).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) for these very
functions, compiled with ``dynamic=False`` (``regroup``: groups=3 on a [4, 12] input, as
the evaluation's ``regroup_auto`` family's first key; ``regroup_tuple``: groups=2 on
[4, 8]; ``regroup_flat``: groups=3 on [4, 12]; ``reshape_to``: shape=(4, -1) on [2, 12])
and for ``regroup`` with groups a SymInt
(the second key of ``regroup_auto``). Only the file path is changed. What torch answers
for such calls is the recorded corpus's (tests/torch/test_int_arguments.py, ``regroup_baked``)
and the evaluation's; here the reading of the graph is checked in-process.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.lookup.int_exprs import value_provenance
from tests.synth import one_def

FILE = "/src/fns.py"


def _graph(*blocks: tuple[int, str, tuple[str, ...]]) -> str:
    out = ["class <lambda>(torch.nn.Module):", '    def forward(self, arg0_1: "f32[4, 12][12, 1]cpu"):']
    for line, code, ops in blocks:
        out.append(f"        # File: {FILE}:{line} in f, code: {code}")
        out += [f"        {op}" for op in ops]
    return "\n".join(out + ["        return (mul,)"])


REGROUP = one_def("def regroup(x, groups):\n"
              "    y = x.view(x.shape[0], groups, -1).mean(-1)\n"
              "    return y.reshape(-1).repeat(groups) * 2\n")
_LINE2 = "y = x.view(x.shape[0], groups, -1).mean(-1)"
_LINE3 = "return y.reshape(-1).repeat(groups) * 2"
REGROUP_3 = _graph(
    (2, _LINE2, ('view: "f32[4, 3, 4][12, 4, 1]cpu" = torch.ops.aten.view.default(arg0_1, [4, 3, -1]);  arg0_1 = None',
                 'mean: "f32[4, 3][3, 1]cpu" = torch.ops.aten.mean.dim(view, [-1]);  view = None')),
    (3, _LINE3, ('view_1: "f32[12][1]cpu" = torch.ops.aten.view.default(mean, [-1]);  mean = None',
                 'repeat: "f32[36][1]cpu" = torch.ops.aten.repeat.default(view_1, [3]);  view_1 = None',
                 'mul: "f32[36][1]cpu" = torch.ops.aten.mul.Tensor(repeat, 2);  repeat = None')))
REGROUP_SYM = _graph(
    (2, _LINE2, ('view: "f32[4, s79, (12//s79)][12, (12//s79), 1]cpu" = torch.ops.aten.view.default(arg0_1, '
                 '[4, arg1_1, -1]);  arg0_1 = None',
                 'mean: "f32[4, s79][Max(1, s79), 1]cpu" = torch.ops.aten.mean.dim(view, [-1]);  view = None')),
    (3, _LINE3, ('view_1: "f32[4*s79][1]cpu" = torch.ops.aten.view.default(mean, [-1]);  mean = None',
                 'repeat: "f32[4*s79**2][1]cpu" = torch.ops.aten.repeat.default(view_1, [arg1_1]);  view_1 = None',
                 'mul_9: "f32[4*s79**2][1]cpu" = torch.ops.aten.mul.Tensor(repeat, 2);  repeat = None')))

TUPLE = one_def("def regroup_tuple(x, groups):\n    return x.reshape((groups, -1)).expand(2, groups, 16) + 1\n")
TUPLE_2 = _graph((2, "return x.reshape((groups, -1)).expand(2, groups, 16) + 1", (
    'view: "f32[2, 16][16, 1]cpu" = torch.ops.aten.view.default(arg0_1, [2, -1]);  arg0_1 = None',
    'expand: "f32[2, 2, 16][0, 16, 1]cpu" = torch.ops.aten.expand.default(view, [2, 2, 16]);  view = None',
    'add: "f32[2, 2, 16][32, 16, 1]cpu" = torch.ops.aten.add.Tensor(expand, 1);  expand = None')))

FLAT = one_def("def regroup_flat(x, groups):\n    return x.view(x.shape[0], groups, -1).flatten(1) * 2\n")
FLAT_3 = _graph((2, "return x.view(x.shape[0], groups, -1).flatten(1) * 2", (
    'view: "f32[4, 3, 4][12, 4, 1]cpu" = torch.ops.aten.view.default(arg0_1, [4, 3, -1]);  arg0_1 = None',
    'view_1: "f32[4, 12][12, 1]cpu" = torch.ops.aten.view.default(view, [4, 12]);  view = None',
    'mul: "f32[4, 12][12, 1]cpu" = torch.ops.aten.mul.Tensor(view_1, 2);  view_1 = None')))


def _prov(fn: ast.FunctionDef, graph: str, **values: object):
    return value_provenance(fn, FILE, graph, "groups", values, frozenset({"x"}))


@pytest.mark.parametrize("fn,graph,built", [(REGROUP, REGROUP_3, 3), (TUPLE, TUPLE_2, 2)], ids=["regroup", "tuple"])
def test_an_int_written_as_a_size_list_item_is_that_item_of_each_ops_list(fn, graph, built) -> None:
    same = _prov(fn, graph, groups=built)
    assert same is not None and same.status == "same" and same.why is not None, same
    assert same.why.code == "baked-value-same" and "the size lists at line 2" in same.why
    other = _prov(fn, graph, groups=built + 1)
    assert other is not None and other.status == "differs" and other.why is not None, other
    assert other.why.code == "baked-value-differs"
    assert f"this key's graph has {built}" in other.why, other.why


def test_an_expression_of_the_int_as_an_item_is_computed_on_the_call() -> None:
    fn = one_def("def f(x, groups):\n    y = x.view(x.shape[0], groups + 1, -1).mean(-1)\n"
             "    return y.reshape(-1).repeat(groups + 1) * 2\n")
    got = _prov(fn, REGROUP_3, groups=2)
    assert got is not None and got.status == "same", got
    got = _prov(fn, REGROUP_3, groups=3)
    assert got is not None and got.status == "differs", got


RESHAPE = one_def("def reshape_to(x, shape):\n    return x.reshape(shape) * 2\n")
RESHAPE_4 = _graph((2, "return x.reshape(shape) * 2", (
    'view: "f32[4, 6][6, 1]cpu" = torch.ops.aten.view.default(arg0_1, [4, -1]);  arg0_1 = None',
    'mul: "f32[4, 6][6, 1]cpu" = torch.ops.aten.mul.Tensor(view, 2);  view = None')))


def test_a_tuple_given_whole_as_the_list_is_the_ops_list_item_by_item() -> None:
    # traced with shape=(4, -1): Dynamo passes the tuple as it is, -1 included. Torch, each
    # call a fresh process on that cache: (4, -1) an AOTAutograd cache hit, (4, 6) and
    # (-1, 4) misses that saved new keys.
    same = value_provenance(RESHAPE, FILE, RESHAPE_4, "shape", {"shape": (4, -1)}, frozenset({"x"}))
    assert same is not None and same.status == "same" and same.why is not None, same
    assert "traced with a tuple" in same.why
    for other in ((4, 6), (-1, 4)):
        got = value_provenance(RESHAPE, FILE, RESHAPE_4, "shape", {"shape": other}, frozenset({"x"}))
        assert got is not None and got.status == "differs", (other, got)
    # another length: the op may not be this call's (its length is all that ties them)
    got = value_provenance(RESHAPE, FILE, RESHAPE_4, "shape", {"shape": (4, -1, 1)}, frozenset({"x"}))
    assert got is not None and got.status == "unknown", got


def test_a_call_that_traces_another_view_in_the_statement_leaves_it_unknown() -> None:
    # flatten traces a view of its own: two views for the code's one, never guessed apart.
    got = _prov(FLAT, FLAT_3, groups=3)
    assert got is not None and got.status == "unknown" and got.why is not None, got
    assert got.why.code == "baked-value-unknown" and "2 _unsafe_view/view op(s) from it, for 1" in got.why


def test_an_item_the_graph_holds_as_a_symbol_is_not_read() -> None:
    # The key that takes groups as a SymInt has arg1_1 there: no constant to read.
    got = _prov(REGROUP, REGROUP_SYM, groups=3)
    assert got is not None and got.status == "unknown", got


@pytest.mark.parametrize("src", [
    "def f(x, groups):\n    y = x.view(*(x.shape[0], groups, -1)).mean(-1)\n    return y.reshape(-1).repeat(3) * 2\n",
    "def f(x, groups):\n    y = x.view(x.shape[0], groups, 4).mean(-1)\n    return y.reshape(-1).repeat(3) * 2\n",
    "def f(x, groups):\n    y = x.view(x.shape[0], helper(groups), -1).mean(-1)\n    return y.reshape(-1).repeat(3) * 2\n",
], ids=["starred", "literal-differs", "through-a-call"])
def test_a_size_list_not_read_exactly_leaves_it_unknown(src: str) -> None:
    got = _prov(one_def(src), REGROUP_3, groups=3)
    assert got is not None and got.status == "unknown", got


# expand_rows of the evaluation (tests/harness/evaluation/fns_r5.py), its key traced with n=4
# (and m=3, its default) on a [1, 8] input, as torch 2.13 printed it: torch.zeros and
# torch.ones are aten.full with the sizes as its first argument.
EXPAND_SRC = ("def expand_rows(x, n, m=3):\n"
              "    return x.expand(n, -1) + torch.zeros(n, x.shape[1]) + torch.ones(n, m).sum(1, keepdim=True)\n")
EXPAND = one_def(EXPAND_SRC)
_EXPAND_LINE = "return x.expand(n, -1) + torch.zeros(n, x.shape[1]) + torch.ones(n, m).sum(1, keepdim=True)"
EXPAND_4 = _graph((2, _EXPAND_LINE, (
    'expand: "f32[4, 8][0, 1]cpu" = torch.ops.aten.expand.default(arg0_1, [4, -1]);  arg0_1 = None',
    'full: "f32[4, 8][8, 1]cpu" = torch.ops.aten.full.default([4, 8], 0, dtype = torch.float32, layout = '
    "torch.strided, device = device(type='cpu'), pin_memory = False)",
    'add: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(expand, full);  expand = full = None',
    'full_1: "f32[4, 3][3, 1]cpu" = torch.ops.aten.full.default([4, 3], 1, dtype = torch.float32, layout = '
    "torch.strided, device = device(type='cpu'), pin_memory = False)",
    'sum_1: "f32[4, 1][1, 1]cpu" = torch.ops.aten.sum.dim_IntList(full_1, [1], True);  full_1 = None',
    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(add, sum_1);  add = sum_1 = None')))


@pytest.mark.parametrize("param,value,status", [("m", 3, "same"), ("m", 4, "differs"), ("n", 4, "same"),
                                                ("n", 5, "differs")])
def test_an_int_in_torch_zeros_or_ones_is_that_item_of_fulls_list(param: str, value: int, status: str) -> None:
    values = {"n": 4, "m": 3, param: value}
    got = value_provenance(EXPAND, FILE, EXPAND_4, param, values, frozenset({"x"}))
    assert got is not None and got.status == status, got


def test_a_factory_with_a_keyword_that_moves_a_size_or_another_full_leaves_it_unknown() -> None:
    sized = one_def(EXPAND_SRC.replace("torch.ones(n, m)", "torch.ones(n, m, out=y)"))
    assert value_provenance(sized, FILE, EXPAND_4, "m", {"n": 4, "m": 3}, frozenset({"x"})).status == "unknown"
    # A third full (torch.zeros_like traces one too) for the code's two factories: not told apart.
    like = one_def(EXPAND_SRC.replace("torch.ones(n, m)", "torch.ones(n, m) + torch.zeros_like(x)"))
    extra = EXPAND_4.replace("        mul:", '        full_2: "f32[1, 8][8, 1]cpu" = torch.ops.aten.full.default([1, 8], 0)'
                                           "\n        mul:")
    assert value_provenance(like, FILE, extra, "m", {"n": 4, "m": 3}, frozenset({"x"})).status == "unknown"
