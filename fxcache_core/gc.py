"""Pruning the cache: a plan first, then its execution.

:func:`plan_gc` decides, from a scan and a policy, which files to delete and
why; it touches nothing, so a dry run is just printing the plan.
:func:`execute_plan` then deletes exactly the planned files, one by one, after
checking each is still the file that was planned (same size and mtime, a
regular file, not a symlink, inside the cache dir), and removes key dirs that
end up empty with ``rmdir`` (never ``rmtree``: a compile may be writing a new
entry into the dir at that moment).

"Last use" of an entry is ``max(atime, mtime)``: where the file system records
reads (relatime), a lookup that read the entry moved its atime; where it does
not (noatime), atime is not newer than mtime and mtime counts.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from .catalog import Catalog, Unreadable
from .decode import DecodedEntry
from .keys import KeyKind
from .store import Entry, FileInfo

TEMP_FILE_GRACE_S = 3600.0
"""Dot-prefixed temp files younger than this (seconds) may be a compile in flight; never touched."""


@dataclass(frozen=True)
class GcPolicy:
    """What to prune. An entry goes if any selected rule selects it.

    Attributes:
        older_than_s: entries last used more than this many seconds ago.
        max_size_bytes: then, least recently used first, until the entries
            left total at most this many bytes.
        keep_last: per key, keep at most the N most recently used entries.
        unreadable: entries that cannot be decoded, and temp files older than
            :data:`TEMP_FILE_GRACE_S`.
        dangling: AOTAutograd entries whose forward or backward FX entry is
            gone (torch can never serve them).
        now: the clock (epoch seconds) ages are measured against.
    """

    older_than_s: float | None = None
    max_size_bytes: int | None = None
    keep_last: int | None = None
    unreadable: bool = False
    dangling: bool = False
    now: float | None = None

    @property
    def is_empty(self) -> bool:
        return (self.older_than_s is None and self.max_size_bytes is None
                and self.keep_last is None and not self.unreadable and not self.dangling)


@dataclass(frozen=True)
class Removal:
    """One file the plan deletes.

    Attributes:
        file: the file as scanned (path, size in bytes, mtime).
        kind, key: where it lives; ``entry`` is the entry name (None for a temp file).
        reasons: why, one short phrase per rule that selected it.
    """

    file: FileInfo
    kind: KeyKind
    key: str
    entry: str | None
    reasons: tuple[str, ...]

    @property
    def size(self) -> int:
        return self.file.size


@dataclass(frozen=True)
class GcPlan:
    """What gc will do; executing it is :func:`execute_plan`.

    Attributes:
        root: the cache dir.
        policy: the policy it was made from.
        removals: files to delete, in deletion order.
        total_bytes: bytes of all entries before.
        total_entries: entries before.
        last_use: how ages were measured (``max(atime, mtime)``).
    """

    root: Path
    policy: GcPolicy
    removals: tuple[Removal, ...]
    total_bytes: int
    total_entries: int
    last_use: str = "max(atime, mtime)"

    @property
    def bytes_freed(self) -> int:
        """Bytes the plan frees."""
        return sum(r.size for r in self.removals)

    @property
    def entries_removed(self) -> int:
        return sum(1 for r in self.removals if r.entry is not None)


def last_use(f: FileInfo) -> float:
    """When an entry was last used, epoch seconds (see the module docstring)."""
    return max(f.atime, f.mtime)


def plan_gc(catalog: Catalog, policy: GcPolicy) -> GcPlan:
    """Decide what to delete under ``policy``; nothing is touched.

    Consistency: an AOTAutograd entry needs the FX entries it loads; when the
    plan removes one of those, it removes the AOTAutograd entry too (torch
    could no longer serve it).
    """
    scan = catalog.scan
    now = time.time() if policy.now is None else policy.now
    chosen: dict[Path, list[str]] = {}
    entries = list(scan.entries())

    def pick(e: Entry, why: str) -> None:
        chosen.setdefault(e.path, []).append(why)

    if policy.older_than_s is not None:
        for e in entries:
            age = now - last_use(e.file)
            if age > policy.older_than_s:
                pick(e, f"unused for {_age(age)}")
    if policy.keep_last is not None:
        for k in scan.keys:
            ranked = sorted(k.entries, key=lambda e: last_use(e.file), reverse=True)
            for e in ranked[policy.keep_last:]:
                pick(e, f"not among the {policy.keep_last} most recent of its key")
    if policy.unreadable:
        for e in entries:
            d = catalog.load(e)
            if isinstance(d, Unreadable):
                pick(e, f"unreadable: {d.reason}")
    if policy.dangling:
        for e in entries:
            if e.kind is KeyKind.AOT_AUTOGRAD:
                gone = _missing_fx(catalog, e)
                if gone:
                    pick(e, "dangling: " + gone)
    if policy.max_size_bytes is not None:
        left = sum(e.size for e in entries if e.path not in chosen)
        for e in sorted(entries, key=lambda e: last_use(e.file)):
            if left <= policy.max_size_bytes:
                break
            if e.path not in chosen:
                pick(e, f"least recently used, over the {policy.max_size_bytes:,} byte budget")
                left -= e.size

    # An AOTAutograd entry goes with any FX entry it loads.
    removed_fx = {p for p in chosen if KeyKind.FX_GRAPH.value in p.relative_to(scan.root).parts[:1]}
    if removed_fx:
        for e in entries:
            if e.kind is KeyKind.AOT_AUTOGRAD and e.path not in chosen:
                d = catalog.load(e)
                if isinstance(d, DecodedEntry):
                    for ref in (d.forward, d.backward):
                        fx = catalog.fx_entry_for(ref.key, ref.guards_expr) if ref else None
                        if fx is not None and fx.path in removed_fx:
                            pick(e, f"loads FX entry {fx.key[:10]}/{fx.name[:10]} that is removed")
                            break

    removals = [Removal(e.file, e.kind, e.key, e.name, tuple(chosen[e.path]))
                for e in entries if e.path in chosen]
    if policy.unreadable:
        for k in scan.keys:
            for t in k.temp_files:
                age = now - t.mtime
                if age > TEMP_FILE_GRACE_S:
                    removals.append(Removal(t, k.kind, k.key, None,
                                            (f"stale temp file, untouched for {_age(age)}",)))
    return GcPlan(root=scan.root, policy=policy, removals=tuple(removals),
                  total_bytes=scan.size, total_entries=scan.entry_count)


def _missing_fx(catalog: Catalog, e: Entry) -> str | None:
    d = catalog.load(e)
    if not isinstance(d, DecodedEntry):
        return None
    for role, ref in (("forward", d.forward), ("backward", d.backward)):
        if ref is not None and catalog.fx_entry_for(ref.key, ref.guards_expr) is None:
            return f"its {role} FX entry ({ref.key[:10]}) is gone"
    return None


def _age(seconds: float) -> str:
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= n:
            return f"{seconds / n:.1f}{unit}"
    return f"{seconds:.0f}s"


@dataclass(frozen=True)
class GcResult:
    """What :func:`execute_plan` did.

    Attributes:
        removed: files deleted.
        skipped: (path, why) for planned files left alone because they changed
            since the plan, vanished, or are not safe to touch.
        failed: (path, error) for deletions the OS refused.
        dirs_removed: key and bucket dirs removed because they became empty.
    """

    removed: tuple[Removal, ...]
    skipped: tuple[tuple[Path, str], ...]
    failed: tuple[tuple[Path, str], ...]
    dirs_removed: tuple[Path, ...]

    @property
    def bytes_freed(self) -> int:
        return sum(r.size for r in self.removed)


def _inside(root_real: str, path: Path) -> bool:
    parent = os.path.realpath(path.parent)
    return parent == root_real or parent.startswith(root_real + os.sep)


def execute_plan(plan: GcPlan) -> GcResult:
    """Delete what ``plan`` lists, safely (see the module docstring).

    Never raises for a single path: permission and other OS errors are
    collected in ``failed`` and the rest goes on.
    """
    root_real = os.path.realpath(plan.root)
    removed, skipped, failed = [], [], []
    touched_dirs: set[Path] = set()
    for r in plan.removals:
        p = r.file.path
        if not _inside(root_real, p):
            skipped.append((p, "outside the cache dir"))
            continue
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            skipped.append((p, "already gone"))
            continue
        except OSError as e:
            failed.append((p, e.strerror or str(e)))
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            skipped.append((p, "not a regular file"))
            continue
        if st.st_size != r.file.size or st.st_mtime != r.file.mtime:
            skipped.append((p, "changed since the plan"))
            continue
        if r.entry is None and time.time() - st.st_mtime <= TEMP_FILE_GRACE_S:
            skipped.append((p, "temp file in use"))
            continue
        try:
            os.unlink(p)
        except FileNotFoundError:
            skipped.append((p, "already gone"))
            continue
        except OSError as e:
            failed.append((p, e.strerror or str(e)))
            continue
        removed.append(r)
        touched_dirs.add(p.parent)
    dirs_removed = []
    for d in sorted(touched_dirs, key=lambda d: len(d.parts), reverse=True):
        for candidate in (d, d.parent):
            if candidate.name in (KeyKind.FX_GRAPH.value, KeyKind.AOT_AUTOGRAD.value):
                break  # never remove the cache's own top dirs
            if not _inside(root_real, candidate) or os.path.islink(candidate):
                break
            try:
                os.rmdir(candidate)  # fails (and we stop) unless empty
            except OSError:
                break
            dirs_removed.append(candidate)
    return GcResult(tuple(removed), tuple(skipped), tuple(failed), tuple(dirs_removed))


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2,
               "g": 1000**3, "gb": 1000**3, "t": 1000**4, "tb": 1000**4,
               "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}


def parse_duration(text: str) -> float:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` -> seconds.

    Raises:
        ValueError: not a positive number with one of those units.
    """
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text.lower())
    if not m:
        raise ValueError(f"{text!r} is not a duration like 90s, 30m, 12h, 7d or 2w")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_size(text: str) -> int:
    """``500MB``, ``2GB``, ``1.5GiB``, ``1000`` -> bytes (decimal and binary units).

    Raises:
        ValueError: not a size.
    """
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", text.lower())
    if not m or m.group(2) not in _SIZE_UNITS:
        raise ValueError(f"{text!r} is not a size like 500MB, 2GB or 1.5GiB")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])
