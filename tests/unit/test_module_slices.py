"""An int that slices a module's layers (fxcache_core/lookup/module_slices.py) and an int the
code only branches on (fxcache_core/lookup/branch_ints.py): the source readers, in-process.

The sources are written here (``ast``, never run); the input sources are as torch 2.13's
AOTAutograd entries name a ``ModuleList``'s parameters (``aot_autograd_arg_pos_to_source``:
the evaluation's ``layer_slice`` family, tests/harness/evaluation). What torch answers for
such calls is tests/torch/test_layer_slices.py's (``layer_stack``, ``flags`` given an int).
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.branch_ints import branched_only
from fxcache_core.lookup.module_slices import (
    layer_indices,
    other_read,
    slice_loop,
    slice_provenance,
    unseen_call,
)

STACK = textwrap.dedent('''\
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range(3))
            self.layers.append(nn.Linear(8, 8))
            self.norm = nn.LayerNorm(8)

        def forward(self, x, depth=2):
            x = self.norm(x)
            for layer in self.layers[:depth]:
                x = layer(x).relu()
            return x
    ''')


def _forward(src: str) -> tuple[ast.Module, ast.FunctionDef]:
    tree = ast.parse(src)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    return tree, fn


def test_a_for_loop_over_a_slice_of_layers_by_the_parameter_is_read() -> None:
    tree, fn = _forward(STACK)
    got = slice_loop(fn, "depth")
    assert isinstance(got, tuple) and got[0] == ("layers",) and got[1].lineno == 10
    assert other_read(tree, got[0], got[1]) is None  # __init__'s reads are not forward's
    assert slice_loop(fn, "x") is None  # not read as a slice's bound: the other rules'


@pytest.mark.parametrize("body,why", [
    ("for layer in self.layers[:depth]:\n        if self.training:\n            x = layer(x)", "control flow"),
    ("for layer in self.layers[:depth]:\n        x = layer(x)\n        break", "control flow"),
    ("for layer in self.layers[:depth]:\n        x = x + 1", "does not call layer"),
    ("for layer in self.layers[1:depth]:\n        x = layer(x)", None),
    ("for layer in self.layers[:depth]:\n        x = layer(x)\n    x = x * depth", "elsewhere"),
    ("depth = depth - 1\n    for layer in self.layers[:depth]:\n        x = layer(x)", "elsewhere"),
    ("ls = self.layers[:depth]\n    for layer in ls:\n        x = layer(x)", "plain for loop"),
    ("for layer in self.layers[:depth]:\n        x = layer(x)\n    x = x + sum(p.sum() for p in self.parameters())",
     "other than through its attributes"),
    ("for layer in self.layers[:depth]:\n        x = layer(x)\n    x = helper(self, x)",
     "other than through its attributes"),
    ("for layer in self.layers[:depth]:\n        x = layer(x)\n    x = super().forward(x)", "super()"),
])
def test_a_slice_the_rule_cannot_count_is_a_reason_or_none(body: str, why: str | None) -> None:
    _, fn = _forward(f"def forward(self, x, depth=2):\n    {body}\n    return x\n")
    got = slice_loop(fn, "depth")
    if why is None:
        assert got is None  # a lower bound: not this rule's shape at all
    else:
        assert isinstance(got, str) and why in got and got.code == "slice-length-unknown", got


@pytest.mark.parametrize("extra,line", [
    ("    def last(self, x):\n        return self.layers[-1](x)\n", 14),
    ("    def head(self, x):\n        return self.layers.forward(x)\n", 14),
    ("    def ok(self, x):\n        return self.norm(x)\n", None),
])
def test_another_method_reading_the_layers_is_found(extra: str, line: int | None) -> None:
    tree, fn = _forward(STACK + extra)
    got = slice_loop(fn, "depth")
    assert isinstance(got, tuple)
    assert other_read(tree, got[0], got[1]) == line


def test_a_nested_list_and_a_call_of_its_owner_elsewhere() -> None:
    src = textwrap.dedent('''\
        def forward(self, x, depth=2):
            for block in self.encoder.blocks[:depth]:
                x = block(x)
            return self.encoder(x)
        ''')
    tree, fn = _forward(src)
    got = slice_loop(fn, "depth")
    assert isinstance(got, tuple) and got[0] == ("encoder", "blocks")
    assert other_read(tree, got[0], got[1]) == 4  # self.encoder(x) may run every block


def test_layer_indices_are_read_from_the_keys_input_sources() -> None:
    sources = ["L['self']._modules['layers']._modules['0']._parameters['weight']",
               "L['self']._modules['layers']._modules['0']._parameters['bias']", "L['x']",
               "L['self']._modules['layers']._modules['1']._buffers['running_mean']",
               "L['self']._modules['layers2']._modules['5']._parameters['weight']",
               "L['self']._modules['norm']._parameters['weight']", None]
    assert layer_indices(sources, ("layers",)) == {0, 1}
    assert layer_indices(sources, ("layers2",)) == {5}
    nested = ["L['self']._modules['encoder']._modules['blocks']._modules['3']._parameters['w']"]
    assert layer_indices(nested, ("encoder", "blocks")) == {3}
    assert layer_indices(nested, ("blocks",)) == set()


def test_an_int_read_only_by_if_tests_is_the_branch_rules(tmp_path) -> None:
    path = tmp_path / "flags.py"
    path.write_text(textwrap.dedent('''\
        def f(x, use_sin=True, n=2, k=1):
            if use_sin:
                return x.sin()
            if n == 3:
                x = x * 2
            return x.cos() * k
        '''))
    frame = CompiledFrom("f", str(path), 1, params=("x", "use_sin", "n", "k"))
    assert branched_only(frame, "L['use_sin']") and branched_only(frame, "L['n']")
    assert not branched_only(frame, "L['k']")  # an op's scalar: the int rule's
    assert not branched_only(frame, "L['x']") and not branched_only(frame, "L['kwargs']['n']")
    assert not branched_only(None, "L['n']")


def test_another_classs_layers_are_another_object() -> None:
    other = "\n\nclass Other(nn.Module):\n    def forward(self, x):\n        return self.layers[0](x)\n"
    tree, fn = _forward(STACK + other)
    got = slice_loop(fn, "depth")
    assert isinstance(got, tuple) and other_read(tree, got[0], got[1]) is None


def _layers(*idx: int) -> list[str]:
    return [f"L['self']._modules['layers']._modules['{i}']._parameters['weight']" for i in idx] + ["L['x']"]


class _Catalog:
    """The one thing slice_provenance asks of a catalog: a key's first readable entry."""

    def __init__(self, sources: list[str]) -> None:
        self.sources = sources

    def first_readable(self, key):
        return None, type("Entry", (), {"arg_sources": tuple(self.sources)})()


@pytest.mark.parametrize("taken,depth,want", [
    ((0, 1), 1, "differs"), ((0, 1), 0, "differs"),
    # the key applied at least two layers: a third without parameters (a ReLU), the
    # list's end, or another instance's keys make 2 and 3 unknown, never the same
    ((0, 1), 2, "unknown"), ((0, 1), 3, "unknown"), ((0, 1), -1, "unknown"),
    ((0, 2), 2, "differs"), ((0, 2), 3, "unknown"),  # layer 1 made no input: the highest counts
    ((), 1, "unknown"),
])
def test_only_a_depth_below_the_layers_a_key_took_decides(tmp_path, taken, depth, want) -> None:
    path = tmp_path / "stack.py"
    path.write_text(STACK)
    tree, fn = _forward(STACK)
    frame = CompiledFrom("forward", str(path), 8, params=("self", "x", "depth"))
    got = slice_provenance(_Catalog(_layers(*taken)), None, frame, fn, "depth", depth)
    assert got is not None and got.status == want, got
    assert got.why is not None and got.why.code == {"differs": "slice-length-differs",
                                                          "unknown": "slice-length-unknown"}[want]


def test_a_method_of_self_the_class_does_not_set_may_read_the_layers() -> None:
    tree, fn = _forward(STACK)
    got = slice_loop(fn, "depth")
    assert isinstance(got, tuple) and unseen_call(tree, fn, got[1]) is None  # self.norm: __init__ sets it
    src = STACK.replace("x = self.norm(x)", "x = self.prepare(x)")
    tree, fn = _forward(src)
    got = slice_loop(fn, "depth")
    assert isinstance(got, tuple) and unseen_call(tree, fn, got[1]) == 9
