"""One notation for an integer range of a size: ``2 <= x.size(0) <= 7``.

:func:`render_range` writes a range (bounds and excluded values) with Python's
comparison operators, the notation of the guards themselves, everywhere
fxcache shows one: symbol ranges (:mod:`fxcache_core.guards.summary`), regions
in the user's terms (:mod:`fxcache_core.guards.user_terms`), coverage. Mirrors
how ``ShapeGuardPythonPrinter`` (torch/utils/_sympy/printers.py) prints a
bound. Pure text: never parses or evaluates a guard, never imports sympy.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["render_range"]


def render_range(lower: int | None, upper: int | None, excluded: Sequence[int], name: str) -> str:
    """``2 <= name <= 7``, ``name == 3``, ``name >= 2, name != 4``: one notation
    (Python's comparison operators) everywhere fxcache shows a range."""
    if lower is not None and upper is not None and lower == upper:
        text = f"{name} == {lower}"
    elif lower is not None and upper is not None:
        text = f"{lower} <= {name} <= {upper}"
    elif lower is not None:
        text = f"{name} >= {lower}"
    elif upper is not None:
        text = f"{name} <= {upper}"
    else:
        text = ""
    for v in excluded:
        text += (", " if text else "") + f"{name} != {v}"
    if lower is not None and upper is not None and lower > upper:
        text += "  (empty: never holds)"
    return text or name
