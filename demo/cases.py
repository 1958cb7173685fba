"""The workloads ``make demo`` compiles, and the :class:`Case` type they are written in.

Each :class:`Case` holds a *plain* (uncompiled) Python function, the keyword
arguments to ``torch.compile`` it is compiled with, a way to build inputs from a
JSON-able *shape description*, and the shape descriptions called when a cache is
built (``demo.build_cache``). :data:`CASES` are the demo's eight functions, each
showing one thing a newcomer meets in a real cache:

- ``branch_on_size``: a branch on a size, one graph per side (only one side built);
- ``same_graph_two_regions``: one graph, two entries for two shape regions (a hit
  in each, a miss between them);
- ``view_divisible``: a divisibility guard (``x.view(-1, 4)``);
- ``train_mlp``: a training step, ``loss.backward()`` (forward and backward graphs);
- ``int_arg``: an int argument that becomes a SymInt;
- ``mark_dynamic_range``: ``mark_dynamic`` with a range (range guards);
- ``automatic_dynamic``: ``dynamic=None``, a static first compile, then a recompile;
- ``calls_helper``: a graph break in a helper (the helper a frame of its own).

``demo.models`` adds a small ``transformers`` model. The tests' corpus
(``tests/harness/cases.py``) holds these cases too, and many more.

Shape description
-----------------
One call is described by a JSON list with one element per positional argument:

- a list of ints -> a float32 CPU tensor of that shape (``[4, 3]``),
- an int         -> that Python int (``2``).

``[[4, 3]]`` is "call f(x) with x of shape (4, 3)"; ``[[5], 2]`` is
"call f(x, 2) with x of shape (5,)". A case may post-process the inputs in its
own ``make_inputs`` (``mark_dynamic``, ``requires_grad``).

This module imports torch; it can be imported as ``demo.cases`` or loaded from
its file path (no relative imports, and no ``from __future__ import annotations``
so its dataclass works even when the loader does not register it in sys.modules).
"""

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

warnings.filterwarnings("ignore", message=".*Failed to initialize NumPy.*")

import torch  # noqa: E402

Shapes = list[Any]  # one JSON-able description per positional argument

__all__ = [
    "CASES",
    "Case",
    "compile_case",
    "default_make_inputs",
    "run_call",
    "seeded_tensor",
    "train_inputs",
]


def seeded_tensor(shape: list[int], *, seed: int = 0, requires_grad: bool = False) -> torch.Tensor:
    """A float32 CPU tensor of ``shape`` (``[]``: 0-d) drawn from ``seed``."""
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(tuple(shape), generator=g, dtype=torch.float32)  # () is a 0-d tensor
    if requires_grad:
        t.requires_grad_(True)
    return t


def default_make_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Build ``(args, kwargs)`` from a shape description (see module doc)."""
    args: list[Any] = []
    for i, desc in enumerate(shapes):
        if isinstance(desc, bool):
            raise TypeError(f"argument {i}: bool is not a shape description")
        if isinstance(desc, (int, float)):
            args.append(desc)
        elif isinstance(desc, (list, tuple)) and all(
            isinstance(d, int) and not isinstance(d, bool) for d in desc
        ):
            args.append(seeded_tensor(list(desc), seed=i))
        else:
            raise TypeError(f"argument {i}: bad shape description {desc!r}")
    return tuple(args), {}


@dataclass(frozen=True)
class Case:
    """One workload: what is compiled, how, and the calls that build it.

    Attributes:
        name: the case's name (``--cases``, the build summary's key).
        fn: the plain function or module given to ``torch.compile``.
        compile_kwargs: ``torch.compile``'s keyword arguments (``{"dynamic": True}``).
        build_calls: one shape description per call made while building.
        train: call ``loss.backward()`` after each call (the call returns the loss).
        make_inputs: shape description -> ``(args, kwargs)``.
        doc: one line on what the case shows.
        fx_config: ``torch.fx.experimental._config`` values in force while the case is
            called (traced).
    """

    name: str
    fn: Callable[..., Any]
    compile_kwargs: dict[str, Any]
    build_calls: list[Shapes]
    train: bool = False
    make_inputs: Callable[[Shapes], tuple[tuple[Any, ...], dict[str, Any]]] = field(
        default=default_make_inputs
    )
    doc: str = ""
    fx_config: dict[str, Any] = field(default_factory=dict)


def compile_case(case: Case) -> Callable[..., Any]:
    """``torch.compile(case.fn, **case.compile_kwargs)`` (inductor backend)."""
    return torch.compile(case.fn, **case.compile_kwargs)


def run_call(
    case: Case,
    compiled: Callable[..., Any],
    shapes: Shapes,
    on_phase: Callable[[str], None] | None = None,
) -> Any:
    """Call ``compiled`` once on inputs built from ``shapes``; backward if training.

    ``on_phase("forward")`` / ``on_phase("backward")`` is called before each part.
    """
    args, kwargs = case.make_inputs(shapes)
    if on_phase is not None:
        on_phase("forward")
    import torch.fx.experimental._config as fx_config

    with fx_config.patch(**case.fx_config):
        out = compiled(*args, **kwargs)
    if case.train:
        loss = out if out.dim() == 0 else out.sum()
        if on_phase is not None:
            on_phase("backward")
        loss.backward()
    return out


# --------------------------------------------------------------------------- #
# The functions. Keep them tiny: every distinct graph costs a compile (~1-3 s).
# --------------------------------------------------------------------------- #


def branch_on_size(x):
    # Dynamo evaluates the condition on the symbolic size: guard s0 <= 8 or 8 < s0,
    # and each side traces a different graph (different fxgraph key).
    if x.shape[0] > 8:
        return torch.relu(x) * 2
    return torch.sigmoid(x) + 1


def same_graph_two_regions(x):
    # All bodies trace the SAME graph; only the size guard differs. Building with a
    # small and a large size leaves one fxgraph key (and one aotautograd key) with
    # two entries that differ only in guards_expr; the middle region 8 <= s0 < 16
    # is deliberately not built (same key, every entry a guard miss).
    if x.shape[0] >= 16:
        y = x * 2
    elif x.shape[0] >= 8:
        y = x * 2
    else:
        y = x * 2
    return y + 1


def view_divisible(x):
    # view(-1, 4) on a 1-D dynamic tensor: guard Eq(Mod(s0, 4), 0).
    return x.view(-1, 4).sum(1) * 2


def _make_mlp() -> torch.nn.Module:
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))


MLP = _make_mlp()


def train_mlp(x, target):
    # Forward + loss; the caller runs loss.backward() (Case.train), so the
    # aotautograd entry has a forward and a backward fxgraph. Avoid a batch of 4:
    # duck sizing would give x.size(0) the symbol of x.size(1) == 4 (specialized
    # by the Linear), making the first compile static.
    return torch.nn.functional.mse_loss(MLP(x), target)


def int_arg(x, n):
    # With dynamic=True the int becomes a SymInt graph input (a hint of its own).
    return x * n + 1


def mark_dynamic_range(x):
    # Compiled with dynamic=None; make_inputs marks dim 0 dynamic in [2, 64].
    return x.cos() + 1


def automatic_dynamic(x):
    # dynamic=None: first call static, second recompiles with dim 0 dynamic.
    return x.sin() * 3


def _helper_tail(t):
    # A graph break here makes this helper a frame of its own, traced separately:
    # its graph's sources are L['t'], not the caller's L['x'].
    torch._dynamo.graph_break()
    return t.sin() + t.shape[0]


def calls_helper(x):
    # (x * 2 + 1 alone would be the very graph of same_graph_two_regions: one FX key.)
    y = x * 0.5 - 1
    return _helper_tail(y)


def train_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``make_inputs`` of a training step ``f(x, target)``: two tensors, no grad on x."""
    (x_shape, t_shape) = shapes
    # The parameters of the model require grad; x carries no grad (a data batch).
    return (seeded_tensor(x_shape, seed=0), seeded_tensor(t_shape, seed=1)), {}


def _mark_dynamic_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kwargs = default_make_inputs(shapes)
    torch._dynamo.mark_dynamic(args[0], 0, min=2, max=64)
    return args, kwargs


_CASE_LIST = [
    Case(
        "branch_on_size",
        branch_on_size,
        {"dynamic": True},
        [[[4, 3]], [[6, 3]]],
        doc="if x.shape[0] > 8 branch; only the small side (s0 <= 8) is built",
    ),
    Case(
        "same_graph_two_regions",
        same_graph_two_regions,
        {"dynamic": True},
        [[[4, 3]], [[32, 3]]],
        doc="identical bodies behind size guards: one key, two entries (s0<8, s0>=16)",
    ),
    Case(
        "view_divisible",
        view_divisible,
        {"dynamic": True},
        [[[8]], [[20]]],
        doc="x.view(-1, 4) needs numel % 4 == 0",
    ),
    Case(
        "train_mlp",
        train_mlp,
        {"dynamic": True},
        [[[3, 4], [3, 1]], [[5, 4], [5, 1]]],
        train=True,
        make_inputs=train_inputs,
        doc="nn.Sequential MLP + mse_loss, loss.backward()",
    ),
    Case(
        "int_arg",
        int_arg,
        {"dynamic": True},
        [[[5], 2], [[5], 3]],
        doc="int argument becomes a SymInt",
    ),
    Case(
        "mark_dynamic_range",
        mark_dynamic_range,
        {"dynamic": None},
        [[[8, 3]], [[16, 3]]],
        make_inputs=_mark_dynamic_inputs,
        doc="mark_dynamic(x, 0, min=2, max=64): range guards",
    ),
    Case(
        "automatic_dynamic",
        automatic_dynamic,
        {"dynamic": None},
        [[[4, 3]], [[6, 3]], [[10, 3]]],
        doc="dynamic=None: static first compile, then automatic dynamic",
    ),
    Case(
        "calls_helper",
        calls_helper,
        {"dynamic": True},
        [[[6, 3]]],
        doc="a graph break in a helper: the helper is traced as its own frame (L['t'])",
    ),
]

CASES: dict[str, Case] = {c.name: c for c in _CASE_LIST}
