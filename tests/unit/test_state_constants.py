"""A module attribute or a global given with a call, read off the constant it became
(fxcache_core/lookup/state_constants.py).

The op lines are as torch 2.13 printed them (``aot_forward_graph_str``, dynamic=None, a
fresh process's first call) for ``x * self.scale + self.k`` with ``scale=2.0, k=3`` and
``x.relu() * GAIN`` with ``GAIN=2.0``; only the file path is changed. What torch answers for
such calls is tests/torch/test_arguments.py's (``attr_net``, recorded in fresh processes)
and the evaluation's (``module_attr``, ``global_gain``); here the reading is checked
in-process, with the cases that must stay unread.
"""

from __future__ import annotations

import ast

import pytest

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import DynamicMode, TensorArg
from fxcache_core.lookup.float_exprs import compute
from fxcache_core.lookup.state_constants import read_state
from tests.synth import one_def, op_graph

FILE = "/src/net.py"
MODULE = CompiledFrom("forward", FILE, 1, module_class="Net", params=("x",), whole_module=True)
PLAIN = CompiledFrom("f", FILE, 1, params=("x",))
X = {"L['x']": TensorArg((4, 4))}


def _graph(line: int, code: str, *ops: str) -> str:
    return op_graph(FILE, line, code, ops, tensor="f32[4, 4][4, 1]cpu", returns="add", fn="forward")


FORWARD = one_def("def forward(self, x):\n    return x * self.scale + self.k\n")
FORWARD_GRAPH = _graph(2, "return x * self.scale + self.k",
                       'mul: "f32[4, 4][4, 1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 2.0);  arg0_1 = None',
                       'add: "f32[4, 4][4, 1]cpu" = torch.ops.aten.add.Tensor(mul, 3);  mul = None')
GLOBAL = one_def("def forward(x):\n    return x.relu() * GAIN\n")
GLOBAL_GRAPH = _graph(2, "return x.relu() * GAIN",
                      'relu: "f32[4, 4][4, 1]cpu" = torch.ops.aten.relu.default(arg0_1);  arg0_1 = None',
                      'mul: "f32[4, 4][4, 1]cpu" = torch.ops.aten.mul.Tensor(relu, 2.0);  relu = None')


def _read(fn, graph, src, value, frame=MODULE, mode=DynamicMode.NONE):
    got = read_state(fn, graph, frame, src, value, X, mode)
    return None if got is None else (got[0], got[1].code)


@pytest.mark.parametrize("src,value,want", [
    ("L['self'].scale", 2.0, ("accounted", "baked-constant")),
    ("L['self'].scale", 3.0, ("rules-out", "float-constant-differs")),
    ("L['self'].k", 3, ("accounted", "baked-constant")),
    ("L['self'].k", 4, ("rules-out", "baked-value-differs")),
])
def test_a_modules_float_and_int_attributes_are_the_constants_of_their_ops(src, value, want):
    assert _read(FORWARD, FORWARD_GRAPH, src, value) == want


def _on_disk(tmp_path, source: str) -> tuple[ast.FunctionDef, CompiledFrom]:
    """A global's rule reads the file around the ``def`` (a closure's locals shadow it):
    the source written where the frame says, the ``def`` found in it."""
    path = tmp_path / "net.py"
    path.write_text(source)
    fn = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    return fn, CompiledFrom("forward", str(path), fn.lineno, params=("x",))


@pytest.mark.parametrize("value,want", [(2.0, ("accounted", "baked-constant")),
                                        (3.0, ("rules-out", "float-constant-differs"))])
def test_a_global_read_in_arithmetic_is_the_constant_of_its_op(tmp_path, value, want):
    fn, frame = _on_disk(tmp_path, "GAIN = 2.0\n\n\ndef forward(x):\n    return x.relu() * GAIN\n")
    graph = GLOBAL_GRAPH.replace(f"{FILE}:2", f"{frame.file}:5")
    assert _read(fn, graph, "G['GAIN']", value, frame) == want


@pytest.mark.parametrize("source", [
    # a closure: GAIN is make()'s local, which the graph's 2.0 is, whatever the global
    "GAIN = 3.0\n\n\ndef make():\n    GAIN = 2.0\n\n    def forward(x):\n        return x.relu() * GAIN\n"
    "    return forward\n",
    # imported in the function: a local of that name
    "GAIN = 3.0\n\n\ndef forward(x):\n    from cfg import GAIN\n    return x.relu() * GAIN\n",
])
def test_a_global_name_the_function_takes_from_elsewhere_is_not_read(tmp_path, source):
    fn, frame = _on_disk(tmp_path, source)
    line = next(n + 1 for n, text in enumerate(source.splitlines()) if "return x.relu()" in text)
    graph = GLOBAL_GRAPH.replace(f"{FILE}:2", f"{frame.file}:{line}")
    assert _read(fn, graph, "G['GAIN']", 3.0, frame) is None
    assert _read(fn, graph, "G['GAIN']", 2.0, frame) is None


def test_the_same_float_decides_only_where_the_mode_specializes_it():
    # dynamic=True tensorifies a float read so (another key); without the mode, undecided.
    for mode in (DynamicMode.TRUE, DynamicMode.UNKNOWN):
        assert _read(FORWARD, FORWARD_GRAPH, "L['self'].scale", 2.0, mode=mode) == (
            "undecided", "float-depends-on-mode")
    # A constant that differs is another graph whatever the mode.
    assert _read(FORWARD, FORWARD_GRAPH, "L['self'].scale", 3.0, mode=DynamicMode.TRUE)[0] == "rules-out"
    # An int of a module is specialized in every mode (is_int_specialization_case).
    assert _read(FORWARD, FORWARD_GRAPH, "L['self'].k", 3, mode=DynamicMode.TRUE) == ("accounted", "baked-constant")


@pytest.mark.parametrize("src,body,value", [
    # a str the code compares
    ("L['self'].act", "return x * self.scale + self.k", "tanh"),
    # read only through a call of math: the constant is computed, not the value itself
    ("L['self'].scale", "return x * math.sqrt(self.scale) + self.k", 4.0),
    # assigned in the frame
    ("L['self'].scale", "self.scale = 2.0; return x * self.scale + self.k", 2.0),
    # read only through an expression (the graph's 3 is k=3's, and k=2's): the same
    # constant is not the same value, and code the frame calls may read it otherwise
    ("L['self'].k", "return x * self.scale + (self.k // 2 + 2)", 2),
    # read only through a local bound to it
    ("L['self'].scale", "s = self.scale; return x * s + self.k", 2.0),
])
def test_a_value_not_read_exactly_stays_unread(src, body, value):
    fn = one_def(f"def forward(self, x):\n    {body}\n")
    graph = FORWARD_GRAPH.replace("return x * self.scale + self.k", body)
    assert _read(fn, graph, src, value) is None
    if value == 2 and src == "L['self'].k":  # the expression's constant read exactly: the key is its
        assert _read(fn, graph, src, 3) is None
        assert _read(fn, graph, src, 4) == ("rules-out", "baked-value-differs")


def test_an_attribute_of_a_frame_that_is_no_method_or_a_shadowed_global_is_not_read():
    assert _read(FORWARD, FORWARD_GRAPH, "L['self'].scale", 2.0, PLAIN) is None
    shadowed = one_def("def forward(x, GAIN=2.0):\n    return x.relu() * GAIN\n")
    assert _read(shadowed, GLOBAL_GRAPH, "G['GAIN']", 2.0, PLAIN) is None


def test_an_attribute_is_computed_by_its_dotted_name():
    assert compute("-self.scale / 2", {"self.scale": 3.0}) == -1.5
    assert compute("self.k // 2", {"self.k": 5}) == 2
    assert compute("self.other", {"self.k": 5}) is None
