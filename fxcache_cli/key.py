"""``fxcache key`` (what a key is made of) and ``fxcache diff`` (which components differ)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from fxcache_core.keys import KeyKind

from ._app import JsonOpt
from ._context import installed_build, scan_dir
from ._output import emit_json, fail, out, plural, safe, safe_lines


def _component_json(c: Any) -> dict[str, Any] | None:
    return None if c is None else {"name": c.name, "hash": c.hash, "value": c.readable, "raw": c.value}


def key_cmd(
    key: Annotated[str | None, typer.Argument(help="A cache key or a unique prefix of one.")] = None,
    group: Annotated[str | None, typer.Option(
        "--group", help="Only components of this group (gm, example_inputs, fx_kwargs, inductor_config, ...).")] = None,
    current: Annotated[bool, typer.Option(
        "--current", help="The installed torch's build components (imports torch); with KEY, "
        "whether that key was built by it.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What a key is made of: each component torch hashed into it, with its hash and value."""
    from fxcache_core.anatomy import anatomy, stale_components
    from fxcache_core.catalog import Catalog

    if key is None and not current:
        fail("give a KEY (a unique prefix), or --current")
    build = installed_build() if current else None
    if key is None:
        assert build is not None
        if as_json:
            emit_json({"torch": build.torch_version, "components": [
                {"name": n, "hash": h, "value": build.values[n]} for n, h in build.hashes.items()]})
            return
        out.print(f"installed torch {safe(build.torch_version)}")
        for n, h in build.hashes.items():
            out.print(f"  [dim]{safe(f'[{h[:12]}]')}[/dim] {safe(n)}: {safe(build.values[n])}")
        return
    scan = scan_dir(quiet=as_json)
    a = anatomy(Catalog(scan), scan.find(key))
    comps = [c for c in a.components if group is None or c.group == group]
    stale = stale_components(a.components, build.hashes) if build is not None else None
    if as_json:
        emit_json({"kind": a.key.kind.value, "key": a.key.key, "entry": a.entry,
                    "components": [_component_json(c) for c in comps],
                    "loads": [{"role": r, "key": k} for r, k in a.loads],
                    "stale": list(stale) if stale is not None else None})
        return
    out.print(f"[bold]{a.key.kind.short}[/bold] {a.key.key}  ({plural(len(a.key.entries), 'entry', 'entries')})")
    if a.key.kind is KeyKind.AOT_AUTOGRAD:
        out.print("  AOTAutograd entries store no key components; they load these FX keys "
                  "(`fxcache key FX_KEY` shows theirs):")
        for role, k in a.loads:
            out.print(f"  {role:<9} {k}")
    elif a.entry is None:
        out.print("  [yellow]no entry of this key can be read: no components to show[/yellow]")
    else:
        out.print(f"  {plural(len(a.components), 'component')}, read from entry {a.entry[:16]}"
                  + (f"; group {safe(group)}: {len(comps)}" if group else ""))
        for c in comps:
            text = safe_lines(c.readable).replace("\n", "\n" + " " * 6)
            out.print(f"  [dim]{safe(f'[{c.hash[:10]}]')}[/dim] [bold]{safe(c.name)}[/bold]: {text}")
    if stale is not None:
        out.print(("[red]stale[/red]: built by another torch or system ("
                   + safe(", ".join(stale)) + " differ from the installed torch's)") if stale
                  else "[green]built by the installed torch and system[/green]")


def diff_cmd(
    a: Annotated[str, typer.Argument(help="A key (unique prefix) in --cache-dir.")],
    b: Annotated[str, typer.Argument(help="A key (unique prefix) in --other-cache-dir, else in --cache-dir.")],
    other_cache_dir: Annotated[str | None, typer.Option(
        "--other-cache-dir", help="Where B is: another cache dir (e.g. copied from another machine).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Which components differ between two keys: why two compiles did not share a key."""
    from fxcache_core.anatomy import compare_keys
    from fxcache_core.catalog import Catalog

    scan_a = scan_dir(quiet=as_json)
    scan_b = scan_dir(other_cache_dir) if other_cache_dir else scan_a
    cat_a = Catalog(scan_a)
    cat_b = Catalog(scan_b) if scan_b is not scan_a else cat_a
    ka, kb = scan_a.find(a), scan_b.find(b)
    an_a, an_b, results = compare_keys(cat_a, ka, cat_b, kb)
    if as_json:
        emit_json({"a": ka.key, "b": kb.key, "kind": ka.kind.value,
                    "loads": {"a": [{"role": r, "key": k} for r, k in an_a.loads],
                              "b": [{"role": r, "key": k} for r, k in an_b.loads]},
                    "compared": [{"role": role or None, "a": x.key.key, "b": y.key.key,
                                  "differ": [{"name": d.name, "a": _component_json(d.a),
                                              "b": _component_json(d.b)} for d in diffs]}
                                 for role, x, y, diffs in results]})
        return
    out.print(f"A {ka.kind.short} {ka.key}\nB {kb.kind.short} {kb.key}")
    if ka.kind is KeyKind.AOT_AUTOGRAD:
        for name, an in (("A", an_a), ("B", an_b)):
            out.print(f"{name} loads " + (", ".join(f"{r} {k[:12]}" for r, k in an.loads) or "nothing readable"))
        if not results:
            out.print("[yellow]no FX key both load is present in its cache: no components to compare[/yellow]")
    for role, x, y, diffs in results:
        where = f"{role} FX keys {x.key.key[:12]} / {y.key.key[:12]}: " if role else ""
        if x.key.key == y.key.key:
            out.print(f"{where}the same key")
            continue
        if not diffs:
            out.print(f"{where}no component differs (same components, different key: "
                      "a component torch hashes but does not list)")
            continue
        out.print(f"{where}{plural(len(diffs), 'component')} differ:")
        for d in diffs:
            out.print(f"  [bold]{safe(d.name)}[/bold]")
            if d.name == "gm" and d.a is not None and d.b is not None:
                import difflib
                for line in difflib.unified_diff(d.a.value.splitlines(), d.b.value.splitlines(),
                                                 "A", "B", lineterm="", n=1):
                    out.print("    " + safe(line))
                continue
            for side, c in (("A", d.a), ("B", d.b)):
                out.print(f"    {side}: " + (safe(c.readable) if c else "[dim](absent)[/dim]"))
