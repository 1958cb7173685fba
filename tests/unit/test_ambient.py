"""The grad mode, each input's requires_grad and globals given with a call
(fxcache_core/lookup/ambient.py), on entries written by hand: the rules read only two
fields of an AOTAutograd entry (its backward, and ``input_info``'s requires_grad), and
tests/torch/test_state_arguments.py checks them against torch's lookups on a real training
entry. The evaluation's grad_flip and grad_built families check them on more calls."""

from __future__ import annotations

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import DecodedEntry, FxRef
from fxcache_core.errors import ShapeSpecError
from fxcache_core.lookup.ambient import ambient_accounts
from fxcache_core.lookup.binding import GRAD_MODE, TensorArg, parse_shapes
from fxcache_core.lookup.query import CallQuery
from fxcache_core.state.rows import from_json, to_json

_KEY = CacheKey(KeyKind.AOT_AUTOGRAD, "a" * 52, "/nowhere", ())


def _entry(train: bool, grads: tuple[bool | None, ...] = (False, True)) -> DecodedEntry:
    return DecodedEntry(kind=KeyKind.AOT_AUTOGRAD, type_name="AOTAutogradResult", guards_expr=None, inputs=(),
                        forward=FxRef("f" * 52, None), backward=FxRef("g" * 52, None) if train else None,
                        arg_sources=("L['x']", "L['w']"), requires_grad=grads)


def _accounts(entry: DecodedEntry, *items: str) -> dict[str, tuple[str, str]]:
    q = CallQuery(parse_shapes(items)).with_grad_mode()
    bound = {s: s for s, v in q.inputs.items() if isinstance(v, TensorArg)}  # the key takes x and w
    return {a.name: (a.status, a.how.code) for a in ambient_accounts(_KEY, entry, q.inputs, bound, q.grad_enabled)}


def test_requires_grad_and_the_grad_mode_are_said_in_the_inputs():
    got = parse_shapes(["w=[8,8]:requires_grad=True:dtype=float16", "x=[4,8]", f"{GRAD_MODE}=False"])
    assert got["L['w']"] == TensorArg((8, 8), dtype="float16", requires_grad=True)
    assert got["L['x']"].requires_grad is None  # not said: as when the key was compiled
    assert str(got["L['w']"]) == "[8,8]:dtype=float16:requires_grad=True"
    q = CallQuery(got).with_grad_mode()
    assert q.grad_enabled is False and GRAD_MODE not in q.inputs


@pytest.mark.parametrize("bad", ["w=[8,8]:requires_grad=yes", f"{GRAD_MODE}=1", f"{GRAD_MODE}=off"])
def test_a_grad_mode_or_requires_grad_that_is_no_bool_is_one_line(bad):
    with pytest.raises(ShapeSpecError, match="is not True or False"):
        parse_shapes([bad])


def test_an_entry_with_a_backward_was_compiled_with_grad_enabled():
    train = _entry(train=True)
    assert _accounts(train, f"{GRAD_MODE}=True", "w=[8,8]:requires_grad=True") == {
        GRAD_MODE: ("accounted", "grad-mode"), "w.requires_grad": ("accounted", "requires-grad")}
    assert _accounts(train, f"{GRAD_MODE}=False") == {GRAD_MODE: ("rules-out", "grad-mode-differs")}
    assert _accounts(train, "w=[8,8]:requires_grad=False", "x=[4,8]:requires_grad=False") == {
        "w.requires_grad": ("rules-out", "requires-grad-differs"),
        "x.requires_grad": ("accounted", "requires-grad")}


def test_an_entry_without_a_backward_leaves_the_grad_mode_given_undecided():
    infer = _entry(train=False)
    for mode in (True, False):  # under no_grad, or grad enabled with nothing that needed a backward
        assert _accounts(infer, f"{GRAD_MODE}={mode}") == {GRAD_MODE: ("undecided", "grad-mode-unrecorded")}
    assert _accounts(_entry(False, (None, None)), "w=[8,8]:requires_grad=True") == {
        "w.requires_grad": ("undecided", "requires-grad-unrecorded")}
    assert _accounts(infer, "w=[8,8]", "x=[4,8]") == {}  # nothing said: nothing to account


def test_a_global_given_is_undecided_not_ignored():
    got = _accounts(_entry(train=False), "G['GAIN']=3.0", "x=[4,8]")
    assert got == {"G['GAIN']": ("undecided", "global-unrecorded")}


def test_an_index_row_keeps_which_inputs_required_grad():
    d = _entry(train=True, grads=(False, True, None))
    assert from_json(to_json(d)).requires_grad == (False, True, None)
    assert from_json(to_json(d, full=True)).requires_grad == (False, True, None)
