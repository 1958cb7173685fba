"""A pack's manifest: what each member is, and what the keys were made with.

A pack (``fxcache pack``) is a tar archive whose first member,
:data:`MANIFEST_NAME`, lists every other member by path under the cache dir,
size in bytes, sha256 and kind (:class:`Member`), says what torch build made
the keys (:class:`BuildInfo`: the build components of torch's FX key,
``torch_version`` and ``system_info[...]`` from ``FxGraphHashDetails`` in
torch/_inductor/codecache.py, plus the readable version where known), which
settings were not at torch's defaults, and which function and input shapes each
entry serves (:class:`PackedEntry`).

A manifest read back is untrusted input: :func:`parse_manifest` checks every
field's type and every path's form (:func:`check_member_path`) and raises
:class:`PackError` on the first thing that is not what :meth:`Manifest.to_json`
writes. Nothing here touches the file system.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fxcache_core.errors import FxcacheError

MANIFEST_NAME = "fxcache-manifest.json"
"""The archive member that holds the manifest: always the first one."""
FORMAT = "fxcache-pack"
FORMAT_VERSION = 2
MAX_MANIFEST_BYTES = 32 << 20
"""A manifest longer than this is refused before it is parsed (32 MiB: about 45,000
entries with their members, at the 700 bytes a real entry takes)."""
MAX_MEMBERS = 200_000
MAX_JSON_VALUES = 1_000_000
"""JSON values (counted before parsing) a manifest may hold: a real entry with its
members takes about 25 (so about 40,000 entries); the bound keeps what a hostile
manifest parses into under ~200 MB."""
MAX_TEXT = 64 << 10
"""Characters of a manifest string shown to the user (a function, a setting, a build
value, an input); longer is refused. A guards expression may be longer (MAX_GUARDS)."""
MAX_GUARDS = 4 << 20

MemberKind = Literal["fx", "aot", "wrapper", "library", "autotune", "source"]
MEMBER_KINDS: tuple[str, ...] = ("fx", "aot", "wrapper", "library", "autotune", "source")
"""``fx``/``aot``: cache entries; ``wrapper``: an FX entry's wrapper module
(``<key[1:3]>/<key>.py``); ``library``: a compiled kernel library (``.so``) and
its ``.load_ok`` marker; ``autotune``: a kernel's ``.best_config``; ``source``: the
generated kernel source that ties a library or autotune result to the entry whose
wrapper names the kernel (:mod:`fxcache_core.pack.closure`)."""

ARCHIVE_MODE = 0o644
"""The mode every member has in the archive (and unpack gives every file it writes),
whatever its mode in the cache dir: torch writes its files so under the usual umask."""

_PART_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")
_SHA_RE = re.compile(r"[0-9a-f]{64}")
MAX_PATH_PARTS = 8


class PackError(FxcacheError):
    """A pack (or what would go into one) is not what fxcache writes: a member that
    does not match the manifest, a path that escapes, a link, a manifest that lies."""


def check_member_path(path: object) -> str:
    """``path`` if it is a relative POSIX path under the cache dir fxcache would write:
    at most :data:`MAX_PATH_PARTS` names of letters, digits, ``_``, ``.`` and ``-``,
    none starting with ``.`` or ``-`` (so no ``..``, no dot-file, no absolute path,
    no backslash, no empty name).

    Raises:
        PackError: anything else.
    """
    if not isinstance(path, str) or not path:
        raise PackError(f"member path {path!r} is not a path")
    parts = path.split("/")
    if len(parts) > MAX_PATH_PARTS or not all(_PART_RE.fullmatch(p) for p in parts):
        raise PackError(f"member path {path[:200]!r} is not a plain relative path under the cache dir "
                        "(absolute, '..', a dot-file or an unexpected character)")
    return path


@dataclass(frozen=True, slots=True)
class Member:
    """One file of a pack.

    Attributes:
        path: where it goes, relative to the cache dir, ``/``-separated.
        size: bytes.
        sha256: hex digest of its bytes.
        kind: what it is (:data:`MEMBER_KINDS`).
    """

    path: str
    size: int
    sha256: str
    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "kind": self.kind}


@dataclass(frozen=True)
class BuildInfo:
    """What torch build made the keys of a pack.

    Attributes:
        torch_version: the readable version (``2.13.0+cpu``) where known (a trace
            records it), else None.
        components: build component name (``torch_version``,
            ``system_info[hash]``...) -> torch's hash of it, as the FX keys'
            debug lines give them (the same in every key of one build).
        values: the same names -> readable values, where the debug lines give them.
        cpp_threads: the ``cpp_runtime_thread_count`` the CPU kernels were
            specialised for, where the keys hash one (None: no key does).
    """

    torch_version: str | None
    components: Mapping[str, str]
    values: Mapping[str, str] = field(default_factory=dict)
    cpp_threads: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"torch_version": self.torch_version, "components": dict(sorted(self.components.items())),
                "values": dict(sorted(self.values.items())), "cpp_threads": self.cpp_threads}


@dataclass(frozen=True, slots=True)
class PackedEntry:
    """One cache entry of a pack, with what it serves.

    Attributes:
        kind: ``fxgraph`` or ``aotautograd``.
        key: its cache key.
        entry: its file name.
        function: the function it was compiled from (``step (train.py:14)``), None if unknown.
        inputs: FX entries: its example inputs as the key hashed them
            (``float32[s0, 8] stride (8, 1) cpu``); AOTAutograd entries: ().
        guards: its guards expression (None or "": none).
        cpp_threads: FX entries whose key hashes ``cpp_runtime_thread_count``: that count.
    """

    kind: str
    key: str
    entry: str
    function: str | None
    inputs: tuple[str, ...]
    guards: str | None
    cpp_threads: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "entry": self.entry, "function": self.function,
                "inputs": list(self.inputs), "guards": self.guards, "cpp_threads": self.cpp_threads}


@dataclass(frozen=True)
class Manifest:
    """A pack's manifest (see the module docstring).

    Attributes:
        members: every file of the pack but the manifest, sorted by path.
        build: the torch build that made the keys.
        settings: (component name, readable value) of each setting not at torch's
            defaults in the packed FX keys, sorted.
        entries: the cache entries packed, sorted by kind, key, entry.
    """

    members: tuple[Member, ...]
    build: BuildInfo
    settings: tuple[tuple[str, str], ...] = ()
    entries: tuple[PackedEntry, ...] = ()

    @property
    def total_bytes(self) -> int:
        """Bytes of all members (the cache dir grows by at most this)."""
        return sum(m.size for m in self.members)

    def functions(self) -> dict[str, list[PackedEntry]]:
        """Function (``"?"`` when unknown) -> its entries, in order."""
        out: dict[str, list[PackedEntry]] = {}
        for e in self.entries:
            out.setdefault(e.function or "?", []).append(e)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "build": self.build.to_json(),
                "settings": [list(s) for s in self.settings],
                "entries": [e.to_json() for e in self.entries],
                "members": [m.to_json() for m in self.members]}

    def to_bytes(self) -> bytes:
        """The manifest as stored: sorted-key JSON, one member a line, UTF-8."""
        return (json.dumps(self.to_json(), indent=1, sort_keys=True, ensure_ascii=True) + "\n").encode()


def parse_manifest(data: bytes) -> Manifest:
    """Read a manifest back, checking everything (it comes from an untrusted archive).

    Raises:
        PackError: not JSON, too large, another format or version, a field of the
            wrong type, a member path that is not plain (:func:`check_member_path`),
            a path listed twice or one below another member's path.
    """
    if len(data) > MAX_MANIFEST_BYTES:
        raise PackError(f"manifest is {len(data)} bytes, over the {MAX_MANIFEST_BYTES} limit")
    from fxcache_core.trace.reader import bounded_json

    doc = bounded_json(data, max_values=MAX_JSON_VALUES)
    if not isinstance(doc, dict):
        raise PackError("manifest is not a JSON object (or nests too deep, or holds more than "
                        f"{MAX_JSON_VALUES} values)")
    version = doc.get("version")
    if doc.get("format") != FORMAT or type(version) is not int or version != FORMAT_VERSION:
        raise PackError(f"not an fxcache pack manifest of version {FORMAT_VERSION} "
                        f"(format {str(doc.get('format'))[:40]!r}, version {str(doc.get('version'))[:10]!r})")
    try:
        return _manifest(doc)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        raise PackError(f"manifest field of the wrong shape: {type(e).__name__}: {str(e)[:200]}") from None


def _str(v: Any, none: bool = False, limit: int = MAX_TEXT) -> Any:
    if v is None and none:
        return None
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {type(v).__name__}")
    if len(v) > limit:
        raise ValueError(f"a string of {len(v)} characters (at most {limit})")
    return v


def _list(v: Any, none: bool = True) -> list[Any]:
    """A JSON array (None or absent: empty, where ``none``); a string or an object is refused."""
    if v is None and none:
        return []
    if not isinstance(v, list):
        raise TypeError(f"expected an array, got {type(v).__name__}")
    return v


def _obj(v: Any, none: bool = False) -> dict[str, Any]:
    if v is None and none:
        return {}
    if not isinstance(v, dict):
        raise TypeError(f"expected an object, got {type(v).__name__}")
    return v


def _int(v: Any) -> int | None:
    if v is not None and type(v) is not int:
        raise TypeError(f"expected an integer, got {type(v).__name__}")
    return v


def _manifest(doc: dict[str, Any]) -> Manifest:
    raw = doc["members"]
    if not isinstance(raw, list) or len(raw) > MAX_MEMBERS:
        raise PackError("manifest members are not a list of at most "
                        f"{MAX_MEMBERS} members")
    members: list[Member] = []
    for m in raw:
        m = _obj(m)
        size, sha, kind = m["size"], _str(m["sha256"]), _str(m["kind"])
        if type(size) is not int or size < 0:
            raise PackError(f"member size {str(size)[:30]!r} is not a byte count")
        if not _SHA_RE.fullmatch(sha):
            raise PackError(f"member sha256 {sha[:80]!r} is not a hex sha256")
        if kind not in MEMBER_KINDS:
            raise PackError(f"member kind {kind[:40]!r} is not one fxcache packs")
        members.append(Member(check_member_path(m["path"]), size, sha, kind))
    paths = [m.path for m in members]
    if paths != sorted(paths) or len(set(paths)) != len(paths):
        raise PackError("manifest members are not sorted by path, or a path is listed twice")
    names = set(paths)
    for p in paths:
        parts = p.split("/")
        if any("/".join(parts[:i]) in names for i in range(1, len(parts))):
            raise PackError(f"member {p!r} lies below another member's path")
        if p == MANIFEST_NAME:
            raise PackError("the manifest lists itself")
    b = _obj(doc["build"])
    cpp = b.get("cpp_threads")
    if cpp is not None and type(cpp) is not int:
        raise PackError("build cpp_threads is not an integer")
    build = BuildInfo(_str(b.get("torch_version"), none=True, limit=200),
                      {_str(k): _str(v) for k, v in _obj(b["components"]).items()},
                      {_str(k): _str(v) for k, v in _obj(b.get("values"), none=True).items()}, cpp)
    settings = tuple(_pair(s) for s in _list(doc.get("settings")))
    entries = tuple(_entry(_obj(e)) for e in _list(doc.get("entries")))
    if not entries:
        raise PackError("the manifest lists no cache entry (fxcache never packs none)")
    return Manifest(tuple(members), build, settings, entries)


def _pair(s: Any) -> tuple[str, str]:
    s = _list(s, none=False)
    if len(s) != 2:
        raise ValueError(f"a setting of {len(s)} items, not (name, value)")
    return _str(s[0]), _str(s[1])


def _entry(e: dict[str, Any]) -> PackedEntry:
    kind = _str(e["kind"])
    if kind not in ("fxgraph", "aotautograd"):
        raise ValueError(f"entry kind {kind[:40]!r}")
    return PackedEntry(kind, _str(e["key"]), _str(e["entry"]), _str(e.get("function"), none=True),
                       tuple(_str(i) for i in _list(e.get("inputs"))),
                       _str(e.get("guards"), none=True, limit=MAX_GUARDS), _int(e.get("cpp_threads")))


__all__ = ["ARCHIVE_MODE", "FORMAT", "MANIFEST_NAME", "MEMBER_KINDS", "BuildInfo", "Manifest", "Member",
           "PackError", "PackedEntry", "check_member_path", "parse_manifest"]
