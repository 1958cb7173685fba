"""fxcache at scale, side by side with its references, measured in the same run.

    python -m benchmarks.bench_scale [--sizes 1000,10000,100000] [--work DIR]
    python -m benchmarks.bench_scale --memory 1000,10000,100000 [--work DIR]

(``make bench-scale``; never part of ``make test``.) For each size, a cache of
that many entry files is generated from real entries (benchmarks/gen_cache.py,
from a cache ``demo.build_cache`` compiles once from the tests' corpus into ``WORK/src``), then:

* ``ls``: ``fxcache ls`` cold (a fresh index: an entry per key decoded for its function) and warm, and ``ls --by function``, against the floor, ``find DIR -type f -printf '%s %T@\\n'``;
* ``match``: ``fxcache match --shapes x=[5,3]`` over every key, cold (empty
  index) and warm, against torch's way: a process that imports torch,
  ``pickle.loads`` every entry and calls ``ShapeEnv.evaluate_guards_expression``
  on its guards (what ``find_guarded_entry`` does per candidate); the CPU a cold
  index adds (cold minus warm, decode workers included) against the CPU of
  torch's read and ``pickle.loads`` of the same files;
* ``decode``: one FX entry, ``decode_entry`` against ``pickle.loads`` with
  torch imported (in-process, best of many);
* ``gc``: ``gc --max-size <half> --dry-run`` (planning, from a warm index) and
  ``--yes`` on a copy (execution; skipped above 10k entries);
* ``--help`` and ``ls`` on an empty cache.

* ``rm`` of one FX key, planned (``--dry-run``) from a warm index: its CPU
  seconds (what gc and rm re-read from the files is most of it).

Every command is a fresh process (with ``PYTHONDONTWRITEBYTECODE`` unset, so
modules load from bytecode as an installed fxcache's do): its wall time (best
of 3 for the quick ones), CPU seconds where they matter (``wait4``: worker
processes included) and peak RSS (``wait4``) are printed next to the
reference's, then the goals' ratios. ``--profile`` adds, at the largest size,
where each command spends its CPU (cProfile, workers off, top functions by own
time). Results also go to ``WORK/results.json``.

``--memory SIZES`` runs only the memory pass: every command of
:data:`MEMORY_COMMANDS` once per size (``ls`` and ``match`` cold and warm, the ``gc``
and ``rm`` plans, ``df``, ``dupes``, ``audit``, ``verify``), its peak RSS beside the
300 MB goal and how much it grows per 1,000 entries between sizes (linear growth:
about the same figure between each pair); ``WORK/memory.json`` keeps them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_TORCH_WAY = r"""
import glob, pickle, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import torch
from torch.fx.experimental.symbolic_shapes import ShapeEnv
t1 = time.perf_counter()
root = sys.argv[1]
se = ShapeEnv()
n = 0
t_loads = 0.0
cpu_loads = 0.0
for f in glob.glob(root + "/aotautograd/*/*") + glob.glob(root + "/fxgraph/*/*/*"):
    ta, ca = time.perf_counter(), time.process_time()
    with open(f, "rb") as fh:
        o = pickle.loads(fh.read())
    t_loads += time.perf_counter() - ta
    cpu_loads += time.process_time() - ca
    if o.guards_expr:
        try:
            se.evaluate_guards_expression(o.guards_expr, [5, 3, 5, 3, 5, 3])
        except Exception:
            pass
    n += 1
print(n, t1 - t0, time.perf_counter() - t1, t_loads, cpu_loads)
"""

_DECODE = r"""
import glob, pickle, sys, timeit, warnings
warnings.simplefilter("ignore")
f = sorted(glob.glob(sys.argv[1] + "/fxgraph/*/*/*"))[0]
data = open(f, "rb").read()
if sys.argv[2] == "torch":
    import torch  # noqa: F401  (pickle.loads needs torch's classes)
    fn = lambda: pickle.loads(data)
else:
    from fxcache_core.decode.entries import decode_entry
    from fxcache_core.cache.keys import KeyKind
    fn = lambda: decode_entry(data, KeyKind.FX_GRAPH)
n = 200
print(min(timeit.repeat(fn, number=n, repeat=5)) / n)
"""


_CPU: dict[tuple[str, ...], float] = {}
"""CPU seconds (user + system, its worker processes included) of the last run of each argv."""


def run(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """(wall seconds, peak RSS in bytes, stdout) of one fresh process; its CPU
    seconds (``wait4``'s, which include the worker processes it waited for) go
    to :data:`_CPU`."""
    e = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    e.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from bytecode, not source
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=e, cwd=REPO)
    out = p.stdout.read().decode() if p.stdout else ""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) not in (0, 1, 3):  # match: 1 a miss, 3 undecided
        raise RuntimeError(f"{' '.join(argv)} failed ({status})")
    _CPU[tuple(argv)] = usage.ru_utime + usage.ru_stime
    return wall, usage.ru_maxrss * 1024, out


def profile(argv: list[str], env: dict[str, str], top: int = 8) -> list[str]:
    """Where one run of ``argv`` (an ``fxcache`` command) spends its CPU: cProfile
    in this process's child, workers off (``FXCACHE_JOBS=1``: all the work is in
    the profiled process); the ``top`` functions by own time, as lines."""
    import pstats

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "prof")
        run([sys.executable, "-m", "cProfile", "-o", out, *argv[1:]], {**env, "FXCACHE_JOBS": "1"})
        st = pstats.Stats(out)
        total = st.total_tt  # type: ignore[attr-defined]
        items = st.stats.items()  # type: ignore[attr-defined]
        own = sorted(items, key=lambda kv: -kv[1][2])[:top]
        core = sorted((kv for kv in items if "fxcache_core" in kv[0][0]), key=lambda kv: -kv[1][3])[:top]
        lines = [f"{total:.2f} s profiled; by own time, then fxcache_core by cumulative time:"]
        for (file, line, fn), (_, calls, tt, ct, _) in own + core:
            where = f"{os.path.relpath(file, REPO) if file.startswith(str(REPO)) else os.path.basename(file)}:{line}"
            lines.append(f"  {tt:6.2f} s {tt / total:4.0%}  cum {ct:6.2f} s  {calls:>8}x  {fn} ({where})")
        return lines


def best(argv: list[str], n: int = 3, env: dict[str, str] | None = None) -> tuple[float, int, float]:
    """(best wall seconds, peak RSS in bytes, least CPU seconds) over ``n`` runs: on a
    shared machine the CPU seconds are the steadier figure."""
    runs = []
    for _ in range(n):
        wall, rss, _ = run(argv, env)
        runs.append((wall, rss, _CPU[tuple(argv)]))
    return min(r[0] for r in runs), max(r[1] for r in runs), min(r[2] for r in runs)


def fx(*args: str) -> list[str]:
    return [sys.executable, "-m", "fxcache_cli", *args]


def mb(b: int) -> str:
    return f"{b / 1e6:.0f} MB"


def _read_all(cache: Path) -> None:
    """Read every entry file once (into the OS page cache)."""
    for sub in ("fxgraph", "aotautograd"):
        for dirpath, _, names in os.walk(cache / sub):
            for name in names:
                with open(os.path.join(dirpath, name), "rb") as f:
                    f.read()


def bench_size(src: Path, work: Path, n: int, only: set[str] | None = None, profiling: bool = False) -> dict:
    from benchmarks.gen_cache import generate

    cache = work / f"cache-{n}"
    if not (cache / ".generated").exists():
        shutil.rmtree(cache, ignore_errors=True)
        counts = generate(src, cache, n)
        (cache / ".generated").write_text(json.dumps(counts))
    counts = json.loads((cache / ".generated").read_text())
    r: dict = {"entries": counts["entries"], "keys": counts["keys"]}
    d = ["--cache-dir", str(cache)]
    prof: dict[str, list[str]] = {}
    r["profiles"] = prof
    with tempfile.TemporaryDirectory() as idx:
        # ls shows each key's function: the first run decodes an entry per key and
        # remembers it in the index (cold); then one index row per key (warm).
        env = {"FXCACHE_INDEX_DIR": idx}
        r["ls_cold"] = best(fx(*d, "ls"), n=1, env=env)
        r["ls"] = best(fx(*d, "ls"), env=env)
        r["ls_by_function"] = best(fx(*d, "ls", "--by", "function"), env=env)
        if profiling:
            prof["ls, warm index"] = profile(fx(*d, "ls"), env)
    if profiling:
        with tempfile.TemporaryDirectory() as idx:
            prof["ls, cold index"] = profile(fx(*d, "ls"), {"FXCACHE_INDEX_DIR": idx})
    r["find"] = best(["find", str(cache), "-type", "f", "-printf", "%s %T@\n"])
    if only is not None and "match" not in only:
        return r
    _read_all(cache)  # fxcache and torch's way alike start with the files in the page cache
    match = fx(*d, "match", "--shapes", "x=[5,3]")
    half = f"{counts['bytes'] // 2}B"
    gc_plan = fx(*d, "gc", "--max-size", half, "--dry-run", "--json")
    one_fx = next(k for b in sorted(os.listdir(cache / "fxgraph")) for k in sorted(os.listdir(cache / "fxgraph" / b)))
    rm_one = fx(*d, "rm", one_fx, "--dry-run", "--json")
    with tempfile.TemporaryDirectory() as idx:
        env = {"FXCACHE_INDEX_DIR": idx}
        r["match_cold"] = best(match, n=1, env=env)
        r["match_cold_cpu"] = _CPU[tuple(match)]
        r["match_warm"] = best(match, env=env)
        r["match_warm_cpu"] = r["match_warm"][2]
        # gc and rm plan from the warm index (as after any match or ls --check).
        r["gc_plan"] = best(gc_plan, n=1, env=env)
        r["gc_plan_cpu"] = _CPU[tuple(gc_plan)]
        r["rm_plan"] = best(rm_one, n=1, env=env)
        r["rm_plan_cpu"] = _CPU[tuple(rm_one)]
        if profiling:
            prof["match, warm index"] = profile(match, env)
            prof["gc --max-size, plan, warm index"] = profile(gc_plan, env)
            prof["rm of one FX key, plan, warm index"] = profile(rm_one, env)
    if profiling:
        with tempfile.TemporaryDirectory() as idx:
            prof["match, cold index"] = profile(match, {"FXCACHE_INDEX_DIR": idx})
    wall, rss, out = run([sys.executable, "-c", _TORCH_WAY, str(cache)])
    _, t_import, t_loop, t_loads, cpu_loads = out.split()
    r["torch_way"] = (wall, rss)
    r["torch_way_loop"] = float(t_loop)
    r["torch_import"] = float(t_import)
    r["torch_read_loads"] = float(t_loads)
    r["torch_read_loads_cpu"] = float(cpu_loads)
    if n <= 10_000:
        copy = work / f"copy-{n}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(cache, copy)
        r["gc_exec"] = best(fx("--cache-dir", str(copy), "gc", "--max-size", half, "--yes", "--json"), n=1)
        shutil.rmtree(copy)
    r["decode"] = float(run([sys.executable, "-c", _DECODE, str(cache), "fxcache"])[2])
    r["pickle_loads"] = float(run([sys.executable, "-c", _DECODE, str(cache), "torch"])[2])
    return r


MEMORY_COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ls, cold index", ("ls",)),
    ("ls, warm index", ("ls",)),
    ("ls --by function", ("ls", "--by", "function")),
    ("match, cold index", ("match", "--shapes", "x=[5,3]")),
    ("match, warm index", ("match", "--shapes", "x=[5,3]")),
    ("gc --max-size, plan", ("gc", "--max-size", "{half}", "--dry-run", "--json")),
    ("rm of one FX key, plan", ("rm", "{one_fx}", "--dry-run", "--json")),
    ("df", ("df",)),
    ("dupes", ("dupes",)),
    ("audit", ("audit",)),
    ("verify", ("verify",)),
)
"""What the memory pass runs, in order, each a fresh process on one index: the first
``ls`` and ``match`` each start from an empty index (cold), the rest find it warm."""


def memory(cache: Path, counts: dict) -> dict[str, tuple[float, int, float]]:
    """Peak RSS of every command of :data:`MEMORY_COMMANDS` on ``cache`` (one run each):
    name -> (wall seconds, peak RSS in bytes, CPU seconds). The peak RSS is
    ``wait4``'s: the largest of the process and the decode workers it waited for."""
    half = f"{counts['bytes'] // 2}B"
    one_fx = next(k for b in sorted(os.listdir(cache / "fxgraph")) for k in sorted(os.listdir(cache / "fxgraph" / b)))
    out: dict[str, tuple[float, int, float]] = {}
    with tempfile.TemporaryDirectory() as idx:
        for name, args in MEMORY_COMMANDS:
            if name == "match, cold index":  # an empty index again: match decodes what ls did not
                shutil.rmtree(idx)
                os.mkdir(idx)
            argv = fx("--cache-dir", str(cache), *(a.format(half=half, one_fx=one_fx) for a in args))
            wall, rss, _ = run(argv, {"FXCACHE_INDEX_DIR": idx})
            out[name] = (wall, rss, _CPU[tuple(argv)])
            print(f"  {name}: {mb(rss)}, {_CPU[tuple(argv)]:.1f} s CPU", flush=True)
    return out


def memory_report(mem: dict[int, dict[str, tuple[float, int, float]]]) -> str:
    """Peak RSS per command and size, and its growth per 1,000 entries between sizes
    (linear growth: about the same figure between each pair)."""
    sizes = sorted(mem)
    head = f"{'peak RSS (goal < 300 MB)':<26}" + "".join(f"{n:>12,}" for n in sizes)
    if len(sizes) > 1:
        head += "   MB per 1,000 entries more: " + ", ".join(f"{a:,}->{b:,}" for a, b in pairwise(sizes))
    out = [head]
    for name, _ in MEMORY_COMMANDS:
        rss = [mem[n][name][1] for n in sizes]
        line = f"{name:<26}" + "".join(f"{mb(r):>12}" for r in rss)
        if len(sizes) > 1:
            line += "   " + ", ".join(f"{(b - a) / 1e6 / ((m - n) / 1000):.2f}"
                                     for (n, a), (m, b) in pairwise(zip(sizes, rss, strict=True)))
        out.append(line + ("   OVER" if rss[-1] > 300e6 else ""))
    return "\n".join(out)


def report(rows: dict[int, dict], start: dict) -> str:
    out = [f"fxcache --help: {start['help'][0] * 1000:.0f} ms, {mb(start['help'][1])}; "
           f"ls of an empty cache: {start['ls_empty'][0] * 1000:.0f} ms, {mb(start['ls_empty'][1])}", ""]
    head = f"{'entries':>8}  {'figure':<24} {'fxcache':>33} {'reference':>30}  ratio"
    out.append(head)
    def line(entries: int, fig: str, ours: tuple, ref: tuple | None, refname: str) -> None:
        o = f"{ours[0]:.2f} s {mb(ours[1]):>7}" + (f" ({ours[2]:.2f} s CPU)" if len(ours) > 2 else "")
        if ref is None:
            out.append(f"{entries:>8}  {fig:<24} {o:>33}")
            return
        rf = f"{refname} {ref[0]:.2f} s {mb(ref[1]):>7}"
        out.append(f"{entries:>8}  {fig:<24} {o:>33} {rf:>30}  {ours[0] / ref[0]:.2f}x")

    for r in rows.values():
        line(r["entries"], "ls, cold index", r["ls_cold"], r["find"], "find")
        line(r["entries"], "ls, warm index", r["ls"], r["find"], "find")
        line(r["entries"], "ls --by function, warm", r["ls_by_function"], r["find"], "find")
        if "match_cold" not in r:
            continue
        e = r["entries"]
        loads = (r["torch_read_loads"], r["torch_way"][1])
        line(e, "match, cold index", (*r["match_cold"][:2], r["match_cold_cpu"]), loads, "torch read+loads")
        cold_extra = r["match_cold_cpu"] - r["match_warm_cpu"]
        out.append(f"{e:>8}  {'match, cold - warm, CPU':<24} {cold_extra:>13.2f} s CPU {'':>9} "
                   f"{'torch read+loads ' + format(r['torch_read_loads_cpu'], '.2f') + ' s CPU':>30}  "
                   f"{cold_extra / r['torch_read_loads_cpu']:.2f}x")
        line(e, "match, warm index", r["match_warm"], r["ls"], "warm ls")
        line(e, "match, warm index", r["match_warm"], r["torch_way"], "torch's way")
        out.append(f"{'':>8}  {'':<24} {'':>18} {'(torch: import ' + format(r['torch_import'], '.1f') + ' s, loop ' + format(r['torch_way_loop'], '.2f') + ' s, of which reading + pickle.loads ' + format(r['torch_read_loads'], '.2f') + ' s)':>30}")
        line(e, "gc --max-size, plan", r["gc_plan"], r["ls"], "warm ls")
        line(e, "rm of one FX key, plan", r["rm_plan"], r["ls"], "warm ls")
        if "gc_exec" in r:
            line(e, "gc --max-size, execute", r["gc_exec"], None, "")
        out.append(f"{e:>8}  {'decode one FX entry':<24} {r['decode'] * 1e3:>13.3f} ms "
                   f"{'pickle.loads ' + format(r['pickle_loads'] * 1e3, '.3f') + ' ms':>30}  "
                   f"{r['decode'] / r['pickle_loads']:.2f}x")
        ratio = {"match warm / ls warm (goal 2x)": r["match_warm"][0] / r["ls"][0],
                 "CPU of (match cold - warm) / torch read+loads (goal 1x)":
                     (r["match_cold_cpu"] - r["match_warm_cpu"]) / r["torch_read_loads_cpu"],
                 "ls cold / find (goal 10x)": r["ls_cold"][0] / r["find"][0],
                 "gc plan / ls warm (goal 3x)": r["gc_plan"][0] / r["ls"][0]}
        out.append(f"{e:>8}  the goals' ratios: " + "; ".join(f"{k} {v:.1f}x" for k, v in ratio.items())
                   + f"; rm CPU {r['rm_plan_cpu']:.2f} s (goal < 1.5 s)")
    for r in rows.values():
        for name, lines in r.get("profiles", {}).items():
            out.append(f"\nprofile at {r['entries']} entries, {name}: " + lines[0])
            out.extend(lines[1:])
    return "\n".join(out)


def template_cache(work: Path) -> Path:
    """``work/src``: a real cache the benchmarks copy their entries from, compiled from
    the tests' corpus (tests/harness/cases.py: more templates than the demo's) the first
    time, then reused."""
    work.mkdir(parents=True, exist_ok=True)
    src = work / "src"
    if not (src / "aotautograd").exists():
        from demo.build_cache import build_cache_subprocess

        print(f"building the template cache in {src} (torch.compile, about a minute) ...", flush=True)
        build_cache_subprocess(src, corpus=("tests.harness.cases",))
    return src


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "fxcache-bench")
    p.add_argument("--only", default=None, help="ls: only the ls figures (default: all)")
    p.add_argument("--memory", default=None, metavar="SIZES",
                   help="only the memory pass: peak RSS of every command at these sizes (e.g. 1000,10000,100000)")
    p.add_argument("--profile", action="store_true",
                   help="also profile each command once at the largest size (cProfile, FXCACHE_JOBS=1)")
    a = p.parse_args(argv)
    src = template_cache(a.work)
    if a.memory:
        from benchmarks.gen_cache import generate

        mem = {}
        for n in (int(x) for x in a.memory.split(",")):
            cache = a.work / f"cache-{n}"
            if not (cache / ".generated").exists():
                shutil.rmtree(cache, ignore_errors=True)
                (cache / ".generated").write_text(json.dumps(generate(src, cache, n)))
            print(f"{n} entries, memory ...", flush=True)
            mem[n] = memory(cache, json.loads((cache / ".generated").read_text()))
        print(memory_report(mem))
        (a.work / "memory.json").write_text(json.dumps({str(n): m for n, m in mem.items()}, indent=2))
        return 0
    empty = a.work / "empty"
    (empty / "fxgraph").mkdir(parents=True, exist_ok=True)
    start = {"help": best(fx("--help")), "ls_empty": best(fx("--cache-dir", str(empty), "ls"))}
    rows = {}
    sizes = [int(s) for s in a.sizes.split(",")]
    for n in sizes:
        print(f"{n} entries ...", flush=True)
        rows[n] = bench_size(src, a.work, n, set(a.only.split(",")) if a.only else None,
                             profiling=a.profile and n == max(sizes))
    text = report(rows, start)
    print(text)
    (a.work / "results.json").write_text(json.dumps({"start": start, "sizes": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
