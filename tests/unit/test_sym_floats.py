"""Reading a float folded beside a symbolic int off a printed graph's symbolic nodes.

The graph lines are copied from a key torch 2.13 wrote for ``adam_like`` after a recompile
made ``step`` a SymInt (tests/harness/evaluation/fns.py); the real cases are in
tests/torch/test_scalar_arguments.py (``decay_step``, ``decay_neg``). These check the edges a
compile does not reach cheaply: a node left over, a part that does not read the
parameter differing, a form not read.
"""

from __future__ import annotations

from fxcache_core.lookup.float_exprs import compute
from fxcache_core.lookup.sym_floats import sym_node_operands, symbolic_group

FILE = "/w/fns.py"
GRAPH = f"""
        # File: {FILE}:47 in adam_like, code: bias = 1 - beta1 ** step
        sym_float: "Sym(ToFloat(s51))" = torch.sym_float(arg2_1);  arg2_1 = None
        pow_1: "Sym(FloatPow(0.9, ToFloat(s51)))" = 0.9 ** sym_float;  sym_float = None
        sub: "Sym(1.00000000000000 - FloatPow(0.9, ToFloat(s51)))" = 1.0 - pow_1;  pow_1 = None
        # File: {FILE}:48 in adam_like, code: p.add_(m, alpha=-lr / bias)
        truediv: "Sym(FloatTrueDiv(-0.001, 1.0 - FloatPow(0.9, ToFloat(s51))))" = -0.001 / sub;  sub = None
        add_3: "f32[3][1]cpu" = torch.ops.aten.add.Tensor(arg6_1, add_2, alpha = truediv)
"""
EXPR = "-lr / (1 - beta1 ** step)"


def _judge(param: str, lr: float, beta1: float, graph: str = GRAPH) -> tuple[str, str] | None:
    operands = sym_node_operands(graph, FILE, {47, 48})
    assert operands is not None
    return symbolic_group([EXPR], param, frozenset({"step"}), {"lr": lr, "beta1": beta1, "step": 3},
                          operands, compute)


def test_each_folded_part_is_the_operand_of_its_operator():
    assert sorted(sym_node_operands(GRAPH, FILE, {47, 48}) or []) == [
        ("**", "left", 0.9), ("-", "left", 1.0), ("/", "left", -0.001)]
    assert sym_node_operands(GRAPH, FILE, {46}) == []  # other lines, other files: nothing
    assert sym_node_operands(GRAPH, "/w/other.py", {47, 48}) == []


def test_the_calls_values_are_the_graphs_or_differ_in_the_parameters_part():
    assert _judge("lr", 0.001, 0.9) == ("same", "-0.001")
    assert _judge("beta1", 0.001, 0.9) == ("same", "0.9")
    assert _judge("lr", 0.002, 0.9) == ("differs", "the graph has -0.001 there, the call gives -0.002")
    # beta1 differs: for lr, a part it does not read differs too, so lr alone says nothing
    assert _judge("lr", 0.001, 0.5)[0] == "unknown"  # type: ignore[index]
    assert _judge("beta1", 0.001, 0.5)[0] == "differs"  # type: ignore[index]


def test_a_node_left_over_or_a_form_not_read_leaves_it_unknown():
    extra = GRAPH + "        mul: \"Sym(2.0*ToFloat(s51))\" = 2.0 * sym_float_1\n"
    extra = extra.replace("add_3:", "# File: /w/fns.py:48 in adam_like, code: x\n        add_3:")
    assert _judge("lr", 0.001, 0.9, extra)[0] == "unknown"  # type: ignore[index]
    neg = symbolic_group(["-(lr / (1 - 0.9 ** step))"], "lr", frozenset({"step"}), {"lr": 0.1, "step": 3},
                         [("/", "left", 0.1), ("**", "left", 0.9), ("-", "left", 1.0)], compute)
    assert neg is not None and neg[0] == "unknown" and "a sign on a symbolic expression" in neg[1]
    # An expression that reads no symbol is not this module's: the plain constant rule reads it
    assert symbolic_group(["-lr"], "lr", frozenset({"step"}), {"lr": 0.1}, [], compute) is None
    called = GRAPH.replace("= -0.001 / sub", "= torch.sym_max(-0.001, sub)")
    assert sym_node_operands(called, FILE, {48}) is None
