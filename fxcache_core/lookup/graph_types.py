"""What a key's graph prints about its inputs: tensor placeholder types
(``f32[s77, 4][4, 1]cpu``) and the sympy size expressions in them (``2*s17``).

The key's side of a binding (:mod:`fxcache_core.lookup.binding` is the call's side).
Values only: never decodes an entry, never imports torch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.lookup.binding import dtype_of_abbr

_TENSOR_TYPE_RE = re.compile(r"^(?P<dtype>[a-z0-9]+)\[(?P<sizes>[^\]]*)\]\[(?P<strides>[^\]]*)\](?P<device>\w*)")


@dataclass(frozen=True, slots=True)
class TensorType:
    """A tensor placeholder type as FX prints it: ``f32[s77, 4][4, 1]cpu``.

    ``sizes``/``strides`` are strings per dim: an int literal (static) or a
    sympy expression (``s77``, ``2*s17``).
    """

    dtype: str
    sizes: tuple[str, ...]
    strides: tuple[str, ...]
    device: str

    @classmethod
    def parse(cls, text: str) -> TensorType | None:
        """Parse a printed tensor type; None for anything else (``Sym(s0)``...)."""
        m = _TENSOR_TYPE_RE.match(text)
        if not m:
            return None

        def dims(s: str) -> tuple[str, ...]:
            return tuple(d.strip() for d in s.split(",")) if s.strip() else ()

        return cls(m.group("dtype"), dims(m.group("sizes")), dims(m.group("strides")),
                   m.group("device"))

    @property
    def dtype_name(self) -> str | None:
        """Torch's name of the printed dtype (``b8`` -> ``bool``), None when unknown."""
        return dtype_of_abbr(self.dtype)


_SYM_TOKEN_RE = re.compile(r"\b([a-z]+[0-9]+)\b")


def eval_symbolic(expr: str, symbols: Mapping[str, int]) -> int | None:
    """The integer value of a printed sympy size expression (``2*s17``, ``(s77//4)``).

    Parsed and evaluated by :mod:`fxcache_core.guards.expr` (``ast`` whitelist, no
    ``eval``). None when a symbol has no value, the expression uses something
    outside the guards grammar (``Max``, ``CeilToInt``...), or it is not an int.
    """
    from fxcache_core.errors import GuardParseError
    from fxcache_core.guards.expr import parse_guards

    names: dict[str, str] = {}

    def sub(m: re.Match[str]) -> str:
        return f"L['t{names.setdefault(m.group(1), str(len(names)))}']"

    text = _SYM_TOKEN_RE.sub(sub, expr)
    if not all(n in symbols for n in names):
        return None
    try:
        (clause,) = parse_guards(text).clauses
    except (GuardParseError, ValueError):
        return None
    r = clause.evaluate({f"t{i}": symbols[n] for n, i in names.items()})
    v = r.value
    return v if r.status in ("pass", "fail") and type(v) is int else None


__all__ = ["TensorType", "eval_symbolic"]

