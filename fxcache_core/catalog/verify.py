"""Checking every entry of a cache against its name and its content (``fxcache verify``).

Torch names each entry file with the sha256 of its bytes (``sha256_hash`` in
torch/_inductor/codecache.py) and files an FX entry under the key it stores
(``_fx_graph_cache_key``). :func:`verify` reads every file (never the index)
and checks both, and that it decodes. An entry fxcache could not read at all
(no permission, over the decoding limits) is *not checked*: that is not a
pass, and :attr:`VerifyReport.all_checked` says so. Nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fxcache_core.cache.scan import Entry
from fxcache_core.catalog.reader import Catalog, Unreadable
from fxcache_core.decode.entries import DecodedEntry
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
            it names another key than the dir it is filed under (``filed-under-other-key``).
    """

    entry: Entry
    problems: tuple[Reason, ...]


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
    """

    entries: int
    bad: tuple[BadEntry, ...]
    unchecked: tuple[UncheckedEntry, ...]

    @property
    def checked(self) -> int:
        """Entries checked (bad ones included)."""
        return self.entries - len(self.unchecked)

    @property
    def all_checked(self) -> bool:
        """Every entry was checked: only then does "no bad entry" mean all pass."""
        return not self.unchecked

    @property
    def passed(self) -> bool:
        """Every entry was checked and none is bad."""
        return self.all_checked and not self.bad

    def to_json(self) -> dict[str, Any]:
        """``{"entries", "checked", "not_checked", "problems": [{kind, key, entry,
        path, problems, problem_codes}], "unchecked": [{kind, key, entry, path, why,
        why_code}]}`` (``why_code`` e.g. ``over-cpu-budget``; ``unspecified`` where the
        reason has none)."""
        def where(e: Entry) -> dict[str, Any]:
            return {"kind": e.kind.value, "key": e.key, "entry": e.name, "path": e.file.where}

        return {
            "entries": self.entries, "checked": self.checked, "not_checked": len(self.unchecked),
            "problems": [{**where(b.entry), "problems": list(b.problems),
                          "problem_codes": [code_of(p) for p in b.problems]} for b in self.bad],
            "unchecked": [{**where(u.entry), "why": u.reason, "why_code": code_of(u.reason)}
                          for u in self.unchecked],
        }


def verify(catalog: Catalog) -> VerifyReport:
    """Check every entry of ``catalog``'s scan, reading each file (use a catalog
    without an index, hashing on read, so nothing comes from the index).

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
        why = [Reason(f"unreadable: {d.reason}", "unreadable")] if isinstance(d, Unreadable) else []
        if catalog.name_matches_content(e) is False:
            why.append(Reason("its name is not the sha256 of its content: altered or truncated after "
                              "torch wrote it", "name-not-content-hash"))
        if isinstance(d, DecodedEntry) and d.fx_key and d.fx_key != e.key:
            why.append(Reason(f"it says it is an entry of key {d.fx_key[:12]}, filed under {e.key[:12]}",
                              "filed-under-other-key"))
        if why:
            bad.append(BadEntry(e, tuple(why)))
    return VerifyReport(catalog.scan.entry_count, tuple(bad), tuple(unchecked))
