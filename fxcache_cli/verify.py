"""``fxcache verify``: every entry against the digest in its name, that it decodes, and the
globals it names; or, given a pack, everything ``unpack`` checks before it writes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from ._context import done_reading, open_catalog, scan_dir, state
from ._errors import FAILURE
from ._options import JsonOpt
from ._output import ReadProgress, out, plural, safe, short

SCAN_NOTE = ("the code scan finds the globals torch would run that it does not write itself; "
             "it does not prove a cache safe")


def _shown(path: str, root: Path) -> str:
    """A profile's path as the user knows it: in a blob or artifact laid out in a temp
    dir, its place there and the file it came from."""
    from fxcache_core.cache.blob import laid_out_from, shown_as

    if laid_out_from(root) is None:
        return path
    return f"{os.path.relpath(path, root)} in {shown_as(root)}"


def verify_cmd(
    pack: Annotated[str | None, typer.Argument(
        metavar="[PACK]", help="A pack to check instead of the cache dir: every member against its "
        "manifest, the manifest's claims against its entries, every member needed, and the code scan; "
        "writes nothing.", show_default=False)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every entry against the digest in its name, that it decodes, and that its pickle
    names only globals torch writes (what torch would run on a hit): truncated, altered,
    misfiled or foreign entries, and Dynamo's saved profiles. Exit 1 if any is bad, or could
    not be checked. Warns when others can write where torch loads code from."""
    if pack is not None:
        _verify_pack(Path(pack), as_json)
        return
    from fxcache_core.catalog.verify import verify
    from fxcache_core.reasons import code_of

    scan = scan_dir(quiet=as_json)
    rep = verify(open_catalog(scan, indexed=False, as_json=as_json), check_dirs=state.remote is None)
    done_reading()
    if as_json:
        out.result(rep.to_json())
    else:
        for b in rep.bad:
            e = b.entry
            out.print(f"[red]bad[/red] {e.kind.short} {short(e.key)}/{safe(short(e.name))}: " + safe("; ".join(b.problems)))
        for p in rep.bad_profiles:
            out.print(f"[red]bad[/red] profile {safe(_shown(p.path, scan.root))}: "
                      + safe("; ".join(f.reason for f in p.foreign)))
        for u in rep.unchecked:
            e = u.entry
            out.print(f"[yellow]not checked[/yellow] {e.kind.short} {short(e.key)}/{safe(short(e.name))}: {safe(u.reason)}")
        for path, why in rep.unchecked_profiles:
            out.print(f"[yellow]not checked[/yellow] profile {safe(_shown(path, scan.root))}: {safe(why)}")
        for r in rep.exposure:
            out.warning(safe(r.text))
        profiles = f" and {plural(rep.profiles, 'saved profile')}" if rep.profiles else ""
        if rep.passed:
            out.print(f"{plural(rep.entries, 'entry', 'entries')}{profiles} checked: [green]all match their "
                      "names, decode, and name only globals torch writes[/green]")
        else:
            out.print(f"{plural(rep.entries, 'entry', 'entries')}{profiles}: {rep.checked} entries checked, "
                      + (f"[red]{len(rep.bad) + len(rep.bad_profiles)} bad[/red]" if rep.bad or rep.bad_profiles
                         else "none bad")
                      + (f", [yellow]{len(rep.unchecked) + len(rep.unchecked_profiles)} not checked[/yellow] "
                         "(not a pass)" if not rep.all_checked else "")
                      + ("; `fxcache gc --unreadable` removes the unreadable ones." if any(
                          code_of(p) != "foreign-global" for b in rep.bad for p in b.problems) else "."))
        out.print(f"[dim]{SCAN_NOTE}[/dim]")
    if not rep.passed:
        raise typer.Exit(FAILURE)


def _verify_pack(path: Path, as_json: bool) -> None:
    """``verify PACK``: :func:`fxcache_core.pack.contents.check_pack`, nothing written;
    exit 2 when the pack is damaged (one line), 1 when an entry names a foreign global."""
    check = checked_pack(path, as_json)
    if as_json:
        out.result({"pack": str(path), **check.to_json()})
    else:
        show_foreign(check.foreign)
        m = check.manifest
        out.print(f"{safe(str(path))}: {plural(len(m.members), 'member')} intact (each matches the manifest's "
                  f"sha256), the manifest's claims are its entries' own, every member is needed; "
                  + (f"[red]{plural(len(check.foreign), 'entry', 'entries')} of {len(m.entries)} name "
                     "globals torch does not write[/red]" if check.foreign else
                     f"[green]its {plural(len(m.entries), 'entry', 'entries')} name only globals torch "
                     "writes[/green]"))
        out.print(f"[dim]{SCAN_NOTE}[/dim]")
    if check.foreign:
        raise typer.Exit(FAILURE)


def checked_pack(path: Path, as_json: bool) -> Any:
    """The pack checked, with a progress bar over its bytes (PackError: exit 2, one line)."""
    from fxcache_core.pack.contents import check_pack

    try:
        size = path.stat().st_size if path.is_file() else 0
    except (OSError, ValueError):
        size = 0  # a name over the system's limit...: check_pack refuses it in one line
    prog = ReadProgress(size, enabled=not as_json, label="checking")
    try:
        return check_pack(path, on_bytes=prog.advance)
    finally:
        prog.close()


def show_foreign(found: Any) -> None:
    """One line per packed entry that names globals torch does not write, with the calls."""
    for f in found:
        e = f.entry
        out.print(f"[red]foreign[/red] {'fx' if e.kind == 'fxgraph' else 'aot'} {short(e.key)}/{safe(short(e.entry))}: "
                  + safe("; ".join(g.reason for g in f.foreign)))
