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
    taken=(),
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
    return grad_off_path(graph, rg, frame, taken)


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


@pytest.mark.parametrize(
    "src",
    [
        # A context manager of any name may turn grad off (C.ng = torch.no_grad elsewhere).
        "def f(x, w):\n    with C.ng():\n        return (x @ w).relu() + 1\n",
        # A helper module's function, or a local bound to one, may set the grad mode and leave it set.
        "def f(x, w):\n    h15.off()\n    return (x @ w).relu() + 1\n",
        "def f(x, w):\n    h = h15\n    h.off()\n    return (x @ w).relu() + 1\n",
        # A parameter the key takes no tensor from is any object: its method may too.
        "def f(x, w, ctx):\n    ctx.off()\n    return (x @ w).relu() + 1\n",
        # A parameter rebound to something else.
        "def f(x, w):\n    x = h15\n    x.off()\n    return (w @ w).relu() + 1\n",
    ],
)
def test_a_with_block_or_a_method_of_anything_but_the_keys_tensors_and_torch_is_not_read(
    tmp_path, src
):
    assert _path(tmp_path, src, taken=("L['x']", "L['w']")) is None


def test_methods_of_the_keys_tensors_of_values_computed_from_them_and_of_torch_are_read(tmp_path):
    body = "def f(x, w):\n    h = torch.matmul(x, w)\n    return h.relu().add(1)\n\n\n"
    src = body + "import torch\n"
    assert _path(tmp_path, src, line=3, taken=("L['x']", "L['w']")) == "arg1_1 -> mm -> relu -> add"
    # A name that only looks like torch's (bound otherwise) is not torch's.
    assert (
        _path(tmp_path, body + "import mylib as torch\n", line=3, taken=("L['x']", "L['w']"))
        is None
    )


def test_a_long_path_is_found_in_linear_time_and_shown_with_its_middle_left_out(tmp_path):
    n = 20_000
    rest = "\n        ".join(
        f'r{i}: "f32[4, 4][4, 1]cpu" = torch.ops.aten.relu.default({"mm" if i == 0 else f"r{i - 1}"})'
        for i in range(n)
    )
    got = _path(tmp_path, _SRC, rest=rest, out=f"r{n - 1}")
    assert got is not None and got.startswith("arg1_1 -> mm -> relu -> relu -> relu -> ... (")
    assert got.endswith("relu -> relu -> relu -> relu") and len(got) < 200
