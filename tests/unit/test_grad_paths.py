"""Whether an AOTAutograd entry without a backward shows it was compiled with grad off
(fxcache_core/lookup/grad_paths.py), on printed graphs and sources written by hand; the
real calls, with torch as the judge, are tests/torch/test_state_arguments.py's."""

from __future__ import annotations

from pathlib import Path

import pytest

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.grad_paths import grad_off_path

_GRAPH = """class <lambda>(torch.nn.Module):
    def forward(
        self,
        arg0_1: "f32[4, 8][8, 1]cpu",  # PlainAOTInput(idx=0)
        arg1_1: "f32[8, 4][4, 1]cpu",  # PlainAOTInput(idx=1)
    ):
        # File: {file}:{line} in f, code: return (x @ w).relu() + 1
        mm: "f32[4, 4][4, 1]cpu" = torch.ops.aten.mm.default(arg0_1, arg1_1);  arg0_1 = arg1_1 = None
        {rest}
        return (
            {out},  # PlainAOTOutput(idx=0)
        )
"""
_RELU_ADD = (
    'relu: "f32[4, 4][4, 1]cpu" = torch.ops.aten.relu.default(mm);  mm = None\n'
    '        add: "f32[4, 4][4, 1]cpu" = torch.ops.aten.add.Tensor(relu, 1);  relu = None'
)


def _path(
    tmp_path: Path,
    body: str,
    *,
    rest: str = _RELU_ADD,
    out: str = "add",
    rg=(False, True),
    wrappers=(),
    line: int = 2,
) -> str | None:
    path = tmp_path / "m.py"
    path.write_text(body)
    graph = _GRAPH.format(file=path, line=line, rest=rest, out=out)
    frame = CompiledFrom(
        function="f",
        file=str(path),
        line=1,
        parent=None,
        module_class=None,
        wrappers=wrappers,
        params=("x", "w"),
        whole_module=False,
        unread=None,
    )
    return grad_off_path(graph, rg, frame)


_SRC = "def f(x, w):\n    return (x @ w).relu() + 1\n"


def test_an_output_computed_from_an_input_that_required_grad_by_ops_that_carry_it_is_found(
    tmp_path,
):
    assert _path(tmp_path, _SRC) == "arg1_1 -> mm -> relu -> add"
    assert _path(tmp_path, _SRC, rg=(True, False)) == "arg0_1 -> mm -> relu -> add"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"rg": (False, False)},  # no input required grad
        {"rg": (False, None)},  # not recorded
        {"rg": (True,)},  # the flags do not match the graph's inputs
        # A comparison cuts the output from the input (its result is bool, its op carries no grad).
        {
            "rest": 'gt: "b8[4, 4][4, 1]cpu" = torch.ops.aten.gt.Scalar(mm, 0);  mm = None\n'
            '        add: "f32[4, 4][4, 1]cpu" = torch.ops.prims.convert_element_type.default(gt, torch.float32)'
        },
        # An op outside the table (detach), or an output that is not computed from the input.
        {"rest": 'add: "f32[4, 4][4, 1]cpu" = torch.ops.aten.detach.default(mm);  mm = None'},
        {"rest": 'add: "f32[4, 8][8, 1]cpu" = torch.ops.aten.relu.default(arg0_1)'},
        {"rest": "", "out": "arg1_1"},  # the input itself
        {"line": 9},  # ops from a line outside the function (a callee's)
        {"wrappers": (("wrapper", "w.py", 3),)},  # under a decorator's wrapper
    ],
)
def test_a_graph_that_does_not_show_it_is_not(tmp_path, kwargs):
    assert _path(tmp_path, _SRC, **kwargs) is None


@pytest.mark.parametrize(
    "src",
    [
        "def f(x, w):\n    with torch.no_grad():\n        return (x @ w).relu() + 1\n",
        "def f(x, w):\n    torch.set_grad_enabled(False)\n    return (x @ w).relu() + 1\n",
        "def f(x, w):\n    return (x @ w.detach()).relu() + 1\n",
        "def f(x, w):\n    helper()\n    return (x @ w).relu() + 1\n",  # a helper may set the grad mode
        "def f(x, w):\n    self.off()\n    return (x @ w).relu() + 1\n",
    ],
)
def test_a_source_that_may_set_the_grad_mode_or_cut_grad_is_not_read(tmp_path, src):
    assert _path(tmp_path, src) is None
