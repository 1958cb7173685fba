"""The session's real Inductor cache: every case of ``tests.harness.cases`` compiled once.

:func:`build` is the background build ``real_cache`` (``tests.harness.background``);
conftest's ``real_cache`` fixture returns its :class:`RealCache`. Every test that reads
a real cache of the demo cases reads this one (never mutate it: conftest's
``cache_copy`` gives a copy).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness.background import build_dir, builder


@dataclass(frozen=True)
class RealCache:
    """A cache built by ``demo.build_cache``.

    ``summary`` is the JSON printed by ``python -m demo.build_cache`` (per case:
    ``calls``, ``compile_kwargs``, ``train``, and per call the ``lookups`` torch
    made and the entry files it ``writes``; see demo/build_cache.py).
    """

    root: Path
    summary: dict[str, Any]
    pgo: Path | None = None
    """A dir holding the ``dynamo/`` folder torch wrote while building (PGO state
    under a job id), moved out of ``root``: its presence changes what ``match``
    can decide, so tests that want it copy it in (:meth:`with_pgo`)."""

    def with_pgo(self, dst: Path) -> None:
        """Copy torch's PGO state (``dynamo/``) into the cache copy ``dst``."""
        assert self.pgo is not None and (self.pgo / "dynamo").is_dir()
        shutil.copytree(self.pgo / "dynamo", dst / "dynamo", dirs_exist_ok=True)

    @property
    def fxgraph(self) -> Path:
        return self.root / "fxgraph"

    @property
    def aotautograd(self) -> Path:
        return self.root / "aotautograd"

    def key_dir(self, kind: str, key: str) -> Path:
        """Directory of ``key``: fxgraph/<key[1:3]>/<key> or aotautograd/<key>."""
        if kind == "fxgraph":
            return self.fxgraph / key[1:3] / key
        if kind == "aotautograd":
            return self.aotautograd / key
        raise ValueError(kind)

    def writes(self, case: str) -> list[dict[str, Any]]:
        """Every entry file written while building ``case`` (all calls, in order)."""
        return [w for call in self.summary["cases"][case]["writes"] for w in call]


@builder("real_cache")
def build() -> RealCache:
    """Compile every case into a fresh cache (``python -m demo.build_cache``, PGO state
    under the job id ``fxcache-tests`` moved aside into ``pgo``)."""
    from demo.build_cache import build_cache_subprocess

    root = build_dir("real-cache") / "inductor"
    # The limit only catches a hang: the build takes about 300 s of a quiet 2-core machine,
    # and went past 600 s on a busy one with nothing wrong.
    summary = build_cache_subprocess(root, pgo_job_id="fxcache-tests", corpus=("tests.harness.cases",),
                                     timeout=1800)
    pgo = root.parent / "pgo"
    pgo.mkdir()
    if (root / "dynamo").is_dir():
        shutil.move(root / "dynamo", pgo / "dynamo")
    return RealCache(root=root, summary=summary, pgo=pgo)


def snapshot_default_dir(live: Path, dst: Path) -> Path:
    """Copy torch's default cache dir ``live`` (its precompiled headers and their locks)
    to ``dst / live.name`` and return that copy.

    The session's torch processes keep building precompiled headers there while tests
    run (one per include path: the ``rebuilt`` build makes another); GCC writes a
    ``.gch`` in place, under torch's lock ``precompiled_headers/locks/<hash>.lock``
    (``_worker_compile_cpp`` in torch/_inductor/codecache.py). Each header is copied
    while holding that lock, so the copy never holds a header half written."""
    from filelock import FileLock

    src = live / "precompiled_headers"
    out = dst / live.name
    (out / "precompiled_headers" / "locks").mkdir(parents=True)
    for header in sorted(src.glob("*.h")):
        with FileLock(str(src / "locks" / f"{header.stem}.lock"), timeout=600):
            for f in src.glob(header.name + "*"):
                if f.is_file():
                    shutil.copy2(f, out / "precompiled_headers" / f.name)
    for lock in (src / "locks").glob("*"):
        if lock.is_file():
            shutil.copy2(lock, out / "precompiled_headers" / "locks" / lock.name)
    return out
