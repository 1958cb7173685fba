"""Option types the commands share: ``--json`` and ``--dynamic``.

Imports typer only; :func:`mode_of` imports fxcache_core when called.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]


class Dynamic(str, Enum):
    """``--dynamic``'s values: torch.compile's ``dynamic=True``, ``None`` and ``False``."""

    true = "true"
    none = "none"
    false = "false"


DynamicOpt = Annotated[Dynamic | None, typer.Option(
    "--dynamic", case_sensitive=False,
    help="The call's torch.compile(dynamic=...): true (unmarked dims are duck-sized), "
    "none (the default: a fresh process's first call is static but for marked dims) or false "
    "(True/False/None as in Python are accepted too). "
    "The cache does not record it; without it, what depends on it is undecided.")]


def mode_of(dynamic: Dynamic | None) -> Any:
    """--dynamic as :class:`fxcache_core.lookup.binding.DynamicMode` (UNKNOWN when not given)."""
    from fxcache_core.lookup.binding import DynamicMode

    return DynamicMode(dynamic.value) if dynamic is not None else DynamicMode.UNKNOWN
