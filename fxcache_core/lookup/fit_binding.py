"""What fitting a call to one key's graph builds: :class:`Binding`, the evidence it
may ask for (:class:`Sibling`), and what every step of the fit shares.

The fit itself is :func:`fxcache_core.lookup.fit.fit` (sizes, strides, dtypes, int
arguments), :mod:`fxcache_core.lookup.duck_sizing` (equal sizes and shared symbols)
and :mod:`fxcache_core.lookup.fit_floats` (floats); each adds symbol values,
problems and notes to one :class:`Binding`. Never evaluates guards, never prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import param
from fxcache_core.lookup.graph_types import eval_symbolic
from fxcache_core.reasons import Reason

INT_RE = re.compile(r"-?[0-9]+")

SYMBOL_RE = re.compile(r"[a-z]+[0-9]+")


def how() -> str:
    """How a user settles what depends on the compile mode (a hint in notes; made
    when asked, so the caller's naming of ``dynamic`` is in force)."""
    return (f"pass {param('dynamic')} true/none/false as in torch.compile, and mark_dynamic=[...] on dims "
            "that are marked")


@dataclass(frozen=True, slots=True)
class Sibling:
    """Another AOTAutograd key of the cache, as evidence of how the call is traced:
    which dims a graph of the same function keeps on separate symbols, and whether
    it was compiled with equal sizes on separate symbols (duck sizing off, or
    marked dims).

    Attributes:
        key: the key's name.
        entry: its first readable entry (torch's order).
        symbols: that entry's ``tN`` table, with hints.
        same_function: traced from the same function as the key being fitted.
    """

    key: str
    entry: DecodedEntry
    symbols: tuple[SymbolInfo, ...]
    same_function: bool

Siblings = Callable[[], Sequence[Sibling]]
"""The other AOTAutograd keys of the cache, those of the key's function first; read
only when a rule needs them."""

Symbolic = tuple[str, str, int, str]
"""A symbolic dim of the call: (where, the key's symbol, size given, dim kind)."""

Static = tuple[str, int, str]
"""A dim the key has static, size > 1: (where, size, dim kind)."""


@dataclass(slots=True)
class Binding:
    """Symbol values found while fitting the inputs to one entry's graph inputs; built
    up by the fit's steps (mutable), then read by the placeholder binding.

    Attributes:
        syms: plain symbol -> value.
        where: plain symbol -> the first input dim that gave it.
        problems: why the inputs cannot be this key's (each a Reason).
        later: (what, expression, value given) for sizes/strides that are
            expressions, checked once ``syms`` are known (:func:`check_later`).
        notes: what the cache cannot tell that would change the outcome.
        static: static size -> a dim that has it.
        assumed: input -> the dtype the fit took from the key, for tensors given
            without one (``x=[2,8]`` rather than ``x=[2,8]:dtype=bool``).
    """

    syms: dict[str, int]
    where: dict[str, str]
    problems: list[Reason]
    later: list[tuple[str, str, int]]
    notes: list[Reason] = field(default_factory=list)
    static: dict[int, str] = field(default_factory=dict)
    assumed: dict[str, str] = field(default_factory=dict)


def check_later(b: Binding) -> list[Reason]:
    """Expression sizes/strides against the values given, once the symbols are known."""
    problems = []
    for where, expr, got in b.later:
        want = eval_symbolic(expr, b.syms)
        if want is not None and want != got:
            problems.append(Reason(f"{where} is {expr} = {want} here, got {got}", "expression-differs"))
    return problems


def pairs(items: list) -> list[tuple]:
    """Every pair of ``items`` (each once, in order)."""
    return [(a, c) for i, a in enumerate(items) for c in items[i + 1:]]
