"""The plain torch functions of the sixth round of evaluation families (imports torch).

Argument kinds and call patterns the earlier rounds do not use: ints through ``narrow``,
``topk`` and ``kthvalue``, a Python exponent given as an int or a float, a str equation of
``torch.einsum``, a tuple of dims through ``permute(*dims)``, two int dims of
``transpose``, a float compared in Python (``if eps > 0:``), an in-place op on an input,
``**kwargs`` of tensors with a Python value returned beside the tensor, a tensor default
made when the function is defined, a module whose ``forward`` takes an optional int, a
``staticmethod`` compiled, and ``fullgraph=True`` over a branch that would break the graph.
:mod:`tests.harness.evaluation.families_r6` says how each is compiled and called.
"""

import torch


def narrow_cols(x, start, length):
    # Ints through narrow: a window of columns.
    return x.narrow(1, start, length) * 2


def power(x, p=2):
    # A Python exponent: 2, 2.0 and 0.5 are each a value the graph may bake.
    return x.abs() ** p + 1


def top_sum(x, k):
    # An int through topk: the k largest of each row.
    return x.topk(k, dim=-1).values.sum(-1)


def kth(x, k):
    # An int through kthvalue: the k-th smallest of each row.
    return x.kthvalue(k, dim=-1).values * 2


def contract(a, b, eq="ij,jk->ik"):
    # A str equation of einsum: another string, another graph (or the same ops).
    return torch.einsum(eq, a, b) + 1


def permute_dims(x, dims):
    # A tuple of ints spread into permute(*dims).
    return x.permute(*dims).contiguous() * 2


def swap(x, a=0, b=1):
    # Two int dims of transpose: (0, 1), (1, 0) and (-2, -1) swap the same two.
    return x.transpose(a, b).cumsum(0)


def eps_gate(x, eps=1e-5):
    # A float compared in Python: eps > 0 adds a normalisation, eps <= 0 does not.
    if eps > 0:
        x = x / (x.norm(dim=-1, keepdim=True) + eps)
    return x * 2


def bump_(x, y):
    # An in-place op on an input: x is changed and returned.
    x.add_(y)
    return x.mul_(2)


def kw_sum(x, **kw):
    # **kwargs of tensors, added in name order; how many there were is returned beside.
    out = x
    for name in sorted(kw):
        out = out + kw[name]
    return out.relu(), len(kw)


_W = torch.linspace(0.5, 1.5, 8)


def add_default(x, w=_W):
    # A tensor default made when the function is defined.
    return x * w + 1


class Truncate(torch.nn.Module):
    """Sums each row, or its first ``max_len`` columns when ``max_len`` is given."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(1, 4)

    def forward(self, x, max_len=None):
        if max_len is not None:
            x = x[:, :max_len]
        return self.fc(x.sum(-1, keepdim=True))


def truncate() -> torch.nn.Module:
    """A :class:`Truncate` from a fixed seed, in eval mode."""
    torch.manual_seed(0)
    return Truncate().eval()


class Ops:
    """A namespace of static methods."""

    @staticmethod
    def scale(x, k=3):
        # A staticmethod compiled: its qualname is Ops.scale.
        return x.sin() * k


ops_scale = Ops.scale


def maybe_print(x, loud=False):
    # Compiled with fullgraph=True: loud=True reaches a print(), which would break the graph.
    y = x.cos() + 1
    if loud:
        print("loud")
    return y * 2


# --- values computed from an argument: another argument can give the same graph ----------


def min_len(x, n):
    # min() of an int and a size: every n past the width gives the same slice.
    m = min(n, x.shape[1])
    return x[:, :m] * 2


def abs_shift(x, k):
    # abs() of an int: k and -k give the same roll.
    return x.roll(abs(k), -1) + 1


def half_cols(x, n):
    # n // 2: n = 4 and n = 5 give the same slice.
    return x[:, : n // 2].sum(-1)


def wrap_cols(x, n):
    # A negative n counts from the end: n = -2 and n = 6 give the same slice of 8 columns.
    k = n if n > 0 else x.shape[1] + n
    return x[:, :k] * 3


def floor_scale(x, s):
    # max() of a float and a literal: every s below 0.5 gives the same factor.
    return x * max(s, 0.5)
