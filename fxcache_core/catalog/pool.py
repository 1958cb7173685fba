"""Decoding many entries at once, in worker processes (:meth:`Catalog.read_ahead`).

A cold ``match`` or ``ls`` over a large cache spends its time unpickling
entries; this module spreads that over the CPUs. Workers read and decode with
the same stub unpickler as the parent (nothing is executed) and send back each
entry's light form as index JSON (:func:`~fxcache_core.state.index.to_json`),
which the parent keeps as if it had decoded the entry itself.

Mirrors nothing in torch. Never decides what an entry means, never writes the
cache; falling back to reading in the parent is the caller's part.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from concurrent.futures import Future

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import Entry, FileInfo
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.state.index import to_json

PARALLEL_MIN_ENTRIES = 512
"""Fewer entries to decode than this, and :meth:`Catalog.read_ahead` reads them
in this process: starting workers costs more than it saves."""

ReadAndDecode = Callable[[Entry, bool], "tuple[str | None, DecodedEntry | tuple[str, str]]"]
"""Reads one entry: (sha256 of its bytes if hashing, the decoded entry or (reason, cause))."""

WorkerResult = tuple[str | None, str | None, tuple[str, str] | None]
"""Per entry: (sha, index JSON of the light form, None) or (sha, None, (reason, cause))."""


def worker_count(n: int) -> int:
    """Worker processes for decoding ``n`` entries (1: none, below
    :data:`PARALLEL_MIN_ENTRIES`). ``FXCACHE_JOBS`` overrides the CPU count
    (``FXCACHE_JOBS=1`` turns workers off)."""
    if n < PARALLEL_MIN_ENTRIES:
        return 1
    env = os.environ.get("FXCACHE_JOBS", "")
    if env.isascii() and env.isdigit() and int(env) > 0:
        cpus = int(env)
    else:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, n // (PARALLEL_MIN_ENTRIES // 2), 8))


def _worker_init() -> None:
    """A read-ahead worker ignores SIGINT: Ctrl-C reaches the whole process group,
    and the parent, not each worker, reports it and stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _decode_files(read: ReadAndDecode, items: list[tuple[str, str, int]], hashing: bool
                  ) -> list[WorkerResult]:
    """Worker side of :func:`decode_in_workers`: per (path, kind, size), a :data:`WorkerResult`."""
    out: list[WorkerResult] = []
    for where, kind, size in items:
        e = Entry(KeyKind(kind), "", FileInfo(where, size, 0.0, 0.0), 0)
        sha, got = read(e, hashing)
        out.append((sha, None, got) if isinstance(got, tuple) else (sha, to_json(got), None))
    return out


def decode_in_workers(todo: list[Entry], jobs: int, read: ReadAndDecode, hashing: bool,
                      take: Callable[[Entry, WorkerResult], None]) -> None:
    """Decode ``todo`` in ``jobs`` worker processes, handing each entry's result to
    ``take`` in the parent, in ``todo``'s order.

    ``read`` is a module-level function (it is pickled by name). Chunks of entries
    are in flight at most two per worker (results never pile up); workers are deaf
    to Ctrl-C (the parent stops them) and forked from a process with its cyclic GC
    frozen (no copy-on-write of the whole heap).

    Raises:
        OSError, RuntimeError, BrokenProcessPool: no worker processes could be had
            (a sandbox, no /dev/shm); entries already taken stay taken.
    """
    import gc
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    size = max(64, min(512, len(todo) // (jobs * 8) or 1))
    chunks = iter([todo[i:i + size] for i in range(0, len(todo), size)])

    def settle(chunk: list[Entry], future: Future) -> None:
        for e, result in zip(chunk, future.result(), strict=True):
            take(e, result)

    gc.freeze()
    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_worker_init)
    try:
        flight: deque = deque()
        for chunk in chunks:
            flight.append((chunk, pool.submit(
                _decode_files, read, [(e.file.where, e.kind.value, e.size) for e in chunk], hashing)))
            if len(flight) >= 2 * jobs:
                settle(*flight.popleft())
        while flight:
            settle(*flight.popleft())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        gc.unfreeze()
    pool.shutdown()
