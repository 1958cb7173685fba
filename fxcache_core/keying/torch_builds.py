"""Which torch version an FX key's ``torch_version`` component names, read from a data file.

An FX key hashes ``torch_key()`` (a digest of torch's sources, torch/_inductor/codecache.py)
as its ``torch_version`` component: a key names the torch that built it only as that
hash. ``torch_builds.json`` beside this module maps the hashes of the torch builds
recorded by ``tools/record_torch_builds.py`` (each computed by that torch itself) to
their ``torch.__version__``. A hash not in the table is a torch fxcache has not
recorded: callers say the hash. Never imports torch.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from types import MappingProxyType

DATA_FILE = "torch_builds.json"


@functools.cache
def _table() -> Mapping[str, str]:
    doc = json.loads(resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8"))
    return MappingProxyType({str(r["torch_version"]): str(r["version"]) for r in doc["builds"]})


def version_of(component_hash: str) -> str | None:
    """``torch.__version__`` (``2.13.0+cpu``) of the torch whose ``torch_version``
    component hash is ``component_hash``; None where it is not a recorded build."""
    return _table().get(component_hash)


__all__ = ["DATA_FILE", "version_of"]
