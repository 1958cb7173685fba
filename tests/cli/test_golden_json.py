"""Every command's ``--json`` output on a real cache stays what it was.

The cache is the torch 2.15.0 fixture (``tests/fixtures/torch_versions/2.15.0/cache``,
real entries torch wrote; checked in, so this runs without torch). Each command's
JSON is compared with ``tests/golden/expected/<name>.json``, the cache dir's path
and times masked. A change of schema or of a verdict is a deliberate act: rerun with
``FXCACHE_GOLDEN_UPDATE=1``, read the diff, commit it.

The expected files were first recorded by the code before the package was split
into layers (issue 21); the only difference the split made is the reason codes
JSON now carries beside each reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.cli_run import fxcache_forked_as

REPO = Path(__file__).resolve().parents[1]
while not (REPO / "pyproject.toml").is_file():
    REPO = REPO.parent
FIXTURE = REPO / "tests" / "fixtures" / "torch_versions" / "2.15.0" / "cache"
SOURCE_DIR = [
    "--source-dir",
    f"/work/wt-15={REPO / 'tests' / 'fixtures' / 'torch_versions' / 'src'}",
]
"""The fixture's source as kept here (match-bound-failed goes without it: a call that fails a bound of every entry)."""
EXPECTED = REPO / "tests" / "golden" / "expected"
FX, AOT = "fh44t6kjp474", "a347nefad7co"  # an FX key with two entries; an AOTAutograd key

COMMANDS: dict[str, list[str]] = {
    "ls": ["ls", "--json"],
    "ls-entries": ["ls", "--entries", "--json"],
    "ls-by-function": ["ls", "--by", "function", "--sort", "name", "--json"],
    "ls-check": ["ls", "--check", "--json"],
    "dupes": ["dupes", "--json"],
    "df": ["df", "--json"],
    "verify": ["verify", "--json"],
    "audit": ["audit", "--json"],
    "guards": ["guards", FX, "--json"],
    "key": ["key", FX, "--json"],
    "key-aot": ["key", AOT, "--json"],
    "diff": ["diff", FX, "fgeizslgwd5l", "--json"],
    "match-hit": [
        *SOURCE_DIR,
        "match",
        "--fn",
        "same_graph_two_regions",
        "--shapes",
        "x=[40,3]",
        "--dynamic",
        "true",
        "--json",
    ],
    "match-bound-failed": [
        "match",
        "--fn",
        "same_graph_two_regions",
        "--shapes",
        "x=[10,3]",
        "--json",
    ],
    "match-explain": [
        *SOURCE_DIR,
        "match",
        "--fn",
        "calls_helper",
        "--shapes",
        "x=[8,3]",
        "--explain",
        "--json",
    ],
    "match-bad-shapes": ["match", "--shapes", "x=[oops", "--json"],
    "train": [
        *SOURCE_DIR,
        "match",
        "--fn",
        "train_mlp",
        "--shapes",
        "x=[7,4]",
        "--shapes",
        "target=[7,1]",
        "--json",
    ],
    "gc-plan": ["gc", "--dry-run", "--older-than", "0s", "--artifacts", "--json"],
    "gc-max-size": ["gc", "--dry-run", "--max-size", "100KB", "--json"],
    "rm-plan": ["rm", "--dry-run", FX, "--json"],
}

_TIME_KEYS = {
    "age_s",
    "mtime",
    "atime",
    "mtime_ns",
    "atime_ns",
    "last_used",
    "last_use",
    "idle_s",
    "age",
    "newest",
    "oldest",
    "last_used_s",
    "now",
    "oldest_use",
    "newest_use",
}


_DURATION = re.compile(r"\b\d+(\.\d+)?(s|m|h|d|w|y)\b")


def _mask(value, cache: str):
    if isinstance(value, dict):
        return {
            k: ("<T>" if k in _TIME_KEYS and v is not None else _mask(v, cache))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask(v, cache) for v in value]
    if isinstance(value, str):  # "unused for 35m": how long ago the fixture was checked out
        return _DURATION.sub("<DUR>", value.replace(cache, "<CACHE>"))
    return value


def _run(cache: Path, args: list[str]) -> tuple[int, object]:
    # What the command prints is all that is compared: a child of the session's CLI server
    # (tests.cli_run) prints what a fresh process would, without an interpreter's start-up.
    env = {
        **os.environ,
        "FXCACHE_NO_INDEX": "1",
        "COLUMNS": "120",
        "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = fxcache_forked_as(["--cache-dir", str(cache), *args], env, REPO, timeout=120)
    try:
        out = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:  # streamed listings: one JSON value per line
        out = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, {
        "exit": proc.returncode,
        "stdout": _mask(out, str(cache)),
        "stderr": proc.stderr.replace(str(cache), "<CACHE>"),
    }


@pytest.fixture(scope="module")
def fixture_cache(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("golden") / "cache"
    shutil.copytree(FIXTURE, dst, symlinks=True)
    # Every file last used 30 days ago (a checkout's times are the checkout's), so
    # every age-based rule of gc decides the same way on every machine.
    then = time.time() - 30 * 86400
    for p in [dst, *dst.rglob("*")]:
        os.utime(p, (then, then), follow_symlinks=False)
        # as a checkout under any umask would not: verify warns of dirs others can write
        if p.is_dir():
            p.chmod(0o755)
    return dst


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_json_output_is_unchanged(fixture_cache: Path, name: str):
    _, got = _run(fixture_cache, COMMANDS[name])
    path = EXPECTED / f"{name}.json"
    if os.environ.get("FXCACHE_GOLDEN_UPDATE"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())
    assert got == expected, f"fxcache {' '.join(COMMANDS[name])}: JSON differs from {path.name}"
