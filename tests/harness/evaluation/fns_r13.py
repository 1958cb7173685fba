"""The plain torch functions of the thirteenth round of evaluation families (imports torch).

Each aims at a premise of a rule that lets ``fxcache match`` decide: an elif chain whose
last side traces the first side's ops, sides of a flag that differ only in a constant
(a float, or an int against a float), a float clamp bound given as ``-0.0``, a detached
input that requires grad, a list read only at its ends, an int into ``repeat`` / a slice /
``arange`` under dynamic shapes, an int from ``**kwargs``, and a dtype cast that is a no-op.
:mod:`tests.harness.evaluation.families_r13` says how each is compiled and called.
"""

import math

import torch


def elif_same(x, mode="a"):
    # The else side traces the same ops as the "a" side.
    if mode == "a":
        y = x.sin()
    elif mode == "b":
        y = x.cos()
    else:
        y = x.sin()
    return y * 2


def const_side(x, flag=True):
    # Both sides multiply; only the constant differs.
    if flag:
        y = x * 2.0
    else:
        y = x * 3.0
    return y.sin()


def int_float_side(x, flag=True):
    # Both sides multiply by two: an int on one side, a float on the other.
    y = x * 2 if flag else x * 2.0
    return y.cos()


def clamp_lo(x, lo=0.0):
    # A float clamp bound.
    return x.clamp(min=lo).exp()


def detached(x, w):
    # x is detached before use: its requires_grad reaches no output.
    return x.detach().sin() @ w


def ends(xs):
    # Only the first and the last element are read.
    return xs[0] * 2 + xs[-1]


def rep(x, n=2):
    # An int into repeat.
    return x.repeat(n, 1).sum(0)


def head(x, k=2):
    # An int into a slice.
    return x[:, :k].cos()


def ar(x, n=8):
    # An int into arange, beside a tensor of that size.
    return x * torch.arange(n, dtype=torch.float32)


def kw_int(x, **kw):
    # An int read from **kwargs into arithmetic.
    return (x * kw["a"]).tanh()


def cast(x, dtype=None):
    # A cast that is a no-op for the built dtype.
    y = x if dtype is None else x.to(dtype)
    return y.sin().sum(-1)


def two_floats(x, a=2.0, b=3.0):
    # Two float constants, each in its own place.
    return (x * a + b).sin()


def float_sum(x, a=1.0, b=2.0):
    # Two floats reaching the graph only as their sum.
    return (x * (a + b)).cos()


def slice_end(x, b=8):
    # An int slice end that may run past the dim.
    return x[:, 1:b].exp()


def loop_n(x, n=3):
    # An int read only by range(): the loop unrolls.
    for _ in range(n):
        x = x.sin()
    return x


def gt_n(x, n=3):
    # An int tested in an if, and used in arithmetic.
    if n > 2:
        return x * n
    return x - n


def clamp_pair(x, lo=-1.0, hi=1.0):
    # Two float clamp bounds.
    return x.clamp(lo, hi).exp()


def abs_scale(x, s=2.0):
    # A float reaching the graph through abs(): -2.0 and 2.0 give one graph.
    return (x * abs(s)).sin()


def round_lo(x, lo=0.0):
    # A float clamp bound rounded first.
    return x.clamp(min=round(lo, 1)).exp()


def roll_mod(x, k=3):
    # An int shift reduced modulo the dim's size before use.
    return x.roll(k % 8, 1).cos()


def sq_sum(x):
    # Any rank.
    return (x * x).sum(-1)


def nograd_block(x, w):
    # w used only under torch.no_grad() inside the function.
    with torch.no_grad():
        y = x @ w
    return y.sin()


def data_branch(x):
    # A branch on the data: Dynamo breaks the graph there.
    y = x.sin()
    if y.sum() > 0:
        z = y.cos()
    else:
        z = y.exp()
    return z * 2


def contig_branch(x):
    # A branch on the input's layout.
    if x.is_contiguous():
        return x.sin()
    return x.contiguous().cos()


def abs_neg(x, s=2.0):
    # abs(s) into the mul, and the sign of s tested: one constant, two graphs.
    y = x * abs(s)
    if s < 0:
        y = y.neg()
    return y.sin()


def roll_two(x, k=3):
    # One int in two places: a shift modulo 8 and a quotient added.
    return x.roll(k % 8, 1) + k // 8


def unused(x, y):
    # y is never read.
    return x.sin()


def sum_dim(x, dim=1):
    # An int dim, given as 1 or as -1 for a 2-d input.
    return x.sum(dim).exp()


def eps_div(x, eps=1e-5):
    # A float that differs from the built one only past float32's precision.
    return x / (x.abs() + eps)


def tenth(x, s=0.30000000000000004):
    # A float default whose shortest repr is not 0.3.
    return (x * s).sin()


def scaled_sum(x, a=2.0):
    # A float into a mul, then a reduction over the last dim.
    return (x * a).sum(-1)


def two_flags(x, a=False, b=False):
    # Two ifs whose bodies trace the same op.
    y = x.sin()
    if a:
        y = y.relu()
    if b:
        y = y.relu()
    return y


def ones_dtype(x, dtype=torch.float32):
    # A dtype into a factory; None there is the default dtype.
    return x + torch.ones(x.shape[-1], dtype=dtype)


def sqrt_scale(x, d=16.0):
    # A float reaching the graph through math.sqrt.
    return x / math.sqrt(d)


def len_scale(x, xs):
    # A list's length as a constant; its elements never read.
    return x * len(xs)
