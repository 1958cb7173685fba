"""``torch._inductor.standalone_compile`` artifacts as vLLM writes them (tests/torch/test_blobs.py), in a fresh process.

``python -m tests.harness.standalone_app OUT``: captures the Dynamo graphs of two small
functions (a backend that keeps them), compiles each with ``standalone_compile``
(``dynamic_shapes="from_graph"``) with ``OUT/cache`` as the cache dir, saves the first
as ``format="unpacked"`` at ``OUT/unpacked`` and both as ``format="binary"`` in vLLM's
layout, ``OUT/torch_compile_cache/<hash>/rank_0_0/backbone/artifact_<i>``, and prints
one JSON line with the paths.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str] | None = None) -> int:
    out = os.path.abspath((argv or sys.argv[1:])[0])
    from demo.build_cache import configure_torch, prepare_env

    prepare_env(os.path.join(out, "cache"))
    import torch

    configure_torch()
    from torch._inductor import standalone_compile

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
    for i, (fn, args) in enumerate(((scale, (torch.randn(8, 4), torch.randn(8, 4))), (act, (torch.randn(5, 3),)))):
        gm, ex = capture(fn, *args)
        art = standalone_compile(gm, ex, dynamic_shapes="from_graph")
        path = os.path.join(layout, f"artifact_{i}")
        art.save(path=path, format="binary")
        binaries.append(path)
        if i == 0:
            art.save(path=os.path.join(out, "unpacked"), format="unpacked")
    print(json.dumps({"cache": os.path.join(out, "cache"), "unpacked": os.path.join(out, "unpacked"),
                      "binaries": binaries, "layout": os.path.join(out, "torch_compile_cache")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
