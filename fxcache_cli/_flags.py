"""Core parameters as the CLI's flags.

fxcache_core names its parameters in messages and reasons through
:func:`fxcache_core.errors.param` markers, never CLI flags; :func:`flag_of` turns
a core parameter into the flag that gives it (``shapes`` -> ``--shapes``), and
:func:`render_flags` renders every marker of a text that way. Both the error layer
(:mod:`fxcache_cli._errors`) and the output layer (:mod:`fxcache_cli._output`) use
it, so a core message reads with flags wherever the CLI writes it. Imports nothing
of fxcache_core.
"""

from __future__ import annotations

import re

# A core parameter -> the flag that gives it, where the flag is not simply
# "--" + the name with "_" as "-" (that rule covers shapes, sym, key, arg,
# range, dynamic, duck_shape, fn, cache_dir, remote, rank, compile, older_than,
# max_size, artifacts, keep_last, keep_costly, set_ttl, stale, ...).
FLAGS: dict[str, str] = {
    "args": "--arg",
    "positional": "--arg",
    "value_range": "--range",
    "coverage_key": "--coverage",
    "compile_id": "--compile",
    "from_trace": "--from-trace",
    "older_than_s": "--older-than",
    "max_size_bytes": "--max-size",
    "keep_costly_s": "--keep-costly",
    "orphaned_locks": "--locks",
    "stale_against": "--stale",
    "function": "--fn",
    "only": "--key",
    "syms": "--sym",
    "inputs": "--shapes",
    "mode": "--dynamic",
    "other_cache_dir": "--other-cache-dir",
}


def flag_of(name: str) -> str:
    """The flag that gives core parameter ``name``: ``shapes`` -> ``--shapes``,
    ``duck_shape`` -> ``--duck-shape``, ``older_than_s`` -> ``--older-than``."""
    return FLAGS.get(name) or "--" + name.replace("_", "-")


_MARKER = re.compile("\x1e([A-Za-z_][A-Za-z0-9_]*)\x1f")
_JSON_MARKER = re.compile(r"\\u001e([A-Za-z_][A-Za-z0-9_]*)\\u001f")


def render_flags(text: str) -> str:
    """``text`` with each core parameter marker written as its flag."""
    return _MARKER.sub(lambda m: flag_of(m.group(1)), text) if "\x1e" in text else text


def render_json_flags(text: str) -> str:
    """JSON text (``json.dumps``' ASCII form, markers escaped as ``\\u001e``) with
    each marker written as its flag: JSON strings read as the human output does."""
    return _JSON_MARKER.sub(lambda m: flag_of(m.group(1)), text) if "\\u001e" in text else text


def message_of(e: BaseException) -> str:
    """An FxcacheError's message as the CLI says it (parameters as flags)."""
    render = getattr(e, "render", None)
    return render(flag_of) if callable(render) else str(e)


