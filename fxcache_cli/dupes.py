"""``fxcache dupes``: FX keys that are one key but for symbol names, grouped.

Renders what :func:`fxcache_core.keying.anatomy.fragmentation` decides; decides
nothing. ``fxcache ls --dupes``, the older spelling, calls :func:`dupes` too.
"""

from __future__ import annotations

from typing import Any

from ._context import done_reading, open_catalog, scan_dir
from ._options import JsonOpt
from ._output import out, plural, safe


def dupes_cmd(as_json: JsonOpt = False) -> None:
    """FX keys that are one key but for symbol names (fragmentation), grouped, with the reason
    (ls --dupes)."""
    dupes(scan_dir(quiet=as_json), as_json)


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
