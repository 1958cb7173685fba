"""fxcache's own reads of a remote cache, remembered outside Redis.

On a Redis server before 7.2 there is no ``CLIENT NO-TOUCH``: every ``GET``
restarts the key's idle time (``OBJECT IDLETIME``), which is what ``gc
--older-than`` and ``--max-size`` rank keys by. One ``fxcache --remote ... gc
--dry-run`` would then make every key look just used, and the same plan run
again would find nothing old. fxcache must not destroy what its own policies
rest on, so it keeps a log of its reads, in its index dir (never in Redis):

    per (server, Redis key): the SHA-1 of the value read, when the read
    happened (a window: before and after the pipelined GET), and the key's
    last use as known just before that read.

The next run reconstructs each key's last use (:func:`last_use`): the time
Redis reports (now minus the idle time, read before any value), unless that
time falls in fxcache's own remembered read of the same value, in which case
the read is what Redis saw, and the last use is the one known before it. A
read by anyone else after fxcache's, or a new value (torch's ``SET``),
moves the reported time out of that window: it counts.

The window is widened by :data:`SLACK_S` (Redis's idle clock ticks once a
second): a use by someone else within that window of fxcache's read is taken
for fxcache's own, so that key's last use stays the earlier one.

``FXCACHE_NO_INDEX=1`` turns the log off (then nothing is remembered), as does
any error opening it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SLACK_S = 2.0
"""Seconds around a remembered read within which a reported access is that read
(``OBJECT IDLETIME`` has a resolution of one second, the LRU clock's tick)."""


@dataclass(frozen=True)
class Read:
    """One read fxcache made of a Redis key.

    Attributes:
        sha1: SHA-1 of the value read (hex).
        read_lo, read_hi: epoch seconds before and after the read.
        last_use: the key's last use (epoch seconds) as known just before it.
    """

    sha1: str
    read_lo: float
    read_hi: float
    last_use: float


def last_use(accessed: float, read: Read | None, sha1: str | None = None) -> float:
    """A key's last use (epoch seconds) from the access time Redis reports
    (``accessed``: listing time minus ``OBJECT IDLETIME``) and fxcache's last
    remembered read of it: that read's ``last_use`` when ``accessed`` falls in
    the read's window (widened by :data:`SLACK_S`) and the value is the same
    (``sha1``; None: not known yet, e.g. a listing that reads no value), else
    ``accessed``."""
    if (read is not None and (sha1 is None or sha1 == read.sha1)
            and read.read_lo - SLACK_S <= accessed <= read.read_hi + SLACK_S):
        return min(read.last_use, accessed)
    return accessed


def default_log_path() -> Path | None:
    """Where the log lives (in fxcache's index dir), None when turned off."""
    from fxcache_core.state.index import index_dir

    base = index_dir()
    return None if base is None else base / "remote-reads.sqlite"


class RemoteReads:
    """The read log of one server (``server``: its address without password).

    Never raises: on any database error the log turns itself off for the run.
    """

    def __init__(self, path: Path | None, server: str) -> None:
        self.server = server
        self._db: sqlite3.Connection | None = None
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=5)
            db.execute("CREATE TABLE IF NOT EXISTS reads (server TEXT, redis_key TEXT, sha1 TEXT, "
                       "read_lo REAL, read_hi REAL, last_use REAL, PRIMARY KEY (server, redis_key))")
            self._db = db
        except (sqlite3.Error, OSError):
            self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def remembered(self) -> dict[str, Read]:
        """Redis key -> the last read fxcache remembers of it on this server."""
        if self._db is None:
            return {}
        try:
            rows = self._db.execute("SELECT redis_key, sha1, read_lo, read_hi, last_use FROM reads "
                                    "WHERE server = ?", (self.server,)).fetchall()
        except sqlite3.Error:
            self._db = None
            return {}
        return {k: Read(sha1, lo, hi, lu) for k, sha1, lo, hi, lu in rows}

    def remember(self, reads: Iterable[tuple[str, Read]]) -> None:
        """Remember these reads (Redis key, what was read), replacing earlier ones."""
        if self._db is None:
            return
        try:
            self._db.executemany("INSERT OR REPLACE INTO reads VALUES (?, ?, ?, ?, ?, ?)",
                                 [(self.server, k, r.sha1, r.read_lo, r.read_hi, r.last_use)
                                  for k, r in reads])
            self._db.commit()
        except sqlite3.Error:
            self._db = None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def server_id(client) -> str:
    """How the log names a server: ``host:port/db`` (or the unix socket path and db),
    never the password."""
    kw = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {}) or {}
    where = kw.get("path") or f"{kw.get('host', '?')}:{kw.get('port', '?')}"
    return f"{where}/{kw.get('db', 0)}"
