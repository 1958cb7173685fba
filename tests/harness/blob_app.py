"""A small app for torch's other cache forms (tests/torch/test_blobs.py), run in a process of its own.

``python -m tests.harness.blob_app CACHE_DIR [--bundled] [--save-blob PATH] [--load-blob PATH]
[--batch N] [--trace DIR] [--standalone OUT]``: runs pack_app's app (:func:`tests.harness.pack_app.run_app`):
a module with a marked dynamic batch (inference, called with a
batch of N, default 3) and a training step with backward (one AOTAutograd entry with a
backward graph, one without), calls each, and prints one JSON line: torch's cache
counters (``counters["inductor"]``/``["aot_autograd"]``) and the artifacts of the blob
it saved or loaded. ``--bundled``: ``torch._functorch.config.bundled_autograd_cache``
on (the AOTAutograd entries carry their compiled graphs; the FX graph cache is not
used). ``--save-blob``: ``torch.compiler.save_cache_artifacts()`` after the calls,
written there. ``--load-blob``: ``torch.compiler.load_cache_artifacts`` of that file
before the calls (what a user does with a shipped blob). ``--trace``: the run writes a
``TORCH_TRACE`` there (:func:`tests.harness.traced.trace_this_process`: set for torch's
import, or started after it in a child of the tests' zygote). ``--standalone``: then, in this process, the
``standalone_compile`` artifacts of :func:`tests.harness.standalone_app.save_artifacts`
below OUT, with their own cache dir (the JSON's ``standalone``: their paths). ``cpu_s``:
the CPU seconds this process and the compilers it waited for used.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("cache_dir")
    p.add_argument("--bundled", action="store_true")
    p.add_argument("--save-blob")
    p.add_argument("--load-blob")
    p.add_argument("--batch", type=int, default=3)
    p.add_argument("--trace")
    p.add_argument("--standalone")
    a = p.parse_args(argv)
    if a.trace:
        from tests.harness.traced import trace_this_process

        trace_this_process(a.trace)
    from demo.build_cache import configure_torch, prepare_env

    prepare_env(a.cache_dir)
    import torch

    configure_torch()
    import torch._functorch.config as functorch_config

    functorch_config.bundled_autograd_cache = a.bundled
    loaded = None
    if a.load_blob:
        with open(a.load_blob, "rb") as f:
            info = torch.compiler.load_cache_artifacts(f.read())
        loaded = {k: list(v) for k, v in info.artifacts.items()} if info is not None else None

    from tests.harness.pack_app import run_app

    run_app(torch, batch=a.batch)
    from torch._dynamo.utils import counters

    saved = None
    if a.save_blob:
        got = torch.compiler.save_cache_artifacts()
        assert got is not None, "torch recorded no cache artifact"
        blob, info = got
        with open(a.save_blob, "wb") as f:
            f.write(blob)
        saved = {k: list(v) for k, v in info.artifacts.items()}
    out = {"inductor": dict(counters["inductor"]), "aot_autograd": dict(counters["aot_autograd"]),
           "saved": saved, "loaded": loaded}
    if a.standalone:  # after the counters and the blob: they are the app's alone
        from tests.harness.standalone_app import save_artifacts

        out["standalone"] = save_artifacts(a.standalone)
    import resource

    out["cpu_s"] = round(sum(getattr(resource.getrusage(who), f) for who in
                             (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime")), 2)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
