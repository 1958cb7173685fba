"""What traces tell about entries that their files cannot: real use and compile cost.

An entry's atime says when it was last read only where the file system records
reads, and not at all on a cache copied elsewhere. A TORCH_TRACE records every
hit (:mod:`fxcache_core.trace.explain` names the entry) and, for every miss, the
compile it cost and the entry it wrote. ``fxcache explain`` keeps these facts
(:class:`TracedUse`, which an explain report gives: :class:`TraceFacts`)
here, per entry file name (torch names an entry by the sha256 of its content,
so the name is the entry wherever it is copied), for ``gc`` to rank by
(:class:`~fxcache_core.prune.policy.GcPolicy` ``trace_use``).

Where: beside fxcache's index of decoded entries (:mod:`fxcache_core.state.index`),
never inside the cache dir::

    <index dir>/usage-<sha256 of the cache dir's real path>.sqlite

one table ``entry_use(kind, key, entry, last_use, hits, compile_s, written)``,
one of the traces already counted (``traces``, by file name, size and
mtime), so explaining a trace twice never counts its hits twice, and one of the
Python values each key's graph was traced with (``key_constants(key,
constants)``: the constants Dynamo's guards pinned in a compile that looked the key
up, :func:`fxcache_core.trace.constants.key_constants`), which ``match`` reads as
evidence the cache itself does not keep (:meth:`UsageStore.constants`). Like the
index, ``FXCACHE_NO_INDEX=1`` turns it off and an error opening it (a
read-only home) just leaves it out. It is opened as the index is
(:func:`~fxcache_core.state.index.open_own_db`: never through a symlink, never
a database fxcache did not make), and every row read back is type-checked: a
row that is not what fxcache writes is left out. Nothing here imports torch, and nothing
of the trace stack: gc reads this store, and importing it stays cheap
(explain feeds the store, never the other way).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fxcache_core.state.index import default_index_path
from fxcache_core.state.own_db import open_own_db

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entry_use (
    kind TEXT NOT NULL, key TEXT NOT NULL, entry TEXT NOT NULL,
    last_use REAL, hits INTEGER NOT NULL DEFAULT 0, compile_s REAL, written REAL,
    PRIMARY KEY (kind, key, entry));
CREATE TABLE IF NOT EXISTS traces (fingerprint TEXT PRIMARY KEY);
"""
_TABLES = (frozenset({"entry_use", "traces"}),)
_CONSTANTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS key_constants (
    key TEXT NOT NULL, constants TEXT NOT NULL, PRIMARY KEY (key, constants));
"""
MAX_CONSTANTS_TEXT = 65536
"""A ``key_constants`` row longer than this (characters) is neither written nor read."""
MAX_CONSTANT_ROWS = 100_000


def usage_path(root: Path) -> Path | None:
    """Where the trace facts of cache dir ``root`` live (None when the index is off); for a
    blob laid out in a temp dir (:func:`~fxcache_core.cache.blob.laid_out_from`), those of
    the blob's own path, so that what a trace explained for it is found on the next read."""
    from fxcache_core.cache.blob import laid_out_from

    blob = laid_out_from(root)
    idx = default_index_path(blob if blob is not None else root)
    return None if idx is None else idx.with_name(idx.name.replace("index-", "usage-", 1))


@dataclass(frozen=True)
class EntryUse:
    """What traces said about one entry.

    Attributes:
        kind, key, entry: which entry (``fxgraph``/``aotautograd``, key, file name).
        last_use: the latest hit on it in a trace, epoch seconds (None: never seen hit).
        hits: hits counted across the traces explained.
        compile_s: the compile seconds the miss that wrote it recorded (None: not seen).
        written: when a traced miss wrote it, epoch seconds.
    """

    kind: str
    key: str
    entry: str
    last_use: float | None
    hits: int
    compile_s: float | None
    written: float | None


@dataclass(frozen=True)
class TracedUse:
    """One fact a trace gave about an entry: a hit on it, or the miss that wrote it.

    Attributes:
        kind, key, entry: which entry (``fxgraph``/``aotautograd``, key, file name).
        hit: True for a hit on it, False for the miss that wrote it.
        time: when the lookup was made, epoch seconds.
        compile_s: a miss: the compile seconds it cost (None: not recorded).
    """

    kind: str
    key: str
    entry: str
    hit: bool
    time: float
    compile_s: float | None = None


class TraceFacts(Protocol):
    """What :meth:`UsageStore.record` takes: an explain report
    (:class:`fxcache_core.trace.explain.ExplainReport`) is one."""

    @property
    def cache_dir(self) -> str | None:
        """The cache dir the facts are about (None: none, nothing is recorded)."""
        ...

    def uses(self) -> Iterable[TracedUse]:
        """The facts, in the run's order."""
        ...

    def trace_paths(self) -> Sequence[Path]:
        """The trace files the facts come from (their identity: see ``_fingerprint``)."""
        ...


class UsageStore:
    """The trace facts of one cache dir (see the module docstring). ``path`` None: off."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        if path is None:
            return
        self._db = open_own_db(path, _SCHEMA, _TABLES, timeout=10)
        if self._db is not None:
            try:
                self._db.executescript(_CONSTANTS_SCHEMA)  # a store made before the table was
            except sqlite3.Error:
                self._db.close()
                self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def record(self, report: TraceFacts) -> int:
        """Keep what ``report`` says about entries (hits: use time, count; misses:
        compile seconds and write time of the entry written). Returns the facts
        kept; 0 when the store is off or the trace was counted before (its use
        times are still taken: they only ever move later)."""
        if self._db is None or report.cache_dir is None:
            return 0
        fp = _fingerprint(report.trace_paths())
        try:
            with self._db:
                seen = self._db.execute("SELECT 1 FROM traces WHERE fingerprint = ?", (fp,)).fetchone()
                n = 0
                for u in report.uses():
                    if not all(map(_storable, (u.kind, u.key, u.entry))):
                        continue  # a name that is not valid UTF-8: SQLite cannot store it
                    if u.hit:
                        self._db.execute(
                            "INSERT INTO entry_use(kind, key, entry, last_use, hits) VALUES (?, ?, ?, ?, ?) "
                            "ON CONFLICT(kind, key, entry) DO UPDATE SET "
                            "last_use = max(coalesce(last_use, 0), excluded.last_use), "
                            "hits = hits + excluded.hits",
                            (u.kind, u.key, u.entry, u.time, 0 if seen else 1))
                    else:
                        self._db.execute(
                            "INSERT INTO entry_use(kind, key, entry, compile_s, written) VALUES (?, ?, ?, ?, ?) "
                            "ON CONFLICT(kind, key, entry) DO UPDATE SET "
                            "compile_s = coalesce(excluded.compile_s, compile_s), "
                            "written = coalesce(excluded.written, written)",
                            (u.kind, u.key, u.entry, u.compile_s, u.time))
                    n += 1
                self._db.execute("INSERT OR IGNORE INTO traces(fingerprint) VALUES (?)", (fp,))
            return n
        except sqlite3.Error:
            return 0

    def record_constants(self, constants: Mapping[str, Sequence[Mapping[str, object]]]) -> int:
        """Keep, per key, the Python values its graph was traced with (key -> one
        mapping of source -> value per compile that looked it up: a bool, None, an
        int, a float, a str or a tuple of them). Returns the rows added; 0 when off."""
        if self._db is None:
            return 0
        n = 0
        try:
            with self._db:
                for key, each in constants.items():
                    for c in each:
                        text = _encode(c)
                        if text is None or not _storable(key) or not _storable(text):
                            continue
                        cur = self._db.execute("INSERT OR IGNORE INTO key_constants(key, constants) VALUES (?, ?)",
                                               (key, text))
                        n += cur.rowcount
            return n
        except sqlite3.Error:
            return 0

    def constants(self) -> dict[str, tuple[dict[str, object], ...]]:
        """Key -> the constants recorded for it (:meth:`record_constants`), a row whose
        values are not what fxcache writes left out (the store lives in a dir others
        may write); empty when off."""
        if self._db is None:
            return {}
        try:
            rows = self._db.execute("SELECT key, constants FROM key_constants LIMIT ?",
                                    (MAX_CONSTANT_ROWS,)).fetchall()
        except sqlite3.Error:
            return {}
        out: dict[str, list[dict[str, object]]] = {}
        for key, text in rows:
            got = _decode(text) if isinstance(key, str) else None
            if got is not None:
                out.setdefault(key, []).append(got)
        return {k: tuple(v) for k, v in out.items()}

    def load(self) -> dict[str, EntryUse]:
        """Entry file name -> what traces said about it (empty when off)."""
        if self._db is None:
            return {}
        try:
            rows = self._db.execute(
                "SELECT kind, key, entry, last_use, hits, compile_s, written FROM entry_use").fetchall()
        except sqlite3.Error:
            return {}
        out = {}
        for r in rows:
            use = _checked(r)
            if use is not None:
                out[use.entry] = use
        return out

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def recorded_constants(root: Path) -> dict[str, tuple[dict[str, object], ...]]:
    """:meth:`UsageStore.constants` of cache dir ``root``'s store, opened only where one
    exists (reading makes none); empty when there is none or the index is off."""
    path = usage_path(root)
    if path is None or not os.path.lexists(path):
        return {}
    store = UsageStore(path)
    try:
        return store.constants()
    finally:
        store.close()


def _checked(row: Sequence[object]) -> EntryUse | None:
    """A row of ``entry_use`` as an EntryUse, or None when its values are not what
    fxcache writes (text where a time is, a negative count...): the store lives in
    a dir others may write."""
    kind, key, entry, last_use, hits, compile_s, written = row
    if not all(isinstance(v, str) for v in (kind, key, entry)):
        return None
    if not isinstance(hits, int) or hits < 0:
        return None
    times = (last_use, compile_s, written)
    if not all(v is None or type(v) in (int, float) and math.isfinite(v) and v >= 0 for v in times):
        return None
    last_use, compile_s, written = (None if v is None else float(v) for v in times)  # type: ignore[arg-type]
    return EntryUse(kind, key, entry, last_use, hits, compile_s, written)


def _plain(v: object, depth: int = 0) -> bool:
    """Whether ``v`` is a constant fxcache records: None, a bool, an int, a float, a
    str, or a tuple of them (at most 4 deep)."""
    if v is None or type(v) in (bool, int, float, str):
        return True
    return type(v) is tuple and depth < 4 and all(_plain(x, depth + 1) for x in v)  # type: ignore[union-attr]


def _encode(c: Mapping[str, object]) -> str | None:
    """One compile's constants as the row's text: JSON ``[[source, value], ...]``
    sorted (a tuple as a list); None when a value is not a recorded kind or the text
    is over :data:`MAX_CONSTANTS_TEXT`."""
    if not all(isinstance(k, str) and _plain(v) for k, v in c.items()):
        return None
    text = json.dumps(sorted([k, v] for k, v in c.items()))
    return text if len(text) <= MAX_CONSTANTS_TEXT else None


def _decode(text: object) -> dict[str, object] | None:
    """A row's text back as source -> value (lists as tuples); None for anything
    :func:`_encode` does not write."""
    if not isinstance(text, str) or len(text) > MAX_CONSTANTS_TEXT:
        return None
    try:
        items = json.loads(text)
    except (ValueError, RecursionError):
        return None

    def back(v: object, depth: int = 0) -> object:
        if isinstance(v, list):
            if depth >= 4:
                raise ValueError("too deep")
            return tuple(back(x, depth + 1) for x in v)
        if v is None or type(v) in (bool, int, float, str):
            return v
        raise ValueError("not a constant")

    if not isinstance(items, list):
        return None
    out: dict[str, object] = {}
    try:
        for item in items:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                return None
            out[item[0]] = back(item[1])
    except ValueError:
        return None
    return out


def _storable(text: str) -> bool:
    """Whether SQLite can store ``text`` as TEXT (a lone surrogate, from a name that
    is not UTF-8 or a JSON escape in a trace, cannot be encoded)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fingerprint(paths: Sequence[Path]) -> str:
    """A trace's identity: its files' names (as bytes: a name need not be UTF-8),
    sizes and mtimes."""
    h = hashlib.sha256()
    for path in paths:
        name = os.fsencode(path.name)
        try:
            st = os.stat(path)
            h.update(name + f"\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except OSError:
            h.update(name + b"\0?\n")
    return h.hexdigest()
