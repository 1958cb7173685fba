"""Torch's names in the user's terms: a Dynamo source as the user writes it.

Dynamo names what a guard or a graph input reads by its source
(torch/_dynamo/source.py: ``LocalSource`` -> ``L['x']``, ``NNModuleSource`` ->
``._modules['lin']``, ``TensorPropertySource`` -> ``.size()[0]``). The user wrote
``x``, ``self.lin.weight``, ``x.size(0)``. Nothing here imports torch.
"""

from __future__ import annotations

import re

_ITEM_RE = re.compile(r"\._(?:modules|parameters|buffers)\['([A-Za-z_]\w*)'\]")
_INDEX_RE = re.compile(r"\._modules\['(\d+)'\]")


def user_source(source: str) -> str:
    """A Dynamo source as the user writes it: ``L['x']`` -> ``x``,
    ``L['self']._modules['lin']._parameters['weight']`` -> ``self.lin.weight``,
    ``L['x'].size()[0]`` -> ``x.size(0)``,
    ``L['m']._modules['0']._parameters['weight']`` -> ``m[0].weight``; other forms are kept as they are."""
    s = re.sub(r"\b[LG]\['([A-Za-z_]\w*)'\]", r"\1", source)
    s = _ITEM_RE.sub(r".\1", s)
    s = _INDEX_RE.sub(r"[\1]", s)  # a Sequential's or ModuleList's child: m[0]
    return re.sub(r"\.(size|stride)\(\)\[(\d+)\]", r".\1(\2)", s)


__all__ = ["user_source"]
