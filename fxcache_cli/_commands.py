"""The command table: each command's name, where it lives, and its one-line summary.

Like pip's ``commands/__init__.py`` (``commands_dict``): a command's module is
imported only when that command runs, so ``fxcache --help`` and ``fxcache
--version`` read this table and import no command module and no core module
(``tests/cli/test_startup.py`` keeps it so). The summary is the first paragraph of
the command function's docstring, as typer would take it; a test checks that
the two never drift apart. Never imports a command module itself: that is
:class:`fxcache_cli.fxcache.LazyGroup`'s job, on demand.
"""

from __future__ import annotations

from typing import NamedTuple


class CommandInfo(NamedTuple):
    """One row of the table.

    Attributes:
        module: the module that defines the command (``fxcache_cli.ls``).
        function: the command function's name in it (``ls_cmd``).
        summary: the first paragraph of its docstring (what ``fxcache --help`` shortens).
    """

    module: str
    function: str
    summary: str


# In the order --help lists them.
commands_dict: dict[str, CommandInfo] = {
    "ls": CommandInfo(
        "fxcache_cli.ls", "ls_cmd",
        "List cache keys with the function each was compiled from, their entries, sizes and last use."),
    "dupes": CommandInfo(
        "fxcache_cli.dupes", "dupes_cmd",
        "FX keys that are one key but for symbol names (fragmentation), grouped, with the reason\n"
        "(ls --dupes)."),
    "df": CommandInfo(
        "fxcache_cli.df", "df_cmd",
        "Disk usage of the cache dir by kind of content: files, bytes, last use, and what gc would\n"
        "reclaim. Totals are what find and du say of the same dir; $TRITON_CACHE_DIR too when set elsewhere."),
    "guards": CommandInfo(
        "fxcache_cli.guards", "guards_cmd",
        "Show each entry's guards as sympy, with each tN traced to its symbol and source."),
    "match": CommandInfo(
        "fxcache_cli.match", "match_cmd",
        "Which entry torch would load for these inputs, and why the others would not."),
    "audit": CommandInfo(
        "fxcache_cli.audit", "audit_cmd",
        "Across the cache: entries that can never be served (shadowed by an earlier one) and entries\n"
        "whose regions overlap (match --audit)."),
    "coverage": CommandInfo(
        "fxcache_cli.coverage", "coverage_cmd",
        "Draw which entry of a key serves which values of --range, and the gaps (match --coverage)."),
    "verify": CommandInfo(
        "fxcache_cli.verify", "verify_cmd",
        "Check every entry against the digest in its name, that it decodes, and that its pickle\n"
        "names only globals torch writes (what torch would run on a hit): truncated, altered,\n"
        "misfiled or foreign entries, and Dynamo's saved profiles. Exit 1 if any is bad, or could\n"
        "not be checked. Warns when others can write where torch loads code from."),
    "key": CommandInfo(
        "fxcache_cli.key", "key_cmd",
        "What a key is made of: per component group, how many components and which\n"
        "settings are not at torch's defaults, then the components that matter (--all: every one)."),
    "diff": CommandInfo(
        "fxcache_cli.key", "diff_cmd",
        "Which components differ between two keys: why two compiles did not share a key."),
    "explain": CommandInfo(
        "fxcache_cli.explain", "explain_cmd",
        "Say what the cache did for every compile of a run, and why: first the run in one line\n"
        "and the cause of its misses (a torch version, a variable, an input), then each lookup:\n"
        "hits (and whether their guards were installed), new keys (the nearest earlier key and\n"
        "the component that explains the miss), guard misses (the clause that failed, with the\n"
        "call's values), bypasses. The cache is --cache-dir, else the one the run wrote to, else\n"
        "torch's default."),
    "pack": CommandInfo(
        "fxcache_cli.pack", "pack_cmd",
        "Pack the entries a run needs, and what they need to load (wrapper modules, compiled\n"
        "kernels, autotune results), into a verified, deterministic archive with a manifest."),
    "unpack": CommandInfo(
        "fxcache_cli.pack", "unpack_cmd",
        "Verify every member of a pack against its manifest, then write it into the cache dir\n"
        "(--cache-dir): new files only, identical ones skipped, different ones never overwritten.\n"
        "Exit 1 if any member conflicts with a file already there."),
    "report": CommandInfo(
        "fxcache_cli.report", "report_cmd",
        "Write one HTML page that shows the cache (disk by kind and by function, what gc would\n"
        "reclaim, each function's keys, entries and the shapes each serves) and a traced run (its\n"
        "compiles and lookups on a timeline, explain's verdict), drawn offline with Vega-Lite. The\n"
        "page embeds its data as JSON (--json prints it). Needs the report extra."),
    "gc": CommandInfo(
        "fxcache_cli.gc", "gc_cmd",
        "Prune the cache by policy: plan first, show it, ask, then delete."),
    "rm": CommandInfo(
        "fxcache_cli.gc", "rm_cmd",
        "Remove a key's entries by name, with the AOTAutograd entries that load them."),
}
