"""Write a large synthetic Inductor cache made of real entries (for the scale benchmarks).

    python -m benchmarks.gen_cache SRC_CACHE DST_CACHE N_ENTRIES [--per-key M] [--seed S]

``SRC_CACHE`` is a real cache (``python -m demo.build_cache``). Its inference
AOTAutograd entries whose forward FX entry carries the same guards string are
the templates. For every generated key pair the template's bytes are copied
with, replaced in place (same lengths, so the pickles stay valid and torch
loads them):

* the FX key (``_fx_graph_cache_key`` in the FX entry, ``fx_graph_cache_info``
  in the AOTAutograd entry) and the wrapper module's code key (``cache_key``);
* the guards string, in both entries, with its first integer constant changed
  to another of the same width, so every entry of a key covers another region
  and an AOTAutograd entry still names its FX entry's guards exactly.

Each FX entry gets its wrapper module (the template's real ``.py``) under the
new code key. Entry names are the sha256 of the new bytes, as torch names
them; mtimes and atimes spread over 30 days. ``N_ENTRIES`` counts entry
files (half AOTAutograd, half FX); ``M`` entries per key (at most 8).

Nothing here imports torch; the generated cache is checked by loading some of
its entries with torch in benchmarks/bench_scale.py.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.keys import KeyKind, sha256_hash
from fxcache_core.cache.scan import scan_artifacts, scan_cache
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry

_INT_RE = re.compile(r"\b\d+\b")
DAY = 86400.0


@dataclass(frozen=True)
class Template:
    aot: bytes
    fx: bytes
    fx_key: str
    guards: str
    wrapper_key: str
    wrapper: bytes


def templates(src: Path) -> list[Template]:
    """Inference AOTAutograd entries (no backward) whose FX entry has the same guards."""
    cat = Catalog(scan_cache(src))
    code = {a.key: a for a in scan_artifacts(src) if a.file.name.endswith(".py")}
    out = []
    for k in cat.scan.keys:
        if k.kind is not KeyKind.AOT_AUTOGRAD:
            continue
        for e in k.entries:
            d = cat.load(e)
            if not isinstance(d, DecodedEntry) or d.backward is not None or d.forward is None:
                continue
            g = d.guards_expr or ""
            fx = cat.fx_entry_for(d.forward.key, d.forward.guards_expr)
            fd = cat.load(fx) if fx is not None else None
            if (fx is None or not isinstance(fd, DecodedEntry) or fd.guards_expr != g or not g
                    or not _INT_RE.search(g) or fd.wrapper_key not in code):
                continue
            aot, fxb = e.path.read_bytes(), fx.path.read_bytes()
            if aot.count(d.forward.key.encode()) != 1 or fxb.count(d.forward.key.encode()) != 1:
                continue
            out.append(Template(aot, fxb, d.forward.key, g, fd.wrapper_key,
                                code[fd.wrapper_key].file.path.read_bytes()))
    return out


def _variant(guards: str, j: int) -> str:
    """``guards`` with its first integer constant replaced by the j-th other value of its width."""
    m = _INT_RE.search(guards)
    assert m is not None
    w = len(m.group(0))
    lo = 10 ** (w - 1) if w > 1 else 2
    values = [v for v in range(lo, 10 ** w) if str(v) != m.group(0)]
    return guards[: m.start()] + str(values[j % len(values)]) + guards[m.end():]


def _write(path: Path, data: bytes, when: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    os.utime(path, (when, when))


def generate(src: Path, dst: Path, n_entries: int, per_key: int = 4, seed: int = 0) -> dict[str, int]:
    """Write the cache; returns counts (keys, entries, code files, bytes)."""
    if not 1 <= per_key <= 8:
        raise ValueError("--per-key must be 1..8 (one-digit guard constants give 8 variants)")
    temps = templates(src)
    if not temps:
        raise SystemExit(f"{src}: no template entries (build it with python -m demo.build_cache)")
    rng = random.Random(seed)
    now = __import__("time").time()
    n_keys = max(1, n_entries // (2 * per_key))
    written = {"keys": 0, "entries": 0, "code": 0, "bytes": 0}
    for i in range(n_keys):
        t = temps[i % len(temps)]
        fx_key = "f" + sha256_hash(f"fx{seed}.{i}".encode())
        aot_key = "a" + sha256_hash(f"aot{seed}.{i}".encode())
        for j in range(per_key):
            g = _variant(t.guards, j)
            wk = "c" + sha256_hash(f"code{seed}.{i}.{j}".encode())
            fx = (t.fx.replace(t.fx_key.encode(), fx_key.encode())
                  .replace(t.guards.encode(), g.encode()).replace(t.wrapper_key.encode(), wk.encode()))
            aot = t.aot.replace(t.fx_key.encode(), fx_key.encode()).replace(t.guards.encode(), g.encode())
            when = now - rng.random() * 30 * DAY
            _write(KeyKind.FX_GRAPH.key_dir(dst, fx_key) / sha256_hash(fx), fx, when)
            _write(KeyKind.AOT_AUTOGRAD.key_dir(dst, aot_key) / sha256_hash(aot), aot, when)
            _write(KeyKind.CODE.key_dir(dst, wk) / f"{wk}.py", t.wrapper, when)
            written["entries"] += 2
            written["code"] += 1
            written["bytes"] += len(fx) + len(aot) + len(t.wrapper)
        written["keys"] += 2
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("src", type=Path)
    p.add_argument("dst", type=Path)
    p.add_argument("n_entries", type=int)
    p.add_argument("--per-key", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    counts = generate(a.src, a.dst, a.n_entries, a.per_key, a.seed)
    print(counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
