"""The tensor inputs a key's graph takes that a call does not give (a mask left out as None
makes torch trace another graph), for :mod:`fxcache_core.lookup.int_args`. Nothing here
imports torch."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.lookup.binding import InputValue
from fxcache_core.lookup.floats import tensorified_base
from fxcache_core.lookup.inputs import candidates, is_call_input, user_name
from fxcache_core.lookup.source_values import is_param
from fxcache_core.reasons import Reason

__all__ = ["input_type", "tensors_not_given"]


def tensors_not_given(entry: DecodedEntry, inputs: Mapping[str, InputValue],
                       params: Sequence[str], vararg: str | None = None,
                       keywords: Sequence[str] = ()) -> list[tuple[str, Reason]]:
    """(source, a note) per tensor input of the call (``L['mask']``, an element of the
    ``*args`` parameter ``vararg``; not a module's own ``L['self']...``) that ``entry``'s
    graph takes and ``inputs`` do not give."""
    given = {c for src in inputs for c in candidates(src, params)}
    out = []
    for i in entry.inputs:
        src = i.source
        if (not src or i.expr is not None or not is_call_input(src) or "___stack" in src
                or tensorified_base(src) is not None):
            continue
        base = re.sub(r"^(L\['(?:args|kwargs)'\]\[[^\]]+\]|L\['\w+'\]).*$", r"\1", src)
        if params and not is_param(base, params, keywords) and base != f"L['{vararg}']":
            continue  # a closure's or a global's tensor (a model's weights), not an argument
        if src not in given and not any(src.startswith((g + "[", g + ".")) for g in given):
            out.append((src, Reason(
                f"{user_name(src, params)} is a tensor input of this key ({i.type}) that the call does "
                "not give: if the call leaves it out (None), torch traces another graph; give its shape",
                "input-not-given")))
    return out


def input_type(entry: DecodedEntry, src: str) -> str:
    """The type ``entry`` records for its input from ``src`` (``''`` where it takes none)."""
    return next((i.type for i in entry.inputs if i.source == src), "")
