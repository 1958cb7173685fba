"""``b=@a`` in a call's description: the very tensor given for another parameter.

:func:`~fxcache_core.lookup.binding.parse_shape_spec` reads ``b=@a`` as :class:`SameAs`;
:func:`same_tensors` then gives ``b`` the tensor ``a`` was given, marked as that one
(:attr:`~fxcache_core.lookup.binding.TensorArg.same_as`). Nothing here imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from fxcache_core.errors import ShapeSpecError, param

__all__ = ["SameAs", "same_tensors", "user_name"]


def user_name(source: str) -> str:
    """``a`` of ``L['a']``; any other source as it is."""
    m = re.fullmatch(r"L\['(\w+)'\]", source)
    return m.group(1) if m is not None else source


@dataclass(frozen=True, slots=True)
class SameAs:
    """``b=@a`` as parsed, before :func:`same_tensors` gives it ``a``'s tensor."""

    source: str


def same_tensors(out: dict[str, Any], names: Mapping[str, str], tensor: type) -> dict[str, Any]:
    """Each ``b=@a`` of ``out`` (source -> value) given ``a``'s tensor, an instance of
    ``tensor`` (:class:`~fxcache_core.lookup.binding.TensorArg`) with ``same_as`` set to
    ``a``'s source (followed through ``c=@b``); ``names``: each source as the call wrote it.

    Raises:
        ShapeSpecError: ``a`` not given, not a tensor, or a chain that comes back.
    """
    for src, val in list(out.items()):
        if not isinstance(val, SameAs):
            continue
        seen, target = {src}, val.source
        while isinstance(got := out.get(target), SameAs) and target not in seen:
            seen.add(target)
            target = got.source
        got = out.get(target)
        if isinstance(got, tensor) and got.same_as is not None:  # c=@b, b=@a given before: a's
            target = got.same_as
        if not isinstance(got, tensor) or target in seen:
            raise ShapeSpecError(
                f"{param('inputs')} {names[src]}=@{user_name(val.source)}: {user_name(val.source)} is "
                + ("not given" if got is None and target not in seen else "no tensor the call gives")
                + " (b=@a names another input given as a tensor: a=[4,8])", param="inputs")
        out[src] = replace(got, same_as=target)
    return out
