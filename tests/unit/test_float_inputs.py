"""A float the key takes as a graph input (``dynamic=True``, or after automatic dynamic saw it
change) is accounted only where the compiled function's source shows plain arithmetic of it
with tensors: a Python test of it (an ``if``, ``int()``, ``math.sqrt``, a helper, a ``while``) is
held by Dynamo's guards, which the cache does not keep (fxcache_core/lookup/float_inputs.py).
Synthetic source files: the rule reads the ``def``, not torch."""

from __future__ import annotations

import pytest

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.float_inputs import float_input_read, plain_arithmetic
from fxcache_core.lookup.phases import keyed_inputs
from fxcache_core.lookup.unframed import unframed
from fxcache_core.reasons import code_of

SRC = """import math


def plain(x, eps=1e-5):
    return x * 2 + eps


def local(x, eps=1e-5):
    s = 1 - eps / 2
    return x * s - eps


def gate(x, eps=1e-5):
    if eps > 0:
        x = x + eps
    return x * 2


def _helper(x, eps):
    return x + eps


def helper(x, eps=1e-5):
    return _helper(x, eps)


def as_int(x, eps=0.25):
    return x * int(eps * 10)


def sqrt(x, eps=0.25):
    return x * math.sqrt(eps)


def loop(x, eps=1.0):
    n = 0.0
    while n < eps:
        x = x + 1
        n += 0.5
    return x


def flag(x, eps=1e-5):
    on = eps > 0
    return x * on


def picked(x, eps=1e-5):
    return x * (eps if eps > 0 else 1.0)


def bumped(x, eps=1e-5):
    eps = eps * 2
    return x + eps


def clamped(x, eps=1e-5):
    return x.clamp(min=eps)
"""

X = {"L['x']": TensorArg((4, 8))}


def _frames(tmp_path) -> dict[str, CompiledFrom]:
    path = tmp_path / "fns.py"
    path.write_text(SRC)
    lines = SRC.splitlines()
    return {
        ln.split("(")[0][4:]: CompiledFrom(
            function=ln.split("(")[0][4:], file=str(path), line=i + 1
        )
        for i, ln in enumerate(lines)
        if ln.startswith("def ")
    }


@pytest.mark.parametrize("name", ["plain", "local"])
def test_plain_arithmetic_with_a_tensor_accounts_for_any_value(tmp_path, name):
    assert float_input_read(_frames(tmp_path)[name], "eps", -0.5, {**X, "L['eps']": -0.5}) is None


@pytest.mark.parametrize(
    "name,said",
    [
        ("gate", "tests it in Python at line 14"),
        ("helper", "passed to _helper()"),
        ("as_int", "int(eps * 10)"),
        ("sqrt", "math.sqrt(eps)"),
        ("loop", "tests it in Python at line 37"),
        ("flag", "eps > 0"),
        ("picked", "tests it in Python at line 49"),
        ("bumped", "assigns eps"),
        ("clamped", "clamp"),
    ],
)
def test_a_python_test_or_a_read_not_followed_leaves_it_undecided(tmp_path, name, said):
    why = float_input_read(_frames(tmp_path)[name], "eps", 0.5, {**X, "L['eps']": 0.5})
    assert why is not None and code_of(why) == "float-input-tested", why
    assert said in str(why) and "eps=0.5" in str(why) and "TORCH_TRACE" in str(why), why


def test_without_the_source_a_float_input_is_undecided(tmp_path):
    gone = CompiledFrom(function="plain", file=str(tmp_path / "gone.py"), line=4)
    for frame in (gone, None):
        why = float_input_read(frame, "eps", 0.5, X)
        assert (
            why is not None
            and code_of(why) == "float-input-tested"
            and "source is not read" in str(why)
        ), why
    why = float_input_read(_frames(tmp_path)["plain"], "eps", 0.5, X, "its code calls locals()")
    assert why is not None and "its code calls locals()" in str(why), why


def test_an_unframed_key_leaves_a_float_input_undecided_and_an_int_to_its_guards():
    inputs = {**X, "L['eps']": 0.5, "L['n']": 3}
    got = unframed(inputs, frozenset({"L['x']", "L['eps']", "L['n']"}), frozenset())
    assert [(p.name, p.status, code_of(p.how)) for p in got] == [
        ("eps", "undecided", "float-input-tested")
    ]
    assert (
        unframed(inputs, frozenset({"L['x']", "L['eps']", "L['n']"}), frozenset({"L['eps']"})) == ()
    )


def test_plain_arithmetic_is_four_operators_and_signs():
    assert plain_arithmetic("-(1 - eps / 2) * 3.0 + b")
    for text in (
        "eps ** 2",
        "eps // 1",
        "eps > 0",
        "int(eps)",
        "eps if b else 1.0",
        "eps and 1",
        "'a'",
        "(",
        "t[0]",
    ):
        assert not plain_arithmetic(text), text


def test_the_keys_sources_name_the_calls_floats():
    got = keyed_inputs({"L['args'][1]": 0.5, "L['x']": 1.0}, (("L['args'][1]", "L['eps']"),))
    assert got == {"L['args'][1]": 0.5, "L['eps']": 0.5, "L['x']": 1.0}
    assert keyed_inputs(None, ()) == {}
