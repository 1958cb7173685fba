"""Two builds of fxcache side by side on one cache: CPU with the decode workers, run in turn.

    python -m benchmarks.bench_ab CACHE BUILD_A BUILD_B [--runs 4] [--commands ls_cold,match_cold,...]

(never part of ``make test``.) ``BUILD_A`` and ``BUILD_B`` are source trees of fxcache
(``git archive REV | tar -x -C DIR``: a tree being edited while this runs measures the
edits, and its index rows go stale as its decode code changes). Each run, for each build
in turn, on a fresh index dir: the commands named, in order, each a fresh process:

* ``ls_cold`` / ``match_cold``: the first ``ls`` / ``match --shapes x=[5,3]`` of that
  index (``ls`` keeps no entry rows, so a ``match_cold`` after it is cold too);
* ``ls_warm`` / ``match_warm``: the same from the index a first run filled (one is made
  first when the command has not run yet);
* ``gc``: ``gc --max-size <half of the cache> --dry-run --json`` from the index ``match``
  filled (one is made first).

Every figure is the process's CPU (``wait4``: user + system, its decode workers included),
wall time and peak RSS. The report gives, per command, each build's median CPU with its
range and the median of the pairwise ratios B / A (runs paired in turn, so a machine
whose load changes moves both): on a shared machine, ratios, not times. ``--json FILE``
keeps every run. The cache is ``benchmarks/gen_cache.py``'s (``bench_scale`` makes one in
its work dir) or any cache dir; ``gc`` needs its ``.generated`` or measures the dir.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = ("ls_cold", "ls_warm", "match_cold", "match_warm", "gc")


def _size(cache: Path) -> int:
    meta = cache / ".generated"
    if meta.exists():
        return int(json.loads(meta.read_text())["bytes"])
    return sum(f.stat().st_size for f in cache.rglob("*") if f.is_file() and not f.is_symlink())


def _run(build: Path, cache: Path, args: list[str], index: str) -> tuple[float, float, float]:
    """(CPU seconds with the workers, wall seconds, peak RSS in MB) of one fresh process."""
    env = dict(os.environ, PYTHONPATH=str(build), FXCACHE_INDEX_DIR=index)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from bytecode
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(cache), *args],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=build)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1, 3):  # match: 1 a miss, 3 undecided
        raise RuntimeError(f"{build}: {' '.join(args)} failed ({status})")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - t, usage.ru_maxrss / 1024


def one_run(build: Path, cache: Path, commands: list[str]) -> dict[str, tuple[float, float, float]]:
    """Every command of ``commands`` once for ``build``, on an index of its own."""
    args = {"ls": ["ls"], "match": ["match", "--shapes", "x=[5,3]"],
            "gc": ["gc", "--max-size", f"{_size(cache) // 2}B", "--dry-run", "--json"]}
    out: dict[str, tuple[float, float, float]] = {}
    index = tempfile.mkdtemp(prefix="fxcache-ab-")
    try:
        ran: set[str] = set()
        for c in commands:
            name, _, state = c.partition("_")
            filler = "match" if name == "gc" else name
            if (state == "warm" or name == "gc") and filler not in ran:
                _run(build, cache, args[filler], index)
                ran.add(filler)
            out[c] = _run(build, cache, args[name], index)
            ran.add(name)
    finally:
        shutil.rmtree(index, ignore_errors=True)
    return out


def report(runs: list[dict[str, dict[str, tuple[float, float, float]]]], a: str, b: str,
           commands: list[str]) -> str:
    lines = [f"{'command':<12} {'A: CPU s, median (range)':>26} {'B: CPU s, median (range)':>26} "
             f"{'B / A':>6}  wall A / B, medians"]
    for c in commands:
        ca = [r[a][c][0] for r in runs]
        cb = [r[b][c][0] for r in runs]
        ratio = statistics.median(y / x for x, y in zip(ca, cb, strict=True))
        wa = statistics.median(r[a][c][1] for r in runs)
        wb = statistics.median(r[b][c][1] for r in runs)
        lines.append(f"{c:<12} {statistics.median(ca):>9.2f} ({min(ca):.2f}-{max(ca):.2f}) "
                     f"{'':>5}{statistics.median(cb):>9.2f} ({min(cb):.2f}-{max(cb):.2f}) "
                     f"{'':>5}{ratio:>6.2f}  {wa:.2f} s / {wb:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cache", type=Path)
    p.add_argument("a", type=Path, help="build A: a source tree of fxcache")
    p.add_argument("b", type=Path, help="build B")
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--commands", default=",".join(COMMANDS))
    p.add_argument("--json", type=Path, default=None, help="write every run here")
    o = p.parse_args(argv)
    commands = [c for c in o.commands.split(",") if c]
    unknown = sorted(set(commands) - set(COMMANDS))
    if unknown:
        p.error(f"unknown commands: {', '.join(unknown)} (known: {', '.join(COMMANDS)})")
    a, b = str(o.a), str(o.b)
    runs = []
    for n in range(o.runs):
        runs.append({a: one_run(o.a, o.cache, commands), b: one_run(o.b, o.cache, commands)})
        print(f"run {n + 1}: " + "; ".join(f"{c} {runs[-1][a][c][0]:.2f} / {runs[-1][b][c][0]:.2f} s CPU"
                                           for c in commands), flush=True)
    print(f"A: {a}\nB: {b}\n{report(runs, a, b, commands)}")
    if o.json is not None:
        o.json.write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
