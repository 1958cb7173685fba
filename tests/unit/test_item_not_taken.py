"""A tensor the call gives inside a dict or an object parameter that the key takes no
input from (fxcache_core/lookup/optional_tensors.py ``item_not_taken``): undecided, never
passed over. Torch's side (``def f(d): out = d['a'] * 2; if 'b' in d: out = out + d['b']``,
built with ``d={'a': ...}``, called with ``'b'`` too: another graph, as Dynamo guards the
dict's keys) was reproduced in fresh processes; here the rule is read in-process."""

from __future__ import annotations

import pytest

from fxcache_core.lookup.optional_tensors import item_not_taken


def _param(names: tuple[str, ...]):
    return lambda src: src in {f"L['{n}']" for n in names}


@pytest.mark.parametrize("src", ["L['d']['b']", "L['cfg'].w", "L['d']['b'][0]", "L['d']['b'].t"])
def test_an_item_of_a_parameter_the_key_does_not_take_is_undecided(src):
    why = item_not_taken(src, _param(("d", "cfg")), {"L['d']['a']", "L['cfg'].n"})
    assert why is not None and why.code == "item-not-input" and src in why


@pytest.mark.parametrize(
    ("src", "taken"),
    [
        ("L['d']['a']", {"L['d']['a']"}),  # taken: its guards decide
        ("L['d']['a']", {"L['d']['a'][0]"}),  # an element of it taken
        ("L['x']", set()),  # a parameter itself: the optional-tensor rules' to judge
        ("L['g']['b']", set()),  # not a parameter (a global's or a closure's)
        ("L['d'][0]", set()),  # a list element: list_element's to judge
    ],
)
def test_what_is_taken_or_not_an_item_of_a_parameter_is_left_to_other_rules(src, taken):
    assert item_not_taken(src, _param(("d", "x")), taken) is None
