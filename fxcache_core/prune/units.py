"""gc's rules for what is not a cache entry: Triton kernels, precompiled headers,
compiled libraries, PGO state, locks and temp files.

:mod:`fxcache_core.prune.plan` plans the entries (and generated code) from a scan;
this module groups the rest of an :class:`~fxcache_core.cache.inventory.Inventory`
into the :class:`Unit` s gc removes whole, which the rules of
:mod:`fxcache_core.prune.rules` select. It touches nothing; the units selected
become ordinary removals of the plan, executed the same way (each file checked
again before it goes, under the lock torch takes for it).

A unit, its lock, and when a policy selects it (never when it was used, or
written, within :data:`~fxcache_core.prune.policy.TEMP_FILE_GRACE_S`):

=======================  ===========================================  ====================================
unit                     lock held while it is deleted                selected by
=======================  ===========================================  ====================================
a Triton kernel dir      ``<hash>.lock`` beside it, if there          ``--artifacts`` with ``--older-than``
  (all its files)                                                     (last use of its newest file),
                                                                      ``--max-size``; never while a group
                                                                      file in a kept dir names a file in it
a precompiled header     ``precompiled_headers/locks/<key>.lock``     ``--artifacts --older-than``,
  (the ``.gch``; the                                                  ``--stale``, ``--max-size``
  44-byte ``.h`` stub
  stays: a running torch
  may pass it to ``-include``)
a compiled library       ``locks/<key>.lock``                         ``--artifacts --older-than``
                                                                      (gc.py), ``--stale``, ``--max-size``
Dynamo PGO state         ``code_state_<job>.pkl.lock``                ``--older-than``, ``--max-size``
an orphaned lock         the lock itself                              ``--locks`` (default policy): what
                                                                      it guarded is gone
a temp file              (none)                                       ``--unreadable`` (default policy)
=======================  ===========================================  ====================================

Deleting a lock file is safe only while holding it: filelock, which torch's
``FileLock`` wraps, checks after ``flock`` that the file it locked still has
a name (``st_nlink``), and retries otherwise (filelock/_native/_unix.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass

from fxcache_core.cache.inventory import LOAD_OK, ContentKind, Inventory, Item
from fxcache_core.cache.keys import artifact_key, is_code_key
from fxcache_core.fsutil import open_regular

GROUP_FILE_LIMIT = 1 << 20
"""A Triton group file larger than this (bytes) is not read (it names nothing)."""


@dataclass(frozen=True, slots=True)
class Unit:
    """Files gc removes together, under one lock.

    Attributes:
        kind: their kind.
        name: what the user calls it (its path below the root).
        items: the files.
        lock: the lock file held while they go (its names below the root), or ().
        dirs: dirs (names below the root) removed once empty, deepest first.
    """

    kind: ContentKind
    name: str
    items: tuple[Item, ...]
    lock: tuple[str, ...] = ()
    dirs: tuple[tuple[str, ...], ...] = ()

    @property
    def size(self) -> int:
        """Bytes of its files."""
        return sum(i.file.size for i in self.items)

    @property
    def last_use(self) -> float:
        """The newest ``max(atime, mtime)`` of its files, epoch seconds."""
        return max((i.last_use for i in self.items), default=0.0)


def units(inv: Inventory) -> list[Unit]:
    """The inventory's Triton kernel dirs, precompiled headers, PGO state,
    orphaned locks, temp files (but those of entry key dirs, which gc.py plans
    with the entries) and generated-code files (each with its code key's
    compile lock; a library with its ``.load_ok`` marker, the marker first, as
    gc.py's ``_code_removals`` does) as units. Each file is in at most one unit."""
    present = {i.parts for i in inv.items}
    guarded = _guarded(present)
    where = {i.file.where for i in inv.items}
    markers = {i.file.where: i for i in inv.items if i.file.name.endswith(LOAD_OK)}
    out: list[Unit] = []
    triton: dict[tuple[str, ...], list[Item]] = {}
    for i in inv.items:
        parts = i.parts
        if i.kind is ContentKind.TRITON:
            triton.setdefault(parts[:-1], []).append(i)
        elif i.kind is ContentKind.PCH and not parts[-1].endswith(".h"):
            key = artifact_key(parts[-1]) or ""
            lock = ("precompiled_headers", "locks", f"{key}.lock")
            out.append(Unit(ContentKind.PCH, "/".join(parts), (i,), lock if lock in present else ()))
        elif i.kind is ContentKind.PGO:
            lock = (*parts[:-1], parts[-1] + ".lock")
            out.append(Unit(ContentKind.PGO, "/".join(parts), (i,), lock if lock in present else ()))
        elif i.kind is ContentKind.LOCK and _orphaned(parts, present, guarded):
            out.append(Unit(ContentKind.LOCK, "/".join(parts), (i,), parts))
        elif i.kind is ContentKind.TEMP and not _in_entry_key_dir(parts):
            out.append(Unit(ContentKind.TEMP, "/".join(parts), (i,), (), _temp_dirs(parts)))
        elif i.kind in (ContentKind.CODE, ContentKind.LIBRARY, ContentKind.AUTOTUNE) and len(parts) == 2:
            if parts[-1].endswith(LOAD_OK) and i.file.where[: -len(LOAD_OK)] in where:
                continue  # goes with its library, first
            key = artifact_key(parts[-1]) or ""
            lock = ("locks", f"{key}.lock")
            marker = markers.get(i.file.where + LOAD_OK)
            out.append(Unit(i.kind, "/".join(parts), (marker, i) if marker else (i,),
                            lock if lock in present else ()))
    for d, items in sorted(triton.items()):
        lock = (*d[:-1], d[-1] + ".lock")
        out.append(Unit(ContentKind.TRITON, "/".join(d), tuple(items), lock if lock in present else (), (d,)))
    return out


def _in_entry_key_dir(parts: tuple[str, ...]) -> bool:
    """Temp files in FX/AOTAutograd key dirs: gc.py plans those with the entries."""
    return parts[0] in ("fxgraph", "aotautograd")


def _temp_dirs(parts: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Triton's temp dirs (``tmp.*``) holding this temp file, deepest first."""
    return tuple(parts[:n] for n in range(len(parts) - 1, 0, -1) if parts[n - 1].startswith("tmp."))


def _guarded(present: set[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """What a lock file may guard, by the names its lock is named after: code
    keys with a file (``("code", key)``), precompiled headers (``("pch", key)``),
    Triton dirs with a file (their names below the root)."""
    out: set[tuple[str, ...]] = set()
    for p in present:
        if len(p) == 2 and len(p[0]) == 2 and is_code_key(p[1][:52]):
            out.add(("code", p[1][:52]))
        elif len(p) == 2 and p[0] == "precompiled_headers" and is_code_key(p[1][:52]):
            out.add(("pch", p[1][:52]))
        elif len(p) >= 4 and p[0] == "triton":
            out.add(p[:3])
    return out


def _orphaned(parts: tuple[str, ...], present: set[tuple[str, ...]], guarded: set[tuple[str, ...]]) -> bool:
    """Whether what a lock file guards is gone (so no compile will want it again
    soon): a code key's files, a precompiled header, PGO state, a Triton dir.
    Locks of other names (``g++.lock``, a vec-ISA check's) are never orphans."""
    stem = parts[-1][: -len(".lock")]
    if parts[:-1] == ("locks",):
        return is_code_key(stem) and ("code", stem) not in guarded
    if parts[:-1] == ("precompiled_headers", "locks"):
        return is_code_key(stem) and ("pch", stem) not in guarded
    if parts[:1] == ("dynamo",) and stem.startswith("code_state_") and stem.endswith(".pkl"):
        return (*parts[:-1], stem) not in present
    if parts[:1] == ("triton",) and len(parts) == 3:
        return (*parts[:-1], stem) not in guarded
    return False


def group_named(inv: Inventory, kept: Iterable[Unit]) -> set[tuple[str, ...]]:
    """Dirs (names below the root) that a Triton group file (``__grp__*.json``)
    in a kept Triton dir names a file in: Triton's ``get_group`` loads those
    paths (triton/runtime/cache.py), so such a dir stays while its group's
    kernel does. Group files are read without following symlinks and without
    blocking (``O_NONBLOCK``; only what ``fstat`` says is a regular file is
    read: a FIFO put in its place after the walk is not), at most
    :data:`GROUP_FILE_LIMIT` bytes each; one that is not such JSON names nothing
    (Triton ignores it too). At most :data:`GROUP_DIRS_LIMIT` distinct dirs of a
    group file are resolved (``realpath``)."""
    root = os.path.realpath(inv.root)
    out: set[tuple[str, ...]] = set()
    for u in kept:
        if u.kind is not ContentKind.TRITON:
            continue
        for i in u.items:
            if not (i.file.name.startswith("__grp__") and i.file.name.endswith(".json")):
                continue
            dirs = dict.fromkeys(os.path.dirname(p) for p in _child_paths(i.file.where))
            for d in list(dirs)[:GROUP_DIRS_LIMIT]:
                try:
                    rel = os.path.relpath(os.path.realpath(d), root)
                except (OSError, ValueError):  # a NUL byte, a name too long
                    continue
                if not rel.startswith(os.pardir):
                    out.add(tuple(rel.split(os.sep)))
    return out


GROUP_DIRS_LIMIT = 64
"""Distinct dirs of one group file that :func:`group_named` resolves (a group file
Triton writes names the files of its own kernel dir: one)."""


def _child_paths(path: str) -> list[str]:
    """The ``child_paths`` values of the group file at ``path``; [] when it is not a
    regular file (checked on the open fd: nothing is read from a FIFO, a device or
    a symlink), is larger than :data:`GROUP_FILE_LIMIT`, or is not such JSON."""
    try:
        fd = open_regular(path, follow_symlinks=False)
    except OSError:
        return []
    try:
        if os.fstat(fd).st_size > GROUP_FILE_LIMIT:
            return []
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(GROUP_FILE_LIMIT + 1)
        if len(data) > GROUP_FILE_LIMIT:
            return []
        children = json.loads(data).get("child_paths")
        return [p for p in children.values() if isinstance(p, str)] if isinstance(children, dict) else []
    except (OSError, ValueError, AttributeError, RecursionError):
        return []
    finally:
        os.close(fd)
