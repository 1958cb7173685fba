"""``fxcache df``: disk usage of the cache dir by kind of content, and what gc would reclaim."""

from __future__ import annotations

import os
import time
from typing import Annotated, Any

import typer
from rich.filesize import decimal as human_bytes

from ._context import done_reading, installed_build, open_catalog, state
from ._options import JsonOpt
from ._output import age, fail, out, plural, safe


def df_cmd(
    stale: Annotated[bool, typer.Option("--stale", help="Also show what gc --stale would reclaim (imports torch).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Disk usage of the cache dir by kind of content: files, bytes, last use, and what gc would
    reclaim. Totals are what find and du say of the same dir; $TRITON_CACHE_DIR too when set elsewhere."""
    from fxcache_core.cache.blob import shown_as
    from fxcache_core.cache.location import resolve_cache_dir, triton_cache_dir
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.errors import CacheDirError
    from fxcache_core.prune.disk_usage import measure
    from fxcache_core.state.index import default_index_path

    if state.remote is not None:
        fail("df measures a local cache dir; --remote caches are listed by fxcache --remote ls")
    root = resolve_cache_dir(state.cache_dir)
    build = installed_build() if stale else None
    kw: dict[str, Any] = {}
    if build is not None:
        kw = {"stale_against": tuple(build.hashes.items()), "stale_include_dir": build.include_dir}
    reports = [measure(open_catalog(scan_cache(root), indexed=True, as_json=as_json, hashing=True),
                       index_path=default_index_path(root), **kw)]
    triton = triton_cache_dir(root)
    if triton is not None:
        try:
            reports.append(measure(open_catalog(scan_cache(triton), indexed=False, as_json=as_json), **kw))
        except (OSError, CacheDirError) as e:
            fail(f"$TRITON_CACHE_DIR {triton}: {str(e)}")
    done_reading()
    if as_json:
        out.result(reports[0].to_json_with(reports[1] if len(reports) > 1 else None))
        return
    for n, rep in enumerate(reports):
        if n:
            out.text("")
        _render(rep, stale, title=shown_as(rep.root) + (" ($TRITON_CACHE_DIR)" if n else ""))
    _pch_note(root)


def _render(rep: Any, stale: bool, title: str) -> None:
    now = time.time()
    rows: list[tuple[str, ...]] = [("kind", "files", "size", "oldest use", "newest use", "reclaimable")
                                   + (("--stale",) if stale else ())]

    def rec(r: Any) -> str:
        return "-" if r is None else (human_bytes(r.bytes) if r.bytes or not r.files
                                      else plural(r.files, "file"))

    for k in rep.kinds:
        rows.append((k.kind.label, f"{k.files:,}", human_bytes(k.bytes), age(k.oldest, now),
                     age(k.newest, now), rec(k.reclaimable)) + ((rec(k.stale),) if stale else ()))
        for d, n, b in k.by_detail if len(k.by_detail) > 1 else ():
            rows.append((f"  {d or '-'}", f"{n:,}", human_bytes(b), "", "", "") + (("",) if stale else ()))
    t = rep.totals
    rows.append(("total", f"{t.files:,}", human_bytes(t.bytes), "", "", rec(rep.reclaimable))
                + ((rec(rep.stale),) if stale else ()))
    out.table(title, rows, {1, 2, 3, 4, 5, 6})
    out.text(f"{plural(t.files, 'file')}, {t.bytes:,} bytes (find -type f); with {plural(t.dirs, 'dir')}"
         + (f", {plural(t.symlinks, 'symlink')}" if t.symlinks else "")
         + (f", {t.other} other" if t.other else "")
         + f": {t.paths:,} inodes (find | wc -l), {t.apparent_bytes:,} bytes apparent "
         f"(du --apparent-size), {human_bytes(t.disk_bytes)} on disk (du).")
    r = rep.reclaimable
    out.text(f"Reclaimable by gc's default policy (fxcache gc): {human_bytes(r.bytes)} in {plural(r.files, 'file')}."
         + ("" if stale else " What --stale would free: fxcache df --stale (imports torch)."))
    if rep.undecided:
        out.text(f"[dim]--stale could not judge {plural(len(rep.undecided), 'file')} (kept): "
             + safe(rep.undecided[0][1]) + "[/dim]")
    for p, why in rep.unreadable[:5]:
        out.text(f"[yellow]not counted[/yellow] {safe(p)}: {safe(why)}")
    if rep.index is not None:
        where = "inside" if rep.index[0].startswith(str(rep.root).rstrip("/") + "/") else "outside"
        out.text(f"[dim]fxcache's index of this cache: {safe(rep.index[0])} "
             f"({human_bytes(rep.index[1])}), {where} the cache dir.[/dim]")


def _pch_note(root: Any) -> None:
    """Torch keeps precompiled headers in the default cache dir, whatever
    TORCHINDUCTOR_CACHE_DIR says (codecache.py ``_HEADER_DIR``): say where, when elsewhere."""
    from fxcache_core.cache.location import default_cache_dir

    d = default_cache_dir()
    pch = d / "precompiled_headers"
    if os.path.realpath(d) == os.path.realpath(root) or not pch.is_dir():
        return
    try:
        size = sum(e.stat(follow_symlinks=False).st_size for e in os.scandir(pch) if e.is_file(follow_symlinks=False))
    except OSError:
        return
    out.text(f"[dim]Torch keeps precompiled headers in the default cache dir whatever TORCHINDUCTOR_CACHE_DIR "
         f"says: {human_bytes(size)} in {safe(str(pch))} (fxcache --cache-dir {safe(str(d))} df).[/dim]")
