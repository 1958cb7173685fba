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
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.pack.manifest import Member, PackError
from fxcache_core.pack.unpack import UnpackPlan, check_member, read_members

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
MAX_OPEN_DIRS = 64
"""Dir fds :class:`_Dirs` keeps open at once."""
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

    def to_json(self, cache_dir: Path | None = None) -> dict[str, object]:
        """``cache_dir`` (first, when given: where it was written), ``added`` (member
        paths), ``identical`` (a count), ``bytes_added`` and ``conflicts`` (``path``,
        ``existing``)."""
        head: dict[str, object] = {"cache_dir": str(cache_dir)} if cache_dir is not None else {}
        return {**head, "added": [m.path for m in self.added], "identical": len(self.identical),
                "bytes_added": self.bytes_added,
                "conflicts": [{"path": p, "existing": w} for p, w in sorted(self.conflicts.items())]}


class _Dirs:
    """Dir fds under the root, opened (or made) one level at a time without following
    links; at most :data:`MAX_OPEN_DIRS` kept open (a pack of 10,000 keys has as many
    key dirs, past the usual limit of 1,024 open files), the rest opened again the same
    way when needed."""

    def __init__(self, root: Path) -> None:
        self.made: list[str] = []  # dirs made under the root (relative), in creation order
        self.made_above: list[str] = []  # the root and missing dirs above it, made
        self.path = root
        missing = []
        at = Path(root)
        while not os.path.lexists(at) and at != at.parent:
            missing.append(at)
            at = at.parent
        try:
            for d in reversed(missing):
                try:
                    os.mkdir(d, 0o755)
                    self.made_above.append(str(d))
                except FileExistsError:
                    pass  # made meanwhile by another process: used, never undone
            self.root = os.open(root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            self.undo_dirs()
            raise PackError(f"cannot open the cache dir {root}: {e.strerror}", param="cache_dir",
                            value=str(root)) from None
        self.fds: OrderedDict[str, int] = OrderedDict()

    def of(self, rel_dir: str, make: bool = True) -> int:
        """The fd of ``rel_dir`` (``""``: the root), made if missing (and ``make``); valid
        until the next call.

        Raises:
            PackError: a name on the way is not a plain dir (a link, a file).
        """
        if not rel_dir:
            return self.root
        if rel_dir in self.fds:
            self.fds.move_to_end(rel_dir)
            return self.fds[rel_dir]
        parent_rel, _, name = rel_dir.rpartition("/")
        parent = self.of(parent_rel, make)
        try:
            try:
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not make:
                    raise
                try:
                    os.mkdir(name, 0o755, dir_fd=parent)
                    self.made.append(rel_dir)
                except FileExistsError:
                    pass  # a dir made meanwhile (a compile writing there): opened as any other
                fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as e:
            raise PackError(f"{rel_dir} under the cache dir is not a plain directory "
                            f"({e.strerror}): nothing written") from None
        self.fds[rel_dir] = fd
        while len(self.fds) > MAX_OPEN_DIRS:
            os.close(self.fds.popitem(last=False)[1])
        return fd

    def undo_dirs(self) -> None:
        """Remove the dirs this call made (newest first; one another process wrote into stays)."""
        for rel in reversed(self.made):
            parent_rel, _, name = rel.rpartition("/")
            try:
                os.rmdir(name, dir_fd=self.of(parent_rel, make=False))
            except (OSError, PackError):
                pass
        for d in reversed(self.made_above):
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.made, self.made_above = [], []

    def close(self) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()
        os.close(self.root)


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
    temps: list[tuple[str, str, str, Member, int]] = []  # (dir, temp name, final name, member, inode)
    linked: list[tuple[str, str, int]] = []  # (dir, final name, inode): undone on failure
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
                    tmp = f".{name}.{secrets.token_hex(6)}.fxcache-tmp"
                    fd = os.open(tmp, _FILE_FLAGS, 0o644, dir_fd=dirs.of(rel_dir))
                    temps.append((rel_dir, tmp, name, m, os.fstat(fd).st_ino))
                    with os.fdopen(fd, "wb") as out:
                        check_member(m, f, out.write, on_bytes)
            added: list[Member] = []
            for rel_dir, tmp, name, m, ino in temps:
                dfd = dirs.of(rel_dir, make=False)
                if _publish(dfd, tmp, name):
                    linked.append((rel_dir, name, ino))
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
        for rel_dir, name, ino in linked:  # only a name that is still the file this call wrote
            try:
                dfd = dirs.of(rel_dir, make=False)
                if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_ino == ino:
                    os.unlink(name, dir_fd=dfd)
            except (OSError, PackError):
                pass
        for rel_dir, tmp, *_ in temps:
            try:
                os.unlink(tmp, dir_fd=dirs.of(rel_dir, make=False))
            except (OSError, PackError):
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
