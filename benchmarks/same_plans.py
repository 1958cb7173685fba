"""Two builds of fxcache on one cache: are their ``gc``/``rm``/``df`` outputs byte for byte the same?

    python -m benchmarks.same_plans CACHE BUILD_A BUILD_B [--policies FILE]

(never part of ``make test``.) ``BUILD_A`` and ``BUILD_B`` are source trees of fxcache
(``git archive REV | tar -x -C DIR``), as for :mod:`benchmarks.bench_ab`. Each build gets an
index dir of its own (its row format may differ), filled first by a ``match``; then every
command line of the policies (one a line, ``--dry-run --json`` and the like included;
default :data:`POLICIES`) runs once per build, and the two stdouts and exit codes are
compared: ``SAME``, ``SAME-BUT-AGES`` (equal once the ages written as ``for <duration>``
and each build's own index dir are masked: the runs are seconds apart) or ``DIFF`` with
the first differing lines. Exit status 1 when any is ``DIFF``. A plan that rests on
access times is the same only on the same cache: run both builds on one dir, not copies.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

POLICIES = (
    "gc --max-size 1B --dry-run --json",
    "gc --max-size 6MB --dry-run --json",
    "gc --older-than 0s --dry-run --json",
    "gc --older-than 0s --artifacts --dry-run --json",
    "gc --keep-last 1 --dry-run --json",
    "gc --unreadable --dry-run --json",
    "gc --dangling --dry-run --json",
    "gc --locks --dry-run --json",
    "gc --unreadable --dangling --locks --older-than 1s --dry-run --json",
    "gc --max-size 1B --keep-costly 1s --dry-run --json",
    "gc --max-size 1B --keep-last 2 --dry-run --json",
    "gc --stale --dry-run --json",
    "df --json",
)

_AGES = re.compile(r"for [0-9][^\",]*")


def _run(build: Path, cache: Path, args: list[str], index: str) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(build), FXCACHE_INDEX_DIR=index)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    p = subprocess.run(
        [sys.executable, "-m", "fxcache_cli", "--cache-dir", str(cache), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=build,
        check=False,
    )
    return p.returncode, p.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", type=Path)
    ap.add_argument("builds", type=Path, nargs=2)
    ap.add_argument(
        "--policies",
        type=Path,
        help="one command line a line (default: a dozen gc policies and df)",
    )
    a = ap.parse_args(argv)
    policies = a.policies.read_text().splitlines() if a.policies else list(POLICIES)
    differ = False
    with tempfile.TemporaryDirectory() as tmp:
        index = [os.path.join(tmp, f"index-{n}") for n in "ab"]
        for build, idx in zip(a.builds, index, strict=True):
            _run(build.resolve(), a.cache, ["match", "--shapes", "x=[5,3]"], idx)
        for line in filter(None, (p.strip() for p in policies)):
            args = shlex.split(line)
            (rc_a, out_a), (rc_b, out_b) = (
                _run(b.resolve(), a.cache, args, i) for b, i in zip(a.builds, index, strict=True)
            )
            masked = [
                _AGES.sub("for N", o).replace(i, "INDEX")
                for o, i in ((out_a, index[0]), (out_b, index[1]))
            ]
            if rc_a == rc_b and out_a == out_b:
                print(f"SAME rc={rc_a} {len(out_a)} chars: {line}")
            elif rc_a == rc_b and masked[0] == masked[1]:
                print(f"SAME-BUT-AGES rc={rc_a}: {line}")
            else:
                differ = True
                print(f"DIFF rc={rc_a}/{rc_b}: {line}")
                diff = difflib.unified_diff(
                    masked[0].splitlines(), masked[1].splitlines(), lineterm="", n=0
                )
                for d in list(diff)[2:10]:
                    print("    " + d[:200])
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
