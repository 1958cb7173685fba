"""``fxcache guards KEY``: each entry's guards as sympy, with each tN traced to its symbol and source."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from ._context import indexed_catalog, scan_dir
from ._options import JsonOpt
from ._output import origin_text, out, plural, safe, safe_lines


class GuardFormat(str, Enum):
    summary = "summary"
    plain = "plain"
    pretty = "pretty"
    latex = "latex"
    json = "json"


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
    from rich.table import Table

    from fxcache_core.guards.key_guards import key_guards

    scan = scan_dir(quiet=as_json)
    k = scan.find(key)
    report = key_guards(indexed_catalog(scan, as_json or fmt is GuardFormat.json), k)
    if as_json or fmt is GuardFormat.json:
        out.result(report.to_json())
        return
    out.print(f"[bold]{k.kind.short}[/bold] {k.key}  ({plural(len(k.entries), 'entry', 'entries')}, torch tries them in this order)")
    for i, eg in enumerate(report.entries):
        out.print(f"\n[bold]#{i} {safe(eg.entry.name)}[/bold]" + (f"  [cyan]{safe(origin_text(eg.origin))}[/cyan]" if eg.origin else ""))
        if eg.unreadable is not None:
            out.print(f"  [red]unreadable[/red]: {safe(eg.unreadable)}  "
                      + ("(torch skips it)" if eg.torch_skips else "(torch tries it)"))
            continue
        if eg.symbols:
            t = Table(box=None, pad_edge=False, show_header=True)
            for c in ("placeholder", "symbol", "source", "hint"):
                t.add_column(c)
            for sy in eg.symbols:
                t.add_row(sy.placeholder, sy.expr or "?", safe(sy.source or "?"),
                          "" if sy.hint is None else str(sy.hint))
            out.print(t)
        if not eg.guards_expr:
            out.print("  no guards: always a hit")
        elif raw:
            out.print("  " + safe(eg.guards_expr))
        elif eg.error is not None:
            out.print(f"  [red]{safe(eg.error)}[/red]\n  " + safe(eg.guards_expr))
        elif fmt is GuardFormat.summary:
            sm, clauses, names = eg.summary, eg.clauses, eg.names
            assert sm is not None
            for label, items in (
                ("range", [r.render(names.get(r.placeholder, r.placeholder)) for r in sm.ranges]),
                ("divisibility", [dv.render(names) for dv in sm.divisibility]),
                ("relation", [clauses[c.index] for c in sm.relations]),
                ("other", [clauses[c.index] for c in sm.other]),
            ):
                for n, text in enumerate(items):
                    out.print(f"  {label if n == 0 else '':<15}{safe(text)}")
            reg = eg.region()
            if reg is not None and eg.symbols and any(s.source for s in eg.symbols):
                out.print(f"  {'in your terms':<15}{safe(str(reg))}")
        elif fmt is GuardFormat.plain:
            for c in eg.clauses:
                out.print(f"  {safe(c)}")
        else:
            for c in eg.rendered(fmt.value):
                out.print("  " + safe_lines(c).replace("\n", "\n  "))
    comparison = report.comparison
    if comparison is not None and not raw:
        out.print("\n[bold]What separates the entries[/bold]")
        if comparison.common:
            out.print("  every entry: " + safe(", ".join(comparison.common)))
        for i, only in enumerate(comparison.only):
            shown = ", ".join(only) if only else "nothing of its own"
            out.print(f"  #{i} only:     " + safe(shown))
