"""``fxcache ls``: keys, entries, sizes and ages (``--dupes``, deprecated: ``fxcache dupes``)."""

from __future__ import annotations

import time
from enum import Enum
from typing import Annotated, Any, NamedTuple

import typer
from rich.filesize import decimal as human_bytes

from ._context import (
    done_reading,
    indexed_catalog,
    local_agreement,
    remote_store,
    scan_dir,
    state,
    user_path,
)
from ._options import JsonOpt
from ._output import age, deprecated, origin_text, out, plural, safe, short_path


class By(str, Enum):
    key = "key"
    function = "function"


class SortBy(str, Enum):
    size = "size"
    age = "age"
    name = "name"


def ls_cmd(
    entries: Annotated[
        bool,
        typer.Option(
            "--entries",
            "-e",
            help="Also list each key's entries, with the shapes each serves (decodes them).",
        ),
    ] = False,
    by: Annotated[
        By,
        typer.Option(
            "--by",
            case_sensitive=False,
            help="key: one row per key; function: one row per function, its keys folded.",
        ),
    ] = By.key,
    fn: Annotated[
        str | None, typer.Option("--fn", help="Only keys compiled from the function of this name.")
    ] = None,
    sort: Annotated[
        SortBy | None,
        typer.Option(
            "--sort",
            case_sensitive=False,
            help="size: largest first; age: least recently used first; name: by function name.",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Show only the first N rows (after --sort)."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Decode every entry and mark the unreadable ones (reads every file)."
        ),
    ] = False,
    dupes: Annotated[
        bool, typer.Option("--dupes", hidden=True, help="Deprecated: fxcache dupes.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """List cache keys with the function each was compiled from, their entries, sizes and last use.

    The function comes from one entry of each key (fxcache's index remembers it:
    only the first run on a cache reads an entry per key).
    """
    from fxcache_core.functions.listing import by_function

    if state.remote is not None and not (
        check or entries or dupes or as_json or fn or by is By.function or sort is SortBy.name
    ):
        _ls_remote(sort, limit)  # a plain listing reads no value
        return
    if dupes:
        deprecated("ls --dupes", "fxcache dupes")
        from .dupes import dupes as show_dupes

        show_dupes(scan_dir(quiet=as_json), as_json)
        return
    now = time.time()
    found = _listing(fn, sort, check, as_json)
    if by is By.function:
        groups = by_function(found.rows, sort.value if sort else None)
        shown_groups = groups[:limit] if limit else groups
        if as_json:
            out.result([g.to_json() for g in shown_groups])
            return
        _print_functions(found.scan, shown_groups, len(groups), entries, now)
        _refused_sources()
        return
    shown = found.rows[:limit] if limit else found.rows
    regions = _regions(found.catalog, shown) if entries else {}
    if as_json:
        out.result(
            [
                r.to_json(
                    unreadable=found.problems if check else None,
                    regions=regions if entries else None,
                    remote=_remote_side(r, found.local),
                )
                for r in shown
            ]
        )
        return
    _print_keys(found, shown, regions, entries, check, now)
    _print_totals(found, shown, fn)
    _refused_sources()


class _Found(NamedTuple):
    """What a listing read: the scan, its catalog, the rows, the unreadable entries
    (path -> why; with ``--check``) and, with ``--remote``, the keys the local cache has."""

    scan: Any
    catalog: Any
    rows: Any
    problems: dict[str, str]
    local: dict[str, str]


def _listing(fn: str | None, sort: SortBy | None, check: bool, as_json: bool) -> _Found:
    """Scan, read and list the keys (core's :func:`~fxcache_core.functions.listing.key_rows`)."""
    from fxcache_core.functions.listing import key_rows

    scan = scan_dir(quiet=as_json)
    cat = indexed_catalog(scan, as_json)
    problems: dict[str, str] = {}
    if check:  # every entry read whole first: the listing's origins then come from memory
        problems = {u.entry.file.where: u.reason for u in cat.unreadable()}
    rows = key_rows(cat, fn, sort.value if sort else None)
    done_reading()
    local = local_agreement(scan) if state.remote is not None else {}
    return _Found(scan, cat, rows, problems, local)


def _remote_side(row: Any, local: dict[str, str]) -> tuple[str | None, str | None] | None:
    """With --remote: the row's Redis key and whether the local cache agrees."""
    if state.remote is None:
        return None
    return (user_path(row.key.entries[0].path) if row.key.entries else None), local.get(row.key.key)


def _print_keys(
    found: _Found, shown: Any, regions: dict[str, Any], entries: bool, check: bool, now: float
) -> None:
    """The table: one row per key, and under it its entries (--entries) or its unreadable ones."""
    problems = found.problems
    table: list[tuple[str, ...]] = [
        ("kind", "key", "entries", "size", "last used")
        + (("check",) if check else ())
        + ("function",)
    ]
    for r in shown:
        k = r.key
        bad = sum(1 for e in k.entries if e.file.where in problems) if problems else 0
        status = (f"{bad} unreadable" if bad else "ok",) if check else ()
        table.append(
            (
                k.kind.short,
                k.key,
                str(len(k.entries)),
                human_bytes(k.size),
                age(k.last_used, now),
                *status,
                origin_text(r.origin),
            )
        )
        if entries or bad:
            for e in k.entries:
                if not entries and e.file.where not in problems:
                    continue
                why = problems.get(e.file.where)
                status = (f"unreadable: {why}" if why else "ok",) if check else ()
                reg = regions.get(e.file.where)
                shape = (
                    ("serves " + str(reg))
                    if reg is not None
                    else ("" if not entries else "unreadable")
                )
                table.append(
                    (
                        "",
                        f"  └ {e.name}",
                        "",
                        human_bytes(e.size),
                        age(e.file.last_used, now),
                        *status,
                        shape,
                    )
                )
    from fxcache_core.cache.blob import shown_as

    out.table(
        f"{remote_store().display_url} (remote)"
        if state.remote is not None
        else shown_as(found.scan.root),
        table,
        {2, 3, 4},
    )


def _print_totals(found: _Found, shown: Any, fn: str | None) -> None:
    """The lines under the table: totals, what was skipped, and notes."""
    from fxcache_core.cache.keys import KeyKind

    scan, problems, local = found.scan, found.problems, found.local
    fx = sum(1 for k in scan.keys if k.kind is KeyKind.FX_GRAPH)
    listed = len(found.rows)
    out.text(
        f"{len(scan.keys)} keys ({fx} fx, {len(scan.keys) - fx} aot), "
        f"{scan.entry_count} entries, {human_bytes(scan.size)}"
        + (f", [red]{len(problems)} unreadable[/red]" if problems else "")
        + (f"; {plural(listed, 'key')} compiled from {safe(fn)}" if fn else "")
        + (f"; showing {len(shown)} of {listed} (--limit)" if len(shown) < listed else "")
    )
    if scan.skipped:
        out.text(f"[dim]{len(scan.skipped)} paths skipped (symlinks, foreign files)[/dim]")
    if not scan.keys and state.remote is None:
        out.text(
            "[dim]No FX or AOTAutograd entries here; fxcache df accounts for every file torch keeps "
            "in this dir (precompiled headers, Triton kernels, generated code...).[/dim]"
        )
    if state.remote is not None:
        same = sum(1 for v in local.values() if v == "same")
        if local:
            vs = (
                f"sizes are the entries' pickles. {plural(len(local), 'key')} also in the local cache: "
                f"{same} hold one of its entries, {len(local) - same} differ."
            )
        else:
            vs = "sizes are the entries' pickles. No key is also in the local cache."
        out.text(
            "[dim]Remote: one entry per key, the last writer's (torch SETs without merging the "
            "entries of other shape regions); " + safe(vs) + "[/dim]"
        )


def _refused_sources() -> None:
    """A hint per source file a frame named that was not parsed (over a bound, not a
    regular file, not Python): its functions' classes are unknown, and why."""
    from fxcache_core.functions.sources import refused_sources

    for path, why in list(refused_sources().items())[:3]:
        out.hint(f"class unknown for the functions of {safe(path)} (not parsed: {safe(why)})")


def _regions(cat: Any, rows: Any) -> dict[str, Any]:
    """Entry path -> the shapes it serves in user terms (None: unreadable or not understood)."""
    from fxcache_core.guards.key_guards import entry_regions

    return entry_regions(cat, [e for r in rows for e in r.key.entries])


def _print_functions(scan: Any, groups: Any, total: int, entries: bool, now: float) -> None:
    """``ls --by function``: one row per function, its keys under it with --entries."""
    from fxcache_core.functions.origin import function_name

    table: list[tuple[str, ...]] = [("function", "keys", "entries", "size", "last used", "where")]
    for g in groups:
        o = g.origin
        fn = function_name(o)  # the function's name and place
        where = f"{short_path(fn.file)}:{fn.line}" if o else "-"
        table.append(
            (
                fn.readable or "(unknown)",
                str(len(g.keys)),
                str(g.entries),
                human_bytes(g.size),
                age(g.last_used, now),
                where,
            )
        )
        if entries:
            for r in g.keys:
                k = r.key
                table.append(
                    (
                        f"  └ {k.kind.short} {k.key}",
                        "",
                        str(len(k.entries)),
                        human_bytes(k.size),
                        age(k.last_used, now),
                        "",
                    )
                )
    from fxcache_core.cache.blob import shown_as

    out.table(shown_as(scan.root), table, {1, 2, 3, 4})
    out.text(
        f"{plural(total, 'function')}, {len(scan.keys)} keys, {scan.entry_count} entries, "
        f"{human_bytes(scan.size)}"
        + (f"; showing {len(groups)} (--limit)" if len(groups) < total else "")
    )


def _ls_remote(sort: SortBy | None, limit: int | None) -> None:
    """``ls --remote`` without --entries/--check/--json/--fn: from the listing alone
    (SCAN, MEMORY USAGE, OBJECT IDLETIME), no value read."""
    from fxcache_core.cache.keys import KeyKind

    store = remote_store()
    entries = sorted(store.entries(), key=lambda e: (e.kind is not KeyKind.FX_GRAPH, e.key))
    used = {
        e.redis_key: store.last_used(e) for e in entries
    }  # fxcache's own earlier reads discounted
    if sort is SortBy.size:
        entries.sort(key=lambda e: -e.size)
    elif sort is SortBy.age:
        entries.sort(key=lambda e: (used[e.redis_key] is None, used[e.redis_key] or 0.0))
    now = time.time()
    rows = [("kind", "key", "size", "last used")]
    for e in entries[:limit] if limit else entries:
        rows.append((e.kind.short, e.key, human_bytes(e.size), age(used[e.redis_key], now)))
    out.table(f"{remote_store().display_url} (remote)", rows, {2, 3})
    fx = sum(1 for e in entries if e.kind is KeyKind.FX_GRAPH)
    out.text(
        f"{len(entries)} keys ({fx} fx, {len(entries) - fx} aot), one entry each, "
        f"{human_bytes(sum(e.size for e in entries))} of Redis memory"
    )
    out.text(
        "[dim]Remote: one entry per key, the last writer's (torch SETs without merging the "
        "entries of other shape regions). --entries, --check or --json read the values and "
        "compare them with the local cache.[/dim]"
    )
