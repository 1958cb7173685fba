"""Durations and sizes as users write them, and as fxcache prints them."""

from __future__ import annotations

import re
from fractions import Fraction

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE_UNITS = {"b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
               "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
               # As ccache's --max-size reads them: a bare letter is decimal, "i" makes it binary.
               "k": 1000, "m": 1000**2, "g": 1000**3, "t": 1000**4,
               "ki": 1024, "mi": 1024**2, "gi": 1024**3, "ti": 1024**4}


MAX_SIZE_BYTES = 2**63 - 1
"""Largest size accepted (bytes): what a signed 64-bit count holds."""
MAX_DURATION_S = 1000 * 365.25 * 86400
"""Longest duration accepted (seconds): a thousand years."""
_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_DIGITS = 30  # longer numbers are refused before they are converted (never a 4,300-digit int)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_duration(text: str) -> float:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` -> seconds.

    Raises:
        ValueError: not a non-negative number followed by one of those units (an
            empty string included), or longer than :data:`MAX_DURATION_S`.
    """
    m = re.fullmatch(rf"\s*{_NUMBER}\s*([smhdw])\s*", text.lower())
    if not m:
        raise ValueError(f"{_shown(text)} is not a duration like 90s, 30m, 12h, 7d or 2w")
    if len(m.group(1)) > _DIGITS:
        raise ValueError(f"{_shown(text)} is longer than a thousand years")
    seconds = float(Fraction(m.group(1)) * _DURATION_UNITS[m.group(2)])
    if seconds > MAX_DURATION_S:
        raise ValueError(f"{_shown(text)} is longer than a thousand years")
    return seconds


def parse_size(text: str) -> int:
    """``500MB``, ``2GB``, ``1.5GiB``, ``1000B`` -> bytes (decimal and binary units),
    computed exactly (no float rounding); also ``5G``, ``500M``, ``64K``, ``2Gi`` as
    ccache's ``--max-size`` and ``du`` users type them, case-insensitive.

    A bare letter is decimal, as in ccache (``5G`` = 5,000,000,000 bytes): ``du -h``
    reads ``G`` as GiB, and 5 GB is less than 5 GiB, so a budget of ``5G`` also
    keeps the cache under what ``du -sh`` shows as ``5.0G``.

    A unit is required: ``--max-size 2`` is far more likely a slip than a
    two-byte budget.

    Raises:
        ValueError: not a non-negative number followed by a unit (an empty
            string included), or over :data:`MAX_SIZE_BYTES`.
    """
    m = re.fullmatch(rf"\s*{_NUMBER}\s*([a-z]*)\s*", text.lower())
    if not m or m.group(2) not in _SIZE_UNITS:
        raise ValueError(f"{_shown(text)} is not a size with a unit, like 500M, 5G, 2GB, 1.5GiB or 1000B")
    if len(m.group(1)) > _DIGITS:
        raise ValueError(f"{_shown(text)} is over {MAX_SIZE_BYTES:,} bytes (2**63 - 1)")
    n = int(Fraction(m.group(1)) * _SIZE_UNITS[m.group(2)])
    if n > MAX_SIZE_BYTES:
        raise ValueError(f"{_shown(text)} is over {MAX_SIZE_BYTES:,} bytes (2**63 - 1)")
    return n


def format_duration(seconds: float) -> str:
    """``42s``, ``5m``, ``3.5h``, ``2.0d``: one short figure."""
    seconds = max(0.0, seconds)
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= n:
            v = seconds / n
            return f"{v:.0f}{unit}" if v >= 10 or v == int(v) else f"{v:.1f}{unit}"
    return f"{seconds:.0f}s"
