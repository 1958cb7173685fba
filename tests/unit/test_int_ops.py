"""An int, a bool or a None read off the argument of an op that keeps it as the code gave
it (fxcache_core/lookup/int_ops.py, through fxcache_core/lookup/int_exprs.py's
``value_provenance``).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) for these very
functions compiled with ``dynamic=False`` on CPU: ``spread`` is the evaluation's
``spread_dim`` family (x [4, 6], built with dim left out and with dim=1), the others
were compiled on x [2, 3, 4] or [4, 6] with the values each test names. Only the file
path is changed. What torch answers for such calls is the recorded corpus's
(tests/torch/test_int_arguments.py, ``spread_ops``, ``dim_sized``) and the evaluation's; here
the reading of the graph is checked in-process.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.lookup.int_exprs import value_provenance
from tests.synth import one_def, op_graph

FILE = "/src/fns.py"


def _graph(code: str, *ops: str, line: int = 2) -> str:
    return op_graph(FILE, line, code, ops, tensor="f32[4, 6][6, 1]cpu", returns="add")


def _prov(fn: ast.FunctionDef, graph: str, param: str, **values: object):
    return value_provenance(fn, FILE, graph, param, values, frozenset({"x"}))


SPREAD = one_def("def spread(x, dim=None, keepdim=False):\n    return x.std(dim=dim, keepdim=keepdim) + 1\n")
_SPREAD = "return x.std(dim=dim, keepdim=keepdim) + 1"
SPREAD_NONE = _graph(_SPREAD, 'var: "f32[][]cpu" = torch.ops.aten.var.correction(arg0_1, correction = 1.0);  arg0_1 = None',
                     'sqrt: "f32[][]cpu" = torch.ops.aten.sqrt.default(var);  var = None',
                     'add: "f32[][]cpu" = torch.ops.aten.add.Tensor(sqrt, 1);  sqrt = None')
SPREAD_1 = _graph(_SPREAD, 'var: "f32[4][1]cpu" = torch.ops.aten.var.correction(arg0_1, [1], correction = 1.0);  '
                  'arg0_1 = None',
                  'sqrt: "f32[4][1]cpu" = torch.ops.aten.sqrt.default(var);  var = None',
                  'add: "f32[4][1]cpu" = torch.ops.aten.add.Tensor(sqrt, 1);  sqrt = None')
# dim=-1, keepdim=True on x [2, 3, 4]; and dim=None, keepdim=True on [4, 6].
SPREAD_KEEP = _graph(_SPREAD, 'var: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.var.correction(arg0_1, [-1], '
                     'correction = 1.0, keepdim = True)', 'sqrt: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.sqrt.default(var)',
                     'add: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.add.Tensor(sqrt, 1)')
SPREAD_NONE_KEEP = _graph(_SPREAD, 'var: "f32[1, 1][1, 1]cpu" = torch.ops.aten.var.correction(arg0_1, correction = 1.0, '
                          'keepdim = True)', 'sqrt: "f32[1, 1][1, 1]cpu" = torch.ops.aten.sqrt.default(var)',
                          'add: "f32[1, 1][1, 1]cpu" = torch.ops.aten.add.Tensor(sqrt, 1)')


@pytest.mark.parametrize("graph,dim,keepdim", [(SPREAD_NONE, None, False), (SPREAD_1, 1, False),
                                               (SPREAD_KEEP, -1, True), (SPREAD_NONE_KEEP, None, True)],
                         ids=["none", "dim-1", "neg-keepdim", "none-keepdim"])
def test_stds_dim_and_keepdim_are_read_off_var_correction(graph, dim, keepdim) -> None:
    for param in ("dim", "keepdim"):
        same = _prov(SPREAD, graph, param, dim=dim, keepdim=keepdim)
        assert same is not None and same.status == "same" and same.why is not None, (param, same)
        assert same.why.code == "baked-value-same" and "the arguments of its ops at line 2" in same.why
    for other in ({"dim": 0}, {"dim": None if dim is not None else 1}, {"keepdim": not keepdim}):
        (name,) = other
        got = _prov(SPREAD, graph, name, **{"dim": dim, "keepdim": keepdim, **other})
        assert got is not None and got.status == "differs" and got.why is not None, (other, got)
        assert got.why.code == "baked-value-differs", got.why


def test_a_negative_dim_is_not_its_positive_twin() -> None:
    """std(dim=2) on a rank-3 tensor reduces the dim -1 does, but Dynamo's graph (and the
    key) holds the value the code gave, and var.correction keeps it: another graph."""
    got = _prov(SPREAD, SPREAD_KEEP, "dim", dim=2, keepdim=True)
    assert got is not None and got.status == "differs", got


UNSQ = one_def("def f_unsq(x, d):\n    return x.unsqueeze(d) * 2\n")
UNSQ_NEG = _graph("return x.unsqueeze(d) * 2", 'unsqueeze: "f32[2, 3, 4, 1][12, 4, 1, 1]cpu" = '
                  'torch.ops.aten.unsqueeze.default(arg0_1, -1)',
                  'mul: "f32[2, 3, 4, 1][12, 4, 1, 1]cpu" = torch.ops.aten.mul.Tensor(unsqueeze, 2)')
TOPK = one_def("def g_topk(x, k, d):\n    return x.topk(k, dim=d)[0] * 2\n")
TOPK_2_0 = _graph("return x.topk(k, dim=d)[0] * 2", "topk = torch.ops.aten.topk.default(arg0_1, 2, 0)",
                  'mul: "f32[2, 6][6, 1]cpu" = torch.ops.aten.mul.Tensor(getitem, 2)')
SQ = one_def("def g_sqn(x, d):\n    return x.squeeze(d).squeeze(0) * 2\n")
SQ_1 = _graph("return x.squeeze(d).squeeze(0) * 2",
              'squeeze: "f32[4, 6][6, 1]cpu" = torch.ops.aten.squeeze.dim(arg0_1, 1)',
              'squeeze_1: "f32[4, 6][6, 1]cpu" = torch.ops.aten.squeeze.dim(squeeze, 0)',
              'mul: "f32[4, 6][6, 1]cpu" = torch.ops.aten.mul.Tensor(squeeze_1, 2)')
PERM = one_def("def f_perm(x, a, b, c):\n    return x.permute(a, b, c) * 2\n")
PERM_NEG = _graph("return x.permute(a, b, c) * 2", 'permute: "f32[4, 2, 3][1, 12, 4]cpu" = '
                  'torch.ops.aten.permute.default(arg0_1, [2, 0, -2])',
                  'mul: "f32[4, 2, 3][1, 12, 4]cpu" = torch.ops.aten.mul.Tensor(permute, 2)')

SOFT = one_def("def f_soft(x, d):\n    return x.softmax(d) * 2\n")
SOFT_SUM = one_def("def f_soft_sum(x, d):\n    return x.softmax(d).sum(-1) * 2\n")
SOFT_NEG = _graph("return x.softmax(d) * 2",
                  'amax: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.amax.default(arg0_1, [-1], True)',
                  'sub: "f32[2, 3, 4][12, 4, 1]cpu" = torch.ops.aten.sub.Tensor(arg0_1, amax)',
                  'exp: "f32[2, 3, 4][12, 4, 1]cpu" = torch.ops.aten.exp.default(sub)',
                  'sum_1: "f32[2, 3, 1][3, 1, 1]cpu" = torch.ops.aten.sum.dim_IntList(exp, [-1], True)',
                  'div: "f32[2, 3, 4][12, 4, 1]cpu" = torch.ops.aten.div.Tensor(exp, sum_1)',
                  'mul: "f32[2, 3, 4][12, 4, 1]cpu" = torch.ops.aten.mul.Tensor(div, 2)')


@pytest.mark.parametrize("fn,graph,param,values,other", [
    (UNSQ, UNSQ_NEG, "d", {"d": -1}, 3),
    (TOPK, TOPK_2_0, "k", {"k": 2, "d": 0}, 3),
    (TOPK, TOPK_2_0, "d", {"k": 2, "d": 0}, -1),
    (SQ, SQ_1, "d", {"d": 1}, -1),
    (PERM, PERM_NEG, "c", {"a": 2, "b": 0, "c": -2}, 1),
    (SOFT, SOFT_NEG, "d", {"d": -1}, 2),
], ids=["unsqueeze", "topk-k", "topk-dim", "squeeze", "permute", "softmax"])
def test_an_int_an_op_keeps_as_given_is_that_argument(fn, graph, param, values, other) -> None:
    same = _prov(fn, graph, param, **values)
    assert same is not None and same.status == "same", same
    got = _prov(fn, graph, param, **{**values, param: other})
    assert got is not None and got.status == "differs", got


CATU = one_def("def g_catu(x, d):\n    return torch.cat([x, x], -1).unsqueeze(d) * 2\n")
CATU_0 = _graph("return torch.cat([x, x], -1).unsqueeze(d) * 2",
                'unsqueeze: "f32[4, 1, 6][6, 6, 1]cpu" = torch.ops.aten.unsqueeze.default(arg0_1, 1)',
                'expand: "f32[4, 2, 6][6, 0, 1]cpu" = torch.ops.aten.expand.default(unsqueeze, [4, 2, 6])',
                'clone: "f32[4, 2, 6][12, 6, 1]cpu" = torch.ops.aten.clone.default(expand, '
                'memory_format = torch.contiguous_format)',
                'view: "f32[4, 12][12, 1]cpu" = torch.ops.aten.view.default(clone, [4, 12])',
                'clone_1: "f32[4, 12][12, 1]cpu" = torch.ops.aten.clone.default(view)',
                'unsqueeze_1: "f32[1, 4, 12][48, 12, 1]cpu" = torch.ops.aten.unsqueeze.default(clone_1, 0)',
                'mul: "f32[1, 4, 12][48, 12, 1]cpu" = torch.ops.aten.mul.Tensor(unsqueeze_1, 2)')
IFEXP = one_def("def h_ifexp(x, d, keep):\n    return (x.unsqueeze(d) if keep else x.unsqueeze(0)) * 2\n")
IFEXP_1 = _graph("return (x.unsqueeze(d) if keep else x.unsqueeze(0)) * 2",
                 'unsqueeze: "f32[4, 1, 6][6, 6, 1]cpu" = torch.ops.aten.unsqueeze.default(arg0_1, 1)',
                 'mul: "f32[4, 1, 6][6, 6, 1]cpu" = torch.ops.aten.mul.Tensor(unsqueeze, 2)')
ONES = one_def("def g_ones(x, d):\n    return x.unsqueeze(d) * torch.ones(d + 5)\n")
ONES_1 = _graph("return x.unsqueeze(d) * torch.ones(d + 5)",
                'unsqueeze: "f32[4, 1, 6][6, 6, 1]cpu" = torch.ops.aten.unsqueeze.default(arg0_1, 1)',
                'full: "f32[6][1]cpu" = torch.ops.aten.full.default([6], 1, dtype = torch.float32, layout = '
                "torch.strided, device = device(type='cpu'), pin_memory = False)",
                'mul: "f32[4, 1, 6][6, 6, 1]cpu" = torch.ops.aten.mul.Tensor(unsqueeze, full)')


SOFT_SUM_NEG = _graph("return x.softmax(d).sum(-1) * 2", *SOFT_NEG.splitlines()[3:-2],
                      'sum_2: "f32[2, 3][3, 1]cpu" = torch.ops.aten.sum.dim_IntList(div, [-1])')


@pytest.mark.parametrize("fn,graph,values,why", [
    # torch.cat's decomposition traces an unsqueeze of its own, first: 2 ops for 1 call.
    (CATU, CATU_0, {"d": 0}, "its graph has 2 unsqueeze op(s) from it, for 1 in the code"),
    # the branch not taken traces nothing: 1 op for 2 calls.
    (IFEXP, IFEXP_1, {"d": 1, "keep": True}, "its graph has 1 unsqueeze op(s) from it, for 2 in the code"),
    # a sum of the code's own beside softmax's (made from softmax's lines and a sum's): 2 sums, 1 softmax.
    (SOFT_SUM, SOFT_SUM_NEG, {"d": -1}, "its graph has 2 sum op(s) from it, for 1 in the code"),
], ids=["cat-adds-one", "branch-traces-none", "softmax-and-sum"])
def test_ops_not_paired_one_to_one_with_the_calls_stay_unknown(fn, graph, values, why) -> None:
    for v in (values["d"], values["d"] + 1):
        got = _prov(fn, graph, "d", **{**values, "d": v})
        assert got is not None and got.status == "unknown" and got.why is not None, got
        assert got.why.code == "baked-value-unknown" and why in got.why, got.why


TRANSPOSE = one_def("def f_tr(x, d0, d1):\n    return x.transpose(d0, d1) * 2\n")
TRANSPOSE_NEG = _graph("return x.transpose(d0, d1) * 2", 'permute: "f32[4, 3, 2][1, 4, 12]cpu" = '
                       'torch.ops.aten.permute.default(arg0_1, [2, 1, 0])',
                       'mul: "f32[4, 3, 2][1, 4, 12]cpu" = torch.ops.aten.mul.Tensor(permute, 2)')


def test_a_call_whose_op_rewrites_its_dims_is_not_read() -> None:
    """transpose(-1, 0) traces permute [2, 1, 0], the dims made positive: transpose(2, 0)
    traces the same op and is another key, so the op says nothing exact."""
    got = _prov(TRANSPOSE, TRANSPOSE_NEG, "d0", d0=-1, d1=0)
    assert got is not None and got.status == "unknown", got


def test_an_int_that_is_a_dim_and_sizes_torch_ones_is_read_off_both_ops() -> None:
    # d is unsqueeze's dim and, through d + 5, the size list of torch.ones (aten.full's [6]):
    # both places hold the call's value for d=1, and another d moves both.
    same = _prov(ONES, ONES_1, "d", d=1)
    assert same is not None and same.status == "same", same
    other = _prov(ONES, ONES_1, "d", d=2)
    assert other is not None and other.status == "differs", other


def _one(code: str, *ops: str, tensor: str = "f32[4, 6][6, 1]cpu") -> str:
    return op_graph(FILE, 2, code, ops, tensor=tensor, returns="out")


# As torch 2.13 printed them for these functions compiled with dynamic=False on x [4, 6]
# (torch looked up another key for each `other` value, the same key for the built one).
_VERBATIM = [
    ("def f(x, d):\n    return x.argmax(d) + 1\n", {"d": -1}, 0,
     ('argmax: "i64[4][1]cpu" = torch.ops.aten.argmax.default(arg0_1, -1)',
      'out: "i64[4][1]cpu" = torch.ops.aten.add.Tensor(argmax, 1)')),
    ("def f(x, d):\n    return x.cumprod(d) * 2\n", {"d": 0}, -2,
     ('cumprod: "f32[4, 6][6, 1]cpu" = torch.ops.aten.cumprod.default(arg0_1, 0)',
      'out: "f32[4, 6][6, 1]cpu" = torch.ops.aten.mul.Tensor(cumprod, 2)')),
    ("def f(x, d):\n    return x.prod(d) * 2\n", {"d": 1}, -1,
     ('prod: "f32[4][1]cpu" = torch.ops.aten.prod.dim_int(arg0_1, 1)',
      'out: "f32[4][1]cpu" = torch.ops.aten.mul.Tensor(prod, 2)')),
    ("def f(x, d):\n    return x.argsort(d) + 1\n", {"d": -1}, 1,
     ("sort = torch.ops.aten.sort.default(arg0_1)", 'getitem_1: "i64[4, 6][6, 1]cpu" = sort[1]',
      'out: "i64[4, 6][6, 1]cpu" = torch.ops.aten.add.Tensor(getitem_1, 1)')),
    ("def f(x, d):\n    return x.max(d)[0] * 2\n", {"d": -1}, 0,
     ("max_1 = torch.ops.aten.max.dim(arg0_1, -1)", 'getitem: "f32[4][1]cpu" = max_1[0]',
      'out: "f32[4][1]cpu" = torch.ops.aten.mul.Tensor(getitem, 2)')),
    ("def f(x, i):\n    return x.select(-1, i) * 2\n", {"i": 2}, 1,
     ('select: "f32[4][6]cpu" = torch.ops.aten.select.int(arg0_1, -1, 2)',
      'out: "f32[4][1]cpu" = torch.ops.aten.mul.Tensor(select, 2)')),
    ("def f(x, k):\n    return x.diagonal(k) + 1\n", {"k": 1}, 0,
     ('diagonal: "f32[4][7]cpu" = torch.ops.aten.diagonal.default(arg0_1, 1)',
      'out: "f32[4][1]cpu" = torch.ops.aten.add.Tensor(diagonal, 1)')),
]


@pytest.mark.parametrize("src,values,other,ops", _VERBATIM,
                         ids=["argmax", "cumprod", "prod", "argsort", "max", "select", "diagonal"])
def test_more_ops_keep_their_int_as_given(src, values, other, ops) -> None:
    fn = one_def(src)
    graph = _one(src.splitlines()[1].strip(), *ops)
    (param,) = values
    same = _prov(fn, graph, param, **values)
    assert same is not None and same.status == "same", same
    got = _prov(fn, graph, param, **{param: other})
    assert got is not None and got.status == "differs", got


def test_a_keyword_the_table_does_not_place_leaves_the_int_unknown() -> None:
    """``x.argsort(d, stable=True)`` traces ``aten.sort.stable``, whose dim is a keyword:
    no place of it is read."""
    fn = one_def("def f(x, d):\n    return x.argsort(d, stable=True) + 1\n")
    graph = _one("return x.argsort(d, stable=True) + 1",
                 "sort = torch.ops.aten.sort.stable(arg0_1, stable = True, dim = 0)",
                 'getitem_1: "i64[4, 6][6, 1]cpu" = sort[1]',
                 'out: "i64[4, 6][6, 1]cpu" = torch.ops.aten.add.Tensor(getitem_1, 1)')
    got = _prov(fn, graph, "d", d=0)
    assert got is not None and got.status == "unknown", got
