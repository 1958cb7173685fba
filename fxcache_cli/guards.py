"""``fxcache guards KEY``: each entry's guards as sympy, with each tN traced to its symbol and source."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer
from rich.table import Table

from ._app import JsonOpt
from ._context import indexed_catalog, scan_dir
from ._output import emit_json, out, plural, safe, safe_lines


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
    from fxcache_core.catalog import Unreadable
    from fxcache_core.errors import GuardParseError
    from fxcache_core.guard_view import (
        MAX_SHOWN_CLAUSES,
        compare_entries,
        expr_tree,
        render,
        summarize,
        symbol_names,
    )
    from fxcache_core.guards import parse_guards

    scan = scan_dir(quiet=as_json)
    k = scan.find(key)
    cat = indexed_catalog(scan, as_json or fmt is GuardFormat.json)
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
            if g is not None and len(g.clauses) > MAX_SHOWN_CLAUSES:
                row["error"] = (f"{len(g.clauses):,} clauses, more than fxcache shows through sympy "
                                f"({MAX_SHOWN_CLAUSES}): the string as stored")
                g = None
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
        emit_json(body)
        return
    out.print(f"[bold]{k.kind.short}[/bold] {k.key}  ({plural(len(k.entries), 'entry', 'entries')}, torch tries them in this order)")
    for i, row in enumerate(rows):
        out.print(f"\n[bold]#{i} {safe(row['entry'])}[/bold]" + (f"  [cyan]{safe(row['origin'])}[/cyan]" if row.get("origin") else ""))
        if "guards_expr" not in row:
            out.print(f"  [red]unreadable[/red]: {safe(row['error'])}  (torch skips it)")
            continue
        if row["symbols"]:
            t = Table(box=None, pad_edge=False, show_header=True)
            for c in ("placeholder", "symbol", "source", "hint"):
                t.add_column(c)
            for ph, sy in row["symbols"].items():
                t.add_row(ph, sy["symbol"] or "?", safe(sy["source"] or "?"),
                          "" if sy["hint"] is None else str(sy["hint"]))
            out.print(t)
        if not row["guards_expr"]:
            out.print("  no guards: always a hit")
        elif raw:
            out.print("  " + safe(row["guards_expr"]))
        elif "error" in row:
            out.print(f"  [red]{safe(row['error'])}[/red]\n  " + safe(row["guards_expr"]))
        elif fmt is GuardFormat.summary:
            sm, clauses = row["summary"], row["clauses"]
            for label, items in (
                ("range", [r["text"] for r in sm["ranges"]]),
                ("divisibility", [dv["text"] for dv in sm["divisibility"]]),
                ("relation", [clauses[j] for j in sm["relations"]]),
                ("other", [clauses[j] for j in sm["other"]]),
            ):
                for n, text in enumerate(items):
                    out.print(f"  {label if n == 0 else '':<13}{safe(text)}")
        elif fmt is GuardFormat.plain:
            for c in row["clauses"]:
                out.print(f"  {safe(c)}")
        else:
            for c in row["rendered"]:
                out.print("  " + safe_lines(c).replace("\n", "\n  "))
    if comparison is not None and not raw:
        out.print("\n[bold]What separates the entries[/bold]")
        if comparison.common:
            out.print("  every entry: " + safe(", ".join(comparison.common)))
        for i, only in enumerate(comparison.only):
            shown = ", ".join(only) if only else "nothing of its own"
            out.print(f"  #{i} only:     " + safe(shown))
