"""Reading the guards Dynamo installed (``dynamo_cpp_guards_str``): which bear on a clause, and what they say.

A guard in force is code over sources (``L['x'].size()[0] <= 24``). To compare
it with an entry's clauses (over ``L['tN']``), each source is renamed to a
placeholder of one process-wide table (:data:`NAMES`: ``L['x'].size()[0]`` <->
``t3``), the guard is split into atoms (conjuncts, chained comparisons split),
each atom is parsed through :func:`fxcache_core.guards.expr.parse_guards` (the
whitelist; nothing is executed) and given a text that equal comparisons share
(:func:`canonical_text`).

* :func:`relevant_guards`: the guards in force that can bear on clauses over
  some sources (those naming them, closed over the sources those name),
  at most :data:`MAX_RELEVANT_CHARS`;
* :func:`read_guards_in_force`: those guards read, as :class:`GuardsRead`.

A guard longer than :data:`MAX_GUARD_LINE_CHARS` or deeper than
:data:`MAX_RAW_DEPTH` is not read: it counts as naming any size. Nothing here
imports torch or sympy.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fxcache_core.errors import GuardParseError
from fxcache_core.guards.expr import Clause, parse_guards
from fxcache_core.guards.force_sources import lookup_key, source_index
from fxcache_core.guards.grammar import shallow, split_and

MAX_RELEVANT_CHARS = 64 * 1024
"""Most characters of guard code a check reads: the guards in force that name the
entry's sizes, or sizes those name (each guard costs ~0.1 ms to read)."""
MAX_GUARD_LINE_CHARS = 8 * 1024
"""A guard in force longer than this is not read (it counts as unread, naming any size)."""
MAX_RAW_DEPTH = 100
"""Deepest guard in force (every AST level counted) read: renaming and printing it
recurse a few frames a level. A deeper one counts as unread, naming any size."""


class PlaceholderNames:
    """Source text <-> placeholder name (``L['x'].size()[0]`` <-> ``t3``), one table
    for the whole process, so that a guard renamed once reads the same for every
    check (and a guard's reading can be cached)."""

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


NAMES = PlaceholderNames()
"""The table every check uses."""


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

    def __init__(self, names: PlaceholderNames) -> None:
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


def canonical_text(node: ast.expr) -> str:
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
class GuardInForce:
    """One atom of a guard in force, read.

    Attributes:
        atom: the atom's AST, over placeholders.
        clause: the atom parsed (:func:`~fxcache_core.guards.expr.parse_guards`), over placeholders.
        canonical: its :func:`canonical_text`.
    """

    atom: ast.expr
    clause: Clause
    canonical: str

    @property
    def text(self) -> str:
        """The atom over sources, as torch printed it (made only when shown: an
        unparse per guard in force is most of the cost of reading them)."""
        return show(self.atom, NAMES)


_OPAQUE: tuple[tuple[GuardInForce, ...], None, bool] = ((), None, False)
"""What :func:`_read_guard` gives for a guard too large or deep to read: no atom,
and the sources it names unknown (any)."""


@functools.lru_cache(maxsize=16384)
def _read_guard(code: str) -> tuple[tuple[GuardInForce, ...], frozenset[str] | None, bool] | None:
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
        tree = _Rename(NAMES).visit(tree)
        named = frozenset(_named(tree, NAMES))
        out = []
        complete = True
        for atom in _atoms(tree):
            try:
                clause = parse_guards(ast.unparse(atom)).clauses[0]
            except GuardParseError:
                complete = False
                continue
            out.append(GuardInForce(atom, clause, canonical_text(atom)))
    except RecursionError:  # not expected under MAX_RAW_DEPTH; never a traceback
        return _OPAQUE
    return tuple(out), named, complete


def relevant_guards(in_force: tuple[str, ...], sources: set[str]) -> list[str] | None:
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
                more.update(NAMES.sources[p] for p in g.clause.placeholders if p in NAMES.sources)
            for s in more - want:
                want.add(s)
                frontier.append(s)
    return [in_force[i] for i in sorted(taken)]


def _named(tree: ast.AST, names: PlaceholderNames) -> set[str]:
    """Sources named (as renamed placeholders) anywhere in ``tree``."""
    out = set()
    for n in ast.walk(tree):
        if (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "L"
                and isinstance(n.slice, ast.Constant) and n.slice.value in names.sources):
            out.add(names.sources[n.slice.value])
    return out


def show(node: ast.AST, names: PlaceholderNames) -> str:
    """``node`` (over renamed placeholders) as text over sources."""
    # One pass over the text (a replace per known source made each guard cost as
    # many passes as the process had sources: quadratic in the guards in force).
    return _PLACEHOLDER_RE.sub(lambda m: names.sources.get(m.group(1), m.group(0)), ast.unparse(node))


_PLACEHOLDER_RE = re.compile(r"L\['(t[0-9]+)'\]")


def rename_placeholders(tree: ast.expr, mapping: Mapping[str, str]) -> ast.AST:
    """An entry's clause over ``L['tN']`` -> the same over the placeholders of
    :data:`NAMES` (``mapping``: tN -> tK, the placeholder of its source)."""
    return _Placeholders(mapping).visit(tree)


@dataclass(frozen=True, slots=True)
class GuardsRead:
    """What :func:`read_guards_in_force` read of some guards in force.

    Attributes:
        guards: every atom that reads as a shape guard, in order.
        unread: each guard with an atom that did not read (its code), and the
            sources it names.
        opaque: some guard was too large or deep to read: it may name any size.
    """

    guards: tuple[GuardInForce, ...]
    unread: tuple[tuple[str, frozenset[str]], ...]
    opaque: bool


def read_guards_in_force(codes: Iterable[str]) -> GuardsRead:
    """The guards in force ``codes`` (from :func:`relevant_guards`) read; a code that
    is not Python is left out. Never raises."""
    guards: list[GuardInForce] = []
    unread: list[tuple[str, frozenset[str]]] = []
    opaque = False
    for code in codes:
        read = _read_guard(code)
        if read is None:
            continue
        atoms, named, complete = read
        if named is None:
            opaque = True
            continue
        if not complete:
            unread.append((code, named))
        guards.extend(atoms)
    return GuardsRead(tuple(guards), tuple(unread), opaque)



__all__ = ["MAX_GUARD_LINE_CHARS", "MAX_RAW_DEPTH", "MAX_RELEVANT_CHARS", "NAMES", "GuardInForce", "GuardsRead",
           "PlaceholderNames", "canonical_text", "read_guards_in_force", "relevant_guards", "rename_placeholders",
           "show"]
