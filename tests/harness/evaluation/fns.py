"""The plain torch functions of the evaluation families (imports torch).

Each is written as a user would, with the argument kinds ``fxcache match`` must
account for: a bool or str the code branches on, floats through expressions, lists
of tensors, a marked range, a size that reaches 1 after convolutions, an optional
tensor, an int in an expression, a tuple of ints, a 0-d tensor where a float could go,
dtypes. :mod:`tests.harness.evaluation.families` says how each is compiled and called.
"""

import math

import torch
import torch.nn.functional as F


def act_block(x, act="relu", clip=False):
    # A str and a bool the code branches on: each value traces another graph.
    if act == "gelu":
        y = F.gelu(x)
    elif act == "tanh":
        y = torch.tanh(x)
    else:
        y = F.relu(x)
    if clip:
        y = y.clamp(-1.0, 1.0)
    return y * 2


def sgd_update(p, g, lr):
    # The float reaches the graph as -lr.
    return p.add(g, alpha=-lr)


def inv_scale(x, scale):
    # The float reaches the graph as 1 / scale.
    return x * (1.0 / scale) + 1


def half_lr(w, g, lr):
    # The float reaches the graph as lr * 0.5.
    return w - g * (lr * 0.5)


def adam_like(params, grads, exp_avgs, lr, beta1, step):
    # An optimizer-like step over lists of tensors, in place; an int in an expression.
    with torch.no_grad():
        for p, g, m in zip(params, grads, exp_avgs, strict=True):
            m.mul_(beta1).add_(g, alpha=1 - beta1)
            bias = 1 - beta1 ** step
            p.add_(m, alpha=-lr / bias)
    return params[0].sum()


def ranged(x):
    # Compiled with dynamic=None; the calls mark dim 0, with a range or not.
    return F.silu(x) * 2


def _conv_stack() -> torch.nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Conv1d(1, 4, kernel_size=10, stride=5), torch.nn.GELU(),
            torch.nn.Conv1d(4, 4, kernel_size=3, stride=2), torch.nn.GELU(),
            torch.nn.Conv1d(4, 4, kernel_size=3, stride=2),
        ).eval()


CONVS = _conv_stack()


def frames(audio):
    # A feature extractor over raw audio (as Wav2Vec2's): lengths 30..49 leave ONE frame.
    feats = CONVS(audio.unsqueeze(1))
    return feats.transpose(1, 2).softmax(-1)


def affine(x, weight, bias=None):
    # An optional tensor: given or left out, another graph.
    y = x @ weight
    if bias is not None:
        y = y + bias
    return y


def window(x, n):
    # An int used in expressions.
    return x[:, : n * 2] * (n + 1)


def pool(x, dims=(2, 3), keepdim=False):
    # A tuple of ints and a bool: constants of the graph.
    return x.mean(dim=dims, keepdim=keepdim)


def mix(x, t):
    # t: a 0-d tensor, or a Python float.
    return x * t + (1 - t)


def norm_cast(x):
    # The dtype of x is kept: each dtype another graph.
    return (x.float() / (x.float().norm() + 1)).to(x.dtype)


def reduce_dim(x, dim=1, keepdim=False):
    # An int dim and a bool, passed to a reduction: constants of the graph.
    return x.sum(dim, keepdim=keepdim) * 2


def head_tail(x, k, scale=3):
    # Ints through expressions: a slice bound and a factor.
    return x[:, k:] * scale + x[:, : k + 1].sum()


def upsample(x, mode="nearest", factor=2):
    # A str and an int passed to F.interpolate.
    return F.interpolate(x, scale_factor=factor, mode=mode)


def cat_rows(xs, dim=0):
    # A list of tensors joined with torch.cat along an int dim.
    return torch.cat(xs, dim=dim).relu()


def top_k(x, k=None):
    # An Optional[int]: None keeps every column.
    if k is not None:
        x = x[:, :k]
    return x.softmax(-1)


def drop_block(x, training=False):
    # A bool training flag passed to dropout.
    return F.dropout(x, p=0.5, training=training) + 1


# --- the families added with the model families of the second round -------------------


def regroup(x, groups):
    # An int through view, reshape and repeat: the graph's sizes are made of it.
    y = x.view(x.shape[0], groups, -1).mean(-1)
    return y.reshape(-1).repeat(groups) * 2


def temp_norm(x, t, eps=1e-6):
    # Floats as a user passes them: an eps inside rsqrt, a temperature through x / t.
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return (y / t).softmax(-1)


def where_fill(x, fill=0.0, thresh=0):
    # torch.where with a Python scalar for the other branch, and a comparison with one.
    return torch.where(x > thresh, x, fill) * 2


def cast_to(x, dtype=torch.float16):
    # A torch.dtype argument, passed to .to().
    return (x * 2).to(dtype) + 1


def reshape_to(x, shape):
    # A tuple of ints as a shape argument.
    return x.reshape(shape).relu() + 1


def gated(x, n):
    # A graph break: a data-dependent branch ends the first graph; n is read after it.
    y = x.sin()
    if y.sum() > 0:
        y = y * n
    return y.cos() + n


def pairwise(x, y):
    # Two tensors whose sizes the graph relates (a broadcast); sizes 0 and 1 reach it.
    return (x.unsqueeze(1) - y.unsqueeze(0)).abs().sum(-1)


class NormNet(torch.nn.Module):
    """Linear, BatchNorm1d and Dropout: ``training`` picks another graph, and in training
    mode the BatchNorm updates its running buffers in place."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)
        self.bn = torch.nn.BatchNorm1d(16)
        self.drop = torch.nn.Dropout(0.25)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x))).relu()


def norm_net() -> torch.nn.Module:
    """A :class:`NormNet` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return NormNet().eval()


class Counter(torch.nn.Module):
    """A module with a buffer updated in place on every call, and a flag its forward
    reads from ``self`` (not an argument)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))
        self.scale = torch.nn.Parameter(torch.ones(4))
        self.center = False

    def forward(self, x, offset=None):
        self.calls += 1
        y = x * self.scale
        if self.center:
            y = y - y.mean(0)
        if offset is not None:
            y = y + offset
        return y / self.calls


def counter() -> torch.nn.Module:
    """A :class:`Counter`, in eval mode."""
    return Counter().eval()


# --- the third round: global state, layouts, Python control flow, containers -----------


def gelu_mix(x, w):
    # A matmul: grad mode and requires_grad pick an inference or a training graph.
    return (x @ w).tanh() * 0.5


def row_norm(x):
    # A reduction along the last dim; the input may come transposed.
    return x / (x.norm(dim=-1, keepdim=True) + 1)


def pool2(x):
    # A 4-d input, contiguous or channels-last.
    return torch.nn.functional.avg_pool2d(x, 2) + 1


def repeat_branch(x, n):
    # An int read by Python control flow: a loop unrolled n times, and a branch on n.
    for _ in range(n):
        x = x.sin()
    if n > 2:
        x = x * 2
    return x + 1


def attn_scale(q, k):
    # A size through math.sqrt and ** 0.5: a float made of a size.
    d = q.shape[-1]
    return (q @ k.transpose(-1, -2)) / math.sqrt(d) + q.shape[-1] ** 0.5


def scaled(x, *, scale=1.0, shift=0):
    # Keyword-only parameters: a float and an int.
    return x * scale + shift


GAIN = 2.0


def global_gain(x):
    # A module-level float read by the function: baked into the graph.
    return x.relu() * GAIN


def dict_batch(batch):
    # A dict of tensors as the one argument.
    return (batch["x"] * batch["w"]).sum(-1) + batch["b"]


def nested_pair(pair):
    # A nested tuple of tensors.
    a, (b, c) = pair
    return a @ b + c


class Scaler(torch.nn.Module):
    """A module whose forward reads a float and a str attribute of ``self``."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.scale = 2.0
        self.act = "relu"

    def forward(self, x):
        y = self.fc(x) * self.scale
        return y.relu() if self.act == "relu" else y.tanh()


def scaler() -> torch.nn.Module:
    """A :class:`Scaler` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return Scaler().eval()


def ones_bias(x):
    # A factory without a dtype: the default dtype picks the constant's dtype, and the result's.
    return x * 2 + torch.ones(x.shape[-1])


class TinyMlp(torch.nn.Module):
    """Two linear layers whose parameters require grad: a training step, then eval calls."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def tiny_mlp() -> torch.nn.Module:
    """A :class:`TinyMlp` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return TinyMlp().eval()
