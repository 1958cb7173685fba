"""How fxcache's commands write: one output object for text, tables, JSON, questions.

Like huggingface_hub's ``cli/_output.py``: every command hands its values to
:data:`out` once. Human output goes to stdout through :meth:`Output.text` (rich
markup on a terminal, plain text in a pipe), :meth:`Output.table` (long
listings as plain columns, without rich's cost per row) or :meth:`Output.print`
(rich renderables); scripts get JSON through :meth:`Output.result` and
:meth:`Output.listing` (streamed item by item: a large gc plan). Errors are one
line on stderr (:func:`error_line`); :func:`fail` adds exit code 2. Statuses are
coloured from one table (:data:`COLOUR`, :func:`paint`); keys and entry names
are cut by one helper (:func:`short`).

Core texts name their parameters through :func:`fxcache_core.errors.param`;
``main()`` installs the CLI's flags as their names before a command runs, so a
core message that says ``param('inputs')`` reads ``--inputs`` here.

Anything that comes from a cache (file names, guards strings, reasons quoting
pickle content, debug lines) is untrusted text: it goes into human output
through :func:`shown` (plain) or :func:`safe` (inside rich markup), which write
every control character, bidi override and undecodable byte as an escape, so
nothing a cache holds reaches the terminal as a control sequence and a newline
in a name never splits a row. :func:`emit`, :func:`columns`, :data:`out` and
:func:`error_line` apply the same escaping to whatever they are given, as a
net under the explicit calls (keeping the newlines the commands write
themselves). JSON is written ASCII-only (``json.dumps``' default): names that
are not UTF-8 come out as ``\\udcXX`` escapes, which ``os.fsencode`` of the
decoded string turns back into the exact bytes.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
import time
from collections.abc import Iterable
from typing import Any, NoReturn

import typer

# C0 and C1 controls, DEL, line/paragraph separators, bidi embeddings/overrides/
# isolates, and lone surrogates (the bytes of a name that is not UTF-8, or a
# surrogate a pickle stored): never written raw.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:  # os.fsdecode's surrogateescape: one byte of a non-UTF-8 name
        return f"\\x{o - 0xDC00:02x}"
    return _NAMED.get(c) or (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")


def shown(text: str, keep_newlines: bool = False) -> str:
    """Untrusted text (from a cache) as it may be shown: every control character
    (``\\x1b``, ``\\n``...), bidi control (``\\u202e``) and undecodable byte of a
    name (``\\xff``) written as an escape, the rest as it is."""
    if text.isascii() and text.isprintable():  # the usual case, checked at C speed
        return text
    return (_UNSAFE_BUT_NEWLINE if keep_newlines else _UNSAFE).sub(_escape_char, text)


def safe(text: Any) -> str:
    """Untrusted text for a rich-markup string: :func:`shown`, then markup-escaped
    (text without ``[`` and not ending in a backslash is what rich's ``escape``
    returns unchanged: not passed to it)."""
    s = shown(str(text))
    if "[" not in s and not s.endswith("\\"):
        return s
    from rich.markup import escape

    return escape(s)


def safe_lines(text: str) -> str:
    """:func:`safe` for multi-line text whose lines are meant (a printed graph, a
    sympy 2-D form): every other control character escaped."""
    from rich.markup import escape

    return escape(shown(text, keep_newlines=True))


class ReadProgress:
    """A transient rich progress bar on stderr (reading entries, fetching remote
    values), shown only once the work has taken a second, only on a terminal,
    and never with --json."""

    def __init__(self, total: int, enabled: bool, label: str = "reading entries") -> None:
        self.total, self.enabled, self.n = total, enabled and out.err.is_terminal, 0
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
                                console=out.err, transient=True, auto_refresh=False)
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
    """One unwrapped line on stderr, whatever the terminal width; what it quotes
    from a cache shown escaped (:func:`shown`)."""
    sys.stderr.write("fxcache: error: " + shown(" ".join(msg.split())) + "\n")


def deprecated(old: str, new: str) -> None:
    """The one stderr line of a deprecated spelling: ``fxcache: 'match --audit' is
    deprecated; use 'fxcache audit'`` (its stdout and exit code are the new spelling's)."""
    sys.stderr.write(f"fxcache: '{old}' is deprecated; use '{new}'\n")


def fail(msg: str, code: int = 2) -> NoReturn:
    """:func:`error_line`, then exit with ``code`` (``_errors.BAD_INPUT``, which
    this module cannot import: ``_errors`` writes its lines through it)."""
    error_line(msg)
    raise typer.Exit(code)


def age(ts: float | None, now: float) -> str:
    from fxcache_core.quantities import format_duration

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
    """The function a key was compiled from as every command shows it, ``fn (file:line)``
    (:attr:`fxcache_core.functions.origin.FunctionName.label`: decorators folded, a resume
    frame named after its function); ``-`` if unknown."""
    if origin is None:
        return "-"
    from fxcache_core.functions.origin import function_name

    return function_name(origin).label or "-"


def plural(count: int, word: str, plural: str | None = None) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def short(text: str, n: int = 16) -> str:
    """A key or entry name cut to ``n`` characters, as listings show them (16 by
    default; 12 where a key is quoted inside a sentence, 10 for a component hash)."""
    return text[:n]


COLOUR = {
    "hit": "green", "pass": "green", "passes": "green",
    "miss": "red", "fail": "red", "error": "red", "new-graph": "red", "shadowed": "red", "bad": "red",
    "undecided": "yellow", "overlap": "yellow", "bypass": "yellow", "keep": "yellow", "warning": "yellow",
    "no-fit": "dim", "not-analysed": "dim", "other-graph": "dim",
}
"""The one table of status colours (rich style names), for every command."""


def paint(status: str, text: str | None = None) -> str:
    """``text`` (default: ``status`` itself) in ``status``'s colour, as rich markup."""
    c = COLOUR[status]
    return f"[{c}]{status if text is None else text}[/{c}]"


def _console(**kwargs: Any) -> Any:
    from rich.console import Console

    class _Console(Console):
        """rich's Console, with every string it prints passed through :func:`shown`
        (newlines kept): rich strips a few control codes, not ESC."""

        def print(self, *objects: Any, **kw: Any) -> None:  # noqa: D102
            super().print(*(shown(o, keep_newlines=True) if isinstance(o, str) else o for o in objects), **kw)

        def on_broken_pipe(self) -> None:
            """The reader of stdout went away: rich's own exits 1; ``main()`` turns the
            error into exit 141, as for every other command (docs/reference/cli.md: exit codes)."""
            self.quiet = True
            raise BrokenPipeError(32, "Broken pipe")

    return _Console(**kwargs)


class Output:
    """Where every command writes (``out``): human text, tables, JSON, questions.

    rich is imported only when something is printed through a console, or when
    :meth:`text` asks whether stdout is a terminal (never by ``--help``).
    """

    _tag_re: Any = None

    def __init__(self) -> None:
        self._console: Any = None
        self._err: Any = None

    @property
    def console(self) -> Any:
        """The stdout console. Piped output (CI logs, ``| less``) gets a wide one so
        keys are never wrapped."""
        if self._console is None:
            width = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 200
            self._console = _console(highlight=False, width=width, soft_wrap=True)
        return self._console

    @property
    def err(self) -> Any:
        """The stderr console (progress bars, confirmations)."""
        if self._err is None:
            self._err = _console(stderr=True, highlight=False)
        return self._err

    @property
    def is_terminal(self) -> bool:
        return self.console.is_terminal

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """rich's ``Console.print`` (markup, renderables), cache text shown escaped."""
        self.console.print(*objects, **kwargs)

    def text(self, text: str) -> None:
        """Print rich markup; when stdout is not a terminal (a pipe, a file), strip the
        markup directly: what rich prints there, minus ~0.1 ms a line of rendering."""
        text = shown(text, keep_newlines=True)
        if self.is_terminal:
            self.console.print(text)
            return
        if Output._tag_re is None:
            Output._tag_re = re.compile(r"(?<!\\)\[/?(?:bold|dim|red|green|yellow|cyan)\]")
        sys.stdout.write(Output._tag_re.sub("", text).replace("\\[", "[") + "\n")

    def hint(self, text: str) -> None:
        """A dim note after the results (rich markup)."""
        self.text(f"[dim]{text}[/dim]")

    def warning(self, text: str) -> None:
        """``warning: text`` on stdout, among the results (rich markup)."""
        self.text(f"{paint('warning', 'warning:')} {text}")

    def table(self, title: str, rows: list[tuple[str, ...]], right: set[int]) -> None:
        """Print ``title`` then ``rows`` (the first one a header) as plain columns,
        ``right`` the right-aligned ones, every cell shown escaped (:func:`shown`). Not
        a rich Table: a large cache has tens of thousands of rows, and a Table costs
        ~0.2 ms a row (benchmarks/bench_scale.py)."""
        blob = title + "".join(c for r in rows for c in r)
        if not (blob.isascii() and blob.isprintable()):  # a cell from a cache needs escapes
            rows = [tuple(map(shown, r)) for r in rows]
            title = shown(title)
        widths = [max(map(len, col)) for col in zip(*rows, strict=True)]
        fmt = "  ".join(f"{{:{'>' if i in right else '<'}{w}}}" for i, w in enumerate(widths))
        lines = [title, *(fmt.format(*r).rstrip() for r in rows)]
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()

    def result(self, obj: Any) -> None:
        """``obj`` as JSON (``--json``)."""
        sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")

    def listing(self, obj: dict[str, Any], lists: dict[str, Iterable[Any]],
                texts: frozenset[str] = frozenset()) -> None:
        """``obj`` as JSON, each ``obj[key]`` for ``key`` in ``lists`` the list of
        ``lists[key]`` (for a key in ``texts``, items that are their JSON text already,
        written as they are), written one item a line as they come: a gc plan over a large
        cache lists tens of thousands of files, and one string of it all would double
        the command's peak memory. The items are written :data:`_LISTED_AT_ONCE` at a
        time (a write each would be a system call each where stdout is unbuffered)."""
        w = sys.stdout.write
        dumps = _ENCODER.encode  # json.dumps(v, default=str), without an encoder made per item
        w("{")
        for n, (k, v) in enumerate(obj.items()):
            w(("," if n else "") + "\n  " + json.dumps(k) + ": ")
            if k not in lists:
                w(dumps(v))
                continue
            sep = "[\n    "
            chunk: list[str] = []
            as_text = k in texts
            for it in lists[k]:
                chunk.append(sep + (it if as_text else dumps(it)))
                sep = ",\n    "
                if len(chunk) >= _LISTED_AT_ONCE:
                    w("".join(chunk))
                    chunk.clear()
            w("".join(chunk) + ("[]" if sep.startswith("[") else "\n  ]"))
        w("\n}\n")

    def confirm(self, question: str, *, yes: bool) -> bool:
        """True when ``yes`` (--yes), else ask on stderr (default no); refuses, exit 2,
        when stdin is not a terminal."""
        if yes:
            return True
        if not sys.stdin.isatty():
            fail("refusing to delete without confirmation: stdin is not a terminal (pass --yes)")
        return typer.confirm(question, default=False, err=True)


_ENCODER = json.JSONEncoder(default=str)
"""What ``json.dumps(v, default=str)`` writes (the same encoder settings), made once."""

_LISTED_AT_ONCE = 256
"""Items of a long list :meth:`Output.listing` writes in one call."""

out = Output()
