"""--shapes / --sym parsing and reading sources off the given inputs."""

from __future__ import annotations

import pytest

from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup.binding import (
    TensorArg,
    TensorType,
    canonical_source,
    parse_shapes,
    parse_sym,
    value_of,
)


def test_names_become_dynamo_sources():
    assert canonical_source("x") == "L['x']"
    assert canonical_source("xs[0]") == "L['xs'][0]"
    assert canonical_source("cfg.n") == "L['cfg'].n"
    assert canonical_source("G['net']._buffers['b']") == "G['net']._buffers['b']"


def test_parse_shapes_forms():
    got = parse_shapes(["x=[16,4]", "n=7,y=[ 3 ]", "z=[2,3]:stride=[1,2]:offset=5", "s=[]"])
    assert got == {
        "L['x']": TensorArg((16, 4)),
        "L['n']": 7,
        "L['y']": TensorArg((3,)),
        "L['z']": TensorArg((2, 3), (1, 2), 5),
        "L['s']": TensorArg(()),
    }


def test_a_float_is_a_python_float_and_an_unnamed_shape_is_positional():
    got = parse_shapes(["scale=2.5", "[2,3,8,8]:mark_dynamic=[0]", "[4]", "eps=1e-05"])
    assert got == {
        "L['scale']": 2.5,
        "L['args'][0]": TensorArg((2, 3, 8, 8), marked=frozenset({0})),
        "L['args'][1]": TensorArg((4,)),
        "L['eps']": 1e-05,
    }
    assert isinstance(got["L['scale']"], float)


@pytest.mark.parametrize("bad", [
    "x", "x=", "=[1]", "x=[a]", "x=[1,2", "x=1.5.2", "x=1e", "x=[1]:stride=[1,2]", "x=[-1]",
    "x=[1]:colour=red", "2x=[1]", "x=[1],x=[2]", "x=__import__('os')",
])
def test_malformed_shapes_are_rejected_with_a_reason(bad):
    with pytest.raises(ShapeSpecError) as ei:
        parse_shapes([bad])
    assert str(ei.value) and "\n" not in str(ei.value)


def test_parse_sym():
    assert parse_sym(["t0=16", "s77=-3,t1=0"]) == {"t0": 16, "s77": -3, "t1": 0}
    for bad in ["t0", "t0=x", "L['t0']=1"]:
        with pytest.raises(ShapeSpecError):
            parse_sym([bad])


def test_value_of_reads_sizes_strides_offsets_and_ints():
    inputs = parse_shapes(["x=[16,4]", "n=7", "v=[2,3]:stride=[1,2]:offset=4"])
    assert value_of("L['x'].size()[0]", inputs).value == 16
    assert value_of("L['x'].stride()[0]", inputs).value == 4  # contiguous default
    assert value_of("L['v'].stride()[1]", inputs).value == 2
    assert value_of("L['v'].storage_offset()", inputs).value == 4
    assert value_of("L['n']", inputs).value == 7
    missing = value_of("L['y'].size()[0]", inputs)
    assert missing.value is None and missing.problem is None and missing.base == "L['y']"
    assert "has 2 dims" in value_of("L['x'].size()[2]", inputs).problem
    assert "is an int" in value_of("L['n'].size()[0]", inputs).problem
    assert "is a tensor" in value_of("L['x']", inputs).problem


def test_contiguous_strides_treat_zero_sizes_like_torch():
    assert TensorArg((2, 0, 3)).strides() == (3, 3, 1)
    assert TensorArg((4, 5, 6)).strides() == (30, 6, 1)


def test_tensor_type_parsing():
    t = TensorType.parse("f32[s77, 4][4, 1]cpu")
    assert t is not None and t.sizes == ("s77", "4") and t.strides == ("4", "1") and t.device == "cpu"
    assert TensorType.parse("f32[][]cpu").sizes == ()
    assert TensorType.parse("Sym(s77)") is None


def test_mark_dynamic_names_dims_of_the_tensor():
    from fxcache_core.errors import ShapeSpecError
    from fxcache_core.lookup.binding import TensorArg, parse_shape_spec

    src, t = parse_shape_spec("x=[6,6]:mark_dynamic=[0,1]:stride=[1,6]")
    assert src == "L['x']" and t == TensorArg((6, 6), (1, 6), 0, frozenset({0, 1}))
    assert str(t) == "[6,6]:stride=[1,6]:mark_dynamic=[0,1]"
    assert parse_shape_spec("x=[6,6]:mark_dynamic=1")[1].marked == frozenset({1})
    for bad, needle in [("x=[6,6]:mark_dynamic=[2]", "not a dim of a 2-d tensor"),
                        ("x=[6]:mark_dynamic=[-1]", "not a dim"),
                        ("x=[6]:mark_dynamic=[a]", "not a list of integers")]:
        with pytest.raises(ShapeSpecError, match=needle):
            parse_shape_spec(bad)
