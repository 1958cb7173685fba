"""The modes that were flags, as commands: ``fxcache audit`` (``match --audit``),
``fxcache coverage KEY --range ...`` (``match --coverage KEY --range ...``) and
``fxcache dupes`` (``ls --dupes``).

Each has one mode and one JSON schema; the old spellings call the same
functions here, so both write the same bytes. Renders what
:mod:`fxcache_core.lookup.audit`, :mod:`fxcache_core.lookup.coverage` and
:func:`fxcache_core.keying.anatomy.fragmentation` decide; decides nothing.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ._app import DynamicOpt, JsonOpt, mode_of
from ._context import done_reading, indexed_catalog, open_catalog, scan_dir
from ._output import out, paint, plural, safe, short


def audit_cmd(as_json: JsonOpt = False) -> None:
    """Across the cache: entries that can never be served (shadowed by an earlier one) and entries
    whose regions overlap (match --audit)."""
    audit(as_json)


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


def dupes_cmd(as_json: JsonOpt = False) -> None:
    """FX keys that are one key but for symbol names (fragmentation), grouped, with the reason
    (ls --dupes)."""
    dupes(scan_dir(quiet=as_json), as_json)


def audit(as_json: bool) -> None:
    """The audit, shown or as JSON (``fxcache audit``, ``fxcache match --audit``)."""
    from fxcache_core.lookup.audit import audit as audit_cache

    scan = scan_dir(quiet=as_json)
    report = audit_cache(indexed_catalog(scan, as_json))
    done_reading()
    if as_json:
        out.result(report.to_json())
        return
    for k, fs in report:
        out.print(f"\n[bold]{k.kind.short}[/bold] {k.key}")
        for f in fs:
            out.print(f"  {paint(f.kind)} {safe(short(f.earlier.name))} / {safe(short(f.later.name))}: "
                      f"{safe(f.detail)}")
    out.print(("\n" if len(report) else "")
              + f"{plural(report.keys_checked, 'key')} with several entries checked: "
              f"{plural(report.count('shadowed'), 'entry', 'entries')} shadowed, "
              f"{plural(report.count('overlap'), 'pair')} overlapping, "
              f"{plural(report.count('not-analysed'), 'pair')} not analysed "
              "(guards beyond per-symbol ranges).")



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


def dupes(scan: Any, as_json: bool) -> None:
    """The fragmented FX keys of ``scan``, grouped (``fxcache dupes``, ``fxcache ls --dupes``)."""
    from rich.filesize import decimal as human_bytes

    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.keying.anatomy import fragmentation

    frags = fragmentation(open_catalog(scan, indexed=False, as_json=as_json))
    done_reading()
    if as_json:
        out.result([f.to_json() for f in frags])
        return
    for f in frags:
        out.print(f"[bold]{plural(len(f.keys), 'FX key')}[/bold], {human_bytes(sum(k.size for k in f.keys))}: "
                  + safe(f.reason))
        for k in f.keys:
            out.print(f"  {k.key}  {plural(len(k.entries), 'entry', 'entries')}")
    fx = sum(1 for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    out.print(f"{plural(len(frags), 'group')} of fragmented keys among {plural(fx, 'FX key')}.")
