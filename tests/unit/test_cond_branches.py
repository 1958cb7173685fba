"""The branch rule on conditional expressions and on a module's attributes, on source written
here (fxcache_core/functions/cond_tests.py, the tests frame_reads keeps; the side a key's graph
shows, in fxcache_core/lookup/branch_accounts.py, on the lines and ops a graph is made to show;
may_make_up's reading of them). tests/torch/test_cond_branches.py checks the rules against
torch's lookups on caches it builds."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import replace
from types import SimpleNamespace

from fxcache_core.functions.cond_tests import nn_layers, submodules
from fxcache_core.functions.params import reads_of_def
from fxcache_core.lookup.branch_accounts import _side, _side_ops
from fxcache_core.lookup.branches import TracedCode
from fxcache_core.lookup.layer_bodies import body_makes_op_on_layer
from fxcache_core.lookup.made_up_ops import may_make_up

SOURCE = textwrap.dedent('''\
    import torch
    import torch.nn.functional as F


    def resid(x, residual=True, act="relu"):
        y = x.sin()
        z = y + x if residual else y
        w = F.relu(z) if act == "relu" else F.silu(z)
        v = (z
             if residual else w)
        u = z if residual else w; t = u.cos()
        return torch.cat([z if residual else w, t])


    class Block(torch.nn.Module):
        def __init__(self, helper):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.mixer = helper(self)
            self.use_act = True
            self.mode = "a"
            self.steps = 0

        def step(self):
            self.steps += 1

        def forward(self, x):
            y = self.lin(x)
            if self.mode == "a":
                y = y * 2
            if self.steps:
                y = y - 1
            return F.gelu(y) if self.use_act else y

        def rebinds(self, x):
            self = x
            return x if self.use_act else x.relu()


    def gated(x, flag=False, keep=True):
        if flag and x.dim() > 2:
            x = x.relu()
        if not keep or x.dim() > 3:
            x = x.cos()
        return x
''')


def _reads(tmp_path, name: str):
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    fn = next(n for n in ast.walk(ast.parse(SOURCE)) if isinstance(n, ast.FunctionDef) and n.name == name)
    return reads_of_def(fn, str(path)), fn


def test_a_conditional_expression_alone_on_its_line_is_a_test_and_names_its_bare_side(tmp_path):
    reads, _ = _reads(tmp_path, "resid")
    by_line = {t.line: t for t in reads.tests}
    assert set(by_line) == {7, 8}  # not one over two lines, one beside another statement, one inside a call
    assert (by_line[7].form, by_line[7].op, by_line[7].bare, by_line[7].body, by_line[7].orelse) == \
        ("ifexp", "truth", False, (7, 7), (7, 7))
    assert (by_line[8].op, by_line[8].operand, by_line[8].bare) == ("eq", "relu", None)  # both sides make ops
    assert by_line[7].shown == "`... if residual else ...`"
    residual = reads.param("residual")
    assert [n for _, n in residual.tests] == [7] and residual.other == (10, 11, 12)


def test_a_method_s_tested_attributes_are_parameters_of_their_own(tmp_path):
    reads, _ = _reads(tmp_path, "forward")
    got = {p.name: p for p in reads.attrs}
    assert set(got) == {"self.mode", "self.steps", "self.use_act"}  # self.lin is called, not tested
    assert not got["self.use_act"].assigned and not got["self.mode"].assigned
    assert got["self.steps"].assigned  # step() changes it
    assert [reads.tests[i].text for i, _ in got["self.mode"].tests] == ["self.mode == 'a'"]
    assert reads.param("x") is not None and all(not p.name.startswith("self") for p in reads.params)
    rebinds, _ = _reads(tmp_path, "rebinds")
    assert all(p.assigned for p in rebinds.attrs)


def test_a_submodule_is_what_init_makes_by_a_call_that_does_not_see_self():
    subs = submodules(ast.parse(SOURCE))
    assert "self.lin" in subs
    assert "self.mixer" not in subs  # given self
    assert "self.use_act" not in subs and "self.steps" not in subs


def _acc(tmp_path, name: str, traced: TracedCode):
    reads, fn = _reads(tmp_path, name)
    ledger = SimpleNamespace(traced=lambda *a: traced, siblings=lambda *a: [])
    return SimpleNamespace(ledger=ledger, call=SimpleNamespace(key=None), frame=SimpleNamespace(function=name),
                           reads=reads), reads, fn


def test_an_op_from_the_line_shows_the_side_that_is_not_bare_and_no_op_shows_nothing(tmp_path):
    ran = TracedCode(frozenset({6, 7}), {6: ("torch.ops.aten.sin.default",), 7: ("torch.ops.aten.add.Tensor",)})
    skipped = TracedCode(frozenset({6}), {6: ("torch.ops.aten.sin.default",)})
    acc, reads, _ = _acc(tmp_path, "resid", ran)
    t = next(t for t in reads.tests if t.line == 7)
    assert _side(acc, ran, t)[0] is True
    assert _side_ops(acc, t, True, ran) == ("torch.ops.aten.add.Tensor",)
    assert _side_ops(acc, t, False, ran) == ()
    assert _side(acc, skipped, t) == (None, "")  # the add might have made no op: not told
    both = next(t for t in reads.tests if t.line == 8)
    assert _side(acc, TracedCode(frozenset({8}), {8: ("torch.ops.aten.relu.default",)}), both) == (None, "")


def test_may_make_up_reads_past_the_expression_tested_and_a_submodule_called_alike(tmp_path):
    _, fn = _reads(tmp_path, "forward")
    seen = {28: ["torch.ops.aten.addmm.default"], 30: ["torch.ops.aten.mul.Tensor"],
            33: ["torch.ops.aten.mul.Tensor", "torch.ops.aten.erf.default"]}
    gelu = ("mul", "erf")
    assert may_make_up(fn, 33, gelu, seen)[0] == 28  # self.lin(x): the module's own code

    def same(c: ast.Call) -> bool:
        return ast.unparse(c) == "self.lin(x)"

    assert may_make_up(fn, 33, gelu, seen, same_calls=same)[0] == 30  # y * 2 may run in one trace only
    assert may_make_up(fn, 33, gelu, seen, {29: (True, True), 31: (False, False)}, same_calls=same) is None
    # the other way round: the skipped if's mul, with gelu's side taken in both traces
    assert may_make_up(fn, 29, ("mul",), seen, {33: (True, True), 31: (False, False)}, same_calls=same) is None
    assert may_make_up(fn, 29, ("mul",), seen, {31: (False, False)}, same_calls=same)[0] == 33


def test_an_operand_of_and_is_known_to_hold_only_where_the_body_ran_and_of_or_only_where_it_did_not(tmp_path):
    reads, _ = _reads(tmp_path, "gated")
    flag, keep = (next(t for t in reads.tests if t.line == n) for n in (41, 43))
    assert (flag.form, flag.op, flag.text, flag.shown) == ("and", "truth", "flag and x.dim() > 2",
                                                          "`if flag and x.dim() > 2:`")
    assert (keep.form, keep.op) == ("or", "not") and keep.holds(True) is False
    assert reads.param("flag").other == () and reads.param("keep").other == ()
    ran = TracedCode(frozenset({42, 44}), {42: ("torch.ops.aten.relu.default",), 44: ("torch.ops.aten.cos.default",)})
    neither = TracedCode(frozenset({45}), {})
    acc, _, _ = _acc(tmp_path, "gated", ran)
    assert _side(acc, ran, flag)[0] is True  # the body ran: flag held
    assert _side(acc, ran, keep) == (None, "")  # the body ran: not keep, or the size
    assert _side(acc, neither, replace(flag, orelse=(45, 45))) == (None, "")  # the else ran: flag, or the size, failed
    assert _side(acc, neither, replace(keep, orelse=(45, 45)))[0] is False  # the else ran: keep held


LAYERS = textwrap.dedent('''\
    import torch
    from torch import nn


    class Scale(nn.Module):
        def __init__(self, make):
            super().__init__()
            self.lin = nn.Linear(8, 8)
            self.own = make(8)
            self.keep = 0.5

        def forward(self, x, n: int = 2):
            y = self.lin(x)
            if self.training:
                y = y * self.keep
            return y + x if n else y

        def dropped(self, x):
            y = self.lin(x)
            if self.training:
                y = y * self.keep
            return x if self.keep else y

        def other_input(self, x):
            y = self.own(x)
            if self.training:
                y = y * self.keep
            return y + x
''')


def test_a_body_on_a_stock_layer_s_tensor_makes_an_op_whenever_it_runs_where_it_reaches_the_return(tmp_path):
    path = tmp_path / "layers.py"
    path.write_text(LAYERS)
    assert nn_layers(ast.parse(LAYERS)) == {"lin": "Linear"}  # make(8) is no stock layer
    fns = {n.name: n for n in ast.walk(ast.parse(LAYERS)) if isinstance(n, ast.FunctionDef)}

    def made(name: str, tensors=("x",)):
        fn = fns[name]
        (t,) = reads_of_def(fn, str(path)).tests[:1]
        return body_makes_op_on_layer(str(path), fn.lineno, name, t, dict.fromkeys(tensors))

    assert made("forward") == ("mul", 16)
    assert made("forward", tensors=()) is None  # x not known to be a tensor the call gives
    assert made("dropped") is None  # y may not reach the output: its mul may be dropped as dead
    assert made("other_input") is None
