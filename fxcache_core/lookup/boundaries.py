"""A size the call brings to 0 or 1 inside a key's graph: Dynamo's 0/1 specialization
of a derived size.

Dynamo specializes a size of 0 or 1 (``ShapeEnv``'s "0/1 specialization",
torch/fx/experimental/symbolic_shapes.py). For an input dim that is plain: the dim is
traced static, another graph (:func:`fxcache_core.lookup.fit.fit` says so). A size
*derived* from the inputs (``x.size(0) - 1`` rows after ``x[1:]``, the frames left
after a convolution) is not an input: while tracing, a check such as a broadcast's
"is this size 1?" records a guard (``s77 - 1 != 1``, often folded into a range,
``3 <= s77``), and a call that makes the size 1 fails it. Dynamo then traces the
other way, with ``s77 - 1 == 1`` holding, and ``ShapeEnv._maybe_guard_rel`` solves
that equality for the symbol where it can (no ``FloorDiv`` by more than 1, no
``Mod``: ``try_solve`` with an integer solution) and replaces the symbol by its value:
the input dim becomes static, the graph's inputs change, and torch looks up another
key (checked with torch 2.13: ``x[1:]``, ``cat([x, x])[3:]``). Where it cannot solve
(``s77 // 2``, ``(s77 - 3) // 2 + 1``), the graph keeps its symbols and may be this
key's (a new entry: torch 2.13 wrote one for ``x[: s77 // 2]`` and for a strided
convolution) or another, as the ops the check decided differ: the cache cannot tell.
A size brought to 0 was seen to keep the key as well (``x[2:]`` of 2 rows): not decided
either. An int argument that sizes a tensor alone (``torch.arange(n)``, ``x[:, :n]``) is
such a size too: it is not an input dim, Dynamo keeps the argument a SymInt whatever its
value, and a call that makes it 0 or 1 fails the range the sizing gave it (``n >= 2``);
torch 2.13 traced another graph for ``n=0`` there, keeping ``n`` an input: not decided
either (no symbol is solved for).

:func:`size_boundary` finds such a size among the sizes the key's stored graph
prints (its inputs' and its ops' tensor types), for a call whose every entry of
the key failed. Never imports torch, never prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.lookup.graph_types import eval_symbolic
from fxcache_core.lookup.source_values import is_size_source

__all__ = ["Boundary", "graph_sizes", "size_boundary"]

_TYPE_RE = re.compile(r'"[a-z0-9]+\[(?P<sizes>[^\]]*)\]\[')
_SYMBOL_RE = re.compile(r"\b[a-z]+[0-9]+\b")
_LINEAR_RE = re.compile(r"[\s0-9+\-*()a-z]*")
MAX_SIZES = 10_000
"""Distinct size expressions read from one graph at most."""


@dataclass(frozen=True, slots=True)
class Boundary:
    """A size of the key's graph that the call makes 0 or 1.

    Attributes:
        expr: the size as the graph prints it (``s77 - 1``).
        shown: the same in the user's terms (``x.size(0) - 1``).
        value: 0 or 1, its value for the call.
        solved: the symbol Dynamo solves the equality for and the value it gives it
            (``("x.size(0)", 2)``): the input dim is then traced static, another
            graph. None where Dynamo does not solve it (see the module docstring).
    """

    expr: str
    shown: str
    value: int
    solved: tuple[str, int] | None


def graph_sizes(graph: str) -> list[str]:
    """The distinct size expressions of a printed graph's tensor types
    (``"f32[s77 - 1, s27][s27, 1]cpu"`` gives ``s77 - 1`` and ``s27``), in order of
    appearance; at most :data:`MAX_SIZES`."""
    seen: dict[str, None] = {}
    for m in _TYPE_RE.finditer(graph):
        for d in m.group("sizes").split(","):
            d = d.strip()
            if d and d not in seen:
                seen[d] = None
                if len(seen) >= MAX_SIZES:
                    return list(seen)
    return list(seen)


def size_boundary(graph: str, symbols: Sequence[SymbolInfo], values: Mapping[str, int | None]) -> Boundary | None:
    """The first size of ``graph`` (:func:`graph_sizes`) that is an expression of the
    key's symbols (not a tensor dim's symbol alone: an input dim of 0 or 1 is the fit's;
    an int argument's symbol alone is one, never solved) and that
    the call makes 0 or 1; one Dynamo solves for a symbol first (see
    :class:`Boundary`). ``symbols``: the key's placeholder table; ``values``: the
    call's value per placeholder (``t0`` -> 2). None when there is none."""
    by_symbol: dict[str, int] = {}
    names: dict[str, str] = {}
    scalars: set[str] = set()  # the symbols of int arguments, not of a tensor's sizes
    for info in symbols:
        v = values.get(info.placeholder)
        if info.expr and _SYMBOL_RE.fullmatch(info.expr) and v is not None:
            by_symbol[info.expr] = v
            if info.source is not None and not is_size_source(info.source):
                scalars.add(info.expr)
            if info.source:
                from fxcache_core.guards.user_terms import user_source

                names[info.expr] = user_source(info.source)
    found: list[Boundary] = []
    for expr in graph_sizes(graph):
        syms = set(_SYMBOL_RE.findall(expr))
        if not syms or not syms <= set(by_symbol) or (_SYMBOL_RE.fullmatch(expr) and expr not in scalars):
            continue
        v = eval_symbolic(expr, by_symbol)
        if v not in (0, 1):
            continue
        shown = _SYMBOL_RE.sub(lambda m: names.get(m.group(0), m.group(0)), expr)
        solved = None
        if v == 1 and expr not in scalars and len(syms) == 1 and _LINEAR_RE.fullmatch(expr) and "//" not in expr and "**" not in expr:
            (s,) = syms
            solved = (names.get(s, s), by_symbol[s])
        found.append(Boundary(expr, shown, v, solved))
    return next((b for b in found if b.solved), found[0] if found else None)
