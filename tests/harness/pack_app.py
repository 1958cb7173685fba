"""A small app for ``fxcache pack``'s round trip (tests/torch/test_pack.py), run in a fresh process.

``python -m tests.harness.pack_app CACHE_DIR [--trace DIR]``: compiles a module with a
marked dynamic batch (inference) and a training step with backward of the same
module (so one AOTAutograd entry with a forward and a backward FX entry, and one
without backward), calls each, and prints one JSON line: torch's cache counters
(``counters["inductor"]``/``["aot_autograd"]``), and the mtime (ns) of each
compiled library under the cache dir after the run (a library rebuilt by this run
has a new one). ``--trace``: under TORCH_TRACE=DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def run_app(torch, batch: int) -> None:
    """Compile and call the app: ``Head`` (a module with a marked dynamic batch, called
    with ``batch`` rows, under ``no_grad``) and ``train_step`` (the same module with a
    loss and its backward, on 5 rows). ``torch``: the module, imported by the caller
    once its cache dir is set (tests/harness/blob_app.py runs the same app)."""

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.lin(x)) * 2

    torch.manual_seed(0)
    model = Head()
    infer = torch.compile(model)

    def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    step = torch.compile(train_step)
    x = torch.randn(batch, 8)
    torch._dynamo.mark_dynamic(x, 0)
    with torch.no_grad():
        infer(x)
    step(torch.randn(5, 8), torch.randn(5, 4))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("cache_dir")
    p.add_argument("--trace")
    a = p.parse_args(argv)
    if a.trace:
        from tests.harness.traced import trace_this_process

        trace_this_process(a.trace)
    from demo.build_cache import configure_torch, prepare_env

    cache = prepare_env(a.cache_dir)
    import torch

    configure_torch()
    run_app(torch, batch=3)
    from torch._dynamo.utils import counters

    libs = {}
    for d, _, files in os.walk(cache):
        for f in files:
            if f.endswith(".main.so"):
                libs[os.path.relpath(os.path.join(d, f), cache)] = os.stat(os.path.join(d, f)).st_mtime_ns
    print(json.dumps({"inductor": dict(counters["inductor"]), "aot_autograd": dict(counters["aot_autograd"]),
                      "libraries": libs}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
