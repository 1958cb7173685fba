"""What a cache key is: its kind, its encoding, where its entries live.

Torch names keys and entries with ``sha256_hash`` in torch/_inductor/codecache.py:
the lower-cased base32 of a sha256 digest, cut to 51 characters. A key adds a
one-letter prefix for its kind (``f`` for an FX graph, ``a`` for AOTAutograd),
so keys are 52 characters and entry names 51. Generated code (kernels and
wrappers) is filed by ``code_hash`` under the same encoding with a ``c``
prefix: ``<root>/<key[1:3]>/<key>.py`` / ``.cpp`` / ``.so`` / ``.main.cpp``...
(``write`` in codecache.py).
"""

from __future__ import annotations

import base64
import enum
import hashlib
import re
from pathlib import Path

HASH_CHARS = 51
_HASH_RE = re.compile(r"[a-z2-7]{51}")
_KEY_RE = re.compile(r"[fa][a-z2-7]{51}")
_CODE_KEY_RE = re.compile(r"c[a-z2-7]{51}")
_ARTIFACT_RE = re.compile(r"(c[a-z2-7]{51})((?:\.[A-Za-z0-9_]+)+)")


class KeyKind(str, enum.Enum):
    """The kinds of keys Inductor files things under in its cache dir.

    ``FX_GRAPH`` and ``AOT_AUTOGRAD`` are the two guarded caches (a key dir of
    entries); their value is the cache's folder name. ``CODE`` is the code
    cache: generated kernels and wrapper modules, one file per extension.
    """

    FX_GRAPH = "fxgraph"
    """Compiled FX graphs (``FxGraphCache``): ``fxgraph/<key[1:3]>/<key>/<entry>``."""
    AOT_AUTOGRAD = "aotautograd"
    """AOTAutograd results (``AOTAutogradCache``): ``aotautograd/<key>/<entry>``."""
    CODE = "code"
    """Generated code (``PyCodeCache``, ``CppCodeCache``...): ``<key[1:3]>/<key>.<ext>``
    (``write`` in codecache.py); derived, torch writes it again when missing."""

    @property
    def prefix(self) -> str:
        """The letter torch puts before the hash of a key of this kind."""
        return {KeyKind.FX_GRAPH: "f", KeyKind.AOT_AUTOGRAD: "a", KeyKind.CODE: "c"}[self]

    @property
    def short(self) -> str:
        """A short label for tables: ``fx``, ``aot`` or ``code``."""
        return {KeyKind.FX_GRAPH: "fx", KeyKind.AOT_AUTOGRAD: "aot", KeyKind.CODE: "code"}[self]

    def key_dir(self, root: Path, key: str) -> Path:
        """Where the entries of ``key`` live under the cache dir ``root``.

        Mirrors ``FxGraphCache._get_tmp_dir_for_key`` (codecache.py) and
        ``AOTAutogradCache._get_tmp_dir_for_key`` (autograd_cache.py); for
        ``CODE``, the dir its files share with other code keys (``get_path``).
        """
        if self is KeyKind.FX_GRAPH:
            return root / self.value / key[1:3] / key
        if self is KeyKind.CODE:
            return root / key[1:3]
        return root / self.value / key

    @classmethod
    def of_key(cls, key: str) -> KeyKind | None:
        """The kind a key's prefix letter names, or None for another prefix."""
        return {"f": cls.FX_GRAPH, "a": cls.AOT_AUTOGRAD, "c": cls.CODE}.get(key[:1])


def sha256_hash(data: bytes) -> str:
    """Torch's content hash: ``base32(sha256(data))[:51].lower()``.

    Mirrors ``sha256_hash`` in torch/_inductor/codecache.py; an entry's file
    name is this hash of its content.
    """
    return base64.b32encode(hashlib.sha256(data).digest())[:HASH_CHARS].decode().lower()


def is_entry_name(name: str) -> bool:
    """Whether ``name`` has the shape of an entry file name (51 base32 chars)."""
    return _HASH_RE.fullmatch(name) is not None


def is_key(name: str) -> bool:
    """Whether ``name`` has the shape of a cache key (``f``/``a`` + 51 base32 chars)."""
    return _KEY_RE.fullmatch(name) is not None


def artifact_key(name: str) -> str | None:
    """The code-cache key of a generated-code file name (``c<51>.main.cpp`` ->
    ``c<51>``), or None for any other name (temp files, locks, foreign files)."""
    m = _ARTIFACT_RE.fullmatch(name)
    return m.group(1) if m else None


def is_code_key(name: str) -> bool:
    """Whether ``name`` has the shape of a code-cache key (``c`` + 51 base32 chars)."""
    return _CODE_KEY_RE.fullmatch(name) is not None
