"""The plain torch functions of the eighth round of evaluation families (imports torch).

Call patterns the earlier rounds do not use: a list of tensors summed in a Python loop, a
dict of tensors, a tuple output a flag selects, an int loop count, ``torch.where`` with a
Python scalar under ``dynamic=True``, ``x.shape[-1] // 2`` slices, non-contiguous inputs
of an elementwise op, a ``functools.partial`` binding a tensor, a method of a dataclass
config, a global tensor and a global int, and inputs marked with two ranges.
:mod:`tests.harness.evaluation.families_r8` says how each is compiled and called.
"""

import functools
from dataclasses import dataclass

import torch


def list_total(xs):
    # A Python loop over a list of tensors: the list's length is in the graph.
    out = xs[0] * 0
    for x in xs:
        out = out + x.sin()
    return out


def dict_mix(d):
    # A dict of tensors read by key.
    return d["a"] * 2 + d["b"].cos()


def split_out(x, both=False):
    # A tuple output when the flag says so, else one tensor.
    h = x.relu()
    if both:
        return h, h.sum(-1)
    return h * 2


def loop_n(x, n):
    # An int as a loop count: the loop is unrolled into the graph.
    for _ in range(n):
        x = x.tanh() * 1.5
    return x


def where_scalar(x, s=0.5):
    # torch.where with a Python scalar as the other branch.
    return torch.where(x > 0, x, s) * 2


def half_split(x):
    # A slice at x.shape[-1] // 2: an expression of a size.
    h = x.shape[-1] // 2
    return x[..., :h].sum(-1) - x[..., h:].sum(-1)


def strided_add(x, y):
    # An elementwise op of two inputs whose strides the call picks.
    return (x * 2 + y).relu()


def _project(x, w, shift=0.0):
    return (x @ w).tanh() + shift


# A partial that binds a tensor: the compiled callable is the partial.
torch.manual_seed(0)
PROJ_W = torch.randn(8, 4)
project = functools.partial(_project, w=PROJ_W)


@dataclass
class ScaleCfg:
    """A config whose method is compiled: the fields are read off ``self``."""

    scale: float = 2.0
    steps: int = 2
    act: str = "gelu"

    def apply(self, x):
        for _ in range(self.steps):
            x = x * self.scale
        return torch.nn.functional.gelu(x) if self.act == "gelu" else x.relu()


CFG = ScaleCfg()
cfg_apply = CFG.apply

GLOBAL_W = torch.randn(8, 8)
REPEATS = 2


def global_read(x):
    # A global tensor and a global int read by the function.
    for _ in range(REPEATS):
        x = x @ GLOBAL_W
    return x.relu()


def two_ranges(x, y):
    # Two inputs, each with a dim marked dynamic with a range of its own.
    return x.sum(-1, keepdim=True) * y.mean(0)


def grad_mlp(x, w, b):
    # A small layer whose inputs may require grad.
    return (x @ w + b).sigmoid()


def tiny_stack(x):
    # Sizes 0, 1 and 2 through a reduction and a broadcast.
    return (x - x.amax(0, keepdim=True)).exp() * x.shape[0]


def dict_scale(d):
    # A dict holding a tensor and an int, the int a factor.
    return d["x"] * d["n"] + 1


def leaky(x, slope=0.1):
    # A Python float as leaky_relu's negative slope.
    return torch.nn.functional.leaky_relu(x, slope) * 2


def clamp_low(x, lo=0.0):
    # A Python float as clamp's lower bound.
    return x.clamp(min=lo) + 1
