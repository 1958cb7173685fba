"""The plain torch functions of the seventh round of evaluation families (imports torch).

Argument kinds and call patterns the earlier rounds do not use: a tuple of ints as
``F.pad``'s padding with a float fill, a float ``scale_factor`` and a size tuple of
``F.interpolate``, the dims of ``log_softmax`` and ``cumsum``, ``group_norm``'s group count
and eps, ``layer_norm``'s eps, ``repeat_interleave`` and ``chunk`` counts, ``F.unfold``'s
kernel and stride, ``masked_fill`` with a float, a str mode picking a branch in a callee
module, a module whose ``forward`` takes a bool flag and an optional tensor, a float
through ``math.sqrt``, ``int()`` and ``round()``, a size-1 dim, a dtype changed between
calls, and two dims marked dynamic with one range.
:mod:`tests.harness.evaluation.families_r7` says how each is compiled and called.
"""

import math

import torch
import torch.nn.functional as F


def pad_fill(x, pad=(1, 1), value=0.0):
    # A tuple of ints as the padding and a float fill.
    return F.pad(x, pad, value=value) * 2


def resize_scale(x, s=2.0, align=False):
    # A float scale factor and a bool of bilinear interpolation.
    return F.interpolate(x, scale_factor=s, mode="bilinear", align_corners=align) + 1


def resize_to(x, size):
    # A tuple of ints as the output size.
    return F.interpolate(x, size=size, mode="nearest") * 2


def soft_cum(x, dim=-1, cdim=0):
    # Two int dims: log_softmax's and cumsum's.
    return x.log_softmax(dim).cumsum(cdim)


def group_norm(x, groups=2, eps=1e-5):
    # An int group count and a float eps of group_norm.
    return F.group_norm(x, groups, eps=eps) * 2


def layer_norm(x, eps=1e-5):
    # A float eps of layer_norm over the last dim.
    return F.layer_norm(x, (x.shape[-1],), eps=eps) + 1


def repeat_rows(x, n):
    # An int count of repeat_interleave.
    return x.repeat_interleave(n, dim=0) * 2


def chunk_sum(x, n):
    # An int count of chunk: how many pieces (and the graph's outputs) depends on it.
    parts = x.chunk(n, dim=-1)
    return torch.stack([p.sum(-1) for p in parts], -1)


def patches(x, k=2, stride=2):
    # Ints through F.unfold: the kernel size and the stride.
    return F.unfold(x, kernel_size=k, stride=stride).sum(1)


def fill_above(x, value=-1.0, t=0.5):
    # masked_fill with a float value, the mask a comparison with a float.
    return x.masked_fill(x > t, value) * 2


class Pool(torch.nn.Module):
    """Reduces the last dim as ``mode`` says: 'sum', 'mean' or 'max'."""

    def forward(self, x, mode):
        if mode == "sum":
            return x.sum(-1)
        if mode == "mean":
            return x.mean(-1)
        return x.amax(-1)


class Head(torch.nn.Module):
    """A linear layer then a :class:`Pool` whose mode the call gives."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.pool = Pool()

    def forward(self, x, mode="mean"):
        return self.pool(self.fc(x), mode)


def head() -> torch.nn.Module:
    """A :class:`Head` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return Head().eval()


class Masked(torch.nn.Module):
    """A linear layer; an optional additive mask and a bool that normalises the output."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x, mask=None, normalize=False):
        y = self.fc(x)
        if mask is not None:
            y = y + mask
        if normalize:
            y = y / y.norm(dim=-1, keepdim=True)
        return y


def masked() -> torch.nn.Module:
    """A :class:`Masked` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return Masked().eval()


def root_scale(x, d=4.0):
    # A float through math.sqrt, int() and round().
    return x * math.sqrt(d) + int(d) + round(d)


def row_mean(x):
    # A reduction over dim 1 that a size-1 dim 0 specializes.
    return (x - x.mean(0, keepdim=True)) * 2


def cast_mix(x):
    # Whatever dtype x has: the graph is made for it.
    return (x.sin() * 2).sum(-1)


def gelu_rows(x):
    # A plain op over rows, called with both dims marked dynamic.
    return F.gelu(x) * x.shape[0]


# --- sizes the graph's guards relate: a branch, equal sizes, a divisibility, a broadcast ---


def size_branch(x):
    # A branch on a size: the cache entry's guards hold which side was traced.
    if x.shape[0] > 4:
        return x.sin() * 2
    return x.cos() * 2


def pair_add(x, y):
    # Two inputs whose sizes may be equal (duck sizing) or broadcast.
    return (x + y).relu() * 2


def rows_of_four(x):
    # view(-1, 4): the element count must divide by 4.
    return x.view(-1, 4).sum(-1)


def mat(x, w):
    # A matmul: the inner sizes must agree.
    return (x @ w).tanh()


def window_sum(x, k):
    # A slice whose end an int gives, compared with the size: x[:, :k] past the width is the width.
    return x[:, :k].sum(-1) + x[:, k:].sum(-1) * 2


def _gate(x):
    # A callee's branch on a size: Dynamo inlines it into its caller's graph.
    if x.shape[-1] >= 6:
        return x.tanh()
    return x.sigmoid()


def callee_branch(x):
    # The caller compiled, the size branch in the callee it calls.
    return _gate(x * 2) + 1
