"""SQLite files of fxcache's own, in a dir others may write: never through a link, never theirs.

fxcache keeps two SQLite files per cache dir in its index dir (the index of
decoded entries, :mod:`fxcache_core.state.index`, and the facts traces gave,
:mod:`fxcache_core.state.usage`). Whoever can write that dir can put a symlink,
a hard link or another application's database at their names; SQLite itself
follows a symlink to the file it opens. :func:`open_own_db` opens such a file
only when it is fxcache's: a regular file of this user that carries fxcache's
SQLite ``application_id`` (:data:`APPLICATION_ID`), made by fxcache without ever
following a link.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from fxcache_core.fsutil import create_new

APPLICATION_ID = 0x66786331
"""The SQLite ``application_id`` of every database fxcache makes (``fxc1``): what
:func:`open_own_db` writes only into."""


def _image(schema: str) -> bytes:
    """A whole SQLite database file holding ``schema`` and fxcache's application_id."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        mem.executescript(schema)
        mem.commit()
        return mem.serialize()
    finally:
        mem.close()


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def open_own_db(path: Path, schema: str, legacy_tables: tuple[frozenset[str], ...],
                timeout: float = 5.0) -> sqlite3.Connection | None:
    """Open fxcache's own SQLite file ``path`` (in the index dir), or None when it
    must not be: never through a symlink, never one fxcache did not make.

    * absent: made here: the whole database image (``schema``, fxcache's
      :data:`APPLICATION_ID`) written through a file created
      ``O_CREAT|O_EXCL|O_NOFOLLOW`` (mode 0600), then linked to the name
      (:func:`_make`);
    * a symlink, an empty file or a file with other hard links: its name is
      removed from the index dir (the link, never its target; the other names of
      the file keep it) and the file is made anew;
    * anything else that is not a regular file of this user, or one that others
      may write (group or world write bits): refused;
    * a database whose ``application_id`` is not fxcache's: refused, unless its
      id is unset and its tables are exactly one of ``legacy_tables`` (a file
      made by an fxcache before this check), which is then marked as fxcache's.

    SQLite opens by path: once it has, the file it resolved (``PRAGMA
    database_list``) must be the checked one (same real path, device and
    inode), else refused. SQLite itself creates its journal with ``O_NOFOLLOW``.
    Never raises for what the dir holds (OSError and sqlite3.Error give None).
    """
    try:
        return _open_own_db(Path(path), schema, legacy_tables, timeout)
    except (OSError, sqlite3.Error, ValueError):
        return None


def _make(path: Path, image: bytes) -> os.stat_result | None:
    """Make ``path`` holding ``image``, or None when something is there already: the
    image is written to a file of its own made ``O_CREAT|O_EXCL|O_NOFOLLOW`` (mode
    0600) in the same dir, then hard-linked to ``path`` (which fails, never follows,
    where any name is), so no run ever sees it empty or half written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = create_new(tmp, 0o600)
    try:
        try:
            view = memoryview(image)
            while view:
                view = view[os.write(fd, view):]
            st = os.fstat(fd)
        finally:
            os.close(fd)
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        return None
    finally:
        os.unlink(tmp)
    return st


def _open_own_db(path: Path, schema: str, legacy: tuple[frozenset[str], ...],
                 timeout: float) -> sqlite3.Connection | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and (stat.S_ISLNK(st.st_mode)
                           or stat.S_ISREG(st.st_mode) and (st.st_size == 0 or st.st_nlink > 1)):
        os.unlink(path)  # the name in fxcache's dir: never what a link points to
        st = None
    if st is None:
        st = _make(path, _image(schema))
        if st is None:  # another run made it meanwhile: theirs, checked as any file is
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                return None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None  # not a file only this user can write: what it says is not fxcache's
    db = sqlite3.connect(path, timeout=timeout)
    try:
        main = next((r[2] for r in db.execute("PRAGMA database_list") if r[1] == "main"), None)
        now = os.lstat(path)
        if (main != os.path.join(os.path.realpath(path.parent), path.name) or not stat.S_ISREG(now.st_mode)
                or not _same(now, st)):
            raise ValueError("not the file checked")  # swapped while SQLite opened it
        app = db.execute("PRAGMA application_id").fetchone()[0]
        if app != APPLICATION_ID:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if app != 0 or tables not in legacy:
                raise ValueError("not fxcache's database")
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.commit()
        return db
    except BaseException:
        db.close()
        raise


__all__ = ["APPLICATION_ID", "open_own_db"]
