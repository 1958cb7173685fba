"""How fxcache's commands write: consoles, plain columns, JSON, progress, errors.

Human output goes to stdout through :func:`emit` (rich markup on a terminal,
plain text in a pipe) or :func:`columns` (long listings); scripts get JSON
through :func:`emit_json` / :func:`emit_json_listing`. Errors are one line on
stderr (:func:`error_line`); :func:`fail` adds exit code 2.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Iterable
from typing import Any, NoReturn

import typer
from rich.console import Console

# Piped output (CI logs, `| less`) gets a wide console so keys are never wrapped.
_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 200
out = Console(highlight=False, width=_WIDTH, soft_wrap=True)
err = Console(stderr=True, highlight=False)


class ReadProgress:
    """A transient rich progress bar on stderr (reading entries, fetching remote
    values), shown only once the work has taken a second, only on a terminal,
    and never with --json."""

    def __init__(self, total: int, enabled: bool, label: str = "reading entries") -> None:
        self.total, self.enabled, self.n = total, enabled and err.is_terminal, 0
        self.label = label
        self.t0 = time.monotonic()
        self.bar: Any = None

    def __call__(self) -> None:
        """One more item done (shown every 64)."""
        self.n += 1
        if self.n % 64 == 0:
            self._show()

    def advance(self, n: int) -> None:
        """``n`` more items done."""
        self.n += n
        self._show()

    def _show(self) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.t0 < 1.0:
                return
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            # No refresh thread (auto_refresh): fxcache may fork read-ahead workers
            # while the bar is up, and a fork must not catch a thread holding a lock.
            self.bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                                console=err, transient=True, auto_refresh=False)
            self.bar.start()
            self.task = self.bar.add_task("read", total=self.total)
            self.shown = 0.0
        self.bar.update(self.task, completed=min(self.n, self.total))
        now = time.monotonic()
        if now - self.shown >= 0.1:
            self.bar.refresh()
            self.shown = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
            self.enabled = False


def error_line(msg: str) -> None:
    """One unwrapped line on stderr, whatever the terminal width."""
    sys.stderr.write("fxcache: error: " + " ".join(msg.split()) + "\n")


def fail(msg: str, code: int = 2) -> NoReturn:
    error_line(msg)
    raise typer.Exit(code)


def age(ts: float | None, now: float) -> str:
    from fxcache_core.units import format_duration

    return "-" if ts is None else f"{format_duration(now - ts)} ago"


@functools.lru_cache(maxsize=4096)
def short_path(path: str) -> str:
    """A source file as the user knows it: relative to the current dir when inside it
    (cached: a listing names a few files thousands of times)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


@functools.lru_cache(maxsize=4096)
def origin_text(origin: Any) -> str:
    """``fn (file:line)`` for a key's origin (a resume frame named after its function), ``-`` if unknown."""
    if origin is None:
        return "-"
    from fxcache_core.origin import frame_label

    return f"{frame_label(origin.function)} ({short_path(origin.file)}:{origin.line})"


_TAG_RE = None


def emit(text: str) -> None:
    """Print rich markup; when stdout is not a terminal (a pipe, a file), strip the
    markup directly: what rich prints there, minus ~0.1 ms a line of rendering."""
    global _TAG_RE
    if out.is_terminal:
        out.print(text)
        return
    if _TAG_RE is None:
        import re

        _TAG_RE = re.compile(r"(?<!\\)\[/?(?:bold|dim|red|green|yellow|cyan)\]")
    sys.stdout.write(_TAG_RE.sub("", text).replace("\\[", "[") + "\n")


def plural(count: int, word: str, plural: str | None = None) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def emit_json_listing(obj: dict[str, Any], lists: dict[str, Iterable[Any]]) -> None:
    """``obj`` as JSON, each ``obj[key]`` for ``key`` in ``lists`` the list of
    ``lists[key]``, written one item a line as they come: a gc plan over a large
    cache lists tens of thousands of files, and one string of it all would double
    the command's peak memory."""
    w = sys.stdout.write
    w("{")
    for n, (k, v) in enumerate(obj.items()):
        w(("," if n else "") + "\n  " + json.dumps(k) + ": ")
        if k not in lists:
            w(json.dumps(v, default=str))
            continue
        sep = "[\n    "
        for it in lists[k]:
            w(sep + json.dumps(it, default=str))
            sep = ",\n    "
        w("[]" if sep.startswith("[") else "\n  ]")
    w("\n}\n")




def columns(title: str, rows: list[tuple[str, ...]], right: set[int]) -> None:
    """Print ``title`` then ``rows`` (the first one a header) as plain columns,
    ``right`` the right-aligned ones. Not a rich Table: a large cache has tens of
    thousands of rows, and a Table costs ~0.2 ms a row (benchmarks/bench_scale.py)."""
    widths = [max(map(len, col)) for col in zip(*rows, strict=True)]
    fmt = "  ".join(f"{{:{'>' if i in right else '<'}{w}}}" for i, w in enumerate(widths))
    lines = [title, *(fmt.format(*r).rstrip() for r in rows)]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
