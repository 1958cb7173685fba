"""A failed clause whose failure makes Dynamo trace another way: not a new entry of the key.

An entry's guards hold every check Dynamo made while tracing the key's graph (and those
Inductor added while compiling it). A call that fails a clause makes torch trace the
call again, and only where the check behind the clause does not change the trace is
the graph this key's (a new entry; :mod:`fxcache_core.lookup.prediction`'s MISS), which
the cache does not show: each form below is undecided, naming the clause.

* ``L['tN'] != c`` (a placeholder against an integer) that the call fails, the value
  being ``c``: while tracing, Dynamo asked whether the symbol is ``c``; this call's trace
  finds it is, and ``ShapeEnv._maybe_guard_rel`` (torch/fx/experimental/symbolic_shapes.py)
  solves ``Eq(s, c)`` by replacing the symbol with ``c``. An int argument is made a
  SymInt whatever its value (``create_unspecified_symbol`` does not specialize 0 and 1),
  so an ``n != 1`` that the code checked is where ``n=1`` is traced another way. Where
  the graph Dynamo records passes the constant to an op (a view's size list) torch looks
  up another key (checked with torch 2.13: ``x.view(b, groups, -1)`` with ``groups=1``,
  ``x.reshape((1, 24))``); where it does not, the graph is this key's and only Inductor's
  compile differs: a new entry of this key (``x[:, -k:].mean(1)`` with ``k=1``). The
  cache does not show which: :func:`specializing_clause` finds the clause, undecided
  (``value-specialized``).
* An equality (``==``, a divisibility ``% d == 0`` among them) that the call fails, alone
  or inside a failed ``or`` (``unflatten(-1, (heads, -1))`` guards ``x.size(1) == heads or
  (x.size(1) % heads == 0 and ...)``; checked with torch 2.13: ``heads=3`` of 8 raises): the
  trace relied on it (a ``view``'s sizes dividing, a ``reshape`` keeping the numel,
  ``-1`` in a shape), and with it false the ops differ, or the call raises (checked with
  torch 2.13: ``x.view(b, 5, -1)`` of 12 columns raises, ``reshape((-1, 6))`` traced
  another graph). Whether that trace gives this key's graph the cache does not show:
  undecided (``equality-failed``), naming the clause.
* An inequality between two inputs (``n <= x.size(1)``, ``x.size(1) != n``) that the
  call fails: an op's trace compared them (a slice clamps its end at the size it slices,
  a broadcast asks whether two sizes are equal), and with the comparison the other way
  the op gives other sizes, which the rest of the trace may take as this key's graph
  did, or not, or raise on (checked with torch 2.13: ``x[:, :n]`` alone kept the key
  for ``n`` past ``x.size(1)``; ``x[:, :n] + torch.arange(n)`` raised). The cache does
  not show which: undecided (``relation-failed``), naming the clause.
* Any other clause the call fails (a bound on one input, ``x.size(0) >= 16``; a product,
  ``x.size(1) * x.size(0) <= 64``; ``not (x.size(0) == 2 or x.size(0) == 3)``): the cache
  does not show the check behind it. Where the code branched on the size (``if``, a helper
  ``if too_long(x):``, ``bool(x.shape[0] >= 8)``, ``x.shape[0] in (2, 3)``, a loop) the
  call's trace goes the other way there: another graph; where an op checked it
  (``torch._check(x.shape[0] >= 4)``, a reflect pad wider than the size) the trace
  raises; only where neither did is the graph this key's (a new entry). Checked with
  torch 2.13, a new entry was the exception: of 11 such calls, 7 traced another graph, 3
  raised, 1 took a new entry (``x[:, :16]`` of 8 columns). Undecided, naming the clause:
  ``size-branch`` with the line where the key's code orders values in Python, else
  ``bound-failed``. :func:`failed_bound` finds a bound.
  Other entries of the key do not decide it: one compiled on the other side of each failed
  clause says nothing about the clauses jointly (``if (x.shape[0] > 16) != (x.shape[1] >
  8):`` built at (8, 4) and (20, 12) traces another graph for (20, 4)).

Never imports torch, never prints.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.guards.expr import Clause, parse_guards
from fxcache_core.lookup.judge import EntryVerdict

__all__ = ["FailedClause", "failed_bound", "failed_equality", "failed_relation", "int_literal",
           "placeholder_of", "specializing_clause"]


@dataclass(frozen=True, slots=True)
class FailedClause:
    """A failed clause of one entry, and what it says.

    Attributes:
        text: the clause as stored (``L['t2'] != 1``).
        placeholder: for a ``tN != c`` clause, ``tN``; else None.
        value: for a ``tN != c`` clause, ``c``; else None.
    """

    text: str
    placeholder: str | None = None
    value: int | None = None


def placeholder_of(node: ast.expr) -> str | None:
    """``tN`` of ``L['tN']``, else None."""
    if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "L"
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
        return node.slice.value
    return None


def int_literal(node: ast.expr) -> int | None:
    """The int a literal (``3``, ``-3``) is, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = int_literal(node.operand)
        return -v if v is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _compare(clause: Clause) -> tuple[type[ast.cmpop], ast.expr, ast.expr] | None:
    node = clause._node  # noqa: SLF001 - the parsed clause, read only
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return type(node.ops[0]), node.left, node.comparators[0]
    return None


def _failed(guards_expr: str, values: Mapping[str, int]) -> list[Clause]:
    """Every clause the call fails (not only the first, where torch's ``and`` stops)."""
    return [c for c in parse_guards(guards_expr).clauses if c.evaluate(values).status == "fail"]


def _each_failed_entry(entries: Sequence[EntryVerdict], values: Mapping[str, int],
                       pick: Callable[[list[Clause], Mapping[str, int]], FailedClause | None]
                       ) -> FailedClause | None:
    """``pick``'s clause of the first entry, where every entry failed and ``pick`` finds
    one in each; else None."""
    if not entries or any(v.outcome != "fail" or not v.guards_expr for v in entries):
        return None
    found = None
    for v in entries:
        try:
            got = pick(_failed(v.guards_expr or "", values), values)
        except Exception:  # noqa: BLE001 - a clause fxcache cannot read decides nothing here
            return None
        if got is None:
            return None
        found = found or got
    return found


def _ne_constant(failed: list[Clause], values: Mapping[str, int]) -> FailedClause | None:
    for c in failed:
        cmp = _compare(c)
        if cmp is None or cmp[0] is not ast.NotEq:
            continue
        _, left, right = cmp
        for a, b in ((left, right), (right, left)):
            p, k = placeholder_of(a), int_literal(b)
            if p is not None and k is not None and values.get(p) == k:
                return FailedClause(c.text, p, k)
    return None


def _atoms(failed: list[Clause], values: Mapping[str, int]) -> list[Clause]:
    """``failed``, each failed ``or`` among them (``a == b or (c % b == 0 and ...)``, as
    sympy prints a disjunction the trace relied on) replaced by the comparisons in it that
    fail or raise on ``values``, each parsed as a clause of its own."""
    out: list[Clause] = []
    for c in failed:
        node = c._node  # noqa: SLF001 - the parsed clause, read only
        if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or)):
            out.append(c)
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Compare) and len(sub.ops) == 1:
                (atom,) = parse_guards(ast.unparse(sub)).clauses
                if atom.evaluate(values).status in ("fail", "error"):
                    out.append(atom)
    return out


def _equality(failed: list[Clause], values: Mapping[str, int]) -> FailedClause | None:
    eqs = [c for c in _atoms(failed, values) if (cmp := _compare(c)) is not None and cmp[0] is ast.Eq]
    eqs.sort(key=lambda c: "%" not in c.text)  # a divisibility first: what a view or unflatten needs
    return FailedClause(eqs[0].text) if eqs else None


_RELATIONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.NotEq)


def _placeholders(node: ast.expr) -> set[str]:
    return {p for n in ast.walk(node) if (p := placeholder_of(n)) is not None}  # type: ignore[arg-type]


def _relation(failed: list[Clause], values: Mapping[str, int]) -> FailedClause | None:
    for c in _atoms(failed, values):
        cmp = _compare(c)
        if cmp is None or cmp[0] not in _RELATIONS:
            continue
        left, right = _placeholders(cmp[1]), _placeholders(cmp[2])
        if left and right and len(left | right) >= 2:  # an input on each side: two compared
            return FailedClause(c.text)
    return None


def specializing_clause(entries: Sequence[EntryVerdict], values: Mapping[str, int]) -> FailedClause | None:
    """Where every entry of ``entries`` (a key's, in torch's order) failed, and each fails
    a clause ``L['tN'] != c`` with ``tN`` given ``c``: that clause of the first (module
    doc); else None. ``values``: the call's value per placeholder."""
    return _each_failed_entry(entries, values, _ne_constant)


def failed_equality(entries: Sequence[EntryVerdict], values: Mapping[str, int]) -> FailedClause | None:
    """Where every entry of ``entries`` failed, and each fails an equality (``==``): the
    first entry's (module doc); else None."""
    return _each_failed_entry(entries, values, _equality)


def failed_relation(entries: Sequence[EntryVerdict], values: Mapping[str, int]) -> FailedClause | None:
    """Where every entry of ``entries`` failed, and each fails an inequality between two
    or more inputs (``L['t2'] <= L['t1']``): the first entry's (module doc); else None."""
    return _each_failed_entry(entries, values, _relation)


def _bound(failed: list[Clause], values: Mapping[str, int]) -> FailedClause | None:
    for c in _atoms(failed, values):
        cmp = _compare(c)
        if cmp is None or cmp[0] not in _RELATIONS[:4]:
            continue
        if len(_placeholders(cmp[1]) | _placeholders(cmp[2])) == 1:  # one input against constants
            return FailedClause(c.text)
    return None


def failed_bound(entries: Sequence[EntryVerdict], values: Mapping[str, int]) -> FailedClause | None:
    """Where every entry of ``entries`` failed, and each fails an inequality of one input
    and constants (``5 <= L['t0']``): the first entry's (module doc); else None."""
    return _each_failed_entry(entries, values, _bound)
