"""``fxcache gc`` (prune by policy) and ``fxcache rm`` (remove by name): plan, show, ask, execute."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Annotated, Any

import typer
from rich.filesize import decimal as human_bytes

from ._context import (
    done_reading,
    installed_build,
    open_catalog,
    remote_store,
    scan_dir,
    state,
    user_path,
)
from ._errors import FAILURE
from ._options import JsonOpt
from ._output import age, fail, out, plural, safe, short


def gc_cmd(
    older_than: Annotated[str | None, typer.Option(help="Remove entries unused for longer than this (90s, 30m, 12h, 7d, 2w).")] = None,
    max_size: Annotated[str | None, typer.Option(help="Then remove least recently used entries until the cache fits (500M, 5G, 2GB, 1.5GiB; a bare letter is decimal, as in ccache).")] = None,
    keep_last: Annotated[int | None, typer.Option(help="Per key, keep only the N most recently used entries.", min=0)] = None,
    unreadable: Annotated[bool, typer.Option("--unreadable", help="Remove entries that cannot be decoded, and temp files older than an hour.")] = False,
    dangling: Annotated[bool, typer.Option("--dangling", help="Remove AOTAutograd entries whose FX entries are gone.")] = False,
    locks: Annotated[bool, typer.Option("--locks", help="Remove orphaned lock files (the code, precompiled header, PGO state or Triton dir they guarded is gone), untouched for an hour; each is taken before it goes.")] = False,
    artifacts: Annotated[bool, typer.Option("--artifacts", help="With --older-than: also remove what torch rebuilds when missing, unused that long: generated code and compiled libraries (<root>/<2 chars>/c*.py/.cpp/.so), autotune results, precompiled headers, Triton kernel dirs.")] = False,
    set_ttl: Annotated[str | None, typer.Option("--set-ttl", help="With --remote: give the planned keys this expiry (7d, 12h) instead of deleting them.")] = None,
    stale: Annotated[bool, typer.Option("--stale", help="Remove entries built by another torch or system than the installed one (imports torch): this torch's lookups never reach them; and precompiled headers and compiled libraries built against another torch's headers. If other torch installs or devices share this cache dir, theirs count as stale.")] = False,
    keep_costly: Annotated[str | None, typer.Option("--keep-costly", help="With --max-size: entries that took at least this long to compile (30s, 2m; as a trace recorded, else as the entry stores) go only after every cheaper one.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Print the plan and exit.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Prune the cache by policy: plan first, show it, ask, then delete.

    With no policy flag, plans the safe default: --unreadable --dangling --locks.
    An FX entry's wrapper module goes with it when no other entry uses it.
    """
    from fxcache_core.prune.plan import plan_gc

    ttl = _ttl(set_ttl)
    policy = _policy(older_than, max_size, keep_last, unreadable, dangling, locks, artifacts, stale,
                     keep_costly)
    scan = scan_dir(quiet=as_json, tally=True)
    _not_a_blob(scan.root)
    # Planned from the index (rows proven by each file's identity; what rests on any other
    # row is read again from the files), and execution checks every file the plan read
    # again, planning again if one changed. Hits and compile costs `fxcache explain` read
    # from traces count too (a local cache only).
    cat = open_catalog(scan, indexed=True, as_json=as_json, hashing=policy.unreadable, plan_only=True)

    def replan() -> Any:  # a file the plan read changed before execution: plan again, from a new scan
        _flush(cat)
        again = open_catalog(scan_dir(quiet=True, tally=True), indexed=True, as_json=True,
                             hashing=policy.unreadable, plan_only=True)
        return plan_gc(again, policy, trace_facts=state.remote is None)

    _run_plan(plan_gc(cat, policy, trace_facts=state.remote is None), dry_run, yes, as_json, ttl, replan)


def _parsed(option: str, text: str | None, parse: Any) -> Any:
    """``text`` parsed, None when not given; exit 2 naming ``option`` when it does not
    parse. Given is given: an empty value is an error, never "no policy" (the default)."""
    if text is None:
        return None
    try:
        return parse(text)
    except ValueError as e:
        fail(f"{option}: {str(e)}")


def _ttl(set_ttl: str | None) -> int | None:
    """--set-ttl in seconds (at least 1); it needs --remote."""
    from fxcache_core.quantities import parse_duration

    if set_ttl is None:
        return None
    if state.remote is None:
        fail("--set-ttl gives Redis keys an expiry: it needs --remote")
    return max(1, int(_parsed("--set-ttl", set_ttl, parse_duration)))


def _policy(older_than: str | None, max_size: str | None, keep_last: int | None, unreadable: bool,
            dangling: bool, locks: bool, artifacts: bool, stale: bool, keep_costly: str | None) -> Any:
    """The flags as core's GcPolicy (which checks that they go together; exit 2 if not),
    or its default when no rule is given."""
    from fxcache_core.prune.policy import GcPolicy
    from fxcache_core.quantities import parse_duration, parse_size

    older_than_s = _parsed("--older-than", older_than, parse_duration)
    max_size_bytes = _parsed("--max-size", max_size, parse_size)
    try:
        policy = GcPolicy(
            older_than_s=older_than_s, max_size_bytes=max_size_bytes,
            keep_last=keep_last, unreadable=unreadable, dangling=dangling, artifacts=artifacts,
            keep_costly_s=parse_duration(keep_costly) if keep_costly else None,
            orphaned_locks=locks, **_stale_policy(stale),
        )
    except ValueError as e:
        fail(str(e))
    return GcPolicy.default() if policy.is_empty else policy


def _stale_policy(stale: bool) -> dict[str, Any]:
    """GcPolicy's --stale fields: the installed torch's build hashes and include dir."""
    if not stale:
        return {}
    build = installed_build()
    return {"stale_against": tuple(build.hashes.items()), "stale_include_dir": build.include_dir}


def rm_cmd(
    key: Annotated[str, typer.Argument(help="A cache key or a unique prefix of one.")],
    entries: Annotated[list[str] | None, typer.Argument(help="Entry names or unique prefixes (default: every entry of the key).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", "-n", help="Print the plan and exit.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Remove a key's entries by name, with the AOTAutograd entries that load them."""
    from fxcache_core.prune.plan import plan_rm

    scan = scan_dir(quiet=as_json)
    _not_a_blob(scan.root)
    target = scan.find(key)
    cat = open_catalog(scan, indexed=True, as_json=as_json, plan_only=True)

    def replan() -> Any:  # a file the plan read changed before execution: plan again, from a new scan
        _flush(cat)
        again = scan_dir(quiet=True)
        return plan_rm(open_catalog(again, indexed=True, as_json=True, plan_only=True), again.find(key),
                       entries or ())

    _run_plan(plan_rm(cat, target, entries or ()), dry_run, yes, as_json, replan=replan)


def _flush(cat: Any) -> None:
    """Write what ``cat``'s index holds, so that a second catalog can use the index file."""
    if cat.index is not None:
        cat.index.flush()


def _below(root: Any, where: str) -> str:
    base = str(root).rstrip("/") + "/"
    return where[len(base):] if where.startswith(base) else where


def _run_plan(plan: Any, dry_run: bool, yes: bool, as_json: bool, ttl: int | None = None,
              replan: Any = None) -> None:
    """Show a gc/rm plan, ask unless --yes, execute it, report; exit 1 if some paths failed.
    ``replan``: makes the plan again, should a file it read change before it is executed
    (the plan executed, then shown with the result, is the last one made)."""
    from fxcache_core.prune.execute import execute_plan

    done_reading()
    remote = state.remote is not None
    if remote:
        plan = _remote_plan(plan)
    if not as_json:
        _show_plan(plan, remote)
    if dry_run or not plan.removals:
        if as_json:
            _emit_plan(plan, dry_run, remote)
        return
    what = plural(len(plan.removals), "Redis key") if remote else plural(len(plan.removals), "file")
    verb = f"Give {what} an expiry of {ttl} s" if ttl is not None else f"Delete {what}"
    if not out.confirm(f"{verb}?", yes=yes):
        out.err.print("Nothing deleted.")
        raise typer.Exit(FAILURE)
    res = remote_store().execute(plan, ttl) if remote else execute_plan(plan, replan)
    if getattr(res, "plan", None) is not None:
        plan = res.plan
        if not as_json:
            out.print(f"[yellow]The cache changed after the plan[/yellow] (a file it read is not the same): "
                      f"planned again {plural(res.replanned, 'time')}; the last plan:")
            _show_plan(plan, remote)
    if as_json:
        _emit_plan(plan, dry_run, remote, res)
    else:
        _show_result(res, remote, ttl)
    if res.failed:
        raise typer.Exit(FAILURE)


def _remote_plan(plan: Any) -> Any:
    """With --remote: the plan, its ages said as Redis measures them."""
    st = remote_store()
    return replace(plan, last_use="the idle time Redis reports (OBJECT IDLETIME)" + (
        "" if not st.touches else ", fxcache's own earlier reads discounted" if st.reads.enabled
        else ", fxcache's own reads counted as uses (its index is off)"))


def _emit_plan(plan: Any, dry_run: bool, remote: bool, res: Any = None) -> None:
    """The plan (and what was done) as core's JSON, its long lists streamed."""
    head, lists = plan.run_json(dry_run=dry_run, result=res, redis_key=user_path if remote else None,
                                as_text=True)
    out.listing(head, lists, texts=frozenset({"removals"}))


def _show_plan(plan: Any, remote: bool) -> None:
    """The plan as text: one line per removal, what is kept, then the totals."""
    from fxcache_core.cache.keys import KeyKind
    from fxcache_core.prune.removal import last_use

    now = time.time()
    traced = {n: t for n, t, _ in plan.policy.trace_use}  # a hit in a trace is a use
    for r in plan.removals:
        where = (f"{r.content.value} {safe(_below(plan.root, r.file.where))}" if r.content is not None
                 else f"code {safe(r.file.path.parent.name + '/' + r.file.name)}"
                 if r.kind is KeyKind.CODE
                 else f"{r.kind.short} {short(r.key)}/{safe(short(r.entry or r.file.name))}")
        used = age(max(last_use(r.file), traced.get(r.entry or "", 0.0)), now)
        out.text(f"  remove {where}  "
              f"{human_bytes(r.size):>9}  {'idle ' + used.removesuffix(' ago') if remote else 'last used ' + used}  "
              f"[dim]{safe('; '.join(r.reasons))}[/dim]")
    for p, w in plan.kept:
        out.text(f"  [yellow]keep[/yellow] {safe(user_path(p))}  [dim]{safe(w)}[/dim]")
    temps = sum(1 for r in plan.removals if r.what == "temp")
    code = sum(1 for r in plan.removals if r.what == "code")
    others = len(plan.removals) - plan.entries_removed - temps - code
    for what, why in plan.undecided[:5]:
        out.text(f"  [yellow]keep[/yellow] {safe(what)}: {safe(why)}")
    if len(plan.undecided) > 5:
        out.text(f"  [yellow]keep[/yellow] {len(plan.undecided) - 5} more that a rule could not judge")
    out.print(f"Plan: remove {plural(plan.entries_removed, 'entry', 'entries')}"
              + (f", {plural(temps, 'stale temp file')}" if temps else "")
              + (f", {plural(code, 'generated code file')}" if code else "")
              + (f", {plural(others, 'other file')} (see fxcache df)" if others else "") + ", "
              f"freeing {human_bytes(plan.bytes_freed)} of {human_bytes(plan.all_bytes or plan.total_bytes)} "
              f"under the cache dir ({human_bytes(plan.total_bytes)} in {plan.total_entries} entries, "
              f"{human_bytes(plan.code_bytes)} of generated code). "
              + (f"Ages: {plan.last_use}." if remote else f"Ages by last use = {plan.last_use}."))


def _show_result(res: Any, remote: bool, ttl: int | None) -> None:
    """What execution did, as text."""
    for p, w in res.skipped:
        out.print(f"  [yellow]kept[/yellow] {safe(user_path(p))}: {safe(w)}")
    for p, w in res.failed:
        out.print(f"  [red]failed[/red] {safe(user_path(p))}: {safe(w)}")
    if remote:
        out.print(f"{'Set an expiry on' if ttl is not None else 'Unlinked'} "
                  f"{plural(len(res.removed), 'Redis key')} ({human_bytes(res.bytes_freed)} of entries).")
    else:
        out.print(f"Removed {plural(len(res.removed), 'file')}, freed {human_bytes(res.bytes_freed)}; "
                  f"{len(res.dirs_removed)} empty dirs removed.")


def _not_a_blob(root: Any) -> None:
    """gc and rm change a cache dir; a torch blob given as --cache-dir is read only."""
    from fxcache_core.cache.blob import laid_out_from

    blob = laid_out_from(root)
    if blob is not None:
        fail(f"{blob} is a torch blob or standalone_compile artifact: gc and rm change a cache dir, never "
             "a blob (fxcache unpack BLOB writes a blob's entries into one)")
