"""What a decided verdict takes for granted that the call does not say
(fxcache_core/lookup/assumptions.py), on entries written by hand: the grad mode and
``requires_grad`` from the entry where it shows them, a module's state, globals and the
global settings as when the key was compiled, each a record with where its value comes from;
and a verdict says them only where it is decided. tests/cli/test_golden_json.py holds the
records of real keys; the evaluation's nested_train_dyn family has the call that made the
rule: a module built in train mode with a backward, called in eval mode under no_grad."""

from __future__ import annotations

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry, FileInfo
from fxcache_core.decode.entries import DecodedEntry, FxRef
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.assumptions import ambient_assumptions, said
from fxcache_core.lookup.binding import GRAD_MODE, TensorArg, parse_shapes
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.prediction import FunctionVerdict
from fxcache_core.lookup.query import CallQuery
from fxcache_core.reasons import Reason

_KEY = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())


def _entry(train: bool, grads: tuple[bool | None, ...] = (False, True)) -> DecodedEntry:
    return DecodedEntry(
        kind=KeyKind.AOT_AUTOGRAD,
        type_name="AOTAutogradResult",
        guards_expr=None,
        inputs=(),
        forward=FxRef("f" * 52, None),
        backward=FxRef("g" * 52, None) if train else None,
        arg_sources=("L['x']", "L['w']"),
        requires_grad=grads,
    )


def _records(
    entry: DecodedEntry,
    *items: str,
    frame: CompiledFrom | None = None,
    kind: KeyKind = KeyKind.AOT_AUTOGRAD,
) -> dict[str, tuple[str | None, str]]:
    q = CallQuery(parse_shapes(items)).with_grad_mode()
    bound = {s: s for s, v in q.inputs.items() if isinstance(v, TensorArg)}
    got = ambient_assumptions(kind, entry, frame, q.inputs, bound, q.grad_enabled, q.state)
    return {a.name: (a.value, a.code) for a in got}


def test_a_backward_shows_the_grad_mode_and_the_entry_each_inputs_requires_grad():
    got = _records(_entry(train=True), "x=[4,8]", "w=[8,8]")
    assert got[GRAD_MODE] == ("True", "grad-mode-from-entry")
    assert got["x.requires_grad"] == ("False", "requires-grad-from-entry")
    assert got["w.requires_grad"] == ("True", "requires-grad-from-entry")


def test_without_a_backward_the_grad_mode_is_as_when_compiled_and_not_a_value():
    got = _records(_entry(train=False, grads=(None, None)), "x=[4,8]")
    assert got[GRAD_MODE] == (None, "grad-mode-assumed")
    assert got["x.requires_grad"] == (None, "requires-grad-assumed")
    fx = _records(
        _entry(train=True), "x=[4,8]", kind=KeyKind.FX_GRAPH
    )  # an FX key records no grad mode
    assert fx[GRAD_MODE] == (None, "grad-mode-assumed") and "x.requires_grad" not in fx


def test_what_the_call_says_is_not_assumed():
    got = _records(
        _entry(train=True),
        f"{GRAD_MODE}=True",
        "x=[4,8]:requires_grad=False",
        "torch.is_autocast_enabled()=False",
        "torch._inductor.config.freezing=True",
    )
    assert GRAD_MODE not in got and "x.requires_grad" not in got
    assert "torch.is_autocast_enabled()" not in got and "torch._inductor.config.*" not in got
    assert got["torch.get_default_dtype()"] == (None, "state-assumed")
    assert got["torch._dynamo.config.*"] == (None, "state-assumed")


def test_a_modules_training_state_is_assumed_unless_the_call_gives_it():
    module = CompiledFrom(function="forward", file="/nowhere/m.py", line=3, whole_module=True)
    assert _records(_entry(train=True), "x=[4,8]", frame=module)["self.training"] == (
        None,
        "module-state-assumed",
    )
    assert "self.training" not in _records(
        _entry(train=True), "x=[4,8]", "self.training=False", frame=module
    )
    assert "self.training" in _records(
        _entry(train=True), "x=[4,8]", "self.scale=2.0", frame=module
    )
    function = CompiledFrom(function="f", file="/nowhere/m.py", line=3)
    assert "self.training" not in _records(_entry(train=True), "x=[4,8]", frame=function)
    # no frame recorded: an input of the module's says it is one
    own = DecodedEntry(
        kind=KeyKind.AOT_AUTOGRAD,
        type_name="AOTAutogradResult",
        guards_expr=None,
        inputs=(),
        arg_sources=("L['self']._modules['fc']._parameters['weight']", "L['x']"),
    )
    assert "self.training" in _records(own, "x=[4,8]")


def test_the_words_name_the_entrys_values_then_what_is_taken_as_compiled():
    q = CallQuery(parse_shapes(["x=[4,8]"])).with_grad_mode()
    module = CompiledFrom(function="forward", file="/nowhere/m.py", line=3, whole_module=True)
    got = ambient_assumptions(
        KeyKind.AOT_AUTOGRAD,
        _entry(train=True),
        module,
        q.inputs,
        {"L['x']": "L['x']"},
        None,
        q.state,
    )
    shown, rest = said(got)
    assert shown.code == "state-from-entry" and f"{GRAD_MODE}=True (it has a backward)" in shown
    assert "x.requires_grad=False" in shown
    assert rest.code == "state-assumed" and "self.training" in rest and "autocast" in rest
    assert "torch.compile's mode, fullgraph and backend" in rest
    assert "Dynamo's, Inductor's and AOTAutograd's config" in rest


def test_a_hit_says_every_assumption_and_an_undecided_verdict_none():
    entry = Entry(KeyKind.AOT_AUTOGRAD, _KEY.key, FileInfo("/nowhere/" + "e" * 16, 10, 0.0, 0.0), 0)
    q = CallQuery(parse_shapes(["x=[4,8]"])).with_grad_mode()
    ambient = ambient_assumptions(
        KeyKind.AOT_AUTOGRAD, _entry(train=True), None, q.inputs, {}, None, q.state
    )
    left_out = ParamAccount(
        "bias", "None", False, "assumed", Reason("bias: None, its default", "default-assumed")
    )
    m = KeyMatch(
        key=_KEY,
        fits=True,
        hit=entry,
        assumed=(("L['x']", "float32"),),
        params=(left_out,),
        ambient=ambient,
    )
    hit = FunctionVerdict("f", None, "hit", Reason("", "hit"), _KEY, entry.name, (m,))
    codes = [a["code"] for a in hit.to_json()["assumptions"]]
    assert codes[:3] == ["dtype-assumed", "default-assumed", "grad-mode-from-entry"], codes
    assert {"state-assumed", "globals-assumed"} <= set(codes)
    assert [r.code for r in hit.assumed_state] == ["state-from-entry", "state-assumed"]
    undecided = FunctionVerdict("f", None, "undecided", Reason("?", "undecided"), _KEY, None, (m,))
    assert undecided.assumptions == () and undecided.assumed_state == ()
    assert m.to_json()["assumptions"][0] == {
        "name": "x.dtype",
        "value": "float32",
        "from": "the dtype of the key's input (the call gives none)",
        "code": "dtype-assumed",
    }
