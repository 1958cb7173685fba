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

The guards are parsed through :func:`fxcache_core.guards.expr.parse_guards` (the
whitelist; nothing is executed), after each source is renamed to a
placeholder. Nothing here imports torch; sympy is imported for the ranges.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import Clause, parse_guards
from fxcache_core.guards.force_sources import lookup_key, source_index
from fxcache_core.guards.grammar import shallow, split_and
from fxcache_core.reasons import Reason, code_of

Status = Literal["installed", "missing", "undecided"]
MAX_ENUMERATED = 4096
"""Points tried when the guards in force leave a clause's sizes few enough values."""
MAX_GUARDS_IN_FORCE = 50_000
"""Most guards in force (lines of ``dynamo_cpp_guards_str``) a check takes; a compile
with more is undecided (a large model installs a few thousand)."""
MAX_GUARD_CHARS_IN_FORCE = 8 * 1024 * 1024
"""Most characters of guard code in force a check takes, all guards together."""
MAX_RELEVANT_CHARS = 64 * 1024
"""Most characters of guard code a check reads: the guards in force that name the
entry's sizes, or sizes those name (each guard costs ~0.1 ms to read)."""
MAX_RANGE_GUARDS = 64
"""Most one-size guards in force read as ranges for one clause (sympy reads each in ~1 ms)."""
MAX_RUN_CHARS = 1024 * 1024
"""Most characters of guard code the checks sharing one :class:`CheckBudget` read, all
together (a trace may hold any number of hits on one compile)."""
MAX_GUARD_LINE_CHARS = 8 * 1024
"""A guard in force longer than this is not read (it counts as unread, naming any size)."""
MAX_RAW_DEPTH = 100
"""Deepest guard in force (every AST level counted) read: renaming and printing it
recurse a few frames a level. A deeper one counts as unread, naming any size."""


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


class _Names:
    """Source text <-> placeholder name (``L['x'].size()[0]`` <-> ``t3``), one table
    for the whole process, so that a guard renamed once reads the same for every
    check (and :func:`_read_guard` can be cached)."""

    def __init__(self) -> None:
        self.by_source: dict[str, str] = {}
        self.sources: dict[str, str] = {}

    def name(self, source: str) -> str:
        n = self.by_source.get(source)
        if n is None:
            n = f"t{len(self.by_source)}"
            self.by_source[source] = n
            self.sources[n] = source
        return n


_NAMES = _Names()


def _is_source(node: ast.AST) -> bool:
    """Whether ``node`` is a Dynamo source expression: ``L['x']``, ``G['m'].w``,
    ``L['xs'][0]``, ``L['x'].size()[0]``, ``L['x'].stride()[1]``, ``L['x'].storage_offset()``."""
    if isinstance(node, ast.Subscript):
        if isinstance(node.value, ast.Name):
            return node.value.id in ("L", "G") and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str)
        return _is_source(node.value) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, (int, str))
    if isinstance(node, ast.Attribute):
        return _is_source(node.value)
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Attribute) and node.func.attr in ("size", "stride", "storage_offset")
                and not node.args and not node.keywords and _is_source(node.func.value))
    return False


class _Rename(ast.NodeTransformer):
    """Replace each maximal source expression by ``L['tK']`` (K from ``names``)."""

    def __init__(self, names: _Names) -> None:
        self.names = names

    def _renamed(self, node: ast.AST) -> ast.AST:
        if _is_source(node):
            return ast.Subscript(ast.Name("L", ast.Load()), ast.Constant(self.names.name(ast.unparse(node))),
                                 ast.Load())
        return self.generic_visit(node)

    visit_Subscript = visit_Attribute = visit_Call = _renamed


class _Placeholders(ast.NodeTransformer):
    """Replace ``L['tN']`` of an entry by ``L['tK']`` of its source (``mapping``: tN -> tK)."""

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.mapping = mapping

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if (isinstance(node.value, ast.Name) and node.value.id == "L" and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str) and node.slice.value in self.mapping):
            return ast.Subscript(ast.Name("L", ast.Load()), ast.Constant(self.mapping[node.slice.value]),
                                 ast.Load())
        return self.generic_visit(node)


def _atoms(tree: ast.expr) -> list[ast.expr]:
    """A guard's conjuncts, chained comparisons split (``2 <= a <= 8`` -> ``2 <= a``, ``a <= 8``)."""
    out: list[ast.expr] = []
    for n in split_and(tree):
        if isinstance(n, ast.Compare) and len(n.ops) > 1:
            parts = [n.left, *n.comparators]
            out.extend(ast.Compare(parts[i], [op], [parts[i + 1]]) for i, op in enumerate(n.ops))
        else:
            out.append(n)
    return out


_FLIP = {ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def _canonical(node: ast.expr) -> str:
    """A text that equal comparisons share: ``a > b`` as ``b < a``, ``==``/``!=``
    with their operands sorted."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if type(op) in _FLIP:
            left, op, right = right, _FLIP[type(op)](), left
        if isinstance(op, (ast.Eq, ast.NotEq)):
            a, b = sorted((ast.dump(left), ast.dump(right)))
            return f"{type(op).__name__}({a}, {b})"
        return f"{type(op).__name__}({ast.dump(left)}, {ast.dump(right)})"
    return ast.dump(node)


@dataclass(frozen=True)
class _Guard:
    atom: ast.expr     # one atom, over placeholders
    clause: Clause     # parsed over placeholders
    canonical: str

    @property
    def text(self) -> str:
        """The atom over sources, as torch printed it (made only when shown: an
        unparse per guard in force is most of the cost of reading them)."""
        return _show(self.atom, _NAMES)


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
    are read, at most :data:`MAX_RELEVANT_CHARS` of them; more, or more than
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
    names = _NAMES
    relevant = _relevant(tuple(in_force), {s for p in entry.placeholders if (s := sources.get(p))})
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
    guards: list[_Guard] = []
    unread: list[tuple[str, set[str]]] = []  # guards that could not be read, and the sources they name
    opaque = False  # a guard in force too large to read: it may name any size
    for code in relevant:
        read = _read_guard(code)
        if read is None:
            continue
        atoms, named, complete = read
        if named is None:
            opaque = True
            continue
        if not complete:
            unread.append((code, set(named)))
        guards.extend(atoms)
    env = {names.name(s): v for s, v in values.items()}
    canon = {g.canonical: g for g in guards}
    checks = [_check_clause(c, sources, names, guards, canon, unread, env, opaque) for c in entry.clauses]
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


_OPAQUE: tuple[tuple[_Guard, ...], None, bool] = ((), None, False)
"""What :func:`_read_guard` gives for a guard too large or deep to read: no atom,
and the sources it names unknown (any)."""


@functools.lru_cache(maxsize=16384)
def _read_guard(code: str) -> tuple[tuple[_Guard, ...], frozenset[str] | None, bool] | None:
    """A guard in force -> its atoms over placeholders that read as shape guards, the
    sources it names (None: unknown, :data:`_OPAQUE`), and whether every atom did;
    None when it is not Python. Longer than :data:`MAX_GUARD_LINE_CHARS` or deeper
    than :data:`MAX_RAW_DEPTH`: :data:`_OPAQUE` (never a ``RecursionError``)."""
    if len(code) > MAX_GUARD_LINE_CHARS:
        return _OPAQUE
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not shallow(tree, MAX_RAW_DEPTH):
        return _OPAQUE
    try:
        tree = _Rename(_NAMES).visit(tree)
        named = frozenset(_named(tree, _NAMES))
        out = []
        complete = True
        for atom in _atoms(tree):
            try:
                clause = parse_guards(ast.unparse(atom)).clauses[0]
            except GuardParseError:
                complete = False
                continue
            out.append(_Guard(atom, clause, _canonical(atom)))
    except RecursionError:  # not expected under MAX_RAW_DEPTH; never a traceback
        return _OPAQUE
    return tuple(out), named, complete


def _relevant(in_force: tuple[str, ...], sources: set[str]) -> list[str] | None:
    """The guards in force that can bear on clauses over ``sources``, in their order:
    those that name one of them, or a source named by a guard already taken (the
    closure: ``a == b`` takes in the guards on ``b``), and those too large to read.
    Whatever the others say, the verdict is the same: a guard counts only through
    the sizes it names. None when they hold more than :data:`MAX_RELEVANT_CHARS`."""
    index = source_index(in_force)
    taken: set[int] = set()
    frontier = list(sources)
    want = set(sources)
    chars = 0
    while frontier:
        for i in index.get(lookup_key(frontier.pop()), ()):
            if i in taken:
                continue
            taken.add(i)
            chars += len(in_force[i])
            if chars > MAX_RELEVANT_CHARS:
                return None
            read = _read_guard(in_force[i])
            if read is None or read[1] is None:
                continue
            atoms, named, _ = read
            more = set(named)
            for g in atoms:
                more.update(_NAMES.sources[p] for p in g.clause.placeholders if p in _NAMES.sources)
            for s in more - want:
                want.add(s)
                frontier.append(s)
    return [in_force[i] for i in sorted(taken)]


def _named(tree: ast.AST, names: _Names) -> set[str]:
    """Sources named (as renamed placeholders) anywhere in ``tree``."""
    out = set()
    for n in ast.walk(tree):
        if (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "L"
                and isinstance(n.slice, ast.Constant) and n.slice.value in names.sources):
            out.add(names.sources[n.slice.value])
    return out


def _show(node: ast.AST, names: _Names) -> str:
    """``node`` (over renamed placeholders) as text over sources."""
    # One pass over the text (a replace per known source made each guard cost as
    # many passes as the process had sources: quadratic in the guards in force).
    return _PLACEHOLDER_RE.sub(lambda m: names.sources.get(m.group(1), m.group(0)), ast.unparse(node))


_PLACEHOLDER_RE = re.compile(r"L\['(t\d+)'\]")


def _check_clause(c: Clause, sources: Mapping[str, str | None], names: _Names, guards: list[_Guard],
                  canon: dict[str, _Guard], unread: list[tuple[str, set[str]]],
                  env: dict[str, int], opaque: bool = False) -> ClauseCheck:
    unknown = [p for p in c.placeholders if not sources.get(p)]
    if unknown:
        return ClauseCheck(c.text, None, "undecided", reason=Reason(f"no source known for {', '.join(unknown)}",
                                                                              "source-unknown"))
    mapping = {p: names.name(sources[p]) for p in c.placeholders}  # type: ignore[arg-type]
    tree = ast.parse(c.text, mode="eval").body
    if not shallow(tree, MAX_RAW_DEPTH):  # renaming and printing it would recurse too deep
        return ClauseCheck(c.text, None, "undecided", reason=Reason(
            f"the clause nests deeper than {MAX_RAW_DEPTH} levels: not checked", "clause-not-read"))
    node = _Placeholders(mapping).visit(tree)
    shown = _show(node, names)
    hit = canon.get(_canonical(node))
    if hit is not None:
        return ClauseCheck(c.text, shown, "installed", guard=hit.text)
    try:
        mine = parse_guards(ast.unparse(node)).clauses[0]
    except GuardParseError as e:
        return ClauseCheck(c.text, shown, "undecided", reason=Reason(f"cannot read the clause: {e}",
                                                                                "clause-not-read"))
    vars_ = mine.placeholders
    ranges = _ranges(guards, vars_)
    # Every value the ranges in force allow, when few: the clause holds at each, or a witness.
    points = _enumerate(ranges, vars_)
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
    elif _implied_by_range(mine, ranges):
        return ClauseCheck(c.text, shown, "installed", guard="ranges")
    candidates += _candidates(mine, ranges, env, guards)
    blocked = {names.by_source[s] for _, named in unread for s in named if s in names.by_source}
    if opaque:
        blocked = set(names.sources)
    classes = _equal_classes(guards)
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


def _ranges(guards: list[_Guard], vars_: Sequence[str]) -> dict[str, tuple[int | None, int | None, tuple[int, ...]]]:
    """placeholder -> (lower, upper, excluded) that the one-placeholder guards in force give
    (none when more than :data:`MAX_RANGE_GUARDS`: a real size has a few)."""
    wanted = set(vars_)
    single = [g.clause.text for g in guards if len(g.clause.placeholders) == 1 and g.clause.placeholders[0] in wanted]
    if not single or len(single) > MAX_RANGE_GUARDS:
        # No range known: the clause is then checked by a witness, never taken as implied.
        return {}
    return _summarized(tuple(single))


@functools.lru_cache(maxsize=1024)
def _summarized(single: tuple[str, ...]) -> dict[str, tuple[int | None, int | None, tuple[int, ...]]]:
    """:func:`_ranges` of these one-placeholder guards (each hit of a compile asks again)."""
    from fxcache_core.guards.summary import summarize  # sympy: imported only here

    try:
        summary = summarize(parse_guards(" and ".join(f"({t})" for t in single)))
    except GuardParseError:
        return {}
    return {r.placeholder: (r.lower, r.upper, r.excluded) for r in summary.ranges}


def _implied_by_range(clause: Clause, ranges: Mapping[str, tuple[int | None, int | None, tuple[int, ...]]]) -> bool:
    """A one-placeholder range clause that the ranges in force stay within."""
    if len(clause.placeholders) != 1:
        return False
    from fxcache_core.guards.summary import summarize

    try:
        s = summarize(parse_guards(clause.text))
    except GuardParseError:
        return False
    if len(s.ranges) != 1 or s.divisibility or s.relations or s.other:
        return False
    r = s.ranges[0]
    have = ranges.get(r.placeholder)
    if have is None:
        return r.lower is None and r.upper is None and not r.excluded
    lo, hi, ex = have
    if r.lower is not None and (lo is None or lo < r.lower):
        return False
    if r.upper is not None and (hi is None or hi > r.upper):
        return False
    return all(v in ex or (lo is not None and v < lo) or (hi is not None and v > hi) for v in r.excluded)


def _enumerate(ranges: Mapping[str, tuple[int | None, int | None, tuple[int, ...]]],
               vars_: Sequence[str]) -> list[dict[str, int]] | None:
    """Every point of the clause's placeholders within the ranges in force, if
    all are bounded and there are at most :data:`MAX_ENUMERATED`; else None."""
    axes = []
    total = 1
    for v in vars_:
        lo, hi, ex = ranges.get(v, (None, None, ()))
        if lo is None or hi is None:
            return None
        total *= max(0, hi - lo + 1)
        if total > MAX_ENUMERATED:
            return None
        axes.append([x for x in range(lo, hi + 1) if x not in ex])
    return [dict(zip(vars_, p, strict=True)) for p in itertools.product(*axes)]


def _candidates(clause: Clause, ranges: Mapping[str, tuple[int | None, int | None, tuple[int, ...]]],
                env: Mapping[str, int], guards: list[_Guard]) -> list[dict[str, int]]:
    """Values to try for a witness: around the call's values, the bounds in force,
    and the constants of the clause and of the guards."""
    consts = set()
    for node in ast.walk(ast.parse(clause.text, mode="eval")):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            consts.add(node.value)
    out = []
    for v in clause.placeholders:
        base = env.get(v)
        lo, hi, _ = ranges.get(v, (None, None, ()))
        vals = {c + d for c in consts for d in (-1, 0, 1)}
        if base is not None:
            vals |= {base - 1, base + 1, base * 2, base // 2, base * 2 + 1}
        for b in (lo, hi):
            if b is not None:
                vals |= {b - 1, b, b + 1}
        vals |= {2, 3, 2**31 - 1}
        for x in sorted(vals):
            if (lo is None or x >= lo) and (hi is None or x <= hi) and x >= 0:
                out.append({v: x})
    return out


def _equal_classes(guards: list[_Guard]) -> dict[str, tuple[str, ...]]:
    """Placeholders a guard in force makes equal (``a == b``): each -> its class."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    for g in guards:
        n = ast.parse(g.clause.text, mode="eval").body
        if (isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq)
                and len(g.clause.placeholders) == 2 and all(_is_placeholder(x) for x in (n.left, n.comparators[0]))):
            a, b = g.clause.placeholders
            parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for x in list(parent):
        groups.setdefault(find(x), []).append(x)
    out: dict[str, tuple[str, ...]] = {}
    for root, members in groups.items():
        cls = tuple(sorted(set(members) | {root}))
        for m in cls:
            out[m] = cls
    return out


def _is_placeholder(node: ast.AST) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "L"
