"""Checking every entry of a cache against its name and its content (``fxcache verify``).

Torch names each entry file with the sha256 of its bytes (``sha256_hash`` in
torch/_inductor/codecache.py) and files an FX entry under the key it stores
(``_fx_graph_cache_key``). :func:`verify` reads every file (never the index)
and checks both, that it decodes, and the code scan: every global its pickle
names is one torch writes in that kind of entry (:mod:`fxcache_core.decode.code_scan`;
torch's ``pickle.load`` runs whatever it names). Dynamo's saved profiles
(``dynamo/code_state_*.pkl``), which torch unpickles too, get the code scan. An
entry fxcache could not read at all (no permission, over the decoding limits) is
*not checked*: that is not a pass, and :attr:`VerifyReport.all_checked` says so.
Who else could write where torch loads code from
(:func:`fxcache_core.cache.exposure.dir_exposure`) is a warning beside the
verdict, not part of it. Nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fxcache_core.cache.exposure import dir_exposure
from fxcache_core.cache.scan import Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.code_scan import ForeignGlobal
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.pgo import MAX_PGO_FILES, profile_names, read_pgo_states
from fxcache_core.reasons import Reason, code_of


@dataclass(frozen=True, slots=True)
class BadEntry:
    """An entry that failed a check.

    Attributes:
        entry: the entry.
        problems: what is wrong, one phrase each, a
            :class:`~fxcache_core.reasons.Reason`: its content is not a valid
            entry (``unreadable``); its name is not the sha256 of its content, so
            it was altered or truncated after torch wrote it (``name-not-content-hash``);
            it names another key than the dir it is filed under (``filed-under-other-key``);
            its pickle names a global torch does not write there (``foreign-global``,
            one per global, with the call torch would make).
        foreign: those globals.
    """

    entry: Entry
    problems: tuple[Reason, ...]
    foreign: tuple[ForeignGlobal, ...] = ()


@dataclass(frozen=True, slots=True)
class BadProfile:
    """A saved Dynamo profile that names globals torch does not write in one.

    Attributes:
        path: the file.
        foreign: the globals, with the call torch would make.
    """

    path: str
    foreign: tuple[ForeignGlobal, ...]


@dataclass(frozen=True, slots=True)
class UncheckedEntry:
    """An entry that could not be checked, and why (permissions, size, memory or CPU
    limits): evidence neither way."""

    entry: Entry
    reason: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :func:`verify` found.

    Attributes:
        entries: entries in the scan.
        bad: the entries that failed a check, in scan order.
        unchecked: the entries that could not be checked, in scan order.
        profiles: saved profiles read.
        bad_profiles: those that name globals torch does not write.
        unchecked_profiles: (path, why) of the profiles that could not be read whole
            (over a limit, not a regular file, past the count fxcache reads): not a pass.
        exposure: who else could write where torch loads code from (warnings, codes
            ``dir-is-symlink``, ``dir-not-owned``, ``dir-writable-by-others``): not
            part of the verdict.
    """

    entries: int
    bad: tuple[BadEntry, ...]
    unchecked: tuple[UncheckedEntry, ...]
    profiles: int = 0
    bad_profiles: tuple[BadProfile, ...] = ()
    exposure: tuple[Reason, ...] = ()
    unchecked_profiles: tuple[tuple[str, str], ...] = ()

    @property
    def checked(self) -> int:
        """Entries checked (bad ones included)."""
        return self.entries - len(self.unchecked)

    @property
    def all_checked(self) -> bool:
        """Every entry and profile was checked: only then does "no bad entry" mean all pass."""
        return not self.unchecked and not self.unchecked_profiles

    @property
    def passed(self) -> bool:
        """Every entry was checked and none is bad (nor any profile)."""
        return self.all_checked and not self.bad and not self.bad_profiles

    def to_json(self) -> dict[str, Any]:
        """``{"entries", "checked", "not_checked", "problems": [{kind, key, entry,
        path, problems, problem_codes, foreign_globals}], "unchecked": [{kind, key, entry,
        path, why, why_code}], "profiles": {"checked", "problems": [{path, foreign_globals}]},
        "exposure": [{code, text}]}`` (``why_code`` e.g. ``over-cpu-budget``; ``unspecified``
        where the reason has none)."""
        def where(e: Entry) -> dict[str, Any]:
            return {"kind": e.kind.value, "key": e.key, "entry": e.name, "path": e.file.where}

        return {
            "entries": self.entries, "checked": self.checked, "not_checked": len(self.unchecked),
            "problems": [{**where(b.entry), "problems": list(b.problems),
                          "problem_codes": [code_of(p) for p in b.problems],
                          "foreign_globals": [f.to_json() for f in b.foreign]} for b in self.bad],
            "unchecked": [{**where(u.entry), "why": u.reason, "why_code": code_of(u.reason)}
                          for u in self.unchecked],
            "profiles": {"checked": self.profiles - len(self.unchecked_profiles),
                         "problems": [{"path": b.path, "foreign_globals": [f.to_json() for f in b.foreign]}
                                      for b in self.bad_profiles],
                         "unchecked": [{"path": p, "why": w} for p, w in self.unchecked_profiles]},
            "exposure": [r.to_json() for r in self.exposure],
        }


def verify(catalog: Catalog, *, check_dirs: bool = True) -> VerifyReport:
    """Check every entry of ``catalog``'s scan, reading each file (use a catalog
    without an index, hashing on read, so nothing comes from the index), and the
    saved profiles of its cache dir. ``check_dirs``: say who else could write where
    torch loads code from (:attr:`VerifyReport.exposure`; off for a snapshot fxcache
    made itself, of a remote cache).

    Cost: every entry read and decoded once (on all CPUs when there are many).
    """
    bad: list[BadEntry] = []
    unchecked: list[UncheckedEntry] = []
    catalog.read_ahead(catalog.scan.entries())
    for e in catalog.scan.entries():
        d = catalog.load(e)
        if isinstance(d, Unreadable) and d.cause != "corrupt":
            unchecked.append(UncheckedEntry(e, d.reason))
            continue
        if isinstance(d, Unreadable):  # one that names foreign globals says so first
            why = [d.reason if code_of(d.reason) == "foreign-global" else
                   Reason(f"unreadable: {d.reason}", "unreadable")]
        else:
            why = [f.reason for f in d.foreign]
        if catalog.name_matches_content(e) is False:
            why.append(Reason("its name is not the sha256 of its content: altered or truncated after "
                              "torch wrote it", "name-not-content-hash"))
        if isinstance(d, DecodedEntry) and d.fx_key and d.fx_key != e.key:
            why.append(Reason(f"it says it is an entry of key {d.fx_key[:12]}, filed under {e.key[:12]}",
                              "filed-under-other-key"))
        if why:
            bad.append(BadEntry(e, tuple(why), d.foreign if isinstance(d, DecodedEntry) else ()))
    profiles = read_pgo_states(catalog.scan.root)
    bad_profiles = tuple(BadProfile(str(p.path), p.foreign) for p in profiles if p.foreign)
    names = profile_names(catalog.scan.root)
    unchecked_profiles = tuple(
        [(str(p.path), p.problem) for p in profiles if not p.foreign and p.problem is not None
         and p.problem.code in _NOT_READ_WHOLE]
        + [(str(catalog.scan.root / "dynamo" / n), f"past the {MAX_PGO_FILES} profiles fxcache reads")
           for n in names[MAX_PGO_FILES:]])
    exposure = dir_exposure(catalog.scan.root) if check_dirs else ()
    return VerifyReport(catalog.scan.entry_count, tuple(bad), tuple(unchecked), len(names),
                        bad_profiles, exposure, unchecked_profiles)


_NOT_READ_WHOLE = frozenset({"over-size-limit", "unreadable", "too-many-objects", "over-memory-budget",
                             "over-cpu-budget", "decoder-died", "no-decoder"})
"""Problems of a profile that leave what it names unknown (one that does not decode is
what torch fails on too, and what it named before the failure was scanned)."""
