"""``fxcache explain`` on a large TORCH_TRACE: wall time and peak memory (target: 100 MB in
under 10 s and 300 MB).

    python -m benchmarks.bench_explain [--size-mb 100] [--work DIR]

(never part of ``make test``.) A real run is traced once into ``WORK``: the
demo cache is built (``demo.build_cache``: branch_on_size, mark_dynamic_range,
train_mlp), then ``tests.harness.traced``'s ``replay`` plan runs on a copy of it under
``TORCH_TRACE`` (hits, recompiles, config and dtype changes, a first compile,
a guard miss, a bypass, a training step). :func:`generate` repeats that
trace's records, each repetition under new frame ids (``frame_id`` + 100 per
copy, payloads and their md5 untouched), up to the size asked for. Then
``fxcache explain`` runs in fresh processes against the copy the run wrote
to, once with ``--json`` and once as text; wall time and peak RSS (``wait4``)
are printed, next to ``wc -l`` of the same file (the floor of reading it).
Results go to ``WORK/explain-results.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_scale import REPO, fx, mb, run

_FRAME_RE = re.compile(rb'"frame_id": (\d+)')


def generate(src: Path, dst: Path, size: int) -> int:
    """Write ``dst`` (a trace file) of at least ``size`` bytes by repeating the records
    of the trace file ``src``, each copy under frame ids moved by 100. Returns the copies."""
    lines = [ln for ln in src.read_bytes().split(b"\n") if ln]
    written = copies = 0
    with open(dst, "wb") as f:
        while written < size:
            off = copies * 100
            for ln in lines:
                if ln[:1] != b"\t":
                    ln = _FRAME_RE.sub(lambda m: b'"frame_id": %d' % (int(m.group(1)) + off), ln)  # noqa: B023
                f.write(ln + b"\n")
                written += len(ln) + 1
            copies += 1
    return copies


def traced_run(work: Path) -> tuple[Path, Path]:
    """(the trace dir of one real run, the cache it wrote to), made once in ``work``."""
    from demo.build_cache import build_cache_subprocess
    from tests.harness.traced import traced_subprocess

    base, cache, trace = work / "base", work / "cache", work / "trace"
    if not (work / ".traced").exists():
        for p in (base, cache, trace):
            shutil.rmtree(p, ignore_errors=True)
        build_cache_subprocess(base, ["branch_on_size", "mark_dynamic_range", "train_mlp"])
        shutil.copytree(base, cache, symlinks=True)
        traced_subprocess(cache, trace, "replay")
        (work / ".traced").write_text("ok")
    return trace, cache


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_explain")
    p.add_argument("--size-mb", type=int, default=100)
    p.add_argument("--work", type=Path, default=None)
    ns = p.parse_args(argv)
    work = ns.work or Path(tempfile.gettempdir()) / "fxcache-bench-explain"
    work.mkdir(parents=True, exist_ok=True)
    trace, cache = traced_run(work)
    (src,) = sorted(trace.glob("dedicated_log_torch_trace_*.log"))
    big = work / f"big-{ns.size_mb}"
    big.mkdir(exist_ok=True)
    dst = big / "dedicated_log_torch_trace_big.log"
    copies = generate(src, dst, ns.size_mb * 10**6)
    size = dst.stat().st_size
    subprocess.run(["cat", str(dst)], stdout=subprocess.DEVNULL, check=True)  # into the page cache
    env = {"FXCACHE_INDEX_DIR": str(work / "index")}
    results = {"trace_bytes": size, "copies": copies, "source": str(src)}
    floor = run(["wc", "-l", str(dst)])
    results["wc -l"] = floor[:2]
    for name, args in (("explain --json", ["--json"]), ("explain", [])):
        walls = []
        rss = 0
        for _ in range(2):
            wall, peak, out = run(fx("--cache-dir", str(cache), "explain", "--no-record", *args, str(big)), env)
            walls.append(wall)
            rss = max(rss, peak)
        results[name] = (min(walls), rss)
        if args:
            results["lookups"] = len(json.loads(out)["lookups"])
    print(f"trace: {size / 1e6:.0f} MB ({copies} copies of {src.name}), {results['lookups']} lookups")
    print(f"  {'wc -l (reading it)':<22} {results['wc -l'][0]:6.2f} s")
    for name in ("explain --json", "explain"):
        wall, rss = results[name]
        print(f"  {name:<22} {wall:6.2f} s  {mb(rss):>7}   target 10 s, 300 MB: "
              f"{'met' if wall < 10 and rss < 300e6 else 'NOT met'}")
    (work / "explain-results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
