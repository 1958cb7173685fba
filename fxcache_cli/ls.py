"""``fxcache ls``: keys, entries, sizes and ages; ``--dupes``: fragmented FX keys."""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer
from rich.filesize import decimal as human_bytes

from fxcache_core.keys import KeyKind

from ._app import JsonOpt
from ._context import (
    done_reading,
    indexed_catalog,
    local_agreement,
    open_catalog,
    remote_store,
    scan_dir,
    state,
    user_path,
)
from ._output import age, columns, emit, emit_json, out, plural, safe


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
    scan = scan_dir(quiet=as_json)
    if dupes:
        _dupes(scan, as_json)
        return
    now = time.time()
    problems: dict[str, str] = {}
    if check:

        problems = {u.entry.file.where: u.reason for u in indexed_catalog(scan, as_json).unreadable()}
        done_reading()
    local = local_agreement(scan) if state.remote is not None else {}
    if as_json:
        def entry_json(e):
            row = {"entry": e.name, "size": e.size, "mtime": e.mtime}
            if check:
                row["unreadable"] = problems.get(e.file.where)
            return row

        emit_json([
            {
                "kind": k.kind.value, "key": k.key, "path": str(k.path),
                "size": k.size, "mtime": k.mtime,
                "entries": [entry_json(e) for e in k.entries],
                "temp_files": [t.name for t in k.temp_files],
                **({"redis_key": user_path(k.entries[0].path) if k.entries else None,
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
                     age(k.mtime, now), *status))
        if entries or bad:
            for e in k.entries:
                if not entries and e.file.where not in problems:
                    continue
                why = problems.get(e.file.where)
                status = ((f"unreadable: {why}" if why else "ok",) if check else ())
                rows.append(("", f"  └ {e.name}", "", human_bytes(e.size), age(e.mtime, now), *status))
    columns(f"{remote_store().display_url} (remote)" if state.remote is not None else str(scan.root), rows, {2, 3, 4})
    fx = sum(1 for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    emit(
        f"{len(scan.keys)} keys ({fx} fx, {len(scan.keys) - fx} aot), "
        f"{scan.entry_count} entries, {human_bytes(scan.size)}"
        + (f", [red]{len(problems)} unreadable[/red]" if problems else "")
    )
    if scan.skipped:
        emit(f"[dim]{len(scan.skipped)} paths skipped (symlinks, foreign files)[/dim]")
    if state.remote is not None:
        same = sum(1 for v in local.values() if v == "same")
        if local:
            vs = (f"sizes are the entries' pickles. {plural(len(local), 'key')} also in the local cache: "
                  f"{same} hold one of its entries, {len(local) - same} differ.")
        else:
            vs = "sizes are the entries' pickles. No key is also in the local cache."
        emit("[dim]Remote: one entry per key, the last writer's (torch SETs without merging the "
                  "entries of other shape regions); " + safe(vs) + "[/dim]")



def _ls_remote() -> None:
    """``ls --remote`` without --entries/--check/--json: from the listing alone
    (SCAN, MEMORY USAGE, OBJECT IDLETIME), no value read."""
    entries = sorted(remote_store().entries(), key=lambda e: (e.kind is not KeyKind.FX_GRAPH, e.key))
    now = time.time()
    rows = [("kind", "key", "size", "last used")]
    for e in entries:
        rows.append((e.kind.short, e.key, human_bytes(e.size),
                     "-" if e.idle_s is None else age(now - e.idle_s, now)))
    columns(f"{remote_store().display_url} (remote)", rows, {2, 3})
    fx = sum(1 for e in entries if e.kind is KeyKind.FX_GRAPH)
    emit(f"{len(entries)} keys ({fx} fx, {len(entries) - fx} aot), one entry each, "
              f"{human_bytes(sum(e.size for e in entries))} of Redis memory")
    emit("[dim]Remote: one entry per key, the last writer's (torch SETs without merging the "
              "entries of other shape regions). --entries, --check or --json read the values and "
              "compare them with the local cache.[/dim]")



def _dupes(scan: Any, as_json: bool) -> None:
    from fxcache_core.anatomy import fragmentation

    frags = fragmentation(open_catalog(scan, indexed=False, as_json=as_json))
    done_reading()
    if as_json:
        emit_json([{"keys": [k.key for k in f.keys], "differ": list(f.differ), "reason": f.reason,
                     "size": sum(k.size for k in f.keys)} for f in frags])
        return
    for f in frags:
        out.print(f"[bold]{plural(len(f.keys), 'FX key')}[/bold], {human_bytes(sum(k.size for k in f.keys))}: "
                  + safe(f.reason))
        for k in f.keys:
            out.print(f"  {k.key}  {plural(len(k.entries), 'entry', 'entries')}")
    fx = sum(1 for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    out.print(f"{plural(len(frags), 'group')} of fragmented keys among {plural(fx, 'FX key')}.")
