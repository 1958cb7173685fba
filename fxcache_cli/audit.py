"""``fxcache audit``: entries that can never be served, and entries whose regions overlap.

Renders what :func:`fxcache_core.lookup.audit.audit` decides; decides nothing.
``fxcache match --audit``, the older spelling, calls :func:`audit` too.
"""

from __future__ import annotations

from ._context import done_reading, indexed_catalog, scan_dir
from ._options import JsonOpt
from ._output import out, paint, plural, safe, short


def audit_cmd(as_json: JsonOpt = False) -> None:
    """Across the cache: entries that can never be served (shadowed by an earlier one) and entries
    whose regions overlap (match --audit)."""
    audit(as_json)


def audit(as_json: bool) -> None:
    """The audit, shown or as JSON (``fxcache audit``, ``fxcache match --audit``)."""
    from fxcache_core.lookup.audit import audit as audit_cache

    scan = scan_dir(quiet=as_json)
    report = audit_cache(indexed_catalog(scan, as_json))
    done_reading()
    if as_json:
        out.result(report.to_json())
        return
    for k, fs in report:
        out.print(f"\n[bold]{k.kind.short}[/bold] {k.key}")
        if not fs:
            out.print("  [dim]no findings in the pairs compared[/dim]")
        for f in fs:
            out.print(f"  {paint(f.kind)} {safe(short(f.earlier.name))} / {safe(short(f.later.name))}: "
                      f"{safe(f.detail)}")
    out.print(("\n" if len(report) else "")
              + f"{plural(report.keys_checked, 'key')} with several entries checked: "
              f"{plural(report.count('shadowed'), 'entry', 'entries')} shadowed, "
              f"{plural(report.count('overlap'), 'pair')} overlapping, "
              f"{plural(report.count('not-analysed'), 'pair')} not analysed "
              "(guards beyond per-symbol ranges).")
    if report.partial:
        out.print(f"{plural(report.not_compared(), 'pair')} not compared ({safe(report.stopped)}): "
                  f"{plural(len(report.partial), 'key')} audited only in part: "
                  + ", ".join(f"{short(k.key)} ({n:,})" for k, n in report.partial[:10])
                  + (f", … {len(report.partial) - 10} more" if len(report.partial) > 10 else "") + ".")
