"""The corpus's block of Python arguments the code reads: bools, strings, None, a graph
break's locals (tests/torch/test_arguments.py).

Dynamo specializes on each value such an argument has when the code reads it (a bool
the code branches on, a string it compares, None for an optional tensor): the graph,
and the key, are those of that value, and the cache keeps the graph, not the value.
``fxcache match`` accounts for every parameter the compiled function reads before it
decides (fxcache_core/lookup/accounting.py); these cases are built so that torch's
answers show each kind of evidence, and where none exists (:func:`clip_default`,
built with its default only) the verdict must stay undecided.

A call is described as the other cases' are, one element per positional parameter,
plus, last, a dict of keyword arguments with Python values (``[[8, 16], {"clip": True}]``):
:func:`keyword_inputs` makes the call, ``tests.helpers.match_args_for`` the ``--inputs``
items. This module imports torch; no ``from __future__ import annotations`` (see
``demo.cases``).
"""

from typing import Any

import torch

from demo.cases import Case, Shapes, seeded_tensor


def keyword_inputs(shapes: Shapes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``make_inputs`` of the cases here: a tensor per shape, then a trailing dict's
    items as keyword arguments (bools, strings, None as given)."""
    *positional, last = shapes if shapes and isinstance(shapes[-1], dict) else (*shapes, {})
    args = tuple(seeded_tensor(list(d), seed=i) for i, d in enumerate(positional))
    return args, dict(last)


def clip_flag(x, clip: bool = False):
    # A bool the code branches on: built with clip=True only, so the key's graph has
    # the clamp (line of the if's body) and a call that leaves clip out traces another.
    y = x * 2
    if clip:
        y = y.clamp(0, 1)
    return y


def clip_default(x, clip: bool = False):
    # The same, built with the default only: nothing in the cache says which way the
    # if went (its body made no op), so a verdict needs a run's trace.
    y = x * 3
    if clip:
        y = y.clamp(0, 1)
    return y


def act_choice(x, act: str = "relu"):
    # A str the code compares: built with act='gelu' and with the default, two keys whose
    # graphs show each side of the if (gelu's ops, relu's).
    if act == "gelu":
        y = torch.nn.functional.gelu(x)
    else:
        y = torch.relu(x)
    return y - 1


def optional_scale(x, scale: torch.Tensor | None = None):
    # A None-default optional tensor, built without it: the key takes no input from it.
    y = x.cos()
    if scale is not None:
        y = y * scale
    return y.sum(-1)


def step_loss(x):
    # A graph break with a tensor local: the resume frame's key takes `loss` (0-d), which
    # a user names with --inputs loss=[]; the first frame's key takes x only.
    loss = (x * 2).sum()
    torch._dynamo.graph_break()
    return loss * 3


ARGUMENT_CASES = [
    Case("clip_flag", clip_flag, {"dynamic": None}, [[[8, 16], {"clip": True}]], make_inputs=keyword_inputs,
         doc="a bool the code branches on, built True only (dynamic=None)"),
    Case("clip_default", clip_default, {"dynamic": True}, [[[6, 5]]], make_inputs=keyword_inputs,
         doc="a bool the code branches on, built with its default only: undecided without a trace"),
    Case("act_choice", act_choice, {"dynamic": True}, [[[6, 5], {"act": "gelu"}], [[6, 5]]],
         make_inputs=keyword_inputs, doc="a str the code compares, built 'gelu' and the default"),
    Case("optional_scale", optional_scale, {"dynamic": True}, [[[6, 5]]], make_inputs=keyword_inputs,
         doc="an optional tensor (annotated) left out when built"),
    Case("step_loss", step_loss, {"dynamic": True}, [[[6, 5]]], make_inputs=keyword_inputs,
         doc="a graph break: the resume frame takes the local loss, a 0-d tensor"),
]
