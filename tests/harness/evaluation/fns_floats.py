"""Functions of the float-input families (:mod:`tests.harness.evaluation.families_floats`):
a float Dynamo takes as a graph input, read in ways its guards, not the cache, decide."""

import math

import torch


def _gate(x, eps):
    # The test sits in a helper: the compiled function only passes eps on.
    if eps > 0:
        return x + eps
    return x - 1


def helper_gate(x, eps=1e-5):
    return _gate(x, eps) * 2


def int_scale(x, eps=0.25):
    # int() of the float: Python decides the factor.
    return x * int(eps * 10)


def sqrt_scale(x, eps=0.25):
    # A float through math.sqrt.
    return x * math.sqrt(eps)


def while_steps(x, eps=1.0):
    # A float bounding a while loop: each pass adds one op.
    n = 0.0
    while n < eps:
        x = x + 1
        n += 0.5
    return x


class Shift(torch.nn.Module):
    """A submodule that adds its float argument."""

    def forward(self, x, eps):
        return x * 2 + eps


_SHIFT = Shift()


def sub_shift(x, eps=1e-5):
    # A float passed to a submodule, which only adds it.
    return _SHIFT(x, eps) - 1


def plain_shift(x, eps=1e-5):
    # A float only added: every value takes the one graph.
    return x * 3 + eps


def sign_shift(x, eps=1e-5):
    # A float tested in Python, then added.
    if eps > 0:
        x = x + eps
    else:
        x = x - 1
    return x * 3
