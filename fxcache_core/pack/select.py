"""Which entries a pack takes, closed over what they need to load: a plan, written separately.

:func:`plan_pack` selects entries (by function, by key, by what a traced run hit
or wrote, or all), then closes over what each needs to be loaded with no
compile:

- an AOTAutograd entry loads its forward and backward FX entries: on a hit torch
  takes, per FX key, the first entry whose guards string equals the one the
  AOTAutograd entry recorded (``FxGraphCacheLoadable`` in
  torch/_functorch/_aot_autograd/aot_autograd_result.py;
  :meth:`~fxcache_core.catalog.reader.Catalog.fx_entry_for`);
- an FX entry needs its wrapper module, compiled kernel libraries and autotune
  results (:mod:`fxcache_core.pack.closure`).

Nothing else goes in: no locks, temp files, C++ sources (torch writes them again
from the wrapper), precompiled headers, CPU ISA check programs (each machine
builds its own), PGO state or Triton's own cache (the FX entry bundles its
Triton binaries). Every member is read once here (without following links) to
hash it; :func:`fxcache_core.pack.archive.write_pack` checks it again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import Entry, scan_artifacts
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import param
from fxcache_core.fsutil import DirRefused, DirWalker, NotRegularFile, open_regular
from fxcache_core.functions.origin import keys_of_function
from fxcache_core.pack.bundled import entry_graphs
from fxcache_core.pack.claims import EntryClaims, combine, entry_claims
from fxcache_core.pack.closure import CodeIndex, wrapper_refused
from fxcache_core.pack.manifest import ARCHIVE_MODE, Manifest, Member, PackError
from fxcache_core.reasons import Reason
from fxcache_core.trace.explain_report import ExplainReport

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class PlannedMember:
    """A file the pack will hold.

    Attributes:
        member: its manifest row (path under the cache dir, size, sha256, kind).
        where: its absolute path here.
    """

    member: Member
    where: str


@dataclass(frozen=True)
class PackPlan:
    """What a pack will hold, before anything is written.

    Attributes:
        root: the cache dir.
        manifest: the manifest to write (members sorted by path).
        files: each member with where it is read from, in the manifest's order.
        left_out: what was asked for or needed but cannot be packed, with why
            (an AOTAutograd entry whose FX entry is gone, an unreadable entry...).
        defaults_unknown: the torch builds (version, else ``torch_version`` hash) of
            packed keys whose default settings fxcache has no record of: the
            manifest lists no settings of those keys (unknown, not none).
        notes: what the pack does that the user should know: a member whose mode
            here is narrower than the archive's (code ``mode-widened``), a linked
            member packed because it was asked (``linked-file-packed``), an entry
            whose pickle names globals torch does not write (``foreign-global``).
    """

    root: Path
    manifest: Manifest
    files: tuple[PlannedMember, ...]
    left_out: tuple[Reason, ...] = ()
    defaults_unknown: tuple[str, ...] = ()
    notes: tuple[Reason, ...] = ()

    @property
    def total_bytes(self) -> int:
        """Bytes of the members (uncompressed)."""
        return self.manifest.total_bytes

    def to_json(self, *, run_not_warmed: Sequence[str] | None = None,
                written: Any = None) -> dict[str, object]:
        """``cache_dir``, ``bytes``, ``archive_mode`` (every member's mode in the archive, octal
        text), ``left_out``, ``notes``, ``defaults_unknown`` and ``manifest``;
        ``run_not_warmed`` when given (what of a traced run no pack warms:
        :func:`run_not_warmed`'s texts), ``written`` when given (the
        :class:`~fxcache_core.pack.archive.PackResult` of writing the plan)."""
        body: dict[str, object] = {
            "cache_dir": str(self.root), "bytes": self.total_bytes, "archive_mode": f"{ARCHIVE_MODE:04o}",
            "left_out": [r.to_json() for r in self.left_out], "notes": [r.to_json() for r in self.notes],
            "defaults_unknown": list(self.defaults_unknown),
            "manifest": self.manifest.to_json()}
        if run_not_warmed is not None:
            body["run_not_warmed"] = list(run_not_warmed)
        if written is not None:
            body["written"] = written.to_json()
        return body


def plan_pack(catalog: Catalog, *, functions: Sequence[str] = (), keys: Sequence[str] = (),
              used: Iterable[tuple[str, str, str]] = (), everything: bool = False,
              torch_version: str | None = None, include_linked: bool = False) -> PackPlan:
    """Plan a pack of the selected entries and everything they need (module docstring).

    Args:
        catalog: the cache.
        functions: names of functions whose keys to take (``function``, as ``ls --fn``).
        keys: key names or unique prefixes (``only``): every entry of each.
        used: (kind, key, entry) triples, e.g. what a traced run hit or wrote
            (:meth:`fxcache_core.trace.explain_report.ExplainReport.uses`); those no
            longer in the cache are left out with a reason.
        everything: every entry of the cache (``all``).
        torch_version: the readable torch version that made the keys, where known
            (a trace's ``torch_version``; the version recorded for the keys' own
            ``torch_version`` hash comes first).
        include_linked: pack a file with more than one hard link, or on another device
            than the cache dir (a file linked or mounted in from outside it); without
            it such a file is left out, with a reason (code ``linked-file``).

    Raises:
        PackError: nothing selected, or nothing of it could be packed.
        KeyLookupError: a key prefix matches no key or several.
        FunctionAmbiguousError: a function name means several functions.
    """
    scan = catalog.scan
    chosen: dict[str, Entry] = {}
    left: list[Reason] = []

    def take(e: Entry) -> None:
        chosen.setdefault(e.file.where, e)

    used = list(used)
    if not (functions or keys or used or everything):
        raise PackError(f"nothing selected: give {param('function')}, {param('only')}, "
                        f"{param('from_trace')} or {param('everything')}")
    for name in functions:
        found, held = keys_of_function(catalog, name)
        if not found:
            raise PackError(f"no key was compiled from {name!r}"
                            + (f"; the cache holds {', '.join(held[:8])}" if held else ""),
                            param="function", value=name)
        for k in scan.keys:
            if k.key in found:
                for e in k.entries:
                    take(e)
    for prefix in keys:
        for e in scan.find(prefix).entries:
            take(e)
    for kind, key, name in used:
        k = scan.key(key)
        e = next((x for x in k.entries if x.name == name), None) if k is not None else None
        if e is None:
            left.append(Reason(f"{kind} entry {key[:10]}/{name[:10]}: the run used it but it is no "
                               "longer in the cache", "used-entry-gone"))
        else:
            take(e)
    if everything:
        for e in scan.entries():
            take(e)
    # Close: AOTAutograd entries -> the FX entries they load.
    for e in list(chosen.values()):
        if e.kind is not KeyKind.AOT_AUTOGRAD:
            continue
        d = catalog.load(e)
        if not isinstance(d, DecodedEntry):
            continue
        for role, ref in (("forward", d.forward), ("backward", d.backward)):
            if ref is None:
                continue
            fx = catalog.fx_entry_for(ref.key, ref.guards_expr)
            if fx is None:
                left.append(Reason(f"AOTAutograd entry {e.key[:10]}/{e.name[:10]}: its {role} FX entry "
                                   f"(key {ref.key[:10]}) is not in the cache: it would miss there too",
                                   "fx-entry-missing"))
            else:
                take(fx)
    return _plan(catalog, sorted(chosen.values(), key=lambda e: e.file.where), left, torch_version,
                 include_linked)


def run_not_warmed(report: ExplainReport) -> tuple[Reason, ...]:
    """What of a traced run no pack can make hit, one reason per cause and cache:
    lookups that bypassed the cache (torch neither looks such a graph up nor saves
    it, e.g. under freezing: ``BypassFxGraphCache`` in torch/_inductor/codecache.py
    and ``BypassAOTAutogradCache`` in torch/_functorch/_aot_autograd/autograd_cache.py;
    code ``run-bypassed``), and misses that wrote no entry (torch did not save it: a
    run elsewhere compiles again; code ``run-miss-not-saved``). Lookups of abandoned
    compile attempts (restarts) are not counted."""
    mine = [x for x in report.lookups if not x.restarted]
    bypass = Counter((x.lookup.cache, x.lookup.bypass_reason or "no reason recorded")
                     for x in mine if x.lookup.state == "bypass")
    unsaved = Counter(x.lookup.cache for x in mine if x.lookup.state == "miss" and x.wrote is None)
    out = [Reason(f"{n} lookup{'s' if n != 1 else ''} of the run bypassed the {cache} cache ({why})",
                  "run-bypassed") for (cache, why), n in bypass.items()]
    out += [Reason(f"{n} lookup{'s' if n != 1 else ''} of the run missed the {cache} cache and saved no entry",
                   "run-miss-not-saved") for cache, n in unsaved.items()]
    return tuple(out)


def _plan(catalog: Catalog, entries: list[Entry], left: list[Reason], torch_version: str | None,
          include_linked: bool = False) -> PackPlan:
    root = catalog.scan.root
    code = CodeIndex(scan_artifacts(root))
    files: dict[str, tuple[str, str, int, str]] = {}  # rel path -> (where, kind, size, sha256)
    notes: list[Reason] = []
    root_dev = _device(root)

    def add(rel: str, where: str, kind: str) -> bool:
        if rel not in files:
            try:
                size, sha, st = _hash(where, root, rel)
            except PackError as err:
                left.append(Reason(f"{rel}: {err.message}: not packed", "unreadable-file"))
                return False
            linked = _linked(st, root_dev)
            if linked is not None and not include_linked:
                left.append(Reason(f"{rel}: {linked}: it may be a file from outside the cache dir, so it is "
                                   f"not packed ({param('include_linked')} packs it)", "linked-file"))
                return False
            if linked is not None:
                notes.append(Reason(f"{rel}: {linked}; packed as asked", "linked-file-packed"))
            if st.st_mode & 0o444 != 0o444:
                notes.append(Reason(f"{rel}: mode {stat.S_IMODE(st.st_mode):04o} here; the pack archives it as "
                                    f"{ARCHIVE_MODE:04o}, readable by anyone who can read the pack",
                                    "mode-widened"))
            files[rel] = (where, kind, size, sha)
        return True

    claims: list[EntryClaims] = []
    for e in entries:
        d = catalog.load(e, full=True)
        if not isinstance(d, DecodedEntry):
            left.append(Reason(f"{e.kind.value} entry {e.key[:10]}/{e.name[:10]} cannot be read "
                               f"({getattr(d, 'cause', 'unreadable')}): not packed", "unreadable-entry"))
            continue
        rel = _relative(root, e.file.where)
        if rel is None:
            left.append(Reason(f"{e.file.where} is not a plain path under the cache dir", "not-under-root"))
            continue
        # (wrapper key, wrapper source) of each graph the entry loads from itself
        graphs = entry_graphs(e.path, e.kind is KeyKind.FX_GRAPH, d.wrapper_key, e.size)
        if graphs is None:
            left.append(Reason(f"{e.kind.value} entry {e.key[:10]}/{e.name[:10]} cannot be read again "
                               "(changed, or over the CPU budget): not packed", "unreadable-entry"))
            continue
        refused = next((r for _, src in graphs if src is not None and (r := wrapper_refused(src))), None)
        if refused is not None:
            left.append(Reason(f"{_label(e)} entry {e.key[:10]}/{e.name[:10]}: {refused}, so the kernels "
                               "it needs cannot be found: not packed", refused.code))
            continue
        if not add(rel, e.file.where, "fx" if e.kind is KeyKind.FX_GRAPH else "aot"):
            continue
        for wrapper_key, source in graphs:
            for k in code.unbuilt(source):
                left.append(Reason(f"{_label(e)} entry {e.key[:10]}/{e.name[:10]}: kernel {k[:10]} has no "
                                   "compiled library in the cache (or not as a regular file): a hit will "
                                   "compile it", "kernel-library-missing"))
            for n in code.needed(wrapper_key, source):
                r = _relative(root, n.file.file.where)
                if r is not None:
                    add(r, n.file.file.where, n.kind)
        if d.foreign:
            notes.append(Reason(f"{e.kind.value} entry {e.key[:10]}/{e.name[:10]} names globals torch does not "
                                f"write ({'; '.join(f.call for f in d.foreign[:3])}): torch will run them on a "
                                "hit, and unpack refuses the pack unless told to allow them", "foreign-global"))
        claims.append(entry_claims(catalog, e, d, torch_version))
    if not claims:
        raise PackError("nothing to pack: " + ("; ".join(r.text for r in left[:3]) or "no entry selected"))
    combined = combine(claims, torch_version)
    if combined.mixed is not None:
        left.append(combined.mixed)
    members: list[PlannedMember] = []
    for rel in sorted(files):
        where, kind, size, sha = files[rel]
        members.append(PlannedMember(Member(rel, size, sha, kind), where))
    manifest = Manifest(members=tuple(m.member for m in members), build=combined.build,
                        settings=combined.settings, entries=combined.entries)
    return PackPlan(root, manifest, tuple(members), tuple(left), combined.defaults_unknown, tuple(notes))


def _device(root: Path) -> int | None:
    try:
        return os.stat(root).st_dev
    except OSError:
        return None


def _linked(st: os.stat_result, root_dev: int | None) -> str | None:
    """Why a member's file may not be the cache's own, or None: more than one hard link
    (the same file is also elsewhere, perhaps outside the cache dir: a link made into
    it), or another device than the cache dir's (a mount inside it)."""
    if st.st_nlink > 1:
        return f"it has {st.st_nlink} hard links"
    if root_dev is not None and st.st_dev != root_dev:
        return "it lies on another device than the cache dir"
    return None


def _label(e: Entry) -> str:
    return "FX" if e.kind is KeyKind.FX_GRAPH else "AOTAutograd"


def _relative(root: Path, where: str) -> str | None:
    base = str(root).rstrip(os.sep) + os.sep
    if not where.startswith(base):
        return None
    rel = where[len(base):].replace(os.sep, "/")
    from fxcache_core.pack.manifest import check_member_path

    try:
        return check_member_path(rel)
    except PackError:
        return None


def open_member(root: Path, rel: str) -> int:
    """A read-only fd of the regular file ``root/rel``, reached without following any
    link below ``root``: each dir opened relative to its parent with ``O_NOFOLLOW``
    (:class:`~fxcache_core.fsutil.DirWalker`: a symlinked key dir or ``fxgraph/``
    would lead out of the cache dir), the file with ``O_NOFOLLOW | O_NONBLOCK`` (a
    FIFO put there is refused, never waited on) and ``O_NOATIME`` where allowed
    (:func:`~fxcache_core.fsutil.open_regular`).

    Raises:
        PackError: it cannot be opened so, or is not a regular file.
    """
    where = os.path.join(root, rel)
    try:
        walker = DirWalker(root)
    except OSError as e:
        raise PackError(f"cannot read {where}: {e.strerror}") from None
    parts = tuple(rel.split("/"))
    with walker:
        try:
            fd, _ = walker.walk(parts[:-1])
        except DirRefused as e:
            raise PackError(f"cannot read {where}: {e.parts[-1]} is not a plain directory ({e.strerror}): "
                            "fxcache packs nothing reached through a link") from None
        try:
            return open_regular(parts[-1], dir_fd=fd, follow_symlinks=False, noatime=True)
        except NotRegularFile:
            raise PackError(f"{where} is not a regular file") from None
        except OSError as e:
            raise PackError(f"cannot read {where}: {e.strerror}") from None


def _hash(where: str, root: Path, rel: str) -> tuple[int, str, os.stat_result]:
    """(size, sha256, its stat) of the regular file ``root/rel`` (``where``), opened with
    :func:`open_member`.

    Raises:
        PackError: it cannot be read, or is not a regular file reached without a link.
    """
    fd = open_member(root, rel)
    h = hashlib.sha256()
    n = 0
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        try:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
                n += len(chunk)
        except OSError as e:
            raise PackError(f"cannot read {where}: {e.strerror}") from None
    return n, h.hexdigest(), st


__all__ = ["PackPlan", "PlannedMember", "open_member", "plan_pack", "run_not_warmed"]
