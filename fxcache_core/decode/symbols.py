"""From ``L['tN']`` to the symbol and to the user's input.

In a guards expression ``L['tN']`` is the N-th *backed* SymInt input of the
graph (``GuardedCache._filter_backed_symints`` in torch/_inductor/codecache.py:
SymInts that have a hint; unbacked ``u0`` symbols are never guarded on). The
graph's placeholders name the symbol (``arg0_1: "Sym(s77)"``); an AOTAutograd
entry also stores the Dynamo source of each flat input
(``aot_autograd_arg_pos_to_source``), which says where the symbol comes from in
the user's call (``L['x'].size()[0]``). FX entries store no sources; they are
found through the AOTAutograd entries that load them, by symbol name (symbol
names are part of the FX key, so they agree within one key).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.decode.entries import DecodedEntry

_NUMBER_RE = re.compile(r"-?[0-9]{1,19}")
"""A SymInt input's expression that is a number: specialized while tracing."""


@dataclass(frozen=True)
class SymbolInfo:
    """One guard placeholder and what it stands for.

    Attributes:
        placeholder: ``t0``, ``t1``, ...
        expr: the SymInt's expression, usually a symbol (``s77``); None if the
            entry's graph inputs could not be read.
        source: the Dynamo source (``L['x'].size()[0]``), None where unknown.
        hint: the symbol's value when the entry was compiled, None where unknown.
    """

    placeholder: str
    expr: str | None
    source: str | None
    hint: int | None

    def to_json(self) -> dict[str, object]:
        return {"symbol": self.expr, "source": self.source, "hint": self.hint}


def symbol_table(
    entry: DecodedEntry,
    sources_by_symbol: Mapping[str, str] | None = None,
    hints: Mapping[str, int] | None = None,
) -> tuple[SymbolInfo, ...]:
    """The ``tN`` placeholders of an entry, in order.

    Args:
        entry: the decoded entry.
        sources_by_symbol: symbol -> source learnt elsewhere (for FX entries,
            from the AOTAutograd entries that load them); the entry's own
            sources win.
        hints: symbol -> hint learnt elsewhere; the entry's own hints win.

    One row per backed SymInt input, in order. A guards expression naming
    ``tN`` beyond these rows makes torch's ``eval`` raise ``KeyError``;
    :mod:`fxcache_core.lookup.match` reports that as an error outcome.
    """
    own_hints = dict(hints or {})
    own_hints.update(dict(entry.hints))
    rows = []
    for n, inp in enumerate(entry.symints):
        src = inp.source or (sources_by_symbol or {}).get(inp.expr or "")
        hint = own_hints.get(inp.expr or "")
        if hint is None and inp.expr is not None and _NUMBER_RE.fullmatch(inp.expr.strip()):
            # A SymInt ShapeEnv specialized while tracing (``Sym(1)``): still an input torch
            # passes to the guards as tN (a backed SymInt), its value the number itself.
            hint = int(inp.expr)
        rows.append(SymbolInfo(f"t{n}", inp.expr, src, hint))
    return tuple(rows)
