"""A persistent index of decoded entries, so a second ``match`` need not decode again.

Decoding an entry costs about a millisecond (it is a whole pickle, read by the
stub unpickler); a cache of 10,000 entries costs seconds. The index remembers,
per entry file, what :func:`~fxcache_core.decode.entries.decode_entry` found, in an
SQLite database outside the cache dir (torch's cache is never written to):

    $FXCACHE_INDEX_DIR, else $XDG_CACHE_HOME/fxcache, else ~/.cache/fxcache
    /index-<sha256 of the cache dir's real path>.sqlite

Trust (:mod:`fxcache_core.state.trust`): a row is used only while the file still has
the identity (device, inode, size, mtime_ns, ctime_ns) its bytes were read under;
anything else and the file is decoded again (and the row replaced). The row is
JSON, never pickle, so a tampered index can at worst mislead, not run code. gc
takes a row as proof only through :meth:`Index.proven`; ``verify`` always reads
the files.

What is kept is the light form of an entry (:func:`light`): everything but the
FX debug lines (tens of KB per entry, only needed by ``key``/``diff``/``--stale``,
which then decode the file) and the list of globals the pickle named. Entries that are not valid (``corrupt``) are remembered too,
with their reason and its code; entries that could not be read are not, nor are files whose
name is not valid UTF-8 (SQLite stores text; they are decoded on each run).

A second table keeps, per key, the function it was compiled from
(:mod:`fxcache_core.functions.origin`) and the entry file that said so: ``ls`` shows
every key's function from one row per key, valid while that entry file is
unchanged, without reading the entries table.

``FXCACHE_NO_INDEX=1`` turns the index off; so does any error opening it
(a read-only home): the index is an optimisation, never a requirement.

The index dir may be written by others: its files are opened by
:func:`~fxcache_core.state.own_db.open_own_db`, which never follows a symlink and never writes into a
database fxcache did not make (each carries fxcache's SQLite ``application_id``),
and every value read back is type-checked before use.

The index dir does not grow without bound: each file records the cache dir it
indexes (table ``meta``, ``root``), and whenever a new index file is made,
:func:`prune_index_dir` deletes the index files whose cache dir no longer
exists (temp dirs of tests and benchmarks come and go). It only ever deletes
files named as fxcache names them (``index-<32 hex>.sqlite``) whose recorded
cache dir hashes to that name and is certainly gone (``ENOENT``, not an error
looking).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.reasons import Reason
from fxcache_core.state.own_db import open_own_db
from fxcache_core.state.rows import _origin_of, plan_facts_from_json
from fxcache_core.state.rows import from_json as from_json
from fxcache_core.state.rows import light as light
from fxcache_core.state.rows import to_json as to_json
from fxcache_core.state.trust import RACY_COARSE_NS as RACY_COARSE_NS
from fxcache_core.state.trust import RACY_FINE_NS as RACY_FINE_NS
from fxcache_core.state.trust import racily_clean as racily_clean


def fingerprint_sources() -> list[Path]:
    """The files whose code decides what an index row holds: every module of
    :mod:`fxcache_core.decode` (what an entry decodes to) and its tables (the code
    scan's, which decides an entry's foreign globals), this one and
    :mod:`fxcache_core.state.rows` (how a row is written and read back), in a fixed order."""
    core = Path(__file__).resolve().parent.parent
    return (sorted((core / "decode").glob("*.py")) + sorted((core / "decode").glob("*.json"))
            + [Path(__file__).resolve(), core / "state" / "rows.py"])


def _fingerprint() -> int:
    """The row format's version: a hash of the code that decodes entries and writes
    rows (:func:`fingerprint_sources`), so an upgrade that changes what a row holds
    never reads stale rows."""
    h = hashlib.sha256()
    for path in fingerprint_sources():
        h.update(path.name.encode())
        try:
            h.update(path.read_bytes())
        except OSError:
            pass
    return int(h.hexdigest()[:12], 16)


SCHEMA = _fingerprint()


def index_dir() -> Path | None:
    """fxcache's own dir for what it remembers: ``$FXCACHE_INDEX_DIR``, else
    ``$XDG_CACHE_HOME/fxcache``, else ``~/.cache/fxcache``; None when
    ``FXCACHE_NO_INDEX`` is set."""
    if os.environ.get("FXCACHE_NO_INDEX"):
        return None
    base = os.environ.get("FXCACHE_INDEX_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "fxcache")
    return Path(base)


def default_index_path(root: Path) -> Path | None:
    """Where the index of cache dir ``root`` lives, or None when turned off."""
    base = index_dir()
    if base is None:
        return None
    digest = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:32]
    return base / f"index-{digest}.sqlite"


def _storable(text: str) -> bool:
    """Whether SQLite can store ``text``: a file name that is not valid UTF-8 (POSIX
    names are bytes; Python spells the odd ones with lone surrogates) cannot be
    bound as TEXT, so such an entry is simply never indexed (decoded each run)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_INDEX_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (path TEXT PRIMARY KEY, size INT, mtime_ns INT, ino INT, schema INT,
                                    sha TEXT, corrupt TEXT, body TEXT, dev INT, ctime_ns INT, read_ns INT,
                                    corrupt_code TEXT);
CREATE TABLE IF NOT EXISTS key_origins (key_dir TEXT PRIMARY KEY, entry TEXT, size INT, mtime_ns INT, ino INT,
                                        schema INT, origin TEXT);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""
_INDEX_TABLES = (frozenset({"entries", "key_origins", "meta"}), frozenset({"entries", "key_origins"}))
"""The tables of an index file made before fxcache set its application_id (with
and without a recorded root): see :func:`open_own_db`."""

def _hit(sha: object, corrupt: object, body: object, code: object = None, plan_only: bool = False,
         ) -> tuple[str | None, DecodedEntry | str] | None:
    """A row's (sha, entry or reason), its values type-checked (None: a row fxcache
    did not write); a corrupt entry's reason keeps its code (``code``), which tells
    match whether torch skips the entry or reads it. ``plan_only``: the entry as the
    fields a plan reads (:class:`~fxcache_core.state.rows.PlanFacts`). Raises what
    :func:`from_json` raises."""
    if not (sha is None or isinstance(sha, str)):
        return None
    if corrupt is not None:
        if not isinstance(corrupt, str) or not (code is None or isinstance(code, str)):
            return None
        return sha, corrupt if code is None else Reason(corrupt, code)
    if not isinstance(body, str):
        return None
    return sha, plan_facts_from_json(body) if plan_only else from_json(body)


def _row_identity(size: object, mtime_ns: object, ino: object, schema: object, dev: object,
                  ctime_ns: object) -> tuple[object, ...]:
    return (dev, ino, size, mtime_ns, ctime_ns, schema)


def _now(e: Entry) -> tuple[object, ...]:
    """What a row must hold for ``e`` as scanned now: its identity and this fxcache's
    row format (a file fxcache could not stat whole, identity 0s, matches no row)."""
    return (*e.file.identity, SCHEMA) if e.file.ctime_ns else (None,)


_BULK_MIN = 2000
"""From this many entries on, :meth:`Index.get_many` reads the whole table once."""


class Index:
    """The SQLite index of one cache dir (see the module docstring).

    ``root``: the cache dir it indexes, recorded in the file so that
    :func:`prune_index_dir` can tell when that dir is gone; making a new index
    file prunes the others of its dir.

    ``get``/``put`` never raise: on any database error the index turns itself
    off for the rest of the run.
    """

    def __init__(self, path: Path | None, root: Path | None = None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._rows: list[tuple] = []  # entry rows put, not yet written (flush)
        self._key_rows: list[tuple] = []  # key origin rows put, not yet written
        # Entry file (FileInfo.where) -> whether the row get_many served for it in this run
        # proves its bytes (see proven), so that proven need not read the table again;
        # None until asked for (remember_proof): only gc asks proven.
        self._served: dict[str, bool] | None = None
        if path is None:
            return
        try:
            new = not os.path.lexists(path)
            db = open_own_db(path, _INDEX_SCHEMA, _INDEX_TABLES, timeout=5)
            if db is None:
                return
            db.executescript(_INDEX_SCHEMA)  # an older file may lack a table
            if "corrupt_code" not in {r[1] for r in db.execute("PRAGMA table_info(entries)")}:
                # rows without their proof (read_ns) or a corrupt entry's reason code: stale
                db.executescript("DROP TABLE entries;" + _INDEX_SCHEMA)
            if root is not None:
                real = os.path.realpath(root)
                was = db.execute("SELECT value FROM meta WHERE name = 'root'").fetchone()
                if was is None or was[0] != real:  # written once: a commit costs a sync of the file
                    try:
                        db.execute("INSERT OR REPLACE INTO meta VALUES ('root', ?)", (real,))
                    except UnicodeEncodeError:
                        pass  # a path that is not valid UTF-8 is not recorded: never pruned
                    db.commit()
            self._db = db
            if new:
                prune_index_dir(path.parent, keep=path)
        except (sqlite3.Error, OSError):
            self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def get(self, entry: Entry, plan_only: bool = False) -> tuple[str | None, DecodedEntry | str] | None:
        """(sha256 name of the content if it was hashed, the light entry or the
        reason it is corrupt), if the index has this file unchanged; else None.
        ``plan_only``: the entry as :class:`~fxcache_core.state.rows.PlanFacts`."""
        if self._rows or self._key_rows:
            self._write_rows()
        if self._db is None or not entry.file.mtime_ns or not _storable(entry.file.where):
            return None
        try:
            row = self._db.execute(
                "SELECT size, mtime_ns, ino, schema, sha, corrupt, body, dev, ctime_ns, corrupt_code FROM entries "
                "WHERE path = ?", (entry.file.where,)).fetchone()
            if row is None or _row_identity(row[0], row[1], row[2], row[3], row[7], row[8]) != _now(entry):
                return None
            return _hit(row[4], row[5], row[6], row[9], plan_only)
        except (sqlite3.Error, ValueError, KeyError, TypeError, IndexError):
            return None

    def get_many(self, entries: Iterable[Entry], plan_only: bool = False,
                 ) -> Iterator[tuple[Entry, tuple[str | None, DecodedEntry | str]]]:
        """``(entry, get(entry, plan_only))`` for each of ``entries`` the index has unchanged
        (the others are left out), in no particular order. For many entries, one
        pass over the table: a lookup each costs a B-tree descent into a file
        far larger than SQLite's page cache (~80 us an entry at 100k entries)."""
        want = {e.file.where: e for e in entries if e.file.mtime_ns}
        if self._rows or self._key_rows:
            self._write_rows()
        if self._db is None or not want:
            return
        if len(want) < _BULK_MIN:
            for e in want.values():
                hit = self.get(e, plan_only)
                if hit is not None:
                    yield e, hit
            return
        try:
            rows = self._db.execute(
                "SELECT path, size, mtime_ns, ino, schema, sha, corrupt, body, dev, ctime_ns, read_ns, "
                "corrupt_code FROM entries")
            served = self._served
            for path, size, mtime_ns, ino, schema, sha, corrupt, body, dev, ctime_ns, read_ns, code in rows:
                e = want.get(path)
                if e is None:
                    continue
                # _row_identity(...) == _now(e), spelled out: one identity tuple a row
                ident = e.file.identity
                if not ident[4] or (dev, ino, size, mtime_ns, ctime_ns) != ident or schema != SCHEMA:
                    continue
                try:
                    hit = _hit(sha, corrupt, body, code, plan_only)
                except (ValueError, KeyError, TypeError, IndexError):
                    continue
                if hit is not None:
                    if served is not None:
                        # keyed by the scan's string, not the row's copy of it: memory
                        served[e.file.where] = isinstance(read_ns, int) and not racily_clean(ident, read_ns)
                    yield e, hit
        except sqlite3.Error:
            self._db = None

    def put(self, entry: Entry, sha: str | None, result: DecodedEntry | str, row: str | None = None,
            read_ns: int = 0) -> None:
        """Remember a decoded entry (or the reason it is corrupt) for this file, under
        its :attr:`~fxcache_core.cache.scan.FileInfo.identity` as scanned; ``row``: its
        :func:`to_json`, when already at hand. Only for bytes proven to be that file's
        (the catalog's part: :func:`fxcache_core.catalog.pool.proven`); ``read_ns``:
        when that reading ended (epoch ns), which :meth:`proven` holds the row to
        (0: unknown, and the row proves nothing to gc)."""
        if self._db is None or not entry.file.mtime_ns or not _storable(entry.file.where):
            return
        corrupt, body = (result, None) if isinstance(result, str) else (None, row or to_json(result))
        if corrupt is not None and not _storable(corrupt):
            return  # a reason quoting what the pickle named, not valid UTF-8: not kept
        code = getattr(corrupt, "code", None) if corrupt is not None else None
        if self._served is not None:
            self._served.pop(entry.file.where, None)  # its row is replaced: proven reads the new one
        self._rows.append((entry.file.where, entry.size, entry.file.mtime_ns, entry.file.ino,
                           SCHEMA, sha, None if corrupt is None else str.__str__(corrupt), body,
                           entry.file.dev, entry.file.ctime_ns, read_ns or None, code))
        if len(self._rows) >= 1000:
            self._write_rows()  # committed with the rest of the run's rows: one transaction

    def remember_proof(self) -> None:
        """From now on, remember whether each row :meth:`get_many` serves in one pass
        proves its file's bytes, for :meth:`proven` (a caller that will ask, as gc
        does; a dict entry per row served)."""
        if self._served is None:
            self._served = {}

    def proven(self, entries: Iterable[Entry]) -> set[str]:
        """The entry files (``FileInfo.where``) among ``entries`` whose row proves the
        file's bytes as scanned now: its identity is the scanned one, in this row
        format, and the reading it was made from ended out of the racily clean window
        (:func:`~fxcache_core.state.trust.racily_clean` of the row's identity and
        ``read_ns``). A row without its reading's time (``put`` without one) proves
        nothing. Whether the file system lets an identity prove anything is the
        caller's part (:func:`~fxcache_core.state.trust.identity_is_proof`).

        For an entry whose row :meth:`get_many` served in this run (read in one pass
        over the table, not replaced since by :meth:`put`), the answer is that row's,
        as it was served: the row the caller's data came from, judged as above, with
        no second read of the table."""
        served = self._served or {}
        out: set[str] = set()
        want: dict[str, Entry] = {}
        for e in entries:
            if not e.file.ctime_ns:
                continue
            was = served.get(e.file.where)
            if was is None:
                want[e.file.where] = e
            elif was:
                out.add(e.file.where)
        if self._rows:
            self._write_rows()
        if self._db is None:
            return set()
        if not want:
            return out
        sql = "SELECT path, size, mtime_ns, ino, schema, dev, ctime_ns, read_ns FROM entries"
        try:
            if len(want) < _BULK_MIN:
                rows = [r for p in want if _storable(p)
                        for r in self._db.execute(sql + " WHERE path = ?", (p,)).fetchall()]
            else:
                rows = self._db.execute(sql)
            for path, size, mtime_ns, ino, schema, dev, ctime_ns, read_ns in rows:
                e = want.get(path)
                if (e is not None and isinstance(read_ns, int)
                        and _row_identity(size, mtime_ns, ino, schema, dev, ctime_ns) == _now(e)
                        and not racily_clean(e.file.identity, read_ns)):
                    out.add(path)
        except sqlite3.Error:
            self._db = None
            return set()
        return out

    def key_origins(self, keys: Iterable[CacheKey]) -> dict[str, Origin | None]:
        """Key -> the origin remembered for it (None: its entry has none), for each
        of ``keys`` whose remembered entry file is still in the key unchanged (size,
        mtime_ns, inode); keys without such a row are left out. One pass over the
        table (a row per key)."""
        want = {k.where: k for k in keys}
        out: dict[str, Origin | None] = {}
        if self._rows or self._key_rows:
            self._write_rows()
        if self._db is None or not want:
            return out
        try:
            rows = self._db.execute(
                "SELECT key_dir, entry, size, mtime_ns, ino, schema, origin FROM key_origins").fetchall()
        except sqlite3.Error:
            self._db = None
            return out
        parsed: dict[str, Origin] = {}  # a function's keys share one origin: parsed once
        for key_dir, entry, size, mtime_ns, ino, schema, origin in rows:
            k = want.get(key_dir)
            if k is None or schema != SCHEMA:
                continue
            e = next((e for e in k.entries if e.file.name == entry), None)
            if e is None or (e.size, e.file.mtime_ns, e.file.ino) != (size, mtime_ns, ino):
                continue
            if origin is None:
                out[k.key] = None
                continue
            o = parsed.get(origin)
            if o is None:
                try:
                    o = parsed[origin] = _origin_of(json.loads(origin))
                except (ValueError, KeyError, TypeError, IndexError):
                    continue
            out[k.key] = o
        return out

    def put_key_origin(self, key: CacheKey, entry: Entry, origin: Origin | None) -> None:
        """Remember that ``entry`` (of ``key``) says ``key`` was compiled from ``origin``."""
        if self._db is None or not entry.file.mtime_ns or not _storable(entry.file.where):
            return  # (the entry's path holds the key's: storable both or neither)
        body = None if origin is None else json.dumps(  # with the shared stack: it names the function
            [origin.function, origin.file, origin.line, list(origin.functions), [list(f) for f in origin.outer]])
        self._key_rows.append((key.where, entry.file.name, entry.size, entry.file.mtime_ns,
                               entry.file.ino, SCHEMA, body))
        if len(self._key_rows) >= 1000:
            self._write_rows()

    def _write_rows(self) -> None:
        """Write the rows :meth:`put` and :meth:`put_key_origin` hold, an ``executemany``
        a table (not committed: :meth:`flush` commits a run's rows in one transaction);
        reads call it first, so they see every row put."""
        rows, self._rows = self._rows, []
        key_rows, self._key_rows = self._key_rows, []
        if self._db is not None and (rows or key_rows):
            try:
                if rows:
                    self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
                if key_rows:
                    self._db.executemany("INSERT OR REPLACE INTO key_origins VALUES (?, ?, ?, ?, ?, ?, ?)", key_rows)
            except sqlite3.Error:
                self._db = None

    def flush(self) -> None:
        """Write what :meth:`put` and :meth:`put_key_origin` hold and commit: the rows of
        a run are one transaction (a run stopped before it leaves the index as it was)."""
        self._write_rows()
        if self._db is not None:
            try:
                self._db.commit()
            except sqlite3.Error:
                self._db = None

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            self._db.close()
            self._db = None


INDEX_NAME_RE = re.compile(r"index-([0-9a-f]{32})\.sqlite")
"""The names of fxcache's index files (:func:`default_index_path`)."""


def indexed_root(path: Path) -> str | None:
    """The cache dir the index file at ``path`` indexes (its real path), or None
    when it cannot be told: read from its ``meta`` table, else (files made
    before it had one) from an entry path it holds; either way only if that
    dir hashes to the file's name. Opens the file read-only."""
    m = INDEX_NAME_RE.fullmatch(path.name)
    if m is None:
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
    except sqlite3.Error:
        return None
    candidates: list[str] = []
    try:
        try:
            row = db.execute("SELECT value FROM meta WHERE name = 'root'").fetchone()
            if row and isinstance(row[0], str):
                candidates.append(row[0])
        except sqlite3.Error:
            pass
        try:
            row = db.execute("SELECT path FROM entries LIMIT 1").fetchone()
            if row and isinstance(row[0], str):
                for sub in ("/fxgraph/", "/aotautograd/"):
                    if sub in row[0]:
                        candidates.append(row[0][: row[0].rindex(sub)])
        except sqlite3.Error:
            pass
    finally:
        db.close()
    for root in candidates:
        if hashlib.sha256(os.fsencode(root)).hexdigest()[:32] == m.group(1):
            return root
    return None


def prune_index_dir(index_dir: Path, keep: Path | None = None, min_age_s: float = 3600.0) -> list[Path]:
    """Delete the index files in ``index_dir`` whose cache dir is gone; return them.

    Only files named ``index-<32 hex>.sqlite`` (and their ``-journal``/``-wal``/
    ``-shm`` companions, and the ``usage-<same hex>.sqlite`` trace facts of the
    same cache dir, :mod:`fxcache_core.state.usage`) whose recorded cache dir
    (:func:`indexed_root`) hashes to their name and does not exist (``ENOENT``
    on ``stat``: a dir fxcache merely could not look at is not gone), untouched
    for ``min_age_s`` seconds (a run may be filling it). ``keep`` is never
    deleted. Never raises.
    """
    removed: list[Path] = []
    try:
        names = os.listdir(index_dir)
    except OSError:
        return removed
    now = time.time()
    for name in names:
        p = Path(index_dir) / name
        if INDEX_NAME_RE.fullmatch(name) is None or (keep is not None and p == keep):
            continue
        try:
            st = os.lstat(p)
            if not os.path.isfile(p) or os.path.islink(p) or now - st.st_mtime < min_age_s:
                continue
        except OSError:
            continue
        root = indexed_root(p)
        if root is None:
            continue
        try:
            os.stat(root)
            continue
        except OSError as e:
            if e.errno != errno.ENOENT:
                continue
        usage = p.with_name("usage-" + name[len("index-"):])  # the same cache dir's trace facts
        for base in (p, usage):
            for suffix in ("", "-journal", "-wal", "-shm"):
                try:
                    os.unlink(str(base) + suffix)
                except OSError:
                    continue
                if base == p and not suffix:
                    removed.append(p)
    return removed
