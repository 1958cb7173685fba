"""Dynamo ``Source`` objects, as stubbed by the unpickler, to guard-style names.

An AOTAutograd entry records where each graph input came from as a Dynamo
``Source`` (``aot_autograd_arg_pos_to_source``). :func:`source_name` gives its
name as torch prints it in guards (``L['x'].size()[0]``).

Mirrors torch/_dynamo/source.py, where each ``Source`` class has its own
``_name_template``: here each class has its own small function, in
:data:`ROOT_SOURCES` (sources with no base: locals, globals) and
:data:`CHAINED_SOURCES` (sources over a ``base`` source, given the base's
name). A class in neither table has no name (None, never a guess). Reads
only the fields the pickle recorded; never imports torch, never calls
anything from the pickle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fxcache_core.decode.unpickler import Stub

__all__ = ["CHAINED_SOURCES", "ROOT_SOURCES", "source_name", "source_names"]

# Dynamo sources are frozen dataclasses pickled as ``cls(*fields)`` (REDUCE with
# positional args: ``dataclass_with_cached_hash.__reduce__`` in torch/_guards.py),
# so their fields are read by position. Field order as in torch/_dynamo/source.py
# (2.13 to 2.15; 2.14 added ContextVarGetSource and UnwrapCollectiveTensorSource,
# 2.15 ListReverseIteratorBackingListSource); ``base`` comes first in chained sources.
_SOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "LocalSource": (
        "local_name",
        "is_input",
        "dynamism",
        "is_derefed_cell_contents",
        "is_varargs",
        "is_varkw",
    ),
    "GlobalSource": ("global_name",),
    "GlobalWeakRefSource": ("global_name",),
    "AttrSource": ("base", "member"),
    "ParamBufferSource": ("base", "member"),
    "UnspecializedParamBufferSource": ("base", "member"),
    "CellContentsSource": ("base", "member", "freevar_name"),
    "GradSource": ("base", "member"),
    "TensorPropertySource": ("base", "prop", "idx"),
    "GetItemSource": ("base", "index", "index_is_slice"),
    "DictGetItemSource": ("base", "index"),
    "DictSubclassGetItemSource": ("base", "index"),
    "ListGetItemSource": ("base", "index", "index_is_slice"),
    "ConstDictKeySource": ("base", "index"),
    "NNModuleSource": ("base",),
    "UnspecializedNNModuleSource": ("base",),
    "UnspecializedBuiltinNNModuleSource": ("base",),
    "FSDPNNModuleSource": ("base",),
    "NegateSource": ("base",),
    "ConvertIntSource": ("base",),
    "DynamicScalarSource": ("base", "is_int"),
    "IndexedSource": ("base", "idx"),
    "FloatTensorSource": ("base",),
    "CallMethodItemSource": ("base",),
    "ContextVarGetSource": ("base", "has_default", "default_value"),
    "UnwrapCollectiveTensorSource": ("base",),
    "ListReverseIteratorBackingListSource": ("base",),
}


def _is_literal(v: Any, depth: int = 0) -> bool:
    """A constant whose ``repr`` is what torch prints for it (str, int, tuples of those...)."""
    if isinstance(v, (str, int, float, bool, type(None))):
        return True
    return isinstance(v, tuple) and depth < 5 and all(_is_literal(x, depth + 1) for x in v)


_FIELD_AT: dict[str, dict[str, int]] = {
    cls: {f: i for i, f in enumerate(fields)} for cls, fields in _SOURCE_FIELDS.items()
}
"""Source class -> field -> its position in the constructor's arguments."""
_NO_FIELDS: dict[str, int] = {}


def _sfield(src: Stub, name: str) -> Any:
    """A source's field: from its positional constructor args, else its state."""
    i = _FIELD_AT.get(src.stub_name, _NO_FIELDS).get(name)
    if i is not None and i < len(src._args):
        return src._args[i]
    return src.field(name)


MAX_SOURCE_DEPTH = 100
"""Deepest chain of sources named (a hostile pickle can nest them without end)."""


# --- sources with no base ----------------------------------------------------------


def _local(src: Stub) -> str | None:
    name = _sfield(src, "local_name")
    return f"L[{name!r}]" if isinstance(name, str) else None


def _global(src: Stub) -> str | None:
    name = _sfield(src, "global_name")
    return f"G[{name!r}]" if isinstance(name, str) else None


def _global_weak_ref(src: Stub) -> str | None:
    name = _sfield(src, "global_name")
    return f"G[{name!r}]()" if isinstance(name, str) else None


ROOT_SOURCES: dict[str, Callable[[Stub], str | None]] = {
    "LocalSource": _local,
    "GlobalSource": _global,
    "GlobalWeakRefSource": _global_weak_ref,
}
"""Source class -> its name, for sources with no base."""


# --- sources over a base: (source, the base's name, depth, namer) -> name ------------

_NameOf = Callable[[Any, int], "str | None"]
"""How a chained source names another source it holds (``(source, depth) -> name``)."""
_Chained = Callable[[Stub, str, int, _NameOf], "str | None"]


def _attr(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    member = _sfield(src, "member")
    if not isinstance(member, str):
        return None
    if member.isidentifier():
        return f"{base}.{member}"
    return f"getattr({base}, {member!r})"


def _grad(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    member = _sfield(src, "member")
    return f"{base}.{member}" if isinstance(member, str) else None


_TENSOR_PROPERTIES = ((0, "size()[{idx}]"), (1, "stride()[{idx}]"), (2, "storage_offset()"))
"""``TensorProperty`` codes (SIZE, STRIDE, STORAGE_OFFSET in source.py) and their templates."""


def _tensor_property(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    prop = _sfield(src, "prop")
    code = prop._args[0] if isinstance(prop, Stub) and prop._args else None
    for value, template in _TENSOR_PROPERTIES:
        if code == value:
            return f"{base}." + template.format(idx=_sfield(src, "idx"))
    return None


def _get_item(
    src: Stub, base: str, depth: int, name_of: _NameOf, through_dict: bool = False
) -> str | None:
    index = _sfield(src, "index")
    if isinstance(index, Stub) and index.stub_name == "ConstDictKeySource":
        inner = name_of(_sfield(index, "base"), depth + 1)
        if inner is None:
            return None
        key = f"list(dict.keys({inner}))[{_sfield(index, 'index')!r}]"
        if through_dict:
            return f"dict.__getitem__({base}, {key})"
        return f"{base}[{key}]"
    if _sfield(src, "index_is_slice"):
        # Stored as slice.__reduce__(): (slice, (start, stop, step)); torch prints repr(slice).
        if (
            isinstance(index, (list, tuple))
            and len(index) == 2
            and isinstance(index[1], (list, tuple))
            and len(index[1]) == 3
            and all(v is None or isinstance(v, int) for v in index[1])
        ):
            a, b, c = index[1]
            return f"{base}[slice({a!r}, {b!r}, {c!r})]"
        return None
    if _is_literal(index):
        return f"{base}[{index!r}]"
    return None


def _dict_subclass_get_item(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    return _get_item(src, base, depth, name_of, through_dict=True)


def _list_get_item(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    index = _sfield(src, "index")
    return f"list.__getitem__({base}, {index!r})" if isinstance(index, (int, str)) else None


def _same(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    return base


def _template(template: str) -> _Chained:
    """A source named by a fixed template over its base's name (``{base}.item()``)."""

    def name(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
        return template.format(base=base)

    return name


def _indexed(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    return f"({_sfield(src, 'idx')}, {base})"


def _context_var_get(src: Stub, base: str, depth: int, name_of: _NameOf) -> str | None:
    if not _sfield(src, "has_default"):
        return f"{base}.get()"
    default = _sfield(src, "default_value")
    return f"{base}.get({default!r})" if _is_literal(default) else None


CHAINED_SOURCES: dict[str, _Chained] = {
    "AttrSource": _attr,
    "ParamBufferSource": _attr,
    "UnspecializedParamBufferSource": _attr,
    "CellContentsSource": _attr,
    "GradSource": _grad,
    "TensorPropertySource": _tensor_property,
    "GetItemSource": _get_item,
    "DictGetItemSource": _get_item,
    "DictSubclassGetItemSource": _dict_subclass_get_item,
    "ListGetItemSource": _list_get_item,
    "NNModuleSource": _same,
    "UnspecializedNNModuleSource": _same,
    "UnspecializedBuiltinNNModuleSource": _same,
    "FSDPNNModuleSource": _same,
    "NegateSource": _template("{base}.__neg__()"),
    "ConvertIntSource": _template("cast_symbool_to_symint_guardless({base})"),
    "DynamicScalarSource": _template("int({base})"),
    "FloatTensorSource": _template("___as_tensor({base})"),  # a tensorified float (wrap_symfloat)
    "CallMethodItemSource": _template("{base}.item()"),
    "IndexedSource": _indexed,
    "ContextVarGetSource": _context_var_get,
    "UnwrapCollectiveTensorSource": _template("___unwrap_async_collective_tensor({base})"),
    "ListReverseIteratorBackingListSource": _template(
        "___list_reverseiterator_backing_list({base})"
    ),
}
"""Source class -> its name given its base's name, for sources over a ``base`` (and
how to name another source it holds, at a depth: a ``ConstDictKeySource`` index)."""


def source_name(src: Any, depth: int = 0) -> str | None:
    """The guard-style name of a stubbed Dynamo ``Source``: ``L['x'].size()[0]``.

    Mirrors the ``_name_template`` properties in torch/_dynamo/source.py for
    the sources that reach AOTAutograd inputs (:data:`ROOT_SOURCES`,
    :data:`CHAINED_SOURCES`); None for a class it does not know, or a chain
    deeper than :data:`MAX_SOURCE_DEPTH` (never a guess).
    """
    return _Namer().name(src, depth)


def source_names(srcs: list[Any]) -> tuple[str | None, ...]:
    """:func:`source_name` of each of ``srcs`` (an entry's
    ``aot_autograd_arg_pos_to_source``), each source object named once: the sources of
    a module's parameters share their bases (``L['self'].encoder.layers[3]``) as one
    unpickled object, so a model's inputs name some 160 sources where naming each
    input's chain whole would name 900."""
    namer = _Namer()
    return tuple(namer.name(s, 0) for s in srcs)


_MEMO_NAME_MAX = 512
"""Longest name a :class:`_Namer` remembers: a longer one is named again where it is met
(a hostile chain of long members would otherwise keep every prefix of its name)."""


class _Namer:
    """Names sources, remembering the name of each source object named in one read
    (by identity; the memo holds the object, so its id stays its own) with how deep
    below it naming it went, so that a source met again at another depth is named
    exactly as naming it anew would (None where that passes :data:`MAX_SOURCE_DEPTH`)."""

    __slots__ = ("deepest", "memo")

    def __init__(self) -> None:
        # id -> the source (kept alive by it), its name, how deep below it naming it went
        self.memo: dict[int, tuple[Stub, str, int]] = {}
        self.deepest = 0  # the deepest depth a name was asked at, in the naming under way

    def name(self, src: Any, depth: int) -> str | None:
        if depth > self.deepest:
            self.deepest = depth
        if depth > MAX_SOURCE_DEPTH or not isinstance(src, Stub):
            return None
        got = self.memo.get(id(src))
        if got is not None and got[0] is src:
            _, name, below = got
            if depth + below > self.deepest:
                self.deepest = depth + below
            return name if depth + below <= MAX_SOURCE_DEPTH else None
        root = ROOT_SOURCES.get(src.stub_name)
        if root is not None:
            name = root(src)
            if name is not None and len(name) <= _MEMO_NAME_MAX:
                self.memo[id(src)] = (src, name, 0)
            return name
        chained = CHAINED_SOURCES.get(src.stub_name)
        if chained is None:
            return None
        outside, self.deepest = self.deepest, depth
        base = self.name(_sfield(src, "base"), depth + 1)
        name = None if base is None else chained(src, base, depth, self.name)
        below = self.deepest - depth
        if outside > self.deepest:
            self.deepest = outside
        if name is not None and len(name) <= _MEMO_NAME_MAX:
            self.memo[id(src)] = (src, name, below)
        return name
