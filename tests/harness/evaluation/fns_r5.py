"""The plain torch functions of the fifth round of evaluation families (imports torch).

Argument kinds and call patterns the earlier rounds do not use: optional float bounds of
``torch.clamp``, ints that index (``x[i]``, ``x[:, j]``, negative too), float defaults of
1.0 and 0.0 (``x * a + b``), a bool choosing between two ops of the same count, an int
through ``expand`` and ``torch.zeros``/``torch.ones``, a dict of Python values as a
config, a ``print()`` that breaks the graph with an int read after it, a module's
``ModuleList`` sliced by an int, ``torch.no_grad()`` inside the compiled function,
``torch.cond``, an int through ``unflatten`` and through negative slice bounds, and Dynamo's ``recompile_limit``.
:mod:`tests.harness.evaluation.families_r5` says how each is compiled and called.
"""

import torch


def clamp_range(x, lo=None, hi=1.0):
    # Float bounds of clamp, either of which may be None.
    return torch.clamp(x, min=lo, max=hi) * 2


def pick(x, i, j=-1):
    # Ints that index: a row x[i] and a column x[:, j] (j negative by default).
    return x[i] * 2 + x[:, j].sum()


def blend(x, a=1.0, b=0.0):
    # Float defaults of 1.0 and 0.0: x * 1.0 + 0.0.
    return x * a + b


def flip_op(x, use_sin=True):
    # A bool choosing between two graphs of the same op count.
    if use_sin:
        return x.sin() * 2
    return x.cos() * 2


def expand_rows(x, n, m=3):
    # Ints through expand and through torch.zeros / torch.ones.
    return x.expand(n, -1) + torch.zeros(n, x.shape[1]) + torch.ones(n, m).sum(1, keepdim=True)


def cfg_block(x, cfg):
    # A dict of Python values (ints, floats, a str, a bool) read as a config.
    y = x[:, : cfg["n"]] * cfg["scale"]
    if cfg["act"] == "gelu":
        y = torch.nn.functional.gelu(y)
    else:
        y = y.relu()
    if cfg["norm"]:
        y = y / (y.norm(dim=-1, keepdim=True) + 1)
    return y


def print_break(x, n):
    # A print() breaks the graph; n is read before and after it.
    y = x.cos() * n
    print("between the graphs")
    return y[:, :n] + n


class Stack(torch.nn.Module):
    """Three Linear layers of which ``forward`` runs the first ``depth``."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x, depth=2):
        for layer in self.layers[:depth]:
            x = layer(x).relu()
        return x


def stack() -> torch.nn.Module:
    """A :class:`Stack` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return Stack().eval()


def inner_no_grad(x, w):
    # torch.no_grad() inside the compiled function: the matmul never needs grad.
    with torch.no_grad():
        y = x @ w
    return y.tanh() + x.sum()


def cond_branch(x):
    # torch.cond on a data-dependent predicate: both branches are in the graph.
    return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,)) + 1


def unflat_heads(x, heads):
    # An int through unflatten: the last dim split into heads of the rest.
    return x.unflatten(-1, (heads, -1)).sum(-1) * heads


def scale_rows(x, k):
    # An int factor: each value another graph under dynamic=False.
    return x * k + 1


def neg_slice(x, k):
    # An int through negative slice bounds: x[:, :-k] and x[:, -k:] (k=0 empties the first).
    return x[:, :-k].sum(1) + x[:, -k:].mean(1)
