"""Values read from trace records, as untrusted input.

A trace is text anyone can write: a time may be a 400-digit integer, a symbol's
value 5,000 digits, a cache artifact two million components, a guards payload
100,000 lines. These read what :mod:`fxcache_core.trace.run` keeps of a record
within bounds, and give None (unknown) for what is not a value torch logs.
Nothing here imports torch.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

from fxcache_core.guards.in_force import MAX_GUARD_CHARS_IN_FORCE, MAX_GUARDS_IN_FORCE
from fxcache_core.trace.reader import bounded_json

_ADDRESS_RE = re.compile(r" (?:object )?at 0x[0-9a-fA-F]{1,16}>")
_GUARD_LINE_RE = re.compile(r"[| ]*\+- ([A-Z_][A-Z0-9_]*): (.*)")  # matched from a line's start to its end


def number(v: Any) -> float | None:
    """A finite number as a float; None for anything else (a bool, an int past a
    float's range: a 400-digit ``time_taken_ns``, an infinity or NaN)."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


MAX_INT_CHARS = 4000
"""A ``create_symbol`` value longer than this is not read (Python refuses to parse
more than 4,300 digits; a size is 19 at most): the value is unknown."""


def int_value(v: Any) -> int | None:
    """A ``create_symbol`` value (torch logs ``repr(val)``) as an int, None if it is not one."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and len(v) <= MAX_INT_CHARS and re.fullmatch(r"-?[0-9]+", v):
        return int(v)
    return None


_SCALAR_RE = re.compile(r'(?<!\\)"([a-z_]{1,40})": ("(?:[^"\\]|\\.){0,4096}"|-?[0-9][0-9.eE+-]{0,30})(?=[,}])')


def scalars(payload: str) -> dict[str, Any]:
    """The string and number fields of a cache artifact too large to parse whole
    (``"key": "f..."``, ``"time_taken_ns": 123``), each as JSON reads it; the first
    of each name wins. Quotes inside strings are escaped, so a field named inside
    a component is not taken for one."""
    out: dict[str, Any] = {}
    for m in _SCALAR_RE.finditer(payload):
        if m.group(1) not in out:
            v = bounded_json(m.group(2), max_values=8)
            if v is not None:
                out[m.group(1)] = v
    return out


def dynamic_mode(config: Any) -> str | None:
    """``torch.compile(dynamic=...)`` as the Dynamo config of a compile says it
    (``dynamic=True`` sets ``assume_static_by_default`` off; ``dynamic=False``
    sets ``automatic_dynamic_shapes`` off: torch/_dynamo/eval_frame.py)."""
    cfg = bounded_json(config) if isinstance(config, str) else config
    if not isinstance(cfg, dict) or "assume_static_by_default" not in cfg:
        return None
    if cfg.get("assume_static_by_default") is False:
        return "true"
    return "none" if cfg.get("automatic_dynamic_shapes", True) else "false"


def one_line(text: str | None, limit: int = 500) -> str | None:
    """Torch's text (a bypass reason) as one line: whitespace runs as one space, an
    object's address dropped (``<function tensor at 0x7f...>`` -> ``<function tensor>``:
    it differs per process and says nothing), at most ``limit`` characters."""
    if text is None:
        return None
    s = _ADDRESS_RE.sub(">", " ".join(text.split()))
    return s if len(s) <= limit else s[:limit - 3] + "..."


def guard_codes(payload: str) -> tuple[str, ...]:
    """The code of each guard line of a ``dynamo_cpp_guards_str`` payload, comment cut.

    Kept up to the first guard past :data:`~fxcache_core.guards.in_force.MAX_GUARDS_IN_FORCE`
    guards or :data:`~fxcache_core.guards.in_force.MAX_GUARD_CHARS_IN_FORCE` characters:
    the check refuses such a set anyway, and the rest is never held."""
    out = []
    chars = start = 0
    while start < len(payload) and len(out) <= MAX_GUARDS_IN_FORCE and chars <= MAX_GUARD_CHARS_IN_FORCE:
        end = payload.find("\n", start)
        end = len(payload) if end == -1 else end
        m = _GUARD_LINE_RE.fullmatch(payload, start, end)
        start = end + 1
        if m is None:
            continue
        code = m.group(2).split("  # ", 1)[0].strip()
        if code:
            out.append(sys.intern(code) if len(code) < 200 else code)
            chars += len(code)
    return tuple(out)


__all__ = ["dynamic_mode", "guard_codes", "int_value", "number", "one_line", "scalars"]
