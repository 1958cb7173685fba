"""Everything under a cache dir, file by file, classified by what torch wrote it for.

:mod:`fxcache_core.cache.scan` reads the two guarded caches (FX graphs, AOTAutograd);
this module accounts for every byte: one walk through directory file
descriptors (each dir opened relative to its parent with ``O_NOFOLLOW`` and
checked to be the dir its parent listed, as ``shutil.rmtree``'s fd-based walk
does: :func:`fxcache_core.fsutil.open_subdir`), one ``scandir`` and one
``fstatat`` per name, never following a symlink and never opening a file. Each
regular file becomes an :class:`Item` of one :class:`ContentKind`; directories,
symlinks and other special files are counted apart, so that the totals of an
:class:`Inventory` are exactly what ``find`` and ``du`` say of the same dir
(see :class:`Totals`).

Where torch 2.13 writes under its cache dir (``cache_dir()`` in
torch/_inductor/runtime/cache_dir_utils.py), and the kind each gets:

=========================================  ====================  =========================================
path under the cache dir                   kind                  written by (torch file)
=========================================  ====================  =========================================
``fxgraph/<key[1:3]>/<key>/<entry>``       ``fx``                ``FxGraphCache`` (_inductor/codecache.py)
``aotautograd/<key>/<entry>``              ``aot``               ``AOTAutogradCache`` (_functorch/.../autograd_cache.py)
``<2 chars>/c<51>.<ext>``                  ``code``              ``write`` (codecache.py): ``.py``, ``.cpp``, ``.main.cpp``, ``.h``...
``<2 chars>/c<51>[.main].so`` (``.o``...)  ``library``           ``CppBuilder`` (_inductor/cpp_builder.py), and
                                                                 torch 2.14+'s ``.so.load_ok`` markers
``<2 chars>/c<51>.best_config``            ``autotune``          ``LocalAutotuneCache`` (_inductor/runtime/autotune_cache.py)
``precompiled_headers/c<51>.h[.gch]``      ``precompiled-header``  ``_precompile_header`` (codecache.py)
``triton/<device>/<hash>/...``             ``triton``            Triton's ``FileCacheManager`` (triton/runtime/cache.py),
                                                                 ``TritonBundler`` (_inductor/triton_bundler.py)
``dynamo/code_state_<job>.pkl``            ``pgo``               ``put_local_code_state`` (_dynamo/pgo.py)
``dynamo/...`` (other), ``aoti_eager/``,   ``precompile``        ``DynamoCache`` (_dynamo/package.py), AOTInductor
``<2 chars>/c<51>/...``                                          (codecache.py ``AotCodeCompiler``), ``aoti_eager.py``
``locks/*.lock`` and every ``*.lock``      ``lock``              ``FileLock`` (torch/utils/_filelock.py)
dot-files and ``*.tmp`` in torch's dirs,   ``temp``              ``write_atomic`` (codecache.py), ``write_local_impl``
Triton's ``tmp.*`` dirs                                          (pgo.py), ``FileCacheManager.put``
``cache/``, ``memoizer_cache.json``,       ``torch-other``       the key-value stores of _inductor/cache.py,
``autoheuristic/``, ``halide-runtime-*``                         codecache.py ``LocalCache``, runtime/caching/...
fxcache's ``index-*.sqlite``               ``fxcache-index``     :mod:`fxcache_core.state.index` (only when its dir is inside)
anything else                              ``unknown``
=========================================  ====================  =========================================

Precompiled headers always go to the *default* cache dir
(``<tempdir>/torchinductor_<user>/precompiled_headers``, ``_HEADER_DIR`` in
codecache.py), whatever ``TORCHINDUCTOR_CACHE_DIR`` says: torch keeps them
global on purpose. Triton writes to ``$TRITON_CACHE_DIR`` when it is set
(then ``<dir>/<hash>/...``, no device level: :data:`TRITON_LAYOUT`), else to
``triton/<device>/`` under the Inductor cache dir (``triton_cache_dir`` in
cache_dir_utils.py).
"""

from __future__ import annotations

import enum
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.keys import artifact_key, is_code_key, is_key
from fxcache_core.cache.scan import FileInfo, KeyDirTally, Skipped, paused_gc
from fxcache_core.fsutil import DirRefused, WalkFailure, open_dir, open_subdir
from fxcache_core.reasons import Reason

INDUCTOR_LAYOUT = "inductor"
"""An Inductor cache dir (``$TORCHINDUCTOR_CACHE_DIR`` or the default one)."""
TRITON_LAYOUT = "triton"
"""A Triton cache dir of its own (``$TRITON_CACHE_DIR``): ``<hash>/<files>``."""


class ContentKind(str, enum.Enum):
    """What a file under a cache dir is (see the module docstring for the paths)."""

    FX = "fx"
    """An FX graph cache entry."""
    AOT = "aot"
    """An AOTAutograd cache entry."""
    CODE = "code"
    """Generated source code (``.py`` wrappers and Triton kernels, ``.cpp``, ``.h``...)."""
    LIBRARY = "library"
    """A compiled library or object (``.so``, ``.o``...), built by the C++ compiler from generated code."""
    PCH = "precompiled-header"
    """A C++ precompiled header (``.gch``/``.pch``) and the header stub it is built from."""
    TRITON = "triton"
    """A compiled Triton kernel's files (cubin, PTX, TTIR/TTGIR/LLIR, JSON metadata, group files)."""
    AUTOTUNE = "autotune"
    """A kernel's autotuning result (``.best_config``)."""
    PGO = "pgo"
    """Dynamo's profile-guided state for a job (``code_state_*.pkl``)."""
    PRECOMPILE = "precompile"
    """AOTInductor and Dynamo precompile outputs."""
    TORCH_OTHER = "torch-other"
    """Torch's other on-disk stores (key-value caches, autoheuristic data, runtimes)."""
    LOCK = "lock"
    """A lock file (``FileLock``)."""
    TEMP = "temp"
    """A temp file of a write in flight, or left by one that died."""
    INDEX = "fxcache-index"
    """fxcache's own index of decoded entries (when its dir is inside the cache dir)."""
    UNKNOWN = "unknown"
    """Anything torch 2.13 is not known to write there."""

    @property
    def label(self) -> str:
        """A human name for tables."""
        return _LABELS[self]


_LABELS = {
    ContentKind.FX: "FX entries", ContentKind.AOT: "AOTAutograd entries", ContentKind.CODE: "generated code",
    ContentKind.LIBRARY: "compiled libraries", ContentKind.PCH: "precompiled headers",
    ContentKind.TRITON: "Triton kernels", ContentKind.AUTOTUNE: "autotune results", ContentKind.PGO: "Dynamo PGO state",
    ContentKind.PRECOMPILE: "AOTInductor / precompile", ContentKind.TORCH_OTHER: "torch's other stores",
    ContentKind.LOCK: "locks", ContentKind.TEMP: "temp files", ContentKind.INDEX: "fxcache index", ContentKind.UNKNOWN: "unknown",
}

LIBRARY_EXTS = frozenset({"so", "o", "a", "pyd", "dll", "dylib", "lib", "obj"})
"""Last extensions of compiled output (``c<51>.so``, ``c<51>.main.so``, ``.o``...)."""

LOAD_OK = ".load_ok"
"""The empty marker torch 2.14+ writes beside a library that passed its load check
(``<key>.so.load_ok``, ``VecISA.check_build`` in torch/_inductor/cpu_vec_isa.py):
counted with the libraries."""

PCH_EXTS = (".h.gch", ".h.pch", ".h")
"""A precompiled header ``c<51>.h.gch`` (``.pch`` with clang/Windows) and its stub ``c<51>.h``."""

_TORCH_STORES = ("cache", "autoheuristic", "unhashed_kernel_inputs", "gcc", "torch_cutlass",
                 "cutedsl_compile_cache", "bisect")
"""Top-level dirs of torch's other stores (see the module docstring)."""
_TORCH_STORE_FILES = ("memoizer_cache.json",)
_INDEX_RE = re.compile(r"index-[0-9a-f]{32}\.sqlite(?:-journal|-wal|-shm)?")


@dataclass(frozen=True, slots=True)
class Item:
    """One regular file under the root, classified.

    Attributes:
        file: what ``lstat`` said (path, size in bytes, times in epoch seconds, inode).
        kind: what torch wrote it for.
        detail: the extension for ``code``/``library`` (``.py``, ``.main.so``),
            the device for ``triton`` (``0``; ``""`` under ``$TRITON_CACHE_DIR``),
            else ``""``.
        counted: False for a second name of a hard-linked file already counted
            (``du`` counts an inode once; :attr:`Totals.bytes` does the same).
        parts: its names below the root.
    """

    file: FileInfo
    kind: ContentKind
    detail: str = ""
    counted: bool = True
    parts: tuple[str, ...] = ()

    @property
    def last_use(self) -> float:
        """``max(atime, mtime)``, epoch seconds (as gc measures it)."""
        return max(self.file.atime, self.file.mtime)


@dataclass(frozen=True)
class Totals:
    """What ``find`` and ``du`` say of the root, counted in the same walk.

    Attributes:
        files: regular files (``find ROOT -type f | wc -l``; every name of a hard link).
        bytes: their apparent sizes, each inode once (as ``du`` counts).
        dirs: directories, the root included (``find ROOT -type d | wc -l``).
        dir_bytes: their apparent sizes.
        symlinks: symbolic links (``find ROOT -type l``); never followed.
        symlink_bytes: their apparent sizes (the length of their target).
        other: fifos, sockets, device files.
        disk_bytes: blocks allocated, 512-byte units times 512, each inode once
            (``du -s --block-size=1 ROOT``).
    """

    files: int
    bytes: int
    dirs: int
    dir_bytes: int
    symlinks: int
    symlink_bytes: int
    other: int
    disk_bytes: int

    @property
    def paths(self) -> int:
        """Every name under the root, the root included (``find ROOT | wc -l``): the inodes a quota counts."""
        return self.files + self.dirs + self.symlinks + self.other

    @property
    def apparent_bytes(self) -> int:
        """``du --apparent-size -s --block-size=1 ROOT``: files, dirs and symlinks."""
        return self.bytes + self.dir_bytes + self.symlink_bytes

    def to_json(self) -> dict[str, int]:
        return {"files": self.files, "bytes": self.bytes, "dirs": self.dirs,
                "symlinks": self.symlinks, "other": self.other, "paths": self.paths,
                "apparent_bytes": self.apparent_bytes, "disk_bytes": self.disk_bytes}


@dataclass(frozen=True)
class Inventory:
    """Every regular file under one root, classified, and what ``find``/``du`` count.

    Attributes:
        root: the dir walked.
        layout: :data:`INDUCTOR_LAYOUT` or :data:`TRITON_LAYOUT`.
        items: the regular files, sorted by path.
        totals: the counts ``find``/``du`` give (see :class:`Totals`).
        symlinks: paths of the symlinks found (never followed: what they point
            to is not counted).
        unreadable: dirs that could not be listed and names that could not be
            ``lstat``'ed: the totals leave out what is behind them.
        entries_left_out: ``items`` hold no file of an FX or AOTAutograd key dir
            (entries and their temp files: ``take_inventory(..., entries=False)``);
            the totals count them all the same.
    """

    root: Path
    layout: str
    items: tuple[Item, ...]
    totals: Totals
    symlinks: tuple[str, ...] = ()
    unreadable: tuple[Skipped, ...] = ()
    entries_left_out: bool = False

    def relative(self, where: str) -> tuple[str, ...]:
        """The names of ``where`` below the root."""
        base = str(self.root).rstrip(os.sep) + os.sep
        return tuple(where[len(base):].split(os.sep)) if where.startswith(base) else ()

    @property
    def complete(self) -> bool:
        """Whether every dir was listed and every name stat'ed."""
        return not self.unreadable


def classify(parts: tuple[str, ...], layout: str = INDUCTOR_LAYOUT) -> tuple[ContentKind, str]:
    """The kind (and detail, see :attr:`Item.detail`) of the regular file at
    ``parts`` (its names below the root). Pure: looks at names only."""
    if layout == TRITON_LAYOUT:
        return _classify_triton(parts, "")
    name, top, depth = parts[-1], parts[0], len(parts)
    if depth == 1:
        if name in _TORCH_STORE_FILES:
            return ContentKind.TORCH_OTHER, ""
        if name.endswith(".lock"):
            return ContentKind.LOCK, ""
        return ContentKind.UNKNOWN, ""
    if top == "fxgraph":
        if depth == 4 and is_key(parts[2]) and parts[2][1:3] == parts[1]:
            return (ContentKind.TEMP if name.startswith(".") else ContentKind.FX), ""
        return ContentKind.UNKNOWN, ""
    if top == "aotautograd":
        if depth == 3 and is_key(parts[1]):
            return (ContentKind.TEMP if name.startswith(".") else ContentKind.AOT), ""
        return ContentKind.UNKNOWN, ""
    if top == "triton":
        if depth >= 3:
            return _classify_triton(parts[2:], parts[1])
        return ContentKind.UNKNOWN, ""
    if name.endswith(".lock"):
        return ContentKind.LOCK, ""
    if name.startswith(".") or name.endswith(".tmp"):
        return (ContentKind.TEMP if top in _TEMP_DIRS or len(top) == 2 else ContentKind.UNKNOWN), ""
    if top == "locks":
        return ContentKind.UNKNOWN, ""
    if top == "precompiled_headers":
        if depth == 2 and artifact_key(name) is not None and name.endswith(PCH_EXTS):
            return ContentKind.PCH, name[52:]
        return ContentKind.UNKNOWN, ""
    if top == "dynamo":
        if depth == 2 and name.startswith("code_state_") and name.endswith(".pkl"):
            return ContentKind.PGO, ""
        return ContentKind.PRECOMPILE, ""
    if top == "aoti_eager":
        return ContentKind.PRECOMPILE, ""
    if top in _TORCH_STORES or top.startswith("halide-runtime-"):
        return ContentKind.TORCH_OTHER, ""
    if len(top) == 2:
        return _classify_code(parts)
    return ContentKind.UNKNOWN, ""


_TEMP_DIRS = frozenset({"dynamo", "precompiled_headers", "locks", "aoti_eager"})


def _classify_code(parts: tuple[str, ...]) -> tuple[ContentKind, str]:
    """A file in a two-letter code dir ``<key[1:3]>/``."""
    name = parts[-1]
    if len(parts) == 2:
        key = artifact_key(name)
        if key is None or key[1:3] != parts[0]:
            return ContentKind.UNKNOWN, ""
        ext = name[len(key):]
        if ext == ".best_config":
            return ContentKind.AUTOTUNE, ""
        if ext.rpartition(".")[2] in LIBRARY_EXTS or ext.endswith(LOAD_OK):
            return ContentKind.LIBRARY, ext
        return ContentKind.CODE, ext
    if is_code_key(parts[1]) and parts[1][1:3] == parts[0]:  # <2 chars>/c<51>/...: AOTInductor
        return ContentKind.PRECOMPILE, ""
    return ContentKind.UNKNOWN, ""


def _classify_triton(parts: tuple[str, ...], device: str) -> tuple[ContentKind, str]:
    """A file below a Triton cache dir (``parts`` start at the kernel hash dir)."""
    if parts[0].startswith("tmp."):  # TritonBundler's tmp.<uuid> dir, renamed into place when full
        return ContentKind.TEMP, ""
    if len(parts) == 1:
        return (ContentKind.LOCK if parts[0].endswith(".lock") else ContentKind.UNKNOWN), ""
    if len(parts) >= 3 and parts[1].startswith("tmp."):  # FileCacheManager.put's tmp.pid_<pid>_<uuid>
        return ContentKind.TEMP, ""
    if len(parts) == 2:
        return ContentKind.TRITON, device
    return ContentKind.UNKNOWN, ""


def take_inventory(root: Path, layout: str = INDUCTOR_LAYOUT,
                   index_dir: Path | None = None, entries: bool = True,
                   records: dict[str, FileInfo] | None = None,
                   tallies: dict[str, KeyDirTally] | None = None) -> Inventory:
    """Walk ``root`` into an :class:`Inventory`.

    ``entries``: keep an :class:`Item` for the files of FX and AOTAutograd key dirs
    (entries and their temp files) too. Without, they are counted in the totals but
    not kept (:attr:`Inventory.entries_left_out`): for a caller that holds the
    scan's records of them (:mod:`fxcache_core.cache.scan`), as gc does, the memory
    of a second record per entry. ``records``: ``FileInfo`` s the caller holds already,
    by ``where`` (a scan's: generated code, :func:`~fxcache_core.cache.scan.scan_artifacts`);
    an item whose ``lstat`` gives the same size, times and inode takes that record
    instead of a new one of its own. ``tallies``: without ``entries``, what a scan's
    ``lstat`` of each name in an entry key dir said (:attr:`CacheKey.tally
    <fxcache_core.cache.scan.CacheKey.tally>`, by the key dir's path as the scan spells
    it): a key dir whose parent's listing shows the inode the scan listed is counted from
    its tally instead of being opened and its files ``lstat``'ed again (the same totals,
    as of the scan).

    The root itself is followed if it is a symlink (as ``du ROOT/`` would);
    nothing below it is. ``index_dir``: fxcache's index dir, whose
    ``index-*.sqlite`` files are classified ``fxcache-index`` when it is
    inside the root. A dir that cannot be listed, or a name that vanishes or
    cannot be stat'ed during the walk, is left out and listed in
    :attr:`Inventory.unreadable` (a compile may add and rename files meanwhile).

    Each dir below the root is opened relative to its parent's fd with
    ``O_DIRECTORY | O_NOFOLLOW`` and must have the ``(st_dev, st_ino)`` its
    parent's listing showed: a dir swapped for a symlink or for another dir
    while the walk runs is not walked, and is listed in
    :attr:`Inventory.unreadable` (``changed-during-walk``), so the inventory
    says it is incomplete; nothing outside the root is ever counted.

    Cost: one ``open`` and one ``scandir`` per dir, one ``fstatat`` per name, as
    many fds open at once as the tree is deep; no file is opened.

    Raises:
        OSError: the root itself cannot be stat'ed.
    """
    with paused_gc():
        return _walk(Path(root), layout, index_dir, entries, records or {}, {} if entries else tallies or {})


_ENTRY_KINDS = (ContentKind.FX, ContentKind.AOT)


def _walk(root: Path, layout: str, index_dir: Path | None, entries: bool,
          records: dict[str, FileInfo], tallies: dict[str, KeyDirTally]) -> Inventory:
    st = os.stat(root)
    index_parts: tuple[str, ...] | None = None
    if index_dir is not None:
        try:
            rel = os.path.relpath(os.path.realpath(index_dir), os.path.realpath(root))
            if rel != os.curdir and not rel.startswith(os.pardir):
                index_parts = tuple(rel.split(os.sep))
        except ValueError:
            index_parts = None
    items: list[Item] = []
    symlinks: list[str] = []
    unreadable: list[Skipped] = []
    seen: set[tuple[int, int]] = set()
    n_dirs, dir_bytes, n_links, link_bytes, n_other, disk = 1, st.st_size, 0, 0, 0, st.st_blocks * 512
    file_bytes = n_left = 0
    is_dir, is_reg, is_lnk = stat.S_ISDIR, stat.S_ISREG, stat.S_ISLNK
    try:
        root_fd = open_dir(root, follow_symlinks=True)  # the root as named
    except OSError as e:
        unreadable.append(Skipped(root, Reason(f"cannot list: {e.strerror or e}", "unreadable-dir")))
        root_fd = None
    # Depth first through dir fds: each frame is an open dir and its subdirs still to
    # visit, (name, (st_dev, st_ino) as its listing showed); a subdir is opened relative
    # to its parent without following a symlink and must be that very dir.
    stack: list[tuple[int, str, tuple[str, ...], list[tuple[str, tuple[int, int]]]]] = []
    listed = None if root_fd is None else _list_into(root_fd, str(root), unreadable)
    if listed is not None:
        stack.append((root_fd, str(root), (), []))
    elif root_fd is not None:
        os.close(root_fd)
    while stack:
        fd, path, parts, todo = stack[-1]
        if listed is not None:
            for name, s in listed:
                mode = s.st_mode
                first = True
                if s.st_nlink > 1 and not is_dir(mode):
                    ident = (s.st_dev, s.st_ino)
                    first = ident not in seen
                    seen.add(ident)
                if first:
                    disk += s.st_blocks * 512
                sub = (*parts, name)
                where = path + os.sep + name
                if is_dir(mode):
                    n_dirs += 1
                    dir_bytes += s.st_size
                    todo.append((name, (s.st_dev, s.st_ino)))
                elif is_lnk(mode):
                    n_links += 1
                    link_bytes += s.st_size if first else 0
                    symlinks.append(where)
                elif is_reg(mode):
                    if index_parts is not None and sub[:-1] == index_parts and _INDEX_RE.fullmatch(name):
                        kind, detail = ContentKind.INDEX, ""
                    else:
                        kind, detail = classify(sub, layout)
                    if first:
                        file_bytes += s.st_size
                    if entries or not (kind in _ENTRY_KINDS or kind is ContentKind.TEMP
                                       and sub[0] in ("fxgraph", "aotautograd")):
                        f = records.get(where)
                        if f is None or (f.size, f.mtime, f.atime, f.mtime_ns, f.ino) != (
                                s.st_size, s.st_mtime, s.st_atime, s.st_mtime_ns, s.st_ino):
                            f = FileInfo(where, s.st_size, s.st_mtime, s.st_atime, s.st_mtime_ns, s.st_ino)
                        items.append(Item(f, kind, detail, first, sub))
                    else:
                        n_left += 1
                else:
                    n_other += 1
            todo.reverse()  # visited in listing order
            listed = None
        if not todo:
            os.close(fd)
            stack.pop()
            continue
        name, ident = todo.pop()
        where = path + os.sep + name
        tally = tallies.get(where)
        if tally is not None and tally.ino == ident[1] and _entry_key_dir((*parts, name), layout) \
                and (*parts, name) != index_parts:  # the scan's lstat of its files, not another
            n_left += tally.files
            file_bytes += tally.bytes
            disk += tally.blocks * 512
            for dev, ino, size, blocks in tally.linked:
                if (dev, ino) not in seen:
                    seen.add((dev, ino))
                    file_bytes += size
                    disk += blocks * 512
            continue
        sub_fd = _open_listed(fd, name, ident, where, unreadable)
        if sub_fd is None:
            continue
        listed = _list_into(sub_fd, where, unreadable)
        if listed is None:
            os.close(sub_fd)
            continue
        stack.append((sub_fd, where, (*parts, name), []))
    items.sort(key=lambda i: i.file.where)
    totals = Totals(files=len(items) + n_left, bytes=file_bytes, dirs=n_dirs, dir_bytes=dir_bytes,
                    symlinks=n_links, symlink_bytes=link_bytes, other=n_other, disk_bytes=disk)
    return Inventory(root=root, layout=layout, items=tuple(items), totals=totals,
                     symlinks=tuple(sorted(symlinks)), unreadable=tuple(unreadable), entries_left_out=not entries)


def _entry_key_dir(parts: tuple[str, ...], layout: str) -> bool:
    """Whether every regular file in the dir ``parts`` (names below the root) is an
    entry or an entry's temp file, by :func:`classify` (by its name alone): an FX key
    dir in its bucket, or an AOTAutograd key dir."""
    if layout != INDUCTOR_LAYOUT:
        return False
    if len(parts) == 3 and parts[0] == "fxgraph":
        return is_key(parts[2]) and parts[2][1:3] == parts[1]
    return len(parts) == 2 and parts[0] == "aotautograd" and is_key(parts[1])


def _open_listed(parent: int, name: str, ident: tuple[int, int], where: str,
                 unreadable: list[Skipped]) -> int | None:
    """The dir ``name`` in ``parent``, opened without following a symlink, if it is
    still the dir the parent's listing showed (``ident``: its ``(st_dev, st_ino)``);
    else None, with why in ``unreadable`` (a dir swapped for a symlink or another dir
    during the walk is not walked: the walk is reported incomplete)."""
    try:
        return open_subdir(name, parent, ident)[0]
    except DirRefused as e:
        if e.why in (WalkFailure.NOT_A_DIR, WalkFailure.REPLACED):
            why = Reason("changed during the walk (no longer the dir its parent listed): not counted",
                         "changed-during-walk")
        else:
            why = Reason(f"cannot list: {e.strerror}", "unreadable-dir")
        unreadable.append(Skipped(Path(where), why))
        return None


def _list_into(fd: int, path: str, unreadable: list[Skipped]) -> list[tuple[str, os.stat_result]] | None:
    """(name, ``lstat``) of each name in the open dir ``fd`` (``path``: how the walk
    spells it); None when it cannot be listed (said in ``unreadable``). A name that
    vanishes meanwhile is left out; one that cannot be stat'ed is listed in ``unreadable``."""
    out: list[tuple[str, os.stat_result]] = []
    try:
        with os.scandir(fd) as it:
            dirents = list(it)
    except OSError as e:
        unreadable.append(Skipped(Path(path), Reason(f"cannot list: {e.strerror or e}", "unreadable-dir")))
        return None
    for d in dirents:
        try:
            out.append((d.name, d.stat(follow_symlinks=False)))  # fstatat in fd
        except OSError as e:
            if not isinstance(e, FileNotFoundError):
                unreadable.append(Skipped(Path(path + os.sep + d.name),
                                          Reason(f"cannot stat: {e.strerror or e}", "cannot-stat")))
    return out


def detect_layout(root: Path) -> str:
    """:data:`TRITON_LAYOUT` for a Triton cache dir of its own, else :data:`INDUCTOR_LAYOUT`."""
    return TRITON_LAYOUT if looks_like_triton_cache(root) else INDUCTOR_LAYOUT


def looks_like_triton_cache(root: Path) -> bool:
    """A Triton cache dir of its own (``$TRITON_CACHE_DIR``): its subdirs hold
    kernel files and ``__grp__*.json`` group files, and it has no Inductor dirs.
    Lists the root and at most a few subdirs."""
    try:
        names = os.listdir(root)
    except OSError:
        return False
    if any(n in ("fxgraph", "aotautograd", "triton") for n in names):
        return False
    for n in sorted(names)[:8]:
        try:
            if any(f.startswith("__grp__") and f.endswith(".json") for f in os.listdir(root / n)):
                return True
        except OSError:
            continue
    return False
