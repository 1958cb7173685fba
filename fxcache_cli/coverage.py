"""``fxcache coverage KEY --range NAME=LO:HI``: which entry of a key serves which values.

Renders what :func:`fxcache_core.lookup.coverage.coverage` decides; decides
nothing. ``fxcache match --coverage KEY --range ...``, the older spelling, calls
:func:`coverage` too.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ._context import done_reading, indexed_catalog, scan_dir
from ._options import DynamicOpt, JsonOpt, mode_of
from ._output import out, paint, safe, short


def coverage_cmd(
    key: Annotated[str, typer.Argument(help="A cache key or a unique prefix of one.")],
    value_range: Annotated[str, typer.Option(
        "--range", help="NAME=LO:HI, NAME a placeholder (t0), symbol (s77) or source "
        "(L['x'].size()[0]); other placeholders stay at their hints unless given with --sym.")],
    sym: Annotated[list[str] | None, typer.Option(
        "--sym", help="Fix another placeholder or symbol of the key (t1=16, s77=16).")] = None,
    dynamic: DynamicOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Draw which entry of a key serves which values of --range, and the gaps (match --coverage)."""
    from fxcache_core.lookup.binding import parse_sym

    coverage(key, value_range, parse_sym(sym or []), mode_of(dynamic), as_json)


def coverage(key: str, spec: str, fixed: dict[str, int], mode: Any, as_json: bool) -> None:
    """The coverage of ``key`` over ``spec`` (``NAME=LO:HI``), drawn or as JSON
    (``fxcache coverage``, ``fxcache match --coverage``)."""
    from fxcache_core.lookup.coverage import coverage as coverage_of
    from fxcache_core.lookup.coverage import parse_range

    name, lo, hi = parse_range(spec)
    scan = scan_dir(quiet=as_json)
    k = scan.find(key)
    cov = coverage_of(indexed_catalog(scan, as_json), k, name, lo, hi, fixed, mode)
    done_reading()
    if as_json:
        out.result(cov.to_json())
        return
    labels = {e.name: "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[e.order % 36] for e in k.entries}
    glyph = {o: paint(o, g) for o, g in (("miss", "·"), ("other-graph", "×"), ("error", "!"), ("undecided", "?"))}
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
        bar.append(paint("hit", labels[seg.entry.name]) if seg.outcome == "hit"
                   else glyph.get(seg.outcome, "?"))
    fixed_txt = ", ".join(f"{p}={v}" for p, v in cov.fixed) or "none"
    out.print(f"[bold]{k.kind.short}[/bold] {k.key}: {cov.placeholder} ({cov.symbol}, "
              f"{safe(cov.source or 'source unknown')}) from {lo} to {hi}; others fixed: {fixed_txt}")
    out.print(f"  {lo} " + "".join(bar) + f" {hi}")
    if cov.stopped is not None:
        out.print(f"  [yellow]only {lo}..{hi} of {lo}..{cov.end} judged[/yellow]: {safe(cov.stopped)}")
    out.print("  [dim]digits: the entry # that serves it; · miss; × another graph; ! a guard raises; ? undecided[/dim]")
    for n, g in enumerate(cov.segments):
        if n == 40:
            out.print(f"  [dim]… {len(cov.segments) - 40} more segments (--json lists them all)[/dim]")
            break
        span = f"{g.start}" if g.start == g.end else f"{g.start}..{g.end}"
        what = (f"[green]#{g.entry.order} {safe(short(g.entry.name))}[/green]" if g.outcome == "hit"
                else {"miss": "[red]miss[/red]: no entry's guards hold"}.get(g.outcome, g.outcome))
        note = f"  ({safe(g.note)})" if g.note else ""
        out.print(f"  {span:>15}  {what}{note}")
