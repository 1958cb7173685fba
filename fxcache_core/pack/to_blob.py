"""``pack --format torch``: a pack plan written as a mega-cache blob torch loads.

The blob holds the plan's entries as torch's ``save_cache_artifacts`` records them
(the format: :mod:`fxcache_core.cache.blob`): one ``inductor`` record of every FX
entry (its key and its file's bytes), then one ``aot_autograd`` record of every
AOTAutograd entry, so ``torch.compiler.load_cache_artifacts(blob)`` writes each
where it was (``populate_cache`` in torch/_inductor/codecache.py and
torch/_functorch/_aot_autograd/autograd_cache.py: the file name is the content's
hash, as here). What else the plan holds (wrapper modules, compiled libraries,
autotune results) has no place in a blob: torch writes the wrappers again from the
entries and builds every kernel again on the first load, so the blob is smaller and
its first run slower than a pack's.

Every entry is read without following links (``select.open_member``) and checked
against the sha256 the plan recorded; the blob replaces ``out`` only once complete.
"""

from __future__ import annotations

import base64
import hashlib
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.blob import ENCODING_VERSION
from fxcache_core.pack.archive import replace_file
from fxcache_core.pack.manifest import PackError
from fxcache_core.pack.select import PackPlan, open_member

_TYPES = (("fx", "inductor"), ("aot", "aot_autograd"))
"""Member kind -> the artifact type its record has, in the order they are written."""


@dataclass(frozen=True, slots=True)
class BlobResult:
    """A written blob.

    Attributes:
        path: where.
        entries: per artifact type, how many entries it holds.
        bytes_out: the blob's size.
        left_out: plan members a blob has no place for, by kind (``wrapper``, ``library``...).
    """

    path: Path
    entries: dict[str, int]
    bytes_out: int
    left_out: dict[str, int]

    def to_json(self) -> dict[str, object]:
        return {"path": str(self.path), "format": "torch", "entries": self.entries,
                "bytes_out": self.bytes_out, "left_out": self.left_out}


def _u64(n: int) -> bytes:
    return n.to_bytes(8, "big")


def _text(s: str) -> bytes:
    b = base64.b64encode(s.encode("utf-8"))
    return _u64(len(b)) + b


def write_blob(plan: PackPlan, out: Path) -> BlobResult:
    """Write ``plan``'s entries as a blob at ``out`` (the module docstring).

    Raises:
        PackError: an entry changed since it was planned or is no longer a regular
            file; ``out`` cannot be written (:func:`~fxcache_core.pack.archive.replace_file`).
    """
    out = Path(out)
    body = bytearray(_u64(ENCODING_VERSION))
    counts: dict[str, int] = {}
    left: dict[str, int] = {}
    for kind, artifact_type in _TYPES:
        members = [pm for pm in plan.files if pm.member.kind == kind]
        if not members:
            continue
        body += _text(artifact_type) + _u64(len(members))
        for pm in members:
            parts = pm.member.path.split("/")
            key = parts[-2]
            body += _text(key)
            data = _read(plan.root, pm.member.path, pm.where, pm.member.size, pm.member.sha256)
            body += _u64(len(data)) + data
        counts[artifact_type] = len(members)
    for pm in plan.files:
        if pm.member.kind not in dict(_TYPES):
            left[pm.member.kind] = left.get(pm.member.kind, 0) + 1
    blob = zlib.crc32(body).to_bytes(4, "big") + bytes(body)
    replace_file(out, "blob", lambda f: f.write(blob))
    return BlobResult(out, counts, len(blob), left)


def _read(root: Path, rel: str, where: str, size: int, sha: str) -> bytes:
    fd = open_member(root, rel)
    with os.fdopen(fd, "rb") as f:
        data = f.read(size + 1)
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha:
        raise PackError(f"{where} changed since it was planned")
    return data


__all__ = ["BlobResult", "write_blob"]
