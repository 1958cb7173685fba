"""Former home of guard analysis and display, kept importable by name.

Moved: :func:`summarize`, :class:`SymbolRange`, :class:`Divisibility`,
:class:`GuardSummary` to :mod:`fxcache_core.guards.summary` (analysis);
:func:`display_expr`, :func:`render`, :func:`expr_tree`,
:func:`compare_entries`, :func:`symbol_names` to
:mod:`fxcache_core.guards.display`. Nothing is defined here.
"""

# moved to guards.summary / guards.display; callers outside guards/ move at merge
from fxcache_core.guards.display import (  # noqa: F401
    MAX_SHOWN_CLAUSES,
    EntryComparison,
    compare_entries,
    display_expr,
    expr_tree,
    render,
    symbol_names,
)
from fxcache_core.guards.summary import (  # noqa: F401
    Divisibility,
    GuardSummary,
    SymbolRange,
    summarize,
)
