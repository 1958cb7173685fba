"""The plain torch functions of the eleventh round of evaluation families (imports torch).

Call patterns the earlier rounds do not use: ``F.pad`` with an int pad and a non-constant
mode, ``F.gelu(approximate=...)`` as a positional default beside a float gain, a kept tail
slice ``x[:, -k:]``, a tensor parameter defaulting to None with a keyword-only bias, Python
bool and str flags picking a normalisation, a float reaching the graph only squared, ints in
``reshape``, a list of tensors concatenated along a keyword-only dim, a size-1 broadcast,
``repeat_interleave`` with an int, and a float clamp bound beside an int shift.
:mod:`tests.harness.evaluation.families_r11` says how each is compiled and called.
"""

import torch
import torch.nn.functional as F


def pad_mode(x, p=1, mode="replicate"):
    # F.pad with an int pad on both sides and a non-constant mode.
    return F.pad(x, (p, p), mode=mode).tanh()


def act_gain(x, approx="tanh", beta=1.0):
    # gelu's approximate as a positional default, a float gain before it.
    return F.gelu(x * beta, approximate=approx)


def keep_tail(x, k):
    # The last k columns kept: x[:, -k:] (k=0 keeps every column).
    return x[:, -k:].exp()


def opt_weight(x, w=None, *, bias=None):
    # A tensor defaulting to None, read only when given; a keyword-only bias likewise.
    if w is not None:
        x = x * w
    if bias is not None:
        x = x + bias
    return x.sigmoid()


def flag_norm(x, center=True, how="l2"):
    # A bool flag and a str picking the normalisation.
    if center:
        x = x - x.mean(-1, keepdim=True)
    if how == "l2":
        return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    return x / x.abs().amax(-1, keepdim=True).clamp_min(1e-6)


def square_temp(x, t=0.5):
    # A float reaching the graph only squared: t and -t give the same graph.
    return (x * (t * t)).softmax(-1)


def heads_reshape(x, h, d):
    # Ints in reshape: (batch, h, d) back to (batch, h * d) after a transpose.
    b = x.shape[0]
    return x.reshape(b, h, d).transpose(1, 2).reshape(b, h * d).relu()


def cat_list(xs, *, dim=0, scale=None):
    # A list of tensors concatenated along a keyword-only dim, scaled when a scale is given.
    y = torch.cat(xs, dim=dim)
    if scale is not None:
        y = y * scale
    return y.cos()


def bcast_mul(x, y):
    # An elementwise product that broadcasts when a size is 1.
    return (x * y).sum(-1)


def interleave(x, n):
    # repeat_interleave with an int count.
    return x.repeat_interleave(n, dim=0).sin()


def clamp_shift(x, lo=-1.0, shift=2):
    # A float clamp bound and an int shift.
    return x.clamp(min=lo) + shift


def floor_scale(x, n=8):
    # An int reaching the graph only through n // 4: 8 and 9 give the same graph.
    return x * (n // 4)


def reduce_alias(x, how="sum"):
    # Two strs select the same branch.
    if how in ("sum", "total"):
        return x.sum(-1)
    return x.mean(-1)


def abs_gain(x, g=2.0):
    # A float reaching the graph only as abs(g).
    return (x * abs(g)).tanh()


def shape_only(x, y):
    # A tensor read only for its first size.
    return x.sum(-1) * y.shape[0]


def eps_floor(x, eps=1e-5):
    # A float floored in Python: every eps below 1e-3 gives the same graph.
    return x / (x.std(-1, keepdim=True) + max(eps, 1e-3))


def kw_flags(x, *, center=True, gain=1.0, how="l2"):
    # Keyword-only flags: a bool, a float and a str.
    if center:
        x = x - x.mean(-1, keepdim=True)
    x = x * gain
    return x.norm(dim=-1) if how == "l2" else x.abs().amax(-1)


def kw_mix(x, *, y=None, n=2):
    # A keyword-only tensor defaulting to None and a keyword-only int.
    if y is not None:
        x = x + y
    return x * n


def kw_cat(x, *, extras=()):
    # A keyword-only tuple of tensors concatenated after x.
    return torch.cat([x, *extras]).relu()


def po_weight(x, w=None, /):
    # A positional-only tensor defaulting to None.
    if w is not None:
        x = x * w
    return x.exp()


class MaskedMean(torch.nn.Module):
    """A linear layer whose forward takes a keyword-only mask, None by default."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x, *, mask=None):
        h = self.lin(x)
        if mask is not None:
            h = h * mask
        return h.mean(-1)


def masked_mean() -> torch.nn.Module:
    torch.manual_seed(0)
    return MaskedMean().eval()


def kw_scale(x, *, n=2, lo=0.0):
    # A keyword-only int and float reaching the graph as constants (or symbols).
    return (x * n).clamp(min=lo).sin()


def kw_opts(x, **opts):
    # A tensor passed through **kwargs, read when present.
    b = opts.get("bias")
    if b is not None:
        x = x + b
    return x.tanh()


def var_add(x, *rest):
    # Tensors passed through *args, each added.
    for r in rest:
        x = x + r
    return x.relu()


def twin_branch(x, fast=True):
    # A bool whose two branches trace the same ops.
    if fast:
        y = x.sin()
    else:
        y = torch.sin(x)
    return y * 2


def first_two(xs):
    # A list of which only the first two tensors are read.
    return xs[0] + xs[1]


def kw_sum(x, *, xs=()):
    # A keyword-only list of tensors, each added to x.
    for t in xs:
        x = x + t
    return x.sin()
