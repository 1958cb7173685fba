"""Shared fixtures.

- ``real_cache`` (session): a real Inductor cache built once per session from
  every case in ``demo.cases`` (~25 s of torch on 2 CPU cores). Skips if torch
  is not importable.
- ``cache_copy``: a fresh copy of that cache in ``tmp_path`` (mutate it freely;
  run ``demo.oracle`` on it).
- ``fxcache``: the :func:`helpers.run_fxcache` function.
- ``oracle_server`` (session, autouse): ``demo.oracle.torch_lookups`` asks a
  :class:`demo.oracle.ForkServer`, which imports torch once and forks a fresh
  child per query (test_torch_oracle.py checks it answers as a fresh process).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = Path(__file__).resolve().parent
for _p in (str(REPO_ROOT), str(TESTS_DIR)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from helpers import run_fxcache, run_module  # noqa: E402

# fxcache's index of decoded entries (fxcache_core.catalog.index) goes to a temp dir for
# the whole session, never to the user's ~/.cache (subprocesses inherit this),
# removed when the session ends.
os.environ["FXCACHE_INDEX_DIR"] = tempfile.mkdtemp(prefix="fxcache-test-index-")
atexit.register(shutil.rmtree, os.environ["FXCACHE_INDEX_DIR"], ignore_errors=True)
# Torch writes C++ precompiled headers (~156 MB each) into the *default* cache dir,
# <tempdir>/torchinductor_<user>/precompiled_headers, whatever TORCHINDUCTOR_CACHE_DIR
# says (_HEADER_DIR in torch/_inductor/codecache.py). The torch processes the tests
# start get a temp dir of the session as their tempdir, so that dir is theirs
# (see the default_dir fixture) and nothing lands in the user's.
TORCH_TMPDIR = tempfile.mkdtemp(prefix="fxcache-test-tmp-")
os.environ["TMPDIR"] = TORCH_TMPDIR
atexit.register(shutil.rmtree, TORCH_TMPDIR, ignore_errors=True)

__all__ = ["RealCache", "run_fxcache", "run_module"]


@pytest.fixture(scope="session", autouse=True)
def oracle_server():
    from demo import oracle

    server = oracle.ForkServer()  # starts with the first query
    previous = oracle.use_server(server)
    yield server
    oracle.use_server(previous)
    server.close()


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


@pytest.fixture(scope="session")
def real_cache(tmp_path_factory: pytest.TempPathFactory) -> RealCache:
    pytest.importorskip("torch")
    from demo.build_cache import build_cache_subprocess

    root = tmp_path_factory.mktemp("real-cache") / "inductor"
    summary = build_cache_subprocess(root, pgo_job_id="fxcache-tests")
    pgo = root.parent / "pgo"
    pgo.mkdir()
    if (root / "dynamo").is_dir():
        shutil.move(root / "dynamo", pgo / "dynamo")
    return RealCache(root=root, summary=summary, pgo=pgo)


@pytest.fixture(scope="session")
def default_dir(real_cache: RealCache) -> Path:
    """Torch's default cache dir as the session's torch processes see it
    (``<TMPDIR>/torchinductor_<user>``): after ``real_cache`` was built, it
    holds only what torch puts there whatever ``TORCHINDUCTOR_CACHE_DIR`` says,
    the C++ precompiled headers (and their locks)."""
    from fxcache_core.cache.location import default_cache_dir

    d = Path(TORCH_TMPDIR) / default_cache_dir().name
    assert (d / "precompiled_headers").is_dir(), f"torch wrote no precompiled header under {d}"
    return d


@pytest.fixture
def cache_copy(real_cache: RealCache, tmp_path: Path) -> Path:
    """A fresh ``copytree`` of the real cache; safe to mutate or to run torch on."""
    dst = tmp_path / "cache"
    shutil.copytree(real_cache.root, dst, symlinks=True)
    return dst


@pytest.fixture
def fxcache():
    return run_fxcache
