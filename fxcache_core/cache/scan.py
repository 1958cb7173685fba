"""Scanning the local cache dir into frozen records.

A scan reads directory listings and one ``lstat`` per file; it never opens an
entry (decoding is :mod:`fxcache_core.decode.entries`) and never follows a symlink.
Entries are kept in torch's lookup order: sorted by name, dot-prefixed names
(temp files of a concurrent ``write_atomic``) set apart, exactly as
``GuardedCache.iterate_over_candidates`` in torch/_inductor/codecache.py.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fxcache_core.cache.keys import KeyKind, artifact_key, is_key
from fxcache_core.errors import KeyLookupError
from fxcache_core.fsutil import NotRegularFile, open_file, open_regular
from fxcache_core.reasons import Reason, code_of

_KEY_CHARS = set("abcdefghijklmnopqrstuvwxyz234567")


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One file as ``lstat`` saw it.

    Attributes:
        where: absolute path, as a string (a scan makes tens of thousands of
            these; :attr:`path` builds the ``Path`` when asked).
        size: bytes.
        mtime: last modification, seconds since the epoch.
        atime: last access, seconds since the epoch (only meaningful where the
            file system records reads).
        mtime_ns, ino: the exact mtime (ns) and inode, which tell a file
            rewritten in place from the one an index remembers (0 if unknown).
        dev, ctime_ns: the device and the exact inode change time (ns): a file
            rewritten with its old size and mtime put back still moves its
            ctime, which no user call can set (0 if unknown).
    """

    where: str
    size: int
    mtime: float
    atime: float
    mtime_ns: int = 0
    ino: int = 0
    dev: int = 0
    ctime_ns: int = 0

    @property
    def identity(self) -> tuple[int, int, int, int, int]:
        """``(dev, ino, size, mtime_ns, ctime_ns)``: what a file's bytes are proven by
        (as git's index proves a clean file), compared with :func:`read_entry_proven`'s."""
        return (self.dev, self.ino, self.size, self.mtime_ns, self.ctime_ns)

    @property
    def path(self) -> Path:
        """The absolute path."""
        return Path(self.where)

    @property
    def name(self) -> str:
        """The file name."""
        return self.where.rpartition(os.sep)[2]

    @property
    def last_used(self) -> float:
        """When the file was last used, epoch seconds: ``max(atime, mtime)``. A
        lookup that reads an entry moves its atime where the file system records
        reads (relatime); where it does not (noatime), mtime counts."""
        return max(self.atime, self.mtime)


@dataclass(frozen=True, slots=True)
class Entry:
    """One cache entry: a pickled compiled graph under a key dir.

    Attributes:
        kind: which cache it belongs to.
        key: the cache key of its key dir.
        file: the file (path, size in bytes, mtime/atime in epoch seconds).
        order: its position in torch's lookup order within the key (0-based).
        via_symlink: reached through a symlink (the entry file or a dir above it);
            torch reads it, gc never deletes it.
    """

    kind: KeyKind
    key: str
    file: FileInfo
    order: int
    via_symlink: bool = False

    @property
    def name(self) -> str:
        """The entry file name (torch writes the sha256 hash of the content)."""
        return self.file.name

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

    def to_json(self) -> dict[str, object]:
        """``{"entry", "size" (bytes), "mtime", "last_used" (epoch seconds)}``: an
        entry in ``fxcache ls --json``."""
        f = self.file
        return {"entry": f.name, "size": f.size, "mtime": f.mtime, "last_used": max(f.atime, f.mtime)}


@dataclass(frozen=True)
class Skipped:
    """Something under the cache dir that the scan did not treat as an entry.

    Attributes:
        path: where it is.
        reason: why it was skipped, a :class:`~fxcache_core.reasons.Reason`
            (codes: ``unreadable-dir``, ``cannot-stat``, ``broken-symlink``,
            ``dot-prefixed``, ``not-a-regular-file``, ``unexpected-file``,
            ``not-a-key-dir``).
    """

    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class KeyDirTally:
    """The regular files of a key dir as the scan's ``lstat`` of each saw them.

    Attributes:
        ino: the key dir's inode, as its parent's listing showed it.
        files: how many (entries and temp files).
        bytes, blocks: the sum of their sizes and of their 512-byte blocks, those
            with a single link.
        linked: ``(st_dev, st_ino, size, blocks)`` of those with more than one link
            (counted once a file, wherever met first).
    """

    ino: int
    files: int
    bytes: int
    blocks: int
    linked: tuple[tuple[int, int, int, int], ...] = ()


@dataclass(frozen=True)
class CacheKey:
    """A key dir and its entries.

    Attributes:
        kind: FX graph or AOTAutograd.
        key: the 52-character cache key.
        where: the key dir, as a string (:attr:`path` builds the ``Path``).
        entries: the entries in torch's lookup order (sorted by name, no dotfiles).
        temp_files: dot-prefixed files (a compile's ``write_atomic`` in flight,
            or one that died); torch skips them on lookup.
        via_symlink: the key dir, or a dir above it, is a symlink.
        readable: False when the key dir could not be listed, or a file in it
            could not be stat'ed (some of its entries are unknown, not absent).
    """

    kind: KeyKind
    key: str
    where: str
    entries: tuple[Entry, ...]
    temp_files: tuple[FileInfo, ...] = ()
    via_symlink: bool = False
    readable: bool = True
    tally: KeyDirTally | None = field(default=None, compare=False, repr=False)
    """What the ``lstat`` of each name in the key dir said, for a walk of the whole cache
    dir that would ``lstat`` them again (:func:`~fxcache_core.cache.inventory.take_inventory`);
    None unless every name was listed and ``lstat``'ed and is a regular file, and the
    key dir was reached without a symlink."""
    size: int = field(init=False)
    """Bytes of all entries (temp files not counted)."""
    mtime: float | None = field(init=False)
    """Newest entry mtime (epoch seconds), None for a key with no entries."""
    last_used: float | None = field(init=False)
    """When an entry of the key was last used (the newest
    :attr:`FileInfo.last_used`, epoch seconds), None for a key with no entries."""

    def __post_init__(self) -> None:
        # Plain fields set once: ls reads them for every key, and a
        # functools.cached_property costs ~4 us a read on Python 3.11 (its lock).
        files = [e.file for e in self.entries]
        object.__setattr__(self, "size", sum(f.size for f in files))
        object.__setattr__(self, "mtime", max((f.mtime for f in files), default=None))
        object.__setattr__(self, "last_used", max((max(f.atime, f.mtime) for f in files), default=None))

    @property
    def path(self) -> Path:
        """The key dir."""
        return Path(self.where)

    def to_json(self) -> dict[str, object]:
        """A key in ``fxcache ls --json``: ``kind``, ``key``, ``path``, ``size``
        (bytes), ``mtime``/``last_used`` (epoch seconds, None without entries),
        ``entries`` (:meth:`Entry.to_json` each, in lookup order) and
        ``temp_files`` (names)."""
        return {"kind": self.kind.value, "key": self.key, "path": self.where, "size": self.size,
                "mtime": self.mtime, "last_used": self.last_used,
                "entries": [e.to_json() for e in self.entries],
                "temp_files": [t.name for t in self.temp_files]}


@dataclass(frozen=True)
class CacheScan:
    """Everything a scan found under one cache dir.

    Attributes:
        root: the cache dir.
        keys: FX graph keys then AOTAutograd keys, each group sorted by key.
        skipped: symlinks, foreign files and dirs, unreadable dirs.
        listings: what the scan listed on the way to FX key dirs: the names in
            the cache dir, in ``fxgraph/`` and in each bucket dir, by the dir's
            path (as the scan spells it); None for a dir whose listing failed.
            A dir missing here was never listed. :meth:`fx_key_absent` reads it.
    """

    root: Path
    keys: tuple[CacheKey, ...]
    skipped: tuple[Skipped, ...] = ()
    listings: dict[str, frozenset[str] | None] = field(default_factory=dict, repr=False, compare=False)

    def fx_key_absent(self, key: str) -> bool:
        """Whether successful listings prove the cache has no dir for FX key ``key``.

        Proof is a listing, from the cache dir down, that lacks the next name on
        the way: the cache dir lists no ``fxgraph``, or ``fxgraph/`` lists no
        ``key[1:3]`` bucket, or the bucket lists no ``key``. A listing that
        failed (no permission, an I/O error) or was never made proves nothing:
        "could not look" is not "absent".
        """
        fx_root = str(self.root / KeyKind.FX_GRAPH.value)  # each path as the scan spelled it
        for path, name in ((str(self.root), KeyKind.FX_GRAPH.value), (fx_root, key[1:3]),
                           (os.path.join(fx_root, key[1:3]), key)):
            names = self.listings.get(path)
            if names is None:
                return False
            if name not in names:
                return True
        return False

    def entries(self) -> Iterator[Entry]:
        """Every entry, key by key, in lookup order within each key."""
        for k in self.keys:
            yield from k.entries

    @functools.cached_property
    def size(self) -> int:
        """Bytes of all entries."""
        return sum(k.size for k in self.keys)

    @functools.cached_property
    def entry_count(self) -> int:
        return sum(len(k.entries) for k in self.keys)

    def to_json(self) -> dict[str, object]:
        """``root``, ``size`` (bytes), ``entries`` (count), ``keys`` (:meth:`CacheKey.to_json`
        each) and ``skipped`` (``{"path", "reason", "reason_code"}`` each)."""
        return {"root": str(self.root), "size": self.size, "entries": self.entry_count,
                "keys": [k.to_json() for k in self.keys],
                "skipped": [{"path": str(s.path), "reason": s.reason, "reason_code": code_of(s.reason)}
                            for s in self.skipped]}

    def key(self, key: str) -> CacheKey | None:
        """The key with exactly this name, or None."""
        return self._by_name.get(key)

    @functools.cached_property
    def _by_name(self) -> dict[str, CacheKey]:
        return {k.key: k for k in self.keys}

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


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a bulk build of records.

    A scan allocates hundreds of thousands of small acyclic objects (records,
    tuples, strings); each allocation burst triggers collections that re-walk
    everything already built (~15% of a 100k-entry scan). Reference
    counting still frees everything; only cycle detection waits until the end.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_entry_bytes(path: Path) -> bytes:
    """Read an entry file without moving its access time where the OS allows it.

    gc ranks entries by last use (atime where the file system records reads);
    fxcache's own reads must not count as a use. Linux honours ``O_NOATIME``
    for the file's owner (and root); elsewhere, or when refused (EPERM), the
    file is read normally. Symlinks are followed, as torch's ``open`` follows
    them (reading is harmless: nothing read is ever executed). Opened
    non-blocking and checked to be a regular file on the fd itself, so a FIFO or
    device put in the entry's place after the scan is refused, never waited on.

    Raises:
        NotRegularFile: it is not a regular file (an ``OSError``).
        OSError: the file cannot be opened or read.
    """
    with os.fdopen(open_regular(path, noatime=True), "rb") as f:
        return f.read()


Identity = tuple[int, int, int, int, int]
"""``(dev, ino, size, mtime_ns, ctime_ns)`` of a file (:attr:`FileInfo.identity`)."""


def _identity(st: os.stat_result) -> Identity:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_entry_proven(path: str | os.PathLike[str]) -> tuple[bytes, Identity | None, int]:
    """:func:`read_entry_bytes`, and what proves which file the bytes are: the
    file's :attr:`FileInfo.identity` from ``fstat`` on the one fd read, taken
    before and after the read (None when the two differ: the file changed while
    it was read), and when the read ended (``time.time_ns()``), for telling a
    racily clean file (see :func:`fxcache_core.state.index.racily_clean`).

    Every entry a command decodes is read here, so it makes the fewest calls
    that keep those guarantees: one ``open`` (non-blocking, ``O_NOATIME`` where
    allowed), the ``fstat`` that both refuses what is not a regular file and is
    the identity before, ``read`` to the end of the file, the ``fstat`` after.
    The fd stays non-blocking: on a regular file that changes nothing.

    Raises:
        NotRegularFile, OSError: as :func:`read_entry_bytes`.
    """
    fd = open_file(path, nonblocking=True, noatime=True)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, st.st_mode)
        before = _identity(st)
        chunk = os.read(fd, st.st_size + 1)
        parts = [chunk]
        while chunk:
            chunk = os.read(fd, 1 << 20)
            parts.append(chunk)
        data = parts[0] if len(parts) == 2 else b"".join(parts)
        after = _identity(os.fstat(fd))
        done = time.time_ns()
    finally:
        os.close(fd)
    return data, (before if before == after and len(data) == before[2] else None), done


def _scan_key_dir(kind: KeyKind, key: str, path: str, linked: bool,
                  skipped: list[Skipped], ino: int = 0, tally: bool = False) -> CacheKey:
    # The hot loop of every command: one lstat per file, and the records built
    # positionally (a 100k-entry cache makes 200k of them).
    entries: list[Entry] = []
    temps: list[FileInfo] = []
    try:
        names = sorted(os.listdir(path))
    except OSError as e:
        skipped.append(Skipped(Path(path), Reason(f"unreadable key dir: {e.strerror}", "unreadable-dir")))
        return CacheKey(kind, key, path, (), (), linked, readable=False)
    base = path + os.sep
    complete = True
    lstat, is_reg, is_lnk = os.lstat, stat.S_ISREG, stat.S_ISLNK
    regular = tally and not linked  # every name a regular file, as lstat said: the tally holds
    n_bytes = n_blocks = 0
    linked_files: list[tuple[int, int, int, int]] = []
    for name in names:
        p = base + name
        try:
            st = lstat(p)
            if regular:
                if is_reg(st.st_mode):
                    if st.st_nlink > 1:
                        linked_files.append((st.st_dev, st.st_ino, st.st_size, st.st_blocks))
                    else:
                        n_bytes += st.st_size
                        n_blocks += st.st_blocks
                else:
                    regular = False
            is_link = is_lnk(st.st_mode)
            if is_link:
                st = os.stat(p)  # torch opens entries through symlinks
        except FileNotFoundError:
            if name.startswith("."):
                continue  # a temp file renamed or removed while we listed (not counted either)
            regular = False
            skipped.append(Skipped(Path(p), Reason("broken symlink (torch fails to open it and skips it)",
                                                      "broken-symlink")))
            continue
        except OSError as e:
            skipped.append(Skipped(Path(p), Reason(f"cannot stat: {e.strerror}", "cannot-stat")))
            complete = regular = False  # it may be an entry: the key's entries are not all known
            continue
        info = FileInfo(p, st.st_size, st.st_mtime, st.st_atime, st.st_mtime_ns, st.st_ino,
                        st.st_dev, st.st_ctime_ns)
        if name[0] == ".":
            if is_reg(st.st_mode) and not is_link:
                temps.append(info)
            else:
                skipped.append(Skipped(Path(p), Reason("dot-prefixed, not a regular file", "dot-prefixed")))
            continue
        if not is_reg(st.st_mode):
            skipped.append(Skipped(Path(p), Reason("not a regular file (torch fails to open it and skips it)",
                                                  "not-a-regular-file")))
            continue
        entries.append(Entry(kind, key, info, len(entries), linked or is_link))
    counted = None
    if regular and ino:  # every name an entry or a temp file
        counted = KeyDirTally(ino, len(entries) + len(temps), n_bytes, n_blocks, tuple(linked_files))
    return CacheKey(kind, key, path, tuple(entries), tuple(temps), linked, readable=complete, tally=counted)


def _dirs(path: str, skipped: list[Skipped],
          listings: dict[str, frozenset[str] | None] | None = None) -> list[tuple[str, str, bool, int]]:
    """Sub-directories of ``path`` (sorted): (name, path, is a symlink, the inode the
    listing shows), paths as strings.

    Symlinks to directories are followed, as torch's ``os.listdir``/``open``
    follow them; the flag lets gc refuse to delete through them. ``listings``:
    where to record the names listed (None when the listing failed).
    """
    out = []
    try:
        it = sorted(os.scandir(path), key=lambda d: d.name)
    except FileNotFoundError:
        if listings is not None:
            listings[path] = None
        return []
    except OSError as e:
        if listings is not None:
            listings[path] = None
        skipped.append(Skipped(Path(path), Reason(f"unreadable dir: {e.strerror}", "unreadable-dir")))
        return []
    if listings is not None:
        listings[path] = frozenset(d.name for d in it)
    for d in it:
        try:
            is_dir = d.is_dir(follow_symlinks=True)
        except OSError:
            is_dir = False
        if is_dir:
            out.append((d.name, d.path, d.is_symlink(), d.inode()))
        elif d.is_symlink():
            skipped.append(Skipped(Path(d.path), Reason("broken symlink", "broken-symlink")))
        else:
            skipped.append(Skipped(Path(d.path), Reason("unexpected file", "unexpected-file")))
    return out


def scan_cache(root: Path, tally: bool = False) -> CacheScan:
    """Scan ``root`` (a cache dir) into a :class:`CacheScan`.

    Reads ``fxgraph/<key[1:3]>/<key>/`` and ``aotautograd/<key>/``, following
    symlinked dirs and entries as torch does (each entry found through a
    symlink is marked ``via_symlink``; gc never deletes those). A dir whose
    name is not a key of that kind, or an FX key filed under the wrong
    two-letter bucket (torch would never look there), is reported in
    ``skipped``, not listed as a key. Files and dirs that vanish during the
    scan (a concurrent gc or compile) are ignored.

    ``tally``: keep each key dir's :attr:`CacheKey.tally` too (for gc, whose walk of the
    whole cache dir then need not ``lstat`` the entries again).

    Cost: one ``listdir`` per dir and one ``lstat`` per file; nothing is opened.
    """
    with paused_gc():
        return _scan_cache(root, tally)


def _scan_cache(root: Path, tally: bool = False) -> CacheScan:
    skipped: list[Skipped] = []
    keys: list[CacheKey] = []
    listings: dict[str, frozenset[str] | None] = {}
    try:
        listings[str(root)] = frozenset(os.listdir(root))
    except OSError:
        listings[str(root)] = None
    fx_root = root / KeyKind.FX_GRAPH.value
    fx_linked = fx_root.is_symlink()
    for bucket, bpath, b_linked, _ in _dirs(str(fx_root), skipped, listings):
        for name, kpath, k_linked, ino in _dirs(bpath, skipped, listings):
            if KeyKind.of_key(name) is KeyKind.FX_GRAPH and is_key(name) and name[1:3] == bucket:
                keys.append(_scan_key_dir(KeyKind.FX_GRAPH, name, kpath,
                                          fx_linked or b_linked or k_linked, skipped, ino, tally))
            else:
                skipped.append(Skipped(Path(kpath), Reason("not an FX graph key dir", "not-a-key-dir")))
    aot_root = root / KeyKind.AOT_AUTOGRAD.value
    aot_linked = aot_root.is_symlink()
    for name, kpath, k_linked, ino in _dirs(str(aot_root), skipped):
        if KeyKind.of_key(name) is KeyKind.AOT_AUTOGRAD and is_key(name):
            keys.append(_scan_key_dir(KeyKind.AOT_AUTOGRAD, name, kpath,
                                      aot_linked or k_linked, skipped, ino, tally))
        else:
            skipped.append(Skipped(Path(kpath), Reason("not an AOTAutograd key dir", "not-a-key-dir")))
    return CacheScan(root=root, keys=tuple(keys), skipped=tuple(skipped), listings=listings)


@dataclass(frozen=True, slots=True)
class Artifact:
    """A generated-code file in the cache root: ``<key[1:3]>/<key>.<ext>``.

    Kernel sources and binaries (``.cpp``, ``.so``, ``.main.cpp``...) and FX
    graph wrapper modules (``.py``), written by ``write`` in
    torch/_inductor/codecache.py. They are derived: torch writes (and, for
    C++, compiles) them again when they are missing.

    Attributes:
        file: the file as ``lstat`` saw it (size in bytes, times in epoch seconds).
        key: its code-cache key (``c`` + 51 base32 chars).
    """

    file: FileInfo
    key: str


def scan_artifacts(root: Path) -> tuple[Artifact, ...]:
    """Every generated-code file under ``root``'s two-letter dirs, sorted by path.

    Only regular files named ``<key>.<ext>`` inside the dir ``key[1:3]`` count;
    symlinks (files or dirs), dot-prefixed temp files and anything else are
    left out. Cost: one ``listdir`` per two-letter dir and one ``lstat`` per file.
    """
    out: list[Artifact] = []
    try:
        tops = sorted(os.scandir(root), key=lambda d: d.name)
    except OSError:
        return ()
    for d in tops:
        if len(d.name) != 2 or d.is_symlink() or not d.is_dir(follow_symlinks=False):
            continue
        try:
            names = sorted(os.listdir(d.path))
        except OSError:
            continue
        for name in names:
            key = artifact_key(name)
            if key is None or key[1:3] != d.name:
                continue
            p = os.path.join(d.path, name)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append(Artifact(FileInfo(p, st.st_size, st.st_mtime, st.st_atime,
                                             st.st_mtime_ns, st.st_ino), key))
    return tuple(out)
