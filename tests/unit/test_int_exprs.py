"""Which constants of a graph an int, a tuple of ints or a bool became
(fxcache_core/lookup/int_exprs.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``) for these very
functions, in the evaluation's caches (tests/harness/evaluation: ``window``, ``pool``,
``reduce_dim``, ``top_k``) and in a compile of ``window`` with ``n=16`` on a ``[4, 32]``
input, whose slice over the whole dim AOTAutograd leaves out (an alias). Only the file
path is changed. What torch answers for those calls is the evaluation's (run by torch in
fresh processes); here the reading of the graph is checked in-process.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.lookup.int_exprs import value_provenance
from tests.synth import one_def, op_graph

FILE = "/src/fns.py"


def _graph(line: int, code: str, *ops: str) -> str:
    return op_graph(FILE, line, code, ops, tensor="f32[4, 32][32, 1]cpu", returns="mul")


WINDOW = one_def("def window(x, n):\n    return x[:, : n * 2] * (n + 1)\n")
WINDOW_4 = _graph(2, "return x[:, : n * 2] * (n + 1)",
                  'slice_1: "f32[4, 8][32, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, 0, 8);  arg0_1 = None',
                  'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(slice_1, 5);  slice_1 = None')
WINDOW_16 = _graph(2, "return x[:, : n * 2] * (n + 1)",
                   'alias: "f32[4, 32][32, 1]cpu" = torch.ops.aten.alias.default(arg0_1);  arg0_1 = None',
                   'mul: "f32[4, 32][32, 1]cpu" = torch.ops.aten.mul.Tensor(alias, 17);  alias = None')


def _prov(fn: ast.FunctionDef, graph: str, param: str, **values: object):
    return value_provenance(fn, FILE, graph, param, values, frozenset({"x"}))


def test_an_int_through_a_slice_bound_and_a_factor_is_read_where_each_value_goes() -> None:
    same = _prov(WINDOW, WINDOW_4, "n", n=4)
    assert same is not None and same.status == "same" and same.why is not None
    assert same.why.code == "baked-value-same"
    other = _prov(WINDOW, WINDOW_4, "n", n=5)
    assert other is not None and other.status == "differs" and other.why is not None
    assert other.why.code == "baked-value-differs"


def test_a_slice_over_the_whole_dim_left_out_of_the_graph_stays_unknown() -> None:
    # n=16 was traced: x[:, :32] is all of dim 1, and AOTAutograd has an alias, no slice.
    # Its factor agrees with n=16, but the slice cannot be read (n=20 slices all of it
    # too): unknown, never "same".
    got = _prov(WINDOW, WINDOW_16, "n", n=16)
    assert got is not None and got.status == "unknown"
    assert got.why is not None and got.why.code == "baked-value-unknown"
    # the factor alone rules out any other n: 17 is n + 1
    for n in (20, 4):
        other = _prov(WINDOW, WINDOW_16, "n", n=n)
        assert other is not None and other.status == "differs", n


POOL = one_def("def pool(x, dims=(2, 3), keepdim=False):\n    return x.mean(dim=dims, keepdim=keepdim)\n")
POOL_GRAPH = _graph(2, "return x.mean(dim=dims, keepdim=keepdim)",
                    'mean: "f32[2, 3][3, 1]cpu" = torch.ops.aten.mean.dim(arg0_1, [2, 3]);  arg0_1 = None')


@pytest.mark.parametrize(("param", "value", "status"), [
    ("dims", (2, 3), "same"),
    ("dims", (3, 2), "differs"),      # Dynamo's graph keeps the order: another key
    ("dims", (-2, -1), "differs"),    # the same dims of a 4-d input, written otherwise: another key
    ("dims", (1, 2), "differs"),
    ("keepdim", False, "same"),       # aten prints no keepdim when it is False
    ("keepdim", True, "differs"),
])
def test_a_tuple_and_a_bool_of_a_reduction_against_its_op(param: str, value: object, status: str) -> None:
    got = _prov(POOL, POOL_GRAPH, param, **{param: value})
    assert got is not None and got.status == status


def test_a_tuples_same_names_the_tuple_it_assumes() -> None:
    got = _prov(POOL, POOL_GRAPH, "dims", dims=(2, 3))
    assert got is not None and got.why is not None and "a list traces another graph" in got.why


REDUCE = one_def("def reduce_dim(x, dim=1, keepdim=False):\n    return x.sum(dim, keepdim=keepdim) * 2\n")
REDUCE_GRAPH = _graph(2, "return x.sum(dim, keepdim=keepdim) * 2",
                      'sum_1: "f32[4][1]cpu" = torch.ops.aten.sum.dim_IntList(arg0_1, [1]);  arg0_1 = None',
                      'mul: "f32[4][1]cpu" = torch.ops.aten.mul.Tensor(sum_1, 2);  sum_1 = None')


@pytest.mark.parametrize(("value", "status"), [(1, "same"), (-1, "differs"), (0, "differs")])
def test_an_int_dim_is_the_one_element_list_aten_takes(value: int, status: str) -> None:
    got = _prov(REDUCE, REDUCE_GRAPH, "dim", dim=value)
    assert got is not None and got.status == status


TOP_K = one_def("def top_k(x, k=None):\n    if k is not None:\n        x = x[:, :k]\n    return x.softmax(-1)\n")
TOP_K_3 = _graph(3, "x = x[:, :k]",
                 'slice_1: "f32[4, 3][8, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, 0, 3);  arg0_1 = None')


def test_an_is_not_none_test_leaves_the_reads_that_reach_ops_to_decide() -> None:
    assert _prov(TOP_K, TOP_K_3, "k", k=3).status == "same"  # type: ignore[union-attr]
    assert _prov(TOP_K, TOP_K_3, "k", k=5).status == "differs"  # type: ignore[union-attr]
    # a key traced with k=None has no op from that statement: nothing is read from it
    none_graph = _graph(4, "return x.softmax(-1)",
                        'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten._softmax.default(arg0_1, -1, False)')
    assert _prov(TOP_K, none_graph, "k", k=3).status == "unknown"  # type: ignore[union-attr]


@pytest.mark.parametrize("src", [
    "def f(x, n):\n    if n > 2:\n        x = x * 2\n    return x[:, :n]\n",        # a condition on it
    "def f(x, n):\n    return x.narrow(1, 0, 4)[:, :n]\n",                         # another op that slices
    "def f(x, n):\n    return helper(x, n)[:, :n]\n",                              # passed to a helper
    "def f(x, n):\n    m = helper(n)\n    return x[:, :m]\n",                       # through a helper's local
    "def f(x, n):\n    m = n\n    m = m + 1\n    return x[:, :m]\n",                 # a local bound twice
])
def test_a_read_that_reaches_no_readable_place_leaves_it_unknown(src: str) -> None:
    got = _prov(one_def(src), WINDOW_4.replace(f"{FILE}:2", f"{FILE}:3"), "n", n=4)
    assert got is None or got.status == "unknown"
    assert got is not None


def test_an_int_computing_a_float_is_left_to_the_float_rule() -> None:
    fn = one_def("def f(x, n):\n    return x * (n / 2)\n")
    assert _prov(fn, WINDOW_4, "n", n=4) is None


DROP = one_def("def drop_block(x, training=False):\n    return F.dropout(x, p=0.5, training=training) + 1\n")
_DROP_CODE = "return F.dropout(x, p=0.5, training=training) + 1"
DROP_FALSE = _graph(2, _DROP_CODE,
                    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None')
DROP_TRUE = _graph(
    2, _DROP_CODE,
    'rand: "f32[4, 8][8, 1]cpu" = torch.ops.aten.rand.default([4, 8], dtype = torch.float32, '
    "device = device(type='cpu'), pin_memory = False)",
    'gt: "b8[4, 8][8, 1]cpu" = torch.ops.aten.gt.Scalar(rand, 0.5);  rand = None',
    'mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(gt, arg0_1);  gt = arg0_1 = None',
    'mul_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(mul, 2.0);  mul = None',
    'add: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(mul_1, 1);  mul_1 = None')


@pytest.mark.parametrize(("graph", "value", "status"), [
    (DROP_FALSE, False, "same"), (DROP_FALSE, True, "differs"),
    (DROP_TRUE, True, "same"), (DROP_TRUE, False, "differs"),
])
def test_dropouts_training_flag_is_whether_the_graph_draws_random_numbers(graph: str, value: bool,
                                                                          status: str) -> None:
    got = _prov(DROP, graph, "training", training=value)
    assert got is not None and got.status == status


@pytest.mark.parametrize("src", [
    "def f(x, training=False):\n    return F.dropout(x, p=p0, training=training) + 1\n",     # p not a literal
    "def f(x, training=False):\n    return F.dropout(x, p=0.5, training=training) + torch.rand(3)\n",
    "def f(x, training=False):\n    return F.dropout(x, p=0.0, training=training) + 1\n",   # p=0 draws nothing
])
def test_a_dropout_whose_draw_says_nothing_of_the_flag_stays_unknown(src: str) -> None:
    got = _prov(one_def(src), DROP_FALSE, "training", training=False)
    assert got is not None and got.status == "unknown"


def test_an_int_given_where_the_graph_divides_by_a_float_stays_unknown() -> None:
    # temp_norm of the evaluation: built with t=0.5 (a float the graph keeps, div by 0.5),
    # asked with t=1: the op holds no int constant for the int; unknown, said in words.
    fn = one_def("def f(x, t):\n    return x / t\n")
    graph = _graph(2, "return x / t",
                   'mul: "f32[4, 32][32, 1]cpu" = torch.ops.aten.div.Tensor(arg0_1, 0.5);  arg0_1 = None')
    got = _prov(fn, graph, "t", t=1)
    assert got is not None and got.status == "unknown" and got.why is not None
    assert got.why.code == "baked-value-unknown" and "int constant(s)" in got.why


FLAG_MUL = one_def("def flag_mul(x, flag=True):\n    return x * flag + 1\n")
FLAG_MUL_GRAPH = _graph(2, "return x * flag + 1",
                        'add: "f32[4, 32][32, 1]cpu" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None')


@pytest.mark.parametrize("flag", [False, True])
def test_a_bool_read_as_a_number_is_unknown_not_an_error(flag: bool) -> None:
    """``x * flag + 1``: a bool the arithmetic reads is no int the op constants can be matched
    against (Inductor drops ``x * True``), so its provenance is unknown, with its reason code,
    whichever value the call gives."""
    got = _prov(FLAG_MUL, FLAG_MUL_GRAPH, "flag", flag=flag)
    assert got is not None and got.status == "unknown"
    assert got.why is not None and got.why.code == "baked-value-unknown"
    assert "flag" in got.why and "line 2" in got.why
