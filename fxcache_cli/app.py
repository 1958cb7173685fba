"""The ``fxcache`` command line: argument parsing and rendering only.

Every decision lives in :mod:`fxcache_core`; this module turns its values into
tables (rich) or JSON (``--json``). Errors the user caused become one line on
stderr and exit code 2.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from enum import Enum
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.filesize import decimal as human_bytes
from rich.markup import escape
from rich.table import Table

from fxcache_core.binding import DynamicMode
from fxcache_core.errors import FxcacheError
from fxcache_core.keys import KeyKind

app = typer.Typer(
    help="See into, and keep in order, PyTorch Inductor's on-disk compile cache.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts show [d0,d1,...] literally
    context_settings={"help_option_names": ["-h", "--help"]},
)
# Piped output (CI logs, `| less`) gets a wide console so keys are never wrapped.
_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 200
out = Console(highlight=False, width=_WIDTH, soft_wrap=True)
err = Console(stderr=True, highlight=False)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]


class State:
    cache_dir: str | None = None
    remote: str | None = None
    store: Any = None  # fxcache_core.remote.RedisStore, with --remote


state = State()


@app.callback()
def _global(
    cache_dir: Annotated[
        str | None,
        typer.Option(
            "--cache-dir",
            help="The Inductor cache dir. Default: $TORCHINDUCTOR_CACHE_DIR, else "
            "<tempdir>/torchinductor_<user>, as torch resolves it.",
            show_default=False,
        ),
    ] = None,
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote",
            help="Work on Inductor's remote cache on Redis instead: redis://host:port/db, or env "
            "(torch's TORCHINDUCTOR_REDIS_URL, else TORCHINDUCTOR_REDIS_HOST/_PORT).",
            show_default=False,
        ),
    ] = None,
) -> None:
    state.cache_dir = cache_dir
    state.remote = remote


def _scan(cache_dir: str | None = None, quiet: bool = False):
    """Scan --cache-dir (or ``cache_dir``, e.g. --other-cache-dir), or with --remote
    a local snapshot of the remote cache (fxcache_core.remote); ``quiet``: no
    progress bar (--json)."""
    from fxcache_core.location import resolve_cache_dir
    from fxcache_core.store import scan_cache

    if state.remote is not None and cache_dir is None:
        return scan_cache(_remote_snapshot(quiet))
    return scan_cache(resolve_cache_dir(cache_dir if cache_dir is not None else state.cache_dir))


def _local_agreement(remote_scan: Any) -> dict[str, str]:
    """For remote keys the local cache (--cache-dir or torch's default) also has:
    ``same`` when the remote entry is one of the local entries (same content hash), else ``differs``."""
    from fxcache_core.location import resolve_cache_dir
    from fxcache_core.store import scan_cache

    try:
        local = scan_cache(resolve_cache_dir(state.cache_dir))
    except FxcacheError:
        return {}
    from fxcache_core.remote import agreement

    return agreement(remote_scan, local)


def _store() -> Any:
    """The --remote store (connected once)."""
    from fxcache_core import remote

    if state.store is None:
        state.store = remote.RedisStore(remote.redis_url(state.remote or ""))
    return state.store


def _remote_snapshot(quiet: bool = False) -> Any:
    """The local snapshot of the remote cache (fetched once, removed at exit)."""
    store = _store()
    prog = _ReadProgress(len(store.entries()), enabled=not quiet, label="fetching remote values")
    _progress.append(prog)
    root = store.snapshot(on_batch=prog.advance)
    prog.close()
    if store.touches:
        sys.stderr.write(
            "fxcache: note: this Redis server (before 7.2, no CLIENT NO-TOUCH) counts fxcache's "
            "reads as uses: after this run every key's idle time restarts, so a later "
            "--older-than sees them as just used\n")
    return root


_indexes: list[Any] = []
_progress: list[Any] = []


class _ReadProgress:
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


def _catalog(scan: Any, *, indexed: bool, as_json: bool = False, hashing: bool | None = None) -> Any:
    """A Catalog with a progress bar; ``indexed``: backed by the persistent index of
    decoded entries (see fxcache_core.index; verify always reads the files).
    ``hashing``: hash each file read (for name-is-content checks; default: unindexed only)."""
    from fxcache_core.catalog import Catalog

    prog = _ReadProgress(scan.entry_count, enabled=not as_json)
    _progress.append(prog)
    idx = None
    if indexed and state.remote is None:  # a remote snapshot is a new temp dir each run
        from fxcache_core.index import Index, default_index_path

        idx = Index(default_index_path(scan.root))
        _indexes.append(idx)
    return Catalog(scan, idx, on_read=prog, hash_on_read=not indexed if hashing is None else hashing)


def _done_reading() -> None:
    """Take progress bars down before printing results."""
    for prog in _progress:
        prog.close()


def _indexed(scan: Any, as_json: bool = False) -> Any:
    return _catalog(scan, indexed=True, as_json=as_json)


def _error_line(msg: str) -> None:
    """One unwrapped line on stderr, whatever the terminal width."""
    sys.stderr.write("fxcache: error: " + " ".join(msg.split()) + "\n")


def _fail(msg: str, code: int = 2) -> NoReturn:
    _error_line(msg)
    raise typer.Exit(code)


def _age(ts: float | None, now: float) -> str:
    from fxcache_core.units import format_duration

    return "-" if ts is None else f"{format_duration(now - ts)} ago"


_TAG_RE = None


def _emit(text: str) -> None:
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


def _n(count: int, word: str, plural: str | None = None) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def _emit_json_listing(obj: dict[str, Any], lists: dict[str, Iterable[Any]]) -> None:
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


# --- ls -------------------------------------------------------------------------


@app.command("ls")
def ls_cmd(
    entries: Annotated[bool, typer.Option("--entries", "-e", help="Also list each key's entries.")] = False,
    check: Annotated[bool, typer.Option("--check", help="Decode every entry and mark the unreadable ones (reads every file).")] = False,
    dupes: Annotated[bool, typer.Option("--dupes", help="Only FX keys that are one key but for symbol names (fragmentation), grouped, with the reason.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """List cache keys with their entries, sizes and ages, and the totals."""
    if state.remote is not None and not (check or entries or dupes or as_json):
        _ls_remote()  # a plain listing reads no value
        return
    scan = _scan(quiet=as_json)
    if dupes:
        _dupes(scan, as_json)
        return
    now = time.time()
    problems: dict[str, str] = {}
    if check:

        problems = {u.entry.file.where: u.reason for u in _indexed(scan, as_json).unreadable()}
        _done_reading()
    local = _local_agreement(scan) if state.remote is not None else {}
    if as_json:
        def entry_json(e):
            row = {"entry": e.name, "size": e.size, "mtime": e.mtime}
            if check:
                row["unreadable"] = problems.get(e.file.where)
            return row

        _emit_json([
            {
                "kind": k.kind.value, "key": k.key, "path": str(k.path),
                "size": k.size, "mtime": k.mtime,
                "entries": [entry_json(e) for e in k.entries],
                "temp_files": [t.name for t in k.temp_files],
                **({"redis_key": _where(k.entries[0].path) if k.entries else None,
                    "local": local.get(k.key)} if state.remote is not None else {}),
            }
            for k in scan.keys
        ])
        return
    rows: list[tuple[str, ...]] = [("kind", "key", "entries", "size", "last modified")
                                   + (("check",) if check else ())]
    for k in scan.keys:
        bad = sum(1 for e in k.entries if e.file.where in problems) if problems else 0
        status = ((f"{bad} unreadable" if bad else "ok",) if check else ())
        rows.append((k.kind.short, k.key, str(len(k.entries)), human_bytes(k.size),
                     _age(k.mtime, now), *status))
        if entries or bad:
            for e in k.entries:
                if not entries and e.file.where not in problems:
                    continue
                why = problems.get(e.file.where)
                status = ((f"unreadable: {why}" if why else "ok",) if check else ())
                rows.append(("", f"  └ {e.name}", "", human_bytes(e.size), _age(e.mtime, now), *status))
    _columns(f"{_store().url} (remote)" if state.remote is not None else str(scan.root), rows, {2, 3, 4})
    fx = sum(1 for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    _emit(
        f"{len(scan.keys)} keys ({fx} fx, {len(scan.keys) - fx} aot), "
        f"{scan.entry_count} entries, {human_bytes(scan.size)}"
        + (f", [red]{len(problems)} unreadable[/red]" if problems else "")
    )
    if scan.skipped:
        _emit(f"[dim]{len(scan.skipped)} paths skipped (symlinks, foreign files)[/dim]")
    if state.remote is not None:
        same = sum(1 for v in local.values() if v == "same")
        if local:
            vs = (f"sizes are the entries' pickles. {_n(len(local), 'key')} also in the local cache: "
                  f"{same} hold one of its entries, {len(local) - same} differ.")
        else:
            vs = "sizes are the entries' pickles. No key is also in the local cache."
        _emit("[dim]Remote: one entry per key, the last writer's (torch SETs without merging the "
                  "entries of other shape regions); " + escape(vs) + "[/dim]")


def _columns(title: str, rows: list[tuple[str, ...]], right: set[int]) -> None:
    """Print ``title`` then ``rows`` (the first one a header) as plain columns,
    ``right`` the right-aligned ones. Not a rich Table: a large cache has tens of
    thousands of rows, and a Table costs ~0.2 ms a row (benchmarks/bench_scale.py)."""
    widths = [max(map(len, col)) for col in zip(*rows, strict=True)]
    fmt = "  ".join(f"{{:{'>' if i in right else '<'}{w}}}" for i, w in enumerate(widths))
    lines = [title, *(fmt.format(*r).rstrip() for r in rows)]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _ls_remote() -> None:
    """``ls --remote`` without --entries/--check/--json: from the listing alone
    (SCAN, MEMORY USAGE, OBJECT IDLETIME), no value read."""
    entries = sorted(_store().entries(), key=lambda e: (e.kind is not KeyKind.FX_GRAPH, e.key))
    now = time.time()
    rows = [("kind", "key", "size", "last used")]
    for e in entries:
        rows.append((e.kind.short, e.key, human_bytes(e.size),
                     "-" if e.idle_s is None else _age(now - e.idle_s, now)))
    _columns(f"{_store().url} (remote)", rows, {2, 3})
    fx = sum(1 for e in entries if e.kind is KeyKind.FX_GRAPH)
    _emit(f"{len(entries)} keys ({fx} fx, {len(entries) - fx} aot), one entry each, "
              f"{human_bytes(sum(e.size for e in entries))} of Redis memory")
    _emit("[dim]Remote: one entry per key, the last writer's (torch SETs without merging the "
              "entries of other shape regions). --entries, --check or --json read the values and "
              "compare them with the local cache.[/dim]")


# --- guards ---------------------------------------------------------------------


class GuardFormat(str, Enum):
    summary = "summary"
    plain = "plain"
    pretty = "pretty"
    latex = "latex"
    json = "json"


@app.command("guards")
def guards_cmd(
    key: Annotated[str, typer.Argument(help="A cache key or a unique prefix of one.")],
    raw: Annotated[bool, typer.Option("--raw", help="Show the stored guards string verbatim.")] = False,
    fmt: Annotated[GuardFormat, typer.Option(
        "--format", "-f",
        help="summary: ranges, divisibility, relations, the rest; plain: one clause a line; "
        "pretty: sympy's 2-D form; latex; json: like --json.")] = GuardFormat.summary,
    as_json: JsonOpt = False,
) -> None:
    """Show each entry's guards as sympy, with each tN traced to its symbol and source."""
    from fxcache_core.catalog import Unreadable
    from fxcache_core.errors import GuardParseError
    from fxcache_core.guard_view import compare_entries, expr_tree, render, summarize, symbol_names
    from fxcache_core.guards import parse_guards

    scan = _scan(quiet=as_json)
    k = scan.find(key)
    cat = _indexed(scan, as_json or fmt is GuardFormat.json)
    rows: list[dict[str, Any]] = []
    parsed = []
    for e in k.entries:
        d = cat.load(e)
        g = None
        if isinstance(d, Unreadable):
            rows.append({"entry": e.name, "error": d.reason})
            parsed.append(None)
            continue
        syms = cat.symbols(e)
        names = symbol_names(syms)
        row: dict[str, Any] = {
            "entry": e.name, "guards_expr": d.guards_expr, "clauses": [],
            "symbols": {s.placeholder: s.to_json() for s in syms},
            "origin": str(d.origin) if d.origin else None,
        }
        if d.guards_expr:
            try:
                g = parse_guards(d.guards_expr)
            except GuardParseError as ex:
                row["error"] = f"guards not understood: {ex}"
        if g is not None:
            sm = summarize(g)
            row["clauses"] = [c.pretty(names) for c in g.clauses]
            row["summary"] = {
                "ranges": [{"placeholder": r.placeholder, "symbol": names.get(r.placeholder),
                            "lower": r.lower, "upper": r.upper, "excluded": list(r.excluded),
                            "clauses": list(r.clauses), "text": r.render(names.get(r.placeholder, r.placeholder))}
                           for r in sm.ranges],
                "divisibility": [{"text": dv.render(names), "modulus": dv.modulus,
                                  "residue": dv.residue, "clauses": list(dv.clauses)}
                                 for dv in sm.divisibility],
                "relations": [c.index for c in sm.relations],
                "other": [c.index for c in sm.other],
            }
            if as_json or fmt is GuardFormat.json:
                row["trees"] = [expr_tree(c.sympy(), names) for c in g.clauses]
            elif fmt in (GuardFormat.pretty, GuardFormat.latex):
                row["rendered"] = [render(c, fmt.value, names) for c in g.clauses]
        parsed.append(g)
        rows.append(row)
    key_names = next((symbol_names(cat.symbols(e)) for e in k.entries
                      if not isinstance(cat.load(e), Unreadable)), {})
    comparison = compare_entries(parsed, key_names) if len(parsed) > 1 else None
    if as_json or fmt is GuardFormat.json:
        body: dict[str, Any] = {"kind": k.kind.value, "key": k.key, "entries": rows}
        if comparison is not None:
            body["comparison"] = {"common": list(comparison.common),
                                  "only": {rows[i]["entry"]: list(o) for i, o in enumerate(comparison.only)}}
        _emit_json(body)
        return
    out.print(f"[bold]{k.kind.short}[/bold] {k.key}  ({_n(len(k.entries), 'entry', 'entries')}, torch tries them in this order)")
    for i, row in enumerate(rows):
        out.print(f"\n[bold]#{i} {escape(row['entry'])}[/bold]" + (f"  [cyan]{escape(row['origin'])}[/cyan]" if row.get("origin") else ""))
        if "guards_expr" not in row:
            out.print(f"  [red]unreadable[/red]: {escape(row['error'])}  (torch skips it)")
            continue
        if row["symbols"]:
            t = Table(box=None, pad_edge=False, show_header=True)
            for c in ("placeholder", "symbol", "source", "hint"):
                t.add_column(c)
            for ph, sy in row["symbols"].items():
                t.add_row(ph, sy["symbol"] or "?", escape(sy["source"] or "?"),
                          "" if sy["hint"] is None else str(sy["hint"]))
            out.print(t)
        if not row["guards_expr"]:
            out.print("  no guards: always a hit")
        elif raw:
            out.print("  " + escape(row["guards_expr"]))
        elif "error" in row:
            out.print(f"  [red]{escape(row['error'])}[/red]\n  " + escape(row["guards_expr"]))
        elif fmt is GuardFormat.summary:
            sm, clauses = row["summary"], row["clauses"]
            for label, items in (
                ("range", [r["text"] for r in sm["ranges"]]),
                ("divisibility", [dv["text"] for dv in sm["divisibility"]]),
                ("relation", [clauses[j] for j in sm["relations"]]),
                ("other", [clauses[j] for j in sm["other"]]),
            ):
                for n, text in enumerate(items):
                    out.print(f"  {label if n == 0 else '':<13}{escape(text)}")
        elif fmt is GuardFormat.plain:
            for c in row["clauses"]:
                out.print(f"  {escape(c)}")
        else:
            for c in row["rendered"]:
                out.print("  " + escape(c).replace("\n", "\n  "))
    if comparison is not None and not raw:
        out.print("\n[bold]What separates the entries[/bold]")
        if comparison.common:
            out.print("  every entry: " + escape(", ".join(comparison.common)))
        for i, only in enumerate(comparison.only):
            shown = ", ".join(only) if only else "nothing of its own"
            out.print(f"  #{i} only:     " + escape(shown))


# --- match ----------------------------------------------------------------------


class Dynamic(str, Enum):
    true = "true"
    none = "none"
    false = "false"


@app.command("match")
def match_cmd(
    shapes: Annotated[list[str] | None, typer.Option(
        "--shapes", "-s",
        help="An input of the call: NAME=[d0,d1,...] for a tensor, NAME=INT for an int "
        "(repeat, or comma-separate). NAME is the compiled function's parameter (x, xs[0]). "
        "Dims marked dynamic: NAME=[6,6]:mark_dynamic=[0,1].")] = None,
    dynamic: Annotated[Dynamic | None, typer.Option(
        "--dynamic", help="The call's torch.compile(dynamic=...): true (unmarked dims are duck-sized), "
        "none (the default: a fresh process's first call is static but for marked dims) or false. "
        "The cache does not record it; without it, what depends on it is undecided.")] = None,
    args: Annotated[list[str] | None, typer.Option(
        "--arg", help="A tensor input of an FX graph by position, [d0,d1,...] (repeat, in graph "
        "order): for FX keys no AOTAutograd entry loads, whose inputs have no names.")] = None,
    sym: Annotated[list[str] | None, typer.Option(
        "--sym", help="Bind a placeholder or symbol directly (t0=16, s77=16); needs --key.")] = None,
    key: Annotated[str | None, typer.Option("--key", "-k", help="Only this key (a unique prefix).")] = None,
    fn: Annotated[str | None, typer.Option("--fn", help="Only keys traced from the function of this name.")] = None,
    coverage_key: Annotated[str | None, typer.Option(
        "--coverage", help="Draw which entry of this key serves which values of --range, and the gaps.")] = None,
    value_range: Annotated[str | None, typer.Option(
        "--range", help="With --coverage: NAME=LO:HI, NAME a placeholder (t0), symbol (s77) or source "
        "(L['x'].size()[0]); other placeholders stay at their hints unless given with --sym.")] = None,
    audit: Annotated[bool, typer.Option(
        "--audit", help="Across the cache: entries that can never be served (shadowed by an earlier one) "
        "and entries whose regions overlap.")] = False,
    explain: Annotated[bool, typer.Option("--explain", help="Also show keys that cannot take these shapes, and why, and the FX keys behind each AOTAutograd entry.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Which entry torch would load for these input shapes, and why the others would not."""
    from fxcache_core.binding import (
        TensorArg,
        parse_shape_spec,
        parse_shapes,
        parse_sym,
    )
    from fxcache_core.match import match

    if audit:
        _audit(as_json)
        return
    if coverage_key is not None or value_range is not None:
        if shapes or key:
            _fail("--coverage takes --range (and --sym for the other placeholders), not --shapes or --key")
        if coverage_key is None or value_range is None:
            _fail("give both --coverage KEY and --range NAME=LO:HI")
        _coverage(coverage_key, value_range, parse_sym(sym or []), _mode(dynamic), as_json)
        return
    inputs = parse_shapes(shapes or [])
    syms = parse_sym(sym or [])
    positional = [parse_shape_spec(f"arg={a}")[1] for a in args or []]
    if any(not isinstance(t, TensorArg) for t in positional):
        _fail("--arg takes a tensor shape like [16,4]")
    if not inputs and not syms and not positional:
        _fail("give the call's inputs with --shapes NAME=[...] (or --arg [...], or --key K --sym t0=N)")
    scan = _scan(quiet=as_json)
    only = scan.find(key) if key else None
    explain = explain or only is not None  # one key asked for: always say why
    report = match(_indexed(scan, as_json), inputs, syms, only, function=fn, positional=positional,
                   mode=_mode(dynamic))
    _done_reading()
    if as_json:
        _emit_json({
            "inputs": dict(report.inputs),
            "results": [
                {
                    "kind": m.key.kind.value, "key": m.key.key, "status": m.status,
                    "origin": str(m.origin) if m.origin else None,
                    "hit": m.hit.name if m.hit else None,
                    "fits": m.fits, "reasons": list(m.reasons), "uncertain": list(m.uncertain),
                    "aborted": m.aborted,
                    "values": dict(m.values),
                    "symbols": {s.placeholder: s.to_json() for s in m.symbols},
                    "shadowed": [e.name for e in m.shadowed],
                    "loads": [{"role": ld.role, "key": ld.key, "entry": ld.entry} for ld in m.loads],
                    "loaded_by": list(m.loaded_by),
                    "entries": [
                        {"entry": v.entry.name, "outcome": v.outcome, "passed": v.passed,
                         "failed_clause": v.failed_clause, "reason": v.reason}
                        for v in m.entries
                    ],
                }
                for m in report.results
            ],
            "unbound": [{"kind": k.kind.value, "key": k.key, "origin": str(o), "takes": list(takes)}
                        for k, o, takes in report.unbound],
        })
        return
    if not report.results and positional:
        out.print("No FX key takes --arg: it binds FX keys that no AOTAutograd entry loads "
                  "(name one with --key to bind it by position anyway).")
        return
    if not report.results:
        out.print(f"No key among {report.keys_considered}" + (f" (traced from {fn})" if fn else "")
                  + " has an input named "
                  + ", ".join(escape(s) for s, _ in report.inputs)
                  + " (names are the compiled function's parameters; see `fxcache guards KEY`).")
        _print_unbound(report.unbound)
        return
    # One print at the end: a large cache binds thousands of keys, and rich costs
    # ~0.1 ms per print call.
    buf: list[str] = []
    say = buf.append
    folded_keys = report.folded()
    shown, hidden_nofit, folded = [], 0, 0
    for m in report.results:
        if not m.fits and not explain:
            hidden_nofit += 1
        elif m.key.key in folded_keys and not explain:
            folded += 1
        else:
            shown.append(m)
    colour = {"hit": "green", "miss": "red", "undecided": "yellow", "no-fit": "dim", "error": "red"}
    for m in shown:
        c = colour[m.status]
        head = f"[bold]{m.key.kind.short}[/bold] {m.key.key}  [{c}]{m.status.upper()}[/{c}]"
        if m.hit is not None:
            head += f" {escape(m.hit.name[:16])}" if m.status == "hit" else f" (guards pass: {escape(m.hit.name[:16])})"
        if m.origin is not None:
            head += f"  [cyan]{escape(str(m.origin))}[/cyan]"
        say("\n" + head)
        by_ph = {s.placeholder: s for s in m.symbols}
        for ph, v in m.values:
            s = by_ph.get(ph)
            where = f"{s.expr}, {s.source or 'source unknown'}" if s else ""
            say(f"  {ph} = {v if v is not None else '?'}  [dim]({escape(where)})[/dim]")
        for r in m.reasons:
            say(f"  [dim]{escape(r)}[/dim]")
        for r in m.uncertain:
            say(f"  [yellow]cannot tell:[/yellow] {escape(r)}")
        if m.aborted:
            say(f"  [red]{escape(m.aborted)}[/red]")
        for i, v in enumerate(m.entries):
            if m.hit is v.entry:
                tag = "[green]hit[/green]" if m.status == "hit" else "[green]passes[/green]"
            elif v.entry in m.shadowed:
                tag = "[yellow]shadowed[/yellow] (passes too, but comes later)"
            else:
                tag = {"fail": "[red]fail[/red]", "pass": "[green]pass[/green]"}.get(
                    v.outcome, f"[yellow]{v.outcome}[/yellow]")
            say(f"  #{i} {escape(v.entry.name[:16])}  {tag}" + (f"  {escape(v.reason)}" if v.reason else ""))
        for ld in m.loads:
            where = escape(ld.entry[:16]) if ld.entry else "[red]gone: torch will recompile[/red]"
            say(f"  -> loads {ld.role} fx {ld.key[:16]} / {where}")
    notes = []
    if hidden_nofit:
        notes.append(f"{_n(hidden_nofit, 'key')} cannot take these shapes")
    if folded:
        notes.append(f"{_n(folded, 'FX key')} only loaded by the AOTAutograd hits above")
    if notes:
        say("\n[dim]" + "; ".join(notes) + " (--explain shows them all, with reasons).[/dim]")
    _print_unbound(report.unbound, say)
    if buf:
        _emit("\n".join(buf))


def _print_unbound(unbound, say=None) -> None:
    """Keys of the --fn function that no input given names (a resume frame's locals)."""
    say = say or out.print
    for k, origin, takes in unbound:
        say(f"\n[bold]{k.kind.short}[/bold] {k.key}  [yellow]NOT BOUND[/yellow]  "
                  f"[cyan]{escape(str(origin))}[/cyan]\n  [dim]takes {escape(', '.join(takes))}: name "
                  "it with --shapes too (a frame's locals, e.g. after a graph break)[/dim]")


def _audit(as_json: bool) -> None:
    from fxcache_core.audit import audit

    scan = _scan(quiet=as_json)
    found = audit(_indexed(scan, as_json))
    _done_reading()
    if as_json:
        _emit_json([{"kind": k.kind.value, "key": k.key,
                     "findings": [{"kind": f.kind, "earlier": f.earlier.name, "later": f.later.name,
                                   "detail": f.detail} for f in fs]} for k, fs in found])
        return
    multi = sum(1 for k in scan.keys if len(k.entries) >= 2)
    if not found:
        out.print(f"No shadowed or overlapping entries among the {_n(multi, 'key')} with several entries.")
        return
    colour = {"shadowed": "red", "overlap": "yellow", "not-analysed": "dim"}
    for k, fs in found:
        out.print(f"\n[bold]{k.kind.short}[/bold] {k.key}")
        for f in fs:
            c = colour[f.kind]
            out.print(f"  [{c}]{f.kind}[/{c}] {escape(f.earlier.name[:16])} / {escape(f.later.name[:16])}: "
                      f"{escape(f.detail)}")


def _mode(dynamic: Dynamic | None) -> DynamicMode:
    return DynamicMode(dynamic.value) if dynamic is not None else DynamicMode.UNKNOWN


def _coverage(key: str, spec: str, fixed: dict[str, int], mode: DynamicMode, as_json: bool) -> None:
    import re

    from fxcache_core.coverage import coverage

    m = re.fullmatch(r"\s*(.+?)\s*=\s*(-?\d+)\s*:\s*(-?\d+)\s*", spec)
    if not m:
        _fail(f"--range {spec!r}: expected NAME=LO:HI, e.g. s77=1:4096")
    scan = _scan(quiet=as_json)
    k = scan.find(key)
    cov = coverage(_indexed(scan, as_json), k, m.group(1), int(m.group(2)), int(m.group(3)), fixed, mode)
    _done_reading()
    if as_json:
        _emit_json({
            "kind": k.kind.value, "key": k.key, "placeholder": cov.placeholder, "symbol": cov.symbol,
            "source": cov.source, "fixed": dict(cov.fixed),
            "segments": [{"start": g.start, "end": g.end, "outcome": g.outcome,
                          "entry": g.entry.name if g.entry else None, "note": g.note}
                         for g in cov.segments],
        })
        return
    labels = {e.name: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[e.order % 36] for e in k.entries}
    glyph = {"miss": "[red]·[/red]", "other-graph": "[dim]×[/dim]", "error": "[red]![/red]",
             "undecided": "[yellow]?[/yellow]"}
    lo, hi = cov.segments[0].start, cov.segments[-1].end
    width = min(64, hi - lo + 1)
    bar = []
    for c in range(width):
        # A column covers a span of values: it shows the first entry serving any of
        # them, else the outcome at the span's first value.
        a = lo + (hi - lo + 1) * c // width
        b = lo + (hi - lo + 1) * (c + 1) // width - 1
        inside = [g for g in cov.segments if g.end >= a and g.start <= b]
        seg = next((g for g in inside if g.outcome == "hit"), inside[0])
        bar.append(f"[green]{labels[seg.entry.name]}[/green]" if seg.outcome == "hit"
                   else glyph.get(seg.outcome, "?"))
    fixed_txt = ", ".join(f"{p}={v}" for p, v in cov.fixed) or "none"
    out.print(f"[bold]{k.kind.short}[/bold] {k.key}: {cov.placeholder} ({cov.symbol}, "
              f"{escape(cov.source or 'source unknown')}) from {lo} to {hi}; others fixed: {fixed_txt}")
    out.print(f"  {lo} " + "".join(bar) + f" {hi}")
    out.print("  [dim]digits: the entry # that serves it; · miss; × another graph; ! a guard raises; ? undecided[/dim]")
    for n, g in enumerate(cov.segments):
        if n == 40:
            out.print(f"  [dim]… {len(cov.segments) - 40} more segments (--json lists them all)[/dim]")
            break
        span = f"{g.start}" if g.start == g.end else f"{g.start}..{g.end}"
        what = (f"[green]#{g.entry.order} {escape(g.entry.name[:16])}[/green]" if g.outcome == "hit"
                else {"miss": "[red]miss[/red]: no entry's guards hold"}.get(g.outcome, g.outcome))
        note = f"  ({escape(g.note)})" if g.note else ""
        out.print(f"  {span:>15}  {what}{note}")


def _dupes(scan: Any, as_json: bool) -> None:
    from fxcache_core.anatomy import fragmentation

    frags = fragmentation(_catalog(scan, indexed=False, as_json=as_json))
    _done_reading()
    if as_json:
        _emit_json([{"keys": [k.key for k in f.keys], "differ": list(f.differ), "reason": f.reason,
                     "size": sum(k.size for k in f.keys)} for f in frags])
        return
    for f in frags:
        out.print(f"[bold]{_n(len(f.keys), 'FX key')}[/bold], {human_bytes(sum(k.size for k in f.keys))}: "
                  + escape(f.reason))
        for k in f.keys:
            out.print(f"  {k.key}  {_n(len(k.entries), 'entry', 'entries')}")
    fx = sum(1 for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    out.print(f"{_n(len(frags), 'group')} of fragmented keys among {_n(fx, 'FX key')}.")


# --- verify -----------------------------------------------------------------------


@app.command("verify")
def verify_cmd(as_json: JsonOpt = False) -> None:
    """Check every entry against the digest in its name, and that it decodes: truncated,
    altered or misfiled entries. Exit 1 if any is found."""
    scan = _scan(quiet=as_json)
    problems, unchecked = _catalog(scan, indexed=False, as_json=as_json).verify()
    _done_reading()
    if as_json:
        _emit_json({"entries": scan.entry_count, "problems": [
            {"kind": e.kind.value, "key": e.key, "entry": e.name, "path": str(e.path), "problems": w}
            for e, w in problems], "unchecked": [{"path": str(e.path), "why": w} for e, w in unchecked]})
    else:
        for e, w in problems:
            out.print(f"[red]bad[/red] {e.kind.short} {e.key[:16]}/{escape(e.name[:16])}: " + escape("; ".join(w)))
        for e, w in unchecked:
            out.print(f"[yellow]not checked[/yellow] {e.kind.short} {e.key[:16]}/{escape(e.name[:16])}: {escape(w)}")
        out.print(f"{_n(scan.entry_count, 'entry', 'entries')} checked: "
                  + (f"[red]{len(problems)} bad[/red]" if problems else "[green]all match their names and decode[/green]")
                  + ("; `fxcache gc --unreadable` removes them." if problems else ""))
    if problems:
        raise typer.Exit(1)


# --- key, diff --------------------------------------------------------------------


def _component_json(c: Any) -> dict[str, Any] | None:
    return None if c is None else {"name": c.name, "hash": c.hash, "value": c.readable, "raw": c.value}


@app.command("key")
def key_cmd(
    key: Annotated[str | None, typer.Argument(help="A cache key or a unique prefix of one.")] = None,
    group: Annotated[str | None, typer.Option(
        "--group", help="Only components of this group (gm, example_inputs, fx_kwargs, inductor_config, ...).")] = None,
    current: Annotated[bool, typer.Option(
        "--current", help="The installed torch's build components (imports torch); with KEY, "
        "whether that key was built by it.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What a key is made of: each component torch hashed into it, with its hash and value."""
    from fxcache_core.anatomy import anatomy, stale_components
    from fxcache_core.catalog import Catalog

    if key is None and not current:
        _fail("give a KEY (a unique prefix), or --current")
    build = _current() if current else None
    if key is None:
        assert build is not None
        if as_json:
            _emit_json({"torch": build.torch_version, "components": [
                {"name": n, "hash": h, "value": build.values[n]} for n, h in build.hashes.items()]})
            return
        out.print(f"installed torch {escape(build.torch_version)}")
        for n, h in build.hashes.items():
            out.print(f"  [dim]{escape(f'[{h[:12]}]')}[/dim] {escape(n)}: {escape(build.values[n])}")
        return
    scan = _scan(quiet=as_json)
    a = anatomy(Catalog(scan), scan.find(key))
    comps = [c for c in a.components if group is None or c.group == group]
    stale = stale_components(a.components, build.hashes) if build is not None else None
    if as_json:
        _emit_json({"kind": a.key.kind.value, "key": a.key.key, "entry": a.entry,
                    "components": [_component_json(c) for c in comps],
                    "loads": [{"role": r, "key": k} for r, k in a.loads],
                    "stale": list(stale) if stale is not None else None})
        return
    out.print(f"[bold]{a.key.kind.short}[/bold] {a.key.key}  ({_n(len(a.key.entries), 'entry', 'entries')})")
    if a.key.kind is KeyKind.AOT_AUTOGRAD:
        out.print("  AOTAutograd entries store no key components; they load these FX keys "
                  "(`fxcache key FX_KEY` shows theirs):")
        for role, k in a.loads:
            out.print(f"  {role:<9} {k}")
    elif a.entry is None:
        out.print("  [yellow]no entry of this key can be read: no components to show[/yellow]")
    else:
        out.print(f"  {_n(len(a.components), 'component')}, read from entry {a.entry[:16]}"
                  + (f"; group {escape(group)}: {len(comps)}" if group else ""))
        for c in comps:
            text = escape(c.readable).replace("\n", "\n" + " " * 6)
            out.print(f"  [dim]{escape(f'[{c.hash[:10]}]')}[/dim] [bold]{escape(c.name)}[/bold]: {text}")
    if stale is not None:
        out.print(("[red]stale[/red]: built by another torch or system ("
                   + escape(", ".join(stale)) + " differ from the installed torch's)") if stale
                  else "[green]built by the installed torch and system[/green]")


@app.command("diff")
def diff_cmd(
    a: Annotated[str, typer.Argument(help="A key (unique prefix) in --cache-dir.")],
    b: Annotated[str, typer.Argument(help="A key (unique prefix) in --other-cache-dir, else in --cache-dir.")],
    other_cache_dir: Annotated[str | None, typer.Option(
        "--other-cache-dir", help="Where B is: another cache dir (e.g. copied from another machine).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Which components differ between two keys: why two compiles did not share a key."""
    from fxcache_core.anatomy import compare_keys
    from fxcache_core.catalog import Catalog

    scan_a = _scan(quiet=as_json)
    scan_b = _scan(other_cache_dir) if other_cache_dir else scan_a
    cat_a = Catalog(scan_a)
    cat_b = Catalog(scan_b) if scan_b is not scan_a else cat_a
    ka, kb = scan_a.find(a), scan_b.find(b)
    an_a, an_b, results = compare_keys(cat_a, ka, cat_b, kb)
    if as_json:
        _emit_json({"a": ka.key, "b": kb.key, "kind": ka.kind.value,
                    "loads": {"a": [{"role": r, "key": k} for r, k in an_a.loads],
                              "b": [{"role": r, "key": k} for r, k in an_b.loads]},
                    "compared": [{"role": role or None, "a": x.key.key, "b": y.key.key,
                                  "differ": [{"name": d.name, "a": _component_json(d.a),
                                              "b": _component_json(d.b)} for d in diffs]}
                                 for role, x, y, diffs in results]})
        return
    out.print(f"A {ka.kind.short} {ka.key}\nB {kb.kind.short} {kb.key}")
    if ka.kind is KeyKind.AOT_AUTOGRAD:
        for name, an in (("A", an_a), ("B", an_b)):
            out.print(f"{name} loads " + (", ".join(f"{r} {k[:12]}" for r, k in an.loads) or "nothing readable"))
        if not results:
            out.print("[yellow]no FX key both load is present in its cache: no components to compare[/yellow]")
    for role, x, y, diffs in results:
        where = f"{role} FX keys {x.key.key[:12]} / {y.key.key[:12]}: " if role else ""
        if x.key.key == y.key.key:
            out.print(f"{where}the same key")
            continue
        if not diffs:
            out.print(f"{where}no component differs (same components, different key: "
                      "a component torch hashes but does not list)")
            continue
        out.print(f"{where}{_n(len(diffs), 'component')} differ:")
        for d in diffs:
            out.print(f"  [bold]{escape(d.name)}[/bold]")
            if d.name == "gm" and d.a is not None and d.b is not None:
                import difflib
                for line in difflib.unified_diff(d.a.value.splitlines(), d.b.value.splitlines(),
                                                 "A", "B", lineterm="", n=1):
                    out.print("    " + escape(line))
                continue
            for side, c in (("A", d.a), ("B", d.b)):
                out.print(f"    {side}: " + (escape(c.readable) if c else "[dim](absent)[/dim]"))


# --- gc -------------------------------------------------------------------------


@app.command("gc")
def gc_cmd(
    older_than: Annotated[str | None, typer.Option(help="Remove entries unused for longer than this (90s, 30m, 12h, 7d, 2w).")] = None,
    max_size: Annotated[str | None, typer.Option(help="Then remove least recently used entries until the cache fits (500MB, 2GB, 1GiB).")] = None,
    keep_last: Annotated[int | None, typer.Option(help="Per key, keep only the N most recently used entries.", min=0)] = None,
    unreadable: Annotated[bool, typer.Option("--unreadable", help="Remove entries that cannot be decoded, and temp files older than an hour.")] = False,
    dangling: Annotated[bool, typer.Option("--dangling", help="Remove AOTAutograd entries whose FX entries are gone.")] = False,
    artifacts: Annotated[bool, typer.Option("--artifacts", help="With --older-than: also remove generated code (kernels, wrapper modules: <root>/<2 chars>/c*.py/.cpp/.so) unused that long; torch regenerates it.")] = False,
    set_ttl: Annotated[str | None, typer.Option("--set-ttl", help="With --remote: give the planned keys this expiry (7d, 12h) instead of deleting them.")] = None,
    stale: Annotated[bool, typer.Option("--stale", help="Remove entries built by another torch or system than the installed one (imports torch): this torch's lookups never reach them. If other torch installs or devices share this cache dir, their entries count as stale.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Print the plan and exit.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Prune entries by policy: plan first, show it, ask, then delete.

    With no policy flag, plans the safe default: --unreadable --dangling.
    An FX entry's wrapper module goes with it when no other entry uses it.
    """
    from fxcache_core.gc import GcPolicy, plan_gc
    from fxcache_core.units import parse_duration, parse_size

    ttl = None
    if set_ttl is not None:
        if state.remote is None:
            _fail("--set-ttl gives Redis keys an expiry: it needs --remote")
        try:
            ttl = max(1, int(parse_duration(set_ttl)))
        except ValueError as e:
            _fail(str(e))
    try:
        policy = GcPolicy(
            older_than_s=parse_duration(older_than) if older_than else None,
            max_size_bytes=parse_size(max_size) if max_size else None,
            keep_last=keep_last, unreadable=unreadable, dangling=dangling, artifacts=artifacts,
            stale_against=tuple(_current().hashes.items()) if stale else None,
        )
    except ValueError as e:
        _fail(str(e))
    if policy.is_empty:
        policy = GcPolicy.default()
    scan = _scan(quiet=as_json)
    # Planned from the index (rows checked against each file's size, mtime_ns, inode);
    # plan_gc re-reads from the files what a deletion rests on, and execution re-checks
    # each file against the plan.
    cat = _catalog(scan, indexed=True, as_json=as_json, hashing=policy.unreadable)
    _run_plan(plan_gc(cat, policy), dry_run, yes, as_json, ttl)


def _current() -> Any:
    """The installed torch's build components (imports torch); exit 2 without torch."""
    try:
        from fxcache_core.current import current_build
        return current_build()
    except ImportError as e:
        _fail(f"this needs torch installed (to know what the installed torch hashes): {e}")
    except Exception as e:  # noqa: BLE001 - torch failing to load (a missing library...) is one line too
        _fail(f"torch is installed but could not compute its build hashes: {type(e).__name__}: {e}")


@app.command("rm")
def rm_cmd(
    key: Annotated[str, typer.Argument(help="A cache key or a unique prefix of one.")],
    entries: Annotated[list[str] | None, typer.Argument(help="Entry names or unique prefixes (default: every entry of the key).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Print the plan and exit.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove a key's entries by name, with the AOTAutograd entries that load them."""
    from fxcache_core.gc import plan_rm

    scan = _scan(quiet=as_json)
    target = scan.find(key)
    _run_plan(plan_rm(_indexed(scan, as_json), target, entries or ()), dry_run, yes, as_json)


def _run_plan(plan: Any, dry_run: bool, yes: bool, as_json: bool, ttl: int | None = None) -> None:
    """Show a gc/rm plan, ask unless --yes, execute it, report; exit 1 if some paths failed."""
    from fxcache_core.gc import execute_plan, last_use

    _done_reading()

    def plan_json() -> dict[str, Any]:
        return {
            "cache_dir": str(plan.root), "dry_run": dry_run,
            "total_bytes": plan.total_bytes, "total_entries": plan.total_entries,
            "code_bytes": plan.code_bytes, "bytes_freed": plan.bytes_freed, "last_use": plan.last_use,
            "remote": state.remote is not None,
            "removals": None,  # streamed by emit()
            # What was done: empty until the plan is executed.
            "executed": False, "removed": [], "skipped": [], "failed": [], "dirs_removed": [],
        }

    def emit(body: dict[str, Any], res: Any = None) -> None:
        remote = state.remote is not None
        lists: dict[str, Iterable[Any]] = {"removals": (
            {"path": r.file.where, "what": r.what,
             "redis_key": _where(r.file.path) if remote else None,
             "kind": r.kind.value, "key": r.key, "entry": r.entry, "size": r.size,
             "reasons": list(r.reasons)}
            for r in plan.removals)}
        if res is not None:
            lists.update({
                "removed": (_where(r.file.path) for r in res.removed),
                "skipped": ({"path": _where(p), "why": w} for p, w in res.skipped),
                "failed": ({"path": _where(p), "error": w} for p, w in res.failed),
                "dirs_removed": (str(d) for d in res.dirs_removed),
            })
        _emit_json_listing(body, lists)

    if not as_json:
        now = time.time()
        for r in plan.removals:
            where = (f"code {escape(r.file.path.parent.name + '/' + r.file.name)}"
                     if r.kind is KeyKind.CODE
                     else f"{r.kind.short} {r.key[:16]}/{escape((r.entry or r.file.name)[:16])}")
            _emit(f"  remove {where}  "
                  f"{human_bytes(r.size):>9}  last used {_age(last_use(r.file), now)}  "
                  f"[dim]{escape('; '.join(r.reasons))}[/dim]")
        temps = sum(1 for r in plan.removals if r.what == "temp")
        code = sum(1 for r in plan.removals if r.what == "code")
        out.print(f"Plan: remove {_n(plan.entries_removed, 'entry', 'entries')}"
                  + (f", {_n(temps, 'stale temp file')}" if temps else "")
                  + (f", {_n(code, 'generated code file')}" if code else "") + ", "
                  f"freeing {human_bytes(plan.bytes_freed)} of {human_bytes(plan.total_bytes)} "
                  f"in {plan.total_entries} entries and {human_bytes(plan.code_bytes)} of generated "
                  f"code. Ages by last use = {plan.last_use}.")
    if dry_run or not plan.removals:
        if as_json:
            emit(plan_json())
        return
    if not yes:
        if not sys.stdin.isatty():
            _fail("refusing to delete without confirmation: stdin is not a terminal (pass --yes)")
        what = (_n(len(plan.removals), "Redis key") if state.remote is not None
                else _n(len(plan.removals), "file"))
        verb = f"Give {what} an expiry of {ttl} s" if ttl is not None else f"Delete {what}"
        if not typer.confirm(f"{verb}?", default=False, err=True):
            err.print("Nothing deleted.")
            raise typer.Exit(1)
    res = _store().execute(plan, ttl) if state.remote is not None else execute_plan(plan)
    if as_json:
        body = plan_json()
        body.update({"executed": True, "bytes_freed": res.bytes_freed})
        emit(body, res)
    else:
        for p, w in res.skipped:
            out.print(f"  [yellow]kept[/yellow] {escape(_where(p))}: {w}")
        for p, w in res.failed:
            out.print(f"  [red]failed[/red] {escape(_where(p))}: {w}")
        if state.remote is not None:
            out.print(f"{'Set an expiry on' if ttl is not None else 'Unlinked'} "
                      f"{_n(len(res.removed), 'Redis key')} ({human_bytes(res.bytes_freed)} of entries).")
        else:
            out.print(f"Removed {_n(len(res.removed), 'file')}, freed {human_bytes(res.bytes_freed)}; "
                      f"{len(res.dirs_removed)} empty dirs removed.")
    if res.failed:
        raise typer.Exit(1)


def _where(path: Any) -> str:
    """A planned path as the user knows it: the Redis key with --remote."""
    f = state.store.fetched(path) if state.store is not None else None
    return f.entry.redis_key if f is not None else str(path)


def _is_usage_error(e: BaseException) -> bool:
    """A command-line usage error (unknown option, bad value...), whichever click raised it.

    Typer releases differ in where click lives (the ``click`` package or a copy
    vendored inside typer); both mark usage errors with ``exit_code == 2``.
    """
    return getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))


def main() -> None:
    """Entry point of the ``fxcache`` console script.

    Exit codes: 0 success, 1 gc left some planned paths (or the user declined),
    2 bad input (one line on stderr), 130 interrupted.
    """
    try:
        try:
            code = app(standalone_mode=False)
        finally:
            for prog in _progress:
                prog.close()
            for idx in _indexes:
                idx.close()
            if state.store is not None:
                state.store.close()
    except FxcacheError as e:
        _error_line(str(e))
        sys.exit(2)
    except KeyboardInterrupt:
        _error_line("interrupted")
        sys.exit(130)
    except Exception as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # plain `fxcache`: show the help
            sys.stdout.write(e.format_message() + "\n")  # type: ignore[attr-defined]
            sys.exit(0)
        if _is_usage_error(e):
            msg = e.format_message()  # type: ignore[attr-defined]
            if "--cache-dir" in msg:
                msg += " (it is a global option: fxcache --cache-dir DIR COMMAND ...)"
            elif getattr(e, "ctx", None) is not None:
                msg += f" (see {e.ctx.command_path} --help)"  # type: ignore[attr-defined]
            _error_line(msg)
            sys.exit(2)
        if isinstance(e, typer.Abort) or type(e).__name__ == "Abort":
            _error_line("aborted")
            sys.exit(1)
        raise
    sys.exit(code if isinstance(code, int) else 0)
