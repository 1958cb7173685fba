"""Hits that still compiled: the kernel libraries a cache hit built anyway, and why.

An FX graph entry holds the generated code, not the compiled C++ library. On a
hit torch writes the code back and loads each kernel library with
``CppCodeCache.load_async`` (torch/_inductor/codecache.py): the library's
name is a hash of the kernel's source *and of the compile command*
(``get_hashable_command_line``: the torch install's include path, the ISA
flags, the compiler), so when the command differs from the one the cache's
libraries were built with, or the library is gone, torch builds it again
(``<cache dir>/<hash[1:3]>/<hash>[.main].so``, next to its ``.cpp``), within
the hit. The trace times each compiler run (:mod:`fxcache_core.trace.steps`)
but does not say what it built: a step may also preprocess or build a
precompiled header, which a clean hit does too.

:class:`Libraries` looks at the run's cache dirs: a library whose mtime falls
within a compile step of the hit was built by it (the run wrote it: its mtime
is its own, whatever a copy did to the others'); torch's ISA check programs
(``VecISA.check_build`` in torch/_inductor/cpu_vec_isa.py: AVX, AVX512-BF16,
AVX512-VNNI, AMX) are not kernels.
The cause compares the library with one the cache held before the run for the
same kernel source: the ``/torch/include`` dirs and the ``ATen/cpu/vec/vecNNN``
headers its debug information names (``-g`` builds record both). No library
for the same source: the cache was shipped without it. Otherwise the cause is
unknown, and said so. Without a cache dir to look at, a compile step that ran
while torch waited on its compile workers (``async_compile.wait``) is a kernel
build; other steps are not counted.

Files are read as untrusted input: no symlink is followed, a library is read
only up to :data:`MAX_LIBRARY_BYTES`, a source up to :data:`MAX_SOURCE_BYTES`,
and at most :data:`MAX_FILES` files of a cache dir are listed. Nothing here
imports torch or runs anything it reads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.fsutil import read_capped
from fxcache_core.reasons import Reason
from fxcache_core.trace.explain_report import Rebuilt
from fxcache_core.trace.run_facts import TraceCompile, TraceLookup
from fxcache_core.trace.steps import CompileStep

MAX_LIBRARY_BYTES = 64 * 1024 * 1024
"""A library larger than this is not read for its include dirs (the cause stays unknown)."""
MAX_SOURCE_BYTES = 16 * 1024 * 1024
"""A kernel source larger than this is not compared."""
MAX_FILES = 200_000
"""Most files of one cache dir listed when looking for libraries."""
SLACK_S = 0.5
"""Seconds a library's mtime may lie past the end of the step that built it (clock steps)."""

# torch/_inductor/cpu_vec_isa.py: each ISA check program (VecISA._avx_code, VecAVX512's
# _avx512_bf16_code and _avx512_vnni_code, VecAMX._amx_code/_amx_fp16_code) defines
# ``extern "C" ... __<isa>_chk_kernel[_N](...)``; a kernel never does.
_ISA_CHECK = re.compile(rb'extern "C" [^\n;{]{0,200}?\b__\w{1,40}_chk_kernel(?:_[0-9]+)?\s*\(')
_INCLUDE_RE = re.compile(rb"(/[^\x00-\x20]{0,4000}?)/torch/include(?=[/\x00])")
_VEC_RE = re.compile(rb"ATen/cpu/vec/vec(128|256|512)\b")
_VEC_NAMES = {"512": "AVX512", "256": "AVX2", "128": "128-bit vectors"}


@dataclass(frozen=True)
class _Lib:
    path: Path
    mtime: float
    size: int


class Libraries:
    """The kernel libraries of cache dirs, listed once (lazily)."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = tuple(dict.fromkeys(roots))
        self._libs: list[_Lib] | None = None
        self._sources: dict[int, list[Path]] | None = None  # source size -> older libraries

    def libs(self) -> list[_Lib]:
        if self._libs is None:
            self._libs = []
            for root in self.roots:
                self._libs += _list(root)
        return self._libs

    def built_in(self, steps: Iterable[CompileStep]) -> list[_Lib]:
        """The kernel libraries (not ISA checks) whose mtime lies within a step."""
        windows = [(s.start, s.end + SLACK_S) for s in steps]
        out = []
        for lib in self.libs():
            if any(a <= lib.mtime <= b for a, b in windows):
                src = read_capped(_source_of(lib.path), MAX_SOURCE_BYTES, follow_symlinks=False)
                if src is None or _ISA_CHECK.search(src) is None:
                    out.append(lib)
        return out

    def cause(self, built: Sequence[_Lib], before: float) -> tuple[str | None, str | None]:
        """Why ``built`` were built again: compared with the libraries that existed
        before ``before`` (epoch seconds) for the same kernel sources."""
        found: dict[str, str] = {}
        for lib in built:
            src = read_capped(_source_of(lib.path), MAX_SOURCE_BYTES, follow_symlinks=False)
            if src is None:
                continue
            old = self._same_source(src, lib, before)
            if old is None:
                found.setdefault("library-missing", "the cache holds no library built from this kernel's "
                                 "source (its compiled libraries were not copied with it?)")
                continue
            new_b = read_capped(lib.path, MAX_LIBRARY_BYTES, follow_symlinks=False)
            old_b = read_capped(old.path, MAX_LIBRARY_BYTES, follow_symlinks=False)
            if new_b is None or old_b is None:
                continue
            code, text = _compare(new_b, old_b)
            found.setdefault(code, text)
        known = {k: v for k, v in found.items() if k != "other-build-command"} or found
        if not known:
            return None, None
        codes = sorted(known)
        return "; ".join(known[c] for c in codes), codes[0] if len(codes) == 1 else "+".join(codes)

    def _same_source(self, src: bytes, lib: _Lib, before: float) -> _Lib | None:
        """A library older than ``before`` whose source has these bytes (sources indexed
        by size once: one ``lstat`` per library, a read only for sources of the same size)."""
        if self._sources is None:
            self._sources = {}
            for old in self.libs():
                if old.mtime < before:
                    try:
                        self._sources.setdefault(os.lstat(_source_of(old.path)).st_size, []).append(old.path)
                    except OSError:
                        continue
        for path in self._sources.get(len(src), ()):
            if path != lib.path and read_capped(_source_of(path), MAX_SOURCE_BYTES, follow_symlinks=False) == src:
                return next(x for x in self.libs() if x.path == path)
        return None


def rebuild_of(lk: TraceLookup, c: TraceCompile | None, libs: Libraries | None, run_start: float,
               exclude: Sequence[tuple[int, int]] = ()) -> tuple[Rebuilt | None, tuple[Reason, ...]]:
    """The kernels hit ``lk`` built (:class:`~fxcache_core.trace.explain_report.Rebuilt`: kernel
    libraries built; seconds of the C++ compile steps and waits on compile workers within
    the hit, those that built nothing included; the cause and its code
    ``other-torch-headers``, ``other-isa``, ``library-missing``, ``other-build-command``,
    None where unknown). None: none, or none the evidence shows. Also what
    limited the answer. ``run_start``: when the run's first compile began (epoch seconds):
    a library older than that was the cache's. ``exclude``: line windows ``(after, upto]``
    of the lookup's window that belong to other lookups (an AOTAutograd hit's FX loads)."""
    if lk.state != "hit" or c is None:
        return None, ()
    steps = [s for s in c.cxx_steps if lk.since_line < s.line <= lk.line
             and not any(a < s.line <= b for a, b in exclude)]
    if not steps:
        return None, ()
    seconds = sum(s.seconds for s in steps if s.name == "async_compile.wait" or not s.in_wait)
    if libs is not None and libs.roots:
        built = libs.built_in(steps)
        if not built:
            return None, ()
        cause, code = libs.cause(built, run_start)
        return Rebuilt(len(built), seconds, cause, code), ()
    kernels = sum(1 for s in steps if s.name == "compile_file" and s.in_wait)
    if not kernels:
        return None, ()
    return Rebuilt(kernels, seconds, None, None), (
        Reason("no cache dir to compare the rebuilt libraries with: the cause is unknown", "rebuilt-cause-unknown"),)


def _compare(new: bytes, old: bytes) -> tuple[str, str]:
    """(code, words) of what differs between two builds of the same kernel source."""
    new_inc = {m.decode(errors="replace") for m in _INCLUDE_RE.findall(new)}
    old_inc = {m.decode(errors="replace") for m in _INCLUDE_RE.findall(old)}
    if new_inc and old_inc and new_inc.isdisjoint(old_inc):
        return ("other-torch-headers", "the cache's libraries were built against another torch install's "
                f"headers ({_one(old_inc)}/torch/include; this run: {_one(new_inc)}/torch/include)")
    new_vec = {m.decode() for m in _VEC_RE.findall(new)}
    old_vec = {m.decode() for m in _VEC_RE.findall(old)}
    if new_vec and old_vec and new_vec != old_vec:
        return ("other-isa", "the cache's libraries were built with other ISA flags "
                f"({_isa(old_vec)}; this run: {_isa(new_vec)}: ATEN_CPU_CAPABILITY or another CPU)")
    return ("other-build-command", "the cache has a library for the same kernel source, built with "
            "another compile command (compiler, flags or environment); the libraries do not say which")


def _one(paths: set[str]) -> str:
    return sorted(paths)[0] + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")


def _isa(widths: set[str]) -> str:
    return "/".join(_VEC_NAMES.get(w, w) for w in sorted(widths, reverse=True))


def _source_of(lib: Path) -> Path:
    return lib.with_suffix(".cpp")  # x.main.so -> x.main.cpp, x.so -> x.cpp


def _list(root: Path) -> list[_Lib]:
    """``root/<2 chars>/*.so``, regular files only, at most :data:`MAX_FILES` looked at."""
    out: list[_Lib] = []
    seen = 0
    try:
        tops = sorted(os.scandir(root), key=lambda d: d.name)
    except OSError:
        return out
    for d in tops:
        if len(d.name) != 2 or not d.is_dir(follow_symlinks=False):
            continue
        try:
            with os.scandir(d.path) as it:
                for f in it:
                    seen += 1
                    if seen > MAX_FILES:
                        return out
                    if f.name.endswith(".so") and f.is_file(follow_symlinks=False):
                        st = f.stat(follow_symlinks=False)
                        out.append(_Lib(Path(f.path), st.st_mtime, st.st_size))
        except OSError:
            continue
    return out


__all__ = ["MAX_FILES", "MAX_LIBRARY_BYTES", "MAX_SOURCE_BYTES", "Libraries",  "rebuild_of"]
