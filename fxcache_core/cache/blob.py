"""Torch's mega-cache blobs: read without executing anything, and placed as torch places them.

``torch.compiler.save_cache_artifacts()`` returns a blob of every cache artifact the
process recorded; ``torch.compiler.load_cache_artifacts(blob)`` writes them into the
local caches of another process. The format (torch 2.13,
torch/utils/_appending_byte_serializer.py and torch/compiler/_cache.py), every
integer an unsigned 64-bit big-endian one, a *string* a length-prefixed base64 text
of UTF-8, *bytes* a length-prefixed run of bytes::

    crc32 of everything after it (4 bytes, big-endian)
    encoding version (8 bytes: 1)
    then, to the end, records of one artifact type each:
        type (string: inductor, aot_autograd, pgo, autotune, precompile)
        count (8 bytes)
        count times: key (string), content (bytes)

No pickle at this level: an ``inductor`` artifact's content is the bytes of an FX
entry file, an ``aot_autograd`` one's those of an AOTAutograd entry file, as on disk.
``CacheArtifactManager.deserialize`` builds ``dict(records)``, so where one type has
several records (one per ``save_cache_artifacts`` call of a process) only the last is
loaded; :func:`read_blob` keeps what torch keeps. Where torch places each
(``populate_cache``): ``InductorCacheArtifact`` through
``FxGraphCache._write_to_local_cache`` at ``fxgraph/<key[1:3]>/<key>/<sha256 of the
content>`` (``sha256_hash``: base32, 51 characters; torch/_inductor/codecache.py); ``AOTAutogradCacheArtifact`` through
``AOTAutogradCache._write_to_local_cache`` at ``aotautograd/<key>/<sha256 of the
content>`` (torch/_functorch/_aot_autograd/autograd_cache.py); ``PGOCacheArtifact``
through ``write_local_impl`` at ``dynamo/code_state_<key>.pkl`` (``code_state_path`` in
torch/_dynamo/pgo.py: each of ``<>:"/\\|?*`` in the name made ``_``; a ``mast:`` key,
which torch renames for the job that loads it, is placed as it is), a profile torch
unpickles before it traces, so fxcache's code scan reads it where torch would. Compiled
libraries are not in a blob: torch builds every C++ kernel again on the first load;
``autotune`` and ``precompile`` artifacts are read, not placed.

fxcache is stricter than torch's reader, which slices past the end without noticing:
a wrong checksum, a length past the end, a count or a length over the bounds, a key
that is not a key of its type as torch names them (a cache key's name; a profile's job
key without control characters; an autotune result's ``<dir>/<name>.best_config``,
which torch joins to its cache dir, never one that climbs out), an unknown version or
artifact type: each is refused with one :class:`BlobError`, and nothing is placed.
"""

from __future__ import annotations

import base64
import binascii
import mmap
import os
import re
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.keys import is_key, sha256_hash
from fxcache_core.errors import FxcacheError
from fxcache_core.fsutil import create_new, open_regular

ENCODING_VERSION = 1
"""The only encoding version torch 2.13 writes and reads (``_ENCODING_VERSION``)."""
PLACED_TYPES = {"inductor": "fxgraph", "aot_autograd": "aotautograd"}
"""Artifact types fxcache places as cache entries, and the cache dir's folder of each."""
PROFILE_TYPE = "pgo"
"""The artifact type of Dynamo's saved profiles, placed as torch places them (not an entry)."""
KNOWN_TYPES = frozenset({*PLACED_TYPES, "pgo", "autotune", "precompile"})
"""Every artifact type torch 2.13 registers (``_ensure_cache_artifacts_registered``);
another is refused, as torch's factory refuses it."""
MAX_BLOB_BYTES = 64 << 30
"""A blob larger than this is not read."""
MAX_CONTENT_BYTES = 512 << 20
"""An artifact's content larger than this is a damaged blob (no entry file is as large:
:data:`fxcache_core.decode.unpickler.MAX_ENTRY_BYTES`)."""
MAX_STRING_BYTES = 4096
"""A type or key longer than this (base64) is a damaged blob."""
_NAME_RE = re.compile(r"[A-Za-z0-9_.:-]{1,256}")
_KEY_RES = {
    # format_cache_key in torch/_dynamo/pgo.py: "<job id>:<rank>:<tag>", the job id the user's
    "pgo": re.compile(r"[^\x00-\x1f\x7f]{1,200}"),
    # AutotuneCache._artifact_key_from_local_cache_key (torch/_inductor/runtime/autotune_cache.py)
    "autotune": re.compile(r"[A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-][A-Za-z0-9_.:-]{0,200}\.best_config"),
}
"""How torch names the keys of the artifact types that are not cache entries (others: :data:`_NAME_RE`)."""
_PROFILE_UNSAFE = re.compile(r'[<>:"/\\|?*]')
_HEAD = 4 + 8


class BlobError(FxcacheError):
    """A blob fxcache does not read: damaged (a wrong checksum, a record past the end,
    a length over the bounds) or of a version or artifact type it does not know."""


@dataclass(frozen=True, slots=True)
class BlobArtifact:
    """One artifact of a blob.

    Attributes:
        type: ``inductor``, ``aot_autograd``, ``pgo``, ``autotune`` or ``precompile``.
        key: its cache key (for the placed types, checked to be a key's name).
        offset: where its content starts in the blob (bytes).
        size: its content's length (bytes).
    """

    type: str
    key: str
    offset: int
    size: int

    @property
    def placed(self) -> bool:
        """Whether fxcache places it as a cache entry (:data:`PLACED_TYPES`)."""
        return self.type in PLACED_TYPES

    @property
    def laid_out(self) -> bool:
        """Whether a blob laid out as a cache dir holds it: an entry, or a saved profile."""
        return self.type in PLACED_TYPES or self.type == PROFILE_TYPE


@dataclass(frozen=True, slots=True)
class Blob:
    """What a blob holds, as torch's ``load_cache_artifacts`` would load it.

    Attributes:
        path: the blob file.
        size: its length (bytes).
        version: its encoding version.
        artifacts: what torch loads from it, in the blob's order (of several records
            of one type, the last).
        dropped: artifacts of earlier records of a type torch does not load.
    """

    path: Path
    size: int
    version: int
    artifacts: tuple[BlobArtifact, ...]
    dropped: int = 0

    def counts(self) -> dict[str, int]:
        """Artifacts per type."""
        out: dict[str, int] = {}
        for a in self.artifacts:
            out[a.type] = out.get(a.type, 0) + 1
        return out


def looks_like_blob(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts as a blob does (a valid checksum
    is checked by :func:`read_blob`, not here): at least 12 bytes, version bytes of a
    small number."""
    try:
        with os.fdopen(open_regular(path), "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return False
    return len(head) == _HEAD and head[4:10] == b"\0" * 6


def read_blob(path: str | os.PathLike[str]) -> Blob:
    """Read a blob's records (the module docstring says the format and the bounds).

    Memory: the file is mapped, not read into memory; only keys are copied.

    Raises:
        BlobError: damaged, or an unknown version or artifact type.
    """
    p = Path(path)
    try:
        with os.fdopen(open_regular(p), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_BLOB_BYTES:
                raise BlobError(f"{p}: {size:,} bytes, over the {MAX_BLOB_BYTES:,} byte limit of a blob")
            if size < _HEAD:
                raise BlobError(f"{p}: damaged blob: {size} bytes, shorter than its header")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return parse_at(p, mm, 0, size)
    except OSError as e:
        raise BlobError(f"{p}: cannot read the blob: {e.strerror or e}") from None


def content(blob: Blob, artifact: BlobArtifact) -> bytes:
    """The content bytes of one artifact, read from the blob file.

    Raises:
        BlobError: the file changed since it was read (shorter now).
    """
    try:
        with os.fdopen(open_regular(blob.path), "rb") as f:
            f.seek(artifact.offset)
            data = f.read(artifact.size)
    except OSError as e:
        raise BlobError(f"{blob.path}: cannot read the blob: {e.strerror or e}") from None
    if len(data) != artifact.size:
        raise BlobError(f"{blob.path}: the blob changed while it was read")
    return data


def place_as_torch(blob: Blob, artifact: BlobArtifact) -> tuple[str, ...] | None:
    """Where torch's ``populate_cache`` writes an artifact, as path parts below the cache
    dir (the module docstring); None for a type fxcache does not place. An entry's last
    part needs the content's SHA-256, so this reads it."""
    if artifact.type == PROFILE_TYPE:
        return ("dynamo", _PROFILE_UNSAFE.sub("_", f"code_state_{artifact.key}.pkl"))
    folder = PLACED_TYPES.get(artifact.type)
    if folder is None:
        return None
    name = sha256_hash(content(blob, artifact))
    key = artifact.key
    return (folder, key[1:3], key, name) if folder == "fxgraph" else (folder, key, name)


def as_cache_dir(blob: Blob, *more: Blob, shown: str | None = None) -> Path:
    """A private temporary cache dir that holds the entries of ``blob`` (and ``more``)
    where torch places them (:func:`place_as_torch`), each file's times its blob's;
    removed when the process exits; ``shown``: how it is named to the user (default:
    the blob). Entries are written, never decoded here.

    Raises:
        BlobError: the blob changed while it was read, or the dir cannot be written.
    """
    tmp = tempfile.TemporaryDirectory(prefix="fxcache-blob-")
    _KEEP.append(tmp)
    root = Path(tmp.name)
    _ORIGIN[str(root)] = (blob.path, shown or f"{blob.path} (torch blob)")
    try:
        for b, a in ((x, a) for x in (blob, *more) for a in x.artifacts):
            st = os.stat(b.path)
            parts = place_as_torch(b, a)
            if parts is None:
                continue
            d = root.joinpath(*parts[:-1])
            d.mkdir(parents=True, exist_ok=True)
            target = d / parts[-1]
            if target.exists():  # the same content twice: one file, as torch writes it
                continue
            fd = create_new(target, 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(content(b, a))
            os.utime(target, ns=(st.st_mtime_ns, st.st_mtime_ns))
    except OSError as e:
        raise BlobError(f"cannot lay out the blob {blob.path} in {root}: {e.strerror or e}") from None
    return root


_KEEP: list[tempfile.TemporaryDirectory[str]] = []
_ORIGIN: dict[str, tuple[Path, str]] = {}


def laid_out_from(root: str | os.PathLike[str]) -> Path | None:
    """The blob (or the first artifact) a cache dir was laid out from by
    :func:`as_cache_dir`, else None."""
    got = _ORIGIN.get(str(root))
    return got[0] if got is not None else None


def shown_as(root: str | os.PathLike[str]) -> str:
    """How to name a cache dir to the user: the blob it was laid out from
    (:func:`as_cache_dir`), else the dir itself."""
    got = _ORIGIN.get(str(root))
    return got[1] if got is not None else str(root)


def parse_at(p: Path, mm: mmap.mmap | bytes, lo: int, size: int) -> Blob:
    """The blob that spans bytes ``lo`` to ``size`` of the mapped file ``p`` (a blob
    file: 0 to its end; one inside a standalone artifact: its range), offsets in the
    file.

    Raises:
        BlobError: as :func:`read_blob`.
    """
    def damaged(why: str) -> BlobError:
        return BlobError(f"{p}: damaged blob: {why}")

    if size - lo < _HEAD:
        raise damaged(f"{size - lo} bytes, shorter than its header")
    want = int.from_bytes(mm[lo:lo + 4], "big")
    if zlib.crc32(memoryview(mm)[lo + 4:size]) != want:
        raise damaged("its checksum does not match its content (truncated or altered)")
    version = int.from_bytes(mm[lo + 4:lo + 12], "big")
    if version != ENCODING_VERSION:
        raise BlobError(f"{p}: unknown blob encoding version {version} (fxcache reads version "
                        f"{ENCODING_VERSION}, torch 2.13's)")
    i = lo + _HEAD

    def u64(what: str) -> int:
        nonlocal i
        if i + 8 > size:
            raise damaged(f"{what} at byte {i} runs past the end")
        v = int.from_bytes(mm[i:i + 8], "big")
        i += 8
        return v

    def string(what: str) -> str:
        nonlocal i
        n = u64(f"the length of {what}")
        if n > MAX_STRING_BYTES:
            raise damaged(f"{what} at byte {i - 8} declares {n:,} bytes, over the {MAX_STRING_BYTES} limit")
        if i + n > size:
            raise damaged(f"{what} at byte {i} runs past the end")
        raw = mm[i:i + n]
        i += n
        try:
            return base64.b64decode(raw, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise damaged(f"{what} at byte {i - n} is not base64 of UTF-8 text") from None

    by_type: dict[str, list[BlobArtifact]] = {}
    dropped = 0
    while i < size:
        kind = string("an artifact type")
        if kind not in KNOWN_TYPES:
            shown = kind if _NAME_RE.fullmatch(kind) else repr(kind[:60])
            raise BlobError(f"{p}: unknown artifact type {shown} (fxcache knows "
                            f"{', '.join(sorted(KNOWN_TYPES))})")
        count = u64(f"the count of {kind} artifacts")
        if count > (size - i) // 16:  # each artifact has two lengths at least
            raise damaged(f"{count:,} {kind} artifacts declared, more than the {size - i:,} bytes left can hold")
        record: list[BlobArtifact] = []
        for _ in range(count):
            key = string(f"a {kind} key")
            if not (is_key(key) and key[0] == PLACED_TYPES[kind][0] if kind in PLACED_TYPES
                    else _KEY_RES.get(kind, _NAME_RE).fullmatch(key)):
                raise damaged(f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} key {key[:60]!r} is not the name "
                              "of a cache key")
            n = u64(f"the length of {kind} artifact {key[:12]}")
            if n > MAX_CONTENT_BYTES:
                raise damaged(f"{kind} artifact {key[:12]} declares {n:,} bytes, over the "
                              f"{MAX_CONTENT_BYTES:,} byte limit")
            if i + n > size:
                raise damaged(f"{kind} artifact {key[:12]} declares {n:,} bytes, past the end of the blob")
            record.append(BlobArtifact(kind, key, i, n))
            i += n
        dropped += len(by_type.get(kind, ()))
        by_type[kind] = record  # dict(records): the last record of a type, at the first one's place
    return Blob(p, size, version, tuple(a for r in by_type.values() for a in r), dropped)


__all__ = ["ENCODING_VERSION", "KNOWN_TYPES", "MAX_BLOB_BYTES", "MAX_CONTENT_BYTES", "PLACED_TYPES", "PROFILE_TYPE",
           "Blob", "BlobArtifact", "BlobError", "as_cache_dir", "content", "looks_like_blob",
           "laid_out_from", "parse_at", "place_as_torch", "read_blob", "shown_as"]
