"""``make demo``: build a real Inductor cache with torch.compile, then tour fxcache on it.

    python -m demo.tour [CACHE_DIR]

The cache is compiled from the demo's workloads (``demo.build_cache.DEMO_CORPUS``:
the eight small functions of :mod:`demo.cases` and the transformers model of
:mod:`demo.models`; CPU, dynamic shapes) into ``CACHE_DIR`` (default
``demo-cache``), rebuilt from scratch each run; then fxcache's commands run on
it, printed like a shell session: a hit and a miss, a recompile and the
difference between its two keys, a training step, a graph break, what gc and rm
would remove, what a pack would hold. Building needs torch; the tour itself runs
``fxcache`` in subprocesses, which never import torch.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def _json(*args: str) -> Any:
    """``fxcache ARGS --json``, parsed, not echoed (the tour picks keys from it)."""
    proc = subprocess.run([sys.executable, "-m", "fxcache_cli", *args, "--json"],
                          capture_output=True, text=True, env=_env())
    return json.loads(proc.stdout)


def _fx_keys(cache_dir: list[str], fn: str) -> list[str]:
    """The FX keys compiled from ``fn``, in ``ls``'s order."""
    rows = _json(*cache_dir, "ls", "--fn", fn)
    return [r["key"] for r in rows if r["kind"] == "fxgraph"]


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
    found = _json(*d, "match", "--fn", "same_graph_two_regions", "--shapes", "x=[40,3]", "--explain")
    fx_key = next(r["key"] for r in found["results"] if r["kind"] == "fxgraph")
    fxcache(*d, "guards", fx_key[:10])
    # Which entry serves which sizes, and the gap between them.
    fxcache(*d, "coverage", fx_key[:10], "--range", "L['x'].size()[0]=1:40", "--dynamic", "true")
    # What that key is made of: per group, and what is not at torch's defaults.
    fxcache(*d, "key", fx_key[:10])
    fxcache(*d, "key", fx_key[:10], "--group", "example_inputs")
    # same_graph_two_regions was built at sizes 4 and 32: entries for s0 <= 7 and s0 >= 16.
    fxcache(*d, "match", "--fn", "same_graph_two_regions", "--shapes", "x=[40,3]")
    fxcache(*d, "match", "--fn", "same_graph_two_regions", "--shapes", "x=[10,3]", ok=(1,))
    # automatic_dynamic under dynamic=None: a fresh process's first call is static; the
    # build's second call recompiled it with the size dynamic: two keys, and why.
    fxcache(*d, "match", "--fn", "automatic_dynamic", "--shapes", "x=[10,3]", "--dynamic", "none", ok=(1,))
    static, dynamic = _fx_keys(d, "automatic_dynamic")[:2]
    fxcache(*d, "diff", static[:10], dynamic[:10])
    # train_mlp: an AOTAutograd hit loads a forward and a backward FX entry.
    fxcache(*d, "match", "--fn", "train_mlp", "--shapes", "x=[7,4]", "--shapes", "target=[7,1]")
    fxcache(*d, "match", "--fn", "train_mlp", "--shapes", "x=[30,4]", "--shapes", "target=[30,1]",
            ok=(0, 1, 3))
    # A transformers model compiled whole: its graphs are named after its class.
    fxcache(*d, "match", "--fn", "GPT2LMHeadModel", "--shapes", "input_ids=[4,24]", "--dynamic", "true",
            ok=(0, 1, 3))
    # A graph break: the helper resumes in a frame of its own, keyed on its own local t,
    # which no argument of the call names.
    fxcache(*d, "match", "--fn", "_helper_tail", "--shapes", "x=[8,3]", "--dynamic", "true",
            ok=(0, 1, 3))
    fxcache(*d, "audit")
    fxcache(*d, "dupes")
    fxcache(*d, "verify")
    fxcache(*d, "gc", "--dry-run", "--max-size", "3.5MB")
    fxcache(*d, "gc", "--dry-run")
    # Removing a key takes the AOTAutograd entries that load it too.
    fxcache(*d, "rm", "--dry-run", fx_key[:10])
    fxcache(*d, "pack", "--dry-run", "--fn", "same_graph_two_regions")

if __name__ == "__main__":
    main()
