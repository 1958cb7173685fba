"""Torch's names in the user's terms, as explain writes them: a Dynamo source as the user writes it.

:func:`fxcache_core.guards.user_terms.user_source` does the work (``L['x']`` -> ``x``,
``._modules['lin']._parameters['weight']`` -> ``.lin.weight``, ``.size()[0]`` ->
``.size(0)``); explain also writes a Sequential's or ModuleList's child by its index
(``L['m']._modules['0']`` -> ``m[0]``). Nothing here imports torch.
"""

from __future__ import annotations

import re

from fxcache_core.guards.user_terms import user_source as _guard_source

_INDEX_RE = re.compile(r"\._modules\['([0-9]+)'\]")


def user_source(source: str) -> str:
    """A Dynamo source as the user writes it: ``L['x']`` -> ``x``,
    ``L['self']._modules['lin']._parameters['weight']`` -> ``self.lin.weight``,
    ``L['x'].size()[0]`` -> ``x.size(0)``,
    ``L['m']._modules['0']._parameters['weight']`` -> ``m[0].weight``; other forms are kept as they are."""
    return _INDEX_RE.sub(r"[\1]", _guard_source(source))


__all__ = ["user_source"]
