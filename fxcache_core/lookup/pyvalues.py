"""The Python values of a call other than tensors, ints and floats: bools, None,
strings and tuples. Dynamo specializes on each of them.

``VariableBuilder`` (torch/_dynamo/variables/builder.py) wraps a bool, None or str
argument the code reads as a constant and guards its value (``L['clip'] == True``,
``L['act'] == 'gelu'``, ``L['mask'] is None``: ``TRUE_MATCH``, ``EQUALS_MATCH``,
``NONE_MATCH`` in torch/_dynamo/guards.py); a tuple by its type, length and each
element. The graph holds what the value made the code do, never the value, and the
guards are not in the cache: which value a key was traced with is read from
evidence (:mod:`fxcache_core.lookup.accounting`).

:class:`PyValue` holds one such value; :func:`parse_value` reads one from the
user's words (``True``, ``None``, ``'gelu'``, ``"gelu"``, a bare word ``gelu``,
``(2,3)``) with :func:`ast.literal_eval` (the user's input, never cache content);
:class:`TorchDtype` is a ``torch.dtype`` argument (``torch.float16``), which Dynamo
specializes the same way (a constant of the graph, its value guarded);
:func:`same_value` compares two as one value to torch's cache (``True`` is not ``1``;
a float as a graph prints it: ``-0.0`` is not ``0.0``).
Ints and floats stay plain Python numbers (Dynamo may make them symbolic:
:mod:`fxcache_core.lookup.int_args`, :mod:`fxcache_core.lookup.floats`). Never
imports torch.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_VALUE_CHARS = 1000
"""A value longer than this (characters as typed) is refused before it is parsed."""
MAX_TUPLE_ITEMS = 64
MAX_DEPTH = 4

_WORD_RE = re.compile(r"[A-Za-z_][\w.\-]*")
_NUMBER_WORDS = frozenset({"inf", "nan", "Infinity", "NaN"})


@dataclass(frozen=True, slots=True)
class TorchDtype:
    """A ``torch.dtype`` argument of a call (``torch.float16``): Dynamo passes it to the
    graph as a constant and guards its value. Written and shown as ``torch.NAME``.

    Attributes:
        name: torch's name of the dtype (``float16``, never an alias such as ``half``:
            :func:`fxcache_core.lookup.binding.parse_dtype`).
    """

    name: str

    def __repr__(self) -> str:
        return f"torch.{self.name}"


@dataclass(frozen=True, slots=True)
class PyValue:
    """A bool, None, str, tuple or ``torch.dtype`` (:class:`TorchDtype`) argument of a
    call (a tuple may hold ints, floats and these, nested).

    Attributes:
        value: the Python value (``True``, ``None``, ``'gelu'``, ``(2, 3)``).
    """

    value: object

    def __str__(self) -> str:
        return text_of(self.value)

    @property
    def kind(self) -> str:
        """``bool``, ``None``, ``str`` or ``tuple``: how a message names its type."""
        return kind_of(self.value)


def kind_of(value: object) -> str:
    """A Python value's type as a message names it: ``bool``, ``None``, ``str``,
    ``tuple``, ``int``, ``float``, ``torch.dtype`` (``other`` for anything else)."""
    if value is None:
        return "None"
    if isinstance(value, TorchDtype):
        return "torch.dtype"
    for t in (bool, int, float, str, tuple):
        if isinstance(value, t):
            return t.__name__
    return "other"


def text_of(value: object) -> str:
    """A value as the user writes it: ``True``, ``None``, ``'gelu'``, ``(2, 3)``, ``0.5``."""
    return repr(value)


def same_value(a: object, b: object) -> bool:
    """Whether two Python values are one value to torch's cache: same type (``True`` is
    not ``1``, ``1`` is not ``1.0``), tuples element by element, and a float as a key's
    printed graph holds it, which is what the key hashes (``FxGraphCachePickler``
    pickles the graph module's code, torch/_inductor/codecache.py): ``repr``, so
    ``-0.0`` is not ``0.0`` (Dynamo's guard ``L['lo'] == 0.0`` lets ``-0.0`` pass, but a
    fresh process traces ``clamp_min(x, -0.0)``: another key), and every nan is one
    (``nan``, FX's builtin, as Dynamo's nan guard ``__math_isnan`` holds for any)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def _checked(v: object, depth: int = 0) -> bool:
    if v is None or isinstance(v, (bool, int, float, str)):
        return not (isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63)
    if isinstance(v, tuple):
        return depth < MAX_DEPTH and len(v) <= MAX_TUPLE_ITEMS and all(_checked(x, depth + 1) for x in v)
    return False


def parse_value(text: str) -> PyValue | None:
    """The Python value the user's ``text`` writes, or None when it writes none of them.

    ``True``/``False``, ``None``, a quoted string (``'gelu'``, ``"gelu"``), a tuple of
    Python values (``(2,3)``, ``('a', None)``, ``(4,)``), or a bare word that is no
    other literal (``gelu``: the string ``'gelu'``; ``inf`` and ``nan`` are floats, and
    are not read here). Read with :func:`ast.literal_eval`, never run; at most
    :data:`MAX_VALUE_CHARS` characters, :data:`MAX_TUPLE_ITEMS` items a tuple,
    :data:`MAX_DEPTH` tuples deep, ints within int64.
    """
    t = text.strip()
    if not t or len(t) > MAX_VALUE_CHARS:
        return None
    if _WORD_RE.fullmatch(t) and t not in ("True", "False", "None") and t not in _NUMBER_WORDS:
        return PyValue(t)
    if t in ("True", "False", "None") or t[0] in "'\"(":
        try:
            v = ast.literal_eval(t)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
        if isinstance(v, (bool, str, tuple)) or v is None:
            return PyValue(v) if _checked(v) else None
    return None


__all__ = ["PyValue", "TorchDtype", "kind_of", "parse_value", "same_value", "text_of"]
