"""Reading and decoding entries in worker processes, under the CPU budget.

Every entry a :class:`~fxcache_core.catalog.reader.Catalog` decodes is read and
decoded by a worker process of :mod:`fxcache_core.decode.workers` (the task
``entry``: the same stub unpickler, nothing executed), which bounds the CPU each
entry may take; one that overruns comes back as ``(reason, "too-costly")``
(``over-cpu-budget``), never as a hang. A worker sends each entry back as index
JSON (:func:`~fxcache_core.state.index.to_json`: the light form, read as such,
:data:`~fxcache_core.decode.entries.LIGHT`, or the full one when asked), which the
parent keeps as if it had decoded the entry itself; :func:`decode_origins` asks only
for where each graph came from (:data:`~fxcache_core.decode.entries.ORIGIN`), sent as
a short list of those fields (no index row is made of it, so none is written). Many
entries at once (:data:`PARALLEL_MIN_ENTRIES`) are spread over the CPUs.

Mirrors nothing in torch. Never decides what an entry means, never writes the cache.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.scan import Entry, Identity, read_entry_proven
from fxcache_core.decode.code_scan import ForeignGlobal
from fxcache_core.decode.entries import (
    FIELDS,
    LIGHT,
    ORIGIN,
    DecodedEntry,
    FxRef,
    Origin,
    decode_entry,
)
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import Unfinished, WithText, run_all, task
from fxcache_core.errors import EntryDecodeError, EntryTooLarge
from fxcache_core.reasons import Reason, code_of
from fxcache_core.state.rows import from_json, to_json
from fxcache_core.state.trust import racily_clean

PARALLEL_MIN_ENTRIES = 512
"""Fewer entries to decode than this, and one worker process decodes them all:
more cost more to start than they save."""

Read = tuple[str | None, "DecodedEntry | tuple[str, str]"]
"""What reading one entry gave: (sha256 of its bytes if hashing, the decoded entry
or (reason, cause))."""

Take = Callable[[Entry, str | None, "DecodedEntry | tuple[str, str]", "str | None", int], None]
"""Called per entry decoded: (entry, sha, decoded entry or (reason, cause), its index
JSON when the entry is its light form, when the read ended (epoch ns) if the bytes
decoded are proven to be the file the scan saw (:func:`proven`), else 0)."""


def proven(scanned: Identity, read: Identity | None, read_ns: int) -> bool:
    """Whether bytes read through one fd whose ``fstat`` gave ``read`` before and after
    the read (None: it changed meanwhile), the read ending at ``read_ns``, are the
    file the scan saw as ``scanned`` (:attr:`FileInfo.identity`), and will still be
    known so from its identity alone: equal identities, and not racily clean
    (:func:`~fxcache_core.state.trust.racily_clean`). Only such a reading may
    become an index row."""
    return read is not None and read == scanned and not racily_clean(read, read_ns)


def worker_count(n: int) -> int:
    """Worker processes for decoding ``n`` entries (1 below :data:`PARALLEL_MIN_ENTRIES`).
    ``FXCACHE_JOBS`` overrides the CPU count (``FXCACHE_JOBS=1``: one worker)."""
    if n < PARALLEL_MIN_ENTRIES:
        return 1
    env = os.environ.get("FXCACHE_JOBS", "")
    if env.isascii() and env.isdigit() and int(env) > 0:
        cpus = int(env)
    else:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cpus, n // (PARALLEL_MIN_ENTRIES // 2), 8))


_VIEWS = {"full": FIELDS, "light": LIGHT, "origin": ORIGIN}
_KINDS = {k.value: k for k in KeyKind}
"""What a worker reads of an entry, by the name a request gives."""


def read_and_decode(entry: Entry, hashing: bool) -> Read:
    """Read and decode one entry in this process (a worker's part: unbounded in CPU).
    ``cause`` is ``io`` (not read), ``too-large`` (over the size limit or the memory
    budget) or ``corrupt``."""
    sha, got, _identity, _read_ns = _read_and_decode(entry.file.where, entry.kind, entry.size, hashing)
    return sha, got


def _read_and_decode(where: str, kind: KeyKind, size: int, hashing: bool, fields: frozenset[str] = FIELDS,
                     ) -> tuple[str | None, DecodedEntry | tuple[str, str], Identity | None, int]:
    """:func:`read_and_decode` of the entry file ``where`` (of ``kind``, ``size`` bytes as
    scanned), with the identity and time of the read
    (:func:`~fxcache_core.cache.scan.read_entry_proven`; None, 0 when not read)."""
    if size > MAX_ENTRY_BYTES:
        return None, (f"{size} bytes, over fxcache's {MAX_ENTRY_BYTES} byte decoding limit",
                      "too-large"), None, 0
    try:
        data, identity, read_ns = read_entry_proven(where)
    except OSError as e:
        return None, (f"cannot read: {e.strerror or e}", "io"), None, 0
    sha = sha256_hash(data) if hashing else None
    try:
        return sha, decode_entry(data, kind, fields), identity, read_ns
    except EntryTooLarge as e:
        return sha, (_why(e), "too-large"), identity, read_ns
    except EntryDecodeError as e:
        return sha, (_why(e), "corrupt"), identity, read_ns


def _why(e: EntryDecodeError) -> str:
    """The error's message, a :class:`~fxcache_core.reasons.Reason` keeping its code
    (whether torch skips a corrupt entry or reads it rests on the code)."""
    return e.message if isinstance(e.message, Reason) else str(e)


@task("entry")
def _entry_task(arg: list) -> list | WithText:
    """Worker side: ``[path, kind, size, hashing, view]`` (``view``: a name of :data:`_VIEWS`)
    -> ``WithText([sha, None, None, proof], JSON)`` (the index row's JSON, sent as it is),
    for the ``origin`` view ``[sha, listed, None, proof]`` (:func:`_origin_listed`), or
    ``[sha, None, [reason, code, cause], proof]``; ``proof``: ``[dev, ino, size,
    mtime_ns, ctime_ns, read_ns]`` of the read, or None (not read, or changed while
    read)."""
    where, kind, size, hashing, view = arg
    sha, got, identity, read_ns = _read_and_decode(where, _KINDS[kind], size, hashing, _VIEWS[view])
    proof = None if identity is None else [*identity, read_ns]
    if isinstance(got, tuple):
        why = got[0]
        return [sha, None, [str(why), code_of(why) if isinstance(why, Reason) else None, got[1]], proof]
    if view == "origin":
        return [sha, _origin_listed(got), None, proof]
    return WithText([sha, None, None, proof], to_json(got, full=view == "full"))


def _origin_listed(d: DecodedEntry) -> list:
    """What the ``origin`` view keeps of ``d`` (:data:`~fxcache_core.decode.entries.ORIGIN`):
    its type, guards, the FX graph it loads, its origin, the globals torch would not
    write and the fields it could not read. No index row is made of it."""
    o, fw = d.origin, d.forward
    return [d.type_name, d.guards_expr, None if fw is None else [fw.key, fw.guards_expr],
            None if o is None else [o.function, o.file, o.line, list(o.functions), [list(f) for f in o.outer]],
            [[f.name, list(f.uses), f.call] for f in d.foreign], [list(a) for a in d.absent]]


def _origin_entry(kind: KeyKind, row: list) -> DecodedEntry:
    """The :class:`DecodedEntry` of an ``origin`` view's :func:`_origin_listed` (only its
    ``origin`` and ``forward`` are to be read; the rest empty, as the view leaves them).

    Raises:
        ValueError, KeyError, TypeError, IndexError: ``row`` is not such a list."""
    type_name, guards, fw, o, foreign, absent = row
    return DecodedEntry(
        kind=kind, type_name=str(type_name), guards_expr=None if guards is None else str(guards), inputs=(),
        forward=None if fw is None else FxRef(sys.intern(str(fw[0])), None if fw[1] is None else str(fw[1])),
        origin=None if o is None else Origin(
            sys.intern(str(o[0])), sys.intern(str(o[1])), int(o[2]), tuple(sys.intern(str(f)) for f in o[3]),
            tuple((sys.intern(str(f[0])), sys.intern(str(f[1])), int(f[2])) for f in o[4])),
        foreign=tuple(ForeignGlobal(str(n), tuple(map(str, u)), str(c)) for n, u, c in foreign),
        absent=tuple((str(a[0]), str(a[1])) for a in absent))


def decode_entries(entries: Sequence[Entry], hashing: bool, full: bool, jobs: int, take: Take) -> None:
    """Read and decode ``entries`` in ``jobs`` worker processes, calling ``take`` in this
    process for each as it comes (not in order). An entry over the CPU budget (or
    whose worker died) is ``(reason, "too-costly")``, its hash unknown. ``full``: with
    the debug lines; else each entry is its light form, with its index JSON."""
    _decode(entries, hashing, "full" if full else "light", jobs, take)


def decode_origins(entries: Sequence[Entry], hashing: bool, jobs: int, take: Take) -> None:
    """:func:`decode_entries`, reading of each valid entry only where its graph came from
    (:data:`~fxcache_core.decode.entries.ORIGIN`: its origin, and the FX graph an
    AOTAutograd entry loads; the other fields empty, no index JSON). Whether an entry
    is valid, and why not, is what :func:`decode_entries` says."""
    _decode(entries, hashing, "origin", jobs, take)


def _decode(entries: Sequence[Entry], hashing: bool, view: str, jobs: int, take: Take) -> None:
    def took(i: int, value: object) -> None:
        e = entries[i]
        if isinstance(value, Unfinished):
            take(e, None, (value.reason, "too-costly"), None, 0)
            return
        if type(value) is WithText:
            (sha, _, bad, proof), row = value.value, value.text
        else:
            sha, row, bad, proof = value  # type: ignore[misc]
        ok = proof[5] if proof is not None and proven(e.file.identity, tuple(proof[:5]), proof[5]) else 0  # type: ignore[arg-type]
        if bad is not None:
            text, code, cause = bad
            take(e, sha, (Reason(text, code) if code else text, cause), None, ok)
        elif view == "origin":
            take(e, sha, _origin_entry(e.kind, row), None, ok)
        else:
            take(e, sha, from_json(row), row if view == "light" else None, ok)

    run_all("entry", [[e.file.where, e.kind.value, e.size, hashing, view] for e in entries],
            [e.size for e in entries], jobs, took)


def decode_one(entry: Entry, hashing: bool, full: bool) -> tuple[str | None, DecodedEntry | tuple[str, str], int]:
    """:func:`decode_entries` of one entry: (sha, decoded entry or (reason, cause),
    when the read ended if the bytes are proven to be the scanned file's
    (:func:`proven`), else 0)."""
    out: list[tuple[str | None, DecodedEntry | tuple[str, str], int]] = []
    decode_entries([entry], hashing, full, 1, lambda _e, sha, got, _row, ok: out.append((sha, got, ok)))
    return out[0]
