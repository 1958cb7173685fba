"""Reviewer: module-level shadowing of builtins and math."""
import math as _m
import types

import torch  # noqa: F401

min = max  # noqa: A001
math = types.SimpleNamespace(floor=_m.ceil, sqrt=_m.sqrt, pi=3.0)


def shadow_min(x, n):
    return x * min(n, 4)


def shadow_floor(x, s):
    return x * math.floor(s)
