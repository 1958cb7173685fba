"""Make the Triton cache layout fixture (tests/data/triton_cache/) with Triton's own cache manager.

There is no GPU (and no Triton) where the tests run, so the layout is written
once, here, by Triton's ``FileCacheManager`` (triton/runtime/cache.py), in
the order ``triton.compiler.compile`` writes a kernel (triton/compiler/compiler.py:
each IR stage ``<name>.<ext>`` with ``put``, the metadata ``<name>.json``,
then the group file ``__grp__<name>.json`` with ``put_group``). The payloads
are small stand-ins for real IR and binaries; names, dirs, temp-file protocol
and group files are Triton's. Run with a Python that has triton installed
(torch's CUDA wheels bring it)::

    /path/to/venv-with-triton/bin/python tools/make_triton_layout.py

Group files hold absolute paths; the committed copy has the cache dir replaced
by ``@@TRITON_CACHE_DIR@@`` (as torch's ``TritonBundler`` replaces it when it
writes a bundle back, _inductor/triton_bundler.py), which
``tests/synth.py::install_triton_layout`` puts back.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "data"
OUT = HERE / "triton_cache"
PLACEHOLDER = "@@TRITON_CACHE_DIR@@"

# (kernel name, stages): what triton.compile writes for a CUDA kernel.
KERNELS = [
    ("triton_poi_fused_add_0", ("source", "ttir", "ttgir", "llir", "ptx", "cubin")),
    ("triton_per_fused_sum_1", ("source", "ttir", "ttgir", "llir", "ptx", "cubin")),
    ("triton_red_fused_mean_2", ("source", "ttir", "ttgir", "llir", "ptx", "cubin")),
]


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="triton-layout-"))
    os.environ["TRITON_CACHE_DIR"] = str(tmp)
    from triton import __version__
    from triton.runtime.cache import get_cache_manager

    for name, stages in KERNELS:
        key = hashlib.sha256(f"{name}-{__version__}".encode()).hexdigest()
        mgr = get_cache_manager(key)
        group: dict[str, str] = {}
        for ext in stages:
            data = (bytes(range(256)) * 8) if ext == "cubin" else f"// {ext} of {name}\n" * 20
            group[f"{name}.{ext}"] = mgr.put(data, f"{name}.{ext}")
        meta = {"name": name, "num_warps": 4, "num_stages": 3, "triton_version": __version__,
                "hash": key, "target": {"backend": "cuda", "arch": 90, "warp_size": 32}}
        group[f"{name}.json"] = mgr.put(json.dumps(meta), f"{name}.json", binary=False)
        mgr.put_group(f"{name}.json", group)
    if OUT.exists():
        shutil.rmtree(OUT)
    shutil.copytree(tmp, OUT)
    for p in OUT.rglob("__grp__*.json"):
        p.write_text(p.read_text().replace(str(tmp), PLACEHOLDER))
    shutil.rmtree(tmp)
    (HERE / "triton_cache.version").write_text(f"triton {__version__}\n")
    sys.stdout.write(f"wrote {OUT} (triton {__version__})\n")


if __name__ == "__main__":
    main()
