"""Which environment variable sets an Inductor config key, read from a data file.

``fxcache explain`` names a config key the way a user sets it
(``TORCHINDUCTOR_MAX_AUTOTUNE`` for ``inductor_config[max_autotune]``). The table
``config_env.json`` beside this module is recorded by ``tools/record_config_env.py``
from the source of torch/_inductor/config.py and config_comms.py (read with
:mod:`ast`, the ``Config(env_name_force=..., env_name_default=...)`` and
``os.environ.get("TORCHINDUCTOR_...")`` forms). This module reads it once, on
first use; it never imports torch.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType

DATA_FILE = "config_env.json"


@functools.cache
def _table() -> Mapping[str, str]:
    doc = json.loads(resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8"))
    return MappingProxyType({str(k): str(v) for k, v in doc["env"].items()})


def env_var(component: str) -> str | None:
    """The variable torch reads FX key component ``component`` from
    (``inductor_config[max_autotune]`` -> ``TORCHINDUCTOR_MAX_AUTOTUNE``); None where
    torch reads it from none (it is set in code: ``torch._inductor.config.<name> = ...``)."""
    return _table().get(component)


def set_in(environ: Mapping[str, str]) -> dict[str, str]:
    """FX key component -> the variable that sets it, for each variable of the table
    present in ``environ`` (``{"inductor_config[max_autotune]": "TORCHINDUCTOR_MAX_AUTOTUNE"}``
    when that variable is set), in the table's order."""
    return {c: v for c, v in _table().items() if v in environ}


__all__ = ["DATA_FILE", "env_var", "set_in"]
