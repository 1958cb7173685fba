"""``fxcache key`` (what a key is made of) and ``fxcache diff`` (which components differ)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ._context import installed_build, not_read, scan_dir
from ._options import JsonOpt
from ._output import fail, origin_text, out, plural, safe, safe_lines, short


def key_cmd(
    key: Annotated[str | None, typer.Argument(help="A cache key or a unique prefix of one.")] = None,
    group: Annotated[str | None, typer.Option(
        "--group", help="List every component of this group (gm, example_inputs, fx_kwargs, inductor_config, ...).")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="List every component (600 and more), not the summary.")] = False,
    current: Annotated[bool, typer.Option(
        "--current", help="The installed torch's build components (imports torch); with KEY, "
        "whether that key was built by it.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What a key is made of: per component group, how many components and which
    settings are not at torch's defaults, then the components that matter (--all: every one)."""
    from fxcache_core.keying.anatomy import stale_components

    if key is None and not current:
        fail("give a KEY (a unique prefix), or --current")
    build = installed_build() if current else None
    if key is None:
        assert build is not None
        _show_build(build, as_json)
        return
    a, origin = _anatomy(key, group, as_json)
    stale = stale_components(a.components, build.hashes) if build is not None else None
    if as_json:
        out.result(a.to_json(group, stale=stale, origin=origin))
        return
    _show_anatomy(a, origin, stale, group, show_all)


def _show_build(build: Any, as_json: bool) -> None:
    """``key --current``: the installed torch's build components."""
    if as_json:
        out.result(build.to_json())
        return
    out.print(f"installed torch {safe(build.torch_version)}: "
              + safe(", ".join(f"{n} {short(h, 12)}" for n, h in build.hashes.items())))
    for n, h in build.hashes.items():
        out.print(f"  [dim]{safe(f'[{short(h, 12)}]')}[/dim] {safe(n)}: {safe(build.values[n])}")


def _anatomy(key: str, group: str | None, as_json: bool) -> tuple[Any, Any]:
    """Core's anatomy of ``key`` and the key's origin; exit 2 when ``--group`` names
    no group the key has."""
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.functions.origin import key_origin
    from fxcache_core.keying.anatomy import anatomy, settings_not_at_default

    scan = scan_dir(quiet=as_json)
    cat = Catalog(scan, not_read=not_read())
    a = anatomy(cat, scan.find(key))
    names = [g.group for g in settings_not_at_default(a.components)]
    if group is not None and a.components and group not in names:
        fail(f"--group {group!r}: key {short(a.key.key, 12)} has no such group; its groups: {', '.join(names)}")
    return a, key_origin(cat, a.key)


def _show_anatomy(a: Any, origin: Any, stale: Any, group: str | None, show_all: bool) -> None:
    """A key's anatomy as text: the verdict of --current, the key, then its components
    (one group, every one, or the summary and what matters)."""
    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.keying.anatomy import graph_summary, settings_not_at_default
    from fxcache_core.keying.defaults import torch_version

    TORCH_VERSION = torch_version()
    groups = settings_not_at_default(a.components)
    if stale is not None:  # --current: the answer first
        out.print(("[red]stale[/red]: built by another torch or system ("
                   + safe(", ".join(stale)) + " differ from the installed torch's): no lookup of "
                   "this torch reaches it") if stale
                  else "[green]built by the installed torch and system[/green]")
    out.print(f"[bold]{a.key.kind.short}[/bold] {a.key.key}  ({plural(len(a.key.entries), 'entry', 'entries')})"
              + (f"  [cyan]{safe(origin_text(origin))}[/cyan]" if origin else ""))
    if a.key.kind is KeyKind.AOT_AUTOGRAD:
        out.print("  AOTAutograd entries store no key components; they load these FX keys "
                  "(`fxcache key FX_KEY` shows theirs):")
        for role, k in a.loads:
            out.print(f"  {role:<9} {k}")
        return
    if a.entry is None:
        out.print("  [yellow]no entry of this key can be read: no components to show[/yellow]")
        return
    out.print(f"  {plural(len(a.components), 'component')}, read from entry {short(a.entry)}"
              + (f"; group {safe(group)}: {sum(1 for c in a.components if c.group == group)}" if group else ""))
    if show_all or group is not None:
        for c in a.components:
            if group is None or c.group == group:
                _component_line(c)
        return
    _summary(groups, TORCH_VERSION)
    out.print("\n[bold]What matters[/bold]")
    for c in a.components:
        if c.group == "gm":
            out.print(f"  [bold]gm[/bold]: the FX graph, {safe(graph_summary(c))} (--group gm shows it)")
        elif c.group == "example_inputs":
            _component_line(c)
    for g in groups:
        for c, default in g.not_default:
            _component_line(c, f"  [dim](default: {safe(default)})[/dim]")
    build_parts = [f"{c.name} {short(c.hash, 12)}" for c in a.components if c.group in ("torch_version", "system_info")]
    if build_parts:
        out.print("  [bold]built by[/bold]: " + safe(", ".join(build_parts))
                  + " [dim](key --current KEY: whether the installed torch did)[/dim]")
    out.print(f"[dim]Default: what a plain torch.compile(f) hashes on torch {TORCH_VERSION} (fxcache's recorded "
              "table, tools/record_defaults.py). --all lists every component; --group NAME one group.[/dim]")




def _summary(groups, torch_version: str) -> None:
    """One row per component group; the settings groups of one component folded into one row."""
    rows: list[tuple[str, ...]] = [("group", "components", f"not at torch {torch_version}'s defaults")]
    small = [g for g in groups if g.setting and g.components == 1]
    for g in groups:
        if g in small:
            continue
        if not g.setting:
            note = f"({g.about})" if g.about else ""
        else:
            note = str(len(g.not_default)) + (f", {len(g.unknown)} with no recorded default" if g.unknown else "")
        rows.append((g.group, str(g.components), note))
    if small:
        off = sum(len(g.not_default) for g in small)
        unknown = sum(len(g.unknown) for g in small)
        rows.append((f"{len(small)} other settings", str(len(small)),
                     str(off) + (f", {unknown} with no recorded default" if unknown else "")))
    width = max(len(r[0]) for r in rows)
    out.print("")
    for r in rows:
        out.print(f"  {safe(r[0]):<{width}}  {r[1]:>10}  {safe(r[2])}")


def _component_line(c: Any, suffix: str = "") -> None:
    text = safe_lines(c.readable).replace("\n", "\n" + " " * 6)
    out.print(f"  [dim]{safe(f'[{short(c.hash, 10)}]')}[/dim] [bold]{safe(c.name)}[/bold]: {text}{suffix}")


def diff_cmd(
    a: Annotated[str, typer.Argument(help="A key (unique prefix) in --cache-dir.")],
    b: Annotated[str, typer.Argument(help="A key (unique prefix) in --other-cache-dir, else in --cache-dir.")],
    other_cache_dir: Annotated[str | None, typer.Option(
        "--other-cache-dir", help="Where B is: another cache dir (e.g. copied from another machine).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Which components differ between two keys: why two compiles did not share a key."""
    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.catalog.reader import Catalog
    from fxcache_core.keying.anatomy import compare_keys

    scan_a = scan_dir(quiet=as_json)
    scan_b = scan_dir(other_cache_dir, option="other_cache_dir") if other_cache_dir else scan_a
    cat_a = Catalog(scan_a, not_read=not_read())
    cat_b = Catalog(scan_b) if scan_b is not scan_a else cat_a
    ka, kb = scan_a.find(a), scan_b.find(b)
    cmp = compare_keys(cat_a, ka, cat_b, kb)
    if as_json:
        out.result(cmp.to_json())
        return
    out.print(f"A {ka.kind.short} {ka.key}\nB {kb.kind.short} {kb.key}")
    if ka.kind is KeyKind.AOT_AUTOGRAD:
        for name, an in (("A", cmp.a), ("B", cmp.b)):
            out.print(f"{name} loads " + (", ".join(f"{r} {short(k, 12)}" for r, k in an.loads) or "nothing readable"))
        if not cmp.pairs:
            out.print("[yellow]no FX key both load is present in its cache: no components to compare[/yellow]")
    for p in cmp.pairs:
        where = f"{p.role} FX keys {short(p.a.key.key, 12)} / {short(p.b.key.key, 12)}: " if p.role else ""
        if p.a.key.key == p.b.key.key:
            out.print(f"{where}the same key")
            continue
        if not p.differ:
            out.print(f"{where}no component differs (same components, different key: "
                      "a component torch hashes but does not list)")
            continue
        out.print(f"{where}{plural(len(p.differ), 'component')} {'differs' if len(p.differ) == 1 else 'differ'}:")
        for d in p.differ:
            out.print(f"  [bold]{safe(d.name)}[/bold]")
            if d.name == "gm" and d.a is not None and d.b is not None:
                import difflib
                for line in difflib.unified_diff(d.a.value.splitlines(), d.b.value.splitlines(),
                                                 "A", "B", lineterm="", n=1):
                    out.print("    " + safe(line))
                continue
            for side, c in (("A", d.a), ("B", d.b)):
                out.print(f"    {side}: " + (safe(c.readable) if c else "[dim](absent)[/dim]"))
