"""--shapes / --sym parsing and reading sources off the given inputs."""

from __future__ import annotations

import pytest

from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup.binding import (
    TensorArg,
    canonical_source,
    parse_shapes,
    parse_sym,
)
from fxcache_core.lookup.graph_types import TensorType
from fxcache_core.lookup.source_values import value_of


def test_names_become_dynamo_sources():
    assert canonical_source("x") == "L['x']"
    assert canonical_source("xs[0]") == "L['xs'][0]"
    assert canonical_source("cfg.n") == "L['cfg'].n"
    assert canonical_source("G['net']._buffers['b']") == "G['net']._buffers['b']"
    assert canonical_source("cfg['n']") == canonical_source('cfg["n"]') == "L['cfg']['n']"


@pytest.mark.parametrize("bad,says", [
    ("cfg['']=4", "an item by an empty key"), ('cfg[""]=4', "an item by an empty key"),
    ("cfg['n']['m']=4", "an item of an item"), ("cfg.n.m=4", "an item of an item"),
    ("cfg['n'][0]=4", "an item of an item"), ("xs[0].n=4", "an item of an item"),
    ("L['cfg']['n']['m']=True", "an item of an item"),
])
def test_an_item_match_cannot_read_is_refused_in_one_line(bad, says):
    """A Python value given for an item no rule reads (an item of an item) or by an empty
    key is refused, not left unread beside a verdict."""
    with pytest.raises(ShapeSpecError) as ei:
        parse_shapes([bad])
    assert says in str(ei.value) and "\n" not in str(ei.value), str(ei.value)


def test_deeper_sources_stay_for_tensors_a_modules_state_and_lists():
    got = parse_shapes(["cfg['k']['m']=[4]", "self.block.training=True", "xs[0][1]=3", "cfg['n']=4"])
    assert set(got) == {"L['cfg']['k']['m']", "L['self'].block.training", "L['xs'][0][1]", "L['cfg']['n']"}
    with pytest.raises(ShapeSpecError, match="given twice"):
        parse_shapes(["cfg['n']=4", 'cfg["n"]=4'])


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


def test_a_dtype_is_said_by_torchs_name_or_an_alias_torch_accepts():
    from fxcache_core.lookup.binding import parse_dtype

    got = parse_shapes(["mask=[2,8]:dtype=bool", "x=[2]:dtype=torch.float32:mark_dynamic=[0]",
                        "ids=[3]:dtype=long", "h=[1]:dtype=half", "t=[]:dtype=int64"])
    assert got["L['mask']"] == TensorArg((2, 8), dtype="bool")
    assert got["L['x']"] == TensorArg((2,), marked=frozenset({0}), dtype="float32")
    assert (got["L['ids']"].dtype, got["L['h']"].dtype) == ("int64", "float16")
    assert got["L['t']"] == TensorArg((), dtype="int64")
    assert str(got["L['mask']"]) == "[2,8]:dtype=bool"
    # torch.int is int32 (Python's int is what torch.tensor makes int64); double is float64.
    assert (parse_dtype("int"), parse_dtype("double"), parse_dtype("torch.cfloat")) == (
        "int32", "float64", "complex64")
    assert parse_shapes(["m=[2]"])["L['m']"].dtype is None  # not said: the key's is assumed


@pytest.mark.parametrize("bad,needle", [
    ("mask=[2,8]:dtype=boolean", "is not a torch dtype (known: bfloat16"),
    ("mask=[2,8]:dtype=", "is not a torch dtype"),
    ("t=10:dtype=int64", "t=10 is an int, a Python scalar, which has no dtype"),
    ("t=10.0:dtype=float32", "t=10.0 is a float, a Python scalar, which has no dtype"),
    ("t=2.5:stride=[1]", "has no option 'stride'"),
])
def test_an_unknown_dtype_or_a_dtype_on_a_python_scalar_is_a_usage_error(bad, needle):
    with pytest.raises(ShapeSpecError) as ei:
        parse_shapes([bad])
    assert needle in str(ei.value) and "\n" not in str(ei.value)
    assert "bool" in str(ei.value) or "scalar" in str(ei.value)


def test_an_int_a_float_and_a_0d_tensor_are_three_inputs():
    got = parse_shapes(["a=10", "b=10.0", "c=[]", "d=1e3"])
    assert type(got["L['a']"]) is int and type(got["L['b']"]) is float and type(got["L['d']"]) is float
    assert got["L['c']"] == TensorArg(())


def test_printed_dtypes_are_torchs_names():
    from fxcache_core.lookup.binding import DTYPE_ABBRS

    assert TensorType.parse("b8[2, 8][8, 1]cpu").dtype_name == "bool"
    assert TensorType.parse("bf16[4][1]cuda").dtype_name == "bfloat16"
    assert TensorType.parse("f8e4m3fn[4][1]cpu").dtype_name == "float8_e4m3fn"
    assert TensorType.parse("q9[4][1]cpu").dtype_name is None
    assert len(set(DTYPE_ABBRS.values())) == len(DTYPE_ABBRS)


@pytest.mark.torch
def test_the_dtype_table_is_the_one_torch_prints():
    """DTYPE_ABBRS is torch.utils._dtype_abbrs (what FX prints before a tensor type)."""
    pytest.importorskip("torch")
    from torch.utils._dtype_abbrs import dtype_abbrs

    from fxcache_core.lookup.binding import DTYPE_ABBRS

    assert DTYPE_ABBRS == {abbr: str(dt).removeprefix("torch.") for dt, abbr in dtype_abbrs.items()}


def test_python_values_dynamo_specializes_on_are_inputs_too():
    from fxcache_core.lookup.pyvalues import PyValue

    got = parse_shapes(["x=[8,16],clip=True", "mask=None", "act=gelu", "mode='a, b'", 'name="x:y"',
                        "dims=(2,3),one=(4,),nested=(1,(2.5,None),'s')", "off=False"])
    assert got["L['x']"] == TensorArg((8, 16))
    assert got["L['clip']"] == PyValue(True) and got["L['off']"] == PyValue(False)
    assert got["L['mask']"] == PyValue(None)
    assert got["L['act']"] == PyValue("gelu")  # a bare word that is no other literal is a str
    assert got["L['mode']"] == PyValue("a, b") and got["L['name']"] == PyValue("x:y")
    assert got["L['dims']"] == PyValue((2, 3)) and got["L['one']"] == PyValue((4,))
    assert got["L['nested']"] == PyValue((1, (2.5, None), "s"))
    assert [str(got[f"L['{n}']"]) for n in ("clip", "mask", "act", "dims")] == ["True", "None", "'gelu'", "(2, 3)"]
    # inf and nan stay floats, ints ints: Dynamo may make them symbolic.
    again = parse_shapes(["a=inf", "b=-nan", "c=3"])
    assert type(again["L['a']"]) is float and type(again["L['c']"]) is int


def test_a_tuple_given_reads_its_items_as_a_key_source_names_them():
    from fxcache_core.lookup.pyvalues import PyValue

    inputs = parse_shapes(["dims=(2,(3,4.5),True)", "flag=True"])
    assert value_of("L['dims'][0]", inputs).value == 2
    assert value_of("L['dims'][1][0]", inputs).value == 3
    assert "is a float" in value_of("L['dims'][1][1]", inputs).problem
    assert "the Python bool True" in value_of("L['dims'][2]", inputs).problem
    assert value_of("L['dims'][9]", inputs).value is None  # no such item: not given
    assert "the Python bool True" in value_of("L['flag'].size()[0]", inputs).problem
    assert inputs["L['flag']"] == PyValue(True)


@pytest.mark.parametrize("bad", [
    "x=(1,[2])", "x=True:dtype=f32", "x='abc", "x=(" * 10 + ")" * 10, "x=((((((1,),),),),),)",
    "x=" + "a" * 2000, "x=(" + ",".join(["1"] * 100) + ")", "x=(2**70,)", "x={1: 2}", "x=b'no'",
    "x=lambda: 0", "x=1+1",
])
def test_a_value_that_is_no_literal_of_those_kinds_is_one_line(bad):
    with pytest.raises(ShapeSpecError) as ei:
        parse_shapes([bad])
    assert "\n" not in str(ei.value) and len(str(ei.value)) < 300


def test_same_value_is_one_value_to_the_cache_not_pythons_equality():
    """Dynamo's type-checked guards, and a float as a key's graph prints it: -0.0 is not
    0.0 (another printed graph, another key), every nan is one."""
    from fxcache_core.lookup.pyvalues import same_value

    assert not same_value(0.0, -0.0) and not same_value((0.0, 1), (-0.0, 1)) and same_value(-0.0, -0.0)
    assert same_value(float("nan"), -float("nan")) and same_value(float("inf"), float("inf"))

    assert same_value(True, True) and same_value((1, "a"), (1, "a")) and same_value(float("nan"), float("nan"))
    assert not same_value(True, 1) and not same_value(1, 1.0) and not same_value((1, 2), (1, 2, 3))
    assert not same_value(None, False) and not same_value("1", 1)
