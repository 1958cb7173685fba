"""``fxcache match``: which entry torch would load for a call, ``--coverage`` and ``--audit``."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from fxcache_core.binding import DynamicMode

from ._app import JsonOpt
from ._context import done_reading, indexed_catalog, scan_dir
from ._output import emit, emit_json, fail, out, plural, safe


class Dynamic(str, Enum):
    true = "true"
    none = "none"
    false = "false"


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
    duck_shape: Annotated[bool | None, typer.Option(
        "--duck-shape/--no-duck-shape", help="torch.fx.experimental._config.use_duck_shape "
        "(torch's default: on). Off, equal sizes keep separate symbols under --dynamic true. "
        "Not given: an entry compiled with equal sizes on separate symbols makes a duck-sizing "
        "conflict undecided.")] = None,
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
    from_trace: Annotated[str | None, typer.Option(
        "--from-trace", help="Take the call's inputs (and --fn, --dynamic) from a run's TORCH_TRACE: "
        "the call compiled as --compile ID.")] = None,
    compile_id: Annotated[str | None, typer.Option(
        "--compile", help="With --from-trace: the compile id (0/1, as `fxcache explain` shows it).")] = None,
    rank: Annotated[int | None, typer.Option("--rank", help="With --from-trace: the rank, when the trace has several.")] = None,
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
            fail("--coverage takes --range (and --sym for the other placeholders), not --shapes or --key")
        if coverage_key is None or value_range is None:
            fail("give both --coverage KEY and --range NAME=LO:HI")
        _coverage(coverage_key, value_range, parse_sym(sym or []), _mode(dynamic), as_json)
        return
    inputs = parse_shapes(shapes or [])
    if from_trace is not None or compile_id is not None:
        if from_trace is None or compile_id is None:
            fail("give both --from-trace TRACE and --compile ID")
        if shapes or args or sym:
            fail("--from-trace gives the call's inputs: not with --shapes, --arg or --sym")
        from pathlib import Path

        from fxcache_core.trace_call import call_inputs
        from fxcache_core.trace_run import read_run

        call = call_inputs(read_run(Path(from_trace)), compile_id, rank)
        inputs = call.inputs
        fn = fn or call.function
        if dynamic is None and call.mode is not DynamicMode.UNKNOWN:
            dynamic = Dynamic(call.mode.value)
    syms = parse_sym(sym or [])
    positional = [parse_shape_spec(f"arg={a}")[1] for a in args or []]
    if any(not isinstance(t, TensorArg) for t in positional):
        fail("--arg takes a tensor shape like [16,4]")
    if not inputs and not syms and not positional:
        fail("give the call's inputs with --shapes NAME=[...] (or --arg [...], or --key K --sym t0=N)")
    scan = scan_dir(quiet=as_json)
    only = scan.find(key) if key else None
    explain = explain or only is not None  # one key asked for: always say why
    report = match(indexed_catalog(scan, as_json), inputs, syms, only, function=fn, positional=positional,
                   mode=_mode(dynamic), duck_shape=duck_shape)
    done_reading()
    if as_json:
        emit_json({
            "inputs": dict(report.inputs),
            "results": [
                {
                    "kind": m.key.kind.value, "key": m.key.key, "status": m.status,
                    "origin": str(m.origin) if m.origin else None,
                    "compiled_from": str(m.compiled) if m.compiled else None,
                    "bound": dict(m.bound),
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
            "unused": list(report.unused),
            "function_missing": report.function_missing,
            "functions_held": list(report.functions_held),
        })
        return
    if report.function_missing:
        out.print(f"No key was compiled from {safe(fn or '')}. The cache holds keys compiled from:")
        for name in report.functions_held:
            out.print(f"  {safe(name)}")
        if not report.functions_held:
            out.print("  (no key records the function it was compiled from)")
        return
    if not report.results and positional:
        out.print("No FX key takes --arg: it binds FX keys that no AOTAutograd entry loads "
                  "(name one with --key to bind it by position anyway).")
        return
    if not report.results:
        if fn and report.unbound:
            out.print(f"No key compiled from {safe(fn)} takes "
                      + ", ".join(safe(_user(s)) for s, _ in report.inputs) + ".")
        else:
            out.print(f"No key among {report.keys_considered}" + " has an input named "
                      + ", ".join(safe(_user(s)) for s, _ in report.inputs)
                      + " (names are the compiled function's parameters, a module's keyword or "
                      "forward parameter, or args\\[i]; see `fxcache guards KEY`).")
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
            head += f" {safe(m.hit.name[:16])}" if m.status == "hit" else f" (guards pass: {safe(m.hit.name[:16])})"
        if m.origin is not None:
            head += f"  [cyan]{safe(str(m.compiled or m.origin))}[/cyan]"
        say("\n" + head)
        for given, src in m.bound:
            if given != src:
                say(f"  [dim]{safe(_user(given))} is {safe(src)}[/dim]")
        by_ph = {s.placeholder: s for s in m.symbols}
        for ph, v in m.values:
            s = by_ph.get(ph)
            where = f"{s.expr}, {s.source or 'source unknown'}" if s else ""
            say(f"  {ph} = {v if v is not None else '?'}  [dim]({safe(where)})[/dim]")
        for r in m.reasons:
            say(f"  [dim]{safe(r)}[/dim]")
        for r in m.uncertain:
            say(f"  [yellow]cannot tell:[/yellow] {safe(r)}")
        if m.aborted:
            say(f"  [red]{safe(m.aborted)}[/red]")
        for i, v in enumerate(m.entries):
            if m.hit is v.entry:
                tag = "[green]hit[/green]" if m.status == "hit" else "[green]passes[/green]"
            elif v.entry in m.shadowed:
                tag = "[yellow]shadowed[/yellow] (passes too, but comes later)"
            else:
                tag = {"fail": "[red]fail[/red]", "pass": "[green]pass[/green]"}.get(
                    v.outcome, f"[yellow]{v.outcome}[/yellow]")
            say(f"  #{i} {safe(v.entry.name[:16])}  {tag}" + (f"  {safe(v.reason)}" if v.reason else ""))
        for ld in m.loads:
            where = safe(ld.entry[:16]) if ld.entry else "[red]gone: torch will recompile[/red]"
            say(f"  -> loads {ld.role} fx {ld.key[:16]} / {where}")
    notes = []
    if hidden_nofit:
        notes.append(f"{plural(hidden_nofit, 'key')} cannot take these shapes")
    if folded:
        notes.append(f"{plural(folded, 'FX key')} only loaded by the AOTAutograd hits above")
    if notes:
        say("\n[dim]" + "; ".join(notes) + " (--explain shows them all, with reasons).[/dim]")
    _print_unbound(report.unbound, say)
    for src in report.unused:
        say("\n[yellow]warning:[/yellow] no key " + (f"compiled from {safe(fn)} " if fn else "")
            + f"takes {safe(_user(src))}")
    if buf:
        emit("\n".join(buf))


def _user(src: str) -> str:
    """``L['x']`` as the user wrote it: ``x``."""
    from fxcache_core.match import user_name

    return user_name(src)


def _print_unbound(unbound, say=None) -> None:
    """Keys of the --fn function that no input given names (a resume frame's locals)."""
    say = say or out.print
    for k, origin, takes in unbound:
        say(f"\n[bold]{k.kind.short}[/bold] {k.key}  [yellow]NOT BOUND[/yellow]  "
            f"[cyan]{safe(str(origin))}[/cyan]\n  [dim]takes {safe(', '.join(takes))}: name "
            "them with --shapes too[/dim]")


def _audit(as_json: bool) -> None:
    from fxcache_core.audit import audit

    scan = scan_dir(quiet=as_json)
    found = audit(indexed_catalog(scan, as_json))
    done_reading()
    if as_json:
        emit_json([{"kind": k.kind.value, "key": k.key,
                     "findings": [{"kind": f.kind, "earlier": f.earlier.name, "later": f.later.name,
                                   "detail": f.detail} for f in fs]} for k, fs in found])
        return
    multi = sum(1 for k in scan.keys if len(k.entries) >= 2)
    if not found:
        out.print(f"No shadowed or overlapping entries among the {plural(multi, 'key')} with several entries.")
        return
    colour = {"shadowed": "red", "overlap": "yellow", "not-analysed": "dim"}
    for k, fs in found:
        out.print(f"\n[bold]{k.kind.short}[/bold] {k.key}")
        for f in fs:
            c = colour[f.kind]
            out.print(f"  [{c}]{f.kind}[/{c}] {safe(f.earlier.name[:16])} / {safe(f.later.name[:16])}: "
                      f"{safe(f.detail)}")


def _mode(dynamic: Dynamic | None) -> DynamicMode:
    return DynamicMode(dynamic.value) if dynamic is not None else DynamicMode.UNKNOWN


def _coverage(key: str, spec: str, fixed: dict[str, int], mode: DynamicMode, as_json: bool) -> None:

    from fxcache_core.coverage import coverage, parse_range

    name, lo, hi = parse_range(spec)
    scan = scan_dir(quiet=as_json)
    k = scan.find(key)
    cov = coverage(indexed_catalog(scan, as_json), k, name, lo, hi, fixed, mode)
    done_reading()
    if as_json:
        emit_json({
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
              f"{safe(cov.source or 'source unknown')}) from {lo} to {hi}; others fixed: {fixed_txt}")
    out.print(f"  {lo} " + "".join(bar) + f" {hi}")
    out.print("  [dim]digits: the entry # that serves it; · miss; × another graph; ! a guard raises; ? undecided[/dim]")
    for n, g in enumerate(cov.segments):
        if n == 40:
            out.print(f"  [dim]… {len(cov.segments) - 40} more segments (--json lists them all)[/dim]")
            break
        span = f"{g.start}" if g.start == g.end else f"{g.start}..{g.end}"
        what = (f"[green]#{g.entry.order} {safe(g.entry.name[:16])}[/green]" if g.outcome == "hit"
                else {"miss": "[red]miss[/red]: no entry's guards hold"}.get(g.outcome, g.outcome))
        note = f"  ({safe(g.note)})" if g.note else ""
        out.print(f"  {span:>15}  {what}{note}")
