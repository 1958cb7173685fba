"""Reading which value a static graph baked in for an int argument.

``specialized_values`` aligns two printed forward graphs (``aot_forward_graph_str``)
of one function: the one where Dynamo traced the int as a SymInt, and the one
where it baked the value in. These strings have the shape torch 2.13 prints
(the real ones are checked in test_real_cache.py and test_torch_versions.py).
"""

from __future__ import annotations

from fxcache_core.lookup.printed_graphs import parse_printed_graph, specialized_values

DYNAMIC = '''class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "Sym(s77)",  # PlainAOTInput(idx=0)
        arg1_1: "f32[s77][1]cpu",  # PlainAOTInput(idx=1)
        arg2_1: "Sym(s86)",  # PlainAOTInput(idx=2)
    ):
        # File: /a/m.py:3 in f, code: return x * n - 1
        mul: "f32[s77][1]cpu" = torch.ops.aten.mul.Tensor(arg1_1, arg2_1);  arg1_1 = arg2_1 = None
        sub: "f32[s77][1]cpu" = torch.ops.aten.sub.Tensor(mul, 1);  mul = None
        return (
            sub,  # PlainAOTOutput(idx=0)
        )
'''

STATIC = '''class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "f32[5][1]cpu",  # PlainAOTInput(idx=0)
    ):
        # File: /a/m.py:3 in f, code: return x * n - 1
        mul: "f32[5][1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, -2);  arg0_1 = None
        sub: "f32[5][1]cpu" = torch.ops.aten.sub.Tensor(mul, 1);  mul = None
        return (
            sub,  # PlainAOTOutput(idx=0)
        )
'''


def _values(dynamic: str, static: str):
    return specialized_values(parse_printed_graph(dynamic), parse_printed_graph(static))


def test_the_constant_where_the_other_graph_has_the_symint_is_its_value():
    # x's size and n were both baked in; x's placeholder is renumbered (arg1_1 -> arg0_1).
    assert _values(DYNAMIC, STATIC) == {"s77": 5, "arg0_1": 5, "arg2_1": -2, "s86": -2}


def test_graphs_that_differ_beyond_the_constants_give_nothing():
    assert _values(DYNAMIC, STATIC.replace("sub.Tensor(mul, 1)", "sub.Tensor(mul, 2)")) is None
    assert _values(DYNAMIC, STATIC.replace("aten.sub", "aten.add")) is None
    # One symbol, two values: not one trace.
    assert _values(DYNAMIC, STATIC.replace('sub: "f32[5]', 'sub: "f32[6]')) is None
    # A line more (e.g. a sym_size node only the dynamic trace needs).
    extra = STATIC.replace("        sub:", "        neg: \"f32[5][1]cpu\" = torch.ops.aten.neg.default(mul)\n        sub:")
    assert _values(DYNAMIC, extra) is None
    # The static graph keeps an input the dynamic one does not have.
    assert _values(DYNAMIC, STATIC.replace(
        '        arg0_1: "f32[5][1]cpu",  # PlainAOTInput(idx=0)\n',
        '        arg0_1: "f32[5][1]cpu",  # PlainAOTInput(idx=0)\n        arg1_1: "f32[3][1]cpu",\n')) is None


def test_a_placeholder_and_its_symbol_must_agree():
    # n's symbol also sizes a tensor: torch.ones(n) -> f32[s86]; the two places must agree.
    dyn = DYNAMIC.replace("sub: \"f32[s77][1]cpu\" = torch.ops.aten.sub.Tensor(mul, 1)",
                          "sub: \"f32[s86][1]cpu\" = torch.ops.aten.sub.Tensor(mul, 1)")
    ok = STATIC.replace("sub: \"f32[5][1]cpu\"", "sub: \"f32[-2][1]cpu\"")
    assert _values(dyn, ok)["s86"] == -2
    bad = STATIC.replace("sub: \"f32[5][1]cpu\"", "sub: \"f32[7][1]cpu\"")
    assert _values(dyn, bad) is None


def test_a_symint_the_static_graph_keeps_is_renumbered_not_baked_in():
    dyn = DYNAMIC.replace('"f32[s77][1]cpu",  # PlainAOTInput(idx=1)', '"f32[5][1]cpu",  # PlainAOTInput(idx=1)')
    dyn = dyn.replace('"f32[s77][1]cpu" = ', '"f32[5][1]cpu" = ').replace('arg1_1, arg2_1', 'arg1_1, arg0_1')
    # n (arg0_1, s77 here) baked in as 3; a second int m (arg2_1, s86) stays a SymInt, renumbered.
    dyn = dyn.replace("sub.Tensor(mul, 1)", "sub.Tensor(mul, arg2_1)")
    static = STATIC.replace("mul.Tensor(arg0_1, -2)", "mul.Tensor(arg0_1, 3)").replace(
        "sub.Tensor(mul, 1)", "sub.Tensor(mul, arg1_1)").replace(
        '        arg0_1: "f32[5][1]cpu",  # PlainAOTInput(idx=0)\n',
        '        arg0_1: "f32[5][1]cpu",  # PlainAOTInput(idx=0)\n        arg1_1: "Sym(s86)",\n')
    assert _values(dyn, static) == {"arg0_1": 3, "s77": 3}


def test_printed_graphs_in_one_line_form_and_junk():
    one_line = '''class M(torch.nn.Module):
    def forward(self, arg0_1: "f32[5][1]cpu", arg1_1: "Sym(s3)"):
        mul: "f32[5][1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None
        return (mul,)
'''
    static = '''class M(torch.nn.Module):
    def forward(self, arg0_1: "f32[5][1]cpu"):
        mul: "f32[5][1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 4);  arg0_1 = None
        return (mul,)
'''
    assert _values(one_line, static) == {"arg1_1": 4, "s3": 4}
    # A size only the placeholder types name (no op line prints it) is read there.
    summed = one_line.replace('"f32[5][1]cpu", arg1_1', '"f32[s9][1]cpu", arg2_1: "Sym(s9)", arg1_1')
    assert _values(summed, static) == {"arg1_1": 4, "s3": 4, "s9": 5, "arg2_1": 5}
    assert parse_printed_graph("no graph here") is None and parse_printed_graph(None) is None
    assert parse_printed_graph("def forward(\n    a,\n") is None  # signature never closed


class _Keys:
    """A stand-in for FunctionKeys: keys of one function, with their printed graphs."""

    def __init__(self, keys, graphs, floats=None):
        self._keys, self._graphs, self._floats = keys, graphs, floats

    def of(self, origin):
        return self._keys

    def graph(self, key):
        return parse_printed_graph(self._graphs[key.key])

    def floats(self, key, name):
        return self._floats


def _keys(*graphs):
    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.cache.scan import CacheKey
    from fxcache_core.decode.entries import DecodedEntry, parse_graph_signature

    out = []
    for n, (g, sources) in enumerate(graphs):
        inputs = tuple(i.__class__(**{**i.__dict__, "source": s})
                       for i, s in zip(parse_graph_signature(g), sources, strict=True))
        k = CacheKey(KeyKind.AOT_AUTOGRAD, f"a{n}", f"/nowhere/a{n}", ())
        out.append((k, DecodedEntry(kind=KeyKind.AOT_AUTOGRAD, type_name="AOTAutogradResult",
                                    guards_expr=None, inputs=inputs)))
    return out


def test_a_float_or_0d_tensor_where_a_key_baked_an_int_is_another_graph():
    from fxcache_core.decode.entries import Origin
    from fxcache_core.lookup.binding import DynamicMode, TensorArg
    from fxcache_core.lookup.int_args import IntArgsCall, int_argument_rule

    (dyn, dyn_d), (static, static_d) = _keys(
        (DYNAMIC, ["L['x'].size()[0]", "L['x']", "L['n']"]), (STATIC, ["L['x']"]))
    keys = _Keys([(dyn, dyn_d), (static, static_d)], {"a0": DYNAMIC, "a1": STATIC})
    o = Origin("f", "/a/m.py", 3, ("f",))

    def rule(n, params=("x", "n"), of_function=False, k=keys):
        return int_argument_rule(k, IntArgsCall(static, static_d, o, {"L['x']": TensorArg((5,)), "L['n']": n},
                                                DynamicMode.NONE, of_function=of_function, params=params))

    for n in (TensorArg(()), -2.0):
        r = rule(n)
        assert [p.code for p in r.problems] == ["scalar-kind-differs"], r
        assert "was the Python int -2 when this key was traced" in r.problems[0]
    assert rule(-2) == rule(-2, params=()) and not rule(-2).problems  # the value baked in
    assert [p.code for p in rule(7).problems] == ["int-baked-differs"]
    # No key of the function takes n as a SymInt: what the static key baked is unknown.
    alone = _Keys([(static, static_d)], {"a1": STATIC})
    r = rule(TensorArg(()), k=alone)
    assert not r.problems and [x.code for x in r.notes] == ["scalar-not-input"], r
    assert rule(TensorArg(()), params=(), k=alone).notes == ()  # n is not f's parameter
    assert rule(TensorArg(()), params=(), of_function=True, k=alone).notes  # --fn f: it is
    assert [x.code for x in rule(2.5, k=alone).notes] == ["scalar-not-input"]
    # A float the graph computes with: fit_baked_floats compares its constants.
    assert rule(2.5, k=_Keys([(static, static_d)], {"a1": STATIC}, floats=())).notes == ()


# expand_rows of the evaluation (x.expand(n, -1) + torch.zeros(n, x.shape[1]) + ...), as torch
# 2.13 printed its two keys (the file path shortened): the symbolic trace numbers its adds
# past the size nodes it dropped (add_3, add_13), the static one does not (add, add_1).
EXPAND_DYNAMIC = '''class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "f32[1, 8][8, 1]cpu",  # PlainAOTInput(idx=0)
        arg1_1: "Sym(s86)",  # PlainAOTInput(idx=1)
    ):
        # File: /a/fns_r5.py:40 in expand_rows, code: return x.expand(n, -1) + torch.zeros(n, x.shape[1])
        expand: "f32[s86, 8][0, 1]cpu" = torch.ops.aten.expand.default(arg0_1, [arg1_1, -1]);  arg0_1 = None
        full: "f32[s86, 8][8, 1]cpu" = torch.ops.aten.full.default([arg1_1, 8], 0, dtype = torch.float32)
        add_3: "f32[s86, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(expand, full);  expand = full = None
        sum_1: "f32[s86, 1][1, 1]cpu" = torch.ops.aten.sum.dim_IntList(add_3, [1], True)
        add_13: "f32[s86, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(add_3, sum_1);  add_3 = sum_1 = None
        return (
            add_13,  # PlainAOTOutput(idx=0)
        )
'''
EXPAND_STATIC = '''class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "f32[1, 8][8, 1]cpu",  # PlainAOTInput(idx=0)
    ):
        # File: /a/fns_r5.py:40 in expand_rows, code: return x.expand(n, -1) + torch.zeros(n, x.shape[1])
        expand: "f32[4, 8][0, 1]cpu" = torch.ops.aten.expand.default(arg0_1, [4, -1]);  arg0_1 = None
        full: "f32[4, 8][8, 1]cpu" = torch.ops.aten.full.default([4, 8], 0, dtype = torch.float32)
        add: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(expand, full);  expand = full = None
        sum_1: "f32[4, 1][1, 1]cpu" = torch.ops.aten.sum.dim_IntList(add, [1], True)
        add_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(add, sum_1);  add = sum_1 = None
        return (
            add_1,  # PlainAOTOutput(idx=0)
        )
'''


def test_nodes_numbered_otherwise_are_one_trace_when_one_name_stands_for_the_other():
    assert _values(EXPAND_DYNAMIC, EXPAND_STATIC) == {"arg1_1": 4, "s86": 4}
    # Two names for one node, or one for two, is not a renaming.
    assert _values(EXPAND_DYNAMIC, EXPAND_STATIC.replace("add.Tensor(add, sum_1)", "add.Tensor(full, sum_1)")) is None
    assert _values(EXPAND_DYNAMIC, EXPAND_STATIC.replace("add_1: ", "add: ").replace("(\n            add_1,",
                                                                                   "(\n            add,")) is None
    # A node that keeps its name where it is defined keeps it where it is used: both define
    # add and add_1, and returning add is not returning add_1.
    same_names = EXPAND_DYNAMIC.replace("add_3", "add").replace("add_13", "add_1")
    assert _values(same_names, EXPAND_STATIC) == {"arg1_1": 4, "s86": 4}
    assert _values(same_names.replace("(\n            add_1,", "(\n            add,"), EXPAND_STATIC) is None
    # An op's name is never a node's: a graph of div is not one of mul renamed, though each
    # names its node after its op.
    div = STATIC.replace("mul: ", "div: ").replace("aten.mul.Tensor", "aten.div.Tensor").replace(
        "Tensor(mul, 1);  mul = None", "Tensor(div, 1);  div = None")
    assert _values(DYNAMIC, div) is None
