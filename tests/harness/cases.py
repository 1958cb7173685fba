"""The tests' corpus: every case the session's real cache is built from.

``real_cache`` (tests/conftest.py) compiles every case of :data:`CASES`, in this
order, with ``demo.build_cache`` (``--corpus tests.harness.cases``); the oracle
(``tests.harness.oracle``) calls them again, by name, in fresh processes. The
demo's eight cases (``demo.cases``) are among them as they are (the same
functions and calls, imported): seven of the first nine cases, and
``calls_helper``. The cases after the first nine are the oracle suite's
(tests/torch/test_oracle_suite.py): branches on products, list and keyword-only
arguments, float arguments, duck sizing off, forced equalities, a timestep three
ways; the last block (``tests.harness.cases_args``) is Python arguments the code reads.

Shape descriptions follow ``demo.cases``; for the cases added here they follow
the function's signature, one element per parameter in order (positional, then
keyword-only): a list of ints is a tensor, an int an int, and for a list
parameter (``xs``) a list of tensor shapes (``[[3, 4], [5, 4]]`` ->
``xs = [randn(3, 4), randn(5, 4)]``). ``_signature_inputs`` turns keyword-only
parameters into kwargs.

The case type and the calls (:class:`Case`, :func:`compile_case`,
:func:`run_call`, :func:`default_make_inputs`) are ``demo.cases``'s, imported
here so a test imports every case from one place. This module imports torch; no
``from __future__ import annotations`` (see ``demo.cases``).
"""

import inspect
import math
import warnings
from collections.abc import Callable
from typing import Any

warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")

import torch  # noqa: E402

from demo import cases as _demo  # noqa: E402
from demo.cases import (  # noqa: E402
    Case,
    Shapes,
    automatic_dynamic,
    branch_on_size,
    calls_helper,
    compile_case,
    default_make_inputs,
    int_arg,
    mark_dynamic_range,
    run_call,
    same_graph_two_regions,
    seeded_tensor,
    train_inputs,
    train_mlp,
    view_divisible,
)

__all__ = [
    "CASES",
    "Case",
    "automatic_dynamic",
    "branch_on_size",
    "calls_helper",
    "compile_case",
    "default_make_inputs",
    "int_arg",
    "mark_dynamic_range",
    "run_call",
    "same_graph_two_regions",
    "train_mlp",
    "view_divisible",
]

# --------------------------------------------------------------------------- #
# Two of the first cases that the demo does not show.
# --------------------------------------------------------------------------- #


def broadcast_shared(x, bias):
    # bias broadcasts against x's last dim; duck sizing gives both the same symbol.
    return torch.tanh(x + bias)


def size_one_specialization(x):
    # dynamic=True, but a size-1 dim is specialized (0/1 specialization).
    return x.mean(0) + x.amax(0)


_FIRST_CASES = [
    _demo.CASES["branch_on_size"],
    _demo.CASES["same_graph_two_regions"],
    _demo.CASES["view_divisible"],
    _demo.CASES["train_mlp"],
    _demo.CASES["int_arg"],
    Case(
        "broadcast_shared",
        broadcast_shared,
        {"dynamic": True},
        [[[6, 5], [5]], [[9, 7], [7]]],
        doc="x + bias, bias shares x's last dim (duck sizing)",
    ),
    _demo.CASES["mark_dynamic_range"],
    _demo.CASES["automatic_dynamic"],
    Case(
        "size_one_specialization",
        size_one_specialization,
        {"dynamic": True},
        [[[5, 4]], [[1, 4]]],
        doc="a size-1 dim is specialized: separate graph",
    ),
]


# --------------------------------------------------------------------------- #
# The cases of the oracle suite (tests/torch/test_oracle_suite.py); shape
# descriptions by the function's signature (module docstring).
# --------------------------------------------------------------------------- #


def _is_shape(desc: Any) -> bool:
    return isinstance(desc, (list, tuple)) and all(
        isinstance(d, int) and not isinstance(d, bool) for d in desc
    )


def _signature_inputs(fn: Callable[..., Any]) -> Callable[[Shapes], tuple[tuple[Any, ...], dict[str, Any]]]:
    """``make_inputs`` for ``fn``: list parameters and keyword-only parameters too."""
    params = list(inspect.signature(fn).parameters.values())

    def make_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if len(shapes) != len(params):
            raise TypeError(f"{fn.__name__}: {len(params)} parameters, {len(shapes)} shapes")
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for i, (p, desc) in enumerate(zip(params, shapes, strict=True)):
            if isinstance(desc, bool):
                raise TypeError(f"{p.name}: bool is not a shape description")
            if isinstance(desc, (int, float)):
                value: Any = desc
            elif _is_shape(desc):
                value = seeded_tensor(list(desc), seed=i)
            elif isinstance(desc, (list, tuple)) and all(_is_shape(d) for d in desc):
                value = [seeded_tensor(list(d), seed=10 * i + j) for j, d in enumerate(desc)]
            else:
                raise TypeError(f"{p.name}: bad shape description {desc!r}")
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[p.name] = value
            else:
                args.append(value)
        return tuple(args), kwargs

    return make_inputs


def branch_on_product(x):
    # A guard on the product of two symbols: s0*s1 <= 64 or 64 < s0*s1, two graphs.
    if x.shape[0] * x.shape[1] > 64:
        return x.exp() - 1
    return x * 3 - 1


def reshape_rows_of_8(x):
    # reshape(-1, 8) of a 2-D input: (s0*s1) % 8 == 0.
    return x.reshape(-1, 8).amax(1)


def mod_three_regions(x):
    # Same graph on both sides of a modulo branch: one key, one entry per side.
    if x.shape[0] % 3 == 0:
        y = x.abs()
    else:
        y = x.abs()
    return y * 5


def cat_list(xs):
    # A list argument (sources L['xs'][0], L['xs'][1]); a relation between two
    # symbols (rows of xs[0] vs rows of xs[1]) on the same graph: one key, two entries.
    if xs[0].shape[0] >= xs[1].shape[0]:
        y = torch.cat(xs, 0)
    else:
        y = torch.cat(xs, 0)
    return y.relu() + 2


def kw_only_weight(x, *, w):
    # A keyword-only tensor argument; w broadcasts against x's last dim.
    return (x * w).sum(-1)


def int_branch(x, n):
    # An int argument (a SymInt with dynamic=True) decides the branch.
    if n > 4:
        return x * n
    return x - n


def two_tensors(a, b):
    # Independent sizes: a[3], b[5] get two symbols; a[4], b[4] are duck-sized
    # into one symbol, a different graph (key). Built duck first: the other order
    # would never recompile (a[4], b[4] passes the two-symbol entry's guards).
    return a.exp().sum() - b.cos().sum()


def broadcast_size_one(x, y):
    # y[n, 1] broadcasts along x's dim 1; the 1 is specialized.
    return x * y + y


def matmul_shared(x, w):
    # x[m, k] @ w[k, n]: the inner dim is one symbol (duck sizing).
    return (x @ w).tanh()


def _make_conv() -> torch.nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(2)
        return torch.nn.Conv1d(3, 2, 3)


# An nn.Module: its parameters have static sizes. (A plain global tensor used as
# the kernel would be a graph input with symbolic sizes of its own, sources
# G['...'].size()[i], that no parameter of the function names.)
CONV = _make_conv()


def conv1d_small(x):
    # Conv1d(3 -> 2, kernel 3): channels static, batch and length dynamic.
    return CONV(x).relu()


def _make_mlp2() -> torch.nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(1)
        return torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))


MLP2 = _make_mlp2()


def train_mlp_pairs(x, target):
    # Training step; the loss views the [B, 2] output as [-1, 4], which needs B even:
    # divisibility guards in the forward and in the backward graph. Inductor bounds
    # them differently: forward FX entry B <= 8193, backward and AOTAutograd B <= 4096.
    out = MLP2(x) - target
    return (out.reshape(-1, 4) ** 2).sum(1).mean()


def mark_dynamic_min(x):
    # dynamic=None; make_inputs marks dim 0 dynamic with only min=4, and dim 1.
    return x.sinh() + 3


def automatic_dynamic_cols(x):
    # dynamic=None, 2-D; only dim 1 changes between the build calls.
    return x.cos() * x.shape[1]


def unused_arg(x, unused):
    # `unused` is never read: Dynamo never wraps it, no symbol, no guard.
    return x.abs() + 2


def half_slice(x):
    # A slice bounded by a size expression: x[: s0 // 2].
    return x[: x.shape[0] // 2] * 4


def int_arg_auto(x, n):
    # dynamic=None: the first call specializes n (a constant in the graph, a key per
    # value), a second call with another n recompiles with n a SymInt (automatic dynamic).
    return x * n - 1


def _mark_dynamic_min_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    # Only a lower bound. torch 2.13 cannot take `mark_dynamic(x, 0, min=4)` as
    # written: dynamo builds ValueRanges(lower=4, upper=None) and fails with
    # "AssertionError: not simple sympy type <class 'NoneType'>" (builder.py,
    # _automatic_dynamic). Its own "no upper bound", int_oo, gives the guard
    # `4 <= L['t0']` alone (max=sys.maxsize would add `L['t0'] <= 9223372036854775807`).
    from torch.utils._sympy.numbers import int_oo

    args, kwargs = default_make_inputs(shapes)
    torch._dynamo.mark_dynamic(args[0], 0, min=4, max=int_oo)
    # Dim 1 marked too, with no range: marked dims are never duck-sized, so
    # x[6, 6] keeps two symbols (dynamic=True would give it one).
    torch._dynamo.mark_dynamic(args[0], 1)
    return args, kwargs


_MORE_CASES = [
    Case(
        "branch_on_product",
        branch_on_product,
        {"dynamic": True},
        [[[4, 5]], [[10, 9]]],
        doc="if x.shape[0] * x.shape[1] > 64: two graphs, both sides built",
    ),
    Case(
        "reshape_rows_of_8",
        reshape_rows_of_8,
        {"dynamic": True},
        [[[4, 6]], [[3, 16]]],
        doc="x.reshape(-1, 8) on a 2-D input: numel % 8 == 0 (and view guards; [3, 16] passes them)",
    ),
    Case(
        "mod_three_regions",
        mod_three_regions,
        {"dynamic": True},
        [[[6, 5]], [[7, 5]]],
        doc="if x.shape[0] % 3 == 0, same graph on both sides: one key, two entries",
    ),
    Case(
        "cat_list",
        cat_list,
        {"dynamic": True},
        [[[[5, 4], [3, 4]]], [[[2, 6], [7, 6]]]],
        make_inputs=_signature_inputs(cat_list),
        doc="torch.cat of a list argument; rows of xs[0] >= rows of xs[1] or not: one key, two entries",
    ),
    Case(
        "kw_only_weight",
        kw_only_weight,
        {"dynamic": True},
        [[[5, 6], [6]]],
        make_inputs=_signature_inputs(kw_only_weight),
        doc="keyword-only tensor argument (passed as kwarg)",
    ),
    Case(
        "int_branch",
        int_branch,
        {"dynamic": True},
        [[[6], 2], [[6], 9]],
        doc="if n > 4 on an int argument: two graphs",
    ),
    Case(
        "two_tensors",
        two_tensors,
        {"dynamic": True},
        [[[4], [4]], [[3], [5]]],
        doc="two independent 1-D tensors: different sizes (two symbols), equal sizes (duck: one)",
    ),
    Case(
        "broadcast_size_one",
        broadcast_size_one,
        {"dynamic": True},
        [[[5, 3], [5, 1]]],
        doc="x[n, m] * y[n, 1]: y's 1 is specialized, n shared",
    ),
    Case(
        "matmul_shared",
        matmul_shared,
        {"dynamic": True},
        [[[3, 5], [5, 2]]],
        doc="x @ w, the inner dim is one symbol",
    ),
    Case(
        "conv1d_small",
        conv1d_small,
        {"dynamic": True},
        [[[4, 3, 9]]],
        doc="nn.Conv1d(3, 2, 3): channels static; batch (inductor: <= 15) and length (>= 4) dynamic",
    ),
    Case(
        "train_mlp_pairs",
        train_mlp_pairs,
        {"dynamic": True},
        [[[6, 3], [6, 2]]],
        train=True,
        make_inputs=train_inputs,
        doc="2-layer MLP training step, loss reshapes [B, 2] to [-1, 4] (B even), backward",
    ),
    Case(
        "mark_dynamic_min",
        mark_dynamic_min,
        {"dynamic": None},
        [[[8, 3]]],
        make_inputs=_mark_dynamic_min_inputs,
        doc="mark_dynamic(x, 0, min=4) with no max, mark_dynamic(x, 1)",
    ),
    Case(
        "automatic_dynamic_cols",
        automatic_dynamic_cols,
        {"dynamic": None},
        [[[4, 6]], [[4, 9]]],
        doc="dynamic=None, 2-D: static first compile, then dim 1 (only) dynamic",
    ),
    Case(
        "unused_arg",
        unused_arg,
        {"dynamic": True},
        [[[5, 3], [7]]],
        doc="a parameter the function never reads",
    ),
    _demo.CASES["calls_helper"],
    Case(
        "half_slice",
        half_slice,
        {"dynamic": True},
        [[[8, 3]], [[9, 3]]],
        doc="x[: x.shape[0] // 2]: s0 // 2 != 1 ([9, 3] passes the [8, 3] entry's guards)",
    ),
    Case(
        "int_arg_auto",
        int_arg_auto,
        {"dynamic": None},
        [[[5], 2], [[5], 3]],
        doc="dynamic=None, an int argument: n=2 specialized (static key), then n a SymInt",
    ),
]



# --------------------------------------------------------------------------- #
# Python float arguments and duck sizing switched off (tests/torch/test_oracle_suite.py).
# --------------------------------------------------------------------------- #


def scale_by(x, scale):
    # A float argument: dynamic=True tensorifies it (an f64[] graph input,
    # ___as_tensor(L['scale'])), so every value takes one key.
    return x * scale + 1


def scale_auto(x, scale):
    # dynamic=None: a fresh process's first call specializes the float into the
    # graph (a key per value); a later call with another value tensorifies it.
    return x.cos() * scale


def duck_off_pair(a, b):
    # Compiled with torch.fx.experimental._config.use_duck_shape = False: equal
    # sizes keep two symbols (with duck sizing a[4], b[4] would share one).
    return a.tanh().sum() + b.sinh().sum()


_FLOAT_AND_DUCK_CASES = [
    Case(
        "scale_by",
        scale_by,
        {"dynamic": True},
        [[[4, 3], 2.5]],
        doc="a float argument under dynamic=True: tensorified",
    ),
    Case(
        "scale_auto",
        scale_auto,
        {"dynamic": None},
        [[[4, 3], 2.5], [[4, 3], 3.0]],
        doc="a float under dynamic=None: specialized on the first call, tensorified after a change",
    ),
    Case(
        "duck_off_pair",
        duck_off_pair,
        {"dynamic": True},
        [[[4], [4]]],
        fx_config={"use_duck_shape": False},
        doc="use_duck_shape=False: a[4], b[4] get two symbols",
    ),
    Case(
        "duck_on_pair",
        duck_off_pair,
        {"dynamic": True},
        [[[4], [4]]],
        doc="the same function with duck sizing on (torch's default): a[4], b[4] share one symbol",
    ),
]



# Forced equalities: dims the graph makes equal share one symbol whatever duck sizing
# says (the ShapeEnv replaces one symbol by the other, and the graph keeps one input).
def matmul_duck_off(x, w):
    # x[m, k] @ w[k, n] with duck sizing off: k is one symbol because matmul forces it.
    return (x @ w).sigmoid()


def cat_cols_duck_off(x, y):
    # torch.cat along dim 1 forces the rows equal; the columns stay two symbols. (A
    # pointwise op after the cat would be moved before it, losing the graph's stack
    # traces, and with them the function's name in the cache.)
    return torch.cat([x, y], 1).sum(1)


def _make_head() -> torch.nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(3)
        return torch.nn.Linear(5, 3)


HEAD = _make_head()


def xent_marked(x, target):
    # Cross-entropy: the batch of the logits and of the labels must be equal.
    return torch.nn.functional.cross_entropy(HEAD(x), target)


def _xent_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    # The batch marked dynamic on both inputs, within [2, 15] (the build's run), or
    # [2, 64] for a larger batch (a later run that marks a wider range: the entry
    # compiled for [2, 15] fails its guard); the labels are int64 class indices.
    (x_shape, t_shape) = shapes
    x = seeded_tensor(x_shape, seed=0)
    g = torch.Generator().manual_seed(1)
    target = torch.randint(0, 3, tuple(t_shape), generator=g)
    hi = 15 if x_shape[0] <= 15 else 64
    torch._dynamo.mark_dynamic(x, 0, min=2, max=hi)
    torch._dynamo.mark_dynamic(target, 0, min=2, max=hi)
    return (x, target), {}


_FORCED_EQUALITY_CASES = [
    Case(
        "matmul_duck_off",
        matmul_duck_off,
        {"dynamic": True},
        [[[4, 6], [6, 3]]],
        fx_config={"use_duck_shape": False},
        doc="x @ w with duck sizing off: the inner dim is one symbol, forced by matmul",
    ),
    Case(
        "cat_cols_duck_off",
        cat_cols_duck_off,
        {"dynamic": True},
        [[[4, 3], [4, 2]]],
        fx_config={"use_duck_shape": False},
        doc="cat along dim 1 with duck sizing off: the rows are one symbol, forced by cat",
    ),
    Case(
        "xent_marked",
        xent_marked,
        {"dynamic": None},
        [[[4, 5], [4]]],
        make_inputs=_xent_inputs,
        doc="cross-entropy, batch marked on logits and labels (2..15): one symbol, forced by the loss",
    ),
]



# --------------------------------------------------------------------------- #
# A timestep three ways: a Python int, a Python float, a 0-d tensor
# (tests/torch/test_oracle_suite.py). Dynamo wraps each its own way
# (VariableBuilder, torch/_dynamo/variables/builder.py): an int is a constant (the
# first call under dynamic=None) or a SymInt, a float a constant or a tensorified
# 0-d float64 input, a 0-d tensor a tensor input; each another graph. (An int baked
# into a graph against a float or a 0-d tensor: int_arg_auto above.)
# --------------------------------------------------------------------------- #


def _sinusoidal(timesteps: torch.Tensor, dim: int) -> torch.Tensor:
    # diffusers' get_timestep_embedding, cut down: sin and cos of t * frequencies.
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    emb = timesteps[:, None].float() * freqs[None, :]
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)


class TinyUNet(torch.nn.Module):
    """A UNet's time embedding (diffusers' ``UNet2DConditionModel.get_time_embed`` and
    ``time_proj``): a timestep given as a Python number goes through
    ``torch.tensor([timestep])``. With the timestep a SymInt (dynamic=True) that is
    ``torch._refs.tensor`` in Dynamo's graph, which the AOTAutograd cache refuses
    (``BypassAOTAutogradCache: Unsupported call_function target``): the graph gets an
    FX key only."""

    def __init__(self) -> None:
        super().__init__()
        with torch.random.fork_rng():
            torch.manual_seed(3)
            self.proj = torch.nn.Linear(4, 4).requires_grad_(False)  # inference: one FX graph
        # inspect.signature(instance) (demo's make_inputs, the tests' --shapes names)
        # reads forward's parameters.
        self.__signature__ = inspect.signature(self.forward)

    def forward(self, sample, timestep):
        timesteps = timestep
        if not torch.is_tensor(timesteps):
            dtype = torch.float64 if isinstance(timestep, float) else torch.int64
            timesteps = torch.tensor([timesteps], dtype=dtype, device=sample.device)
        elif len(timesteps.shape) == 0:
            timesteps = timesteps[None].to(sample.device)
        timesteps = timesteps.expand(sample.shape[0])
        emb = self.proj(_sinusoidal(timesteps, 4))
        return sample + emb[:, :, None, None]


_TIMESTEP_CASES = [
    Case(
        "unet_timestep",
        TinyUNet(),
        {"dynamic": True},
        [[[2, 4, 3, 3], 10]],
        doc="a UNet's time embedding, timestep an int under dynamic=True: FX entries only",
    ),
]



# --------------------------------------------------------------------------- #
# Values computed from arguments, size-1 boundaries, marked ranges, and what other
# keys of a function show (tests/torch/test_shapes_oracle.py). Shape descriptions by
# the function's signature, but for the cases with a make_inputs of their own.
# --------------------------------------------------------------------------- #


def float_exprs(p, g, lr, scale, lim):
    # dynamic=None: the first call bakes each expression's value into the graph, not the
    # float's: alpha=-lr (-0.1 for lr=0.1), 1 / scale (0.25 for 4.0), max=2 * lim (1.0 for 0.5).
    y = p.add(g, alpha=-lr) * (1 / scale)
    return torch.clamp(y, max=2 * lim)


def _apply_scale(t, a):
    return t * a


def opaque_scale(x, scale):
    # scale reaches the graph through math.sqrt and a helper whose code line names `a`:
    # which value the key baked in is not readable (undecided whatever the value).
    return _apply_scale(x, math.sqrt(scale))


def slice_from_one(x):
    # x[1:] has x.size(0) - 1 rows; the broadcast against its max checks that against 1.
    # A call with 2 rows makes it 1: Dynamo solves s0 - 1 == 1 and specializes x.size(0).
    y = x[1:]
    return y * y.amax(0, keepdim=True)


def marked_range(x):
    # dynamic=None; make_inputs marks dim 0 with the range the call describes.
    return x.tanh() - 1


def _marked_range_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    # [shape, [min, max]] marks dim 0 in that range; [shape, []] marks it with none.
    shape, bounds = shapes
    x = seeded_tensor(shape, seed=0)
    if bounds:
        torch._dynamo.mark_dynamic(x, 0, min=bounds[0], max=bounds[1])
    else:
        torch._dynamo.mark_dynamic(x, 0)
    return (x,), {}


def masked_sum(x, mask=None):
    # An optional tensor the code reads whenever it is given: a key per kind of call.
    if mask is not None:
        x = x * mask
    return x.sum(-1)


def _masked_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    # [x] leaves mask out (None); [x, mask] gives it.
    args = tuple(seeded_tensor(list(d), seed=i) for i, d in enumerate(shapes))
    return args, {}


class TinyUNetAuto(TinyUNet):
    """:class:`TinyUNet` under dynamic=None: the first call bakes the int timestep in (an
    AOTAutograd key and its FX key), the call after a change makes it a SymInt, whose
    ``torch.tensor([timestep])`` bypasses the AOTAutograd cache: an FX key only. A forward
    of its own, so that its keys are a function of their own (``TinyUNetAuto.forward``)."""

    def forward(self, sample, timestep):
        return super().forward(sample, timestep)


_SHAPES_CASES = [
    Case("float_exprs", float_exprs, {"dynamic": None}, [[[4, 3], [4, 3], 0.1, 4.0, 0.5]],
         doc="three floats through expressions: alpha=-lr, 1 / scale, max=2 * lim"),
    Case("opaque_scale", opaque_scale, {"dynamic": None}, [[[4, 3], 4.0]],
         doc="a helper of math.sqrt(scale): the value baked in cannot be read"),
    Case("slice_from_one", slice_from_one, {"dynamic": True}, [[[10, 4]]],
         doc="x[1:] broadcast against its max: x.size(0) - 1 != 1"),
    Case("marked_range", marked_range, {"dynamic": None}, [[[8, 3], [2, 16]]],
         make_inputs=_marked_range_inputs, doc="mark_dynamic(x, 0, min=2, max=16)"),
    Case("automatic_dynamic_cols_true", automatic_dynamic_cols, {"dynamic": True}, [],
         doc="automatic_dynamic_cols's function under dynamic=True, never built: torch's answer only"),
    Case("masked_sum", masked_sum, {"dynamic": None}, [[[4, 3]], [[4, 3], [4, 3]]],
         make_inputs=_masked_inputs, doc="an optional mask, left out then given: a key each"),
    Case("unet_timestep_auto", TinyUNetAuto(), {"dynamic": None}, [[[2, 4, 3, 3], 10], [[2, 4, 3, 3], 20]],
         doc="a UNet's int timestep under dynamic=None: a static key, then an FX key only"),
]

# --------------------------------------------------------------------------- #
# Python arguments the code reads (bools, strings, None, a graph break's locals):
# their own block, tests/harness/cases_args.py (tests/torch/test_*arguments.py).
# --------------------------------------------------------------------------- #

from tests.harness.cases_args import ARGUMENT_CASES  # noqa: E402
from tests.harness.cases_bounds import BOUND_CASES  # noqa: E402
from tests.harness.cases_hooks import HOOK_CASES  # noqa: E402
from tests.harness.cases_slices import SLICE_CASES  # noqa: E402

CASES: dict[str, Case] = {
    c.name: c
    for c in (*_FIRST_CASES, *_MORE_CASES, *_FLOAT_AND_DUCK_CASES, *_FORCED_EQUALITY_CASES,
              *_TIMESTEP_CASES, *_SHAPES_CASES, *ARGUMENT_CASES, *SLICE_CASES, *BOUND_CASES,
              *HOOK_CASES)
}
