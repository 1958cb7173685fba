"""``make demo``: build a real Inductor cache with torch.compile, then tour fxcache on it.

    python -m demo.tour [CACHE_DIR]

The cache is compiled from the small workloads in :mod:`demo.cases` (CPU,
dynamic shapes) into ``CACHE_DIR`` (default ``demo-cache``), rebuilt from
scratch each run; then every fxcache command runs on it, printed like a shell
session. Building needs torch; the tour itself runs ``fxcache`` in
subprocesses, which never import torch.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

MARKER = ".fxcache-demo"


def fxcache(*args: str, check: bool = True, ok: tuple[int, ...] = (0,)) -> str:
    """Run ``fxcache ARGS`` as a user would, echo the command and its output (and its
    exit status when it is not 0: ``match`` exits 1 on a miss, 3 when undecided)."""
    cmd = [sys.executable, "-m", "fxcache_cli", *args]
    print(f"\n$ fxcache {shlex.join(args)}", flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    if proc.returncode:
        print(f"(exit status {proc.returncode})")
    sys.stdout.flush()
    if check and proc.returncode not in ok:
        raise SystemExit(f"fxcache {' '.join(args)} exited {proc.returncode}")
    return proc.stdout


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env.setdefault("COLUMNS", "120")
    return env


def main() -> None:
    cache = Path(sys.argv[1] if len(sys.argv) > 1 else "demo-cache").resolve()
    if cache.exists():
        if not (cache / MARKER).exists():
            raise SystemExit(f"{cache} exists and is not a demo cache; refusing to replace it")
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    (cache / MARKER).write_text("built by `make demo`; safe to delete\n")

    from demo.build_cache import build_cache_subprocess

    print(f"Compiling the demo workloads with torch.compile (CPU) into {cache} ...", flush=True)
    t0 = time.monotonic()
    build_cache_subprocess(cache)
    print(f"... done in {time.monotonic() - t0:.0f} s.", flush=True)

    d = ["--cache-dir", str(cache)]
    fxcache(*d, "ls")
    # Functions first: a function's keys, their entries and the shapes each serves.
    fxcache(*d, "ls", "--fn", "same_graph_two_regions", "--entries")
    fxcache(*d, "ls", "--by", "function", "--sort", "size", "--limit", "5")
    # Every file torch wrote there, by kind, with what gc would reclaim.
    fxcache(*d, "df")
    # The FX key of same_graph_two_regions: one graph, two entries for two shape regions.
    found = json.loads(subprocess.run(
        [sys.executable, "-m", "fxcache_cli", *d, "match", "--fn", "same_graph_two_regions",
         "--shapes", "x=[40,3]", "--explain", "--json"],
        capture_output=True, text=True, check=True, env=_env()).stdout)["results"]
    fx_key = next(r["key"] for r in found if r["kind"] == "fxgraph")
    fxcache(*d, "guards", fx_key[:10])
    # What that key is made of: per group, and what is not at torch's defaults.
    fxcache(*d, "key", fx_key[:10])
    fxcache(*d, "key", fx_key[:10], "--group", "example_inputs")
    # same_graph_two_regions was built at sizes 4 and 32: entries for s0 <= 7 and s0 >= 16.
    fxcache(*d, "match", "--fn", "same_graph_two_regions", "--shapes", "x=[40,3]")
    fxcache(*d, "match", "--fn", "same_graph_two_regions", "--shapes", "x=[10,3]", ok=(1,))
    # automatic_dynamic under dynamic=None: a fresh process's first call is static.
    fxcache(*d, "match", "--fn", "automatic_dynamic", "--shapes", "x=[10,3]", "--dynamic", "none", ok=(1,))
    # train_mlp: an AOTAutograd hit loads a forward and a backward FX entry.
    fxcache(*d, "match", "--fn", "train_mlp", "--shapes", "x=[7,4]", "--shapes", "target=[7,1]")
    fxcache(*d, "match", "--fn", "train_mlp", "--shapes", "x=[30,4]", "--shapes", "target=[30,1]",
            ok=(0, 1, 3))
    fxcache(*d, "match", "--audit")
    fxcache(*d, "gc", "--dry-run", "--max-size", "5MB")
    fxcache(*d, "gc", "--dry-run")
    fxcache(*d, "verify")


if __name__ == "__main__":
    main()
