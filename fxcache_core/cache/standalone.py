"""``torch._inductor.standalone_compile`` artifacts, and vLLM's dirs of them, read as caches.

``CompiledArtifact.save(path, format="binary")`` (``CacheCompiledArtifact.save`` in
torch/_inductor/standalone_compile.py, torch 2.13) writes one ``BytesWriter`` record
(torch/utils/_appending_byte_serializer.py: a crc32 of the rest, then
length-prefixed fields, no encoding version)::

    crc32 of everything after it (4 bytes, big-endian)
    header (bytes: "CacheCompiledArtifact")
    torch's build key (bytes: ``torch_key()``, a digest of torch's sources)
    the AOTAutograd key it loads (string)
    a mega-cache blob (bytes: :mod:`fxcache_core.cache.blob`)

and nothing after (``load`` asserts ``is_finished``). ``format="unpacked"`` writes
the blob's entries as a cache dir (``aotautograd/``, ``fxgraph/``): read as any
cache dir. ``AOTCompiledArtifact`` (``aot=True``: header "AOTCompiledArtifact")
holds a pickled callable, not cache entries: it is named and refused.

vLLM keeps one artifact per compiled range and rank,
``torch_compile_cache/<hash>/rank_<i>_<j>/<name>/...``: a dir whose files (at most
:data:`MAX_DEPTH` levels down, :data:`MAX_FILES` files) include binary artifacts is
read as one cache of all their entries.
"""

from __future__ import annotations

import mmap
import os
import zlib
from pathlib import Path

from fxcache_core.cache.blob import (
    MAX_BLOB_BYTES,
    MAX_STRING_BYTES,
    Blob,
    BlobError,
    as_cache_dir,
    parse_at,
)
from fxcache_core.fsutil import open_regular

CACHE_HEADER = b"CacheCompiledArtifact"
"""``CacheCompiledArtifact.CACHE_HEADER``."""
AOT_HEADER = b"AOTCompiledArtifact"
"""``AOTCompiledArtifact.AOT_HEADER``: a pickled callable, refused."""
MAX_DEPTH = 6
"""How deep below a dir binary artifacts are looked for."""
MAX_FILES = 10_000
"""How many files of a dir are looked at for binary artifacts, at most."""


def artifact_header(path: Path) -> bytes | None:
    """The header of a standalone artifact file (``CACHE_HEADER`` or ``AOT_HEADER``),
    else None (any other file, or one that cannot be read)."""
    try:
        with os.fdopen(open_regular(path), "rb") as f:
            head = f.read(4 + 8 + len(CACHE_HEADER))
    except OSError:
        return None
    for h in (CACHE_HEADER, AOT_HEADER):
        if head[4:12] == len(h).to_bytes(8, "big") and head[12:12 + len(h)] == h:
            return h
    return None


def read_artifact(path: str | os.PathLike[str]) -> Blob:
    """The mega-cache blob inside a binary ``CacheCompiledArtifact``; its torch build key
    and AOTAutograd key are checked for shape, the whole for its checksum.

    Raises:
        BlobError: damaged (a wrong checksum, a field past the end, bytes after the
            blob), an ``AOTCompiledArtifact``, or a blob :func:`~fxcache_core.cache.blob.read_blob`
            refuses.
    """
    p = Path(path)
    try:
        with os.fdopen(open_regular(p), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_BLOB_BYTES:
                raise BlobError(f"{p}: {size:,} bytes, over the {MAX_BLOB_BYTES:,} byte limit")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _parse(p, mm, size)
    except OSError as e:
        raise BlobError(f"{p}: cannot read the artifact: {e.strerror or e}") from None
    except ValueError:  # an empty file cannot be mapped
        raise BlobError(f"{p}: damaged standalone artifact: empty") from None


def _parse(p: Path, mm: mmap.mmap, size: int) -> Blob:
    def damaged(why: str) -> BlobError:
        return BlobError(f"{p}: damaged standalone artifact: {why}")

    if size < 4 or zlib.crc32(memoryview(mm)[4:]) != int.from_bytes(mm[0:4], "big"):
        raise damaged("its checksum does not match its content (truncated or altered)")
    i = 4

    def field(what: str, limit: int) -> tuple[int, int]:
        nonlocal i
        if i + 8 > size:
            raise damaged(f"{what} at byte {i} runs past the end")
        n = int.from_bytes(mm[i:i + 8], "big")
        if n > limit:
            raise damaged(f"{what} at byte {i} declares {n:,} bytes, over the {limit:,} limit")
        if i + 8 + n > size:
            raise damaged(f"{what} at byte {i} declares {n:,} bytes, past the end")
        i += 8 + n
        return i - n, i

    lo, hi = field("the header", MAX_STRING_BYTES)
    header = bytes(mm[lo:hi])
    if header == AOT_HEADER:
        raise BlobError(f"{p}: an AOTCompiledArtifact (standalone_compile with aot=True) holds a pickled "
                        "callable, not cache entries: fxcache does not read it")
    if header != CACHE_HEADER:
        shown = header[:40].decode("ascii", "replace") if header.isascii() else repr(header[:40])
        raise BlobError(f"{p}: unknown standalone artifact header {shown!r} (fxcache reads "
                        f"{CACHE_HEADER.decode()})")
    field("torch's build key", MAX_STRING_BYTES)
    field("the AOTAutograd key", MAX_STRING_BYTES)
    lo, hi = field("the blob", MAX_BLOB_BYTES)
    if hi != size:
        raise damaged(f"{size - hi:,} bytes after the blob")
    return parse_at(p, mm, lo, hi)


def artifacts_below(root: Path) -> list[Path]:
    """The binary standalone artifacts (either header) below ``root``, sorted, at most
    :data:`MAX_DEPTH` levels down, of the first :data:`MAX_FILES` files; symlinks are
    not followed."""
    found: list[Path] = []
    seen = 0
    base = len(root.parts)
    for d, dirs, files in os.walk(root, followlinks=False):
        if len(Path(d).parts) - base >= MAX_DEPTH:
            dirs[:] = []
        dirs.sort()
        for name in sorted(files):
            seen += 1
            if seen > MAX_FILES:
                return found
            p = Path(d) / name
            if not p.is_symlink() and p.is_file() and artifact_header(p) is not None:
                found.append(p)
    return found


def dir_as_cache(root: Path) -> Path | None:
    """A dir of standalone artifacts (vLLM's layout) as one temporary cache dir of all
    their entries (:func:`~fxcache_core.cache.blob.as_cache_dir`), or None where the dir
    holds none.

    Raises:
        BlobError: an artifact of it is damaged, unknown or an ``AOTCompiledArtifact``.
    """
    found = artifacts_below(root)
    if not found:
        return None
    blobs = [read_artifact(p) for p in found]
    return as_cache_dir(*blobs, shown=f"{root} ({len(blobs)} standalone_compile artifacts)")


__all__ = ["AOT_HEADER", "CACHE_HEADER", "MAX_DEPTH", "MAX_FILES", "artifact_header", "artifacts_below",
           "dir_as_cache", "read_artifact"]
