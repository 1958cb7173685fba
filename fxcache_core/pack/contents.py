"""What a pack holds, held against what its entries say, before anything is written.

A pack is code: on a hit torch unpickles its entries (``pickle.load``) and loads
its kernel libraries. :func:`~fxcache_core.pack.unpack.verify_pack` proves the
archive is the one its manifest describes, byte for byte; it does not prove the
manifest tells the truth, nor that what it holds is what torch writes.
:func:`check_pack` does the rest, reading every member once more as it checks it
(the entries, wrapper modules and kernel sources into a private temp dir laid out
as a cache dir, removed after; libraries and autotune results only by name):

1. every packed entry is decoded through a :class:`~fxcache_core.catalog.reader.Catalog`
   of that dir (the restricted unpickler: nothing is run); one that does not
   decode refuses the pack;
2. the manifest's claims (build, settings, inputs, guards, thread counts) are read
   again from the entries (:mod:`fxcache_core.pack.claims`); a claim they
   contradict refuses the pack, and what ``unpack`` says from then on is what the
   entries say (:attr:`PackCheck.manifest`);
3. every member must be needed: an entry the manifest lists, or a file one of its
   FX entries needs by the rule ``fxcache pack`` selects with
   (:meth:`~fxcache_core.pack.closure.CodeIndex.needed`, applied to the pack's own
   files): anything else (an entry the manifest does not list, a stray library,
   a source no entry names, a wrapper module that is not exactly the source its
   entry holds, which torch would import instead) refuses the pack;
4. the code scan: every global each entry's pickle names is held against those
   torch writes (:mod:`fxcache_core.decode.code_scan`); an entry that names
   another is a finding (:attr:`PackCheck.foreign`), and :func:`plan_unpack`
   refuses such a pack unless told to allow it.

Then :func:`plan_unpack` says what each member would do under the cache dir:
``add``, ``identical`` (the same bytes are there: skipped) or ``conflict`` (a
different file, or something not a regular file, is there: never overwritten,
reported). Writing is :func:`fxcache_core.pack.install.execute_unpack`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fxcache_core.cache.keys import artifact_key
from fxcache_core.cache.scan import Artifact, FileInfo, scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.code_scan import ForeignGlobal
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.errors import param
from fxcache_core.pack.bundled import entry_graphs
from fxcache_core.pack.claims import combine, contradiction, entry_claims
from fxcache_core.pack.closure import CodeIndex
from fxcache_core.pack.manifest import Manifest, Member, PackedEntry, PackError
from fxcache_core.pack.unpack import check_member, existing_at, read_members

Action = Literal["add", "identical", "conflict"]
_WRITTEN = frozenset({"fx", "aot", "wrapper", "source"})
"""Member kinds :func:`check_pack` reads the content of (into its temp dir)."""


@dataclass(frozen=True, slots=True)
class ForeignEntry:
    """A packed entry whose pickle names globals torch does not write there.

    Attributes:
        entry: its row (as its content says).
        path: its member path.
        foreign: the globals, with the call torch would make.
    """

    entry: PackedEntry
    path: str
    foreign: tuple[ForeignGlobal, ...]

    def to_json(self) -> dict[str, object]:
        return {"kind": self.entry.kind, "key": self.entry.key, "entry": self.entry.entry,
                "path": self.path, "foreign_globals": [f.to_json() for f in self.foreign]}


@dataclass(frozen=True)
class PackCheck:
    """A pack checked by :func:`check_pack`.

    Attributes:
        pack: the archive.
        listed: its manifest as the archive holds it.
        manifest: the same members, with the build, settings and entries as the
            entries themselves say (function names as read here).
        foreign: the entries that name globals torch does not write, in member order.
        defaults_unknown: the builds whose default settings fxcache has no record of
            (their settings are not listed: unknown, not none).
    """

    pack: Path
    listed: Manifest
    manifest: Manifest
    foreign: tuple[ForeignEntry, ...] = ()
    defaults_unknown: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        """``members``, ``entries``, ``foreign_globals`` (per entry) and ``defaults_unknown``."""
        return {"members": len(self.manifest.members), "entries": len(self.manifest.entries),
                "foreign_globals": [f.to_json() for f in self.foreign],
                "defaults_unknown": list(self.defaults_unknown)}


def check_pack(path: Path, on_bytes: Callable[[int], None] | None = None) -> PackCheck:
    """Verify the archive and check what it holds (module docstring); write nothing
    but a temp dir of its own, removed before returning.

    Raises:
        PackError: the first thing that is wrong (damaged, altered, a claim its
            entries contradict, an entry that does not decode, a member no entry
            needs), in one line.
    """
    tmp = Path(tempfile.mkdtemp(prefix="fxcache-pack-check-"))
    try:
        with read_members(Path(path)) as (listed, members):
            for m, f in members:
                if m.kind not in _WRITTEN:
                    check_member(m, f, None, on_bytes)
                    continue
                dst = tmp / m.path
                dst.parent.mkdir(parents=True, exist_ok=True)
                with open(dst, "xb") as out:
                    check_member(m, f, out.write, on_bytes)
        return _check(Path(path), tmp, listed)
    except OSError as e:
        raise PackError(f"cannot check the pack: {e.strerror or e}: nothing written") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _check(pack: Path, tmp: Path, listed: Manifest) -> PackCheck:
    """Steps 1 to 4 of the module docstring on the members written into ``tmp``."""
    catalog = Catalog(scan_cache(tmp), hash_on_read=False)
    entries = {os.path.relpath(e.file.where, tmp).replace(os.sep, "/"): e for e in catalog.scan.entries()}
    catalog.read_ahead(list(entries.values()))  # the catalog's bounded decoding first, then each in full
    listed_entries = {_entry_path(e.kind, e.key, e.entry) for e in listed.entries}
    claims, foreign, decoded = [], [], {}
    for m in listed.members:
        if m.kind not in ("fx", "aot"):
            continue
        e = entries.get(m.path)
        if e is None or m.path not in listed_entries:
            raise PackError(f"member {m.path!r} is an entry the manifest does not list: no packed entry "
                            "needs it (refused, nothing written)")
        d = catalog.load(e, full=True)
        if not isinstance(d, DecodedEntry):
            raise PackError(f"entry {m.path!r} cannot be checked: {d.reason} (refused, nothing written)")
        c = entry_claims(catalog, e, d)
        claims.append(c)
        decoded[m.path] = d
        if d.foreign:
            foreign.append(ForeignEntry(c.packed, m.path, d.foreign))
    read = combine(claims)
    why = contradiction(listed, read)
    if why is not None:
        raise PackError(f"the manifest does not match the entries it packs: {why} (a damaged or altered "
                        "pack: refused, nothing written)")
    _only_needed(tmp, listed, decoded)
    manifest = Manifest(listed.members, read.build, read.settings, read.entries)
    return PackCheck(pack, listed, manifest, tuple(foreign), read.defaults_unknown)


def _only_needed(tmp: Path, listed: Manifest, decoded: dict[str, DecodedEntry]) -> None:
    """Refuse a member that is not an entry and that no packed entry needs (an FX entry's
    own graph, the graphs a bundled AOTAutograd entry carries), by the
    rule pack selects with, applied to the pack's own files (the content of its
    wrappers and sources in ``tmp``, the others by name)."""
    code = CodeIndex([Artifact(FileInfo(str(tmp / m.path), m.size, 0.0, 0.0), key)
                      for m in listed.members if m.kind not in ("fx", "aot")
                      and (key := artifact_key(m.path.rsplit("/", 1)[-1])) is not None])
    needed: dict[str, str] = {}
    wrappers: set[str] = set()
    for rel, d in decoded.items():
        path = tmp / rel
        graphs = entry_graphs(path, d.kind.value == "fxgraph", d.wrapper_key, _size(path)) or []
        for wrapper_key, source in graphs:
            if wrapper_key:
                wrappers.add(wrapper_key)
            for n in code.needed(wrapper_key, source):
                needed[os.path.relpath(n.file.file.where, tmp).replace(os.sep, "/")] = n.kind
    for m in listed.members:
        if m.kind in ("fx", "aot"):
            continue
        kind = needed.get(m.path)
        if kind is None and m.kind == "wrapper" and artifact_key(m.path.rsplit("/", 1)[-1]) in wrappers:
            raise PackError(f"member {m.path!r} is not the source its entry holds, and torch would import it "
                            "instead of that source (refused, nothing written)")
        if kind is None:
            raise PackError(f"member {m.path!r} ({m.kind}) is not needed by any entry of the pack "
                            "(refused, nothing written)")
        if kind != m.kind:
            raise PackError(f"member {m.path!r} is listed as a {m.kind}, but its entry needs it as a {kind} "
                            "(refused, nothing written)")


def _entry_path(kind: str, key: str, entry: str) -> str:
    return f"fxgraph/{key[1:3]}/{key}/{entry}" if kind == "fxgraph" else f"aotautograd/{key}/{entry}"


@dataclass(frozen=True)
class UnpackPlan:
    """What unpacking a checked pack into a cache dir would do.

    Attributes:
        pack: the archive.
        root: the cache dir.
        manifest: the pack's manifest as the archive holds it (verified).
        actions: per member (manifest order), ``add``, ``identical`` or ``conflict``.
        conflicts: per conflicting member, what is there instead.
        check: what :func:`check_pack` found (the claims as the entries say them,
            the code scan's findings).
    """

    pack: Path
    root: Path
    manifest: Manifest
    actions: tuple[tuple[Member, Action], ...]
    conflicts: dict[str, str] = field(default_factory=dict)
    check: PackCheck | None = None

    def count(self, action: Action) -> int:
        return sum(1 for _, a in self.actions if a == action)

    def bytes_of(self, action: Action) -> int:
        return sum(m.size for m, a in self.actions if a == action)

    def to_json(self) -> dict[str, object]:
        return {"pack": str(self.pack), "cache_dir": str(self.root),
                "add": self.count("add"), "identical": self.count("identical"),
                "conflict": self.count("conflict"), "bytes_added": self.bytes_of("add"),
                "foreign_globals": [f.to_json() for f in self.check.foreign] if self.check else [],
                "members": [{**m.to_json(), "action": a, "existing": self.conflicts.get(m.path)}
                            for m, a in self.actions]}


def plan_unpack(root: Path, check: PackCheck, allow_foreign_globals: bool = False) -> UnpackPlan:
    """Compare each member of a checked pack with what is under ``root`` now
    (read only, never following a link; ``root`` need not exist).

    Raises:
        PackError: the pack holds an entry that names a global torch does not write
            (:attr:`PackCheck.foreign`) and ``allow_foreign_globals`` is not set;
            ``root`` cannot be looked up (a name over the system's limit, no
            permission on a dir above it): naming the parameter ``cache_dir``.
    """
    if check.foreign and not allow_foreign_globals:
        first = check.foreign[0]
        raise PackError(f"{len(check.foreign)} packed entr{'y names' if len(check.foreign) == 1 else 'ies name'} "
                        f"globals torch does not write (first: {first.entry.kind} {first.entry.key[:12]}/"
                        f"{first.entry.entry[:12]}: {first.foreign[0].call}): torch would run them on a hit, "
                        f"so the pack is refused, nothing written ({param('allow_foreign_globals')} unpacks it anyway)")
    actions: list[tuple[Member, Action]] = []
    conflicts: dict[str, str] = {}
    _check_root(Path(root))
    for m in check.listed.members:
        there = existing_at(root, m.path, m.size)
        if there is None:
            actions.append((m, "add"))
        elif there == m.sha256:
            actions.append((m, "identical"))
        else:
            actions.append((m, "conflict"))
            conflicts[m.path] = there if there.startswith("not ") else "a different file"
    return UnpackPlan(check.pack, Path(root), check.listed, tuple(actions), conflicts, check)


def _check_root(root: Path) -> None:
    """Refuse a cache dir that cannot be looked up for a reason other than its absence
    (a name longer than the system allows, a loop of links, no permission).

    Raises:
        PackError: naming the parameter ``cache_dir``.
    """
    try:
        os.stat(root)
    except (FileNotFoundError, NotADirectoryError):
        return  # made when unpacking (or refused then, one line)
    except OSError as e:
        raise PackError(f"cannot open the cache dir {root} ({param('cache_dir')}): {e.strerror or e}",
                        param="cache_dir", value=str(root)) from None


__all__ = ["ForeignEntry", "PackCheck", "UnpackPlan", "check_pack", "plan_unpack"]


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0

