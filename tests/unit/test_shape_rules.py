"""Sizes a call brings to 0 or 1 inside a graph, marked ranges, optional tensors and lists:
the rules of fxcache_core/lookup/boundaries.py, mark_ranges.py, optional_tensors.py and
the ``:min=``/``:max=`` of ``--shapes`` (binding.py), on graph texts and sources written
by hand in torch 2.13's printed form (the real calls, with torch as the judge, are
tests/torch/test_shapes_oracle.py's)."""

from __future__ import annotations

import ast

import pytest

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import ShapeSpecError
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import TensorArg, parse_shapes
from fxcache_core.lookup.boundaries import graph_sizes, size_boundary
from fxcache_core.lookup.mark_ranges import outside_own_range
from fxcache_core.lookup.optional_tensors import default_is_none, read_whenever_given
from fxcache_core.lookup.sequence_lengths import reads_every_element, shorter_sequence

SYMBOLS = (SymbolInfo("t0", "s77", "L['x'].size()[0]", 10), SymbolInfo("t1", "s27", "L['x'].size()[1]", 4))


def _graph(*types: str) -> str:
    return "\n".join(f'        y{i}: "{t}" = torch.ops.aten.foo.default(x)' for i, t in enumerate(types))


def test_graph_sizes_reads_every_size_of_the_printed_types():
    g = _graph("f32[s77 - 1, s27][s27, 1]cpu", "f32[1, s27][s27, 1]cpu", "f32[(s77//2), s27][s27, 1]cpu")
    assert graph_sizes(g) == ["s77 - 1", "s27", "1", "(s77//2)"]


def test_a_linear_size_at_1_is_solved_for_the_input_dim():
    """x[1:] of 2 rows: x.size(0) - 1 == 1, which Dynamo solves for x.size(0) = 2 (torch 2.13
    then traces x.size(0) static: another key)."""
    b = size_boundary(_graph("f32[s77 - 1, s27][s27, 1]cpu"), SYMBOLS, {"t0": 2, "t1": 4})
    assert b is not None and (b.shown, b.value, b.solved) == ("x.size(0) - 1", 1, ("x.size(0)", 2))


@pytest.mark.parametrize("size,values", [
    ("(s77//2)", {"t0": 3, "t1": 4}),       # a floor division: not solved
    ("s77 - 2", {"t0": 2, "t1": 4}),        # 0, not 1: seen to keep the key
    ("s77 - s27", {"t0": 5, "t1": 4}),      # two symbols
])
def test_a_size_at_0_or_1_dynamo_does_not_solve_is_found_but_not_solved(size, values):
    b = size_boundary(_graph(f"f32[{size}, 3][3, 1]cpu"), SYMBOLS, values)
    assert b is not None and b.solved is None


def test_sizes_that_stay_above_1_or_are_inputs_are_no_boundary():
    assert size_boundary(_graph("f32[s77 - 1, s27][s27, 1]cpu"), SYMBOLS, {"t0": 9, "t1": 4}) is None
    # x.size(1) == 1 itself is the fit's (an input dim), not a derived size.
    assert size_boundary(_graph("f32[s77, s27][s27, 1]cpu"), SYMBOLS, {"t0": 9, "t1": 1}) is None


def test_an_int_arguments_symbol_alone_at_0_or_1_is_a_boundary_never_solved():
    """torch.arange(n) under dynamic=True: n's symbol sizes a tensor alone, and the key's
    entries keep it from 0 and 1 (n >= 2). torch 2.13 traced another graph for n=0, with n
    still an input: a boundary, undecided, no symbol solved (tests/torch/test_int_arguments.py
    records it). A tensor dim's symbol alone stays the fit's."""
    symbols = (*SYMBOLS, SymbolInfo("t2", "s86", "L['n']", 8))
    for n in (0, 1):
        b = size_boundary(_graph("f32[s86][1]cpu"), symbols, {"t0": 4, "t1": 16, "t2": n})
        assert b is not None and (b.shown, b.value, b.solved) == ("n", n, None)
    assert size_boundary(_graph("f32[s86][1]cpu"), symbols, {"t0": 4, "t1": 16, "t2": 2}) is None
    assert size_boundary(_graph("f32[s77][1]cpu"), symbols, {"t0": 1, "t1": 16, "t2": 8}) is None


def test_a_marked_range_is_parsed_per_marked_dim():
    (x,) = parse_shapes(["x=[8,3]:mark_dynamic=[0]:min=2:max=16"]).values()
    assert isinstance(x, TensorArg) and x.ranges == ((0, 2, 16),) and str(x) == "[8,3]:mark_dynamic=[0]:min=2:max=16"
    (y,) = parse_shapes(["y=[8,3]:mark_dynamic=[0,1]:min=[2,4]:max=[16,64]"]).values()
    assert isinstance(y, TensorArg) and y.ranges == ((0, 2, 16), (1, 4, 64))
    (z,) = parse_shapes(["z=[8,3]:mark_dynamic=[0]:min=4"]).values()
    assert isinstance(z, TensorArg) and z.ranges == ((0, 4, None),)


@pytest.mark.parametrize("spec,why", [
    ("x=[8,3]:min=2:max=16", "give mark_dynamic"),
    ("x=[8,3]:mark_dynamic=[0]:min=20:max=16", "over its max"),
    ("x=[8,3]:mark_dynamic=[0]:min=[2,4]", "2 values for 1 marked dims"),
    ("x=[8,3]:mark_dynamic=[0]:max=sixteen", "not a list of integers"),
])
def test_a_range_that_cannot_be_a_mark_is_one_clear_error(spec, why):
    with pytest.raises(ShapeSpecError) as e:
        parse_shapes([spec])
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_size_outside_its_own_marked_range_raises_before_any_lookup():
    inputs = parse_shapes(["x=[40,3]:mark_dynamic=[0]:min=2:max=16"])
    why = outside_own_range(inputs)
    assert why is not None and why.code == "mark-range-outside" and "x.size(0) = 40" in why
    assert outside_own_range(parse_shapes(["x=[16,3]:mark_dynamic=[0]:min=2:max=16"])) is None
    assert outside_own_range(parse_shapes(["x=[40,3]:mark_dynamic=[0]"])) is None


def _def(src: str) -> ast.FunctionDef:
    (fn,) = ast.parse(src).body
    assert isinstance(fn, ast.FunctionDef)
    return fn


@pytest.mark.parametrize("src,line", [
    ("def f(x, mask=None):\n    if mask is not None:\n        x = x * mask\n    return x.sum()\n", 3),
    ("def f(x, mask=None):\n    return torch.where(mask, x, 0.0)\n", 2),
    # Not whenever given: an early return may skip it; only its size is read; it is rebound.
    ("def f(x, mask=None):\n    if x.shape[0] > 8:\n        return x\n    return x * mask\n", None),
    ("def f(x, mask=None):\n    n = mask.shape[0]\n    return x * n\n", None),
    ("def f(x, mask=None):\n    mask = mask.bool()\n    return x * mask\n", None),
    ("def f(x, mask=None, use=True):\n    if use and mask is not None:\n        x = x * mask\n    return x\n", None),
])
def test_a_parameter_read_whenever_given_is_found_only_where_the_source_shows_it(src, line):
    assert read_whenever_given(_def(src), "mask") == line


def test_a_default_of_none_and_a_loop_over_a_list_are_read_from_the_source():
    fn = _def("def f(ps, gs, lr, mask=None, *, bias=None, k=1):\n"
              "    for p in ps:\n        p.add_(p, alpha=-lr)\n"
              "    for p, g in zip(ps, gs):\n        p.add_(g, alpha=-lr)\n")
    assert default_is_none(fn, "mask") and default_is_none(fn, "bias")
    assert not default_is_none(fn, "k") and not default_is_none(fn, "lr")
    # An in-place op on each element reads every one; zip stops at its shortest sequence.
    assert reads_every_element(fn, "ps") == (2, 0) and reads_every_element(fn, "gs") is None
    assert reads_every_element(fn, "lr") is None


@pytest.mark.parametrize("src,found", [
    ("def f(*xs):\n    out = xs[0]\n    for x in xs[1:]:\n        out = out + x\n    return out\n", (3, 1)),
    ("def f(xs):\n    return [x.sin() for x in xs[:]]\n", (2, 0)),
    ("def f(xs, d=0):\n    return torch.cat(xs, dim=d)\n", (2, 0)),
    ("def f(xs):\n    return torch.stack(xs[2:])\n", (2, 2)),
    # Read by index, a bounded slice, a start not a literal, a stepped slice, another
    # module's cat, a parameter rebound (the loop may read another list): not every element.
    ("def f(xs):\n    return xs[0] + xs[1]\n", None),
    ("def f(xs):\n    for x in xs[:2]:\n        pass\n", None),
    ("def f(xs, k):\n    for x in xs[k:]:\n        pass\n", None),
    ("def f(xs):\n    for x in xs[::2]:\n        pass\n", None),
    ("def f(xs):\n    return np.cat(xs)\n", None),
    ("def f(xs):\n    xs = xs[:1]\n    for x in xs:\n        pass\n", None),
    # zip stops at its shortest; all() reads no element into the graph; a loop under an
    # if, or whose body keeps nothing, or reads only metadata; a comprehension sliced after.
    ("def f(xs):\n    out = xs[0] * 0\n    for x, w in zip(xs, (1.0, 2.0)):\n        out = out + x * w\n"
     "    return out\n", None),
    ("def f(xs):\n    assert all(x.dim() == 2 for x in xs)\n    return xs[0] + xs[1]\n", None),
    ("def f(xs, k):\n    out = 0\n    if k:\n        for x in xs:\n            out = out + x\n    return out\n", None),
    ("def f(xs):\n    for x in xs:\n        y = x + 1\n    return xs[0]\n", None),
    ("def f(xs):\n    n = 0\n    for x in xs:\n        n = n + x.size(0)\n    return xs[0] * n\n", None),
    ("def f(xs):\n    return torch.stack([x.relu() for x in xs][:2])\n", None),
])
def test_code_that_reads_every_element_of_a_sequence_is_found_with_the_first_index_it_reads(src, found):
    assert reads_every_element(_def(src), "xs") == found


def _frame(tmp_path, src: str) -> CompiledFrom:
    path = tmp_path / "m.py"
    path.write_text(src)
    return CompiledFrom("f", str(path), 1)


def test_a_call_whose_sequence_ends_before_an_element_the_key_takes_is_another_graph(tmp_path):
    every = _frame(tmp_path, "def f(xs, x):\n    out = xs[0]\n    for t in xs[1:]:\n        out = out + t\n"
                             "    return out * x\n")
    why = shorter_sequence("L['xs'][1]", ["L['xs'][0]", "L['x']"], every)
    assert why is not None and why.code == "list-shorter" and "the call's L['xs'] has 1 element" in why
    assert shorter_sequence("L['xs'][2]", ["L['xs'][0]", "L['xs'][1]"], every).code == "list-shorter"
    # An element left out in the middle (the user's to give), the sequence not given at
    # all, or a source that is no element: nothing said.
    assert shorter_sequence("L['xs'][1]", ["L['xs'][0]", "L['xs'][2]"], every) is None
    assert shorter_sequence("L['xs'][1]", ["L['ys'][0]"], every) is None
    assert shorter_sequence("L['mask']", ["L['xs'][0]"], every) is None


@pytest.mark.parametrize("src", [
    # Read by index past the call's one element (the trace raises IndexError), every
    # element read only for a check, the number of elements asked: not said.
    "def f(xs):\n    return xs[0] + xs[1]\n",
    "def f(xs):\n    assert all(x.dim() == 2 for x in xs)\n    return xs[0] + xs[1]\n",
    "def f(xs):\n    out = xs[0]\n    for t in xs[1:]:\n        out = out + t\n    return out * xs[1]\n",
    "def f(xs):\n    out = xs[0]\n    for t in xs[1:]:\n        out = out + t\n    return out * len(xs)\n",
])
def test_a_shorter_call_is_not_another_graph_where_the_code_may_raise_or_branch_on_it(tmp_path, src):
    assert shorter_sequence("L['xs'][1]", ["L['xs'][0]"], _frame(tmp_path, src)) is None
    assert shorter_sequence("L['xs'][1]", ["L['xs'][0]"], None) is None
