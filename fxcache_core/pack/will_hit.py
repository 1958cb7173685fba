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
run: they are listed, for the run to set the same. A ``TORCHINDUCTOR_*`` variable
set here, though, is read by every run here when torch's config is imported
(torch/_inductor/config.py): a setting it puts at another value than the one the
packed keys hashed (the manifest's value where the setting is listed, else
torch's default, :func:`fxcache_core.keying.defaults.default_settings_for` this
torch, the table the manifest's list was made with: the same torch built the keys) changes every key a run here computes, and
nothing hits unless the run sets it back in code. Decides only; the caller
passes in what the installed torch computes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.keying.anatomy import Component
from fxcache_core.keying.config_env import env_var
from fxcache_core.keying.defaults import default_settings_for
from fxcache_core.pack.manifest import Manifest
from fxcache_core.reasons import Reason


@dataclass(frozen=True)
class FunctionVerdict:
    """Whether a function's packed entries can be hit here.

    Attributes:
        function: the function (``"?"`` when the pack does not know it).
        entries: how many entries of the pack serve it.
        will_hit: True when nothing known stands in the way; None when the pack
            records no build to compare (code ``build-unknown``: only bundled
            AOTAutograd entries, which store none of their keys' components).
        reasons: why not (codes ``other-torch-build``, ``other-cpp-thread-count``,
            ``setting-differs-here``, ``build-unknown``).
    """

    function: str
    entries: int
    will_hit: bool | None
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
        return all(f.will_hit is True for f in self.functions)

    def to_json(self) -> dict[str, object]:
        return {"torch_here": self.here_version, "build_components_differ": list(self.differ),
                "all_hit": self.all_hit, "functions": [f.to_json() for f in self.functions],
                "settings_not_at_default": [{"name": n, "value": v} for n, v in self.settings]}


def will_hit(manifest: Manifest, here_version: str, here_hashes: Mapping[str, str],
             here_threads: int | None = None, here_settings: Sequence[Component] = ()) -> HitReport:
    """Compare ``manifest`` with the installed torch (see the module docstring).

    Args:
        manifest: a verified pack's manifest.
        here_version: ``torch.__version__`` here.
        here_hashes: build component -> hash here (``CurrentBuild.hashes``); a
            component absent on either side is not evidence.
        here_threads: ``cpp_runtime_thread_count`` torch here would hash (None: unknown).
        here_settings: the settings a ``TORCHINDUCTOR_*`` variable sets here, as torch
            hashes them (:func:`fxcache_core.keying.current.env_settings`).
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
    else:
        reasons.extend(_settings_differ(manifest, here_settings, default_settings_for(here_version)))
    unknown = not b.components and not b.torch_version
    verdicts = []
    for name, es in manifest.functions().items():
        why = list(reasons)
        counts = sorted({e.cpp_threads for e in es if e.cpp_threads is not None})
        if not why and here_threads is not None and any(n != here_threads for n in counts):
            n = next(n for n in counts if n != here_threads)
            why.append(Reason(f"its C++ kernels were compiled for {n} threads, torch here runs "
                              f"{here_threads} (cpp_runtime_thread_count is in the key): set "
                              f"OMP_NUM_THREADS={n} or torch.set_num_threads({n})", "other-cpp-thread-count"))
        if not why and unknown:
            verdicts.append(FunctionVerdict(name, len(es), None, (Reason(
                "the pack records no torch build to compare with this one (bundled AOTAutograd entries store "
                "none of their keys' components): it hits only under the torch build and settings that saved it",
                "build-unknown"),)))
            continue
        verdicts.append(FunctionVerdict(name, len(es), not why, tuple(why)))
    return HitReport(here_version, differ, tuple(verdicts), manifest.settings)


def _settings_differ(manifest: Manifest, here: Sequence[Component],
                     defaults: Mapping[str, tuple[str, str]] | None) -> list[Reason]:
    """One reason per setting a variable here puts at another value than the packed keys
    hashed; a setting the manifest does not list is judged only where this torch's
    defaults are recorded (``defaults``)."""
    packed = dict(manifest.settings)
    defaults = defaults or {}
    out = []
    for c in here:
        if c.name in packed:
            built, same = packed[c.name], packed[c.name] == c.readable
        elif c.name in defaults:
            built, same = defaults[c.name][1], c.hash.startswith(defaults[c.name][0])
        else:
            continue  # no recorded default: not evidence
        if not same:
            var = env_var(c.name) or "a TORCHINDUCTOR_ variable"
            out.append(Reason(f"{var} is set here, which makes {c.name}={c.readable}; the keys were made with "
                              f"{built}: a run with this environment misses (unset {var}, or set {c.name} back "
                              "in code)", "setting-differs-here"))
    return out


__all__ = ["FunctionVerdict", "HitReport", "will_hit"]
