"""``fxcache verify``: every entry against the digest in its name, and that it decodes."""

from __future__ import annotations

import typer
from rich.markup import escape

from ._app import JsonOpt
from ._context import done_reading, open_catalog, scan_dir
from ._output import emit_json, out, plural


def verify_cmd(as_json: JsonOpt = False) -> None:
    """Check every entry against the digest in its name, and that it decodes: truncated,
    altered or misfiled entries. Exit 1 if any is found."""
    scan = scan_dir(quiet=as_json)
    problems, unchecked = open_catalog(scan, indexed=False, as_json=as_json).verify()
    done_reading()
    if as_json:
        emit_json({"entries": scan.entry_count, "problems": [
            {"kind": e.kind.value, "key": e.key, "entry": e.name, "path": str(e.path), "problems": w}
            for e, w in problems], "unchecked": [{"path": str(e.path), "why": w} for e, w in unchecked]})
    else:
        for e, w in problems:
            out.print(f"[red]bad[/red] {e.kind.short} {e.key[:16]}/{escape(e.name[:16])}: " + escape("; ".join(w)))
        for e, w in unchecked:
            out.print(f"[yellow]not checked[/yellow] {e.kind.short} {e.key[:16]}/{escape(e.name[:16])}: {escape(w)}")
        out.print(f"{plural(scan.entry_count, 'entry', 'entries')} checked: "
                  + (f"[red]{len(problems)} bad[/red]" if problems else "[green]all match their names and decode[/green]")
                  + ("; `fxcache gc --unreadable` removes them." if problems else ""))
    if problems:
        raise typer.Exit(1)
