"""Plain helpers for the tests (no fixtures, no torch import).

Import as ``from helpers import run_fxcache`` (pytest puts tests/ on sys.path
because tests/ has no ``__init__.py``) or ``from tests.helpers import ...``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# Runs a module as __main__ with `import torch` (and torch.*) made impossible, so
# a test can prove that a code path never needs torch. The finder sits first on
# sys.meta_path and raises ModuleNotFoundError, so `except ImportError` works.
_BLOCK_TORCH_RUNNER = r"""
import runpy, sys

class _BlockTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(
                f"import of {name!r} blocked: this run must not need torch", name=name
            )
        return None

sys.meta_path.insert(0, _BlockTorch())
_module = sys.argv[1]
sys.argv = [_module, *sys.argv[2:]]
runpy.run_module(_module, run_name="__main__", alter_sys=True)
"""


def _env(env: Mapping[str, str] | None) -> dict[str, str]:
    out = dict(os.environ)
    if env:
        out.update(env)
    pp = out.get("PYTHONPATH")
    out["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + pp if pp else "")
    return out


def run_module(
    module: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    block_torch: bool = False,
    timeout: float = 300,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m MODULE ARGS...`` from the repo root, capturing text output.

    ``env`` entries are added to (override) the current environment. With
    ``block_torch=True`` any import of ``torch`` in the child raises
    ``ModuleNotFoundError``. Never raises on a non-zero exit: check ``.returncode``.
    """
    if block_torch:
        argv = [sys.executable, "-c", _BLOCK_TORCH_RUNNER, module, *map(str, args)]
    else:
        argv = [sys.executable, "-m", module, *map(str, args)]
    return subprocess.run(
        argv,
        cwd=REPO_ROOT,
        env=_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        input=input,
    )


def run_fxcache(
    *args: str,
    env: Mapping[str, str] | None = None,
    block_torch: bool = False,
    timeout: float = 300,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m fxcache_cli ARGS...`` (see :func:`run_module`)."""
    return run_module(
        "fxcache_cli", *args, env=env, block_torch=block_torch, timeout=timeout, input=input
    )
