"""Core parameters as the CLI's flags.

fxcache_core names its parameters in messages and reasons through
:func:`fxcache_core.errors.param`, never CLI flags; :func:`flag_of` turns a core
parameter into the flag that gives it (``inputs`` -> ``--inputs``), and ``main()``
installs it as the naming in force (:func:`fxcache_core.errors.use_names`) before
any command runs, so every core text made during a run says the flag. Imports
nothing of fxcache_core.
"""

from __future__ import annotations

# A core parameter -> the flag that gives it, where the flag is not simply
# "--" + the name with "_" as "-" (that rule covers inputs, sym, key, arg,
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
    "everything": "--all",
    "only": "--key",
    "syms": "--sym",
    "shapes": "--inputs",
    "mode": "--dynamic",
    "phase": "--after-recompile",
    "other_cache_dir": "--other-cache-dir",
    "source_dirs": "--source-dir",
}


def flag_of(name: str) -> str:
    """The flag that gives core parameter ``name``: ``inputs`` -> ``--inputs``,
    ``duck_shape`` -> ``--duck-shape``, ``older_than_s`` -> ``--older-than``."""
    return FLAGS.get(name) or "--" + name.replace("_", "-")
