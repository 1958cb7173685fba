"""Source files as the frame and function readers read them: never run, only parsed by ``ast``.

A source file a frame names is read where
:func:`~fxcache_core.functions.source_dirs.located` puts it, only if it is a regular
``.py`` file (a symlink is not followed) of at most :data:`MAX_SOURCE_BYTES`, and parsed
only if it has at most :data:`MAX_SOURCE_NODES` tokens and lines (:func:`_parse_counted`);
one there but refused is listed by :func:`refused_sources`. A file's identity is its path,
size and :data:`Stamp` (:func:`_stat`): a file changed since is read again. Each file is
parsed once while it is among the trees last used (:func:`_tree_at`, up to
:data:`TREES_KEPT` tokens and lines in all), a parse that
:mod:`~fxcache_core.functions.frames` (the ``def`` s of a file) and
:mod:`~fxcache_core.functions.trees` (whole functions and modules) share;
:func:`source_lines` reads its lines as a traceback does.
"""

from __future__ import annotations

import ast
import errno
import functools
import io
import os
import re
import stat
import tokenize
from collections import OrderedDict
from dataclasses import dataclass

from fxcache_core.fsutil import NotRegularFile, open_regular
from fxcache_core.functions.source_dirs import located, shown, withheld
from fxcache_core.reasons import Reason

MAX_SOURCE_BYTES = 4 * 1024 * 1024
"""Source files larger than this (bytes) are not parsed for class names."""

Stamp = tuple[int, int, int]
"""A source file's identity as the parse caches key it: (mtime in ns, device, inode) of
the file read, so that two files of one size and mtime (a mapping changed in one process,
:mod:`fxcache_core.functions.source_dirs`) never share a parse."""


def _stat(path: str) -> tuple[int, Stamp] | None:
    """(size, :data:`Stamp`) of ``path`` when it is a regular ``.py`` file of at most
    :data:`MAX_SOURCE_BYTES`, else None (one over it is listed by :func:`refused_sources`).
    ``path`` is the recorded one: the file is where
    :func:`~fxcache_core.functions.source_dirs.located` puts it; None for one withheld
    (:func:`~fxcache_core.functions.source_dirs.withhold`)."""
    if not path.endswith(".py") or withheld(path) is not None:
        return None
    try:
        st = os.stat(located(path))
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
        if len(_REFUSED) < 100:
            _REFUSED[path] = (
                Reason("not a regular file", "source-not-regular")
                if not stat.S_ISREG(st.st_mode)
                else Reason(
                    f"{st.st_size} bytes, over the {MAX_SOURCE_BYTES} byte limit",
                    "source-too-large",
                )
            )
        return None
    return st.st_size, (st.st_mtime_ns, st.st_dev, st.st_ino)


MAX_SOURCE_NODES = 150_000
"""Source files of more tokens (names, numbers, operator characters) plus lines than
this are not parsed: ``ast`` makes about a node of each, some 600 bytes and 3 us apiece
(a 1 MB file of one-letter lines is a million of them: 900 MB). Real modules are far
below (a 200 KB transformers model: 40,000)."""
_TOKEN_RE = re.compile(rb"\w+|[^\w\s]")


def _read_source(path: str) -> bytes | Reason:
    """The bytes of ``path`` if it is a regular file of at most :data:`MAX_SOURCE_BYTES`,
    opened without following a symlink or blocking; else why not. ``path`` is the
    recorded one: the file read is where :func:`~fxcache_core.functions.source_dirs.located`
    puts it; one withheld (:func:`~fxcache_core.functions.source_dirs.withhold`) is not read."""
    if (held := withheld(path)) is not None:
        return held
    try:
        fd = open_regular(located(path), follow_symlinks=False)
    except NotRegularFile:
        return Reason("not a regular file", "source-not-regular")
    except (OSError, ValueError) as e:
        if isinstance(e, OSError) and e.errno == errno.ELOOP and os.path.islink(located(path)):
            return Reason(
                f"{shown(path)} is a symlink, which is not followed", "source-not-regular"
            )
        return Reason(f"cannot open it: {getattr(e, 'strerror', None) or e}", "source-unreadable")
    try:
        st = os.fstat(fd)
        if st.st_size > MAX_SOURCE_BYTES:
            return Reason(
                f"{st.st_size} bytes, over the {MAX_SOURCE_BYTES} byte limit", "source-too-large"
            )
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_SOURCE_BYTES + 1)
    except OSError as e:
        return Reason(f"cannot read it: {e.strerror or e}", "source-unreadable")
    finally:
        os.close(fd)
    if len(data) > MAX_SOURCE_BYTES:
        return Reason(f"over the {MAX_SOURCE_BYTES} byte limit", "source-too-large")
    return data


def _parse_bounded(path: str, data: bytes) -> ast.Module | Reason:
    """``data`` parsed by ``ast`` (never run) if it is at most :data:`MAX_SOURCE_NODES`
    tokens and lines (counted first, at most that many matches), else why not."""
    got = _parse_counted(path, data)
    return got if isinstance(got, Reason) else got[0]


def _parse_counted(path: str, data: bytes) -> tuple[ast.Module, int] | Reason:
    """:func:`_parse_bounded`'s tree with its count of tokens and lines."""
    lines = data.count(b"\n")
    count = (
        lines + _TOKEN_RE.subn(b"", data, count=MAX_SOURCE_NODES - lines + 1)[1]
        if lines <= MAX_SOURCE_NODES
        else lines
    )
    if count > MAX_SOURCE_NODES:
        return Reason(f"more than {MAX_SOURCE_NODES:,} tokens and lines", "source-too-many-nodes")
    try:
        return ast.parse(data, filename=path), count
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return Reason(f"does not parse: {type(e).__name__}", "source-unparsable")


_REFUSED: dict[str, Reason] = {}
"""Source files named by a frame that were there but refused (not a regular file, over
a bound, not Python), and why: :func:`refused_sources`."""
_REFUSED_CODES = frozenset(
    {"source-not-regular", "source-too-large", "source-too-many-nodes", "source-unparsable"}
)


TREES_KEPT = MAX_SOURCE_NODES
"""The parsed trees kept for reuse hold at most this many tokens and lines in all (the
last one parsed is kept whatever its size, until the next)."""
_MAX_FILES = 64
_FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(slots=True)
class _Tree:
    """A parsed file, with the indexes :mod:`~fxcache_core.functions.trees` reads, built when first asked."""

    module: ast.Module
    defs: dict[tuple[str, int], _FunctionDef] | None = None
    scopes: tuple[tuple[int, int, str | None], ...] | None = None
    by_name: dict[str, tuple[_FunctionDef, ...]] | None = None


_TREES: OrderedDict[tuple[str, int, Stamp], tuple[_Tree | Reason, int]] = OrderedDict()
_kept = 0


def _tree_at(path: str, size: int, stamp: Stamp) -> _Tree | Reason:
    """``path`` of identity ``(size, stamp)`` parsed (:func:`_parse_counted`), or why it is
    not read or does not parse: once while it is among the trees last used, up to
    :data:`TREES_KEPT` tokens and lines in all, which :func:`_defs_cached` and the readers
    of whole functions (:mod:`~fxcache_core.functions.trees`) share. Not to be changed."""
    global _kept
    ident = (path, size, stamp)
    got = _TREES.get(ident)
    if got is not None:
        _TREES.move_to_end(ident)
        return got[0]
    data = _read_source(path)
    parsed = data if isinstance(data, Reason) else _parse_counted(path, data)
    tree, cost = (parsed, 1) if isinstance(parsed, Reason) else (_Tree(parsed[0]), parsed[1])
    _TREES[ident] = (tree, cost)
    _kept += cost
    while len(_TREES) > 1 and (_kept > TREES_KEPT or len(_TREES) > _MAX_FILES):
        _kept -= _TREES.popitem(last=False)[1][1]
    return tree


def refused_sources() -> dict[str, Reason]:
    """Source files frames named in this process that are there but were not parsed
    (at most 100; path -> why): the functions compiled from them go by their frame's
    name, their class unknown. A file that is merely absent (a cache from another
    machine) is not listed."""
    return dict(_REFUSED)


def source_lines(path: str) -> tuple[str, ...] | None:
    """The lines of the source file recorded as ``path`` as Python's ``linecache`` reads
    them for a traceback (decoded by its coding cookie, else UTF-8; split at ``\\n``,
    ``\\r\\n`` and ``\\r``; each without its line end), read once per file identity;
    () for one that does not decode; None where :func:`_stat` does not read it (not a
    regular ``.py`` file, over :data:`MAX_SOURCE_BYTES`, not there, withheld)."""
    st = _stat(path)
    return None if st is None else _source_lines(path, *st)


@functools.lru_cache(maxsize=64)
def _source_lines(path: str, size: int, stamp: Stamp) -> tuple[str, ...] | None:
    data = _read_source(path)
    if isinstance(data, Reason):
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return ()
    return tuple(_LINE_END_RE.split(text.removesuffix("\n").removesuffix("\r")))


_LINE_END_RE = re.compile(r"\r\n|\r|\n")
