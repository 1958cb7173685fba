"""Arguments an op's decomposition keeps verbatim: ``log_softmax``'s and ``cumsum``'s dims
(fxcache_core/lookup/int_ops.py), ``layer_norm``'s and ``group_norm``'s eps and
``masked_fill``'s value (fxcache_core/lookup/float_exprs.py), and what dynamic=True does
with such a float (fxcache_core/lookup/float_restart.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) for the
evaluation's ``softmax_dims``, ``layer_norm_eps``, ``group_norm_args`` and
``masked_fill_float`` families on CPU; only the file path is changed. What torch answers
for such calls is tests/torch/test_decomposed_args.py's; here the reading of the graph is
checked in-process.
"""

from __future__ import annotations

from fxcache_core.lookup.float_exprs import float_provenance
from fxcache_core.lookup.float_restart import float_ops
from fxcache_core.lookup.int_exprs import value_provenance
from tests.synth import one_def, op_graph

FILE = "/src/fns.py"

SOFT_CUM = one_def("def soft_cum(x, dim=-1, cdim=0):\n    return x.log_softmax(dim).cumsum(cdim)\n")
_SC = "return x.log_softmax(dim).cumsum(cdim)"
SOFT_CUM_GRAPH = op_graph(
    FILE,
    2,
    _SC,
    (
        'amax: "f32[4, 1][1, 1]cpu" = torch.ops.aten.amax.default(arg0_1, [-1], True)',
        'sub: "f32[4, 6][6, 1]cpu" = torch.ops.aten.sub.Tensor(arg0_1, amax);  arg0_1 = amax = None',
        'exp: "f32[4, 6][6, 1]cpu" = torch.ops.aten.exp.default(sub)',
        'sum_1: "f32[4, 1][1, 1]cpu" = torch.ops.aten.sum.dim_IntList(exp, [-1], True);  exp = None',
        'log: "f32[4, 1][1, 1]cpu" = torch.ops.aten.log.default(sum_1);  sum_1 = None',
        'sub_1: "f32[4, 6][6, 1]cpu" = torch.ops.aten.sub.Tensor(sub, log);  sub = log = None',
        'cumsum: "f32[4, 6][6, 1]cpu" = torch.ops.aten.cumsum.default(sub_1, 0);  sub_1 = None',
    ),
    tensor="f32[4, 6][6, 1]cpu",
    returns="cumsum",
)


def _ints(fn, graph, param, **values):
    return value_provenance(fn, FILE, graph, param, values, frozenset({"x"}))


def test_log_softmax_and_cumsum_dims_are_read_off_their_ops() -> None:
    for param, same, others in (("dim", -1, (1, 0)), ("cdim", 0, (-2, 1))):
        got = _ints(SOFT_CUM, SOFT_CUM_GRAPH, param, **{param: same})
        assert got is not None and got.status == "same", (param, got)
        for other in others:  # the same dim counted from the other end is another graph
            got = _ints(SOFT_CUM, SOFT_CUM_GRAPH, param, **{param: other})
            assert got is not None and got.status == "differs" and got.why is not None, (
                param,
                other,
                got,
            )
            assert got.why.code == "baked-value-differs"


def test_another_op_of_the_same_name_leaves_the_dim_unknown() -> None:
    """A sum() beside log_softmax in the statement traces another sum op: which is whose
    is not read."""
    fn = one_def("def f(x, dim=-1):\n    return x.log_softmax(dim).sum(0)\n")
    graph = op_graph(
        FILE,
        2,
        "return x.log_softmax(dim).sum(0)",
        (
            *SOFT_CUM_GRAPH.splitlines()[3:9],
            'sum_2: "f32[6][1]cpu" = torch.ops.aten.sum.dim_IntList(sub_1, [0])',
        ),
        tensor="f32[4, 6][6, 1]cpu",
        returns="sum_2",
    )
    got = _ints(fn, graph, "dim", dim=-1)
    assert got is not None and got.status == "unknown", got


LN = one_def(
    "def layer_norm(x, eps=1e-5):\n    return F.layer_norm(x, (x.shape[-1],), eps=eps) + 1\n"
)
_LN = "return F.layer_norm(x, (x.shape[-1],), eps=eps) + 1"
LN_GRAPH = op_graph(
    FILE,
    2,
    _LN,
    (
        "var_mean = torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 0, keepdim = True)",
        'getitem: "f32[4, 1][1, 1]cpu" = var_mean[0]',
        'getitem_1: "f32[4, 1][1, 1]cpu" = var_mean[1];  var_mean = None',
        'add: "f32[4, 1][1, 1]cpu" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None',
        'rsqrt: "f32[4, 1][1, 1]cpu" = torch.ops.aten.rsqrt.default(add);  add = None',
        'sub: "f32[4, 8][8, 1]cpu" = torch.ops.aten.sub.Tensor(arg0_1, getitem_1)',
        'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(sub, rsqrt);  sub = rsqrt = None',
        'add_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(mul, 1);  mul = None',
    ),
    tensor="f32[4, 8][8, 1]cpu",
    returns="add_1",
)
GN = one_def(
    "def group_norm(x, groups=2, eps=1e-5):\n    return F.group_norm(x, groups, eps=eps) * 2\n"
)
_GN = "return F.group_norm(x, groups, eps=eps) * 2"
GN_GRAPH = op_graph(
    FILE,
    2,
    _GN,
    (
        'view: "f32[2, 2, 4, 4][32, 16, 4, 1]cpu" = torch.ops.aten.view.default(arg0_1, [2, 2, 4, 4])',
        "var_mean = torch.ops.aten.var_mean.correction(view, [2, 3], correction = 0, keepdim = True)",
        'getitem: "f32[2, 2, 1, 1][2, 1, 1, 1]cpu" = var_mean[0]',
        'getitem_1: "f32[2, 2, 1, 1][2, 1, 1, 1]cpu" = var_mean[1];  var_mean = None',
        'add: "f32[2, 2, 1, 1][2, 1, 1, 1]cpu" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None',
        'rsqrt: "f32[2, 2, 1, 1][2, 1, 1, 1]cpu" = torch.ops.aten.rsqrt.default(add);  add = None',
        'sub: "f32[2, 2, 4, 4][32, 16, 4, 1]cpu" = torch.ops.aten.sub.Tensor(view, getitem_1)',
        'mul: "f32[2, 2, 4, 4][32, 16, 4, 1]cpu" = torch.ops.aten.mul.Tensor(sub, rsqrt)',
        'view_1: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.view.default(mul, [2, 8, 4])',
        'mul_1: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.mul.Tensor(view_1, 2)',
    ),
    tensor="f32[2, 8, 4][32, 4, 1]cpu",
    returns="mul_1",
)
FILL = one_def(
    "def fill_above(x, value=-1.0, t=0.5):\n    return x.masked_fill(x > t, value) * 2\n"
)
_FILL = "return x.masked_fill(x > t, value) * 2"
FILL_GRAPH = op_graph(
    FILE,
    2,
    _FILL,
    (
        'gt: "b8[4, 8][8, 1]cpu" = torch.ops.aten.gt.Scalar(arg0_1, 0.5)',
        'scalar_tensor: "f32[][]cpu" = torch.ops.aten.scalar_tensor.default(-1.0, dtype = torch.float32, '
        "layout = torch.strided, device = device(type='cpu'))",
        'where: "f32[4, 8][8, 1]cpu" = torch.ops.aten.where.self(gt, scalar_tensor, arg0_1)',
        'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(where, 2)',
    ),
    tensor="f32[4, 8][8, 1]cpu",
    returns="mul",
)


def _floats(fn, graph, param, **scalars):
    return float_provenance(fn, FILE, graph, param, scalars, frozenset({"x"}))


def test_a_norms_eps_is_its_decompositions_add() -> None:
    for fn, graph, extra in ((LN, LN_GRAPH, {}), (GN, GN_GRAPH, {"groups": 2})):
        same = _floats(fn, graph, "eps", eps=1e-5, **extra)
        assert (
            same.status == "same"
            and same.why is not None
            and same.why.code == "float-constant-same"
        ), same
        other = _floats(fn, graph, "eps", eps=1e-6, **extra)
        assert other.status == "differs" and other.why is not None, other
        assert other.why.code == "float-constant-differs"


def test_masked_fills_value_is_its_scalar_tensor_not_the_comparisons_scalar() -> None:
    assert _floats(FILL, FILL_GRAPH, "value", value=-1.0, t=0.5).status == "same"
    assert _floats(FILL, FILL_GRAPH, "value", value=-2.0, t=0.5).status == "differs"


def test_another_argument_of_a_norm_is_not_read_as_its_eps() -> None:
    """group_norm's group count given as a float is no op's scalar: the eps's add is not
    its constant (unknown, never the eps's value taken for it)."""
    got = _floats(GN, GN_GRAPH, "groups", groups=1e-5, eps=1e-5)
    assert got.status == "unknown", got
    got = _ints(GN, GN_GRAPH, "groups", groups=2, eps=1e-5)
    assert got is not None and got.status == "unknown", got


def test_a_float_a_decomposed_call_takes_is_specialized_under_dynamic_true() -> None:
    """Dynamo's graph calls layer_norm itself with the float (not the add its
    decomposition makes), an op the tensorify pass cannot convert: a restart specializes
    it, never a tensor input."""
    for fn, graph, param, values in (
        (LN, LN_GRAPH, "eps", {"eps": 1e-5}),
        (FILL, FILL_GRAPH, "value", {"value": -1.0, "t": 0.5}),
    ):
        prov = _floats(fn, graph, param, **values)
        got = float_ops(graph, param, prov, values)
        assert got.outcome == "specialized" and got.line == 2, got


def test_a_value_the_graph_holds_rounded_to_float32_is_not_another_graph() -> None:
    """A decomposition that computed with the eps in float32 would print it rounded
    (9.999999974752427e-07 for 1e-06): not read as another value."""
    graph = LN_GRAPH.replace("1e-05", "9.999999974752427e-07")
    got = _floats(LN, graph, "eps", eps=1e-6)
    assert got.status == "unknown", got
    assert _floats(LN, graph, "eps", eps=1e-5).status == "differs"
