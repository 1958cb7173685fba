"""``fxcache report OUT.html``: one self-contained HTML page of a cache, and of a traced run.

Parses, calls core (:func:`fxcache_core.report.cache_report.cache_report`, with
``explain`` of ``--from-trace``), renders the report's JSON as a page
(:mod:`fxcache_cli._report_page`); decides nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._context import done_reading, open_catalog, state
from ._options import DynamicOpt, JsonOpt, mode_of
from ._output import ReadProgress, fail, out, plural, safe


def report_cmd(
    output: Annotated[str, typer.Argument(
        help="The HTML file to write (replaced if it exists), e.g. report.html.", show_default=False)],
    from_trace: Annotated[str | None, typer.Option(
        "--from-trace", help="A run's TORCH_TRACE (the dir or one file): its lookups on the maps, "
        "its compiles on a timeline, and what explain says of it. The cache is --cache-dir, else "
        "the one the run wrote to.")] = None,
    fn: Annotated[str | None, typer.Option(
        "--fn", help="Only the keys compiled from this function in the per-function part "
        "(the overview stays the whole cache dir's).")] = None,
    dynamic: DynamicOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write one HTML page that shows the cache (disk by kind and by function, what gc would
    reclaim, each function's keys, entries and the shapes each serves) and a traced run (its
    compiles and lookups on a timeline, explain's verdict), drawn offline with Vega-Lite. The
    page embeds its data as JSON (--json prints it). Needs the report extra."""
    from ._report_page import MISSING_EXTRA, missing_requirements

    missing = missing_requirements()
    if missing:
        fail(MISSING_EXTRA.format(", ".join(missing)))
    if state.remote is not None:
        fail("report draws a local cache dir; --remote caches are listed by fxcache --remote ls")
    path = Path(output)
    if path.is_dir():
        fail(f"{output}: a directory; give the HTML file to write")
    if not path.parent.is_dir():
        fail(f"{output}: no such directory {str(path.parent)!r}")
    data = _report(from_trace, fn, mode_of(dynamic), as_json).to_json()
    from ._report_page import render_page, write_page

    try:
        size = write_page(path, render_page(data))
    except OSError as e:
        fail(f"{output}: cannot write it: {e.strerror or e}")
    if as_json:
        out.result(data)
        return
    maps = sum(len(f["maps"]) for f in data["functions"])
    run = data["run"]
    out.text(f"wrote {safe(str(path))} ({size / 1e6:.1f} MB): {plural(len(data['functions']), 'function')}, "
             f"{plural(maps, 'map')}" + (f", a run of {plural(run['lookups_total'], 'lookup')}" if run else ""))


def _report(from_trace: str | None, fn: str | None, mode: Any, as_json: bool) -> Any:
    """The report of --cache-dir (or the run's cache), with the run explained against it."""
    from fxcache_core.cache.location import resolve_cache_dir, triton_cache_dir
    from fxcache_core.cache.scan import scan_cache
    from fxcache_core.report.cache_report import cache_report
    from fxcache_core.state.index import default_index_path

    run = scan = None
    if from_trace is not None:
        from fxcache_core.trace.reader import trace_files
        from fxcache_core.trace.run import read_run
        from fxcache_core.trace.run_cache import run_cache

        trace = Path(from_trace)
        files = trace_files(trace)  # not a trace: one line, exit 2
        prog = ReadProgress(sum(f.stat().st_size for f in files), enabled=not as_json, label="reading trace")
        try:
            run = read_run(trace, on_bytes=prog.advance)
        finally:
            prog.close()
        scan, why_none = run_cache(run, state.cache_dir)
        if scan is None:
            fail(f"no cache dir to report on: {why_none}")
    else:
        scan = scan_cache(resolve_cache_dir(state.cache_dir))
    # Hashing each file read, as gc does: its default plan (unreadable entries) needs the
    # hashes, which the index then keeps for the next run.
    catalog = open_catalog(scan, indexed=True, as_json=as_json, hashing=True)
    explained = None
    if run is not None:
        from fxcache_core.trace.explain import explain

        steps = ReadProgress(len(run.lookups), enabled=not as_json, label="explaining lookups")
        explained = explain(run, catalog, on_lookup=steps)
        steps.close()
    triton = triton_cache_dir(scan.root)
    other = open_catalog(scan_cache(triton), indexed=False, as_json=True) if triton is not None else None
    report = cache_report(catalog, function=fn, run=explained, mode=mode,
                          index_path=default_index_path(scan.root), triton=other)
    done_reading()
    return report
