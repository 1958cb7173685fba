"""The corpus's block of size checks the cache does not show the kind of
(tests/torch/test_bound_failed.py; fxcache_core/lookup/retrace.py).

Each is built once under ``dynamic=True`` and its entry guards a bound on a size: a call
that fails it makes torch trace again, and what that trace gives depends on whose check
the bound was. :func:`helper_gate` branches on the size in a helper (``if too_long(x):``)
that puts no op in the graph, :func:`in_pair` tests ``x.shape[0] in (2, 3)`` (its guard is
``not (x.size(0) == 2 or x.size(0) == 3)``): the other side is another graph.
:func:`checked_rows` asserts the size with ``torch._check``, :func:`pad_reflect` pads by
reflection, which needs the pad below the size: a call that fails either raises. None of
them is a new entry of the key, which is why ``fxcache match`` leaves each undecided
(``bound-failed``) rather than a MISS. A call is described as
``tests.harness.cases_args``'s are (``[[4, 32]]``). This module imports torch; no
``from __future__ import annotations`` (see ``demo.cases``).
"""

import torch
import torch.nn.functional as F

from demo.cases import Case
from tests.harness.cases_args import keyword_inputs


def too_long(x):
    return x.shape[1] > 16


def helper_gate(x):
    # The size check is in a helper; the built side (8 columns) makes no op of it.
    if too_long(x):
        return x[:, :16] * 2
    return x + 1


def in_pair(x):
    # Built with 8 rows: the guard keeps x.size(0) out of (2, 3). Its ops are its own (a graph
    # another case compiled too would share that case's key and entry).
    if x.shape[0] in (2, 3):
        return x * 3
    return x - 1


def checked_rows(x):
    # Built with 6 rows: the guard x.size(0) >= 4 is torch._check's; fewer rows raise.
    torch._check(x.shape[0] >= 4)
    return x * 2


def pad_reflect(x):
    # Built with 8 columns: reflection needs the pad (3) below the size, 4 <= x.size(1).
    return F.pad(x, (3, 3), mode="reflect") * 2


BOUND_CASES = [
    Case(
        "helper_gate",
        helper_gate,
        {"dynamic": True},
        [[[4, 8]]],
        make_inputs=keyword_inputs,
        doc="if too_long(x), a helper's size check, built on the short side (dynamic=True)",
    ),
    Case(
        "in_pair",
        in_pair,
        {"dynamic": True},
        [[[8, 4]]],
        make_inputs=keyword_inputs,
        doc="if x.shape[0] in (2, 3), built with 8 rows (dynamic=True)",
    ),
    Case(
        "checked_rows",
        checked_rows,
        {"dynamic": True},
        [[[6, 4]]],
        make_inputs=keyword_inputs,
        doc="torch._check(x.shape[0] >= 4), built with 6 rows (dynamic=True)",
    ),
    Case(
        "pad_reflect",
        pad_reflect,
        {"dynamic": True},
        [[[4, 8]]],
        make_inputs=keyword_inputs,
        doc="F.pad(x, (3, 3), mode='reflect'), built with 8 columns (dynamic=True)",
    ),
]
