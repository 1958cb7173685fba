"""Did a cache hit install its guards? Check an entry's guards against the guards in force.

On a hit, torch evaluates the loaded entry's ``guards_expr`` once more, with
the call's SymInts instead of their values, so that every clause becomes a
guard of the compile's ShapeEnv (``FxGraphCache._lookup_graph`` in
torch/_inductor/codecache.py, ``AOTAutogradResult._check_guards`` in
torch/_functorch/_aot_autograd/aot_autograd_result.py). Dynamo then turns the
ShapeEnv's guards into the guards of the compiled frame (the ``LAMBDA_GUARD``
lines of ``dynamo_cpp_guards_str``, over sources such as
``L['x'].size()[0]``). A clause that is not among them lets a later call that
fails it run the cached graph, which was compiled for calls that pass it.

:func:`check_installed` decides, for each clause of an entry:

* ``installed``: a guard in force is the clause (up to the order of a
  comparison and chained comparisons split), or the guards in force confine
  its symbols to integer ranges (:func:`fxcache_core.guards.summary.summarize`)
  within which the clause always holds;
* ``missing``: a *witness* was found: values of the call's sizes (the traced
  call's, some changed, equal sizes kept equal where a guard says so) that pass
  every guard in force and fail the clause;
* ``undecided``: neither, with the reason (a guard in force that fxcache
  cannot read mentions the clause's sizes, or no witness was found).

Lowest first: :mod:`~fxcache_core.guards.force_sources` (which guards in force
name which sources), :mod:`~fxcache_core.guards.in_force_code` (reading those
guards, each source renamed to a placeholder, through
:func:`fxcache_core.guards.expr.parse_guards`: the whitelist, nothing is
executed), :mod:`~fxcache_core.guards.in_force_values` (the values they allow:
ranges, enumeration, witness candidates), then this module (the verdict per
clause). Nothing here imports torch; sympy is imported for the ranges.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import Clause, parse_guards
from fxcache_core.guards.grammar import shallow
from fxcache_core.guards.in_force_code import (
    MAX_RAW_DEPTH,
    MAX_RELEVANT_CHARS,
    NAMES,
    GuardInForce,
    PlaceholderNames,
    canonical_text,
    read_guards_in_force,
    relevant_guards,
    rename_placeholders,
    show,
)
from fxcache_core.guards.in_force_values import (
    equal_classes,
    implied_by_ranges,
    points_within,
    ranges_in_force,
    witness_candidates,
)
from fxcache_core.reasons import Reason, code_of

Status = Literal["installed", "missing", "undecided"]
MAX_GUARDS_IN_FORCE = 50_000
"""Most guards in force (lines of ``dynamo_cpp_guards_str``) a check takes; a compile
with more is undecided (a large model installs a few thousand)."""
MAX_GUARD_CHARS_IN_FORCE = 8 * 1024 * 1024
"""Most characters of guard code in force a check takes, all guards together."""
MAX_RUN_CHARS = 1024 * 1024
"""Most characters of guard code the checks sharing one :class:`CheckBudget` read, all
together (a trace may hold any number of hits on one compile)."""


@dataclass(frozen=True)
class ClauseCheck:
    """One clause of the loaded entry, checked against the guards in force.

    Attributes:
        clause: the clause as stored (over ``L['tN']``).
        as_sources: the same over the call's sources (``L['x'].size()[0] <= 24``),
            None when a placeholder's source is unknown.
        status: ``installed``, ``missing`` or ``undecided``.
        guard: installed: the guard in force that is the clause, or ``ranges``
            when the ranges in force imply it.
        witness: missing: source -> value of a call that passes every guard in
            force and fails the clause (the sizes not shown keep the traced call's values).
        reason: undecided: why, a :class:`~fxcache_core.reasons.Reason` (codes
            ``source-unknown``, ``clause-not-read``, ``no-witness-found``,
            ``guard-in-force-unread``; JSON ``reason_code``).
    """

    clause: str
    as_sources: str | None
    status: Status
    guard: str | None = None
    witness: dict[str, int] | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"clause": self.clause, "as_sources": self.as_sources, "status": self.status,
                "guard": self.guard, "witness": self.witness, "reason": self.reason,
                "reason_code": code_of(self.reason)}


@dataclass(frozen=True)
class InstalledCheck:
    """Whether every clause of a hit's entry is among the guards in force.

    Attributes:
        status: ``passed`` (every clause installed), ``failed`` (some clause
            missing), ``undecided`` (none missing, some undecided; or the check
            could not run: see ``reason``).
        clauses: one check per clause of the entry's guards, in order.
        in_force: how many guards in force were read.
        reason: why the check could not run or is undecided, a
            :class:`~fxcache_core.reasons.Reason` (codes ``no-guards``,
            ``guards-not-read``, ``no-guards-in-force``, ``clauses-undecided``;
            JSON ``reason_code``).
    """

    status: Literal["passed", "failed", "undecided"]
    clauses: tuple[ClauseCheck, ...]
    in_force: int
    reason: str | None = None

    @property
    def missing(self) -> tuple[ClauseCheck, ...]:
        return tuple(c for c in self.clauses if c.status == "missing")

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "in_force": self.in_force, "reason": self.reason,
                "reason_code": code_of(self.reason), "clauses": [c.to_json() for c in self.clauses]}


class CheckBudget:
    """The characters of guard code in force that the checks of one run may still
    read (:data:`MAX_RUN_CHARS`); each check takes what it reads."""

    def __init__(self, chars: int = MAX_RUN_CHARS) -> None:
        self.left = chars


def check_installed(guards_expr: str | None, sources: Mapping[str, str | None], values: Mapping[str, int],
                    in_force: Sequence[str] | None, budget: CheckBudget | None = None) -> InstalledCheck:
    """Check that each clause of ``guards_expr`` is among the guards ``in_force``.

    Args:
        guards_expr: the loaded entry's guards string (over ``L['tN']``); None or
            empty: nothing to install.
        sources: ``tN`` -> its Dynamo source in the traced call (None: unknown).
        values: source -> value in the traced call (sizes, strides, ints).
        in_force: the code of every guard Dynamo installed for the frame
            (``TraceCompile.final_guards``); None when the trace has none.
        budget: shared by the checks of one run, bounding what they read
            together; spent, a check is undecided.

    Only the guards in force that name the entry's sizes (or sizes those name)
    are read, at most :data:`~fxcache_core.guards.in_force_code.MAX_RELEVANT_CHARS` of them; more, or more than
    :data:`MAX_GUARDS_IN_FORCE` in all, and the check is undecided (code
    ``too-many-guards-in-force``). Never raises: an expression fxcache cannot read
    gives ``undecided``.
    """
    if not guards_expr:
        return InstalledCheck("passed", (), len(in_force or ()), Reason("the entry has no guards", "no-guards"))
    try:
        entry = parse_guards(guards_expr)
    except GuardParseError as e:
        why = Reason(f"cannot read the entry's guards: {e}", "guards-not-read")
        return InstalledCheck("undecided", (), len(in_force or ()), why)
    if in_force is None:
        return InstalledCheck("undecided", (), 0, Reason(
            "the trace has no final guards for this compile "
            "(dynamo_cpp_guards_str missing: a cut or failed compile)", "no-guards-in-force"))
    if len(in_force) > MAX_GUARDS_IN_FORCE or sum(map(len, in_force)) > MAX_GUARD_CHARS_IN_FORCE:
        return InstalledCheck("undecided", (), len(in_force), Reason(
            f"the compile installed more guards than fxcache reads (at most {MAX_GUARDS_IN_FORCE:,} guards, "
            f"{MAX_GUARD_CHARS_IN_FORCE // (1024 * 1024)} MiB of code)", "too-many-guards-in-force"))
    names = NAMES
    relevant = relevant_guards(tuple(in_force), {s for p in entry.placeholders if (s := sources.get(p))})
    if relevant is None:
        return InstalledCheck("undecided", (), len(in_force), Reason(
            f"the guards in force that name these sizes are more than fxcache reads "
            f"({MAX_RELEVANT_CHARS // 1024} KiB of code)", "too-many-guards-in-force"))
    if budget is not None:
        budget.left -= sum(map(len, relevant))
        if budget.left < 0:
            return InstalledCheck("undecided", (), len(in_force), Reason(
                f"the checks of this run have read {MAX_RUN_CHARS // 1024} KiB of guards in force, "
                "as much as fxcache reads in one run", "check-budget-spent"))
    read = read_guards_in_force(relevant)
    env = {names.name(s): v for s, v in values.items()}
    canon = {g.canonical: g for g in read.guards}
    checks = [_check_clause(c, sources, names, read.guards, canon, read.unread, env, read.opaque)
              for c in entry.clauses]
    if any(c.status == "missing" for c in checks):
        status: Literal["passed", "failed", "undecided"] = "failed"
    elif any(c.status == "undecided" for c in checks):
        status = "undecided"
    else:
        status = "passed"
    reason = None
    if status == "undecided":
        reason = Reason("; ".join(dict.fromkeys(c.reason for c in checks if c.reason)),
                        "clauses-undecided")
    return InstalledCheck(status, tuple(checks), len(in_force), reason)


def _check_clause(c: Clause, sources: Mapping[str, str | None], names: PlaceholderNames,
                  guards: Sequence[GuardInForce], canon: dict[str, GuardInForce],
                  unread: Sequence[tuple[str, frozenset[str]]],
                  env: dict[str, int], opaque: bool = False) -> ClauseCheck:
    """One clause's verdict: ``installed`` when a guard in force is it (:func:`canonical_text`)
    or the ranges in force imply it, ``missing`` with a witness found among the
    points and candidates of :mod:`~fxcache_core.guards.in_force_values`, else
    ``undecided`` with the reason."""
    unknown = [p for p in c.placeholders if not sources.get(p)]
    if unknown:
        return ClauseCheck(c.text, None, "undecided", reason=Reason(f"no source known for {', '.join(unknown)}",
                                                                              "source-unknown"))
    mapping = {p: names.name(sources[p]) for p in c.placeholders}  # type: ignore[arg-type]
    tree = ast.parse(c.text, mode="eval").body
    if not shallow(tree, MAX_RAW_DEPTH):  # renaming and printing it would recurse too deep
        return ClauseCheck(c.text, None, "undecided", reason=Reason(
            f"the clause nests deeper than {MAX_RAW_DEPTH} levels: not checked", "clause-not-read"))
    node = rename_placeholders(tree, mapping)
    shown = show(node, names)
    hit = canon.get(canonical_text(node))
    if hit is not None:
        return ClauseCheck(c.text, shown, "installed", guard=hit.text)
    try:
        mine = parse_guards(ast.unparse(node)).clauses[0]
    except GuardParseError as e:
        return ClauseCheck(c.text, shown, "undecided", reason=Reason(f"cannot read the clause: {e}",
                                                                                "clause-not-read"))
    vars_ = mine.placeholders
    ranges = ranges_in_force(guards, vars_)
    # Every value the ranges in force allow, when few: the clause holds at each, or a witness.
    points = points_within(ranges, vars_)
    candidates: list[dict[str, int]] = []
    if points is not None:
        holds_everywhere = True
        for p in points:
            r = mine.evaluate({**env, **p})
            if r.status != "pass":
                holds_everywhere = False
                candidates.append(p)
                if len(candidates) >= 16:
                    break
        if holds_everywhere:
            return ClauseCheck(c.text, shown, "installed", guard="ranges")
    elif implied_by_ranges(mine, ranges):
        return ClauseCheck(c.text, shown, "installed", guard="ranges")
    candidates += witness_candidates(mine, ranges, env)
    blocked = {names.by_source[s] for _, named in unread for s in named if s in names.by_source}
    if opaque:
        blocked = set(names.sources)
    classes = equal_classes(guards)
    for cand in candidates:
        point = dict(env)
        for v, x in cand.items():
            for w in classes.get(v, (v,)):
                point[w] = x
        changed = {k for k in point if point.get(k) != env.get(k)}
        if changed & blocked:
            continue
        if mine.evaluate(point).status == "pass":
            continue
        # Every guard in force held for the traced call: only those that read a
        # changed size can fail, and they must be seen to pass.
        if all(g.clause.evaluate(point).status == "pass" for g in guards
               if changed.intersection(g.clause.placeholders)):
            witness = {names.sources[k]: point[k] for k in sorted(changed, key=lambda n: int(n[1:]))}
            return ClauseCheck(c.text, shown, "missing", witness=witness)
    why = Reason("not among the guards in force, and no call was found that passes them and fails it",
                 "no-witness-found")
    if opaque or any(names.by_source.get(s) in vars_ for _, named in unread for s in named):
        why = Reason("a guard in force that fxcache cannot read names these sizes", "guard-in-force-unread")
    return ClauseCheck(c.text, shown, "undecided", reason=why)



__all__ = ["MAX_GUARD_CHARS_IN_FORCE", "MAX_GUARDS_IN_FORCE", "MAX_RUN_CHARS", "CheckBudget", "ClauseCheck",
           "InstalledCheck", "Status", "check_installed"]
