"""Link-safe file access: the one place where fxcache opens files and dirs it does not own.

A cache dir is written by other processes (torch, Triton, a compile running
now) and may be shared or planted with hostile names, so every open of what it
holds must guard against three things, and each guard is easy to forget:

* **Links.** A dir below the cache dir that is swapped for a symlink would lead
  a read, a write or a deletion out of it. :class:`DirWalker` opens each level
  relative to its parent's fd with ``O_DIRECTORY | O_NOFOLLOW`` (and checks it
  is the dir expected), as ``shutil.rmtree``'s fd-based walk does
  (``_rmtree_safe_fd`` in Lib/shutil.py); a name re-pointed after it was checked
  is never followed. Files are opened ``O_NOFOLLOW`` where asked.
* **Access times.** gc ranks entries by last use, the atime where the file
  system records reads; fxcache's own reads must not count as a use.
  :func:`open_noatime` opens with ``O_NOATIME`` where the OS allows it (Linux,
  for the file's owner and root) and falls back to a plain open when refused.
* **FIFOs and devices.** Opening a FIFO for reading blocks until a writer comes.
  :func:`open_regular` and :func:`read_capped` open ``O_NONBLOCK`` and check
  ``fstat`` on the descriptor itself, so a FIFO or device put in a file's place
  is refused, never waited on, and a file over a cap is never read whole.

No other module of fxcache builds open flags of its own (``tests/unit/test_fsutil.py``
checks it), so these guards are written and tested once. Linux and the BSDs have
everything used here; elsewhere a flag that does not exist is 0 and
:data:`DIR_FD_SUPPORTED` says whether fd-relative walks can be trusted.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
from collections import OrderedDict

DirId = tuple[int, int]
"""``(st_dev, st_ino)`` of a directory."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOATIME = getattr(os, "O_NOATIME", 0)

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
"""``open`` flags of a dir below a root: a dir only, never through a symlink."""
ROOT_DIR_FLAGS = DIR_FLAGS & ~_NOFOLLOW
"""``open`` flags of a root dir, opened as named (a symlinked cache dir is the user's choice)."""
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC

DIR_FD_SUPPORTED = (os.open in os.supports_dir_fd and os.unlink in os.supports_dir_fd
                    and os.stat in os.supports_dir_fd and bool(_NOFOLLOW))
"""Whether this platform opens, stats and unlinks relative to a dir fd and has
``O_NOFOLLOW``: without it a walk below a root cannot refuse a symlinked level."""

NOATIME_AVAILABLE = bool(_NOATIME)
"""Whether this OS has ``O_NOATIME`` (Linux); elsewhere reads move atimes as any read does."""

_LINK_ERRNOS = frozenset({errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", -1)})


def is_link_refusal(e: OSError) -> bool:
    """Whether ``e`` is how an ``O_NOFOLLOW`` or ``O_DIRECTORY`` open refuses a name:
    ``ELOOP`` (a symlink), ``ENOTDIR`` (not a dir) or ``EMLINK`` (FreeBSD's
    ``O_NOFOLLOW``)."""
    return e.errno in _LINK_ERRNOS


class NotRegularFile(OSError):
    """:func:`open_regular` opened something that is not a regular file (a FIFO, a
    device, a socket, a dir); the fd is closed. ``mode``: its ``st_mode``."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        super().__init__(f"not a regular file: {os.fspath(path)}")
        self.mode = mode


def open_dir(path: str | os.PathLike[str], *, dir_fd: int | None = None,
             follow_symlinks: bool = False) -> int:
    """A read-only fd of the dir ``path`` (relative to ``dir_fd`` if given), never
    through a symlink unless ``follow_symlinks`` (then for a root named by the user).

    Raises:
        OSError: it cannot be opened; a symlink or a non-dir gives an error for
            which :func:`is_link_refusal` is true.
    """
    return os.open(path, ROOT_DIR_FLAGS if follow_symlinks else DIR_FLAGS, dir_fd=dir_fd)


def open_file(path: str | os.PathLike[str], *, dir_fd: int | None = None, follow_symlinks: bool = True,
              nonblocking: bool = False, noatime: bool = False) -> int:
    """A read-only fd of ``path`` (relative to ``dir_fd`` if given): with
    ``O_NOFOLLOW`` unless ``follow_symlinks``; with ``O_NONBLOCK`` if
    ``nonblocking`` (opening a FIFO then never waits for a writer; the fd stays
    non-blocking); with ``O_NOATIME`` if ``noatime`` and the OS allows it (a plain
    open when refused: ``EPERM`` for a file of another user).

    Raises:
        OSError: it cannot be opened (``ELOOP`` for a symlink not followed).
    """
    flags = os.O_RDONLY | _CLOEXEC
    if not follow_symlinks:
        flags |= _NOFOLLOW
    if nonblocking:
        flags |= _NONBLOCK
    if not (noatime and _NOATIME):
        return os.open(path, flags, dir_fd=dir_fd)
    try:
        return os.open(path, flags | _NOATIME, dir_fd=dir_fd)
    except PermissionError:
        return os.open(path, flags, dir_fd=dir_fd)


def open_noatime(path: str | os.PathLike[str], *, dir_fd: int | None = None, follow_symlinks: bool = True,
                 nonblocking: bool = False) -> int:
    """A read-only fd of ``path`` that reading does not move the access time of, where
    the OS allows it: :func:`open_file` with ``noatime``.

    Raises:
        OSError: it cannot be opened (``ELOOP`` for a symlink not followed).
    """
    return open_file(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks, nonblocking=nonblocking,
                     noatime=True)


def open_regular(path: str | os.PathLike[str], *, dir_fd: int | None = None, follow_symlinks: bool = True,
                 noatime: bool = False) -> int:
    """A read-only, blocking fd of the regular file ``path``: opened non-blocking (a
    FIFO or a device put there is refused, never waited on), checked with ``fstat``
    on the fd itself, then made blocking. Other arguments as :func:`open_file`.

    Raises:
        NotRegularFile: it is not a regular file (the fd is closed).
        OSError: it cannot be opened or stat'ed.
    """
    fd = open_file(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks, nonblocking=True, noatime=noatime)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_capped(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes | None:
    """The bytes of the regular file ``path`` (opened non-blocking and with
    ``O_NOATIME`` where allowed, so a FIFO put there is never waited on), or None
    when it cannot be opened or read, is not a regular file, or holds more than
    ``limit`` bytes (never more than ``limit + 1`` are read)."""
    try:
        fd = open_noatime(path, follow_symlinks=follow_symlinks, nonblocking=True)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            data = f.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def create_new(name: str | os.PathLike[str], mode: int, *, dir_fd: int | None = None) -> int:
    """A write-only fd of a file made here as ``name`` (relative to ``dir_fd`` if
    given) with permission bits ``mode``: ``O_CREAT | O_EXCL | O_NOFOLLOW``, so it
    fails where any name is (a symlink included), never writing through one.

    Raises:
        FileExistsError: something is there.
        OSError: it cannot be made.
    """
    return os.open(name, _NEW_FILE_FLAGS, mode, dir_fd=dir_fd)


class WalkFailure(str, enum.Enum):
    """Why a dir below the root was not opened (:attr:`DirRefused.why`)."""

    GONE = "gone"
    """Nothing by that name (``ENOENT``)."""
    NOT_A_DIR = "not-a-dir"
    """A symlink (never followed), or a file (:func:`is_link_refusal`)."""
    REPLACED = "replaced"
    """A dir, but another one than expected (its ``(st_dev, st_ino)`` differ)."""
    UNOPENED = "unopened"
    """The OS refused to open (or make) it otherwise."""
    UNSTATED = "unstated"
    """Opened, but ``fstat`` failed."""


class DirRefused(Exception):
    """A dir on a walk was not opened as the dir wanted.

    Attributes:
        parts: the names from the root down to the dir that was refused (``()``:
            the root itself, when it is another dir than expected).
        why: which refusal (:class:`WalkFailure`).
        error: the OS error behind it (None for :attr:`WalkFailure.REPLACED`).
    """

    def __init__(self, parts: tuple[str, ...], why: WalkFailure, error: OSError | None = None) -> None:
        super().__init__(f"{'/'.join(parts) or '.'}: {why.value}")
        self.parts = parts
        self.why = why
        self.error = error

    @property
    def strerror(self) -> str:
        """The OS's words for :attr:`error` (its ``strerror``, else its text; ``""`` for none)."""
        if self.error is None:
            return ""
        return self.error.strerror or str(self.error)


def _dir_id(st: os.stat_result) -> DirId:
    return (st.st_dev, st.st_ino)


def _open_level(name: str, parent: int, here: tuple[str, ...], expect: DirId | None,
                make: bool) -> tuple[int, DirId, bool]:
    """One level of a walk: (fd, id, whether it was made here). See :meth:`DirWalker.walk`."""
    made = False
    try:
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not make:
                raise
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
                made = True
            except FileExistsError:
                pass  # made meanwhile by another process (a compile writing there): opened as any other
            fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError as e:
        raise DirRefused(here, WalkFailure.GONE, e) from None
    except OSError as e:
        why = WalkFailure.NOT_A_DIR if is_link_refusal(e) else WalkFailure.UNOPENED
        raise DirRefused(here, why, e) from None
    try:
        this = _dir_id(os.fstat(fd))
    except OSError as e:
        os.close(fd)
        raise DirRefused(here, WalkFailure.UNSTATED, e) from None
    if expect is not None and this != expect:
        os.close(fd)
        raise DirRefused(here, WalkFailure.REPLACED)
    return fd, this, made


def open_subdir(name: str, parent: int, expect: DirId | None = None) -> tuple[int, DirId]:
    """The dir ``name`` in the open dir ``parent``, opened without following a
    symlink, and its ``(st_dev, st_ino)``; it must be ``expect`` when given (the dir
    a listing of ``parent`` showed). The caller closes the fd.

    Raises:
        DirRefused: it is gone, not a dir (a symlink), another dir than ``expect``,
            or cannot be opened or stat'ed (``parts`` is ``(name,)``).
    """
    fd, this, _ = _open_level(name, parent, (name,), expect, False)
    return fd, this


class DirWalker:
    """Dirs below one root, each opened relative to its parent's fd, never through a symlink.

    The root is opened as named (:data:`ROOT_DIR_FLAGS`: a symlinked cache dir is
    the user's choice); every level below it with :data:`DIR_FLAGS` relative to
    the level above, and checked against the ``(st_dev, st_ino)`` expected of it
    where one is given. A level swapped for a symlink, a file or another dir is
    refused where it was swapped (:class:`DirRefused`), so nothing is reached
    through a name re-pointed after its check. Opened dirs are kept, at most
    ``keep`` of them (least recently used closed first; a pack of 10,000 keys
    has as many key dirs, past the usual limit of 1,024 open files), so the
    files of one dir cost one walk. A context manager; :meth:`close` closes
    every fd.

    Attributes:
        root: the root as given.
        root_fd: the root's fd (owned by the walker).
        root_id: the root's ``(st_dev, st_ino)``.
        made: the dirs :meth:`walk` made (names from the root), in creation order.

    Raises:
        OSError: from the constructor, when the root cannot be opened or stat'ed.
    """

    def __init__(self, root: str | os.PathLike[str], *, keep: int = 64) -> None:
        if keep < 1:
            raise ValueError("a walker keeps at least one dir open")
        self.root = root
        self.keep = keep
        self.made: list[tuple[str, ...]] = []
        self._fds: OrderedDict[tuple[str, ...], tuple[int, tuple[DirId, ...]]] = OrderedDict()
        self.root_fd = open_dir(root, follow_symlinks=True)
        try:
            self.root_id = _dir_id(os.fstat(self.root_fd))
        except BaseException:
            os.close(self.root_fd)
            raise

    def __enter__(self) -> DirWalker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def walk(self, parts: tuple[str, ...], expect: tuple[DirId, ...] | None = None,
             make: bool = False) -> tuple[int, tuple[DirId, ...]]:
        """The fd of the dir ``parts`` below the root, and the ids of the root and of
        each level down to it (``len(parts) + 1`` items), as opened. The fd belongs
        to the walker (do not close it); it stays valid until the next call.

        ``expect``: the ids those levels must have (``len(parts) + 1`` items, the
        root's first); a level kept open from an earlier call is checked against
        them too. ``make``: a missing level is made (mode 0o755, recorded in
        :attr:`made`; one another process makes meanwhile is used, not recorded).

        Raises:
            DirRefused: a level is missing (and not ``make``), is not a dir reached
                without a symlink, is another dir than expected, or cannot be
                opened; its ``parts`` name that level (``()``: the root is another
                dir than expected).
        """
        fd, chain, depth = self.root_fd, (self.root_id,), 0
        for d in range(len(parts), 0, -1):  # the deepest level already open
            got = self._fds.get(parts[:d])
            if got is not None:
                self._fds.move_to_end(parts[:d])
                (fd, chain), depth = got, d
                break
        if expect is not None and chain != expect[:depth + 1]:
            raise DirRefused(parts[:depth], WalkFailure.REPLACED)
        for d in range(depth, len(parts)):
            here = parts[:d + 1]
            fd, this, made = _open_level(parts[d], fd, here, None if expect is None else expect[d + 1], make)
            if made:
                self.made.append(here)
            chain = (*chain, this)
            self._keep(here, fd, chain)
        return fd, chain

    def forget(self, parts: tuple[str, ...]) -> None:
        """Close the kept fds of the dir ``parts`` and of every dir below it (before
        it is removed)."""
        for key in [k for k in self._fds if k[:len(parts)] == parts]:
            _close(self._fds.pop(key)[0])

    def close(self) -> None:
        """Close every fd the walker holds, the root's included."""
        for fd, _chain in self._fds.values():
            _close(fd)
        self._fds.clear()
        if self.root_fd >= 0:
            _close(self.root_fd)
            self.root_fd = -1

    def _keep(self, parts: tuple[str, ...], fd: int, chain: tuple[DirId, ...]) -> None:
        old = self._fds.pop(parts, None)
        if old is not None:
            _close(old[0])
        self._fds[parts] = (fd, chain)
        while len(self._fds) > self.keep:
            _close(self._fds.popitem(last=False)[1][0])


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


__all__ = ["DIR_FD_SUPPORTED", "DIR_FLAGS", "NOATIME_AVAILABLE", "ROOT_DIR_FLAGS", "DirId", "DirRefused",
           "DirWalker", "NotRegularFile", "WalkFailure", "create_new", "is_link_refusal", "open_dir",
           "open_file", "open_noatime", "open_regular", "open_subdir", "read_capped"]
