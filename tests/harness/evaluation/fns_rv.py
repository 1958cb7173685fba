"""Reviewer's adversarial functions."""
import torch


def local_max(x, n):
    def max(a, b):
        return a

    return x * max(n, 4)


def param_min(x, n, min=max):
    return x * min(n, 4)


def shifted_gate(x, eps):
    eps = eps + 1.0
    if eps > 0:
        x = x * 2
    return x + 1


def other_param(x, n, k):
    k = k + 1
    m = min(n, k)
    return x * m


def other_float(x, s, lo):
    lo = lo * 2.0
    return x * max(s, lo)


def gate_other(x, eps, t):
    t = t - 1.0
    if eps > t:
        x = x.sin()
    return x + 1


def zero_scale(x, s):
    return x * max(s, -1.0)


def nan_scale(x, s):
    return x * min(s, 2.0)


def walrus_gate(x, eps):
    if (e := eps * 2) > 1:
        x = x * 2
    return x + e


def elif_gate(x, eps):
    if eps > 1:
        x = x.sin()
    elif eps > 0:
        x = x.cos()
    return x + 1


def round_cols(x, s):
    k = round(s)
    return x[:, :k] * 2


def int_vs_bool(x, n):
    return x * max(n, 0)


def early_ret(x, eps):
    if eps > 0:
        return x.sin()
    return x.cos()


def same_ops(x, eps):
    if eps > 0:
        y = x * 2
    else:
        y = x * 2
    return y + 1


def cat_min(x, n):
    x = torch.cat([x, x], 1)
    return x * min(n, x.shape[1])


def cat_minf(x, s):
    x = torch.cat([x, x], 1)
    return x * min(s, x.shape[1] * 0.1)


def ret_same(x, eps):
    if eps > 0:
        return x.sin() + 1
    return x.sin() + 1


def fallback(x, eps):
    y = None
    if eps > 0:
        y = x.sin()
    if y is None:
        y = x.sin()
    return y * 2


def kw_scale(x, **kwargs):
    n = kwargs.get("n", 2)
    return x * n


def kw_min(x, **kw):
    return x * min(kw["n"], x.shape[1])


def kw_local(x, **kw):
    n = 4
    return x * n


def kw_local2(x, **kw):
    n = kw.get("k", 4)
    return x * n


def brk_gate(x, eps):
    x = x + 1
    torch._dynamo.graph_break()
    if eps > 0:
        x = x * 2
    return x.sin()


def t_max(x, n):
    x = x.t()
    return x * max(n, x.shape[1])
