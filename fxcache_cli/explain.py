"""``fxcache explain TRACE``: what the cache did for every compile of a traced run, and why."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer

from ._context import done_reading, indexed_catalog, state
from ._options import JsonOpt
from ._output import ReadProgress, out, paint, plural, safe, short, shown

GM_DIFF_LINES = 24
"""Lines of a graph diff shown per new key (``--json`` has it whole)."""


def explain_cmd(
    trace: Annotated[str, typer.Argument(
        help="The run's TORCH_TRACE: the dir (one dedicated_log_torch_trace_*.log per rank) or one file.")],
    record: Annotated[bool, typer.Option(
        "--record/--no-record",
        help="Keep what the trace says about entries (hits as uses, compile costs) for gc, and "
        "the Python values each key was traced with (Dynamo's guards) for match, in fxcache's "
        "index (outside the cache dir).")] = True,
    raw: Annotated[bool, typer.Option(
        "--raw", help="Keep torch's names (inductor_config[max_autotune], example_inputs[0], L['t0']) "
        "and list every component that differs, instead of the user's terms and the root cause.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Say what the cache did for every compile of a run, and why: first the run in one line
    and the cause of its misses (a torch version, a variable, an input), then each lookup:
    hits (and whether their guards were installed), new keys (the nearest earlier key and
    the component that explains the miss), guard misses (the clause that failed, with the
    call's values), bypasses. The cache is --cache-dir, else the one the run wrote to, else
    torch's default."""
    from fxcache_core.trace.explain import explain
    from fxcache_core.trace.reader import trace_files
    from fxcache_core.trace.run import read_run

    path = Path(trace)
    files = trace_files(path)  # not a trace: one line, exit 2
    total = sum(f.stat().st_size for f in files)
    prog = ReadProgress(total, enabled=not as_json, label="reading trace")
    try:
        run = read_run(path, on_bytes=prog.advance)
    finally:
        prog.close()
    scan, why_none = _cache_for(run)
    catalog = indexed_catalog(scan, as_json) if scan is not None else None
    steps = ReadProgress(len(run.lookups), enabled=not as_json, label="explaining lookups")
    report = explain(run, catalog, on_lookup=steps, notes=[why_none] if why_none else [])
    steps.close()
    done_reading()
    if record and scan is not None:
        from fxcache_core.state.usage import UsageStore, usage_path
        from fxcache_core.trace.constants import key_constants

        store = UsageStore(usage_path(scan.root))
        store.record(report)
        store.record_constants(key_constants(run))
        store.close()
    if as_json:  # streamed: one lookup's JSON at a time
        out.listing(*report.json_stream())
        return
    _render(report, raw)


def _cache_for(run: Any) -> tuple[Any, str | None]:
    """The cache to relate the run to (core's :func:`~fxcache_core.trace.run_cache.run_cache`
    of --cache-dir); none with --remote."""
    from fxcache_core.trace.run_cache import run_cache

    if state.remote is not None:
        return None, "--remote: explain relates a trace to a local cache dir only"
    return run_cache(run, state.cache_dir)


_CAUSE = {"new-key": "new key", "guard-miss": "guard miss", "fx-entry-missing": "its FX entry is gone"}


def _secs(s: float | None) -> str:
    return "" if s is None else f"{s:.1f} s" if s >= 0.1 else f"{s * 1000:.0f} ms"


def _render(report: Any, raw: bool = False) -> None:
    from fxcache_core.trace.run_summary import run_verdict

    run = report.run
    verdict = run_verdict(report.lookups, raw=raw)
    if report.lookups:  # else the summary says there was none
        out.text(f"[bold]{safe(verdict.line)}[/bold]")
        if len(verdict.causes) > 1:
            for row in verdict.causes:
                out.text(f"  {plural(row.lookups, 'lookup'):>11}  {safe(row.words)}")
        out.text("")
    ranks = sorted({f.rank for f in run.files if f.rank is not None})
    head = (f"{safe(str(run.path))}: {plural(len(run.compiles), 'compile')}, "
            f"{plural(len(run.lookups), 'cache lookup')}"
            + (f" on ranks {', '.join(map(str, ranks))}" if len(ranks) > 1 else "")
            + (f" (torch {safe(run.torch_version)})" if run.torch_version else ""))
    out.text(head + (f"; cache {safe(report.cache_dir)}" if report.cache_dir else ""))
    last = None
    for x in report.lookups:
        c = x.compile
        if c is not None and c is not last:
            last = c
            label = run.label(c) + (f" rank {c.rank}" if len(ranks) > 1 and c.rank is not None else "")
            line = f"\n[bold]\\[{safe(label)}][/bold] {safe(report.where(c))}"
            if c.recompile_reason:
                line += f"\n  recompiled: {safe(_first_line(c.recompile_reason))}"
            out.text(line)
        _render_lookup(x, raw)
    _render_summary(report)
    for n in report.notes:
        out.text(f"[yellow]note[/yellow]: {safe(n)}")


def _first_line(text: str) -> str:
    return text.split("  # ", 1)[0].strip()


def _render_lookup(x: Any, raw: bool = False) -> None:
    from fxcache_core.reasons import code_of

    lk = x.lookup
    kind = "aot" if lk.cache == "aotautograd" else "fx"
    role = f" {lk.graph}" if lk.graph == "backward" else ""
    key = safe(short(lk.key)) if lk.key else "(no key)"
    parts = [f"  {kind:<3} {key}{role}  {paint(lk.state, lk.state.upper())}"]
    if lk.state == "miss":
        parts.append(_CAUSE.get(x.cause, x.cause))
    if lk.for_aot:
        parts.append("[dim](loaded for the AOTAutograd hit)[/dim]")
    if x.entry:
        parts.append(f"entry {safe(short(x.entry))}")
    if lk.state == "hit" and x.seconds_saved is not None:
        parts.append(f"saved {_secs(x.seconds_saved)}" if x.seconds_saved >= 0
                     else f"lost {_secs(-x.seconds_saved)}")
    elif x.seconds is not None:
        parts.append(("saved " if lk.state == "hit" else "cost ") + _secs(x.seconds))
    if x.rebuilt is not None:
        parts.append(f"[yellow]rebuilt {plural(x.rebuilt.kernels, 'kernel library', 'kernel libraries')} "
                     f"({_secs(x.rebuilt.seconds)})[/yellow]")
    out.text("  ".join(parts))
    pad = " " * 8
    if x.rebuilt is not None:
        out.text(pad + "rebuilt: " + safe(x.rebuilt.cause or "cause unknown (the trace and the cache do not say)"))
    if lk.state == "bypass":
        out.text(pad + safe(lk.bypass_reason or "(no reason recorded)"))
    if x.guards_check is not None and not x.guards_check.clauses and x.guards_check.reason is not None \
            and code_of(x.guards_check.reason) in ("too-many-guards-in-force", "check-budget-spent"):
        out.text(pad + f"[yellow]guards undecided[/yellow]: {safe(x.guards_check.reason)}")
    if x.guards_check is not None and x.guards_check.clauses:
        g = x.guards_check
        if g.status == "passed":
            out.text(pad + f"guards installed: {plural(len(g.clauses), 'clause')} of the entry are among "
                 f"Dynamo's guards")
        for cc in g.clauses:
            if cc.status == "missing":
                w = ", ".join(f"{s} = {v}" for s, v in (cc.witness or {}).items())
                out.text(pad + f"[red]guard not installed[/red]: {safe(cc.as_sources or cc.clause)}: "
                     f"a call with {safe(w)} passes Dynamo's guards and would run this graph")
            elif cc.status == "undecided":
                out.text(pad + f"[yellow]guard undecided[/yellow]: {safe(cc.as_sources or cc.clause)}: "
                     f"{safe(cc.reason or '')}")
    if x.added_guards:
        out.text(pad + "[dim]the hit added " + safe(", ".join(x.added_guards)) + "[/dim]")
    for t in x.tried:
        vals = ", ".join(f"{v.placeholder} = {v.value}"
                         + (" (" + ", ".join(x for x in (v.symbol, v.source) if x) + ")" if v.symbol or v.source else "")
                         for v in t.values)
        if t.clause:
            uvals = ", ".join(f"{k} = {v}" for k, v in t.user_values.items())
            out.text(pad + f"{safe(short(t.entry))} fails {safe(t.user_clause or t.clause)}  with {safe(uvals)}"
                     + f"  [dim]({safe(t.clause)}; {safe(vals)})[/dim]")
        else:
            out.text(pad + f"{safe(short(t.entry))} {t.status}" + (f": {safe(t.error)}" if t.error else ""))
    if x.nearest is not None and x.root_cause is not None and not raw:
        _render_root_cause(x, pad)
    elif x.nearest is not None:
        n = x.nearest
        via = f" (through their {n.role} FX keys)" if n.role else ""
        by = f", written by this run (lookup {n.written_by})" if n.written_by is not None else ""
        if not n.differs:
            out.text(pad + f"nearest {safe(short(n.key))}{via}{by}: no component differs")
        else:
            verb = "differs" if len(n.differs) == 1 else "differ"
            out.text(pad + f"nearest {safe(short(n.key))}{via}{by}: {plural(len(n.differs), 'component')} {verb}")
        for name, this, near in n.details:
            out.text(pad + f"  [bold]{safe(name)}[/bold]")
            if name == "gm":
                lines = (this or "").splitlines()
                for ln in lines[:GM_DIFF_LINES]:
                    out.text(pad + "    " + safe(ln))
                if len(lines) > GM_DIFF_LINES:
                    out.text(pad + f"    [dim]... {len(lines) - GM_DIFF_LINES} more lines (--json)[/dim]")
                continue
            out.text(pad + f"    this:    {safe(this) if this is not None else '(absent)'}")
            out.text(pad + f"    nearest: {safe(near) if near is not None else '(absent)'}")
    elif x.first_compile:
        out.text(pad + "first compile of this graph: no key in the cache is close")
    elif x.cause == "new-key" and x.compile is not None and x.compile.recompile_reason and not x.notes:
        out.text(pad + "a recompile (see above): no key in the cache or earlier in this run is close")
    for note in x.notes:
        out.text(pad + f"[dim]{safe(note)}[/dim]")


def _render_root_cause(x: Any, pad: str) -> None:
    """A new key in the user's terms: the root cause, what follows from it, and only the
    details of the components that do not (``--raw`` lists them all)."""
    from fxcache_core.trace.run_summary import consequence_words, root_cause_words

    n, r = x.nearest, x.root_cause
    via = f" (through their {n.role} FX keys)" if n.role else ""
    by = f", written by this run (lookup {n.written_by})" if n.written_by is not None else ""
    out.text(pad + f"nearest {safe(short(n.key))}{via}{by}: [bold]{safe(root_cause_words(r))}[/bold]")
    follows = consequence_words(r)
    if follows:
        out.text(pad + f"  [dim]and with it: {safe(follows)} (--raw lists them)[/dim]")
    for name, this, near in n.details:
        if name not in r.also:
            continue
        out.text(pad + f"  also [bold]{safe(name)}[/bold]")
        if name == "gm":
            for ln in (this or "").splitlines()[:GM_DIFF_LINES]:
                out.text(pad + "    " + safe(ln))
            continue
        out.text(pad + f"    this:    {safe(this) if this is not None else '(absent)'}")
        out.text(pad + f"    nearest: {safe(near) if near is not None else '(absent)'}")


def _render_summary(report: Any) -> None:
    summary = report.summary()
    if not summary:
        out.text("\nNo cache lookup: nothing was compiled with Inductor (an eager backend, or caches off).")
        return
    caches = list(summary)
    names = {"aotautograd": "AOTAutograd", "fxgraph": "FX graph"}
    rows: list[tuple[str, ...]] = [("", *(names[c] for c in caches))]

    def row(label: str, vals: Iterable[Any]) -> None:
        rows.append((label, *(str(v) for v in vals)))

    row("lookups", (summary[c].lookups for c in caches))
    row("hits", (summary[c].hits for c in caches))
    row("misses", (sum(summary[c].misses.values()) for c in caches))
    for cause in ("new-key", "guard-miss", "fx-entry-missing"):
        if any(summary[c].misses.get(cause) for c in caches):
            row("  " + _CAUSE[cause], (summary[c].misses.get(cause, 0) for c in caches))
    row("bypasses", (sum(summary[c].bypasses.values()) for c in caches))
    row("compile spent on misses", (_secs(summary[c].seconds_missed) or "0 s" for c in caches))
    row("compile saved by hits", (_secs(summary[c].seconds_saved) or "0 s" for c in caches))
    if any(summary[c].guards_failed for c in caches):
        row("hits missing a guard", (summary[c].guards_failed for c in caches))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out.print()
    for r in rows:
        out.print("  ".join([r[0].ljust(widths[0]), *(v.rjust(w) for v, w in zip(r[1:], widths[1:], strict=True))]),
                  highlight=False, markup=False)
    reasons: dict[str, int] = {}
    for c in caches:
        for why, n in summary[c].bypasses.items():
            reasons[why] = reasons.get(why, 0) + n
    if reasons:
        out.print("bypass reasons:", markup=False)
        for why, n in sorted(reasons.items(), key=lambda t: -t[1]):
            out.print(f"  {n:>4}  {shown(why)}", markup=False, highlight=False)
