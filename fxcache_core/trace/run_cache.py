"""Which cache dir a traced run is related to (what ``fxcache explain`` reads).

A TORCH_TRACE names the dirs the run wrote generated code into
(:attr:`~fxcache_core.trace.run.TraceRun.cache_dirs`), not the cache it read; this
module picks the cache as torch would have for that run, from what is given and
what the trace says. Nothing here reads the trace or decodes an entry: it
resolves and scans a dir.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from fxcache_core.cache.location import ENV_VAR, resolve_cache_dir
from fxcache_core.cache.scan import CacheScan, scan_cache
from fxcache_core.errors import CacheDirError, param

if TYPE_CHECKING:
    from fxcache_core.trace.run import TraceRun


def run_cache(run: TraceRun, cache_dir: str | os.PathLike[str] | None = None,
              env: Mapping[str, str] | None = None) -> tuple[CacheScan | None, str | None]:
    """The scanned cache dir to relate ``run`` to, and why there is none.

    Order: ``cache_dir`` when given (its errors are the caller's: raised), else
    ``$TORCHINDUCTOR_CACHE_DIR`` when set (as torch reads it), else the first of
    the dirs the run wrote code into (``run.cache_dirs``) that exists, else
    torch's default (:func:`~fxcache_core.cache.location.resolve_cache_dir`).

    Args:
        run: a read run (:func:`fxcache_core.trace.run.read_run`): only its
            ``cache_dirs`` are used.
        cache_dir: the cache dir the caller names (the parameter ``cache_dir``).
        env: the environment (default: ``os.environ``).

    Returns:
        ``(scan, None)``, or ``(None, why)`` when no dir could be used: why says
        each dir tried and why it failed, and to name ``cache_dir``.

    Raises:
        CacheDirError: ``cache_dir`` does not exist or is not a directory.
    """
    environ = os.environ if env is None else env
    if cache_dir is not None:
        return scan_cache(resolve_cache_dir(cache_dir, environ)), None
    tried = []
    if environ.get(ENV_VAR) is None:
        for d in run.cache_dirs:
            try:
                return scan_cache(resolve_cache_dir(d, environ)), None
            except CacheDirError as e:
                tried.append(str(e))
    try:
        return scan_cache(resolve_cache_dir(None, environ)), None
    except CacheDirError as e:
        tried.append(str(e))
    return None, "no cache to relate the run to (" + "; ".join(tried) + f"): give {param('cache_dir')}"
