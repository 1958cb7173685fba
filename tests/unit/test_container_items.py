"""The items of a dict or dataclass argument the code reads one by one, each a parameter of
its own in the item view (fxcache_core/lookup/container_items.py).

The graph lines are as torch 2.13 printed them (``aot_forward_graph_str``) for the
evaluation's ``dict_config`` family (``cfg_block``, x [4, 8], ``cfg={'n': 4, 'scale':
0.5, 'act': 'relu', 'norm': True}``, dynamic=None); only the file path is changed. What
torch answers for such calls is the recorded corpus's (tests/torch/test_containers.py)
and the evaluation's; here the reading of the source and the graph is checked in-process.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.lookup.container_items import graph_view, item_reads, item_view
from fxcache_core.lookup.float_exprs import float_provenance
from fxcache_core.lookup.int_exprs import value_provenance
from tests.synth import one_def

FILE = "/src/fns.py"


CFG = one_def('def cfg_block(x, cfg):\n    y = x[:, : cfg["n"]] * cfg["scale"]\n    if cfg["act"] == "gelu":\n'
          "        y = y.relu()\n    return y\n")
GRAPH = "\n".join([
    "class <lambda>(torch.nn.Module):",
    '    def forward(self, arg0_1: "f32[4, 8][8, 1]cpu"):',
    f'        # File: {FILE}:2 in cfg_block, code: y = x[:, : cfg["n"]] * cfg["scale"]',
    '        slice_1: "f32[4, 4][8, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, 0, 4);  arg0_1 = None',
    '        mul: "f32[4, 4][8, 1]cpu" = torch.ops.aten.mul.Tensor(slice_1, 0.5);  slice_1 = None',
    "        return (mul,)"])


def test_every_item_read_is_found_with_its_source():
    items = item_reads(CFG, "cfg")
    assert items is not None
    assert [(i.text, i.source) for i in items] == [
        ("cfg['n']", "L['cfg']['n']"), ("cfg['scale']", "L['cfg']['scale']"), ("cfg['act']", "L['cfg']['act']")]


@pytest.mark.parametrize("src", [
    "def f(x, cfg):\n    return x * len(cfg)\n",                   # read whole
    "def f(x, cfg):\n    return x * cfg.get('n', 1)\n",            # a method: the item may be absent
    "def f(x, cfg):\n    cfg['n'] = 2\n    return x * cfg['n']\n",  # an item assigned
    "def f(x, cfg):\n    k = 'n'\n    return x * cfg[k]\n",        # a key not constant
    "def f(x, cfg):\n    return g(cfg)\n",                         # passed on
])
def test_a_parameter_read_otherwise_is_no_container_of_items(src):
    assert item_reads(one_def(src), "cfg") is None


def test_attributes_are_items_of_an_object():
    items = item_reads(one_def("def f(x, cfg):\n    return x[:, : cfg.n] * cfg.scale\n"), "cfg")
    assert items is not None and [(i.text, i.source) for i in items] == [
        ("cfg.n", "L['cfg'].n"), ("cfg.scale", "L['cfg'].scale")]


def test_the_view_reads_each_item_as_a_parameter_in_source_and_graph_alike():
    items = item_reads(CFG, "cfg")
    assert items is not None
    view, gview = item_view(CFG, "cfg", items), graph_view(GRAPH, items)
    n, scale, act = (i.alias for i in items)
    assert f"code: y = x[:, : {n}] * {scale}" in gview
    assert act in ast.unparse(view) and "cfg" not in ast.unparse(view.body[0])
    values = {n: 4, scale: 0.5, act: "relu"}
    assert value_provenance(view, FILE, gview, n, values, frozenset({"x"})).status == "same"
    assert value_provenance(view, FILE, gview, n, {**values, n: 6}, frozenset({"x"})).status == "differs"
    scalars = {n: 4, scale: 0.5}
    assert float_provenance(view, FILE, gview, scale, scalars, frozenset({"x"})).status == "same"
    assert float_provenance(view, FILE, gview, scale, {**scalars, scale: 0.25}, frozenset({"x"})).status == "differs"


def test_the_graph_view_leaves_other_names_alone():
    items = item_reads(one_def("def f(x, cfg):\n    return x * cfg.n\n"), "cfg")
    assert items is not None
    g = f"        # File: {FILE}:2 in f, code: return x * cfg.n + my_cfg.n + cfg.nn"
    assert graph_view(g, items).endswith(f"return x * {items[0].alias} + my_cfg.n + cfg.nn")
