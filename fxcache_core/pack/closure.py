"""What an FX entry needs beside itself to be loaded without compiling anything.

On a hit, torch (``FxGraphCache.cache_hit_post_compile`` in
torch/_inductor/codecache.py, ``CompiledFxGraph.after_deserialization`` in
torch/_inductor/output_code.py):

1. writes the wrapper module ``<key[1:3]>/<key>.py`` from the entry's pickled
   ``source_code`` when it is missing (``write_to_disk``), then imports it
   (``PyCodeCache.load_by_key_path``): the module is derived, but shipping it
   spares the write. Torch imports whatever file is there, so only a file that
   holds exactly the entry's source goes with it;
2. running the module builds each kernel it names: ``async_compile.cpp_pybinding(argtypes,
   source)`` writes ``source`` plus a binding suffix as ``<k>.main.cpp`` (``k`` a hash
   of that text and the compiler's command line) and compiles ``<k>.main.so``
   *unless it exists* (``_worker_compile_cpp``): the library is what a hit needs,
   else it pays a C++ compile; ``async_compile.triton(name, source)`` writes
   ``<k>.py`` and reads the kernel's ``<k>.best_config`` (autotune,
   torch/_inductor/runtime/autotune_cache.py) beside it; the compiled Triton
   binaries travel inside the entry (``_triton_bundle``, emitted by
   ``TritonBundler.read_and_emit``), not as files.

So the closure of an FX entry is its wrapper module, and for every kernel
source its wrapper names, the cache's generated files of the same code key
``k`` that torch would not write again: compiled libraries (``.so``, ``.o``,
and torch 2.14+'s ``.so.load_ok`` marker) and autotune results. A kernel
source is matched to its code key by content: the generated source file
``<k>.main.cpp``/``<k>.cpp``/``<k>.py`` whose text starts with the source
string. That source file goes with them (kind ``source``): torch would write it
again, but it is what ties the library to the entry, and ``fxcache unpack``
applies this same rule to a pack's own members to refuse any that no packed
entry needs (:mod:`fxcache_core.pack.contents`). The code key ``k`` itself is a
hash of the source, a binding and the compiler's command line, which fxcache
cannot compute: the tie is by content, not a proof that ``k`` is the key torch
would compute. The wrapper is read with :func:`ast.parse` (never run), only when it is
at most :data:`MAX_WRAPPER_BYTES` and :data:`MAX_WRAPPER_TOKENS` tokens and lines
(counted first: a parse costs about a kilobyte per node); the entry with the
restricted unpickler (:func:`~fxcache_core.decode.unpickler.load_stubs`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from fxcache_core.cache.scan import Artifact
from fxcache_core.decode.memlimit import decoding_budget
from fxcache_core.decode.unpickler import Stub, load_stubs
from fxcache_core.fsutil import read_capped
from fxcache_core.reasons import Reason

SOURCE_EXTS = (".main.cpp", ".optimized.cpp", ".cpp", ".py", ".cu", ".h")
"""Generated source files a kernel's code key is recognised by."""
NEEDED = {".so": "library", ".o": "library", ".so.load_ok": "library", ".main.so": "library",
          ".main.so.load_ok": "library", ".best_config": "autotune"}
"""Extensions of the generated files a hit needs (torch does not write them again
without compiling or autotuning), and the member kind each is."""
PREFIX_CHARS = 64
"""Sources are indexed by their first this many characters; a kernel source
shorter than that is never matched (no real kernel is)."""
MAX_SOURCE_BYTES = 16 << 20
"""A generated source file larger than this is not read (not matched)."""
MAX_WRAPPER_BYTES = 4 << 20
"""A wrapper source longer than this (in UTF-8 bytes) is not parsed: its entry is not
packable (a real wrapper holds its kernels' sources as a few large strings)."""
MAX_WRAPPER_TOKENS = 150_000
"""A wrapper source of more tokens and lines than this is not parsed (``ast`` would
hold about a kilobyte per node): its entry is not packable."""
_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class Needed:
    """A generated file an FX entry needs.

    Attributes:
        file: the artifact (path, size).
        kind: ``wrapper``, ``library``, ``autotune`` or ``source`` (the generated
            source a library or autotune result was matched by).
    """

    file: Artifact
    kind: str


def wrapper_source(data: bytes) -> str | None:
    """The ``source_code`` of a pickled ``CompiledFxGraph``, read with the restricted
    unpickler under fxcache's memory budget; None when the bytes do not hold one."""
    try:
        with decoding_budget(len(data)):
            root, _ = load_stubs(data)
    except Exception:  # noqa: BLE001 - a corrupt entry has no closure (it is reported elsewhere)
        return None
    if not isinstance(root, Stub):
        return None
    src = root.field("source_code")
    return src if isinstance(src, str) else None


def wrapper_refused(source: str) -> Reason | None:
    """Why ``source`` (a wrapper module's) is not parsed, or None when it is within
    :data:`MAX_WRAPPER_BYTES` and :data:`MAX_WRAPPER_TOKENS` (tokens and lines counted
    first, at most that many matches). Codes ``wrapper-source-too-large`` and
    ``wrapper-source-too-many-tokens``."""
    if len(source) > MAX_WRAPPER_BYTES or len(source.encode("utf-8", "surrogatepass")) > MAX_WRAPPER_BYTES:
        return Reason(f"its wrapper source is over the {MAX_WRAPPER_BYTES:,} byte limit",
                      "wrapper-source-too-large")
    lines = source.count("\n")
    if lines > MAX_WRAPPER_TOKENS or lines + _TOKEN_RE.subn("", source, count=MAX_WRAPPER_TOKENS - lines + 1)[1] \
            > MAX_WRAPPER_TOKENS:
        return Reason(f"its wrapper source has more than {MAX_WRAPPER_TOKENS:,} tokens and lines",
                      "wrapper-source-too-many-tokens")
    return None


@lru_cache(maxsize=2)
def kernel_sources(source: str) -> tuple[str, ...]:
    """The string arguments of every ``async_compile.<method>(...)`` call in a
    wrapper module's source (the kernels it builds), in order; () when the source
    does not parse or is refused (:func:`wrapper_refused`: callers ask it first to
    say so)."""
    if wrapper_refused(source) is not None:
        return ()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    out: list[str] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "async_compile"):
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and len(a.value) >= PREFIX_CHARS:
                    out.append(a.value)
    return tuple(out)


class CodeIndex:
    """The cache's generated files by code key, and its generated sources by their
    first :data:`PREFIX_CHARS` characters (read lazily, once)."""

    def __init__(self, code: Sequence[Artifact]) -> None:
        self.by_key: dict[str, list[Artifact]] = {}
        for a in code:
            self.by_key.setdefault(a.key, []).append(a)
        self._sources: dict[str, list[tuple[str, str, Artifact]]] | None = None
        self._code = code

    def _index(self) -> dict[str, list[tuple[str, str, Artifact]]]:
        if self._sources is None:
            self._sources = {}
            for a in self._code:
                if a.file.name.endswith(SOURCE_EXTS) and 0 < a.file.size <= MAX_SOURCE_BYTES:
                    text = _read_text(a.file.where)
                    if text is not None and len(text) >= PREFIX_CHARS:
                        self._sources.setdefault(text[:PREFIX_CHARS], []).append((a.key, text, a))
        return self._sources

    def matches_for(self, sources: Iterable[str]) -> list[tuple[str, Artifact]]:
        """(code key, its generated source file) for each generated source that starts
        with one of ``sources`` (a C++ source: torch appends a binding), or is one of
        them exactly (a Python kernel module, ``<k>.py``: torch writes the string as it
        is and imports the file that is there); a key once, with the first such file."""
        idx = self._index()
        out: dict[str, Artifact] = {}
        for s in sources:
            for key, text, a in idx.get(s[:PREFIX_CHARS], ()):
                if key not in out and (text == s if a.file.name.endswith(".py") else text.startswith(s)):
                    out[key] = a
        return list(out.items())

    def keys_for(self, sources: Iterable[str]) -> list[str]:
        """Code keys whose generated source starts with one of ``sources``."""
        return [k for k, _ in self.matches_for(sources)]

    def unbuilt(self, source: str | None) -> list[str]:
        """Code keys of C++ kernels the wrapper names whose compiled library is not in the
        cache as a regular file (a hit will compile them again)."""
        out = []
        for key in self.keys_for(kernel_sources(source)) if source else ():
            names = [a.file.name[len(key):] for a in self.by_key.get(key, ())]
            if any(n.endswith(".cpp") for n in names) and not any(NEEDED.get(n) == "library" for n in names):
                out.append(key)
        return out

    def needed(self, wrapper_key: str | None, source: str | None) -> list[Needed]:
        """What an FX entry with this wrapper key and wrapper source needs (see the
        module docstring), sorted by path. Its wrapper module only when the file holds
        exactly ``source``: torch imports the file that is there (``after_deserialization``
        in torch/_inductor/output_code.py writes the entry's source only when none is),
        so another one would run instead of the entry's code; without it torch writes
        the entry's own again."""
        out: dict[str, Needed] = {}
        if wrapper_key and source is not None:
            for a in self.by_key.get(wrapper_key, ()):
                if a.file.name == f"{wrapper_key}.py" and is_wrapper_of(a, source):
                    out[a.file.where] = Needed(a, "wrapper")
        if source:
            for key, matched in self.matches_for(kernel_sources(source)):
                found = [Needed(a, kind) for a in self.by_key.get(key, ())
                         if (kind := NEEDED.get(a.file.name[len(key):])) is not None]
                for n in found + ([Needed(matched, "source")] if found else []):
                    out[n.file.file.where] = n
        return [out[w] for w in sorted(out)]


def is_wrapper_of(a: Artifact, source: str) -> bool:
    """Whether the file of ``a`` holds exactly ``source``, as torch writes it (UTF-8)."""
    want = source.encode("utf-8", "surrogatepass")
    if a.file.size != len(want):
        return False
    return read_capped(a.file.where, len(want), follow_symlinks=False) == want


def _read_text(path: str) -> str | None:
    data = read_capped(path, MAX_SOURCE_BYTES, follow_symlinks=False)
    return data.decode("utf-8", errors="replace") if data is not None else None


__all__ = ["MAX_WRAPPER_BYTES", "MAX_WRAPPER_TOKENS", "NEEDED", "CodeIndex", "Needed", "is_wrapper_of", "kernel_sources",
           "wrapper_refused", "wrapper_source"]
