"""What a Dynamo source (``L['x'].size()[0]``, ``L['n']``, ``L['xs'][1]``) reads off the call's
inputs, and the checks on the values a key's symbols take. Never imports torch."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fxcache_core.decode.symbols import SymbolInfo
from fxcache_core.errors import ShapeSpecError, param
from fxcache_core.guards.user_terms import user_source
from fxcache_core.lookup.binding import InputValue, TensorArg
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.reasons import Reason

if TYPE_CHECKING:
    from fxcache_core.functions.frames import CompiledFrom

LOCAL_RE = re.compile(r"L\['(\w+)'\]")
"""A frame local's source as guards write it (``L['mask']``; ``fullmatch``: its name is group 1)."""
_PROP_RE = re.compile(r"^(?P<base>.+?)(?:\.size\(\)\[(?P<size>[0-9]+)\]|\.stride\(\)\[(?P<stride>[0-9]+)\]"
                      r"|(?P<offset>\.storage_offset\(\)))?$")


@dataclass(frozen=True, slots=True)
class SourceValue:
    """The value a source takes under the user's inputs.

    ``value`` is None when the source's input was not given (``unbound``) or
    does not fit (``problem`` says why, e.g. a tensor has fewer dims:
    ``rank-differs``, ``wrong-input-type``).
    """

    value: int | None
    base: str
    problem: Reason | None = None


def value_of(source: str, inputs: Mapping[str, InputValue]) -> SourceValue:
    """Read ``source`` (``L['x'].size()[0]``, ``L['n']``, ...) off the inputs."""
    m = _prop_parts(source)
    base = m["base"] if m else source
    val = inputs.get(base)
    if val is None:
        val = _tuple_item(base, inputs)
    if val is None:
        return SourceValue(None, base, _beyond_tuple(base, inputs))
    if isinstance(val, PyValue):
        return SourceValue(None, base, Reason(f"{base} is the Python {val.kind} {val}, the entry takes it "
                                              "as a tensor or an int", "wrong-input-type"))
    for prop, each in (("size", "dim"), ("stride", "stride")):
        if m and m[prop] is not None:
            if not isinstance(val, TensorArg):
                return SourceValue(None, base, Reason(f"{base} is an int, the entry reads its {prop}",
                                                      "wrong-input-type"))
            i = int(m[prop])
            if i >= len(val.shape):
                return SourceValue(None, base, Reason(f"{base} has {len(val.shape)} dims, the entry reads {each} {i}",
                                                      "rank-differs"))
            return SourceValue(val.shape[i] if prop == "size" else val.strides()[i], base)
    if m and m["offset"]:
        if not isinstance(val, TensorArg):
            return SourceValue(None, base, Reason(f"{base} is an int, the entry reads its storage offset", "wrong-input-type"))
        return SourceValue(val.storage_offset, base)
    if isinstance(val, TensorArg):
        return SourceValue(None, base, Reason(f"{base} is a tensor, the entry needs it as an int", "wrong-input-type"))
    if isinstance(val, float):
        return SourceValue(None, base, Reason(f"{base} is a float, the entry takes it as an int (a SymInt)", "wrong-input-type"))
    return SourceValue(val, base)


_ITEM_RE = re.compile(r"^(?P<parent>.+)\[(?P<i>[0-9]{1,4})\]$")


def _item_of_tuple(base: str, inputs: Mapping[str, InputValue]) -> tuple[tuple, int, str] | None:
    """For ``base`` = ``L['dims'][1]``: the tuple the call gives for ``L['dims']`` (whole,
    or as an item of a tuple given), the index asked (1) and the parent source; None when
    ``base`` names no item or no tuple is given there. The index may be past its end."""
    m = _item_parts(base)
    if m is None:
        return None
    parent = inputs.get(m[0])
    if parent is None:
        parent = _tuple_item(m[0], inputs)
    if not isinstance(parent, PyValue) or not isinstance(parent.value, tuple):
        return None
    return parent.value, m[1], m[0]


def source_base(source: str) -> str:
    """The input ``source`` reads a property of (``L['x']`` of ``L['x'].size()[0]``): the
    base :func:`value_of` reads off the inputs."""
    m = _prop_parts(source)
    return m["base"] if m else source


@functools.lru_cache(maxsize=8192)
def _prop_parts(source: str) -> dict[str, str | None] | None:
    """:data:`_PROP_RE`'s groups of ``source`` (keys of a model share their sources, and
    ``match`` reads each for every key: remembered; callers never change it)."""
    m = _PROP_RE.match(source)
    return m.groupdict() if m else None


@functools.lru_cache(maxsize=8192)
def _item_parts(base: str) -> tuple[str, int] | None:
    """The parent source and index of an item source (``L['dims'][1]``), remembered."""
    m = _ITEM_RE.match(base)
    return (m.group("parent"), int(m.group("i"))) if m else None


def _tuple_item(base: str, inputs: Mapping[str, InputValue]) -> InputValue | None:
    """``L['dims'][1]`` read off a tuple given as ``dims=(2,3)``: its int or float item
    as such, another item as a :class:`~fxcache_core.lookup.pyvalues.PyValue`; None when
    no tuple given holds it."""
    found = _item_of_tuple(base, inputs)
    if found is None or found[1] >= len(found[0]):
        return None
    item = found[0][found[1]]
    if isinstance(item, (int, float)) and not isinstance(item, bool):
        return item
    return PyValue(item)


def _beyond_tuple(base: str, inputs: Mapping[str, InputValue]) -> Reason | None:
    """Where ``base`` (``L['shape'][1]``) is an item past the end of a tuple the call gives
    whole (``shape=(24,)``): the key, which takes an input from that item, was traced with
    a longer tuple, and no trace of this call has that input (Dynamo guards a tuple's
    length, and an item that is not there is no input): torch traces another graph. None
    elsewhere (no such tuple, or the item is in it)."""
    found = _item_of_tuple(base, inputs)
    if found is None or found[1] < len(found[0]):
        return None
    n = len(found[0])
    name = user_source(found[2])
    return Reason(f"{name} is a tuple of {n} item{'s' if n != 1 else ''} here, and this key takes an input from "
                  f"{user_source(base)}: it was traced with a longer tuple (Dynamo guards a tuple's length), so "
                  "torch traces another graph", "sequence-shorter")


def is_size_source(source: str | None) -> bool:
    """Whether a placeholder's source is a size, stride or storage offset of a
    tensor (never negative); False for an int argument (``L['n']``, which may be)
    and for an unknown source (it may be either)."""
    return source is not None and (".size()[" in source or ".stride()[" in source
                                   or source.endswith(".storage_offset()"))


def check_signs(values: Mapping[str, int], symbols: Sequence[SymbolInfo], name: str) -> None:
    """A negative value for a placeholder or symbol whose source is a size, stride or
    storage offset (:func:`is_size_source`) is a usage error: no call gives one.
    Where the source is unknown the value is taken as given (it may be an int argument).

    Raises:
        ShapeSpecError: naming parameter ``name`` (``sym``, ``range``), the
            placeholder and what it is.
    """

    for ph, v in values.items():
        info = next((s for s in symbols if ph in (s.placeholder, s.expr)), None)
        if v < 0 and info is not None and is_size_source(info.source):
            raise ShapeSpecError(f"{param(name)} {ph}={v}: {ph} is {user_source(info.source or '')}, "
                                 "which is never negative", param=name, value=f"{ph}={v}")


def param_sources(name: str, frame: CompiledFrom | None) -> tuple[str, ...]:
    """The sources a parameter's value has in a key: ``L['clip']``, and for a module
    compiled whole ``L['kwargs']['clip']`` and ``L['args'][i]`` (``i`` its position among
    ``frame``'s parameters, where the frame is known)."""
    out = [f"L[{name!r}]", f"L['kwargs'][{name!r}]"]
    if frame is not None and name in frame.params:
        out.append(f"L['args'][{frame.params.index(name)}]")
    return tuple(out)


def is_param(src: str, params: Sequence[str], keywords: Sequence[str] = ()) -> bool:
    """Whether the user's ``src`` (``L['t']``, ``L['args'][1]``, ``L['kwargs']['t']``) is a
    parameter of a frame whose positional parameters are ``params`` and keyword-only ones
    ``keywords`` (a closure's or a global's tensor, a model's weights, is none)."""
    if (m := LOCAL_RE.fullmatch(src)) is not None:
        return m.group(1) in params or m.group(1) in keywords
    if (m := re.fullmatch(r"L\['args'\]\[([0-9]+)\]", src)) is not None:
        return int(m.group(1)) < len(params)
    m = re.fullmatch(r"L\['kwargs'\]\['(\w+)'\]", src)
    return m is not None and (m.group(1) in params or m.group(1) in keywords)
