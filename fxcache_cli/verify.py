"""``fxcache verify``: every entry against the digest in its name, and that it decodes."""

from __future__ import annotations

import typer

from ._context import done_reading, open_catalog, scan_dir
from ._errors import FAILURE
from ._options import JsonOpt
from ._output import out, plural, safe, short


def verify_cmd(as_json: JsonOpt = False) -> None:
    """Check every entry against the digest in its name, and that it decodes: truncated,
    altered or misfiled entries. Exit 1 if any is bad, or could not be checked."""
    from fxcache_core.catalog.verify import verify

    scan = scan_dir(quiet=as_json)
    rep = verify(open_catalog(scan, indexed=False, as_json=as_json))
    done_reading()
    if as_json:
        out.result(rep.to_json())
    else:
        for b in rep.bad:
            e = b.entry
            out.print(f"[red]bad[/red] {e.kind.short} {short(e.key)}/{safe(short(e.name))}: " + safe("; ".join(b.problems)))
        for u in rep.unchecked:
            e = u.entry
            out.print(f"[yellow]not checked[/yellow] {e.kind.short} {short(e.key)}/{safe(short(e.name))}: {safe(u.reason)}")
        if rep.passed:
            out.print(f"{plural(rep.entries, 'entry', 'entries')} checked: "
                      "[green]all match their names and decode[/green]")
        else:
            out.print(f"{plural(rep.entries, 'entry', 'entries')}: {rep.checked} checked, "
                      + (f"[red]{len(rep.bad)} bad[/red]" if rep.bad else "none bad")
                      + (f", [yellow]{len(rep.unchecked)} not checked[/yellow] (not a pass)" if rep.unchecked else "")
                      + ("; `fxcache gc --unreadable` removes the bad ones." if rep.bad else "."))
    if not rep.passed:
        raise typer.Exit(FAILURE)
