"""``make demo``: build a real Inductor cache with torch.compile, then tour fxcache on it.

    python -m demo.tour [CACHE_DIR]

The cache is compiled from the demo's workloads (``demo.build_cache.DEMO_CORPUS``:
the eight small functions of :mod:`demo.cases` and the transformers model of
:mod:`demo.models`, each module in a process of its own, side by side; CPU,
dynamic shapes) into ``CACHE_DIR`` (default ``demo-cache``), rebuilt from scratch
each run. Then every fxcache command runs on it, printed like a shell session: a
hit and a miss, a recompile and the difference between its two keys, a training
step, a graph break; a later run of one function under ``TORCH_TRACE``
(:mod:`demo.traced_run`: a hit, then a guard miss), what ``explain`` makes of it and
the page ``report`` draws of both; what gc and rm would remove; a pack, unpacked into
an empty cache dir.

Beside the cache, ``CACHE_DIR-tour`` (rebuilt each run too) keeps what the tour
makes that is not the cache: the run's trace (``trace/``), the page of the cache and
that run (``report.html``, open it in a browser), the pack (``demo.pack``) and the
cache it was unpacked into (``unpacked/``). The build and the traced run need torch;
the tour runs ``fxcache`` in subprocesses, which never import torch.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

MARKER = ".fxcache-demo"


def fxcache(*args: str, check: bool = True, ok: tuple[int, ...] = (0,),
            cwd: Path | None = None) -> str:
    """Run ``fxcache ARGS`` (in ``cwd``) as a user would, echo the command and its output
    (and its exit status when it is not 0: ``match`` exits 1 on a miss, 3 when undecided)."""
    cmd = [sys.executable, "-m", "fxcache_cli", *args]
    print(f"\n$ fxcache {shlex.join(args)}", flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=cwd)
    _echo(proc)
    if check and proc.returncode not in ok:
        raise SystemExit(f"fxcache {' '.join(args)} exited {proc.returncode}")
    return proc.stdout


def _echo(proc: subprocess.CompletedProcess[str]) -> None:
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    if proc.returncode:
        print(f"(exit status {proc.returncode})")
    sys.stdout.flush()


def _env() -> dict[str, str]:
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


def _fresh_dirs(*paths: Path) -> None:
    """Make each of ``paths`` an empty dir marked as the demo's. An old one is replaced
    only if the demo made it (it holds :data:`MARKER`); all are checked before any is."""
    for path in paths:
        if path.exists() and not (path / MARKER).exists():
            raise SystemExit(f"{path} exists and was not made by the demo; refusing to replace it")
    for path in paths:
        if path.exists():
            shutil.rmtree(path)
        path.mkdir(parents=True)
        (path / MARKER).write_text("built by `make demo`; safe to delete\n")


def _build(cache: Path) -> None:
    """Compile each module of the demo's corpus in a process of its own, side by side
    (the machine's second core takes the transformers model)."""
    from demo.build_cache import DEMO_CORPUS, build_cache_subprocess

    with ThreadPoolExecutor(len(DEMO_CORPUS)) as pool:
        list(pool.map(lambda module: build_cache_subprocess(cache, corpus=(module,)), DEMO_CORPUS))


def _traced_run(cache: Path, trace: Path) -> None:
    """Run :mod:`demo.traced_run` under ``TORCH_TRACE=trace``, echoed like a shell command."""
    from demo.build_cache import REPO_ROOT, _child_env

    print(f"\n$ TORCH_TRACE={shlex.quote(str(trace))} python -m demo.traced_run {shlex.quote(str(cache))}",
          flush=True)
    proc = subprocess.run([sys.executable, "-m", "demo.traced_run", str(cache)], cwd=REPO_ROOT,
                          env={**_child_env(), "TORCH_TRACE": str(trace)}, capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    if proc.returncode:
        raise SystemExit(f"demo.traced_run exited {proc.returncode}\n{proc.stderr[-4000:]}")


def main() -> None:
    cache = Path(sys.argv[1] if len(sys.argv) > 1 else "demo-cache").resolve()
    extra = cache.with_name(cache.name + "-tour")
    _fresh_dirs(cache, extra)

    print(f"Compiling the demo workloads with torch.compile (CPU) into {cache} ...", flush=True)
    t0 = time.monotonic()
    _build(cache)
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
    # A later run, traced: same_graph_two_regions at a size built (a hit), then at 10,
    # in the gap (a guard miss: torch compiles a third entry). What the cache did, and why.
    trace = extra / "trace"
    _traced_run(cache, trace)
    fxcache(*d, "explain", str(trace))
    # The cache and that run on one page, for a browser: open CACHE_DIR-tour/report.html.
    fxcache(*d, "report", str(extra / "report.html"), "--from-trace", str(trace))
    fxcache(*d, "audit")
    fxcache(*d, "dupes")
    fxcache(*d, "verify")
    fxcache(*d, "gc", "--dry-run", "--max-size", "3.5MB")
    fxcache(*d, "gc", "--dry-run")
    # Removing a key takes the AOTAutograd entries that load it too.
    fxcache(*d, "rm", "--dry-run", fx_key[:10])
    # A pack of one function's entries and what they load, unpacked into an empty cache dir.
    fxcache(*d, "pack", "--dry-run", "--fn", "same_graph_two_regions")
    print(f"\n$ cd {shlex.quote(str(extra))}", flush=True)
    fxcache(*d, "pack", "demo.pack", "--fn", "same_graph_two_regions", cwd=extra)
    fxcache("--cache-dir", "unpacked", "unpack", "demo.pack", cwd=extra)
    fxcache("--cache-dir", "unpacked", "ls", cwd=extra)


if __name__ == "__main__":
    main()
