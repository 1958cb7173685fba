"""Record the installed torch's default settings as FX key components: the table
``fxcache key`` compares a key's settings against (``fxcache_core/keying/torch_defaults.json``).

    python -m tools.record_defaults [OUT]    # default: fxcache_core/keying/torch_defaults.json

    # another torch's table, read by fxcache_core.keying.defaults.default_settings_for:
    PYTHONPATH=. /tmp/t214/bin/python -m tools.record_defaults fxcache_core/keying/torch_defaults-2.14.1.json

In a fresh process with no ``TORCHINDUCTOR_*``/``TORCH_COMPILE_*`` variables
but the cache dir, it compiles ``f(x) = x + 1`` with ``torch.compile`` and
nothing else set, reads the debug lines torch wrote into the FX entry (with
fxcache's own decoder: the very lines ``fxcache key`` reads), and keeps the
components that are settings (:func:`fxcache_core.keying.anatomy.is_setting`),
each with the hash and the value torch printed for it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _record(cache_dir: str) -> dict[str, tuple[str, str]]:
    import torch

    def f(x):
        return x + 1

    torch.compile(f)(torch.randn(8, 4))
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.decode.entries import DecodedEntry
    from fxcache_core.keying.anatomy import is_setting, parse_debug_lines

    scan = scan_cache(Path(cache_dir))
    (key,) = [k for k in scan.keys if k.kind.value == "fxgraph"]
    d = Catalog(scan).load(key.entries[0], full=True)
    assert isinstance(d, DecodedEntry)
    return {c.name: (c.hash[:16], c.value[:200]) for c in parse_debug_lines(d.debug_lines)
            if is_setting(c.group)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        print(repr(_record(args[1])))
        return 0
    out = Path(args[0]) if args else REPO / "fxcache_core" / "keying" / "torch_defaults.json"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCHINDUCTOR_", "TORCH_COMPILE_", "TORCHDYNAMO_"))}
    with tempfile.TemporaryDirectory() as tmp:
        env["TORCHINDUCTOR_CACHE_DIR"] = tmp
        env["PYTHONPATH"] = str(REPO)
        proc = subprocess.run([sys.executable, "-m", "tools.record_defaults", "--child", tmp],
                              cwd=REPO, env=env, capture_output=True, text=True, check=True)
    import ast

    import torch

    table = ast.literal_eval(proc.stdout.strip().splitlines()[-1])
    from fxcache_core.keying.defaults import dumps

    out.write_text(dumps(torch.__version__.split("+")[0], table), encoding="utf-8")
    print(f"{len(table)} settings at torch {torch.__version__}'s defaults -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
