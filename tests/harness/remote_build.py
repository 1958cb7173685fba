"""Compile demo cases with Inductor's remote cache on Redis, local caches off.

Run in a fresh process (the env must be set before torch is imported)::

    python -m tests.harness.remote_build REDIS_URL KERNEL_DIR --cases a,b

torch itself writes the entries (``RedisRemoteCache``: ``SET pt2:...::<key>:c1``),
so their format is torch's. ``KERNEL_DIR`` takes the generated code (the
remote cache holds entries only). Prints one JSON line: the cases compiled
and the number of calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.harness.remote_build")
    p.add_argument("redis_url")
    p.add_argument("kernel_dir")
    p.add_argument("--cases", required=True)
    a = p.parse_args(argv)
    os.environ.update({
        "TORCHINDUCTOR_CACHE_DIR": os.path.abspath(a.kernel_dir),
        "TORCHINDUCTOR_REDIS_URL": a.redis_url,
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
        "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
        "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1",
        "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "1",
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
    })
    from demo.build_cache import _seed_isa_checks

    # torch's ISA check programs, built once by the session (demo.build_cache.ISA_SEED_ENV),
    # copied where torch would build them: it loads them instead of nine seconds of g++.
    _seed_isa_checks(os.path.abspath(a.kernel_dir))
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from demo.build_cache import _quiet_warnings
    from tests.harness.cases import CASES, compile_case, run_call

    _quiet_warnings()
    inductor_config.fx_graph_cache = False
    inductor_config.fx_graph_remote_cache = True
    functorch_config.enable_autograd_cache = False
    functorch_config.enable_remote_autograd_cache = True
    functorch_config.bundled_autograd_cache = False
    calls = 0
    names = [n for n in a.cases.split(",") if n]
    for name in names:
        case = CASES[name]
        fn = compile_case(case)
        for shapes in case.build_calls:
            run_call(case, fn, shapes)
            calls += 1
    print(json.dumps({"cases": names, "calls": calls}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
