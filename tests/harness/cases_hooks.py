"""The corpus's block of modules with a forward pre-hook (tests/torch/test_scalar_arguments.py).

``torch.compile(module)`` runs each forward (pre-)hook as a Dynamo frame of its own around
``forward``; a hook's test of the call is that frame's guard, in no key where the hook made
no graph on the build's side (fxcache_core/lookup/module_hooks.py). ``hooked_eps``
(:class:`HookedEps`): a float forward only adds and a pre-hook tests (``eps < 0``);
``hooked_size`` (:class:`HookedSize`): a size only a pre-hook tests (``x.shape[0] > 5``).
Both hooks are registered here, in the file of the modules' ``forward``, where fxcache reads
the registrations: a file of their own, as every module whose ``forward`` is in a file that
registers a hook has no decided verdict. A call is described as
``tests.harness.cases_args``'s are. This module imports torch; no
``from __future__ import annotations`` (see ``demo.cases``).
"""

import torch

from demo.cases import Case
from tests.harness.cases_args import keyword_inputs


class HookedEps(torch.nn.Module):
    """Only arithmetic of eps in forward; a forward pre-hook tests it in Python."""

    def forward(self, x, eps=0.5):
        y = x.sin()
        return y * eps + 1


def _flip_negative(mod, args, kwargs):
    # A forward pre-hook: a negative eps flips x first (its own compiled frame under
    # torch.compile(module); no ops, so no graph, on the side a positive eps takes).
    if kwargs.get("eps", 0.5) < 0:
        return (-args[0],), kwargs
    return None


HOOKED_EPS = HookedEps()
HOOKED_EPS.register_forward_pre_hook(_flip_negative, with_kwargs=True)


class HookedSize(torch.nn.Module):
    """forward ignores x's size; a forward pre-hook tests x.shape[0] in Python."""

    def forward(self, x):
        return x.sin() + 1


def _flip_tall(mod, args):
    # A forward pre-hook: more than 5 rows flips x first (no graph on the side the build took).
    if args[0].shape[0] > 5:
        return (-args[0],)
    return None


HOOKED_SIZE = HookedSize()
HOOKED_SIZE.register_forward_pre_hook(_flip_tall)


HOOK_CASES = [
    Case(
        "hooked_eps",
        HOOKED_EPS,
        {"dynamic": True},
        [[[4, 8], {"eps": 0.5}]],
        make_inputs=keyword_inputs,
        doc="y * eps + 1 in a module's forward, eps tested in a forward pre-hook (dynamic=True)",
    ),
    Case(
        "hooked_size",
        HOOKED_SIZE,
        {"dynamic": True},
        [[[4, 8]]],
        make_inputs=keyword_inputs,
        doc="x.sin() + 1 in a module's forward, x.shape[0] tested in a forward pre-hook (dynamic=True)",
    ),
]
