"""A later run of one demo function under ``TORCH_TRACE``, for ``fxcache explain`` to read.

Run it in a fresh process, after ``demo.build_cache`` filled the cache, with
``TORCH_TRACE`` set (torch reads it, and the cache env, when it is imported)::

    TORCH_TRACE=TRACE_DIR python -m demo.traced_run CACHE_DIR

It calls ``same_graph_two_regions`` (:mod:`demo.cases`, ``dynamic=True``) twice: at
``x=[4,3]``, a size the build compiled (a hit: only loading), then at ``x=[10,3]``,
in the gap between its two entries (a guard miss in both caches, and a compile of
that small graph: a third entry). Torch writes ``dedicated_log_torch_trace_*.log``
into ``TRACE_DIR``. It prints one line per call: the shape and torch's cache
counters that moved (``demo.recorder.counters``). ``demo.tour`` runs it, once the
tour has shown that gap. Imports torch.
"""

from __future__ import annotations

import argparse
import os

FUNCTION = "same_graph_two_regions"
CALLS = ([[4, 3]], [[10, 3]])  # a size the build compiled, then one in the gap


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m demo.traced_run", description=__doc__.split("\n")[0])
    p.add_argument("cache_dir", help="a cache demo.build_cache built")
    ns = p.parse_args(argv)
    if not os.environ.get("TORCH_TRACE"):
        p.error("set TORCH_TRACE to the dir torch should write the trace to")
    from demo.build_cache import configure_torch, prepare_env

    prepare_env(ns.cache_dir)
    import torch  # noqa: F401 - after the env: torch reads it at import

    configure_torch()
    from demo.cases import CASES, compile_case, run_call
    from demo.recorder import counters

    case = CASES[FUNCTION]
    compiled = compile_case(case)
    for shapes in CALLS:
        before = counters()
        run_call(case, compiled, shapes)
        moved = ", ".join(f"{name} +{n - before[name]}" for name, n in counters().items()
                          if n != before[name])
        size = ",".join(map(str, shapes[0]))
        print(f"{FUNCTION}(x=[{size}]): {moved or 'no cache lookup'}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
