"""The plain torch functions of the fourth round of evaluation families (imports torch).

Argument kinds and call patterns the earlier rounds do not use: a tensor split into a
number of pieces that depends on its size, ints through ``F.pad`` and ``torch.roll``,
a tensor made from int and float parameters (``torch.arange``, ``torch.full``), a
reduction's ``dim=None`` or an int, a str ``reduction`` with an int64 target, ``*args``
of tensors, a ``functools.partial`` with a baked keyword, a bool mask and an int64 index
tensor, a Python branch on ``x.size(0) == 1``, a submodule called twice in one frame, a
bound method compiled (not ``forward``), and a compiled function called by another.
:mod:`tests.harness.evaluation.families_r4` says how each is compiled and called.
"""

import functools

import torch
import torch.nn.functional as F


def split_sum(x, n):
    # A tensor split into pieces of n columns: how many pieces depends on x.size(1) and n.
    parts = x.split(n, dim=1)
    return sum(p.sum(1) * (i + 1) for i, p in enumerate(parts))


def pad_roll(x, p, k=1):
    # Ints through F.pad (the padding) and torch.roll (the shift).
    return torch.roll(F.pad(x, (p, p)), k, dims=-1) * 2


def ramp(x, n, v=0.5):
    # A tensor made from an int and a float parameter: arange(n) and full((n,), v).
    return x[:, :n] + torch.arange(n, dtype=x.dtype) * v + torch.full((n,), v)


def spread(x, dim=None, keepdim=False):
    # dim=None (every element) or an int, passed to std.
    return x.std(dim=dim, keepdim=keepdim) + 1


def ce_loss(logits, target, reduction="mean"):
    # A str passed to cross_entropy with an int64 target: "none" keeps a value per row.
    return F.cross_entropy(logits, target, reduction=reduction) * 2


def star_sum(*xs):
    # *args of tensors: how many there are is part of the frame.
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out.relu()


def _scaled_sin(x, scale=1.0, bias=0.0):
    return (x * scale).sin() + bias


# A partial with a baked keyword: the compiled callable is the partial.
scaled_sin = functools.partial(_scaled_sin, scale=3.0)


def masked_gather(x, mask, idx):
    # A bool mask (masked_fill) and an int64 index tensor (index_select) as inputs.
    return x.masked_fill(mask, 0.0).index_select(0, idx).sum(0)


def squeeze_branch(x):
    # A Python branch on x.size(0) == 1.
    if x.size(0) == 1:
        return x.squeeze(0).cos()
    return x.sum(0).sin()


class Twice(torch.nn.Module):
    """One Linear applied to two inputs of other batch sizes in one frame."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x, y):
        return self.fc(x).sum(0) + self.fc(y).mean(0)


def twice() -> torch.nn.Module:
    """A :class:`Twice` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return Twice().eval()


class Encoder(torch.nn.Module):
    """A module whose method ``encode`` (not ``forward``) is compiled."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(6, 4)

    def forward(self, x):
        return self.proj(x)

    def encode(self, x, normalize=True):
        y = self.proj(x).tanh()
        if normalize:
            y = y / (y.norm(dim=-1, keepdim=True) + 1)
        return y


def _encoder() -> Encoder:
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return Encoder().eval()


# The bound method compiled: torch.compile(ENCODER.encode).
ENCODER = _encoder()
encode = ENCODER.encode


@torch.compile(dynamic=True)
def inner_gate(x):
    return x.sigmoid() * x


def outer_gate(x, w):
    # Calls a function compiled on its own (dynamic=True): inlined into this frame's graph.
    return inner_gate(x @ w) + 1
