"""Functions of the evaluation families in :mod:`tests.harness.evaluation.families_r14h`: a
weight given as an ``nn.Parameter`` or as a plain tensor, and flags whose skipped body other
code may make up (or cannot)."""

from __future__ import annotations


def param_mm(x, w):
    # A weight given as an argument: an nn.Parameter (a static input of the graph) or a plain tensor.
    return x @ w


def flag_loop(x, a=False):
    # The relu a's body makes, a loop makes when a is False: one graph either way.
    k = 1
    if a:
        x = x.relu()
        k = 0
    for _ in range(k):
        x = x.relu()
    return x.sin()


def _act(y, b):
    return y.relu() if b else y


def flag_helper(x, a=False, b=False):
    # A helper that makes the relu a's body makes, when b is True.
    y = x.sin()
    if a:
        y = y.relu()
    return _act(y, b)


def two_flags_apart(x, a=False, b=False):
    # Two ifs whose bodies trace different ops: nothing else makes a's relu.
    y = x.sin()
    if a:
        y = y.relu()
    if b:
        y = y.cos()
    return y
