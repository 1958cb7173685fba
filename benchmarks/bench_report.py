"""``fxcache report`` of a large cache: the time to build the page, and its size (targets:
10,000 entries in under 3 s, under 5 MB).

    python -m benchmarks.bench_report [--entries 10000] [--work DIR]

(``make bench``; never part of ``make test``.) The cache is benchmarks/gen_cache.py's, of
real entries (from a template cache ``demo.build_cache`` compiles once into
``WORK/src``, as benchmarks/bench_scale.py does, and shares with it). fxcache's index is
warmed first (``fxcache ls``), and so is the charting library's bundle (the first page:
vl-convert bundles it once per version, 1-2 s, then reads it from fxcache's own dir);
then ``fxcache report`` runs in fresh processes, best of 3: its wall time and peak RSS
(``wait4``), the page's size, and how much of it is the page's JSON and the charting
library. Results also go to ``WORK/report-results.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from benchmarks.bench_scale import best, fx, mb, run, template_cache

TARGET_S = 3.0
TARGET_BYTES = 5_000_000


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--entries", type=int, default=10_000)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "fxcache-bench")
    a = p.parse_args(argv)
    src = template_cache(a.work)
    cache = a.work / f"cache-{a.entries}"
    if not (cache / ".generated").exists():
        from benchmarks.gen_cache import generate

        counts = generate(src, cache, a.entries)
        (cache / ".generated").write_text(json.dumps(counts))
    counts = json.loads((cache / ".generated").read_text())
    page = a.work / f"report-{a.entries}.html"
    with tempfile.TemporaryDirectory() as idx:
        env = {"FXCACHE_INDEX_DIR": idx}
        d = ["--cache-dir", str(cache)]
        run(fx(*d, "ls"), env=env)  # the index
        run(fx(*d, "report", str(page)), env=env)  # the charting library's bundle
        wall, rss, cpu = best(fx(*d, "report", str(page)), env=env)
    html = page.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="fxcache-data">(.*?)</script>', html, re.S)
    library = re.findall(r'<script type="module">(.*?)</script>', html, re.S)
    r = {"entries": counts["entries"], "keys": counts["keys"], "wall_s": wall, "rss": rss, "cpu_s": cpu,
         "bytes": len(html.encode()), "json_bytes": len(data.group(1)) if data else None,
         "library_bytes": len(library[0]) if library else None}
    (a.work / "report-results.json").write_text(json.dumps(r, indent=2))
    ok_t, ok_b = wall < TARGET_S, r["bytes"] < TARGET_BYTES
    print(f"fxcache report of {r['entries']:,} entries ({r['keys']:,} keys), warm index:")
    print(f"  build  {wall:6.2f} s wall, {cpu:.2f} s CPU, {mb(rss)} peak RSS   "
          f"(target < {TARGET_S:.0f} s: {'met' if ok_t else 'NOT met'}; on a busy machine the CPU seconds are the steadier figure)")
    print(f"  page   {r['bytes'] / 1e6:6.2f} MB: its JSON {r['json_bytes'] / 1e6:.2f} MB, the charting library "
          f"{r['library_bytes'] / 1e6:.2f} MB   (target < {TARGET_BYTES / 1e6:.0f} MB: {'met' if ok_b else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
