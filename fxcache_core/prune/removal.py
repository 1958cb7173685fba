"""One file a gc plan deletes (:class:`Removal`), and what "last use" of a file means.

A removal is a frozen record of what the plan saw (the scanned file, why it
goes, where it was found under the cache dir); execution
(:mod:`fxcache_core.prune.execute`) checks the file against it again before it
deletes it. Mirrors nothing in torch. Never touches a file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _text

from fxcache_core.cache.inventory import ContentKind
from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import FileInfo
from fxcache_core.prune.deletion import Located
from fxcache_core.reasons import code_of


def last_use(f: FileInfo) -> float:
    """When an entry was last used, epoch seconds: ``max(atime, mtime)``. Where
    the file system records reads (relatime), a lookup that read the entry moved
    its atime; where it does not (noatime), atime is not newer than mtime and
    mtime counts."""
    return max(f.atime, f.mtime)


@dataclass(frozen=True, slots=True)
class Removal:
    """One file the plan deletes.

    Attributes:
        file: the file as scanned (path, size in bytes, mtime).
        kind, key: where it lives: an entry or temp file of that cache key, or
            (``KeyKind.CODE``) a generated-code file of that code-cache key.
        entry: the entry name (None for a temp file or generated code).
        reasons: why, one short phrase per rule that selected it
            (:class:`~fxcache_core.reasons.Reason` s: each has a ``code``).
        at: where the plan found it under the cache dir: its path from the
            cache dir down and the ``(st_dev, st_ino)`` of every dir on the way
            (:func:`fxcache_core.prune.deletion.locate`); execution reaches it
            through those very dirs. None when a dir on the way could not be
            opened without following a symlink (execution skips it).
        content: what the file is (:class:`~fxcache_core.cache.inventory.ContentKind`), for
            files of a :class:`~fxcache_core.prune.units.Unit` (``kind`` is then
            ``CODE`` and ``key`` the unit's name); None for entries, their temp
            files and gc's own generated-code removals.
        lock: the lock file held while it is deleted, as names below the cache
            dir (None: the code key's ``locks/<key>.lock`` for ``CODE``, else none).
    """

    file: FileInfo
    kind: KeyKind
    key: str
    entry: str | None
    reasons: tuple[str, ...]
    at: Located | None = None
    content: ContentKind | None = None
    lock: tuple[str, ...] | None = None

    def located(self, at: Located | None) -> Removal:
        """This removal with ``at`` recorded: ``dataclasses.replace(self, at=at)``
        without its per-call cost (a plan locates thousands)."""
        return Removal(self.file, self.kind, self.key, self.entry, self.reasons, at, self.content, self.lock)

    @property
    def size(self) -> int:
        return self.file.size

    @property
    def what(self) -> str:
        """``entry``, ``temp`` (a dot-prefixed temp file), ``code`` (generated code),
        or for a unit's file its content kind (``triton``, ``precompiled-header``...)."""
        if self.content is not None:
            return self.content.value
        if self.kind is KeyKind.CODE:
            return "code"
        return "entry" if self.entry is not None else "temp"

    def to_json(self) -> dict[str, object]:
        """``path``, ``what``, ``kind``, ``key``, ``entry``, ``size`` (bytes),
        ``reasons`` and, beside them, ``reason_codes``."""
        return {"path": self.file.where, "what": self.what, "kind": self.kind.value, "key": self.key,
                "entry": self.entry, "size": self.size, "reasons": list(self.reasons),
                "reason_codes": [code_of(r) for r in self.reasons]}

    def json_text(self, redis_key: str | None = None) -> str:
        """:meth:`to_json` with ``redis_key`` beside it, as ``json.dumps`` writes that dict
        (default separators, ASCII), put together from its values' texts: a plan lists
        thousands of removals. Values of any other type than a removal holds (a str, an
        int size, a str or None) are left to ``json.dumps`` itself."""
        f, entry, reasons = self.file, self.entry, self.reasons
        what, codes = self.what, [code_of(r) for r in reasons]
        if type(f.size) is not int or not isinstance(f.where, str) or not isinstance(self.key, str) \
                or not (entry is None or isinstance(entry, str)) or not (redis_key is None or isinstance(redis_key, str)) \
                or not all(isinstance(r, str) for r in reasons) or not all(c is None or isinstance(c, str) for c in codes):
            return json.dumps({**self.to_json(), "redis_key": redis_key}, default=str)
        return (
            '{"path": ' + _text(f.where) + ', "what": ' + _text(what) + ', "kind": ' + _text(self.kind.value)
            + ', "key": ' + _text(self.key) + ', "entry": ' + _opt_text(entry) + ', "size": ' + int.__repr__(f.size)
            + ', "reasons": [' + ", ".join(map(_text, reasons)) + '], "reason_codes": ['
            + ", ".join(map(_opt_text, codes)) + '], "redis_key": ' + _opt_text(redis_key) + "}")


def _opt_text(v: str | None) -> str:
    return "null" if v is None else _text(v)
