"""A float parameter left at its default where the key takes it as a graph input: Dynamo
made the float a 0-d float64 input (torch 2.13 under dynamic=True names it ``L['v']``, as the
evaluation's ramp family showed: torch hit the key for ``ramp(x, n)`` built with ``v=0.5``
given), so leaving it out passes a float as giving one does. Synthetic source files: the
rule reads the ``def``, not torch."""

from __future__ import annotations

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.lookup.optional_tensors import float_default_tensorified

SRC = '''import torch


def ramp(x, n, v=0.5, w=None, k=2, t: float | torch.Tensor = 0.5, *, u=1.5):
    return x[:, :n] * v
'''


def test_a_float_default_taken_as_a_0d_float64_input_is_the_default_made_an_input(tmp_path):
    path = tmp_path / "fns.py"
    path.write_text(SRC)
    frame = CompiledFrom(function="ramp", file=str(path), line=4)
    assert float_default_tensorified("L['v']", "f64[][]cpu", frame)
    assert float_default_tensorified("L['u']", "f64[][]cpu", frame)  # keyword-only
    assert not float_default_tensorified("L['w']", "f64[][]cpu", frame)  # defaults to None: a tensor left out
    assert not float_default_tensorified("L['k']", "f64[][]cpu", frame)  # an int default
    assert not float_default_tensorified("L['t']", "f64[][]cpu", frame)  # may have been a 0-d tensor
    assert not float_default_tensorified("L['v']", "f32[][]cpu", frame)  # not a Python float's dtype
    assert not float_default_tensorified("L['v']", "f64[4][1]cpu", frame)  # not 0-d
    assert not float_default_tensorified("L['v']", "f64[][]cpu", None)  # no frame: not known
    gone = CompiledFrom(function="ramp", file=str(tmp_path / "gone.py"), line=4)
    assert not float_default_tensorified("L['v']", "f64[][]cpu", gone)
