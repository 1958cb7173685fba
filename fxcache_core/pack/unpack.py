"""Read a pack back: verify every member against the manifest, then write into a cache dir.

A pack is untrusted input. :func:`verify_pack` streams the archive once and
writes nothing: the first member must be the manifest
(:func:`~fxcache_core.pack.manifest.parse_manifest` checks its every field);
each other member must be a plain regular file (no link, device, fifo, sparse
or pax-extended member), listed by the manifest, seen once, of the manifest's
size (read with a cap of that size: the tar header alone is never trusted), and
of the manifest's sha256; each member's path must have the layout of its kind
(an FX entry under ``fxgraph/<key[1:3]>/<key>/``, named by the sha256 of its
content as torch names it, ``sha256_hash`` in torch/_inductor/codecache.py); and
every listed member must be there. The gzip framing is read with every header
field bounded (:mod:`~fxcache_core.pack.gunzip`), and the decompressed stream is
capped (the manifest's sizes plus the headers' share), so neither a gzip bomb, a
huge gzip header nor a huge pax header can exhaust CPU, memory or disk.

What the members hold is checked next (:mod:`fxcache_core.pack.contents`: the
manifest's claims against the entries, every member needed, the code scan), and
:func:`~fxcache_core.pack.contents.plan_unpack` says what each member would do
under the cache dir; a file that appears while unpacking (another unpack of the
same pack) is compared the same way before it is called a conflict.
:func:`~fxcache_core.pack.install.execute_unpack` reads the archive a second time, writes each
member to be added to a dot-prefixed temp name in its final dir (dirs opened
relative to their parent with ``O_NOFOLLOW``, created when missing, as torch's
``write_atomic`` writes), checks it again against the manifest, and only when
every one is in place links each temp file to its final name (``link`` fails
rather than replace a file that appeared meanwhile) and removes the temp name.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tarfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal

from fxcache_core.cache.keys import HASH_CHARS
from fxcache_core.fsutil import DirRefused, DirWalker, NotRegularFile, WalkFailure, open_regular
from fxcache_core.pack.closure import NEEDED, SOURCE_EXTS
from fxcache_core.pack.gunzip import GzipReader
from fxcache_core.pack.manifest import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    Manifest,
    Member,
    PackError,
    parse_manifest,
)

_CHUNK = 1 << 20
_HEADER_SLACK = 1536
"""Decompressed bytes allowed per member beyond its content: a 512-byte header and
padding to the next 512 bytes, and one spare block."""
_END_SLACK = 64 << 10
"""Allowed for the end-of-archive blocks and tarfile's read-ahead (records of 10 KiB)."""
_B32 = "[a-z2-7]"
_LAYOUT = {
    "fx": re.compile(rf"fxgraph/({_B32}{{2}})/(f{_B32}{{51}})/({_B32}{{51}})"),
    "aot": re.compile(rf"aotautograd/(a{_B32}{{51}})/({_B32}{{51}})"),
    "wrapper": re.compile(rf"({_B32}{{2}})/(c{_B32}{{51}})\.py"),
    "library": re.compile(rf"({_B32}{{2}})/(c{_B32}{{51}})(" + "|".join(
        re.escape(x) for x, k in NEEDED.items() if k == "library") + ")"),
    "autotune": re.compile(rf"({_B32}{{2}})/(c{_B32}{{51}})\.best_config"),
    "source": re.compile(rf"({_B32}{{2}})/(c{_B32}{{51}})(" + "|".join(re.escape(x) for x in SOURCE_EXTS) + ")"),
}

Action = Literal["add", "identical", "conflict"]


def check_layout(m: Member) -> None:
    """Refuse a member whose path does not have the layout of its kind (see the module docstring).

    Raises:
        PackError: it does not.
    """
    match = _LAYOUT[m.kind].fullmatch(m.path)
    two = match.group(1) if match else None
    key = match.group(2) if match else None
    if match is None or (m.kind != "aot" and key is not None and key[1:3] != two):
        raise PackError(f"member {m.path!r} is not where torch keeps a {m.kind} file")


MAX_RATIO = 200
"""Decompressed bytes per compressed byte beyond which a gzip stream is taken for a
bomb (once past 64 MiB): real packs compress 3-10x (pickles, libraries, code)."""


class _Capped(io.RawIOBase):
    """A read-only stream that raises :class:`PackError` past ``limit`` bytes, or past
    :data:`MAX_RATIO` times the compressed bytes read from ``raw`` so far."""

    def __init__(self, f: IO[bytes], limit: int, raw: IO[bytes] | None = None) -> None:
        self.f, self.limit, self.n, self.raw = f, limit, 0, raw

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        want = min(len(b), self.limit - self.n + 1)
        if want <= 0:
            raise PackError("the archive holds more data than its manifest lists (refused, nothing written)")
        data = self.f.read(want)
        self.n += len(data)
        if self.n > self.limit:
            raise PackError("the archive holds more data than its manifest lists (refused, nothing written)")
        if self.raw is not None and self.n > (64 << 20) and self.n > MAX_RATIO * max(1, self.raw.tell()):
            raise PackError(f"the archive decompresses more than {MAX_RATIO} times its size: "
                            "a compression bomb (refused, nothing written)")
        b[:len(data)] = data
        return len(data)


@contextmanager
def read_members(path: Path) -> Iterator[tuple[Manifest, Iterator[tuple[Member, IO[bytes]]]]]:
    """Open the pack; yield its manifest and an iterator of (member, its data
    stream), each member checked as it comes (module docstring) but for its
    content, which the caller checks with :func:`check_member`.

    Raises:
        PackError: the first thing that is wrong (raised by the iterator for members).
    """
    raw = _open_pack(path)
    with raw:
        try:
            head = raw.read(2)
            raw.seek(0)
        except OSError as e:  # /proc/self/mem: EIO
            raise PackError(f"cannot read the pack {path}: {e.strerror or e}", param="pack",
                            value=str(path)) from None
        if head != b"\x1f\x8b":
            _no_holes(raw, path)
        stream: IO[bytes] = GzipReader(raw) if head == b"\x1f\x8b" else raw
        capped = _Capped(stream, MAX_MANIFEST_BYTES + _END_SLACK, raw if stream is not raw else None)
        try:
            tar = tarfile.open(fileobj=io.BufferedReader(capped, _CHUNK), mode="r|")
        except (tarfile.TarError, OSError, EOFError) as e:
            raise PackError(f"{path} is not a pack (a tar archive): {e}") from None
        with tar:
            first = _next(tar)
            if first is None or first.name != MANIFEST_NAME:
                raise PackError("the first member of the archive is not the manifest")
            _plain(first)
            if first.size > MAX_MANIFEST_BYTES:
                raise PackError(f"manifest is {first.size} bytes, over the {MAX_MANIFEST_BYTES} limit")
            manifest = parse_manifest(_read(tar, first, first.size))
            for m in manifest.members:
                check_layout(m)
            listed = {m.path: m for m in manifest.members}
            entry_paths = {_entry_path(e.kind, e.key, e.entry) for e in manifest.entries}
            if not entry_paths <= set(listed):
                raise PackError("the manifest lists an entry that is not one of its members")
            capped.limit = (capped.n + manifest.total_bytes + _HEADER_SLACK * (len(manifest.members) + 1)
                            + _END_SLACK)

            def each() -> Iterator[tuple[Member, IO[bytes]]]:
                seen: set[str] = set()
                while (ti := _next(tar)) is not None:
                    _plain(ti)
                    m = listed.get(ti.name)
                    if m is None:
                        raise PackError(f"member {ti.name[:200]!r} is not listed in the manifest")
                    if ti.name in seen:
                        raise PackError(f"member {ti.name!r} appears twice")
                    seen.add(ti.name)
                    if ti.size != m.size:
                        raise PackError(f"member {ti.name!r} is {ti.size} bytes, the manifest says {m.size}")
                    f = tar.extractfile(ti)
                    assert f is not None
                    yield m, f
                _end_of_archive(tar)
                missing = [p for p in listed if p not in seen]
                if missing:
                    raise PackError(f"the manifest lists {len(missing)} member(s) the archive lacks "
                                    f"(first: {missing[0]!r})")

            yield manifest, each()


def _open_pack(path: Path) -> IO[bytes]:
    """The pack, opened for reading only if it is a regular file: opened non-blocking,
    so a FIFO (or a device) given as the pack is refused, never waited on
    (:func:`~fxcache_core.fsutil.open_regular`)."""
    try:
        fd = open_regular(path)
    except NotRegularFile:
        raise PackError(f"{path} is not a file") from None
    except OSError as e:
        raise PackError(f"cannot read the pack {path}: {e.strerror}") from None
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _no_holes(raw: IO[bytes], path: Path) -> None:
    """Refuse an uncompressed pack with holes (a sparse file): a hole reads as zeros
    that cost no disk, so a few kB could make unpack hash terabytes before a member's
    sha256 fails. (A hole in a gzip stream is not deflate data: it fails at once.)"""
    size = os.fstat(raw.fileno()).st_size
    try:
        hole = os.lseek(raw.fileno(), 0, os.SEEK_HOLE) if hasattr(os, "SEEK_HOLE") else size
    except OSError:
        hole = size  # the file system cannot say: no evidence of a hole
    finally:
        raw.seek(0)
    if hole < size:
        raise PackError(f"{path} is a sparse file (a hole at byte {hole}): an uncompressed pack "
                        "fxcache reads has none")


def _end_of_archive(tar: tarfile.TarFile) -> None:
    """Refuse anything after the end-of-archive blocks but zeros (a member hidden past
    the end, or a second gzip member or tar appended): another tool (``tar -i``,
    ``gunzip | tar``) would read it; fxcache never writes it. Trailing bytes that are
    not gzip at all raise in the gzip reader (``BadGzipFile``). Bounded by the cap."""
    try:
        while chunk := tar.fileobj.read(_CHUNK):
            if chunk.count(0) != len(chunk):
                raise PackError("the archive holds data after its end-of-archive marker (a hidden "
                                "member, an appended archive, or a damaged header read as the end)")
    except PackError:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise PackError(f"the archive is damaged after its last member: {type(e).__name__}: "
                        f"{str(e)[:200]}") from None


def _next(tar: tarfile.TarFile) -> tarfile.TarInfo | None:
    try:
        return tar.next()
    except PackError:
        raise
    except (tarfile.TarError, OSError, EOFError, ValueError, UnicodeError) as e:
        raise PackError(f"the archive is damaged: {type(e).__name__}: {str(e)[:200]}") from None


def _plain(ti: tarfile.TarInfo) -> None:
    if ti.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or ti.issparse():
        what = ("a symlink" if ti.issym() else "a hard link" if ti.islnk() else "a directory" if ti.isdir()
                else "a device" if ti.isdev() else "not a regular file")
        raise PackError(f"member {ti.name[:200]!r} is {what}: a pack holds regular files only")
    if ti.pax_headers:
        raise PackError(f"member {ti.name[:200]!r} carries pax records: fxcache writes none")


def _read(tar: tarfile.TarFile, ti: tarfile.TarInfo, size: int) -> bytes:
    f = tar.extractfile(ti)
    assert f is not None
    try:
        data = f.read(size + 1)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise PackError(f"the archive is damaged: {type(e).__name__}: {str(e)[:200]}") from None
    if len(data) != size:
        raise PackError(f"member {ti.name!r} is cut short")
    return data


def _entry_path(kind: str, key: str, entry: str) -> str:
    return f"fxgraph/{key[1:3]}/{key}/{entry}" if kind == "fxgraph" else f"aotautograd/{key}/{entry}"


def check_member(m: Member, f: IO[bytes], sink: Callable[[bytes], None] | None,
                  on_bytes: Callable[[int], None] | None) -> None:
    """Read member ``m``'s content (at most its size), check its sha256 (and, for an
    entry, that its name is torch's hash of it); feed each chunk to ``sink``.

    Raises:
        PackError: cut short, damaged, or not what the manifest says.
    """
    h = hashlib.sha256()
    left = m.size
    try:
        while left > 0:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                raise PackError(f"member {m.path!r} is cut short")
            left -= len(chunk)
            h.update(chunk)
            if sink is not None:
                sink(chunk)
            if on_bytes is not None:
                on_bytes(len(chunk))
    except PackError:
        raise
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise PackError(f"the archive is damaged: {type(e).__name__}: {str(e)[:200]}") from None
    if h.hexdigest() != m.sha256:
        raise PackError(f"member {m.path!r} does not match the manifest's sha256 (altered)")
    if m.kind in ("fx", "aot"):
        name = m.path.rsplit("/", 1)[1]
        if sha256_hash_from_digest(h.digest()) != name:
            raise PackError(f"entry {m.path!r} is not named by the hash of its content as torch names entries")


def sha256_hash_from_digest(digest: bytes) -> str:
    """Torch's entry name (``sha256_hash``) from a sha256 digest already computed."""
    import base64

    return base64.b32encode(digest)[:HASH_CHARS].decode().lower()


def verify_pack(path: Path, on_bytes: Callable[[int], None] | None = None) -> Manifest:
    """Read the whole pack and check every member (module docstring); write nothing.

    Raises:
        PackError: the first thing that is wrong, in one line.
    """
    with read_members(Path(path)) as (manifest, members):
        for m, f in members:
            check_member(m, f, None, on_bytes)
    return manifest


def existing_at(root: Path, rel: str, size: int) -> str | None:
    """None: nothing at ``root/rel`` (or a dir on the way is missing); else what
    :func:`existing_in` says of the name there. The dirs on the way are walked
    without following a link (:class:`~fxcache_core.fsutil.DirWalker`)."""
    try:
        walker = DirWalker(root)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"not readable: {e.strerror}"
    parts = tuple(rel.split("/"))
    with walker:
        try:
            fd, _ = walker.walk(parts[:-1])
        except DirRefused as e:
            return None if e.why is WalkFailure.GONE else "not a directory on the way (a link or a file)"
        return existing_in(fd, parts[-1], size)


def existing_in(dir_fd: int, name: str, size: int) -> str | None:
    """What is at ``name`` in the dir ``dir_fd`` (never following a link): None, nothing;
    the sha256 of the regular file there (read only when it has ``size`` bytes, at most
    that many, opened non-blocking so a FIFO swapped in is refused, never waited on);
    or what is there instead (``"a different file"``, ``"not ..."``)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"not readable: {e.strerror}"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file (a link, a dir or a device)"
    if st.st_size != size:
        return "a different file"
    try:
        ffd = open_regular(name, dir_fd=dir_fd, follow_symlinks=False)
    except NotRegularFile:
        return "not a regular file (a link, a dir or a device)"
    except OSError as e:
        return f"not readable: {e.strerror}"
    with os.fdopen(ffd, "rb") as f:
        h, n = hashlib.sha256(), 0
        try:
            while n <= size and (chunk := f.read(min(_CHUNK, size + 1 - n))):
                h.update(chunk)
                n += len(chunk)
        except OSError as e:
            return f"not readable: {e.strerror}"
    return h.hexdigest() if n == size else "a different file"


__all__ = ["check_layout", "check_member", "existing_at", "existing_in", "read_members", "verify_pack"]
