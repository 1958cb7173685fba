"""The plain torch functions (and small modules) of the twelfth round of evaluation families
(imports torch).

Call patterns the earlier rounds do not use: a str read by a helper function beside an
optional tensor in a conditional expression, a bool read only inside a nested function,
a ``functools.partial`` whose bound keyword is a float, options read from ``**opts`` with
``.get``, ``*args`` tensors beside a keyword-only optional weight, ``if w is None: ... else:``
with both arms tracing ops, ``mask if mask is not None else ones``, a size-0 dim under
``dynamic=True``, ``torch.is_grad_enabled()`` read in the body, an in-place op before an
optional dtype change, a dict of tensors with an optional key, a tuple of tensors swapped by
a flag, an int ``torch.roll`` shift, and a module with a step-count buffer bumped in place in
training mode. :mod:`tests.harness.evaluation.families_r12` says how each is compiled and called.
"""

import functools

import torch
import torch.nn.functional as F


def _act(t, kind):
    # A helper reading the str the caller passed on.
    if kind == "silu":
        return F.silu(t)
    return F.relu(t)


def helper_act(x, kind="silu", scale=None):
    # A str read through a helper; an optional tensor in a conditional expression.
    y = _act(x, kind)
    return y if scale is None else y * scale


def closure_gate(x, gate=True):
    # A bool read only inside a nested function (a closure cell).
    def inner(t):
        return t.sigmoid() if gate else t.tanh()

    return inner(x) * 2


def _scaled_impl(x, alpha=1.0, shift=0):
    # A float and an int, alpha bound by functools.partial below.
    return (x * alpha + shift).cos()


scaled = functools.partial(_scaled_impl, alpha=2.0)


def kwargs_opts(x, **opts):
    # Options read from **opts with .get: a bool and a float.
    if opts.get("norm", False):
        x = x / x.norm(dim=-1, keepdim=True)
    return x * opts.get("gain", 1.5)


def star_sum(x, *ys, weight=None):
    # *args tensors summed into x; a keyword-only optional weight.
    for y in ys:
        x = x + y
    if weight is not None:
        x = x * weight
    return x.relu()


def opt_else(x, w=None):
    # Both arms of `if w is None: ... else: ...` trace ops.
    if w is None:
        w = torch.ones(x.shape[-1])
    else:
        w = w * 2
    return (x * w).tanh()


def ternary_mask(x, mask=None):
    # `mask if mask is not None else ones`: the mask multiplies either way.
    m = mask if mask is not None else x.new_ones(x.shape)
    return (x * m).sum(-1)


def zero_rows(x):
    # A mean over dim 0 guarded against an empty dim in Python.
    return x.sum(0) / max(x.shape[0], 1)


def grad_branch(x, w):
    # torch.is_grad_enabled() read in the body: the graph differs by grad mode.
    y = x @ w
    if torch.is_grad_enabled():
        y = y * 2
    return y.sigmoid()


def inplace_cast(x, dtype=None):
    # An in-place op on a clone, then an optional dtype change.
    y = x.clone()
    y.mul_(2)
    return y if dtype is None else y.to(dtype)


def dict_opt(d, key="a"):
    # A dict of tensors: one entry picked by a str, another added when present.
    out = d[key] * 2
    if "b" in d:
        out = out + d["b"]
    return out.exp()


def pair_swap(pair, flip=False):
    # A tuple of tensors unpacked, swapped by a flag.
    a, b = pair
    if flip:
        a, b = b, a
    return (a - b).abs()


def rolled(x, shift=1):
    # An int shift given to torch.roll.
    return torch.roll(x, shift, dims=-1).sin()


class StepNorm(torch.nn.Module):
    """A scale buffer; a step-count buffer bumped in place in training mode; a bool forward
    flag read through a method."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.full((8,), 0.5))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def _maybe_center(self, x, center):
        return x - x.mean(-1, keepdim=True) if center else x

    def forward(self, x, center: bool = False):
        if self.training:
            self.steps.add_(1)
        return self._maybe_center(x, center) * self.scale


def step_norm() -> torch.nn.Module:
    torch.manual_seed(0)
    return StepNorm().eval()


def dead_debug(x, debug=False):
    # A flag whose branch computes a value nothing uses: the graph drops it.
    if debug:
        _unused = x.sum()
    return x.cos()


def gated_opt(x, w=None, use_w=True):
    # An optional tensor read only when a flag also says so.
    if w is not None and use_w:
        x = x * w
    return x.sin()


_W = torch.full((8,), 0.25)


def global_default(x, w=None):
    # A None-default tensor replaced by a module global tensor of the same shape.
    w = w if w is not None else _W
    return (x * w).tanh()


def head_pair(xs):
    # Only the first two elements of a list are read, through a slice.
    a, b = xs[:2]
    return (a * b).relu()


def parity(x, n):
    # An int read only through its parity.
    if n % 2 == 0:
        return x.sin()
    return x.cos()


def thresh_relu(x, thresh=0.7):
    # A float read only in a comparison.
    if thresh > 0.5:
        x = x.relu()
    return x * 3


ACTS = {"relu": torch.relu, "rect": torch.relu, "tanh": torch.tanh}


def act_table(x, name="relu"):
    # A str picking a function from a dict; two names map to one function.
    return ACTS[name](x) + 1


def flag_mul(x, flag=True):
    # A bool used as a number.
    return x * flag + 1


def loc_flag(x, flag=False):
    # A flag read only through locals(): its name is never loaded.
    cfg = locals()
    return x.sin() if cfg["flag"] else x.cos()


def zip_two(x, ys):
    # A list read through zip with range(2): elements past the second are never read.
    for y, _ in zip(ys, range(2), strict=False):
        x = x + y
    return x.relu()


def const_twice(x, alpha=1.0):
    # A float beside a literal constant of the graph.
    return (x * alpha + 2.0).sin()


def roll_plus(x, shift=2):
    # An int roll shift beside a literal int of the graph.
    return torch.roll(x, shift, -1) + 1


def lin(x, w):
    # A plain product.
    return (x @ w).relu()


def mode_noop(x, mode="b"):
    # Two sides of a str test whose ops differ only by a multiply by 1.0.
    if mode == "a":
        return x.relu()
    return x.relu() * 1.0


def mode_noop_line(x, mode="b"):
    # The same, both sides on one line.
    return x.relu() if mode == "a" else x.relu() * 1.0


def flag_noop(x, flag=True):
    # A bool whose side adds 0.0.
    y = x.cos()
    if flag:
        y = y + 0.0
    return y


def loop_opt(x, p=None, k=1):
    # An optional tensor multiplied in k times (k=0: never read into an op).
    if p is not None:
        for _ in range(k):
            x = x * p
    return x.sin()


def nested_opt(x, p=None):
    # An optional tensor read only when x is wider than 8.
    if p is not None:
        if x.shape[-1] > 8:
            x = x * p
    return x.sin()


def opt_mult(x, p=None):
    # An optional multiplier: a tensor, a float, or None.
    if p is not None:
        x = x * p
    return x.sin()


def min_int(x, t=1.0):
    # min of a float and the int 1: the int when t > 1, the float else.
    return (x + min(t, 1)).cos()


def early_opt(x, p=None):
    # An early return on a size before the optional tensor is read.
    if x.shape[0] == 1:
        return x.sin()
    if p is not None:
        x = x * p
    return x.cos()


def _times(x, p):
    return x * p if p is not None else x


def helper_opt(x, p=None):
    # An optional tensor read in a helper.
    return _times(x, p).sin()


def eq_int_mode(x, mode=2.0):
    # A number compared with an int literal (2.0 == 2), then used as a multiplier.
    if mode == 2:
        y = x.relu()
    else:
        y = x.tanh()
    return y * mode


def truthy_flag(x, flag=1):
    # An int read for its truth, then added.
    if flag:
        y = x.relu()
    else:
        y = x.tanh()
    return y + flag


def lower_mode(x, how="L2"):
    # A str lowered before it is compared.
    how_l = how.lower()
    if how_l == "l2":
        return x / x.norm(dim=-1, keepdim=True)
    return x / x.abs().amax(-1, keepdim=True)


def meta_opt(x, p=None):
    # An optional tensor read only for its metadata through methods (no op takes it).
    k = 1
    if p is not None:
        k = p.ndimension()
    scale = 2.0 if p is None or p.is_floating_point() else 3.0
    return x * k * scale


def max_zero(x, t=0.5):
    # max of a float and the int 0: the int when t < 0, the float else.
    return (x + max(t, 0)).cos()


def swap_mode(x, how="max"):
    # A str parameter rebound before the comparison that picks the ops.
    how = "l2" if how == "max" else "max"
    if how == "l2":
        return x / x.norm(dim=-1, keepdim=True)
    return x / x.abs().amax(-1, keepdim=True)


def gate_ops(x, flag=True):
    # A bool whose taken side adds a relu.
    y = x.cos()
    if flag:
        y = y.relu()
    return y


def size_ret_opt(x, w=None):
    # The rebound x is dropped by a return on a size when x has one row.
    if w is not None:
        x = x * w
    if x.shape[0] == 1:
        return torch.zeros(3)
    return x.sin()
