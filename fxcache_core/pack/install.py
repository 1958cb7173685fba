"""Write a verified pack's members into a cache dir (the second pass of
:mod:`fxcache_core.pack.unpack`, after :mod:`fxcache_core.pack.contents`; see their
docstrings for the order of checks).

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

from fxcache_core.fsutil import DirRefused, DirWalker, create_new
from fxcache_core.pack.contents import UnpackPlan
from fxcache_core.pack.manifest import ARCHIVE_MODE, Member, PackError
from fxcache_core.pack.unpack import check_member, existing_in, read_members

MAX_OPEN_DIRS = 64
"""Dir fds :class:`_Dirs` keeps open at once."""


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
    """The cache dir, made with any missing dir above it, and the dirs below it,
    opened (or made) one level at a time without following links by a
    :class:`~fxcache_core.fsutil.DirWalker` that keeps at most
    :data:`MAX_OPEN_DIRS` open (a pack of 10,000 keys has as many key dirs, past
    the usual limit of 1,024 open files); its refusals are :class:`PackError` s."""

    def __init__(self, root: Path) -> None:
        self.made_above: list[str] = []  # the root and missing dirs above it, made
        self.path = root
        self.walker: DirWalker | None = None
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
            self.walker = DirWalker(root, keep=MAX_OPEN_DIRS)
        except OSError as e:
            self.undo_dirs()
            raise PackError(f"cannot open the cache dir {root}: {e.strerror}", param="cache_dir",
                            value=str(root)) from None

    def of(self, rel_dir: str, make: bool = True) -> int:
        """The fd of ``rel_dir`` (``""``: the root), made if missing (and ``make``); valid
        until the next call.

        Raises:
            PackError: a name on the way is not a plain dir (a link, a file).
        """
        assert self.walker is not None
        try:
            return self.walker.walk(tuple(rel_dir.split("/")) if rel_dir else (), make=make)[0]
        except DirRefused as e:
            raise PackError(f"{'/'.join(e.parts)} under the cache dir is not a plain directory "
                            f"({e.strerror}): nothing written") from None

    def undo_dirs(self) -> None:
        """Remove the dirs this call made (newest first; one another process wrote into stays)."""
        if self.walker is not None:
            for parts in reversed(self.walker.made):
                try:
                    os.rmdir(parts[-1], dir_fd=self.of("/".join(parts[:-1]), make=False))
                except (OSError, PackError):
                    pass
            self.walker.made.clear()
        for d in reversed(self.made_above):
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.made_above = []

    def close(self) -> None:
        if self.walker is not None:
            self.walker.close()


def _check_space(root: Path, need: int) -> None:
    """Refuse, before writing, a pack whose new files would not fit on the cache dir's
    file system (with 64 MiB to spare): a manifest may list members of any size."""
    at = Path(root)
    try:
        while not at.exists() and at != at.parent:
            at = at.parent
        st = os.statvfs(at)
    except OSError:
        return  # cannot say: opening the cache dir then refuses it in one line
    free = st.f_bavail * st.f_frsize
    if need + (64 << 20) > free:
        raise PackError(f"the pack adds {need} bytes; {at} has {free} free: nothing written")


def execute_unpack(plan: UnpackPlan, on_bytes: Callable[[int], None] | None = None) -> UnpackResult:
    """Write the members ``plan`` adds (module docstring); skip identical ones; never
    overwrite a file (one that appeared since the plan is compared with the member:
    the same bytes are counted identical, others become a conflict).

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
                    fd = create_new(tmp, ARCHIVE_MODE, dir_fd=dirs.of(rel_dir))
                    temps.append((rel_dir, tmp, name, m, os.fstat(fd).st_ino))
                    with os.fdopen(fd, "wb") as out:
                        check_member(m, f, out.write, on_bytes)
            added: list[Member] = []
            for rel_dir, tmp, name, m, ino in temps:
                dfd = dirs.of(rel_dir, make=False)
                if _publish(dfd, tmp, name):
                    linked.append((rel_dir, name, ino))
                    added.append(m)
                elif (there := existing_in(dfd, name, m.size)) == m.sha256:
                    identical.append(m)  # another unpack of the same pack wrote it meanwhile
                else:
                    conflicts[m.path] = ("a file that appeared while unpacking" if there is None
                                         or not there.startswith("not ") else there)
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
