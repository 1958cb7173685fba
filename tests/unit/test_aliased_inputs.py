"""One tensor passed for two parameters: ``b=@a`` in a call's description
(fxcache_core/lookup/binding.py) and what a key's inputs say of it
(fxcache_core/lookup/aliased_inputs.py; the reverse, a key traced with one tensor for two and
a call that gives two by their shapes, fxcache_core/lookup/optional_tensors.py). Checked
against torch in tests/torch/test_aliased_inputs.py.

The entries are made here (synthetic: the rule reads only their inputs' sources and types);
the sources are written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.printed import GraphInput
from fxcache_core.errors import ShapeSpecError
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.aliased_inputs import aliased_call, groups
from fxcache_core.lookup.binding import TensorArg, parse_shapes
from fxcache_core.lookup.optional_tensors import tensor_given

SRC = "import torch\n\n\ndef f(a, b, c=None):\n    return a.sin() + b.cos() if c is None else a + b * c\n"
TWO = "import torch\n\n\ndef f(a, b):\n    return a.sin() + b.cos()\n"


def _entry(*sources: str, sym: str = "") -> DecodedEntry:
    inputs = [GraphInput(i, f"arg{i}_1", "f32[s0, 8][8, 1]cpu", source=s) for i, s in enumerate(sources)]
    if sym:
        inputs.insert(0, GraphInput(len(inputs), "arg_s", "Sym(s0)", expr="s0", source=sym))
    return DecodedEntry(kind=KeyKind.AOT_AUTOGRAD, type_name="AOTAutogradResult", guards_expr=None,
                        inputs=tuple(inputs), arg_sources=tuple(i.source for i in inputs))


def _frame(tmp_path: Path, src: str = TWO) -> CompiledFrom:
    path = tmp_path / "fns.py"
    path.write_text(src)
    return CompiledFrom("f", str(path), 4, params=("a", "b", "c") if "c=None" in src else ("a", "b"))


def test_b_at_a_is_the_tensor_of_a() -> None:
    got = parse_shapes(["a=[4,8]:dtype=float16", "b=@a", "c=@b"])
    assert got["L['b']"] == TensorArg((4, 8), dtype="float16", same_as="L['a']")
    assert got["L['c']"].same_as == "L['a']" and str(got["L['c']"]) == "@a"
    assert groups(got) == [("L['a']", "L['b']", "L['c']")]
    assert groups(parse_shapes(["a=[4,8]", "b=[4,8]"])) == []


@pytest.mark.parametrize("specs,says", [
    (["b=@a"], "a is not given"),
    (["a=3", "b=@a"], "a is no tensor"),
    (["a=@b", "b=@a"], "no tensor"),
    (["a=[4,8]", "b=@9"], "after '@' the name"),
    (["a=[4,8]", "b=@a", "b=[4,8]"], "given twice"),
])
def test_a_b_at_a_that_names_no_tensor_is_an_error(specs: list[str], says: str) -> None:
    with pytest.raises(ShapeSpecError, match=says):
        parse_shapes(specs)


def test_a_key_with_an_input_from_each_is_another_graph(tmp_path: Path) -> None:
    rule = aliased_call(_entry("L['a']", "L['b']"), _frame(tmp_path), parse_shapes(["a=[4,8]", "b=@a"]))
    (why,) = rule.problems
    assert why.code == "aliased-call-two-inputs" and "L['a'], L['b']" in why and not rule.notes


def test_a_key_with_one_input_for_both_is_accounted_where_the_code_computes_with_both(tmp_path: Path) -> None:
    rule = aliased_call(_entry("L['a']", sym="L['a'].size()[0]"), _frame(tmp_path), parse_shapes(["a=[4,8]", "b=@a"]))
    assert not rule.problems and not rule.notes
    assert rule.accounted["b"].code == "aliased-input"
    # The source of the one input may be either's: the code met b first.
    rule = aliased_call(_entry("L['b']"), _frame(tmp_path), parse_shapes(["a=[4,8]", "b=@a"]))
    assert not rule.problems and not rule.notes and set(rule.accounted) == {"a"}


def test_a_key_that_takes_another_tensor_too_is_undecided(tmp_path: Path) -> None:
    # b may have been c's tensor when the key was traced: the same graph inputs, another graph.
    src = "import torch\n\n\ndef f(a, b, c):\n    return a.sin() + b.cos() * c\n"
    frame = CompiledFrom("f", str(tmp_path / "three.py"), 4, params=("a", "b", "c"))
    (tmp_path / "three.py").write_text(src)
    rule = aliased_call(_entry("L['a']", "L['c']"), frame, parse_shapes(["a=[4,8]", "b=@a", "c=[4,8]"]))
    (why,) = rule.notes
    assert why.code == "aliased-inputs-unknown" and "L['c']" in why and not rule.accounted


def test_a_parameter_read_only_on_one_side_is_undecided(tmp_path: Path) -> None:
    # b is read only where c is None: a key without a b input may have been traced otherwise.
    src = "import torch\n\n\ndef f(a, b, c=None):\n    if c is None:\n        return a.sin()\n    return a + b\n"
    rule = aliased_call(_entry("L['a']"), _frame(tmp_path, src), parse_shapes(["a=[4,8]", "b=@a"]))
    (why,) = rule.notes
    assert why.code == "aliased-inputs-unknown" and "computed into" in why


def test_an_unreadable_source_is_undecided(tmp_path: Path) -> None:
    frame = CompiledFrom("f", str(tmp_path / "gone.py"), 4, params=("a", "b"))
    rule = aliased_call(_entry("L['a']"), frame, parse_shapes(["a=[4,8]", "b=@a"]))
    assert [r.code for r in rule.notes] == ["aliased-inputs-unknown"] and not rule.accounted


def test_no_group_says_nothing(tmp_path: Path) -> None:
    rule = aliased_call(_entry("L['a']"), _frame(tmp_path), parse_shapes(["a=[4,8]", "b=[4,8]"]))
    assert (rule.problems, rule.notes, dict(rule.accounted)) == ((), (), {})


def test_two_tensors_of_one_shape_on_a_key_traced_with_one_are_undecided(tmp_path: Path) -> None:
    """The key takes no input from b though the code computes with it: it was traced with one
    tensor for both (or b None). A call that gives b by a shape equal to a's may pass a's
    tensor: undecided, naming b=@a; a shape of its own cannot be a's: another graph."""
    frame = _frame(tmp_path)

    def given(specs: list[str]):
        return tensor_given("L['b']", frame, "f", lambda s, t: None, parse_shapes(specs))

    same = given(["a=[4,8]", "b=[4,8]"])
    assert same is not None and same.code == "aliased-inputs-unknown" and "b=@a" in same
    other = given(["a=[4,8]", "b=[3,8]"])
    assert other is not None and other.code == "tensor-into-output"
    assert given(["a=[4,8]", "b=@a"]) is None  # said: aliased_inputs judges it
