"""Whether a tensor input is an nn.Parameter (fxcache_core/lookup/param_inputs.py): the
``:param`` spec, the static places an FX key's components name, and the accounts they
give, on entries written by hand (the rule reads the forward FX key's
``fx_kwargs[static_input_idxs]`` and the AOTAutograd entry's input sources).
tests/torch/test_parameter_inputs.py checks them against torch's lookups on real caches."""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import DecodedEntry, FxRef, GraphInput
from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup import param_inputs
from fxcache_core.lookup.assumptions import parameters_assumed
from fxcache_core.lookup.binding import TensorArg, parse_shapes
from fxcache_core.lookup.param_inputs import parameter_accounts, parameter_assumed, static_places

_KEY = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())


def _entry() -> DecodedEntry:
    inputs = tuple(GraphInput(position=i, name=f"primals_{i + 1}", type="f32[8, 8][8, 1]cpu", expr=None,
                              aot_index=i, source=s) for i, s in enumerate(("L['x']", "L['w']")))
    return DecodedEntry(kind=KeyKind.AOT_AUTOGRAD, type_name="AOTAutogradResult", guards_expr=None, inputs=inputs,
                        forward=FxRef("f" * 52, None), backward=FxRef("g" * 52, None),
                        arg_sources=("L['x']", "L['w']"), requires_grad=(False, True))


def _accounts(monkeypatch, static, *items: str) -> dict[str, tuple[str, str]]:
    monkeypatch.setattr(param_inputs, "static_sources", lambda key, entry: static)
    inputs = parse_shapes(list(items))
    bound = {s: s for s in inputs}
    return {a.name: (a.status, a.how.code) for a in parameter_accounts(_KEY, _entry(), inputs, bound)}


def test_the_spec_says_a_parameter_which_requires_grad_unless_told_otherwise():
    got = parse_shapes(["w=[8,8]:param", "v=[8,8]:param:requires_grad=False", "u=[8,8]:param=False", "x=[4,8]"])
    assert got["L['w']"] == TensorArg((8, 8), requires_grad=True, param=True)
    assert got["L['v']"] == TensorArg((8, 8), requires_grad=False, param=True)
    assert got["L['u']"] == TensorArg((8, 8), param=False)  # a plain tensor; requires_grad not said
    assert got["L['x']"].param is None  # not said: as when the key was compiled
    assert [str(got[s]) for s in ("L['w']", "L['v']", "L['u']")] == [
        "[8,8]:param", "[8,8]:param:requires_grad=False", "[8,8]:param=False"]


@pytest.mark.parametrize("bad", ["w=[8,8]:param=yes", "w=[8,8]:param=1"])
def test_a_param_option_that_is_no_bool_is_one_line(bad):
    with pytest.raises(ShapeSpecError, match="is not True or False"):
        parse_shapes([bad])


def test_the_static_places_are_read_from_the_fx_keys_components():
    lines = ("[abc] fx_kwargs[is_backward]: False", "[dmw] fx_kwargs[static_input_idxs]: [1, 3]")
    assert static_places(lines) == (1, 3)
    assert static_places(("[x] fx_kwargs[static_input_idxs]: []",)) == ()
    assert static_places(("[x] fx_kwargs[is_backward]: False",)) is None  # not shown: nothing decided


def test_a_parameter_against_a_static_input_is_accounted_and_a_plain_tensor_is_another_key(monkeypatch):
    static = frozenset({"L['w']"})
    assert _accounts(monkeypatch, static, "w=[8,8]:param") == {"isinstance(w, nn.Parameter)": ("accounted", "parameter")}
    assert _accounts(monkeypatch, static, "w=[8,8]:param=False") == {
        "isinstance(w, nn.Parameter)": ("rules-out", "parameter-differs")}


def test_a_parameter_where_the_key_took_a_plain_tensor_is_another_key(monkeypatch):
    assert _accounts(monkeypatch, frozenset(), "w=[8,8]:param", "x=[4,8]:param=False") == {
        "isinstance(w, nn.Parameter)": ("rules-out", "parameter-differs"),
        "isinstance(x, nn.Parameter)": ("accounted", "parameter")}


def test_where_the_entry_does_not_show_its_static_inputs_a_said_parameter_is_undecided(monkeypatch):
    assert _accounts(monkeypatch, None, "w=[8,8]:param") == {
        "isinstance(w, nn.Parameter)": ("undecided", "parameter-unrecorded")}
    assert _accounts(monkeypatch, None, "w=[8,8]", "x=[4,8]") == {}  # nothing said: nothing to account


def test_a_tensor_not_said_is_taken_as_the_keys_static_input_and_the_verdict_says_so(monkeypatch):
    monkeypatch.setattr(param_inputs, "static_sources", lambda key, entry: frozenset({"L['w']"}))
    inputs = parse_shapes(["w=[8,8]", "x=[4,8]"])
    got = parameter_assumed(_KEY, _entry(), inputs, {s: s for s in inputs})
    assert got == ["L['w']"]
    (a,) = parameters_assumed(got)
    assert (a.name, a.value, a.code, a.from_entry) == ("isinstance(w, nn.Parameter)", "True", "parameter-from-entry", True)
    fx = CacheKey(KeyKind.FX_GRAPH, "f" * 52, "/nowhere", ())
    assert parameter_assumed(fx, _entry(), inputs, {s: s for s in inputs}) == []  # judged through its loaders


def test_static_sources_map_the_places_to_the_entrys_inputs(monkeypatch):
    entry_file = type("E", (), {"size": 10, "file": type("F", (), {"where": "/nowhere/e"})()})()
    key = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())
    object.__setattr__(key, "entries", (entry_file,))  # one entry, read by the (patched) worker
    for places, want in (([1], frozenset({"L['w']"})), ([], frozenset()), ([2], None), (None, None)):
        monkeypatch.setattr(param_inputs, "run_one", lambda name, arg, size, got=places: got)
        monkeypatch.setattr(param_inputs, "_READ", {})  # each read afresh
        assert param_inputs.static_sources(key, _entry()) == want, places
