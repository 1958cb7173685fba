"""``fxcache pack`` (ship exactly the entries a run needs) and ``fxcache unpack`` (verify, then write)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.filesize import decimal as human_bytes

from ._context import done_reading, indexed_catalog, installed_build, scan_dir
from ._errors import FAILURE
from ._options import JsonOpt
from ._output import ReadProgress, fail, out, plural, safe, short


def pack_cmd(
    out_path: Annotated[str | None, typer.Argument(
        metavar="OUT", help="The pack to write (a .tar.gz); not needed with --dry-run.", show_default=False)] = None,
    fn: Annotated[list[str] | None, typer.Option("--fn", help="Take the keys compiled from this function (repeatable).")] = None,
    from_trace: Annotated[str | None, typer.Option(
        "--from-trace", help="Take the entries a traced run (its TORCH_TRACE dir or file) hit or wrote.")] = None,
    key: Annotated[list[str] | None, typer.Option("--key", help="Take every entry of this key (a unique prefix; repeatable).")] = None,
    take_all: Annotated[bool, typer.Option("--all", help="Take every entry of the cache.")] = False,
    include_linked: Annotated[bool, typer.Option(
        "--include-linked", help="Also pack files with more than one hard link, or on another device than "
        "the cache dir (they may be files from outside it, linked or mounted in); left out by default.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Show what would be packed; write nothing.")] = False,
    fmt: Annotated[str, typer.Option(
        "--format", metavar="FORMAT", help="pack: fxcache's archive (entries, wrappers, compiled kernels, "
        "manifest); torch: a blob torch.compiler.load_cache_artifacts loads (entries only: the first run builds "
        "every kernel).")] = "pack",
    as_json: JsonOpt = False,
) -> None:
    """Pack the entries a run needs, and what they need to load (wrapper modules, compiled
    kernels, autotune results), into a verified, deterministic archive with a manifest.

    Every member is archived as mode 0644; the plan says which are narrower here. A file
    with other hard links, or on another device, is left out unless --include-linked."""
    from fxcache_core.pack.archive import write_pack
    from fxcache_core.pack.select import plan_pack, run_not_warmed

    if out_path is None and not dry_run:
        fail("give OUT, the pack to write (or --dry-run)")
    if fmt not in ("pack", "torch"):
        fail(f"--format {fmt!r}: give pack or torch")
    used: list[tuple[str, str, str]] = []
    version = run = None
    if from_trace is not None:
        from fxcache_core.trace.reader import trace_files
        from fxcache_core.trace.run import read_run

        trace_files(Path(from_trace))  # not a trace: one line, exit 2
        run = read_run(Path(from_trace))
        version = run.torch_version
    scan = scan_dir(_run_cache_dir(run), quiet=as_json)
    catalog = indexed_catalog(scan, as_json)
    unwarmable: list[str] = []
    if run is not None:
        from fxcache_core.trace.explain import explain

        report = explain(run, catalog)
        used = [(u.kind, u.key, u.entry) for u in report.uses()]
        unwarmable = [r.text for r in run_not_warmed(report)]
        if not used:
            fail(f"--from-trace {from_trace}: the run hit or wrote no entry of this cache"
                 + (f": {'; '.join(unwarmable)}" if unwarmable else ""))
    plan = plan_pack(catalog, functions=fn or (), keys=key or (), used=used, everything=take_all,
                     torch_version=version, include_linked=include_linked)
    done_reading()
    if as_json and dry_run:
        out.result(plan.to_json(run_not_warmed=unwarmable))
        return
    if not as_json:
        _show_plan(plan)
        for text in unwarmable:
            out.warning(f"not warmed by any pack: {safe(text)}")
    if dry_run:
        return
    if fmt == "torch":
        from fxcache_core.pack.to_blob import write_blob

        blob = write_blob(plan, Path(str(out_path)))
        if as_json:
            out.result(plan.to_json(run_not_warmed=unwarmable) | {"blob": blob.to_json()})
            return
        out.print(f"wrote {safe(str(blob.path))}: a torch blob of "
                  + ", ".join(f"{n} {t}" for t, n in blob.entries.items()) + f" entries, {human_bytes(blob.bytes_out)}"
                  + ("; left out (a blob has no place for them; torch rebuilds them): "
                     + ", ".join(f"{n} {k}" for k, n in sorted(blob.left_out.items())) if blob.left_out else ""))
        return
    prog = ReadProgress(plan.total_bytes, enabled=not as_json, label="packing")
    try:
        res = write_pack(plan, Path(str(out_path)), on_bytes=prog.advance)
    finally:
        prog.close()
    if as_json:
        out.result(plan.to_json(run_not_warmed=unwarmable, written=res))
        return
    ratio = res.bytes_out / res.bytes_in if res.bytes_in else 0.0
    out.print(f"wrote {safe(str(res.path))}: {plural(res.members - 1, 'file')} and the manifest, {human_bytes(res.bytes_out)} "
              f"({human_bytes(res.bytes_in)} before compression, {ratio:.0%})")


SHOWN_FUNCTIONS = 12
"""Functions listed by name before the rest are counted."""
_TENSOR_RE = re.compile(r"[a-z0-9]+\[[^\]]*\]( |$)")


def _function_label(function: str, entries: list[Any]) -> str:
    """A function as the user reads it; the entries no readable entry records a frame for
    (``"?"`` in the manifest) are named by their keys."""
    if function != "?":
        return safe(function)
    keys = sorted({e.key for e in entries})
    return safe(f"(function not recorded; keys {', '.join(k[:12] for k in keys[:3])}"
                + (f" and {len(keys) - 3} more" if len(keys) > 3 else "") + ")")


def _run_cache_dir(run: Any) -> str | None:
    """The cache dir to pack from: --cache-dir, else $TORCHINDUCTOR_CACHE_DIR, else the
    one the traced run wrote code into (as explain relates a run to its cache), else None
    (torch's default)."""
    import os

    from ._context import state

    if state.cache_dir is not None or os.environ.get("TORCHINDUCTOR_CACHE_DIR") or run is None:
        return None
    return run.cache_dirs[0] if run.cache_dirs else None


def _show_plan(plan: Any) -> None:
    from fxcache_core.pack.manifest import ARCHIVE_MODE

    m = plan.manifest
    b = m.build
    kinds: dict[str, list[int]] = {}
    for x in m.members:
        kinds.setdefault(x.kind, [0, 0])
        kinds[x.kind][0] += 1
        kinds[x.kind][1] += x.size
    out.print(f"packing {plural(len(m.entries), 'entry', 'entries')} of {plural(len(m.functions()), 'function')} "
              f"from {safe(str(plan.root))}, built by "
              + (f"torch {safe(b.torch_version)}" if b.torch_version else
                 f"torch_version {short(b.components.get('torch_version', '?'), 12)}")
              + (f", {b.cpp_threads} C++ threads" if b.cpp_threads else ""))
    functions = list(m.functions().items())
    for fn, es in functions[:SHOWN_FUNCTIONS]:
        tensors = [i.split(" stride", 1)[0] for e in es for i in e.inputs if _TENSOR_RE.match(i)]
        shapes = sorted(set(tensors), key=tensors.index)
        out.print(f"  [cyan]{_function_label(fn, es)}[/cyan]: {plural(len(es), 'entry', 'entries')}"
                  + (f"  [dim]inputs {safe(short(', '.join(shapes), 90))}[/dim]" if shapes else ""))
    if len(functions) > SHOWN_FUNCTIONS:
        out.print(f"  [dim]… and {len(functions) - SHOWN_FUNCTIONS} more functions (--dry-run --json lists "
                  "every entry)[/dim]")
    out.print("  " + ", ".join(f"{k} {n} ({human_bytes(s)})" for k, (n, s) in sorted(kinds.items()))
              + f"; {human_bytes(plan.total_bytes)} in all, every member archived as mode {ARCHIVE_MODE:04o}")
    if m.settings:
        out.print("  settings not at torch's defaults: " + safe(", ".join(f"{n}={v}" for n, v in m.settings)))
    if plan.defaults_unknown:
        out.print(f"  [dim]settings not at torch's defaults: unknown for keys of {safe(', '.join(plan.defaults_unknown))} "
                  "(fxcache has no record of that torch's defaults)[/dim]")
    for r in plan.left_out:
        out.warning(f"left out: {safe(r.text)}")
    widened = [r for r in plan.notes if r.code == "mode-widened"]
    if widened:
        out.warning(f"{plural(len(widened), 'member')} {'is' if len(widened) == 1 else 'are'} narrower here than "
                    f"the archive's mode {ARCHIVE_MODE:04o} (first: {safe(widened[0].text)}); the pack makes "
                    f"{'it' if len(widened) == 1 else 'them'} readable by anyone who can read the pack")
    for r in plan.notes:
        if r.code != "mode-widened":
            out.warning(safe(r.text))


TRUST = ("A pack is code: on a cache hit torch unpickles its entries and loads its kernels, so unpack "
         "only packs you trust; verify PACK shows the globals its entries name.")
"""What unpacking means, in one line: said by unpack's output and its --help."""


def unpack_cmd(
    pack: Annotated[str, typer.Argument(help="A pack written by fxcache pack, or a torch mega-cache blob "
                                        "(save_cache_artifacts).")],
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", "-n", help="Check the pack and say, per function, whether it will hit with the "
        "installed torch (imports torch); write nothing.")] = False,
    allow_foreign_globals: Annotated[bool, typer.Option(
        "--allow-foreign-globals", help="Unpack even when an entry names a global torch does not write "
        "(what torch would run on a hit; listed either way). Refused by default.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Verify every member of a pack against its manifest, then write it into the cache dir
    (--cache-dir): new files only, identical ones skipped, different ones never overwritten.
    Exit 1 if any member conflicts with a file already there.

    A pack is code: on a cache hit torch unpickles its entries and loads its kernels, so unpack
    only packs you trust; verify PACK shows the globals its entries name. Before writing,
    unpack holds the manifest's claims to the entries themselves, refuses members no entry
    needs, and refuses an entry that names a global torch does not write (exit 2) unless
    --allow-foreign-globals. A torch blob is installed as a pack of its entries, where
    load_cache_artifacts would write them."""
    from fxcache_core.pack.contents import plan_unpack
    from fxcache_core.pack.install import execute_unpack

    from ._context import state
    from .verify import checked_pack, show_foreign

    path = Path(pack)
    blob = _blob_as_pack(path)
    if blob is not None:
        path = blob.pack
    check = checked_pack(path, as_json)
    if not as_json:
        out.print(f"[dim]{TRUST}[/dim]")
        show_foreign(check.foreign)
    root = _target(state.cache_dir)
    plan = plan_unpack(root, check, allow_foreign_globals=allow_foreign_globals)
    if dry_run:
        _dry_run(plan, as_json, blob)
        return
    manifest = plan.manifest
    prog = ReadProgress(manifest.total_bytes, enabled=not as_json, label="unpacking")
    try:
        res = execute_unpack(plan, on_bytes=prog.advance)
    finally:
        prog.close()
    if as_json:
        out.result({**res.to_json(cache_dir=root), "foreign_globals": [f.to_json() for f in check.foreign]})
    else:
        out.print(f"{plural(len(manifest.members), 'member')} intact (each matches the manifest's sha256: not "
                  f"a proof of safety); into {safe(str(root))}: added "
                  f"{plural(len(res.added), 'file')} ({human_bytes(res.bytes_added)}), "
                  f"{len(res.identical)} identical already there, {len(res.conflicts)} conflicting")
        for p, why in sorted(res.conflicts.items()):
            out.warning(f"kept {safe(p)}: {safe(why)} is there (not overwritten)")
        if check.foreign:
            out.warning(f"unpacked as asked: {plural(len(check.foreign), 'entry', 'entries')} name globals torch "
                        "does not write (listed above): torch will run them on a hit")
    if res.conflicts:
        raise typer.Exit(FAILURE)


def _blob_as_pack(path: Path) -> Any:
    """A torch mega-cache blob given to unpack, as a temp pack of its entries
    (fxcache_core.pack.from_blob), removed at exit; None for anything else."""
    from fxcache_core.cache.blob import looks_like_blob

    try:
        if not (path.is_file() and looks_like_blob(path)):
            return None
    except (OSError, ValueError):
        return None
    import atexit
    import tempfile

    from fxcache_core.pack.from_blob import pack_of_blob

    tmp = tempfile.TemporaryDirectory(prefix="fxcache-blob-pack-")
    atexit.register(tmp.cleanup)
    return pack_of_blob(path, tmp)


def _target(cache_dir: str | None) -> Path:
    """--cache-dir as given (it may not exist yet: unpack makes it), else torch's
    (``$TORCHINDUCTOR_CACHE_DIR``, else its default)."""
    import os

    from fxcache_core.cache.location import default_cache_dir

    if cache_dir is not None:
        return Path(cache_dir).expanduser().absolute()
    env = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return Path(env).absolute() if env else default_cache_dir()


@contextlib.contextmanager
def _torch_cache_elsewhere() -> Iterator[None]:
    """Importing torch's codecache makes torch's cache dir (``cache_dir()`` in
    torch/_inductor/runtime/cache_dir_utils.py, called at import by torch/_dynamo/package.py):
    $TORCHINDUCTOR_CACHE_DIR, the very dir --dry-run must not write, else the default.
    Point it at a temp dir for the import, removed after; the build hashes do not
    depend on it."""
    import os
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="fxcache-dry-run-")
    old = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tmp
    try:
        yield
    finally:
        if old is None:
            del os.environ["TORCHINDUCTOR_CACHE_DIR"]
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = old
        shutil.rmtree(tmp, ignore_errors=True)


def _dry_run(plan: Any, as_json: bool, blob: Any = None) -> None:
    from fxcache_core.pack.will_hit import will_hit

    with _torch_cache_elsewhere():
        build = installed_build()
        import os

        from fxcache_core.keying.current import cpp_thread_count, env_settings

        threads = cpp_thread_count()
        here_settings = env_settings(os.environ)
    claims = plan.check.manifest  # the build, settings and functions as the entries say them
    report = will_hit(claims, build.torch_version, build.hashes, threads, here_settings)
    rebuilt = dict(blob.kernels) if blob is not None else None
    if as_json:
        out.result({"unpack": plan.to_json(), "will_hit": report.to_json()}
                   | ({"blob": {"kernels_rebuilt": rebuilt, "not_installed": dict(blob.skipped)}}
                      if blob is not None else {}))
        return
    out.print(f"{plural(len(claims.members), 'member')} intact, the manifest's claims are its entries' own "
              f"({human_bytes(claims.total_bytes)}); into {safe(str(plan.root))} it would add "
              f"{plan.count('add')}, skip {plan.count('identical')} identical, keep {plan.count('conflict')} "
              "conflicting")
    fns = claims.functions()
    for f in report.functions:
        rebuild = ""
        if rebuilt is not None and rebuilt.get(f.function):
            rebuild = f"; the first load builds {plural(rebuilt[f.function], 'kernel')} (a blob holds no compiled library)"
        if f.will_hit is None:
            out.print(f"  [yellow]unknown[/yellow]   {_function_label(f.function, fns[f.function])}: {safe('; '.join(r.text for r in f.reasons))}{rebuild}")
        elif f.will_hit:
            out.print(f"  [green]will hit[/green]  {_function_label(f.function, fns[f.function])} ({plural(f.entries, 'entry', 'entries')}){rebuild}")
        else:
            out.print(f"  [red]no hit[/red]    {_function_label(f.function, fns[f.function])}: {safe('; '.join(r.text for r in f.reasons))}")
    if report.settings:
        from fxcache_core.keying.config_env import env_var

        named = any(env_var(n) for n, _ in report.settings)
        out.print("  the keys were made with these settings not at torch's defaults; the run must set them "
                  "the same" + (" (in code, or with the variable named)" if named else "") + ": "
                  + safe(", ".join(f"{n}={v}" + (f" ({env_var(n)})" if env_var(n) else "") for n, v in report.settings)))
