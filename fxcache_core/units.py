"""Durations and sizes as users write them, and as fxcache prints them."""

from __future__ import annotations

import re

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
               "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
               # As ccache's --max-size reads them: a bare letter is decimal, "i" makes it binary.
               "k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4,
               "ki": 1024, "mi": 1024**2, "gi": 1024**3, "ti": 1024**4}


def parse_duration(text: str) -> float:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` -> seconds.

    Raises:
        ValueError: not a non-negative number followed by one of those units.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not m:
        raise ValueError(f"{text!r} is not a duration like 90s, 30m, 12h, 7d or 2w")
    return float(m.group(1)) * _DURATION_UNITS[m.group(2)]


def parse_size(text: str) -> int:
    """``500MB``, ``2GB``, ``1.5GiB``, ``1000B`` -> bytes (decimal and binary units);
    also ``5G``, ``500M``, ``64K``, ``2Gi`` as ccache's ``--max-size`` and ``du``
    users type them, case-insensitive.

    A bare letter is decimal, as in ccache (``5G`` = 5,000,000,000 bytes): ``du -h``
    reads ``G`` as GiB, and 5 GB is less than 5 GiB, so a budget of ``5G`` also
    keeps the cache under what ``du -sh`` shows as ``5.0G``.

    A unit is required: ``--max-size 2`` is far more likely a slip than a
    two-byte budget.

    Raises:
        ValueError: not a non-negative number followed by a unit.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not m or m.group(2) not in _SIZE_UNITS:
        raise ValueError(f"{text!r} is not a size with a unit, like 500M, 5G, 2GB, 1.5GiB or 1000B")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])


def format_duration(seconds: float) -> str:
    """``42s``, ``5m``, ``3.5h``, ``2.0d``: one short figure."""
    seconds = max(0.0, seconds)
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= n:
            v = seconds / n
            return f"{v:.0f}{unit}" if v >= 10 or v == int(v) else f"{v:.1f}{unit}"
    return f"{seconds:.0f}s"
