"""Compile one function several times, one thing changed each time (for ``fxcache diff``).

Run in a fresh process (the cache env must be set before torch is imported)::

    python -m tests.harness.variants CACHE_DIR

It prints one JSON object as the last line of stdout: per variant, the FX
keys its compile wrote (``{"base": ["f..."], "dtype": ["f..."], ...}``). Every
variant is ``torch.compile(f)(x)`` of ``f(x) = x.sin() + 1`` on an ``[8, 4]``
tensor, with exactly one change from ``base``:

- ``config``: ``torch._inductor.config.size_asserts = False``;
- ``dtype``: ``x`` is float64;
- ``stride``: ``x`` is a transposed ``[4, 8]`` tensor (same shape, strides (1, 8));
- ``dynamic``: ``dynamic=True``;
- ``renamed``: ``dynamic=True`` on ``g(y) = y.sin() + 1``: the same graph as
  ``dynamic``, but Dynamo names symbols after their source (``L['y']``), so
  the key differs only in symbol names (cache fragmentation);
- ``progress``: ``torch._inductor.config.disable_progress = False``: another
  key for the very same code (fragmentation too).

From other code (tests), use :func:`build_variants_subprocess`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

VARIANTS = ("base", "config", "dtype", "stride", "dynamic", "renamed", "progress")


def _fx_keys(root: Path) -> set[str]:
    return {p.name for p in (root / "fxgraph").glob("*/*") if p.is_dir()}


def main(argv: list[str] | None = None) -> int:
    from demo.build_cache import prepare_env

    args = sys.argv[1:] if argv is None else argv
    root = Path(prepare_env(args[0]))
    import torch

    def f(x):
        return x.sin() + 1

    def g(y):
        return y.sin() + 1

    written: dict[str, list[str]] = {}
    for name in VARIANTS:
        torch._dynamo.reset()
        x = torch.randn(8, 4)
        kwargs: dict[str, Any] = {"dynamic": False}
        if name == "dtype":
            x = x.double()
        elif name == "stride":
            x = torch.randn(4, 8).t()
        elif name in ("dynamic", "renamed"):
            kwargs = {"dynamic": True}
        before = _fx_keys(root)
        with torch._inductor.config.patch(size_asserts=name != "config",
                                          disable_progress=name != "progress"):
            torch.compile(g if name == "renamed" else f, **kwargs)(x)
        written[name] = sorted(_fx_keys(root) - before)
    print(json.dumps(written))
    return 0


def build_variants_subprocess(cache_dir: str | os.PathLike[str], python: str = sys.executable,
                              timeout: float = 600) -> dict[str, list[str]]:
    """Run :func:`main` in a fresh process; return its JSON."""
    from demo.build_cache import run_json_subprocess

    return run_json_subprocess(["-m", "tests.harness.variants", os.path.abspath(os.fspath(cache_dir))],
                               python=python, timeout=timeout)


if __name__ == "__main__":
    raise SystemExit(main())
