"""The plain torch functions of the tenth round of evaluation families (imports torch).

Call patterns the earlier rounds do not use: a float expression of an argument reaching an
op (``alpha=-lr``, ``1 / scale``), ``F.pad`` with a tuple and a str mode, ints in
``repeat`` and ``expand`` with a keyword-only argument, ``torch.no_grad()`` inside a
function called under grad, ``F.gelu(approximate=...)`` and ``softmax(dtype=...)`` with
keyword-only defaults, a dim marked dynamic with a range, ``torch.stack`` of a list with a
str dispatch and an optional weight, and a module whose plain attributes (a float, a str)
steer its forward. :mod:`tests.harness.evaluation.families_r10` says how each is compiled
and called.
"""

import torch
import torch.nn.functional as F


def sgd_alpha(p, g, lr=0.1):
    # An update step written as a user does: p - lr * g through add's alpha.
    return p.add(g, alpha=-lr).tanh()


def inv_scale(x, scale=2.0):
    # A float expression of an argument: 1 / scale multiplies, scale clamps.
    return (x * (1.0 / scale)).clamp(max=scale)


def pad_to(x, pad=(1, 1), mode="constant", value=0.0):
    # F.pad with a tuple of ints, a str mode and a float fill.
    return F.pad(x, pad, mode=mode, value=value if mode == "constant" else None).sin()


def tile_rows(x, reps, *, expand_to=None):
    # Ints in repeat and expand; the expand size keyword-only, None by default.
    y = x.repeat(reps, 1)
    if expand_to is not None:
        y = y.unsqueeze(0).expand(expand_to, -1, -1)
    return y.cos()


def frozen_stats(x, w):
    # Statistics taken under torch.no_grad() inside a function called under grad.
    with torch.no_grad():
        mu = x.mean(0, keepdim=True)
    return ((x - mu) @ w).relu()


def cast_act(x, *, approximate="none", dtype=None):
    # gelu's approximate str and softmax's dtype, both keyword-only with defaults.
    return F.gelu(x, approximate=approximate).softmax(-1, dtype=dtype)


def ranged_norm(x):
    # A row normalisation; the batch dim is marked dynamic with a range by the caller.
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)


def stack_mix(xs, weights=None, mode="sum"):
    # torch.stack of a list, an optional weight per tensor, a str reduction.
    s = torch.stack(xs)
    if weights is not None:
        s = s * weights.view(-1, 1, 1)
    return s.sum(0) if mode == "sum" else s.mean(0)


class Scaler(torch.nn.Module):
    """A linear layer whose plain attributes steer the forward: a float temperature, a str mode."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.temperature = 1.0
        self.mode = "softmax"

    def forward(self, x):
        h = self.lin(x)
        if self.mode == "softmax":
            return (h / self.temperature).softmax(-1)
        return h.sigmoid()


def scaler() -> torch.nn.Module:
    torch.manual_seed(0)
    return Scaler().eval()


def parity_fold(x):
    # A branch on a size's parity: an even batch folds in two, an odd one is scaled.
    if x.size(0) % 2 == 0:
        return x.view(2, -1, x.size(1)).sum(0)
    return x * 2


def pair_sums(x, y):
    # Two inputs whose batches the graph never relates: equal when built.
    return x.sum(0) * y.mean()


def int_gate(x, n):
    # An int argument compared in Python, then used as a slice bound.
    if n > 3:
        return x[:, :n].relu()
    return x * n


def bias_add(x, b):
    # An elementwise add of a bias the call may broadcast.
    return F.gelu(x + b)


def split_step(x, k=2):
    # A graph break between two halves; the second half reads a size and an int.
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos() * x.size(0) + k


def mode_mlp(x, w):
    # A matmul and an activation: the grad mode, inference mode and autocast pick the graph.
    return (x @ w).relu() + 1


def roll_shift(x, shift):
    # An int argument as a roll shift: positive when built, negative or past the width later.
    return torch.roll(x, shift, dims=1).relu()


def scale_by(x, s):
    # A scale the call passes as a 0-d tensor, a Python float or a 1-element tensor.
    return (x * s).exp()


def unrolled(x, n):
    # A Python loop over range(n): the trace unrolls it.
    for i in range(n):
        x = x * 0.5 + i
    return x


def dict_mix(feats):
    # A dict of tensors: the code reads two keys.
    return feats["a"].sum(0) + feats["b"].mean(0)


def inv_only(x, scale=2.0):
    # A float reaches the graph only as 1 / scale.
    return x * (1.0 / scale)


def affine_ab(x, a=1.0, b=2.0):
    # Two float arguments: a multiplies, b adds.
    return x * a + b


def tile_ab(x, a, b):
    # Two int arguments in one repeat.
    return x.repeat(a, b).sin()


def square_gain(x, g=3.0):
    # A float squared, then added: g * g and g both reach the graph.
    return x * (g * g) + g


def int_scale(x, n):
    # An int argument only in arithmetic with a tensor: x * n + n.
    return x * n + n
