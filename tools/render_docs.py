"""Re-run every fxcache command the docs show and write its real output back.

    python -m tools.render_docs [--check] [FILE.md ...]

A shown command is an HTML comment naming a recorded cache and the arguments,
directly followed by a ``console`` block that the renderer owns::

    <!-- fxcache: v2.15 ls --by function -->
    ```console
    $ fxcache ls --by function
    (the output, as the command prints it)
    ```

CACHE is one of :data:`CACHES`, caches torch wrote that the repository keeps
(no torch is needed to read them). ARGS are split as a shell would (``shlex``);
``{trace}`` is that cache's ``TORCH_TRACE`` dir (for ``upgrade``), copied to
``<workspace>/trace`` (its files un-gzip'ed, as torch writes them) and shown as ``trace``;
``$PWD`` is the workspace, where the command runs (as a shell would read it), and holds in
``src`` the source files the cache was compiled from, where the repository keeps them
(:data:`SOURCES`). Two shell
endings are understood, and shown: ``| head -n N`` keeps the first N lines of
stdout, ``; echo $?`` adds the exit status.

How the runs are made stable, so that ``--check`` fails only when fxcache's
output changed:

- each page gets a workspace of its own (a temp dir): a copy of each cache it
  names, under ``<workspace>/<CACHE>/cache``, every file's atime and mtime set to
  one time, :data:`AGE` seconds before the run (so every age reads ``3.0d ago``
  and LRU orders are by name); the page's commands run in order, there (a pack
  the page writes is there for its unpack);
- the command runs as ``fxcache ARGS`` with ``TORCHINDUCTOR_CACHE_DIR`` set to
  the copy (torch's own way of naming the cache dir, so the shown command needs no
  ``--cache-dir``), ``FXCACHE_SOURCE_DIR`` mapping the directory the cache records its
  source under to ``<workspace>/src`` where :data:`SOURCES` names one (so the shown command
  needs no ``--source-dir``), ``COLUMNS=100``, ``NO_COLOR=1`` and ``FXCACHE_NO_INDEX=1``
  (nothing written outside the workspace, every run a cold one), no other
  ``TORCHINDUCTOR_*``, ``TORCH_*``, ``TRITON_*`` or ``FXCACHE_*`` variable, and ``TMPDIR``
  the workspace (torch's default cache dir, where precompiled headers live, is
  then an empty one, not this machine's);
- in what it prints, the copy's path reads :data:`SHOWN_CACHE_DIR`, the
  workspace's ``~/work``, and epoch seconds of the fixed time read :data:`SHOWN_EPOCH`.

stdout comes first, then stderr, as they were written. ``--check`` writes
nothing, prints a unified diff of each block that differs and exits 1 when any
does (``tests/cli/test_docs.py`` runs it over ``docs/**/*.md`` and
``README.md``). Without FILEs it renders those. Pages run in parallel.

Each command runs as ``python -m fxcache_cli`` in a fresh process (:func:`run_fresh`);
:func:`main` takes another :data:`Runner` (the tests fork each run from a process that
imported fxcache once: the same environment, working dir, stdin and output).
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

#: Name in the docs -> (cache dir, TORCH_TRACE dir or None), relative to the repository root.
CACHES: dict[str, tuple[str, str | None]] = {
    "v2.15": ("tests/fixtures/torch_versions/2.15.0/cache", None),
    "v2.14": ("tests/fixtures/torch_versions/2.14.1/cache", None),
    "upgrade": ("tests/fixtures/torch_upgrade/cache", "tests/fixtures/torch_upgrade/trace"),
}

#: Name in the docs -> (the directory its cache records its source files under, where the
#: repository keeps those files, relative to the repository root): copied to ``<workspace>/src``
#: and given as ``FXCACHE_SOURCE_DIR``, as the cache dir is given, so that a shown command
#: reads the source as on the machine that built the cache.
SOURCES: dict[str, tuple[str, str]] = {"v2.15": ("/work/wt-15", "tests/fixtures/torch_versions/src"),
                                       "v2.14": ("/work/wt-15", "tests/fixtures/torch_versions/src")}
#: How long before the run every file of a copied cache was last used, in seconds.
AGE = 3 * 86400
#: The cache dir as the docs show it (torch's default for a user named "you").
SHOWN_CACHE_DIR = "/tmp/torchinductor_you"
#: The fixed time as the docs show it, in epoch seconds (2026-01-01 00:00 UTC).
SHOWN_EPOCH = "1767225600"

_BLOCK = re.compile(
    r"^<!-- fxcache: (?P<cache>\S+) (?P<args>.+?) -->\n```console\n(?P<body>.*?)^```[ \t]*$",
    re.M | re.S,
)
# Variables of the caller's environment that would change what a command prints.
_NOT_PASSED = ("TORCHINDUCTOR_", "TORCH_", "TRITON_", "FXCACHE_")
Runner = Callable[[list[str], Mapping[str, str], Path], tuple[int, str, str]]
"""How a shown command runs: ``(fxcache's arguments, its whole environment, its working
dir) -> (exit code, stdout, stderr)``, stdin empty."""


def run_fresh(argv: list[str], env: Mapping[str, str], cwd: Path) -> tuple[int, str, str]:
    """``python -m fxcache_cli ARGV`` in a fresh process (the default :data:`Runner`);
    raises ``subprocess.TimeoutExpired`` after 120 s."""
    proc = subprocess.run([sys.executable, "-m", "fxcache_cli", *argv], cwd=cwd, env=dict(env),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


_HEAD = re.compile(r"\s*\|\s*head -n (\d+)\s*$")
_ECHO = re.compile(r"\s*;\s*echo \$\?\s*$")


@dataclass(frozen=True, slots=True)
class Shown:
    """One shown command of a page.

    Attributes:
        cache: a key of :data:`CACHES`.
        args: the arguments as written in the comment (placeholders included).
        start, end: the block's span in the page text (the console fence's body).
        body: the body as the page has it now.
    """

    cache: str
    args: str
    start: int
    end: int
    body: str

    @property
    def shown_line(self) -> str:
        """The ``$ fxcache ...`` line: the arguments with ``{trace}`` as the run names it."""
        return "$ fxcache " + self.args.replace("{trace}", "trace")


def find_shown(text: str) -> list[Shown]:
    """The shown commands of a page, in order. Raises ValueError on an unknown cache name."""
    found = []
    for m in _BLOCK.finditer(text):
        if m["cache"] not in CACHES:
            raise ValueError(f"unknown cache {m['cache']!r} (known: {', '.join(CACHES)})")
        found.append(Shown(m["cache"], m["args"].strip(), m.start("body"), m.end("body"), m["body"]))
    return found


def _workspace_cache(ws: Path, name: str, stamp: float) -> tuple[Path, Path | None]:
    """The workspace's copy of cache ``name`` (made once), every file's times set to ``stamp``."""
    cache_rel, trace_rel = CACHES[name]
    dest = ws / name
    cache, trace = dest / "cache", (ws / "trace" if trace_rel else None)
    if not cache.exists():
        shutil.copytree(REPO_ROOT / cache_rel, cache, symlinks=True)
        if name in SOURCES and not (ws / "src").exists():
            shutil.copytree(REPO_ROOT / SOURCES[name][1], ws / "src")
        if trace is not None:  # the repository keeps trace files gzip'ed; torch writes them plain
            trace.mkdir()
            for f in sorted((REPO_ROOT / trace_rel).iterdir()):
                with gzip.open(f) if f.suffix == ".gz" else f.open("rb") as src:
                    (trace / f.name.removesuffix(".gz")).write_bytes(src.read())
        for top in filter(None, (cache, trace)):
            for root, _dirs, files in os.walk(top):
                for n in files:
                    os.utime(os.path.join(root, n), (stamp, stamp), follow_symlinks=False)
    return cache, trace


def run_shown(shown: Shown, ws: Path, stamp: float, runner: Runner = run_fresh) -> str:
    """Run one shown command in workspace ``ws`` (by ``runner``); its block body (``$`` line
    and output, masked)."""
    cache, trace = _workspace_cache(ws, shown.cache, stamp)
    args, head, echo = shown.args, None, False
    if m := _ECHO.search(args):
        args, echo = args[: m.start()], True
    if m := _HEAD.search(args):
        args, head = args[: m.start()], int(m[1])
    argv = [a.replace("$PWD", str(ws)) for a in shlex.split(args.replace("{trace}", "trace"))]
    env = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_PASSED) and k != "FORCE_COLOR"}
    env.update(TORCHINDUCTOR_CACHE_DIR=str(cache), COLUMNS="100", NO_COLOR="1", FXCACHE_NO_INDEX="1",
               TMPDIR=str(ws), PYTHONPATH=os.pathsep.join(
                   [str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    if shown.cache in SOURCES:
        env["FXCACHE_SOURCE_DIR"] = f"{SOURCES[shown.cache][0]}={ws / 'src'}"
    returncode, out, err = runner(argv, env, ws)
    if head is not None:
        out = "".join(out.splitlines(keepends=True)[:head])
    out += err
    if echo:
        out += ("" if not out or out.endswith("\n") else "\n") + f"{returncode}\n"
    return shown.shown_line + "\n" + _mask(out, cache, ws, stamp)


def _mask(text: str, cache: Path, ws: Path, stamp: float) -> str:
    for real in {str(cache), str(cache.resolve())}:
        text = text.replace(real, SHOWN_CACHE_DIR)
    for real in {str(ws), str(ws.resolve())}:
        text = text.replace(real, "~/work")
    text = re.sub(rf"\b{int(stamp)}(\.0+)?\b", SHOWN_EPOCH + r"\1", text)
    if text and not text.endswith("\n"):
        text += "\n"
    return text


def render_page(path: Path, runner: Runner = run_fresh) -> tuple[str, str]:
    """(the page as it is, the page with every shown command's output made again by ``runner``)."""
    text = path.read_text()
    shown = find_shown(text)
    if not shown:
        return text, text
    stamp = float(int(time.time()) - AGE)
    with tempfile.TemporaryDirectory(prefix="fxcache-docs-") as tmp:
        ws = Path(tmp)
        bodies = [run_shown(s, ws, stamp, runner) for s in shown]
    parts, pos = [], 0
    for s, body in zip(shown, bodies, strict=True):
        parts += [text[pos: s.start], body]
        pos = s.end
    parts.append(text[pos:])
    return text, "".join(parts)


def default_pages() -> list[Path]:
    """``docs/**/*.md`` and ``README.md``, sorted."""
    return sorted((REPO_ROOT / "docs").rglob("*.md")) + [REPO_ROOT / "README.md"]


def main(argv: list[str] | None = None, runner: Runner = run_fresh) -> int:
    """The command line (module doc); each shown command runs by ``runner``. Returns the exit code."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if any output drifted")
    ap.add_argument("pages", nargs="*", type=Path)
    a = ap.parse_args(argv)
    pages = [p.resolve() for p in a.pages] or default_pages()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(lambda page: render_page(page, runner), pages))
    drifted = 0
    for path, (old, new) in zip(pages, results, strict=True):
        if old == new:
            continue
        drifted += 1
        rel = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
        if a.check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True), f"{rel} (as written)",
                f"{rel} (as fxcache prints it now)"))
        else:
            path.write_text(new)
            print(f"rendered {rel}")
    if a.check and drifted:
        print(f"{drifted} page(s) show output that fxcache no longer prints: "
              "run python -m tools.render_docs, review the diff, commit", file=sys.stderr)
    return 1 if a.check and drifted else 0


if __name__ == "__main__":
    sys.exit(main())
