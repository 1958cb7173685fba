"""``torch._inductor.standalone_compile`` artifacts as vLLM writes them (tests/torch/test_blobs.py).

:func:`save_artifacts` (in a process that has imported torch): captures the Dynamo
graphs of two small functions (a backend that keeps them; the first with its batch dim
marked dynamic), compiles each with
``standalone_compile`` (``dynamic_shapes="from_graph"``) with ``OUT/cache`` as the
cache dir (``TORCHINDUCTOR_CACHE_DIR``, read by torch at each write: the process may
have compiled into another cache dir before), saves the first as ``format="unpacked"``
at ``OUT/unpacked`` and both as ``format="binary"`` in vLLM's layout,
``OUT/torch_compile_cache/<hash>/rank_0_0/backbone/artifact_<i>``, and returns the
paths. ``tests.harness.blob_app --standalone OUT`` calls it after its own calls (one
torch process for both); ``python -m tests.harness.standalone_app OUT`` runs it alone
in a fresh process and prints the paths as one JSON line.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def save_artifacts(out: str) -> dict[str, Any]:
    """Compile and save the artifacts below ``out`` (the module docstring); their paths."""
    import torch
    from torch._inductor import standalone_compile

    out = os.path.abspath(out)
    cache = os.path.join(out, "cache")
    os.makedirs(cache, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache

    def capture(fn, *args):
        got = {}

        def backend(gm, example_inputs):
            got["gm"], got["ex"] = gm, example_inputs
            return gm.forward

        torch.compile(fn, backend=backend)(*args)
        return got["gm"], got["ex"]

    def scale(x, y):
        return (x * 2 + y).sin()

    def act(x):
        return x.relu() * 3

    layout = os.path.join(out, "torch_compile_cache", "h0", "rank_0_0", "backbone")
    os.makedirs(layout, exist_ok=True)
    binaries = []
    x, y = torch.randn(8, 4), torch.randn(8, 4)
    for t in (x, y):  # scale's batch dim symbolic, as vLLM compiles a range of batch sizes
        torch._dynamo.mark_dynamic(t, 0)
    for i, (fn, args) in enumerate(((scale, (x, y)), (act, (torch.randn(5, 3),)))):
        gm, ex = capture(fn, *args)
        art = standalone_compile(gm, ex, dynamic_shapes="from_graph")
        path = os.path.join(layout, f"artifact_{i}")
        art.save(path=path, format="binary")
        binaries.append(path)
        if i == 0:
            art.save(path=os.path.join(out, "unpacked"), format="unpacked")
    return {"cache": cache, "unpacked": os.path.join(out, "unpacked"), "binaries": binaries,
            "layout": os.path.join(out, "torch_compile_cache")}


def main(argv: list[str] | None = None) -> int:
    out = os.path.abspath((argv or sys.argv[1:])[0])
    from demo.build_cache import configure_torch, prepare_env

    prepare_env(os.path.join(out, "cache"))
    import torch  # noqa: F401

    configure_torch()
    print(json.dumps(save_artifacts(out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
