"""The installed torch's own build components (this module imports torch).

An FX key hashes ``torch_version`` (``torch_key()``, a digest of torch's
sources) and ``system_info`` (``CacheBase.get_system()``: compiler, CUDA,
device) among its components (``FxGraphHashDetails`` in
torch/_inductor/codecache.py). An entry whose build components differ from
the installed torch's can never be looked up again: every key the installed
torch computes differs from its key. This module computes the installed
torch's component hashes exactly as torch does, with torch's own
``FxGraphCachePickler``; :func:`fxcache_core.keying.anatomy.stale_components`
compares an entry with them.

Only ``fxcache key --current`` and ``fxcache gc --stale`` import this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.keying.anatomy import Component


@dataclass(frozen=True)
class CurrentBuild:
    """The installed torch's build components.

    Attributes:
        torch_version: ``torch.__version__``.
        hashes: debug-line name -> component hash (``torch_version``,
            ``system_info[hash]``...), comparable with an entry's debug lines.
        values: debug-line name -> readable value.
        include_dir: the installed torch's C++ include dir (``<torch>/include``),
            which every C++ build's command line names (``-I``).
    """

    torch_version: str
    hashes: dict[str, str]
    values: dict[str, str]
    include_dir: str = ""

    def to_json(self) -> dict[str, object]:
        """``torch`` (its version) and ``components`` (``name``, ``hash``, ``value``)."""
        return {"torch": self.torch_version, "components": [
            {"name": n, "hash": h, "value": self.values[n]} for n, h in self.hashes.items()]}


def current_build() -> CurrentBuild:
    """Compute the installed torch's build components (imports torch, ~2 s).

    Raises:
        ImportError: torch is not installed.
    """
    import warnings

    with warnings.catch_warnings():  # e.g. "Failed to initialize NumPy": not ours to report
        warnings.simplefilter("ignore")
        import torch
        from torch._inductor.codecache import CacheBase, FxGraphCachePickler, torch_key

    pickler = FxGraphCachePickler(torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph()))
    key = torch_key()
    hashes = {"torch_version": pickler.get_hash(key)}
    values = {"torch_version": f"torch {torch.__version__}"}
    for k, v in CacheBase.get_system().items():
        hashes[f"system_info[{k}]"] = pickler.get_hash(v)
        values[f"system_info[{k}]"] = str(v)
    import os

    include_dir = os.path.join(os.path.dirname(os.path.abspath(torch.__file__)), "include")
    return CurrentBuild(torch_version=torch.__version__, hashes=hashes, values=values,
                        include_dir=include_dir)


def env_settings(environ: Mapping[str, str]) -> tuple[Component, ...]:
    """The Inductor settings a ``TORCHINDUCTOR_*`` variable of ``environ`` sets, as the
    components an FX key made in this process would hash: each ``inductor_config[...]``
    / ``inductor_config_comms[...]`` component of :func:`fxcache_core.keying.config_env.set_in`,
    hashed and printed by torch's own ``FxGraphCachePickler.debug_lines`` from
    ``config.save_config_portable(ignore_private_configs=False, readonly_values=True)``
    as ``FxGraphHashDetails`` does (torch/_inductor/codecache.py). torch reads the
    variables when its config is first imported: ``environ`` should be this process's
    environment, else a variable torch never read is reported at its value here.

    Raises:
        ImportError: torch is not installed.
    """
    from types import SimpleNamespace

    from fxcache_core.keying.anatomy import parse_debug_lines
    from fxcache_core.keying.config_env import set_in

    wanted = set_in(environ)
    if not wanted:
        return ()
    import torch
    from torch._inductor import config, config_comms
    from torch._inductor.codecache import FxGraphCachePickler

    groups = {"inductor_config": config, "inductor_config_comms": config_comms}
    details = SimpleNamespace()
    for group, module in groups.items():
        names = {c.split("[", 1)[1][:-1] for c in wanted if c.startswith(group + "[")}
        saved = module.save_config_portable(ignore_private_configs=False, readonly_values=True)
        setattr(details, group, {k: v for k, v in saved.items() if k in names})
    pickler = FxGraphCachePickler(torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph()))
    return tuple(c for c in parse_debug_lines(pickler.debug_lines(details)) if c.name in wanted)


def cpp_thread_count() -> int:
    """The ``cpp_runtime_thread_count`` torch here would hash into an FX key of CPU
    C++ code when ``cpp.threads`` is left at its default (``parallel_num_threads()``,
    ``FxGraphHashDetails`` in torch/_inductor/codecache.py; imports torch).

    Raises:
        ImportError: torch is not installed.
    """
    from torch._inductor.utils import parallel_num_threads

    return int(parallel_num_threads())
