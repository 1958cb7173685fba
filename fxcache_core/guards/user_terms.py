"""Guards in the user's terms: ``x.size(0) >= 16``, not ``16 <= L['t0']``.

A stored guard names the backed SymInt inputs of the graph (``L['t0']``), and
Dynamo names where each came from with a guard-style source
(``L['x'].size()[0]``, torch/_dynamo/source.py). A user thinks of the call:
the parameter ``x`` and its ``x.size(0)``. This module rewrites both:

* :func:`user_source`: a source as the user writes it (``L['x'].size()[0]``
  -> ``x.size(0)``, ``L['xs'][1].stride()[0]`` -> ``xs[1].stride(0)``,
  ``L['self']._modules['lin']._parameters['weight']`` -> ``self.lin.weight``);
* :func:`clause_in_user_terms`: a clause with every ``L['tN']`` replaced by its
  user name, and a comparison of a constant with an expression turned so the
  expression comes first (``16 <= L['t0']`` -> ``x.size(0) >= 16``), which
  reads the same and means the same (comparisons are only mirrored, never
  changed);
* :func:`region`: an entry's shape region, the integer ranges of
  :func:`~fxcache_core.guards.summary.summarize` (``2 <= x.size(0) <= 7``) and
  every other clause in user terms.

Display only: verdicts always come from :mod:`fxcache_core.guards.expr` on the
stored string. Nothing here imports sympy except :func:`region`. Ranges are
written by :func:`~fxcache_core.guards.ranges.render_range`.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.guards.ranges import render_range

if TYPE_CHECKING:
    from fxcache_core.guards.expr import GuardsExpr
    from fxcache_core.guards.summary import GuardSummary

_LOCAL_RE = re.compile(r"^L\['([A-Za-z_]\w*)'\]")
_GLOBAL_RE = re.compile(r"^G\['([A-Za-z_]\w*)'\]")
_MODULE_ATTR_RE = re.compile(r"\._(?:modules|parameters|buffers)\['([A-Za-z_]\w*)'\]")
_PROP_RE = re.compile(r"\.(size|stride)\(\)\[([0-9]+)\]")

_MIRROR = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE,
           ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


@functools.lru_cache(maxsize=8192)
def user_source(source: str) -> str:
    """A Dynamo source as the user writes it in the call (see the module docstring).

    Locals lose their ``L['...']`` (``L['x']`` -> ``x``), globals their
    ``G['...']``; ``.size()[i]``/``.stride()[i]`` become ``.size(i)``/
    ``.stride(i)``; a module's ``._modules['a']``, ``._parameters['w']`` and
    ``._buffers['b']`` become ``.a``, ``.w``, ``.b``. Anything else is kept as
    it is, so the result is never a guess.
    """
    s = _LOCAL_RE.sub(r"\1", source, count=1)
    s = _GLOBAL_RE.sub(r"\1", s, count=1)
    s = _MODULE_ATTR_RE.sub(r".\1", s)
    return _PROP_RE.sub(r".\1(\2)", s)


_SOURCE_IN_TEXT_RE = re.compile(r"[LG]\['[A-Za-z_]\w*'\](?:\.\w+|\(\)|\[(?:-?[0-9]+|'\w+')\])*")


@functools.lru_cache(maxsize=8192)
def user_text(text: str) -> str:
    """A sentence with every Dynamo source in it in the user's terms
    (``dim 0 of L['x'] is static 4`` -> ``dim 0 of x is static 4``)."""
    return _SOURCE_IN_TEXT_RE.sub(lambda m: user_source(m.group(0)), text)


def placeholder_names(symbols: Sequence[SymbolInfo]) -> dict[str, str]:
    """``tN`` -> how the user names it: the user form of its source where known,
    else its symbol (``s77``), else ``tN`` itself."""
    return {s.placeholder: user_source(s.source) if s.source else (s.expr or s.placeholder)
            for s in symbols}


class _Rename(ast.NodeTransformer):
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        key = node.slice
        if (isinstance(node.value, ast.Name) and node.value.id == "L" and isinstance(key, ast.Constant)
                and isinstance(key.value, str)):
            return ast.copy_location(ast.Name(id=self.names.get(key.value, key.value), ctx=ast.Load()), node)
        return self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if (len(node.ops) == 1 and type(node.ops[0]) in _MIRROR and _is_constant(node.left)
                and not _is_constant(node.comparators[0])):
            return ast.copy_location(ast.Compare(left=node.comparators[0], ops=[_MIRROR[type(node.ops[0])]()],
                                                 comparators=[node.left]), node)
        return node


def _is_constant(node: ast.AST) -> bool:
    """A number, or a number with a sign: ``16``, ``(-1)``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float))


def clause_in_user_terms(text: str, names: Mapping[str, str]) -> str:
    """One guard clause (a piece of a guards string) in the user's terms (see the
    module docstring); the text as it is when it does not parse.

    Remembered per (clause, names): a ``match`` over many keys of one function
    words the same failing clause for each of them."""
    return _clause_in_user_terms(text, tuple(names.items()))


@functools.lru_cache(maxsize=4096)
def _clause_in_user_terms(text: str, names: tuple[tuple[str, str], ...]) -> str:
    return _reworded(text, dict(names))


def _reworded(text: str, names: Mapping[str, str]) -> str:
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    try:
        return ast.unparse(_Rename(names).visit(tree))
    except (RecursionError, ValueError):
        return text


@dataclass(frozen=True)
class Region:
    """The shapes an entry serves, in user terms.

    Attributes:
        ranges: one line per placeholder confined to an integer range
            (``2 <= x.size(0) <= 7``, ``x.size(1) != 4`` for excluded values).
        other: every other clause (divisibility, relations between sizes,
            anything else), in user terms, in the guards' order.
        always: the entry has no guards: it serves every call its key takes.
    """

    ranges: tuple[str, ...] = ()
    other: tuple[str, ...] = ()
    always: bool = False

    def __str__(self) -> str:
        if self.always:
            return "any shapes (no guards)"
        return ", ".join(self.ranges + self.other)

    def to_json(self) -> dict[str, object]:
        return {"ranges": list(self.ranges), "other": list(self.other), "always": self.always,
                "text": str(self)}


def region(guards_expr: str | None, symbols: Sequence[SymbolInfo]) -> Region:
    """The region of an entry with this guards string and symbol table.

    Raises:
        GuardParseError: the guards are outside the grammar fxcache reads.
    """
    if not guards_expr:
        return Region(always=True)
    from fxcache_core.guards.expr import parse_guards
    from fxcache_core.guards.summary import summarize  # sympy: only where a region is shown

    g = parse_guards(guards_expr)
    return region_of(g, summarize(g), symbols)


def region_of(g: GuardsExpr, summary: GuardSummary, symbols: Sequence[SymbolInfo]) -> Region:
    """:func:`region` of guards already parsed and summarized."""
    names = placeholder_names(symbols)
    in_range = {i for r in summary.ranges for i in r.clauses}
    ranges = tuple(render_range(r.lower, r.upper, r.excluded, names.get(r.placeholder, r.placeholder))
                   for r in summary.ranges)
    other = tuple(clause_in_user_terms(c.text, names) for c in g.clauses if c.index not in in_range)
    return Region(ranges=ranges, other=other)
