"""Record every fxcache command's human and ``--json`` output on a cache, to compare
two versions of fxcache (a refactor must leave every output as it was).

    python -m tools.record_golden CACHE_DIR OUT_DIR [--trace TRACE]

Each command's stdout, stderr and exit status go to ``OUT_DIR/<n>-<slug>.txt``.
Keys and functions are discovered from the cache itself (``ls --json``), so the
same command list runs on any cache. The cache dir's path and ages ("3m ago")
are masked, so two runs minutes apart compare equal; then ``diff -r`` the two
dirs. Nothing here deletes: gc and rm run with ``--dry-run`` only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

_AGE = re.compile(
    r"\b\d+(\.\d+)?\s?(s|m|h|d|w|y|min|mins|sec|secs|second|seconds|minute|minutes|hour|hours|day|days)\b( ago)?"
)
_FLOAT_AGE = re.compile(r'"(age_s|idle_s|last_used_age_s|mtime|atime|mtime_ns|atime_ns|last_used|age)": [0-9.e+-]+')


def _run(args: list[str], cache: Path, env: dict[str, str]) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "fxcache_cli", "--cache-dir", str(cache), *args],
        capture_output=True, text=True, env=env, timeout=600,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _mask(text: str, cache: Path) -> str:
    text = text.replace(str(cache), "<CACHE>")
    text = _FLOAT_AGE.sub(lambda m: f'"{m.group(1)}": <T>', text)
    return _AGE.sub("<AGE>", text)


def commands(cache: Path, env: dict[str, str], trace: str | None) -> list[list[str]]:
    """Every command and mode worth comparing on this cache, keys and functions
    taken from the cache itself."""
    rc, out, _ = _run(["ls", "--json"], cache, env)
    rows = json.loads(out) if rc == 0 and out.strip() else []
    if isinstance(rows, dict):
        rows = rows.get("keys", rows.get("results", []))
    keys = [r["key"] for r in rows if isinstance(r, dict) and "key" in r]
    fns = sorted({r.get("function") for r in rows if isinstance(r, dict) and r.get("function")})
    cmds: list[list[str]] = [
        ["ls"], ["ls", "--entries"], ["ls", "--by", "function"], ["ls", "--sort", "size"],
        ["ls", "--sort", "name", "--limit", "3"], ["ls", "--check"], ["ls", "--dupes"],
        ["df"], ["verify"], ["match", "--audit"],
        ["gc", "--dry-run"], ["gc", "--dry-run", "--max-size", "1MB"],
        ["gc", "--dry-run", "--older-than", "0s"], ["gc", "--dry-run", "--dangling"],
        ["gc", "--dry-run", "--artifacts", "--older-than", "0s"],
        ["gc", "--dry-run", "--unreadable"], ["gc", "--dry-run", "--locks"],
        ["ls", "--fn", "no_such_function"], ["key", "zzzz"], ["match", "--shapes", "x=[oops"],
    ]
    for k in keys[:12]:
        cmds += [["guards", k[:12]], ["key", k[:12]], ["rm", "--dry-run", k[:12]]]
    for a, b in zip(keys[:6], keys[1:7], strict=False):
        cmds.append(["diff", a[:12], b[:12]])
    for fn in fns[:20]:
        cmds += [["ls", "--fn", fn, "--entries"], ["match", "--fn", fn, "--shapes", "x=[8,3]"],
                 ["match", "--fn", fn, "--shapes", "x=[40,3]", "--dynamic", "true", "--explain"]]
    if trace:
        cmds += [["explain", trace], ["explain", trace, "--all"]]
    out = []
    for c in cmds:
        out.append(c)
        if c[0] not in ("gc", "rm") or "--json" not in c:
            out.append([*c, "--json"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cache", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--trace")
    a = ap.parse_args()
    cache = a.cache.resolve()
    env = dict(os.environ, COLUMNS="120", FXCACHE_NO_INDEX="1", NO_COLOR="1")
    a.out.mkdir(parents=True, exist_ok=True)
    for i, c in enumerate(commands(cache, env, a.trace)):
        rc, out, err = _run(c, cache, env)
        slug = re.sub(r"[^A-Za-z0-9_.=-]+", "_", " ".join(c))[:80]
        (a.out / f"{i:03d}-{slug}.txt").write_text(
            f"$ fxcache {' '.join(c)}\nexit {rc}\n--- stdout\n{_mask(out, cache)}--- stderr\n{_mask(err, cache)}"
        )
    print(f"recorded {i + 1} outputs into {a.out}")


if __name__ == "__main__":
    main()
