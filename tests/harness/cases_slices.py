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
unread, so a call that torch answers with another graph must stay undecided. A call is
described as ``tests.harness.cases_args``'s are (``[[4, 8], {"depth": 3}]``). This module
imports torch; no ``from __future__ import annotations`` (see ``demo.cases``).
"""

import torch

from demo.cases import Case
from tests.harness.cases_args import keyword_inputs


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

SLICE_CASES = [
    Case("layer_stack", STACK, {"dynamic": None}, [[[4, 8]], [[4, 8], {"depth": 3}]], make_inputs=keyword_inputs,
         doc="a ModuleList of three Linear sliced by an int, built with depth 2 and 3 (dynamic=None)"),
    Case("gapped_stack", GAPPED, {"dynamic": None}, [[[4, 8]], [[4, 8], {"depth": 3}]], make_inputs=keyword_inputs,
         doc="the same with a ReLU between the Linear layers: its count is not read"),
]
