"""Write a verified pack's members into a cache dir (the second pass of
:mod:`fxcache_core.pack.unpack`; see its docstring for the order of checks).

Every dir below the cache dir is opened relative to its parent with
``O_DIRECTORY | O_NOFOLLOW`` (created with ``mkdir(dir_fd=)`` when missing), so
a link planted on the way can never redirect a write out of the cache dir; each
file is created under a dot-prefixed temp name (``O_CREAT | O_EXCL |
O_NOFOLLOW``), checked against the manifest as it is written, and given its
final name with ``link`` (which fails rather than replace a file) only once
every member is written. Torch skips dot-prefixed names when it lists a key's
entries (``iterate_over_candidates`` in torch/_inductor/codecache.py), so a temp
file is never taken for an entry. On any failure every temp file and every dir
this call created are removed.
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.pack.manifest import Member, PackError
from fxcache_core.pack.unpack import UnpackPlan, check_member, read_members

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))


@dataclass(frozen=True)
class UnpackResult:
    """What :func:`execute_unpack` did.

    Attributes:
        added: members written, in manifest order.
        identical: members skipped because the same bytes were there.
        conflicts: member path -> what is there instead (never overwritten).
    """

    added: tuple[Member, ...]
    identical: tuple[Member, ...]
    conflicts: dict[str, str]

    @property
    def bytes_added(self) -> int:
        return sum(m.size for m in self.added)

    def to_json(self) -> dict[str, object]:
        return {"added": [m.path for m in self.added], "identical": len(self.identical),
                "bytes_added": self.bytes_added,
                "conflicts": [{"path": p, "existing": w} for p, w in sorted(self.conflicts.items())]}


class _Dirs:
    """Dir fds under the root, opened (or made) one level at a time without following links."""

    def __init__(self, root: Path) -> None:
        self.made: list[tuple[int | None, str]] = []  # (parent fd or None: a path), in creation order
        self.path = root
        missing = []  # the root and the dirs above it that are not there: made, and undone on failure
        at = Path(root)
        while not os.path.lexists(at) and at != at.parent:
            missing.append(at)
            at = at.parent
        try:
            for d in reversed(missing):
                try:
                    os.mkdir(d, 0o755)
                    self.made.append((None, str(d)))
                except FileExistsError:
                    pass  # made meanwhile by another process: used, never undone
            self.root = os.open(root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            self.undo_dirs()
            raise PackError(f"cannot open the cache dir {root}: {e.strerror}", param="cache_dir",
                            value=str(root)) from None
        self.fds: dict[str, int] = {"": self.root}

    def of(self, rel_dir: str) -> int:
        if rel_dir in self.fds:
            return self.fds[rel_dir]
        parent_rel, _, name = rel_dir.rpartition("/")
        parent = self.of(parent_rel)
        try:
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                try:
                    os.mkdir(name, 0o755, dir_fd=parent)
                    self.made.append((parent, name))
                except FileExistsError:
                    pass  # a dir made meanwhile (a compile writing there): opened as any other
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as e:
            raise PackError(f"{rel_dir} under the cache dir is not a plain directory "
                            f"({e.strerror}): nothing written") from None
        self.fds[rel_dir] = fd
        return fd

    def undo_dirs(self) -> None:
        """Remove the dirs this call made (newest first; one another process wrote into stays)."""
        for parent, name in reversed(self.made):
            try:
                if parent is None:
                    os.rmdir(name)
                else:
                    os.rmdir(name, dir_fd=parent)
            except OSError:
                pass
        self.made = []

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)


def _check_space(root: Path, need: int) -> None:
    """Refuse, before writing, a pack whose new files would not fit on the cache dir's
    file system (with 64 MiB to spare): a manifest may list members of any size."""
    at = Path(root)
    while not at.exists() and at != at.parent:
        at = at.parent
    try:
        st = os.statvfs(at)
    except OSError:
        return
    free = st.f_bavail * st.f_frsize
    if need + (64 << 20) > free:
        raise PackError(f"the pack adds {need} bytes; {at} has {free} free: nothing written")


def execute_unpack(plan: UnpackPlan, on_bytes: Callable[[int], None] | None = None) -> UnpackResult:
    """Write the members ``plan`` adds (module docstring); skip identical ones; never
    overwrite a file (one that appeared since the plan becomes a conflict).

    Raises:
        PackError: the archive changed since it was verified, or the cache dir
            cannot be written: then nothing of it is left under the cache dir.
    """
    todo = {m.path for m, a in plan.actions if a == "add"}
    _check_space(plan.root, plan.bytes_of("add"))
    conflicts = dict(plan.conflicts)
    identical = [m for m, a in plan.actions if a == "identical"]
    dirs = _Dirs(plan.root)
    temps: list[tuple[int, str, str, Member, int]] = []  # (dir fd, temp name, final name, member, inode)
    linked: list[tuple[int, str, int]] = []  # (dir fd, final name, inode): undone on failure
    try:
        try:
            with read_members(plan.pack) as (manifest, members):
                if manifest != plan.manifest:
                    raise PackError("the pack changed since it was verified: nothing written")
                for m, f in members:
                    if m.path not in todo:
                        check_member(m, f, None, on_bytes)
                        continue
                    rel_dir, _, name = m.path.rpartition("/")
                    dfd = dirs.of(rel_dir)
                    tmp = f".{name}.{secrets.token_hex(6)}.fxcache-tmp"
                    fd = os.open(tmp, _FILE_FLAGS, 0o644, dir_fd=dfd)
                    temps.append((dfd, tmp, name, m, os.fstat(fd).st_ino))
                    with os.fdopen(fd, "wb") as out:
                        check_member(m, f, out.write, on_bytes)
            added: list[Member] = []
            for dfd, tmp, name, m, ino in temps:
                if _publish(dfd, tmp, name):
                    linked.append((dfd, name, ino))
                    added.append(m)
                else:
                    conflicts[m.path] = "a file that appeared while unpacking"
                try:
                    os.unlink(tmp, dir_fd=dfd)
                except FileNotFoundError:
                    pass  # renamed
        except OSError as e:
            raise PackError(f"cannot write under the cache dir: {e.strerror or e}: nothing written") from None
        temps = []
        return UnpackResult(tuple(added), tuple(identical), conflicts)
    except BaseException:
        for dfd, name, ino in linked:  # only a name that is still the file this call wrote
            try:
                if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == ino:
                    os.unlink(name, dir_fd=dfd)
            except OSError:
                pass
        for dfd, tmp, *_ in temps:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
        dirs.undo_dirs()
        raise
    finally:
        dirs.close()


def _publish(dfd: int, tmp: str, name: str) -> bool:
    """Give the temp file ``tmp`` in dir ``dfd`` its final ``name`` too, unless something
    is there (False: kept). ``link`` never replaces a file; where the file system has no
    hard links, ``rename`` after one more look (then ``tmp`` is gone).

    Raises:
        OSError: the link or rename failed otherwise.
    """
    try:
        os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        return True
    except FileExistsError:
        return False
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EMLINK, errno.EXDEV):
            raise
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return False
    except FileNotFoundError:
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        return True


__all__ = ["UnpackResult", "execute_unpack"]
