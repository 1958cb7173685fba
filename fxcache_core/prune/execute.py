"""Pruning the cache, second half: executing a :class:`~fxcache_core.prune.plan.GcPlan`.

:func:`execute_plan` deletes exactly the planned files, one by one, reaching
each through directory file descriptors opened level by level without
following a symlink, each dir checked against the plan
(:mod:`fxcache_core.prune.deletion`), and the file checked in its dir right
before it is unlinked there (:func:`_refusal`: a regular file, the same inode,
size, mtime and ctime, unused since the plan). Generated code goes under torch's
compile lock for its key. Key dirs that end up empty are removed with
``rmdir`` (never ``rmtree``: a compile may be writing a new entry into the
dir at that moment).

Before anything goes, every file the plan read and keeps (:attr:`GcPlan.facts
<fxcache_core.prune.plan.GcPlan.facts>`: the entries whose bytes, or proven index
rows, its decisions rest on) is ``lstat``'ed again (:func:`changed_facts`); each file
it deletes is checked as it goes. If a kept one is not the file the plan read, the
plan rests on stale facts, and is made again (``replan``) or, without a way to,
nothing is deleted.

Mirrors ``shutil.rmtree``'s fd-based walk and torch's ``FileLock`` (filelock's
``flock``). Never deletes what the plan does not list, never leaves the cache
dir, and never raises for one path: a refusal is a skipped path, an OS error
a failed one.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.keys import KeyKind
from fxcache_core.fsutil import is_link_refusal
from fxcache_core.prune.deletion import DirId, DirWalk, Refused
from fxcache_core.prune.generated import LOAD_OK
from fxcache_core.prune.plan import GcPlan
from fxcache_core.prune.policy import TEMP_FILE_GRACE_S
from fxcache_core.prune.removal import Removal
from fxcache_core.reasons import Reason, code_of


@dataclass(frozen=True)
class GcResult:
    """What :func:`execute_plan` did.

    Attributes:
        removed: files deleted.
        skipped: (path, why) for planned files left alone because they changed
            since the plan, vanished, or are not safe to touch.
        failed: (path, error) for deletions the OS refused.
        dirs_removed: dirs the plan names (key, bucket, Triton kernel and temp dirs)
            removed because they became empty.
        replanned: how many times a file the plan read had changed when execution
            began, and the plan was made again (:func:`changed_facts`).
        plan: the plan executed, when it is not the one given (``replanned``).
    """

    removed: tuple[Removal, ...]
    skipped: tuple[tuple[Path, str], ...]
    failed: tuple[tuple[Path, str], ...]
    dirs_removed: tuple[Path, ...]
    replanned: int = 0
    plan: GcPlan | None = None

    @property
    def bytes_freed(self) -> int:
        return sum(r.size for r in self.removed)

    def to_json(self) -> dict[str, object]:
        """``removed`` (paths), ``skipped`` (``path``, ``why``, ``why_code``),
        ``failed`` (``path``, ``error``, ``error_code``), ``dirs_removed``,
        ``bytes_freed`` and ``replanned``."""
        return {"removed": [r.file.where for r in self.removed],
                "skipped": [{"path": str(p), "why": w, "why_code": code_of(w)} for p, w in self.skipped],
                "failed": [{"path": str(p), "error": w, "error_code": code_of(w)} for p, w in self.failed],
                "dirs_removed": [str(d) for d in self.dirs_removed], "bytes_freed": self.bytes_freed,
                "replanned": self.replanned}


def _refusal(r: Removal, st: os.stat_result, dir_fd: int) -> Reason | None:
    """Why a planned file must not be deleted now (None: it may go), from its
    ``fstatat`` in its verified dir ``dir_fd``
    (:meth:`~fxcache_core.prune.deletion.DirWalk.unlink`).

    Checked right before each deletion: a regular file (not a symlink), the very
    file the plan saw (same inode), unchanged (size, mtime) and unused (atime) since
    the plan, and unchanged in device and ctime where the plan recorded them (a rewrite
    with its old size and times put back still moves ctime), for a temp file or
    generated code, not one a compile may be writing or loading, and, for a library,
    its ``.load_ok`` marker gone from that same dir (planned before it, see
    :func:`fxcache_core.prune.generated.code_removals`; a marker that cannot be
    looked for counts as there).
    """
    f = r.file
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        return Reason("not a regular file", "not-a-regular-file")
    if f.ino and st.st_ino != f.ino:
        return Reason("replaced since the plan (another file has its name now)", "replaced-since-plan")
    if st.st_size != f.size or (st.st_mtime_ns != f.mtime_ns if f.mtime_ns else st.st_mtime != f.mtime):
        return Reason("changed since the plan", "changed-since-plan")
    if st.st_atime > f.atime:
        return Reason("used since the plan", "used-since-plan")
    if f.ctime_ns and (st.st_ctime_ns, st.st_dev) != (f.ctime_ns, f.dev):  # its times put back
        return Reason("changed since the plan", "changed-since-plan")
    if r.entry is None and time.time() - max(st.st_mtime, st.st_atime) <= TEMP_FILE_GRACE_S:
        return (Reason("temp file in use", "temp-file-in-use") if r.kind is not KeyKind.CODE
                else Reason("generated code used in the last hour (a compile may be loading it)",
                            "generated-code-in-use"))
    if r.kind is KeyKind.CODE and not f.name.endswith(LOAD_OK):
        try:
            os.stat(f.name + LOAD_OK, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError:
            pass
        return Reason(f"its {LOAD_OK} marker is still there (torch would trust a rebuilt "
                      "library without checking that it loads)", "load-marker-present")
    return None


_LOCK_NOT_PLAIN = Reason("its compile lock is not a plain file in the cache dir", "lock-not-plain-file")


def _take_compile_lock(walk: DirWalk, r: Removal) -> tuple[int | None, Reason | None]:
    """Take torch's compile lock of a generated-code file's key, to hold while it is deleted.

    Torch compiles C++ under ``FileLock(<root>/locks/<key>.lock)`` after checking
    that the source exists (``_worker_compile_cpp`` in torch/_inductor/codecache.py);
    holding the same lock keeps gc out of that window. filelock's Unix lock is
    ``fcntl.flock`` on the whole file, so gc ``flock``s the same file, opened
    through the verified cache dir without following a symlink.

    Returns (the fd holding the lock, to close when done, or None; why not to go
    on, or None). Going on without a lock is right when the key has no lock file
    (no compile ever took it). Entries and temp files need no lock. A unit's
    file takes the unit's lock instead (:attr:`Removal.lock`: a precompiled
    header's, PGO state's, an orphaned lock itself; () for none).
    """
    if r.lock is not None:
        if not r.lock:
            return None, None
        where = r.lock
    elif r.kind is not KeyKind.CODE:
        return None, None
    else:
        where = ("locks", f"{r.key}.lock")
    import fcntl

    try:
        fd = walk.open_in(tuple(where[:-1]), where[-1])
    except FileNotFoundError:
        return None, None
    except Refused as e:
        if e.why.endswith("is gone"):
            return None, None
        return None, _LOCK_NOT_PLAIN
    except OSError as e:
        if is_link_refusal(e):
            return None, _LOCK_NOT_PLAIN
        return None, Reason(f"cannot check its compile lock: {e.strerror or e}", "lock-unchecked")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            why = _LOCK_NOT_PLAIN
        else:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, None
    except BlockingIOError:
        why = Reason("a compile holds its lock", "lock-held")
    except OSError as e:
        why = Reason(f"cannot take its compile lock: {e.strerror or e}", "lock-not-taken")
    os.close(fd)
    return None, why


def _planned_dirs(plan: GcPlan) -> set[tuple[str, ...]]:
    """The dirs (names below the root) ``plan`` names for removal once empty: the key
    dir of each entry removal (and temp file of an entry key dir), the FX bucket dir
    above an FX key dir, and :attr:`GcPlan.dirs` (Triton kernel dirs, Triton temp dirs)."""
    out = set(plan.dirs)
    for r in plan.removals:
        p = r.at.parts if r.at is not None else ()
        if r.kind is KeyKind.FX_GRAPH and len(p) == 4 and p[0] == KeyKind.FX_GRAPH.value:
            out |= {p[:3], p[:2]}
        elif r.kind is KeyKind.AOT_AUTOGRAD and len(p) == 3 and p[0] == KeyKind.AOT_AUTOGRAD.value:
            out.add(p[:2])
    return out


MAX_REPLANS = 3
"""How many times :func:`execute_plan` plans again when the files the plan read keep
changing (a compile writing into the cache meanwhile); then it deletes nothing."""


def changed_facts(plan: GcPlan) -> list[str]:
    """The files the plan read and keeps (:attr:`GcPlan.facts
    <fxcache_core.prune.plan.GcPlan.facts>`) that are not, now, the file it read:
    another identity (device, inode, size, mtime_ns, ctime_ns: a rewrite moves
    ``ctime`` even with its size and mtime put back), or gone. One ``lstat`` each
    (``stat`` for those reached through a symlink, as the scan saw them); nothing is
    opened. A file fxcache cannot stat counts as changed. The files it deletes are
    left to the check each gets right before it goes (:func:`_refusal`: a changed one
    is kept, and said so)."""
    out: list[str] = []
    going = {r.file.where for r in plan.removals}
    for f in plan.facts:
        if f.where in going:
            continue
        try:
            st = os.stat(f.where) if f.where in plan.followed else os.lstat(f.where)
        except OSError:
            out.append(f.where)
            continue
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) != f.identity:
            out.append(f.where)
    return out


def execute_plan(plan: GcPlan, replan: Callable[[], GcPlan] | None = None) -> GcResult:
    """Delete what ``plan`` lists, safely (see the module docstring).

    First every file the plan read is checked to be the file it read
    (:func:`changed_facts`); if one is not, the plan's facts are stale: ``replan()``
    (a fresh scan, planned by the same policy) gives the plan executed instead, up to
    :data:`MAX_REPLANS` times; without ``replan``, or past that, nothing is deleted
    and every planned file is skipped (``facts-changed-since-plan``).

    Each file is reached through directory file descriptors from the cache dir
    down, each level checked against what the plan recorded
    (:mod:`fxcache_core.prune.deletion`), and checked again itself (:func:`_refusal`)
    right before it is unlinked in its dir. Dirs the plan names
    (:func:`_planned_dirs`: key dirs, FX bucket dirs, Triton kernel and temp
    dirs) that end up empty are removed the same way; no other dir.

    Never raises for a single path: permission and other OS errors are
    collected in ``failed``, changed or unsafe paths in ``skipped``, and the
    rest goes on (``replan`` may raise what planning raises).
    """
    given, replanned = plan, 0
    while changed := changed_facts(plan):
        if replan is None or replanned == MAX_REPLANS:
            why = Reason(f"{len(changed)} file(s) the plan read changed since (first: {changed[0]}): "
                         "nothing deleted on stale facts", "facts-changed-since-plan")
            return GcResult((), tuple((r.file.path, why) for r in plan.removals), (), (), replanned,
                            plan if plan is not given else None)
        plan, replanned = replan(), replanned + 1
    res = _execute(plan)
    return res if plan is given else GcResult(res.removed, res.skipped, res.failed, res.dirs_removed,
                                              replanned, plan)


def _execute(plan: GcPlan) -> GcResult:
    """:func:`execute_plan`'s deletions, once the plan's facts are checked."""
    removed: list[Removal] = []
    skipped: list[tuple[Path, str]] = []
    failed: list[tuple[Path, str]] = []
    touched: dict[tuple[str, ...], tuple[DirId, ...]] = {}
    with DirWalk(plan.root) as walk:
        for r in plan.removals:
            p = r.file.path
            if r.at is None:
                skipped.append((p, Reason("its dir could not be reached without following a symlink "
                                          "when the plan was made", "unreachable-when-planned")))
                continue
            lock, busy = _take_compile_lock(walk, r)
            try:
                if busy is not None:
                    skipped.append((p, busy))
                    continue
                walk.unlink(r.at, lambda st, fd, r=r: _refusal(r, st, fd))
            except Refused as e:
                (failed if e.kind == "failed" else skipped).append((p, e.why))
                continue
            except FileNotFoundError:
                skipped.append((p, Reason("already gone", "already-gone")))
                continue
            except OSError as e:
                failed.append((p, Reason(e.strerror or str(e), "os-error")))
                continue
            finally:
                if lock is not None:
                    os.close(lock)  # releases the flock
            removed.append(r)
            touched[r.at.parts[:-1]] = r.at.dirs
        dirs_removed = []
        named = _planned_dirs(plan)
        for parts, ids in sorted(touched.items(), key=lambda kv: len(kv[0]), reverse=True):
            # Only dirs the plan names, deepest first: a key dir, then an FX bucket dir, or a
            # Triton kernel dir and its temp dirs; never a top dir (fxgraph, aotautograd,
            # triton/<device>) or a generated-code dir (<root>/<2 chars>: torch's
            # write_atomic may be about to use it), nor a dir a hostile cache nests a file in.
            for depth in range(len(parts), 1, -1):
                if parts[:depth] not in named or not walk.rmdir(parts[:depth], ids[:depth + 1]):
                    break
                dirs_removed.append(Path(plan.root, *parts[:depth]))
    return GcResult(tuple(removed), tuple(skipped), tuple(failed), tuple(dirs_removed))
