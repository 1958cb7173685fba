"""The plain torch functions and small modules of the fourteenth round of evaluation families
(imports torch).

Each is user code as it is commonly written: a module method reading ``self.training``, a
function closing over a module, in-place ops on inputs, matmuls of transposed inputs, a
channels-last convolution, casts, int64 index tensors and bool masks, 0-d scalars, lists,
dicts and ``*args`` of tensors, keyword-only and tensor/tuple defaults, str modes, reshapes by
``x.shape``, stock ``nn`` layers (multi-head attention, an encoder layer, batch norm, a GRU
cell). :mod:`tests.harness.evaluation.families_r14` says how each is compiled and called.
"""

import math

import torch
import torch.nn.functional as F


class Gate(torch.nn.Module):
    """A linear layer whose output is scaled by a keep factor only in training mode."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.keep = 0.5

    def forward(self, x, residual: bool = True):
        y = self.lin(x)
        if self.training:
            y = y * self.keep
        return y + x if residual else y


def gate() -> torch.nn.Module:
    torch.manual_seed(0)
    return Gate().eval()


torch.manual_seed(0)
_PROJ = torch.nn.Linear(8, 4)


def closure_proj(x):
    # A module closed over (a global of this module), called inside the compiled function.
    return F.gelu(_PROJ(x)).sum(-1)


def inplace_add(x, y):
    # An in-place add into an input, then a read of it.
    x.add_(y)
    return x * 2


def tmm(x, w):
    # A matmul; the caller may pass x transposed (its strides).
    return (x @ w).relu()


class ConvBlock(torch.nn.Module):
    """Conv, batch norm, ReLU: a vision block (channels-last inputs, train/eval batch norm)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def conv_block() -> torch.nn.Module:
    torch.manual_seed(0)
    return ConvBlock().eval()


def soft(x):
    # A softmax in whatever dtype comes in.
    return (x * 2).softmax(-1)


def rows(x, idx):
    # Rows picked by an int64 index tensor.
    return x[idx].sum(0)


def fill(x, m):
    # A bool mask filled with a constant.
    return x.masked_fill(m, 0.0).exp()


def scale0(x, s):
    # A 0-d tensor scale.
    return (x * s).tanh()


def cat_list(xs):
    # A list of tensors of any length, concatenated.
    return torch.cat(xs, 0).sum(0)


def dict_add(d):
    # A dict of tensors; "b" is optional.
    out = d["a"] * 2
    if "b" in d:
        out = out + d["b"]
    return out


def kwonly(x, *, scale=1.0, act="relu"):
    # Keyword-only arguments: a float and a str mode.
    y = x * scale
    return F.relu(y) if act == "relu" else F.silu(y)


def star_sum(*xs):
    # *args of tensors, summed.
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out.sin()


_ZERO = torch.zeros(8)


def tbias(x, bias=_ZERO):
    # A tensor default argument.
    return (x + bias).cos()


def padded(x, pad=(1, 1)):
    # A tuple default into F.pad.
    return F.pad(x, pad).sum(-1)


def reduce_mode(x, mode="mean"):
    # A str mode choosing the reduction.
    if mode == "mean":
        return x.mean(-1)
    if mode == "sum":
        return x.sum(-1)
    return x.amax(-1)


def flat_lin(x, w):
    # x.view(x.size(0), -1): math on the shape.
    return x.view(x.size(0), -1) @ w


def heads(x, h=2):
    # Split the last dim into h heads by shape math.
    b, n, d = x.shape
    return x.view(b, n, h, d // h).transpose(1, 2).softmax(-1)


def mlp(x):
    # A plain elementwise-and-reduce body.
    return (x.sigmoid() * x).sum(-1)


class MHA(torch.nn.Module):
    """nn.MultiheadAttention, batch first; need_weights and a key padding mask from the call."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x, key_padding_mask=None, need_weights: bool = False):
        out, _ = self.attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=need_weights)
        return out


def mha() -> torch.nn.Module:
    torch.manual_seed(0)
    return MHA().eval()


def encoder_layer() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()


class Cell(torch.nn.Module):
    """A GRU cell unrolled over a given number of steps (an int), with an optional initial state."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = torch.nn.GRUCell(8, 8)

    def forward(self, x, h=None, steps: int = 2):
        for _ in range(steps):
            h = self.cell(x, h)
        return h


def cell() -> torch.nn.Module:
    torch.manual_seed(0)
    return Cell().eval()


class Scaled(torch.nn.Module):
    """A float attribute (``self.temperature``) read in forward, set by the user between calls."""

    def __init__(self) -> None:
        super().__init__()
        self.temperature = 1.0
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return (self.lin(x) / self.temperature).softmax(-1)


def scaled() -> torch.nn.Module:
    torch.manual_seed(0)
    return Scaled().eval()


def loss_fn(logits, target, reduction="mean"):
    # A cross entropy over int64 targets, with a str reduction.
    return F.cross_entropy(logits, target, reduction=reduction)


def norm_affine(x, weight=None, bias=None, eps=1e-5):
    # layer_norm with optional affine tensors and a float eps.
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps)


def topk_mask(x, k=2):
    # An int into topk, a bool mask built from its indices.
    idx = x.topk(k, -1).indices
    m = torch.zeros_like(x, dtype=torch.bool).scatter(-1, idx, True)
    return x * m


def grad_lin(x, w):
    # A matmul whose inputs may require grad.
    return (x @ w).tanh()


def empty_ok(x):
    # Nothing special about size 0 or 1 dims.
    return x.relu().sum(0) + 1


def shape_branch(x):
    # A branch on a size: a guard on the symbol under dynamic shapes.
    return x.sin() if x.size(0) > 4 else x.cos()


def attn_scores(q, k):
    # Attention scores scaled by 1/sqrt of the head dim, read from the shape.
    return (q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))).softmax(-1)


def mean_by_numel(x):
    # A mean written by hand: a Python int from numel().
    return x.sum() / x.numel()


def half_rows(x):
    # A slice by half the batch (floor division on the size).
    return x[: x.shape[0] // 2].exp()


class Flags(torch.nn.Module):
    """A bool attribute choosing an activation and an int attribute into repeat, set by the user."""

    def __init__(self) -> None:
        super().__init__()
        self.use_act = True
        self.reps = 1
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x).repeat(self.reps, 1)
        return F.gelu(y) if self.use_act else y


def flags() -> torch.nn.Module:
    torch.manual_seed(0)
    return Flags().eval()


GAIN = 1.0


def global_gain(x):
    # A module-level float read at trace time.
    return (x * GAIN).sigmoid()


def pick(x, i=-1):
    # An int index into a dim, negative by default.
    return x[:, i].exp()


def add_ones(x):
    # A factory in the default dtype beside the input.
    return x + torch.ones(x.shape[-1])


def proj(x, w):
    # A matmul and a softmax, as under autocast.
    return (x @ w).softmax(-1)
