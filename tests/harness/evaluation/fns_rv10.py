"""Review round 10: size comparisons the size-branch rule may not see (imports torch)."""

import torch
import torch.nn.functional as F


def too_long(x):
    return x.shape[1] > 16


def helper_gate(x):
    # The comparison lives in a helper with no ops in the graph.
    if too_long(x):
        return x[:, :16] * 2
    return x + 1


class Gate(torch.nn.Module):
    def forward(self, x, k):
        n = x.shape[0]
        if n > k:
            return x
        return x * 2


_GATE = Gate()


def sub_gate(x):
    # A submodule method compares; the side taken in the build makes no op.
    return _GATE(x, 4).sin()


def numel_gate(x):
    if x.numel() > 64:
        return x.sum(0)
    return x * 2


def in_tuple(x):
    if x.shape[0] in (2, 3):
        return x * 2
    return x + 1


def bool_var(x):
    # The comparison is stored in a variable; the if tests the name.
    long = bool(x.shape[0] >= 8)
    if long:
        return x.cos()
    return x.sin()


def index_by_cmp(x):
    # A comparison used as an index, no if at all.
    return (x.sin(), x.cos())[int(x.shape[0] > 4)] * 2


def comp_filter(x, y):
    # The comparison is a comprehension's filter.
    parts = [t for t in (x, y) if t.shape[0] > 4]
    return torch.cat(parts) * 2


def checked(x):
    torch._check(x.shape[0] >= 4)
    return x * 2


def halve_loop(x):
    n = x.shape[1]
    while n > 8:
        n = n // 2
    return x[:, :n] * 2


def slice_fixed(x):
    # A literal slice end: no comparison in the code.
    return x[:, :16] * 2


def pad_reflect(x):
    # Library code: reflect padding needs the pad below the size.
    return F.pad(x, (3, 3), mode="reflect") * 2


def interp_down(x):
    return F.interpolate(x, size=(8, 8), mode="bilinear", align_corners=False) + 1


def unfold_win(x):
    # Tensor.unfold: the number of windows from the size.
    return x.unfold(1, 4, 4).sum(-1)


def plain_gate(x):
    if x.shape[0] > 4:
        return x * 2
    return x + 1
