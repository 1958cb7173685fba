"""What a rule found of one read of a parameter and of the value the call gives it: a
read in the source (:class:`FloatUse`) and what the value does to one key's graph
(:class:`Provenance`), shared by the rules that read constants off a key's ops
(:mod:`~fxcache_core.lookup.float_exprs`, :mod:`~fxcache_core.lookup.fn_op_args`,
:mod:`~fxcache_core.lookup.op_consts`, :mod:`~fxcache_core.lookup.kept_slices`).
Never imports torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fxcache_core.reasons import Reason

__all__ = ["FloatUse", "Provenance", "unknown_provenance"]


@dataclass(frozen=True, slots=True)
class FloatUse:
    """One read of the parameter in the function's source.

    Attributes:
        line, last: the first and last line of the statement that reads it.
        expr: the pure arithmetic expression around the read (``-lr``, ``2 * lim``;
            ``lr`` itself when it is used as it is), as ``ast.unparse`` writes it.
        ops: the aten ops (their names' stems: ``mul``, ``clamp``) whose scalar argument
            the expression's value is; empty for an opaque read.
        opaque: why its value is not one op's constant (``passed to _apply_scale()``),
            None for a value read.
        loop: the statement is in a loop's body (its ops may be traced once per pass).
        text: the expression as the statement writes it (``-lr / bias``), where ``expr``
            has the pure locals it reads replaced by their expressions.
    """

    line: int
    last: int
    expr: str
    ops: frozenset[str] = frozenset()
    opaque: str | None = None
    loop: bool = False
    text: str = ""


@dataclass(frozen=True, slots=True)
class Provenance:
    """What the call's value of a specialized float does to one key's graph.

    Attributes:
        status: ``unread`` (the function never reads it: every value traces this
            graph), ``same`` (every expression of it gives this graph's constants),
            ``differs`` (some gives another constant: another graph), ``unknown``.
        why: in words, naming the parameter, the expression and its line (None for
            ``unread``); its code: ``float-constant-differs``,
            ``float-provenance-unknown``, ``float-constant-same``.
        uses: the reads found.
    """

    status: Literal["unread", "same", "differs", "unknown"]
    why: Reason | None = None
    uses: tuple[FloatUse, ...] = ()


def unknown_provenance(param: str, line: int, why: str, *, code: str, via: str = "") -> Provenance:
    """An ``unknown`` :class:`Provenance`: ``param`` reaches the key's graph at ``line``
    (``via``: how, as words put before "at line", e.g. " as an argument of a torch
    function"), but ``why`` (words) keeps fxcache from telling which value it had when the
    key was traced; ``code`` is the reason code."""
    return Provenance(
        "unknown",
        Reason(
            f"{param} reaches this key's graph{via} at line {line}, but {why}: fxcache cannot tell which value "
            "it had when the key was traced",
            code,
        ),
    )
