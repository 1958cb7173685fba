"""Will a pack hit here? Its manifest against this machine's torch, per function.

Every FX key hashes the build components ``torch_version`` (a digest of torch's
sources) and ``system_info`` (compiler, CUDA, device) (``FxGraphHashDetails`` in
torch/_inductor/codecache.py), and an AOTAutograd key hashes the same details
(``AOTAutogradCacheDetails`` in torch/_functorch/_aot_autograd/autograd_cache.py):
when one differs from what the installed torch computes
(:func:`fxcache_core.keying.current.current_build`, as ``key --current``), no
lookup here computes any packed key, and nothing will hit. Keys of CPU C++ code
also hash ``cpp_runtime_thread_count`` (torch's thread count, when
``cpp.threads`` is at its default): a function with an entry of another count
here misses (judged per entry, from the count each key hashed).
Settings not at torch's defaults are not a property of the machine but of the
run: they are listed, for the run to set the same. Decides only; the caller
passes in what the installed torch computes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.pack.manifest import Manifest
from fxcache_core.reasons import Reason


@dataclass(frozen=True)
class FunctionVerdict:
    """Whether a function's packed entries can be hit here.

    Attributes:
        function: the function (``"?"`` when the pack does not know it).
        entries: how many entries of the pack serve it.
        will_hit: True when nothing known stands in the way.
        reasons: why not (codes ``other-torch-build``, ``other-cpp-thread-count``).
    """

    function: str
    entries: int
    will_hit: bool
    reasons: tuple[Reason, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"function": self.function, "entries": self.entries, "will_hit": self.will_hit,
                "reasons": [r.to_json() for r in self.reasons]}


@dataclass(frozen=True)
class HitReport:
    """The answer for a whole pack.

    Attributes:
        here_version: the installed torch's version.
        differ: build components whose hash differs (none: same build).
        functions: one verdict per function, in the manifest's order.
        settings: the settings not at torch's defaults the keys were made with.
    """

    here_version: str
    differ: tuple[str, ...]
    functions: tuple[FunctionVerdict, ...]
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def all_hit(self) -> bool:
        return all(f.will_hit for f in self.functions)

    def to_json(self) -> dict[str, object]:
        return {"torch_here": self.here_version, "build_components_differ": list(self.differ),
                "all_hit": self.all_hit, "functions": [f.to_json() for f in self.functions],
                "settings_not_at_default": [{"name": n, "value": v} for n, v in self.settings]}


def will_hit(manifest: Manifest, here_version: str, here_hashes: Mapping[str, str],
             here_threads: int | None = None) -> HitReport:
    """Compare ``manifest`` with the installed torch (see the module docstring).

    Args:
        manifest: a verified pack's manifest.
        here_version: ``torch.__version__`` here.
        here_hashes: build component -> hash here (``CurrentBuild.hashes``); a
            component absent on either side is not evidence.
        here_threads: ``cpp_runtime_thread_count`` torch here would hash (None: unknown).
    """
    b = manifest.build
    differ = tuple(sorted(n for n, h in b.components.items() if n in here_hashes and here_hashes[n] != h))
    reasons: list[Reason] = []
    if differ:
        built = (f"torch {b.torch_version}" if b.torch_version else
                 f"another torch build (torch_version {b.components.get('torch_version', '?')[:12]}, "
                 f"here {here_hashes.get('torch_version', '?')[:12]})")
        if "torch_version" not in differ:
            built = f"the same torch on another system ({', '.join(differ)})"
        reasons.append(Reason(f"built by {built}, this is torch {here_version}: nothing will hit "
                              f"({', '.join(differ)} differ{'s' if len(differ) == 1 else ''})",
                              "other-torch-build"))
    verdicts = []
    for name, es in manifest.functions().items():
        why = list(reasons)
        counts = sorted({e.cpp_threads for e in es if e.cpp_threads is not None})
        if not why and here_threads is not None and any(n != here_threads for n in counts):
            n = next(n for n in counts if n != here_threads)
            why.append(Reason(f"its C++ kernels were compiled for {n} threads, torch here runs "
                              f"{here_threads} (cpp_runtime_thread_count is in the key): set "
                              f"OMP_NUM_THREADS={n} or torch.set_num_threads({n})", "other-cpp-thread-count"))
        verdicts.append(FunctionVerdict(name, len(es), not why, tuple(why)))
    return HitReport(here_version, differ, tuple(verdicts), manifest.settings)


__all__ = ["FunctionVerdict", "HitReport", "will_hit"]
