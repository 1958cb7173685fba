"""The plain torch functions and stock modules of the round of call patterns no earlier round
used (imports torch): torch.nn.functional ops whose arguments are Python values (a scale
factor, a mode, a pad tuple, a dropout flag, a normalized shape from an int), int tuples,
optional ints, a callable picked by name, factory ops from int and float arguments,
non-contiguous and expanded inputs, other dtypes, and stock ``torch.nn`` modules compiled
whole. :mod:`tests.harness.evaluation.families_r15` says how each is compiled and called.
"""

import torch
import torch.nn.functional as F


def interp_scale(x, scale=2.0, mode="nearest", align=None):
    # F.interpolate by a float scale factor, a mode string and align_corners.
    return F.interpolate(x, scale_factor=scale, mode=mode, align_corners=align) * 2


def pad_seq(x, pads=(1, 2), mode="constant"):
    # F.pad with a tuple of pads and a mode string.
    return F.pad(x, pads, mode=mode).sum(-1)


def drop_train(x, p=0.5, training=False):
    # F.dropout under a flag: in eval, p is read by no op.
    return F.dropout(x, p, training=training) + 1


def ln_int(x, d=8, eps=1e-5):
    # F.layer_norm whose normalized shape is a tuple built from an int argument.
    return F.layer_norm(x, (d,), eps=eps).relu()


def opt_dim(x, dim=None):
    # An Optional[int]: None reduces all, an int one dim.
    if dim is None:
        return x.sum() * 2
    return x.sum(dim) * 2


def torch_fn(x, name="sin"):
    # A torch function picked by name with getattr.
    return getattr(torch, name)(x) + 1


_ACTS = {"relu": F.relu, "gelu": F.gelu, "silu": F.silu, "tanh": torch.tanh}


def act_lookup(x, act="relu", scale=1.0):
    # A dict of str -> callable keyed by a str argument, then a float scale.
    return _ACTS[act](x) * scale


def arange_add(x, n=8):
    # torch.arange(n) from an int, added to the first n columns.
    return x[:, :n] + torch.arange(n, dtype=x.dtype)


def full_fill(x, v=0.5):
    # torch.full with an int or float fill: the fill's type sets the dtype.
    return torch.full((x.shape[0],), v) + x.sum(-1)


def new_rows(x, n=2):
    # x.new_zeros with an int row count, stacked under x.
    return torch.cat([x, x.new_zeros(n, x.shape[1])], 0).cos()


def flip_dims(x, dims=(0, 1)):
    # An int tuple of dims for flip and amax.
    return x.flip(dims).amax(dims)


def cum_dim(x, dim=-1):
    # An int dim that may name the same axis from either end.
    return x.cumsum(dim) * 0.5


def rank_add(x, y):
    # Broadcasting of two tensors: size-1 dims and other ranks.
    return (x + y).sigmoid()


def mean_rows(x):
    # A mean over rows: a size-0 input gives nan, not an error.
    return x.mean(0) + 1


def int_mul(x, k=3):
    # A multiply whose dtype follows the input's (ints, halves, complex).
    return x * k + x


def cast_mean(x):
    # A float cast first, so an int input computes too.
    return x.float().mean(-1)


def softmax_dtype(x, dtype=None):
    # F.softmax with an optional dtype keyword.
    return F.softmax(x, dim=-1, dtype=dtype)


def where_other(x, other=0):
    # torch.where with a Python scalar other (int or float).
    return torch.where(x > 0, x, other)


def n_both(x, n=4):
    # An int used as a value and as a size.
    return x[:, :n] * n + torch.ones(n)


def clamp_opt(x, lo=None, hi=1.0):
    # clamp with an optional bound.
    return x.clamp(min=lo, max=hi).exp()


def linear_w(x, w, b=None):
    # F.linear with an optional bias, over any leading dims.
    return F.linear(x, w, b)


def unfold_pair(x, size=2, step=1):
    # Tensor.unfold with two ints.
    return x.unfold(-1, size, step).sum(-1)


def norm_p(x, p=2.0, dim=-1):
    # A vector norm with a float or int order.
    return torch.linalg.vector_norm(x, ord=p, dim=dim)


def roll_dims(x, shifts=(1, 2), dims=(0, 1)):
    # torch.roll with tuples of shifts and dims.
    return torch.roll(x, shifts, dims) * 3


def _conv1d_same() -> torch.nn.Module:
    return torch.nn.Conv1d(4, 6, 5, padding="same")


def bilinear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Bilinear(8, 6, 4).eval()


def shuffle() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(4, 16, 3, padding=1), torch.nn.PixelShuffle(2)).eval()


def conv1d_same() -> torch.nn.Module:
    torch.manual_seed(0)
    return _conv1d_same().eval()


def embedding_pad() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Embedding(64, 8, padding_idx=0).eval()


def layer_norm() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.LayerNorm(8).eval()


def group_norm() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.GroupNorm(2, 4).eval()


class Attn(torch.nn.Module):
    """nn.MultiheadAttention, batch first, with an optional attention mask and averaged weights."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 4, batch_first=True)

    def forward(self, q, kv, attn_mask=None, need_weights: bool = True):
        out, w = self.attn(q, kv, kv, attn_mask=attn_mask, need_weights=need_weights)
        return out if w is None else out + w.sum()


def attn() -> torch.nn.Module:
    torch.manual_seed(0)
    return Attn().eval()


def decoder_layer() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.TransformerDecoderLayer(16, 2, 32, dropout=0.1, batch_first=True).eval()


def upsample() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Upsample(scale_factor=2, mode="bilinear").eval()


def adaptive_pool() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d((3, 3))).eval()


def batch_norm() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.Dropout(0.2)).eval()


def grouped_conv() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Conv2d(4, 8, 3, groups=2, padding=1).eval()


def linear() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(8, 4).eval()


def scale_shift(x, s=2.0):
    # A float used as a scale and a shift.
    return x * s + s


def unary(x):
    # One op on whatever layout comes in.
    return x.cos() * 2


def one_hot(idx, n=5):
    # F.one_hot with an int class count (the ids taken modulo it).
    return F.one_hot(idx % n, n).float().sum(0)


def max_pool(x, kernel=(2, 2), stride=None):
    # F.max_pool2d with a tuple kernel and an optional stride.
    return F.max_pool2d(x, kernel, stride)


def view_cols(x, n=4):
    # x.view(-1, n): n must divide the numel.
    return x.view(-1, n).sum(-1)


def tensor_const(x, v=1):
    # A tensor made from a Python scalar: its dtype follows the scalar's type.
    return x + torch.tensor(v)


def keep_max(x, keepdim=False):
    # amax with a keepdim flag.
    return x.amax(-1, keepdim=keepdim) * 2
