"""What one run of a command works on: the global options, the scanned cache
(local, or a snapshot of the remote one), its catalog and index, and closing
them all at exit (:func:`close_all`)."""

from __future__ import annotations

import sys
from typing import Any

from fxcache_core.errors import FxcacheError

from ._output import ReadProgress, fail


class State:
    """The global options (set by the app callback) and what a run opened."""

    cache_dir: str | None = None
    remote: str | None = None
    store: Any = None  # fxcache_core.remote.redis_store.RedisStore, with --remote


state = State()


def scan_dir(cache_dir: str | None = None, quiet: bool = False, option: str = "cache_dir",
             tally: bool = False):
    """Scan --cache-dir (or ``cache_dir``, given as the parameter ``option``, e.g.
    ``other_cache_dir``: the error layer names its flag), or with --remote a local
    snapshot of the remote cache (fxcache_core.remote.redis_store); ``quiet``: no
    progress bar (--json); ``tally``: scan_cache's (for a gc plan)."""
    from fxcache_core.cache.location import resolve_cache_dir
    from fxcache_core.cache.scan import scan_cache

    if state.remote is not None and cache_dir is None:
        return scan_cache(remote_snapshot(quiet), tally)
    if cache_dir is not None:
        return scan_cache(resolve_cache_dir(cache_dir, explicit_name=option), tally)
    return scan_cache(resolve_cache_dir(state.cache_dir), tally)


def local_agreement(remote_scan: Any) -> dict[str, str]:
    """For remote keys the local cache (--cache-dir or torch's default) also has:
    ``same`` when the remote entry is one of the local entries (same content hash), else ``differs``."""
    from fxcache_core.cache.location import resolve_cache_dir
    from fxcache_core.cache.scan import scan_cache

    try:
        local = scan_cache(resolve_cache_dir(state.cache_dir))
    except FxcacheError:
        return {}
    from fxcache_core.remote.redis_store import agreement

    return agreement(remote_scan, local)


def remote_store() -> Any:
    """The --remote store (connected once)."""
    from fxcache_core.remote import redis_store as remote

    if state.store is None:
        state.store = remote.RedisStore(remote.redis_url(state.remote or ""))
    return state.store


def remote_snapshot(quiet: bool = False) -> Any:
    """The local snapshot of the remote cache (fetched once, removed at exit)."""
    st = remote_store()
    n = len(st.entries())  # idle times first: before any value is read
    if st.touches:  # said before the reads, not after
        sys.stderr.write(
            "fxcache: note: this Redis server (before 7.2, no CLIENT NO-TOUCH) counts reads as uses: "
            "reading the values now restarts every key's idle time. "
            + ("fxcache remembers its reads (in its index dir) and discounts them on its next runs; "
               "other tools will see the keys as just used\n" if st.reads.enabled else
               "fxcache cannot remember its reads (FXCACHE_NO_INDEX, or its index dir is not "
               "writable): its next run, and other tools, will see every key as just used\n"))
    prog = ReadProgress(n, enabled=not quiet, label="fetching remote values")
    _progress.append(prog)
    root = st.snapshot(on_batch=prog.advance)
    prog.close()
    return root


_indexes: list[Any] = []
_progress: list[Any] = []


def open_catalog(scan: Any, *, indexed: bool, as_json: bool = False, hashing: bool | None = None,
                 plan_only: bool = False) -> Any:
    """A Catalog with a progress bar; ``indexed``: backed by the persistent index of
    decoded entries (see fxcache_core.state.index; verify always reads the files).
    ``hashing``: hash each file read (for name-is-content checks; default: unindexed only).
    ``plan_only``: the catalog serves a gc or rm plan and nothing else (Catalog's ``plan_only``)."""
    from fxcache_core.catalog.reader import Catalog

    prog = ReadProgress(scan.entry_count, enabled=not as_json)
    _progress.append(prog)
    idx = None
    from fxcache_core.cache.blob import laid_out_from

    # a remote snapshot, or a blob laid out, is a new temp dir each run: no index of it
    if indexed and state.remote is None and laid_out_from(scan.root) is None:
        from fxcache_core.state.index import Index, default_index_path

        idx = Index(default_index_path(scan.root), scan.root)
        _indexes.append(idx)
    return Catalog(scan, idx, on_read=prog, hash_on_read=not indexed if hashing is None else hashing,
                   not_read=not_read(), plan_only=plan_only)


def not_read() -> dict[str, str]:
    """With --remote: snapshot entry file -> why its value was not read (too large)."""
    return state.store.not_read() if state.store is not None else {}


def done_reading() -> None:
    """Take progress bars down before printing results."""
    for prog in _progress:
        prog.close()


def indexed_catalog(scan: Any, as_json: bool = False) -> Any:
    return open_catalog(scan, indexed=True, as_json=as_json)


def installed_build() -> Any:
    """The installed torch's build components (imports torch); exit 2 without torch."""
    try:
        from fxcache_core.keying.current import current_build
        return current_build()
    except ImportError as e:
        fail(f"this needs torch installed (to know what the installed torch hashes): {e}")
    except Exception as e:  # noqa: BLE001 - torch failing to load (a missing library...) is one line too
        fail(f"torch is installed but could not compute its build hashes: {type(e).__name__}: {e}")


def user_path(path: Any) -> str:
    """A planned path as the user knows it: the Redis key with --remote."""
    f = state.store.fetched(path) if state.store is not None else None
    return f.entry.redis_key if f is not None else str(path)


def close_all() -> None:
    """Take progress bars down, close the indexes and the remote connection."""
    for prog in _progress:
        prog.close()
    for idx in _indexes:
        idx.close()
    if state.store is not None:
        state.store.close()
    # A run in-process (tests calling main()) starts from nothing, as a new process does.
    _progress.clear()
    _indexes.clear()
    state.store = None
