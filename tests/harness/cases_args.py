"""The corpus's block of Python arguments the code reads: bools, strings, None, a graph
break's locals (tests/torch/test_arguments.py and the other test_*arguments.py).

Dynamo specializes on each value such an argument has when the code reads it (a bool
the code branches on, a string it compares, None for an optional tensor): the graph,
and the key, are those of that value, and the cache keeps the graph, not the value.
``fxcache match`` accounts for every parameter the compiled function reads before it
decides (fxcache_core/lookup/accounting.py); these cases are built so that torch's
answers show each kind of evidence (:func:`flags`: the side of an ``if`` a key's graph
went through, or a sibling key's graph shows it makes ops; None for an annotated tensor
parameter), and where none exists (:func:`clip_default`, built with its default only)
the verdict must stay undecided; :func:`window_mean` has ints, a tuple and a bool whose
values its graph's constants show (fxcache_core/lookup/int_exprs.py), and one key whose
constants do not; :func:`sum_dim` an int Dynamo specialized under ``dynamic=True``;
:func:`regroup` an int SymInt whose guards show the checks the trace made on it (``groups != 1``,
the dim dividing), :func:`unflat_heads` one whose divisibility sits inside an ``or``, :func:`neg_tail` one whose
``k != 1`` torch keeps the key for (a new entry), where ``groups != 1`` is another key; ``mode_net`` (:class:`ModeNet`) a module compiled whole whose ``training``
flag its layers read, a state of the module the cache does not record: a call describes it as
``self.training`` in its trailing dict (:func:`mode_inputs` sets the module's mode);
:func:`decay_step` a float folded beside an int automatic dynamic made symbolic
(fxcache_core/lookup/sym_floats.py), and :func:`decay_neg` one whose nodes fxcache does not
read; :func:`cat_rows` keys that record no function; :func:`star_sum` a
``*args`` tuple whose length the keys' inputs show (:func:`star_pair`: not past the last index read);
:func:`split_sum` a split into pieces of a SymInt size, every piece read (:func:`split_two`: two read); :func:`regroup_baked` an int in the size lists of
view and repeat (fxcache_core/lookup/int_sizes.py); :func:`spread_ops` ints, a bool and a None
that ops keep as the code gives them (fxcache_core/lookup/int_ops.py), :func:`dim_sized` an int
that also sizes a tensor, undecided; :func:`gated` a graph break before which
the int is never read (fxcache_core/lookup/after_break.py), :func:`gated_early` one where
it is; :func:`cast_to` a ``torch.dtype`` passed to ``.to()`` (its default, and the tensor's
own dtype: no op), and :func:`cast_through` one reached through an expression, which must
stay undecided; :func:`scale_default` a float automatic dynamic tensorified, left at its
default; :func:`kw_tensor` a tensor through a ``**kw`` dict not named ``kwargs``; :func:`grad_mix` a training graph (a weight that requires grad, grad enabled), whose
entry records its backward and which input required grad, and which a call under
``torch.no_grad()`` or with the weight not requiring grad does not look up, nor one under
``torch.inference_mode()`` (which turns grad off), while autocast or the default dtype, which
the cache does not record, leave it undecided; :func:`ramp` an int
whose guards relate it to a size (a slice's end) and keep it from 0 and 1 (it sizes
``torch.arange``), failures of which torch traces again (fxcache_core/lookup/retrace.py,
fxcache_core/lookup/boundaries.py); :func:`size_gate` a branch on a size, built on one side;
:func:`shift_kw` a keyword-only int baked into an arithmetic op, :func:`sized_kw` one that
is a size too (undecided); ``attr_net`` (:class:`AttrNet`) a module's float and int
attributes and a global read off its graph's constants, and a str and a float through
``math.sqrt`` that are not (:func:`attr_inputs` sets them: ``"self.scale": 3.0``,
``"G['GAIN']": 3.0`` in the trailing dict); :func:`cfg_clamp` a dict of Python values read
item by item and clamp's optional float bounds, :func:`attr_cfg` a frozen dataclass's fields
read by attribute (:func:`config_inputs` gathers ``"cfg['n']": 4`` or ``"cfg.n": 4`` of the
trailing dict into the dict or the dataclass). Few graphs: each
costs the session a compile.

A call is described as the other cases' are, one element per positional parameter,
plus, last, a dict of keyword arguments (``[[8, 16], {"clip": True, "scale": [16]}]``: Python
values, ``{"tuple": [1, 0]}`` for a tuple, ``{"dtype": "float16"}`` for ``torch.float16``, and a
list of ints for a tensor of that shape; ``"@static": [0]`` marks those dims of the first
tensor static, ``torch._dynamo.mark_static``; ``"torch.is_grad_enabled()": False`` sets the
grad mode of the call's process, and ``"torch.is_inference_mode_enabled()": True``,
``"torch.is_autocast_enabled()": True`` (CPU, bfloat16) and ``"torch.get_default_dtype()":
{"dtype": "float64"}`` set that state once the inputs are made, queries only: a build makes
every case in one process, with grad enabled):
:func:`keyword_inputs` makes the call, ``tests.helpers.match_args_for`` the ``--inputs``
items. This module imports torch; no ``from __future__ import annotations`` (see
``demo.cases``).
"""

import dataclasses
import math
from typing import Any

import torch

from demo.cases import Case, Shapes, seeded_tensor

GRAD_MODE = "torch.is_grad_enabled()"
"""The key of a call's trailing dict that sets its grad mode (as ``fxcache match --inputs`` names it)."""


def keyword_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``make_inputs`` of the cases here: a tensor per shape, then a trailing dict's
    items as keyword arguments (bools, strings, None as given; a list of ints a tensor
    of that shape); a positional int is passed as it is."""
    *positional, last = shapes if shapes and isinstance(shapes[-1], dict) else (*shapes, {})
    last = dict(last)
    if GRAD_MODE in last:
        torch.set_grad_enabled(bool(last.pop(GRAD_MODE)))
    args = tuple(seeded_tensor(list(d), seed=i) if isinstance(d, list) else d for i, d in enumerate(positional))
    # "@transposed": [1]: that 2-d tensor transposed (its strides [1, rows]), as --shapes NAME=[r,c]:stride=[1,r]
    args = tuple(seeded_tensor(list(reversed(d)), seed=i).t() if i in last.get("@transposed", ()) else a
                 for i, (a, d) in enumerate(zip(args, positional, strict=True)))
    kwargs = {k: seeded_tensor(v, seed=9) if isinstance(v, list) else python_value(v) for k, v in dict(last).items()
              if not k.startswith("@") and k not in _STATE}
    for d in dict(last).get("@static", ()):
        torch._dynamo.mark_static(args[0], d)
    _set_state(last)
    return args, kwargs


_HELD: list[Any] = []
"""The contexts :func:`_set_state` entered, held for the rest of the process."""

_STATE = ("torch.is_inference_mode_enabled()", "torch.is_autocast_enabled()", "torch.get_default_dtype()")
"""The keys of a call's trailing dict that set global state (:func:`_set_state`), no argument."""


def _set_state(last: dict[str, Any]) -> None:
    """The global state a query's trailing dict gives, set for the rest of its process (a
    fresh process's one call), after its inputs are made (inference mode would make them
    inference tensors)."""
    if last.get("torch.is_inference_mode_enabled()"):
        mode = torch.inference_mode()
        mode.__enter__()  # left on: the process makes this one call
        _HELD.append(mode)  # its guard ends when the context is collected
    if "torch.is_autocast_enabled()" in last:
        torch.set_autocast_enabled("cpu", bool(last["torch.is_autocast_enabled()"]))
        torch.set_autocast_dtype("cpu", torch.bfloat16)
    if "torch.get_default_dtype()" in last:
        torch.set_default_dtype(python_value(last["torch.get_default_dtype()"]))


def python_value(v: Any) -> Any:
    """A keyword value of a call description as the call passes it: ``{"tuple": [1, 0]}``
    is the tuple ``(1, 0)`` (a call description is JSON, which has no tuples), ``{"dtype":
    "float16"}`` is ``torch.float16``."""
    if isinstance(v, dict) and set(v) == {"dtype"}:
        return getattr(torch, v["dtype"])
    return tuple(v["tuple"]) if isinstance(v, dict) and set(v) == {"tuple"} else v


def flags(x, clip: bool = False, act: str = "relu", scale: torch.Tensor | None = None):
    # A bool and a str the code branches on, and an optional tensor (annotated): built once
    # with clip=True, act='gelu' and once with the defaults, two keys whose graphs show which
    # side of each if they were traced through (the clamp, gelu's ops, relu's).
    y = x * 2
    if clip:
        y = y.clamp(0, 1)
    if act == "gelu":
        y = torch.nn.functional.gelu(y)
    else:
        y = torch.relu(y)
    if scale is not None:
        y = y * scale
    return y.sum(-1)


def clip_default(x, clip: bool = False):
    # A bool the code branches on, built with its default only: nothing in the cache says which way the
    # if went (its body made no op), so a verdict needs a run's trace.
    y = x * 3
    if clip:
        y = y.clamp(0, 1)
    return y


def step_loss(x):
    # A graph break with a tensor local: the resume frame's key takes `loss` (0-d), which
    # a user names with --inputs loss=[]; the first frame's key takes x only.
    loss = (x * 2).sum()
    torch._dynamo.graph_break()
    return loss * 3


def window_mean(x, n, dims=(0, 1), keepdim=False):
    # An int through a slice bound and a factor, a tuple and a bool of a reduction: each
    # a constant of the graph, where the printed graph keeps it (slice's end, mul's scalar,
    # mean's dim list and keepdim). Built with n=4 and n=16 on [4, 32] (dynamic=False: a
    # key per n): n=16 slices all of dim 1, which AOTAutograd leaves out of the graph, so
    # that key's n cannot be read back, and a call with n=16 must stay undecided.
    return x[:, : n * 2].mean(dim=dims, keepdim=keepdim) * (n + 1)


def sum_dim(x, dim=1, dims=(0,)):
    # An int and a tuple the reductions need concrete, under dynamic=True: Dynamo makes
    # them SymInts and then specializes them (the key's inputs are Sym(1) and Sym(0), its
    # guards dim == 1 and dims[0] == 0). Another value fails the guard, and the graph traced
    # again has it where this one has 1 (or 0). Built with the defaults, then with dim=0
    # (a second key, which a call leaving dim out must not be taken to hit).
    return x.sum(dim) * 2 + x.sum(dims).sum()


def regroup(x, groups):
    # An int through view and repeat (dynamic=True): a SymInt whose value 1 and whose
    # divisibility the trace checked.
    y = x.view(x.shape[0], groups, -1).mean(-1)
    return y.reshape(-1).repeat(groups) * 2


def unflat_heads(x, heads):
    # An int through unflatten (dynamic=True): the divisibility the trace checked sits
    # inside a disjunction, x.size(1) == heads or (x.size(1) % heads == 0 and ...).
    return x.unflatten(-1, (heads, -1)).sum(-1) * heads


def neg_tail(x, k):
    # An int through negative slice bounds (dynamic=True): the trace checks k != 1, yet
    # k=1 keeps the graph Dynamo records (a new entry of the key), unlike regroup's groups.
    return x[:, :-k].sum(1) + x[:, -k:].mean(1)


class ModeNet(torch.nn.Module):
    """Linear, BatchNorm1d and Dropout: its graph is another in training mode (its
    parameters need no grad, as a model's served for inference)."""

    def __init__(self) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            self.fc = torch.nn.Linear(16, 16)
        self.bn = torch.nn.BatchNorm1d(16)
        self.drop = torch.nn.Dropout(0.25)
        self.requires_grad_(False)  # an inference graph: AOTAutograd saves its entry at once

    def forward(self, x):
        return self.drop(self.bn(self.fc(x))).relu()


MODE_NET = ModeNet().eval()


class GradNet(torch.nn.Module):
    """A Linear whose parameters need grad, called without a backward: AOTAutograd
    compiles a training graph and saves its entry only once the backward compiles, so
    the forward's FX key stands alone and nothing in the cache names its inputs."""

    def __init__(self) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x).relu()


def mode_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """:func:`keyword_inputs`, after putting :data:`MODE_NET` in the mode the trailing
    dict's ``self.training`` says (eval when it says none)."""
    last = dict(shapes[-1]) if shapes and isinstance(shapes[-1], dict) else {}
    MODE_NET.train(bool(last.pop("self.training", False)))
    return keyword_inputs([*shapes[:-1], last] if last else [d for d in shapes if not isinstance(d, dict)])


def decay_step(x, lr=0.1, step=1):
    # A float folded beside an int: built with step=1, then step=2 in the same process,
    # where automatic dynamic traces step as a SymInt and lr stays a constant; Dynamo folds
    # -lr and traces the rest on SymNodes (truediv: "Sym(...)" = -0.1 / sub).
    bias = 1 - 0.9 ** step
    return x.add(x.sin(), alpha=-lr / bias)


def decay_neg(x, lr=0.1, step=1):
    # decay_step's value under a minus sign on the symbolic part (neg = -truediv): a node
    # form fxcache does not read, so a verdict that needs lr's value must stay undecided.
    return x.sin() * -(lr / (1 - 0.9 ** step))


def fill_where(x, fill=0.0, thresh=0, t=0.5):
    # Python scalars as a user passes them (dynamic=False): a float fill of torch.where (the
    # constant of the scalar_tensor aten wraps it in), an int threshold of a comparison
    # (gt.Scalar's), and a float divisor. An int given where a float was traced, or a float
    # where an int was, fails Dynamo's type guard.
    return torch.where(x > thresh, x, fill) / t


def list_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``make_inputs`` of :func:`cat_rows`: a list of tensor shapes (a list of tensors),
    then an int: ``[[[2, 4], [3, 4]], 0]``."""
    xs, dim = shapes
    return ([seeded_tensor(list(d), seed=i) for i, d in enumerate(xs)], dim), {}


def cat_rows(xs, dim=0):
    # A list joined along an int dim (dynamic=True): Inductor keeps no stack trace of these
    # ops, so no entry of its keys records the function; match --fn cat_rows judges the
    # keys that record none, and decides only what holds whichever function they are.
    return torch.cat(xs, dim=dim).relu()


def star_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``make_inputs`` of :func:`star_sum` and :func:`star_pair`: one list of tensor shapes,
    each a positional argument (``*xs``): ``[[[4, 4], [4, 4]]]``."""
    return tuple(seeded_tensor(list(d), seed=i) for i, d in enumerate(shapes[0])), {}


def star_sum(*xs):
    # *args of tensors (dynamic=None): the loop reads every element after the first, so
    # each is an input of the graph (fxcache_core/lookup/sequence_lengths.py). + 3: the
    # graph is no other case's.
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out.relu() + 3


def star_pair(*xs):
    # The same tuple read by index only: a third element changes nothing in the graph
    # (torch hits), which the cache alone does not show: a longer call is undecided.
    return (xs[0] * xs[1]).cos() + 5


def split_sum(x, n):
    # Pieces of n columns (dynamic=True), every one read by the loop: how many there are
    # is part of the graph (fxcache_core/lookup/split_counts.py). * 3: no other case's graph.
    parts = x.split(n, dim=1)
    return sum(p.sum(1) * (i + 3) for i, p in enumerate(parts))


def split_two(x, n):
    # The same split, two pieces read by index: another number of pieces may keep the graph.
    parts = x.split(n, dim=1)
    return parts[0].cos() + parts[1].sum(1, keepdim=True)


def cast_to(x, dtype=torch.float16):
    # A torch.dtype passed to .to() (dynamic=True): built with its default (the graph's
    # convert_element_type to float16) and with float32, x's own dtype (.to returns x: no op,
    # and the result is returned, so a convert would have stayed). + 7: the float32 graph is
    # then no other case's (an FX key two functions share records the first one's frame).
    return (x * 2).to(dtype) + 7


def cast_through(x, dtype=torch.float16):
    # A dtype reached through an expression: which one the key was traced with is not
    # read off its graph, and a verdict must stay undecided. (x * 3: cast_to's graph would
    # be one key for both functions.)
    return (x * 3).to(dtype if x.dim() == 2 else torch.float32) + 1


def _attend(y, flag=False, **rest):
    # The keyword's reader, one call below the compiled frame (as a transformers model's
    # layers read output_attentions): the compiled frame only passes **kwargs on.
    return y.tanh() if flag else y


def kw_built_with(x, **kwargs):
    # A flag that reaches the code through **kwargs only, built with flag=True: the cache
    # keeps the graph, not which keywords the call gave; Dynamo's guards in a run's trace
    # (len(L['kwargs']) == 1, L['kwargs']['flag'] == True) say.
    return _attend(x * 2, **kwargs).sum(-1)


def regroup_baked(x, groups):
    # An int through view and repeat under dynamic=False: the key's size lists hold it
    # ([4, 3, -1] and [3]), each an item the code writes as groups itself.
    y = x.view(x.shape[0], groups, -1).mean(-1)
    return y.reshape(-1).repeat(groups) * 2


def spread_ops(x, dim=None, keepdim=False, d=-1):
    # std's dim and keepdim and unsqueeze's dim, which their ops keep as the code gives them:
    # aten.var.correction(x, [1], correction = 1.0) and aten.unsqueeze.default(var, -1).
    return x.std(dim=dim, keepdim=keepdim).unsqueeze(d) + 1


def dim_sized(x, d):
    # d is unsqueeze's dim and, through d + 5, the size of torch.ones (aten.full's list, read
    # as the code has it); the float rule finds no float constant for it: undecided.
    return x.unsqueeze(d) * torch.ones(d + 5)


def gated(x, n):
    # A data-dependent if breaks the graph at line 3 of the body; n is read only after it,
    # so the first frame's key serves every n and the resume frame's key bakes n in.
    y = x.sin()
    if y.sum() > 0:
        y = y * n
    return y.cos() + n


def gated_early(x, n):
    # A break like gated's (another graph: one graph would be one key for both functions),
    # with n read before it where no op takes its value: the first frame read n, and what
    # its graph does with it, the cache does not show (undecided).
    m = n + 1
    y = x.cos()
    if y.sum() > 0:
        y = y * 2
    return y.sin() + m


def kw_built_without(x, **kwargs):
    # The same with another factor (a graph of its own: the same graph would be one key for
    # both functions), built with no keyword (the trace's guard: not L['kwargs']).
    return _attend(x * 3, **kwargs).sum(-1)


def kw_tensor(x, **kw):
    # A tensor through a **kw dict not named kwargs: the key's input is L['kw']['bias'].
    return (x * 2 + kw["bias"]).sum(-1)


def scale_default(x, *, scale=1.0):
    # A keyword-only float left at its default, then changed in the same process (dynamic=None):
    # the second call's key takes scale as a tensor (automatic dynamic tensorified it), which a
    # fresh process's first call never looks up: it specializes the float into the first key.
    return x.cos() * scale


def grad_mix(x, w):
    # A weight that requires grad, grad enabled (dynamic=True): AOTAutograd compiles a training
    # graph. Its key hashes the grad mode and each input's requires_grad; its entry records the
    # backward and which input required grad.
    return (x @ w).tanh() * 0.25


def ramp(x, n):
    # An int through a slice's end and torch.arange (dynamic=True): the key's guards relate n to
    # x.size(1) (the slice's end against the size it slices) and keep n from 0 and 1 (a size).
    return x[:, :n] + torch.arange(n, dtype=x.dtype)


def size_gate(x):
    # A branch on a size (dynamic=True), built on one side: the key's entry guards the bound
    # the branch checked, and a call on the other side traces the other side's ops.
    if x.shape[0] > 4:
        return x.sin() * 2
    return x.cos() * 2


def grad_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """:func:`keyword_inputs` of :func:`grad_mix`, with ``w`` requiring grad unless the
    trailing dict's ``w.requires_grad`` says False."""
    last = dict(shapes[-1]) if shapes and isinstance(shapes[-1], dict) else {}
    grad = bool(last.pop("w.requires_grad", True))
    args, kwargs = keyword_inputs([*shapes[:-1], last] if last else [d for d in shapes if not isinstance(d, dict)])
    args[1].requires_grad_(grad)
    return args, kwargs


def shift_kw(x, *, shift=0):
    # A keyword-only int that meets a tensor in arithmetic only: Dynamo bakes it into the
    # op as the float rule's floats are (aten.add.Tensor(mul, 0)). Built with its default.
    return x.cos() * 2 + shift


def sized_kw(x, *, n=2):
    # A keyword-only int that is an arithmetic scalar and also a size (arange's length),
    # which the graph's constants do not show: undecided. Built with its default.
    return x * n + torch.arange(n)


GAIN = 2.0
"""A module global :class:`AttrNet` reads in arithmetic (``G['GAIN']`` to Dynamo)."""


class AttrNet(torch.nn.Module):
    """A module whose forward reads a float and an int attribute and a float global in
    arithmetic (each a constant of its graph), a float through ``math.sqrt`` and a str
    it compares (neither readable off the graph)."""

    def __init__(self) -> None:
        super().__init__()
        self.scale, self.k, self.lim, self.act = 2.0, 3, 4.0, "tanh"

    def forward(self, x):
        y = x * self.scale + self.k
        y = y.relu() * GAIN
        y = y.clamp(max=math.sqrt(self.lim))
        return y.sigmoid() if self.act == "sigmoid" else y.tanh()


ATTR_NET = AttrNet()
_ATTR_DEFAULTS = {"scale": 2.0, "k": 3, "lim": 4.0, "act": "tanh"}


def attr_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """:func:`keyword_inputs`, after setting :data:`ATTR_NET`'s attributes and :data:`GAIN`
    as the trailing dict says (``"self.scale": 3.0``, ``"G['GAIN']": 3.0``), the rest at
    their defaults."""
    global GAIN
    last = dict(shapes[-1]) if shapes and isinstance(shapes[-1], dict) else {}
    for name, default in _ATTR_DEFAULTS.items():
        setattr(ATTR_NET, name, last.pop(f"self.{name}", default))
    GAIN = last.pop("G['GAIN']", 2.0)
    return keyword_inputs([*shapes[:-1], last] if last else [d for d in shapes if not isinstance(d, dict)])


@dataclasses.dataclass(frozen=True)
class AttrCfg:
    """The config :func:`attr_cfg` reads by attribute (a frozen dataclass: Dynamo guards its
    type and each attribute read, ``L['cfg'].n``)."""

    n: int = 4
    scale: float = 0.5


def cfg_clamp(x, cfg, lo=None, hi=1.0):
    # A dict of Python values read item by item (each item guarded under its own source,
    # L['cfg']['n'], an item never read not at all), then clamp's optional float bounds:
    # clamp_min(lo) then clamp_max(hi) in the graph, no op for a bound that is None.
    y = x[:, : cfg["n"]] * cfg["scale"]
    if cfg["act"] == "relu":
        y = y.relu()
    return torch.clamp(y, min=lo, max=hi)


def attr_cfg(x, cfg):
    # A dataclass's fields read by attribute: each a constant of the graph.
    return x[:, : cfg.n] * cfg.scale


def config_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """:func:`keyword_inputs`, with the trailing dict's items ``cfg['n']`` gathered into a dict
    and ``cfg.n`` into an :class:`AttrCfg`, each passed as the keyword ``cfg``."""
    last = dict(shapes[-1]) if shapes and isinstance(shapes[-1], dict) else {}
    items = {k[len("cfg['"):-2]: last.pop(k) for k in list(last) if k.startswith("cfg['")}
    fields = {k[len("cfg."):]: last.pop(k) for k in list(last) if k.startswith("cfg.")}
    args, kwargs = keyword_inputs([*(d for d in shapes if not isinstance(d, dict)), last])
    kwargs["cfg"] = AttrCfg(**fields) if fields else items
    return args, kwargs


ARGUMENT_CASES = [
    Case("flags", flags, {"dynamic": None}, [[[8, 16], {"clip": True, "act": "gelu"}], [[8, 16]]],
         make_inputs=keyword_inputs, doc="a bool, a str and an optional tensor, built two ways (dynamic=None)"),
    Case("clip_default", clip_default, {"dynamic": True}, [[[6, 5]]], make_inputs=keyword_inputs,
         doc="a bool the code branches on, built with its default only: undecided without a trace"),
    Case("step_loss", step_loss, {"dynamic": True}, [[[6, 5]]], make_inputs=keyword_inputs,
         doc="a graph break: the resume frame takes the local loss, a 0-d tensor"),
    Case("window_mean", window_mean, {"dynamic": False}, [[[4, 32], 4], [[4, 32], 16]], make_inputs=keyword_inputs,
         doc="an int through expressions, a tuple and a bool of a reduction: constants read off the graph"),
    Case("sum_dim", sum_dim, {"dynamic": True}, [[[4, 6]], [[4, 6], {"dim": 0}]], make_inputs=keyword_inputs,
         doc="an int and a tuple dim under dynamic=True: SymInts Dynamo specialized (Sym(1))"),
    Case("regroup", regroup, {"dynamic": True}, [[[4, 12], 3]], make_inputs=keyword_inputs,
         doc="an int SymInt through view (dynamic=True): guards groups != 1 and the dim dividing"),
    Case("unflat_heads", unflat_heads, {"dynamic": True}, [[[4, 8], 2]], make_inputs=keyword_inputs,
         doc="an int SymInt through unflatten (dynamic=True): the dim dividing inside an or"),
    Case("neg_tail", neg_tail, {"dynamic": True}, [[[4, 10], 3]], make_inputs=keyword_inputs,
         doc="an int SymInt through negative slice bounds (dynamic=True): a guard k != 1 that keeps the key"),
    Case("mode_net", MODE_NET, {"dynamic": None}, [[[8, 16]]], make_inputs=mode_inputs,
         doc="a module compiled whole in eval mode, whose layers read its training flag"),
    Case("decay_step", decay_step, {"dynamic": None}, [[[4, 3], {"step": 1}], [[4, 3], {"step": 2}]],
         make_inputs=keyword_inputs, doc="a float folded beside an int automatic dynamic made a SymInt"),
    Case("decay_neg", decay_neg, {"dynamic": None}, [[[4, 3], {"step": 1}], [[4, 3], {"step": 2}]],
         make_inputs=keyword_inputs, doc="the same under a minus of the symbolic part: undecided"),
    Case("fill_where", fill_where, {"dynamic": False}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="a float where fill, an int compared with and a float divisor, built with the defaults"),
    Case("cat_rows", cat_rows, {"dynamic": True}, [[[[2, 4], [3, 4]], 0]], make_inputs=list_inputs,
         doc="torch.cat of a list along an int dim: keys whose entries record no function"),
    Case("star_sum", star_sum, {"dynamic": None}, [[[[4, 4], [4, 4]]]], make_inputs=star_inputs,
         doc="*args of tensors a loop reads from the second on (dynamic=None): the tuple's length"),
    Case("star_pair", star_pair, {"dynamic": None}, [[[[4, 4], [4, 4]]]], make_inputs=star_inputs,
         doc="*args of tensors read by index only: a longer call stays undecided"),
    Case("split_sum", split_sum, {"dynamic": True}, [[[6, 12], 4]], make_inputs=keyword_inputs,
         doc="x.split(n, 1) with every piece read (dynamic=True): the number of pieces"),
    Case("split_two", split_two, {"dynamic": True}, [[[4, 12], 4]], make_inputs=keyword_inputs,
         doc="the same split, two pieces read by index: another number stays undecided"),
    Case("regroup_baked", regroup_baked, {"dynamic": False}, [[[4, 12], 3]], make_inputs=keyword_inputs,
         doc="an int through view and repeat (dynamic=False): the items of its size lists"),
    Case("spread_ops", spread_ops, {"dynamic": False}, [[[4, 6], {"dim": 1}]], make_inputs=keyword_inputs,
         doc="ints and a bool an op keeps as given (std's dim and keepdim, unsqueeze's dim; dynamic=False)"),
    Case("dim_sized", dim_sized, {"dynamic": False}, [[[4, 6], 1]], make_inputs=keyword_inputs,
         doc="an int that is unsqueeze's dim and sizes torch.ones too: undecided"),
    Case("gated", gated, {"dynamic": None}, [[[4, 8], 3]], make_inputs=keyword_inputs,
         doc="a data-dependent if breaks the graph; an int read only after it"),
    Case("gated_early", gated_early, {"dynamic": None}, [[[4, 8], 3]], make_inputs=keyword_inputs,
         doc="the same break, the int read before it too: undecided"),

    Case("cast_to", cast_to, {"dynamic": True}, [[[4, 8]], [[4, 8], {"dtype": {"dtype": "float32"}}]],
         make_inputs=keyword_inputs, doc="a torch.dtype passed to .to(), built with its default and with x's own"),
    Case("cast_through", cast_through, {"dynamic": True}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="a torch.dtype reached through an expression: undecided"),
    Case("kw_built_with", kw_built_with, {"dynamic": False}, [[[6, 5], {"flag": True}]], make_inputs=keyword_inputs,
         doc="a flag through **kwargs, built with flag=True: undecided without the build's trace"),
    Case("kw_built_without", kw_built_without, {"dynamic": False}, [[[6, 5]]], make_inputs=keyword_inputs,
         doc="the same, built with no keyword: undecided without the build's trace"),
    Case("kw_tensor", kw_tensor, {"dynamic": False}, [[[6, 5], {"bias": [5]}]], make_inputs=keyword_inputs,
         doc="a tensor through a **kw dict not named kwargs: the key's input L['kw']['bias']"),
    Case("grad_forward", GradNet(), {"dynamic": False}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="a module whose parameters need grad, no backward: an FX key alone, its inputs unnamed"),
    Case("scale_default", scale_default, {"dynamic": None}, [[[4, 4]], [[4, 4], {"scale": 2.0}]],
         make_inputs=keyword_inputs, doc="a float default, then another value: a key with the float tensorified"),
    Case("ramp", ramp, {"dynamic": True}, [[[4, 16], 8]], make_inputs=keyword_inputs,
         doc="an int through a slice's end and torch.arange (dynamic=True): a relation and a size boundary"),
    Case("size_gate", size_gate, {"dynamic": True}, [[[6, 8]]], make_inputs=keyword_inputs,
         doc="a branch on x.shape[0] > 4 built on one side (dynamic=True): the other side fails its bound"),
    Case("grad_mix", grad_mix, {"dynamic": True}, [[[4, 8], [8, 8]]], make_inputs=grad_inputs,
         doc="a weight that requires grad, grad enabled: a training graph (its entry records the backward)"),
    Case("shift_kw", shift_kw, {"dynamic": None}, [[[4, 4]]], make_inputs=keyword_inputs,
         doc="a keyword-only int in arithmetic with a tensor, built with its default"),
    Case("sized_kw", sized_kw, {"dynamic": None}, [[[4, 2]]], make_inputs=keyword_inputs,
         doc="a keyword-only int in arithmetic and as a size: undecided"),
    Case("attr_net", ATTR_NET, {"dynamic": None}, [[[4, 8]]], make_inputs=attr_inputs,
         doc="a module's float and int attributes and a global in arithmetic; a str and a float through a call"),
    Case("cfg_clamp", cfg_clamp, {"dynamic": None},
         [[[4, 8], {"cfg['n']": 4, "cfg['scale']": 0.5, "cfg['act']": "relu", "lo": -1.0}]],
         make_inputs=config_inputs, doc="a dict of Python values read item by item, and clamp's float bounds"),
    Case("attr_cfg", attr_cfg, {"dynamic": None}, [[[4, 8], {"cfg.n": 4, "cfg.scale": 0.5}]],
         make_inputs=config_inputs, doc="a frozen dataclass's fields read by attribute"),
]
