"""The plain torch functions of the round aimed at the ordering branch rule (imports torch).

Each orders one parameter against a number in an ``if`` (``if t > 0.5:``), which
``fxcache match`` reads as a branch test: a float or an int only so compared, one also
used elsewhere, a literal on the left, an elif chain of orderings, sides that differ only
in a constant, a body that makes no op. :mod:`tests.harness.evaluation.families_r14d`
says how each is compiled and called.
"""

import torch  # noqa: F401 - imported as every fns module is (the harness loads it with torch)


def gate_above(x, t=0.7):
    # A float read only in an ordering; the body adds a relu.
    if t > 0.5:
        x = x.relu()
    return x * 3


def count_at_least(x, n=3):
    # An int read only in an ordering, with an else side.
    if n >= 2:
        y = x.sin()
    else:
        y = x.cos()
    return y + 1


def left_literal(x, p=0.1):
    # The literal on the left: 0 < p.
    if 0 < p:
        x = x.exp()
    return x.sum(-1)


def band(x, t=0.5):
    # An elif chain of orderings.
    if t < 0:
        y = x.neg()
    elif t < 1:
        y = x.sin()
    else:
        y = x.cos()
    return y * 2


def scale_side(x, s=2.0):
    # Sides that differ only in a constant.
    if s > 1.0:
        y = x * 2.0
    else:
        y = x * 3.0
    return y.tanh()


def used_too(x, n=3):
    # An int ordered and also multiplied in: the ordering alone does not account for it.
    if n > 2:
        x = x.sin()
    return x * n


def no_op_side(x, t=1.0):
    # A body that makes no op: which way the trace went, no graph shows.
    y = x
    if t > 0.5:
        y = y
    return y.cos()


def drop_rate(x, p=0.0):
    # A dropout-style guard: `if p > 0.0:` scales, else passes x through.
    if p > 0.0:
        x = x * (1.0 / (1.0 - 0.5))
    return x.relu()



def early_same(x, t=1.0):
    # An early return whose ops are those the code after the if makes too.
    if t > 0.5:
        return x.sin()
    return x.sin()


def early_flag_same(x, flag=True):
    # The same with a bool.
    if flag:
        return x.sin()
    return x.sin()


def half_even(x, n=4):
    # Arithmetic of an int tested: floor division, then parity.
    if n // 2 % 2 == 0:
        y = x.sin()
    else:
        y = x.cos()
    return y + 1


def parity_ret(x, n=2):
    # Parity tested, an early return on one side.
    if n % 2 == 0:
        return x.sin()
    return x.cos()
