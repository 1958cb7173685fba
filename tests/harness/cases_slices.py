"""The corpus's block of modules whose forward runs a slice of its layers by an int
(tests/torch/test_layer_slices.py).

``for layer in self.layers[:depth]`` bakes ``depth`` in on a fresh process's first call
and applies that many layers: the key's inputs name each applied layer's parameters
(``L['self']._modules['layers']._modules['2']._parameters['weight']``), and fxcache reads
the count off them (fxcache_core/lookup/module_slices.py). :data:`STACK` has three
``Linear`` layers (their parameters need no grad, as a model's served for inference: a
training graph's AOTAutograd entry is saved with its backward only), built with ``depth``
2 (its default) and 3: the depth-2 key's count is
exact (the depth-3 key shows a third layer with parameters), the depth-3 key's is not
(nothing shows whether a fourth exists). :data:`GAPPED` puts a ``ReLU`` between two
``Linear`` layers, built with 2 and 3: a layer without parameters leaves the count
unread, so a call that torch answers with another graph must stay undecided.

The block's expressions of a baked scalar (tests/torch/test_py_exprs_oracle.py;
fxcache_core/lookup/py_exprs.py): :func:`head_cols` ``min()`` of an int and a static size
through a local, :func:`tail_wrap` a conditional expression of an int, :func:`floor_gain`
``max()`` of a float and a literal, :func:`eps_norm` a float compared in Python (``if eps >
0:``), :func:`log_gain` a float through ``math.log1p``, which fxcache does not compute;
under ``dynamic=True``, where a float is a graph input (a 0-d float64 tensor) and not a
constant, :func:`eps_sign` one the code tests in Python (Dynamo guards the test, the cache
does not keep that guard) and :func:`eps_shift` one it only adds (a module whose forward
hook tests such a float: tests/harness/cases_hooks.py); :func:`where_fill_dyn` and
:func:`clamp_low_dyn` floats that ``dynamic=True`` cannot keep inputs (torch.where's scalar,
clamp's bound), specialized into the key; :func:`strided_add` a stride automatic dynamic made a
symbol (``"@transposed": [1]``: the second tensor transposed, its strides ``[1, rows]``). The
block's arguments that an op's decomposition keeps (tests/torch/test_decomposed_args.py):
:func:`soft_cum` ``log_softmax``'s and ``cumsum``'s int dims (fxcache_core/lookup/int_ops.py),
:func:`norm_fill` ``layer_norm``'s float eps and ``masked_fill``'s float value, and
:func:`group_eps` ``group_norm``'s eps, whose group count no constant shows
(fxcache_core/lookup/float_exprs.py), :func:`norm_fill_dyn` the same eps under
``dynamic=True`` (specialized by a restart). The block's arguments a torch function's op keeps
(tests/torch/test_fn_op_args.py; fxcache_core/lookup/fn_op_args.py): :func:`attend_flags`
sdpa's ``is_causal`` and ``attn_mask``, :func:`attend_flags_dyn` its ``is_causal`` under
``dynamic=True``, :func:`drop_attend` its ``dropout_p`` and ``scale``, :func:`drop_attend_dyn`
its ``dropout_p`` under ``dynamic=True`` (specialized by a restart), and :func:`resize_mode`
``F.interpolate``'s ``mode`` and ``align_corners``, which no op keeps. An int that only says
how many last positions a slice keeps (tests/torch/test_kept_slices.py;
fxcache_core/lookup/kept_slices.py): :func:`keep_last` inline, :func:`keep_tail` through a
helper, as a causal LM's ``logits_to_keep``. An ``if p is not None:`` body the key's graph
has no op from (tests/torch/test_tensor_flow.py; fxcache_core/lookup/tensor_flow.py):
:func:`unsq_opt` one that makes an op whatever ``p`` is, :func:`float_opt` one that may make
none. The grad mode of an entry without a backward (tests/torch/test_state_arguments.py;
fxcache_core/lookup/grad_paths.py): :func:`grad_off_mlp` compiled under ``torch.no_grad()``
with a weight that requires grad, :func:`gate_mlp` with grad on and the output cut from the
weight. A keyword-only optional tensor (tests/torch/test_tensor_flow.py):
:func:`kw_bias`, built without it. A call is
described as ``tests.harness.cases_args``'s are (``[[4, 8], {"depth": 3}]``). This module
imports torch; no ``from __future__ import annotations`` (see ``demo.cases``).
"""

import functools
import math

import torch
import torch.nn.functional as F

from demo.cases import Case
from tests.harness.cases_args import GRAD_MODE, grad_inputs, keyword_inputs


class LayerStack(torch.nn.Module):
    """Three ``Linear`` layers (from a fixed seed) of which forward runs the first ``depth``."""

    def __init__(self) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))

    def forward(self, x, depth=2):
        for layer in self.layers[:depth]:
            x = layer(x) * 2
        return x


class GappedStack(torch.nn.Module):
    """``Linear``, ``ReLU``, ``Linear``: the second layer has no parameters."""

    def __init__(self) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(0)
            self.layers = torch.nn.ModuleList([torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8)])

    def forward(self, x, depth=2):
        for layer in self.layers[:depth]:
            x = layer(x)
        return x


STACK = LayerStack().eval().requires_grad_(False)
GAPPED = GappedStack().eval().requires_grad_(False)

def head_cols(x, n):
    # min() of an int and a static size, through a local: every n from the width up slices all
    # of dim 1, which AOTAutograd leaves out: the same graph.
    m = min(n, x.shape[1])
    return x[:, :m] + 1


def tail_wrap(x, n):
    # A conditional expression: a negative n counts from the end, so -3 and 5 end a slice of
    # 8 columns at the same place.
    k = n if n > 0 else x.shape[1] + n
    return x[:, :k] - 1


def floor_gain(x, s):
    # max() of a float and a literal: every s up to 0.25 gives the factor 0.25.
    return x * max(s, 0.25) + 1


def eps_norm(x, eps=1e-6):
    # A float compared in Python: eps > 0 adds a normalisation, eps <= 0 skips it.
    if eps > 0:
        x = x / (x.abs().sum(-1, keepdim=True) + eps)
    return x * 2


def log_gain(x, s):
    # math.log1p of a float: a value fxcache does not compute.
    return x * math.log1p(s) - 1


def eps_sign(x, eps=1e-5):
    # A float the key takes as an input (dynamic=True) that the code tests in Python: Dynamo
    # guards the test, and a value on the other side traces the else side.
    if eps > 0:
        x = x + eps
    else:
        x = x - 1
    return x * 2


def eps_shift(x, eps=1e-5):
    # The same input, only added: every value takes the one graph.
    return x * 2 + eps


def where_fill_dyn(x, s=0.5):
    # torch.where's scalar (dynamic=True): Dynamo makes s an input, cannot keep it one there
    # (TensorifyScalarRestartAnalysis) and traces again with s specialized, the key's constant.
    return torch.where(x > 0, x, s) * 2


def clamp_low_dyn(x, lo=0.0):
    # clamp's bound (dynamic=True): specialized by the same restart.
    return x.clamp(min=lo) + 1


def strided_add(x, y):
    # Built with y contiguous, then transposed: automatic dynamic makes y.stride(1) a symbol.
    return (x * 2 + y).relu()


def soft_cum(x, dim=-1, cdim=0):
    # log_softmax's dim (aten.amax's and aten.sum's list) and cumsum's (aten.cumsum's), as given.
    return x.log_softmax(dim).cumsum(cdim) + 1


def norm_fill(x, eps=1e-5, value=-1.0):
    # layer_norm's eps (aten.add.Tensor(var, eps) before rsqrt) and masked_fill's value
    # (aten.scalar_tensor(value)): each float one op's scalar in its decomposition.
    y = F.layer_norm(x, (x.shape[-1],), eps=eps)
    return y.masked_fill(y > 0, value) * 2


def group_eps(x, groups=2, eps=1e-5):
    # group_norm's eps (aten.add.Tensor(var, eps)); its group count is in a view's sizes only.
    return F.group_norm(x, groups, eps=eps) * 2


def norm_fill_dyn(x, eps=1e-5):
    # layer_norm's eps under dynamic=True: Dynamo makes eps an input, cannot keep it one in
    # layer_norm, and traces again with it specialized.
    return F.layer_norm(x, (x.shape[-1],), eps=eps) + 1


def attend_opt(q, k, v, mask=None):
    # An optional mask straight into scaled_dot_product_attention's attn_mask. The + 1 keeps
    # its graph apart from attend_flags' (one graph is one FX key, whose entries record the
    # function that wrote it first).
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask) + 1


def scores_mask(x, mask=None):
    # An optional additive mask, under `if mask is not None:`, into what softmax returns.
    s = torch.matmul(x, x.transpose(-2, -1))
    if mask is not None:
        s = s + mask
    return s.softmax(-1)


def _drop_mask(x, m):
    # A helper that never computes with its second argument.
    return x.relu()


def helper_mask(x, mask=None):
    # The mask goes to a helper: fxcache cannot see whether it reaches the graph.
    return _drop_mask(x, mask) * 2


def dead_mask(x, mask=None):
    # The mask is computed with, but its result is dropped: Dynamo's graph keeps no node of it.
    if mask is not None:
        y = x * mask  # noqa: F841
    return x.relu()


def unsq_opt(x, n=None):
    # An optional int under `if n is not None:`, whose body unsqueezes x whatever n is: a key
    # with no op from that line and one from the return was traced with n None.
    y = x * 2
    if n is not None:
        y = y.unsqueeze(0).expand(n, -1, -1)
    return y.cos()


def float_opt(x, flag=None):
    # The same shape of code, whose body makes no op for a float32 x (.float() is x itself):
    # built with flag=True, the key shows nothing of which way the test went.
    y = x * 3
    if flag is not None:
        y = y.float()
    return y.sin()


def grad_off_mlp(x, w):
    # A weight that requires grad, compiled under torch.no_grad(): the key's graph computes its
    # output from w by ops that carry grad, yet it has no backward. Built a second time with grad
    # enabled and w not requiring grad (another key), which sets grad back on for the cases after.
    return (x @ w).relu() * 3


def kw_bias(x, w, *, bias=None):
    # A keyword-only optional tensor, built without it: a call that gives it must be read as one
    # of the function's parameters (a tensor the key takes no input from), not as a closure's.
    y = x * w
    if bias is not None:
        y = y + bias
    return y.sigmoid()


def rebind_opt(x, w=None, n=2):
    # An optional weight folded into x itself (x rebound under the test), then a number: a
    # tensor given for w reaches the return whatever else the call gives.
    if w is not None:
        x = x * w
    return x.exp() * n


def swap_opt(x, w=None, alt=None):
    # The same fold, then another parameter's None test that may replace x: given alt, the
    # product is dead, Dynamo's graph keeps no node of it, and w is no input of the key.
    if w is not None:
        x = x * w
    if alt is not None:
        x = alt
    return x.exp()


def gate_mlp(x, w):
    # A weight that requires grad, grad enabled, but a comparison cuts the output from it: no
    # backward though grad was on.
    return (x @ w).gt(0).float() * 2


_TENSOR_FLOW_CASES = [
    Case("attend_opt", attend_opt, {"dynamic": None}, [[[1, 2, 6, 8], [1, 2, 6, 8], [1, 2, 6, 8]]],
         make_inputs=keyword_inputs, doc="scaled_dot_product_attention, built without its optional mask (dynamic=None)"),
    Case("scores_mask", scores_mask, {"dynamic": None}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="an optional additive mask under `if mask is not None:`, built without it (dynamic=None)"),
    Case("helper_mask", helper_mask, {"dynamic": None}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="an optional mask passed to a helper that drops it, built without it (dynamic=None)"),
    Case("dead_mask", dead_mask, {"dynamic": None}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="an optional mask computed with into a value that is dropped, built without it (dynamic=None)"),
    Case("unsq_opt", unsq_opt, {"dynamic": None}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="an optional int whose `if n is not None:` body makes an op whatever n is, built without it"),
    Case("float_opt", float_opt, {"dynamic": None}, [[[4, 8], {"flag": True}]], make_inputs=keyword_inputs,
         doc="an `if flag is not None:` body that makes no op for a float32 x, built with flag=True"),
    Case("grad_off_mlp", grad_off_mlp, {"dynamic": None},
         [[[4, 8], [8, 4], {GRAD_MODE: False}], [[4, 8], [8, 4], {GRAD_MODE: True, "w.requires_grad": False}]],
         make_inputs=grad_inputs, doc="a weight that requires grad under no_grad, then grad on and w without grad"),
    Case("kw_bias", kw_bias, {"dynamic": None}, [[[4, 8], [8]]], make_inputs=keyword_inputs,
         doc="a keyword-only optional tensor, built without it (dynamic=None)"),
    Case("rebind_opt", rebind_opt, {"dynamic": None}, [[[4, 8], {"n": 3}]], make_inputs=keyword_inputs,
         doc="an optional weight folded into the rebound x, built without it (dynamic=None)"),
    Case("swap_opt", swap_opt, {"dynamic": None}, [[[4, 8], {"w": [8], "alt": [2, 3]}]],
         make_inputs=keyword_inputs, doc="the fold made dead by a replacing alt, built with both given"),
    Case("gate_mlp", gate_mlp, {"dynamic": None}, [[[4, 8], [8, 4]]], make_inputs=grad_inputs,
         doc="a weight that requires grad, grad on, the output cut from it by a comparison: no backward"),
]


def attend_flags(q, k, v, is_causal=False, mask=None):
    # sdpa's is_causal and attn_mask, which its flash-attention op keeps (printed by place).
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal)


def attend_flags_dyn(q, k, v, is_causal=False):
    # The same under dynamic=True, built with is_causal=True: a bool is specialized all the same.
    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)


def drop_attend(q, k, v, dropout_p=0.0, scale=None):
    # sdpa's dropout_p and scale: the op's floats (a dropout above 0 traces the math path).
    # The * 2 keeps its graph apart from attend_flags' (one graph is one FX key, whose
    # entries record the function that wrote it first).
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, scale=scale) * 2


def drop_attend_dyn(q, k, v, dropout_p=0.0):
    # dropout_p under dynamic=True: an input at first, specialized by a restart (sdpa takes no tensor).
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p) * 2


def resize_mode(x, mode="bilinear", align_corners=False):
    # F.interpolate's mode and align_corners: decomposed into index arithmetic, no op keeps them.
    return F.interpolate(x, scale_factor=2.0, mode=mode, align_corners=align_corners)


def attend_again(q, k, v, causal=False, bias=None):
    # Given a bias, it calls itself with is_causal=True: its one sdpa op is the inner run's,
    # and the outer run's causal reaches no op at all.
    if bias is not None:
        return attend_again(q + bias, k, v, True)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal) * 3


def _force_causal(fn):
    @functools.wraps(fn)
    def forcing_causal(q, k, v, causal=False):
        return fn(q, k, v, True)

    return forcing_causal


@_force_causal
def attend_forced(q, k, v, causal=False):
    # A decorator calls it with is_causal=True whatever the call gives: its op holds True.
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal) - 1


def _drop_mask_arg(fn):
    @functools.wraps(fn)
    def dropping_mask(x, mask=None):
        return fn(x, None)

    return dropping_mask


@_drop_mask_arg
def masked_dropped(x, mask=None):
    # A decorator passes None for the mask whatever the call gives: the key takes no mask.
    y = x.softmax(-1)
    if mask is not None:
        y = y + mask
    return y * 3


def pad_act(x, pad=(1, 1), mode="constant", approximate="none"):
    # F.pad's pads and mode (one constant_pad_nd op) and gelu's approximate (erf or tanh).
    y = F.pad(x, pad, mode=mode)
    return F.gelu(y, approximate=approximate).softmax(-1)


def pad_act_mixed(x, pad=(1, 1), approximate="none"):
    # The same values where no op shows them alone: a second pad, a tanh beside the gelu.
    y = F.pad(F.pad(x, pad), (0, 1))
    return F.gelu(y, approximate=approximate) * y.tanh()


def keep_last(x, w, keep=0):
    # A causal LM's head: an int keeps the last `keep` positions (0: all of them).
    s = slice(-keep, None) if isinstance(keep, int) else keep
    return x[:, s, :] @ w


def _keep_positions(h, keep):
    # transformers' slice_logits_to_keep: a 2-d tensor picks positions, an int keeps the last ones.
    if isinstance(keep, torch.Tensor) and keep.ndim == 2:
        return h[keep]
    if isinstance(keep, int):
        keep = slice(-keep, None)
    return h[:, keep, :]


def keep_tail(x, w, keep=0):
    # relu: no value of keep traces keep_last's graph (an AOTAutograd key is the graph's, not the function's).
    return (_keep_positions(x, keep) @ w).relu()


_QKV = [[1, 2, 6, 8], [1, 2, 6, 8], [1, 2, 6, 8]]
_FN_ARG_CASES = [
    Case("attend_again", attend_again, {"dynamic": None}, [[*_QKV, {"bias": [6, 8]}]], make_inputs=keyword_inputs,
         doc="sdpa's is_causal set by the function's own second run (dynamic=None): the op is not the outer run's"),
    Case("attend_forced", attend_forced, {"dynamic": None}, [[*_QKV]], make_inputs=keyword_inputs,
         doc="sdpa's is_causal set by a decorator's wrapper whatever the call gives (dynamic=None)"),
    Case("masked_dropped", masked_dropped, {"dynamic": None}, [[[4, 8], {"mask": [4, 8]}]],
         make_inputs=keyword_inputs, doc="an optional mask a decorator's wrapper replaces by None (dynamic=None)"),
    Case("attend_flags", attend_flags, {"dynamic": None}, [[*_QKV]], make_inputs=keyword_inputs,
         doc="sdpa's is_causal and attn_mask left out (dynamic=None)"),
    Case("attend_flags_dyn", attend_flags_dyn, {"dynamic": True}, [[*_QKV, {"is_causal": True}]],
         make_inputs=keyword_inputs, doc="sdpa's is_causal, built with True (dynamic=True)"),
    Case("drop_attend", drop_attend, {"dynamic": None}, [[*_QKV]], make_inputs=keyword_inputs,
         doc="sdpa's dropout_p and scale left at their defaults (dynamic=None)"),
    Case("drop_attend_dyn", drop_attend_dyn, {"dynamic": True}, [[*_QKV]], make_inputs=keyword_inputs,
         doc="sdpa's dropout_p left at 0.0 (dynamic=True): specialized by a restart"),
    Case("pad_act", pad_act, {"dynamic": None}, [[[2, 3, 8]]], make_inputs=keyword_inputs,
         doc="F.pad's pads and mode and gelu's approximate at their defaults (dynamic=None)"),
    Case("pad_act_mixed", pad_act_mixed, {"dynamic": None}, [[[2, 3, 8]]], make_inputs=keyword_inputs,
         doc="the same values beside a second pad and a tanh, at their defaults (dynamic=None)"),
    Case("resize_mode", resize_mode, {"dynamic": None}, [[[1, 2, 4, 4]]], make_inputs=keyword_inputs,
         doc="F.interpolate's mode and align_corners at their defaults (dynamic=None): decomposed"),
    Case("keep_last", keep_last, {"dynamic": None}, [[[2, 8, 4], [4, 5]]], make_inputs=keyword_inputs,
         doc="x[:, slice(-keep, None), :] @ w, keep left at 0: the whole dim (dynamic=None)"),
    Case("keep_tail", keep_tail, {"dynamic": None}, [[[2, 8, 4], [4, 5], {"keep": 1}]], make_inputs=keyword_inputs,
         doc="the same through a helper like transformers' slice_logits_to_keep, built with keep=1 (dynamic=None)"),
]

_DECOMPOSED_CASES = [
    Case("soft_cum", soft_cum, {"dynamic": False}, [[[4, 6]]], make_inputs=keyword_inputs,
         doc="x.log_softmax(dim).cumsum(cdim), built with the defaults (dynamic=False)"),
    Case("norm_fill", norm_fill, {"dynamic": None}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="layer_norm's eps and masked_fill's value, built with the defaults (dynamic=None)"),
    Case("group_eps", group_eps, {"dynamic": None}, [[[2, 8, 4]]], make_inputs=keyword_inputs,
         doc="group_norm's group count and eps, built with the defaults (dynamic=None)"),
    Case("norm_fill_dyn", norm_fill_dyn, {"dynamic": True}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="layer_norm's eps, built with its default (dynamic=True): specialized by a restart"),
]

_EXPR_CASES = [
    Case("head_cols", head_cols, {"dynamic": None}, [[[4, 8], {"n": 100}]], make_inputs=keyword_inputs,
         doc="x[:, :min(n, x.shape[1])], built with n past the width (dynamic=None)"),
    Case("tail_wrap", tail_wrap, {"dynamic": None}, [[[4, 8], {"n": -3}]], make_inputs=keyword_inputs,
         doc="x[:, :k], k = n if n > 0 else x.shape[1] + n, built with n=-3 (dynamic=None)"),
    Case("floor_gain", floor_gain, {"dynamic": None}, [[[4, 8], {"s": 0.1}]], make_inputs=keyword_inputs,
         doc="x * max(s, 0.25), built with s=0.1 (dynamic=None)"),
    Case("eps_norm", eps_norm, {"dynamic": None}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="if eps > 0: a normalisation, built with its default eps (dynamic=None)"),
    Case("log_gain", log_gain, {"dynamic": None}, [[[4, 8], {"s": 0.5}]], make_inputs=keyword_inputs,
         doc="x * math.log1p(s), built with s=0.5 (dynamic=None)"),
    Case("eps_sign", eps_sign, {"dynamic": True}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="if eps > 0 on a float the key takes as an input, built with its default (dynamic=True)"),
    Case("eps_shift", eps_shift, {"dynamic": True}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="x * 2 + eps, a float the key takes as an input, built with its default (dynamic=True)"),
    Case("where_fill_dyn", where_fill_dyn, {"dynamic": True}, [[[4, 8]]], make_inputs=keyword_inputs,
         doc="torch.where(x > 0, x, s), built with its default s (dynamic=True): s specialized by a restart"),
    Case("clamp_low_dyn", clamp_low_dyn, {"dynamic": True}, [[[4, 8], {"lo": 0.25}]], make_inputs=keyword_inputs,
         doc="x.clamp(min=lo), built with lo=0.25 (dynamic=True): lo specialized by a restart"),
    Case("strided_add", strided_add, {"dynamic": None}, [[[6, 4], [6, 4]], [[6, 4], [6, 4], {"@transposed": [1]}]],
         make_inputs=keyword_inputs, doc="y contiguous, then transposed in one process (dynamic=None): a stride symbol"),
]

SLICE_CASES = [
    *_EXPR_CASES,
    *_DECOMPOSED_CASES,
    *_TENSOR_FLOW_CASES,
    *_FN_ARG_CASES,
    Case("layer_stack", STACK, {"dynamic": None}, [[[4, 8]], [[4, 8], {"depth": 3}]], make_inputs=keyword_inputs,
         doc="a ModuleList of three Linear sliced by an int, built with depth 2 and 3 (dynamic=None)"),
    Case("gapped_stack", GAPPED, {"dynamic": None}, [[[4, 8]], [[4, 8], {"depth": 3}]], make_inputs=keyword_inputs,
         doc="the same with a ReLU between the Linear layers: its count is not read"),
]
