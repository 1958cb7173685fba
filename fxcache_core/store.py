"""Scanning the local cache dir into frozen records.

A scan reads directory listings and one ``lstat`` per file; it never opens an
entry (decoding is :mod:`fxcache_core.decode`) and never follows a symlink.
Entries are kept in torch's lookup order: sorted by name, dot-prefixed names
(temp files of a concurrent ``write_atomic``) set apart, exactly as
``GuardedCache.iterate_over_candidates`` in torch/_inductor/codecache.py.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import KeyLookupError
from .keys import KeyKind, is_key

_KEY_CHARS = set("abcdefghijklmnopqrstuvwxyz234567")


@dataclass(frozen=True)
class FileInfo:
    """One file as ``lstat`` saw it.

    Attributes:
        path: absolute path.
        size: bytes.
        mtime: last modification, seconds since the epoch.
        atime: last access, seconds since the epoch (only meaningful where the
            file system records reads).
    """

    path: Path
    size: int
    mtime: float
    atime: float

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name


@dataclass(frozen=True)
class Entry:
    """One cache entry: a pickled compiled graph under a key dir.

    Attributes:
        kind: which cache it belongs to.
        key: the cache key of its key dir.
        file: the file (path, size in bytes, mtime/atime in epoch seconds).
        order: its position in torch's lookup order within the key (0-based).
    """

    kind: KeyKind
    key: str
    file: FileInfo
    order: int

    @property
    def name(self) -> str:
        """The entry file name (torch writes the sha256 hash of the content)."""
        return self.file.path.name

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def size(self) -> int:
        """Size in bytes."""
        return self.file.size

    @property
    def mtime(self) -> float:
        """Last modification, seconds since the epoch."""
        return self.file.mtime


@dataclass(frozen=True)
class Skipped:
    """Something under the cache dir that the scan did not treat as an entry."""

    path: Path
    reason: str


@dataclass(frozen=True)
class CacheKey:
    """A key dir and its entries.

    Attributes:
        kind: FX graph or AOTAutograd.
        key: the 52-character cache key.
        path: the key dir.
        entries: the entries in torch's lookup order (sorted by name, no dotfiles).
        temp_files: dot-prefixed files (a compile's ``write_atomic`` in flight,
            or one that died); torch skips them on lookup.
    """

    kind: KeyKind
    key: str
    path: Path
    entries: tuple[Entry, ...]
    temp_files: tuple[FileInfo, ...] = ()

    @property
    def size(self) -> int:
        """Bytes of all entries (temp files not counted)."""
        return sum(e.size for e in self.entries)

    @property
    def mtime(self) -> float | None:
        """Newest entry mtime (epoch seconds), None for a key with no entries."""
        return max((e.mtime for e in self.entries), default=None)

    def entry(self, name_prefix: str) -> Entry:
        """The entry whose name starts with ``name_prefix``.

        Raises:
            KeyLookupError: no entry or several entries match.
        """
        hits = [e for e in self.entries if e.name.startswith(name_prefix)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise KeyLookupError(f"key {self.key} has no entry starting with {name_prefix!r}")
        raise KeyLookupError(
            f"entry prefix {name_prefix!r} is ambiguous in key {self.key}: "
            + ", ".join(e.name[:12] for e in hits[:5])
        )


@dataclass(frozen=True)
class CacheScan:
    """Everything a scan found under one cache dir.

    Attributes:
        root: the cache dir.
        keys: FX graph keys then AOTAutograd keys, each group sorted by key.
        skipped: symlinks, foreign files and dirs, unreadable dirs.
    """

    root: Path
    keys: tuple[CacheKey, ...]
    skipped: tuple[Skipped, ...] = ()

    def entries(self) -> Iterator[Entry]:
        """Every entry, key by key, in lookup order within each key."""
        for k in self.keys:
            yield from k.entries

    @property
    def size(self) -> int:
        """Bytes of all entries."""
        return sum(k.size for k in self.keys)

    @property
    def entry_count(self) -> int:
        return sum(len(k.entries) for k in self.keys)

    def key(self, key: str) -> CacheKey | None:
        """The key with exactly this name, or None."""
        for k in self.keys:
            if k.key == key:
                return k
        return None

    def find(self, prefix: str, kind: KeyKind | None = None) -> CacheKey:
        """Resolve a unique key prefix (with its ``f``/``a`` letter) to its key.

        Raises:
            KeyLookupError: the prefix is not made of key characters, matches
                no key, or matches several keys (the message lists some).
        """
        if not prefix or not set(prefix) <= _KEY_CHARS:
            raise KeyLookupError(
                f"{prefix!r} is not a key prefix (keys are 'f' or 'a' followed by "
                "lower-case base32: a-z, 2-7)"
            )
        pool = [k for k in self.keys if kind is None or k.kind is kind]
        exact = [k for k in pool if k.key == prefix]
        if exact:
            return exact[0]
        hits = [k for k in pool if k.key.startswith(prefix)]
        if len(hits) == 1:
            return hits[0]
        where = f"in {self.root}"
        if not hits:
            raise KeyLookupError(f"no key starts with {prefix!r} {where} ({len(pool)} keys)")
        shown = ", ".join(k.key[:12] for k in hits[:5])
        more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
        raise KeyLookupError(f"key prefix {prefix!r} is ambiguous {where}: {shown}{more}")


_O_NOATIME = getattr(os, "O_NOATIME", 0)


def read_entry_bytes(path: Path) -> bytes:
    """Read an entry file without moving its access time where the OS allows it.

    gc ranks entries by last use (atime where the file system records reads);
    fxcache's own reads must not count as a use. Linux honours ``O_NOATIME``
    for the file's owner (and root); elsewhere, or when refused (EPERM), the
    file is read normally. Symlinks are not followed (``O_NOFOLLOW``).

    Raises:
        OSError: the file cannot be opened or read (ELOOP for a symlink).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | _O_NOATIME)
    except PermissionError:
        if not _O_NOATIME:
            raise
        fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        return f.read()


def _lstat(path: Path) -> FileInfo:
    st = os.lstat(path)
    return FileInfo(path=path, size=st.st_size, mtime=st.st_mtime, atime=st.st_atime)


def _scan_key_dir(kind: KeyKind, key: str, path: Path, skipped: list[Skipped]) -> CacheKey:
    entries: list[Entry] = []
    temps: list[FileInfo] = []
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        skipped.append(Skipped(path, f"unreadable key dir: {e.strerror}"))
        return CacheKey(kind, key, path, ())
    for name in names:
        p = path / name
        try:
            st = os.lstat(p)
        except OSError:
            continue  # removed while we were listing
        info = FileInfo(path=p, size=st.st_size, mtime=st.st_mtime, atime=st.st_atime)
        if name.startswith("."):
            if stat.S_ISREG(st.st_mode):
                temps.append(info)
            else:
                skipped.append(Skipped(p, "dot-prefixed non-file"))
            continue
        if stat.S_ISLNK(st.st_mode):
            skipped.append(Skipped(p, "symlink (not followed)"))
            continue
        if not stat.S_ISREG(st.st_mode):
            skipped.append(Skipped(p, "not a regular file"))
            continue
        entries.append(Entry(kind=kind, key=key, file=info, order=len(entries)))
    return CacheKey(kind, key, path, tuple(entries), tuple(temps))


def _dirs(path: Path, skipped: list[Skipped]) -> list[tuple[str, Path]]:
    """Sub-directories of ``path`` (sorted), symlinks and files reported as skipped."""
    out = []
    try:
        it = sorted(os.scandir(path), key=lambda d: d.name)
    except FileNotFoundError:
        return []
    except OSError as e:
        skipped.append(Skipped(path, f"unreadable dir: {e.strerror}"))
        return []
    for d in it:
        p = Path(d.path)
        if d.is_symlink():
            skipped.append(Skipped(p, "symlink (not followed)"))
        elif d.is_dir(follow_symlinks=False):
            out.append((d.name, p))
        else:
            skipped.append(Skipped(p, "unexpected file"))
    return out


def scan_cache(root: Path) -> CacheScan:
    """Scan ``root`` (a cache dir) into a :class:`CacheScan`.

    Reads ``fxgraph/<key[1:3]>/<key>/`` and ``aotautograd/<key>/``. A dir whose
    name is not a key of that kind, or an FX key filed under the wrong
    two-letter bucket (torch would never look there), is reported in
    ``skipped``, not listed as a key. Files and dirs that vanish during the
    scan (a concurrent gc or compile) are ignored.

    Cost: one ``listdir`` per dir and one ``lstat`` per file; nothing is opened.
    """
    skipped: list[Skipped] = []
    keys: list[CacheKey] = []
    fx_root = root / KeyKind.FX_GRAPH.value
    if fx_root.is_symlink():
        skipped.append(Skipped(fx_root, "symlink (not followed)"))
    else:
        for bucket, bpath in _dirs(fx_root, skipped):
            for name, kpath in _dirs(bpath, skipped):
                if KeyKind.of_key(name) is KeyKind.FX_GRAPH and is_key(name) and name[1:3] == bucket:
                    keys.append(_scan_key_dir(KeyKind.FX_GRAPH, name, kpath, skipped))
                else:
                    skipped.append(Skipped(kpath, "not an FX graph key dir"))
    aot_root = root / KeyKind.AOT_AUTOGRAD.value
    if aot_root.is_symlink():
        skipped.append(Skipped(aot_root, "symlink (not followed)"))
    else:
        for name, kpath in _dirs(aot_root, skipped):
            if KeyKind.of_key(name) is KeyKind.AOT_AUTOGRAD and is_key(name):
                keys.append(_scan_key_dir(KeyKind.AOT_AUTOGRAD, name, kpath, skipped))
            else:
                skipped.append(Skipped(kpath, "not an AOTAutograd key dir"))
    return CacheScan(root=root, keys=tuple(keys), skipped=tuple(skipped))
