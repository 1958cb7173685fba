"""Write a pack: a deterministic gzip'ed tar of a :class:`~fxcache_core.pack.select.PackPlan`.

The same plan gives the same bytes: the manifest first, then the members in
path order; every header with mtime 0, uid/gid 0, no user or group name, mode
0644 (:data:`~fxcache_core.pack.manifest.ARCHIVE_MODE`; USTAR format: no pax records, which carry times); gzip with mtime 0 and
no file name. Each member is read again without following links and must
still have the size and sha256 the plan recorded (a file that changed between
planning and writing is refused, never packed as something the manifest does
not describe). The archive is written to a temp name beside ``out`` and renamed
onto it at the end, so a failed write leaves no partial pack.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import stat
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from fxcache_core.pack.manifest import ARCHIVE_MODE, MANIFEST_NAME, PackError
from fxcache_core.pack.select import PackPlan, open_member

COMPRESS_LEVEL = 6
"""gzip level: libraries and pickles compress 3-5x at level 6; 9 gains little more."""
_CHUNK = 1 << 20


@dataclass(frozen=True)
class PackResult:
    """A pack written.

    Attributes:
        path: the archive.
        members: files in it, the manifest included.
        bytes_in: bytes of the members (uncompressed, manifest included).
        bytes_out: bytes of the archive.
    """

    path: Path
    members: int
    bytes_in: int
    bytes_out: int

    def to_json(self) -> dict[str, object]:
        return {"path": str(self.path), "members": self.members, "bytes_in": self.bytes_in,
                "bytes_out": self.bytes_out}


def _info(name: str, size: int) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.size, ti.mtime, ti.mode, ti.uid, ti.gid, ti.uname, ti.gname = size, 0, ARCHIVE_MODE, 0, 0, "", ""
    ti.type = tarfile.REGTYPE
    return ti


class _Checked(io.RawIOBase):
    """A member's file read for tarfile: at most ``size`` bytes, hashed as read."""

    def __init__(self, f: io.BufferedReader, on_bytes: Callable[[int], None] | None) -> None:
        self.f, self.h, self.n, self.on_bytes = f, hashlib.sha256(), 0, on_bytes

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.f.read(size if size >= 0 else _CHUNK)
        self.h.update(data)
        self.n += len(data)
        if self.on_bytes is not None and data:
            self.on_bytes(len(data))
        return data


def write_pack(plan: PackPlan, out: Path, on_bytes: Callable[[int], None] | None = None) -> PackResult:
    """Write ``plan`` as a pack at ``out`` (replacing a file there only once the new
    pack is complete).

    Args:
        plan: from :func:`~fxcache_core.pack.select.plan_pack`.
        out: the archive's path.
        on_bytes: called with each count of member bytes read (a progress bar).

    Raises:
        PackError: a member changed since it was planned, or is no longer a regular file;
            ``out`` cannot be written (a directory, no such dir, a name over the system's
            limit, no space).
    """
    manifest = plan.manifest.to_bytes()

    def write(raw: BinaryIO) -> None:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=COMPRESS_LEVEL) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                tar.addfile(_info(MANIFEST_NAME, len(manifest)), io.BytesIO(manifest))
                for pm in plan.files:
                    _add(tar, plan.root, pm.member.path, pm.where, pm.member.size, pm.member.sha256, on_bytes)

    out = Path(out)
    replace_file(out, "pack", write)
    return PackResult(out, len(plan.files) + 1, plan.total_bytes + len(manifest), out.stat().st_size)


def replace_file(out: Path, what: str, write: Callable[[BinaryIO], None]) -> None:
    """Write ``out`` whole or not at all: ``write`` fills a temp file beside it (mode
    0666 less the umask, as ``open()`` would make it), renamed over ``out`` when done,
    removed when anything fails. Only a regular file (or a symlink: the link is
    replaced) is ever replaced. ``what`` names the file in errors (``pack``, ``blob``).

    Raises:
        PackError: ``out`` cannot be written (a directory, a device, a FIFO or a socket,
            no such dir, a name over the system's limit, no space), or ``write`` raised it.
    """
    try:
        st = os.lstat(out)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    except OSError as e:  # a name over the system's limit, no permission on a dir above it
        raise PackError(f"cannot write the {what} {out}: {e.strerror or e}", param="out", value=str(out)) from None
    if out.is_dir():
        raise PackError(f"cannot write the {what} {out}: it is a directory")
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        # renaming onto it would replace a device (/dev/null, as root) or a FIFO
        raise PackError(f"cannot write the {what} {out}: it is not a regular file (a device, a FIFO "
                        "or a socket), and fxcache replaces only a regular file")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent or ".")
    except OSError as e:
        raise PackError(f"cannot write the {what} {out}: {e.strerror}") from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)  # as open() would make it (mkstemp makes 0600)
        with os.fdopen(fd, "wb") as raw:
            write(raw)
        os.replace(tmp, out)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise PackError(f"cannot write the {what} {out}: {e.strerror or e}") from None
        raise


def _add(tar: tarfile.TarFile, root: Path, name: str, where: str, size: int, sha: str,
         on_bytes: Callable[[int], None] | None) -> None:
    fd = open_member(root, name)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size != size:
            raise PackError(f"{where} changed since it was planned ({st.st_size} bytes, planned {size})")
        src = _Checked(f, on_bytes)
        tar.addfile(_info(name, size), src)
        if src.n != size or src.h.hexdigest() != sha or f.read(1):
            raise PackError(f"{where} changed since it was planned (its sha256 differs)")


__all__ = ["PackResult", "write_pack"]
