"""Deleting planned files and dirs under a root, through directory file descriptors.

A gc plan names what it deletes relative to the cache root, and records what
it found at each level: the ``(st_dev, st_ino)`` of the root and of every dir
from it down to the file's parent (:func:`locate`). Deleting then walks the
way ``shutil.rmtree``'s fd-based walk does (``_rmtree_safe_fd`` in
Lib/shutil.py): the root is opened once, each level below it with
``O_DIRECTORY | O_NOFOLLOW`` relative to the one above (``dir_fd=``; the walk
is :class:`fxcache_core.fsutil.DirWalker`'s), and each opened dir is compared
with the plan; the file is ``fstatat``'d in its opened dir without following a
symlink, checked by the caller (inode, size, mtime...), and ``unlinkat``'d in
that same dir (:meth:`DirWalk.unlink`). A dir that was
swapped for a symlink, or for another dir, after the plan is refused at the
level where it was swapped; nothing is reached through a name that can be
re-pointed after its check.

What is left is inside one verified dir: between the ``fstatat`` and the
``unlinkat`` of a name, another file can be renamed over that name. What is
unlinked is then that name in that dir, inside the cache, never a file
elsewhere.

Never raises for one path: every ``OSError`` becomes a :class:`Refused` (or
propagates as ``OSError`` from :meth:`DirWalk.unlink`, for the caller to
report), so one bad path never stops the rest of a plan. Linux and the BSDs
(``dir_fd`` and ``O_NOFOLLOW`` support); general to any path under the root,
not only cache entries.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.fsutil import (
    DIR_FD_SUPPORTED,
    DirId,
    DirRefused,
    DirWalker,
    WalkFailure,
    open_file,
)
from fxcache_core.reasons import Reason

SUPPORTED = DIR_FD_SUPPORTED
"""Whether this platform can delete through directory file descriptors (if not,
:class:`DirWalk` refuses every deletion)."""


@dataclass(frozen=True, slots=True)
class Located:
    """Where a planned file or dir is under the root, as the plan found it.

    Attributes:
        parts: the names from the root down, the target itself last.
        dirs: ``(st_dev, st_ino)`` of the root and of each dir from it down to
            the target's parent (``len(parts)`` items): ``dirs[i]`` is the dir
            that holds ``parts[i]``.
    """

    parts: tuple[str, ...]
    dirs: tuple[DirId, ...]


class Refused(Exception):
    """A planned path is not deleted. ``kind`` is ``skipped`` (it changed, vanished
    or is not safe to touch) or ``failed`` (the OS refused); ``why`` says which
    (a :class:`~fxcache_core.reasons.Reason` where this module refused)."""

    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind
        self.why = why


def relative_parts(root: Path | str, path: str) -> tuple[str, ...] | None:
    """The names of ``path`` below ``root`` (both as a scan spells them: ``path``
    starts with ``root``), or None when it is not below it or names ``.``/``..``."""
    base = os.fspath(root).rstrip(os.sep) + os.sep
    if not path.startswith(base):
        return None
    parts = tuple(path[len(base):].split(os.sep))
    if not parts or any(p in ("", ".", "..") for p in parts):
        return None
    return parts


class DirWalk:
    """Open dirs under one root level by level, never through a symlink: a
    :class:`~fxcache_core.fsutil.DirWalker` whose refusals are :class:`Refused`.

    Use as a context manager. The root itself is opened as named (a symlinked
    cache dir is the user's choice); every level below it with ``O_NOFOLLOW``
    relative to its parent. Opened dirs are kept (a few dozen, least recently
    used closed first), so a plan's files in one key dir cost one open.
    """

    _KEEP = 64

    def __init__(self, root: Path | str) -> None:
        self.root = os.fspath(root)
        self._walker: DirWalker | None = None
        self._root_error: str | None = None

    def __enter__(self) -> DirWalk:
        if not SUPPORTED:
            self._root_error = Reason("this platform cannot delete through directory file descriptors",
                                      "platform-unsupported")
            return self
        try:
            self._walker = DirWalker(self.root, keep=self._KEEP)
        except OSError as e:
            self._root_error = Reason(f"cannot open the cache dir: {e.strerror or e}", "cache-dir-unopened")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._walker is not None:
            self._walker.close()
            self._walker = None

    def _opened(self) -> DirWalker:
        if self._walker is None:
            raise Refused("failed", self._root_error or Reason("the cache dir is not open", "cache-dir-unopened"))
        return self._walker

    def root_id(self) -> DirId:
        """The root's ``(st_dev, st_ino)``.

        Raises:
            Refused: the root could not be opened.
        """
        return self._opened().root_id

    def dir_fd(self, parts: tuple[str, ...], ids: tuple[DirId, ...] | None = None,
               ) -> tuple[int, tuple[DirId, ...]]:
        """The fd of the dir ``parts`` below the root, and the ids of the root and
        of each level down to it (``len(parts) + 1`` items), as opened.

        ``ids``: what the plan recorded for those levels; each opened level must
        match, else the walk refuses. The fd belongs to the walk (do not close it).

        Raises:
            Refused: a level is missing, is not a dir (a symlink is not followed),
                is another dir than planned, or cannot be opened.
        """
        walker = self._opened()
        if ids is not None and len(ids) != len(parts) + 1:
            raise Refused("skipped", Reason("the plan did not record every level of its path", "path-unrecorded"))
        try:
            return walker.walk(parts, ids)
        except DirRefused as e:
            raise _refused(e) from None

    def locate(self, parts: tuple[str, ...]) -> Located:
        """Record where ``parts`` is: the ids of the root and of each dir above it.

        Raises:
            Refused: a level above the target is not a dir reachable without symlinks.
        """
        _fd, ids = self.dir_fd(parts[:-1])
        return Located(parts, ids)

    def lstat(self, at: Located) -> os.stat_result:
        """``fstatat`` of the target in its verified dir, not following a symlink.

        Raises:
            Refused: a dir above it is not what the plan recorded.
            OSError: from ``fstatat`` (``FileNotFoundError``: it is gone).
        """
        fd, _ = self.dir_fd(at.parts[:-1], at.dirs)
        return os.stat(at.parts[-1], dir_fd=fd, follow_symlinks=False)

    def unlink(self, at: Located, check: Callable[[os.stat_result, int], str | None]) -> os.stat_result:
        """Delete the file ``at`` if ``check`` of its ``fstatat`` result and its
        verified dir's fd says nothing against it (``check`` returns why not, or
        None; it may look at siblings relative to that fd). Returns the stat result.

        Raises:
            Refused: a dir above it is not what the plan recorded, or ``check`` refused.
            OSError: from ``fstatat``/``unlinkat`` (``FileNotFoundError``: it is gone).
        """
        fd, _ = self.dir_fd(at.parts[:-1], at.dirs)
        st = os.stat(at.parts[-1], dir_fd=fd, follow_symlinks=False)
        why = check(st, fd)
        if why is not None:
            raise Refused("skipped", why)
        os.unlink(at.parts[-1], dir_fd=fd)
        return st

    def rmdir(self, parts: tuple[str, ...], ids: tuple[DirId, ...]) -> bool:
        """Remove the dir ``parts`` if it is empty and is the dir the plan recorded
        (``ids``: root down to that dir itself, ``len(parts) + 1`` items).
        True if removed; False (nothing raised) otherwise."""
        try:
            fd, _ = self.dir_fd(parts[:-1], ids[:-1])
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != ids[-1]:
                return False
            self._opened().forget(parts)
            os.rmdir(parts[-1], dir_fd=fd)  # fails unless empty
        except (Refused, OSError):
            return False
        return True

    def open_in(self, dir_parts: tuple[str, ...], name: str) -> int:
        """Open ``name`` read-only in the dir ``dir_parts`` (reached without symlinks
        from the root as it is now), not following a symlink and non-blocking (a
        FIFO is never waited on); the caller closes the fd.

        Raises:
            Refused: a dir on the way is not a dir reachable without symlinks.
            OSError: from ``openat`` (``ELOOP`` for a symlink, ``ENOENT``...).
        """
        fd, _ = self.dir_fd(dir_parts)
        return open_file(name, dir_fd=fd, follow_symlinks=False, nonblocking=True)


def _refused(e: DirRefused) -> Refused:
    """The :class:`Refused` that says why the walk refused a level."""
    here = _shown(e.parts)
    if e.why is WalkFailure.REPLACED:
        where = here if e.parts else "the cache dir"
        return Refused("skipped", Reason(f"{where} is another dir than when the plan was made", "dir-replaced"))
    if e.why is WalkFailure.GONE:
        return Refused("skipped", Reason(f"{here} is gone", "dir-gone"))
    if e.why is WalkFailure.NOT_A_DIR:
        return Refused("skipped", Reason(f"{here} is not a directory (a symlink is never followed)", "not-a-dir"))
    if e.why is WalkFailure.UNSTATED:
        return Refused("failed", Reason(f"cannot stat {here}: {e.strerror}", "dir-unstated"))
    return Refused("failed", Reason(f"cannot open {here}: {e.strerror}", "dir-unopened"))


def locate(root: Path | str, paths: Iterable[str]) -> list[Located | str]:
    """For each path (spelled below ``root``, as a scan spells it), where it is
    (:class:`Located`) or why it cannot be reached safely (a str). Opens each dir
    once, and finds the files of one dir where the first of them found it (a plan
    removes several files of a key dir); touches no file."""
    out: list[Located | str] = []
    found: dict[str, tuple[tuple[str, ...], tuple[DirId, ...]]] = {}  # dir as spelled -> (parts, ids)
    with DirWalk(root) as walk:
        for p in paths:
            here, _, name = p.rpartition(os.sep)
            got = found.get(here)
            if got is not None and name not in ("", ".", ".."):
                out.append(Located((*got[0], name), got[1]))
                continue
            parts = relative_parts(root, p)
            if parts is None:
                out.append(Reason("not below the cache dir", "outside-cache-dir"))
                continue
            try:
                at = walk.locate(parts)
            except Refused as e:
                out.append(e.why)
                continue
            except OSError as e:
                out.append(Reason(e.strerror or str(e), "os-error"))
                continue
            found[here] = (at.parts[:-1], at.dirs)
            out.append(at)
    return out


def _shown(parts: tuple[str, ...]) -> str:
    return "/".join(parts)
