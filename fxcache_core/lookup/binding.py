"""How the shapes a user names bind to the symbols of an entry.

A user describes a call by its inputs: ``x=[16,4]`` (a tensor of that shape,
contiguous), ``x=[16,4]:stride=[1,16]``, ``n=7`` (an int argument),
``xs[0]=[3,4]`` (an element of a list argument),
``x=[6,6]:mark_dynamic=[0,1]`` (dims marked dynamic; ``:min=2:max=16`` gives their
range, one for every marked dim or a list, one per dim), ``x=[6,3]:mark_static=[0]``
(dims marked static), ``mask=[2,8]:dtype=bool``
(a dtype, by torch's name; without it a verdict assumes the key's, and says so),
``w=[8,8]:requires_grad=True`` (whether it requires grad; without it, as when the key
was compiled), ``w=[8,8]:param`` (an ``nn.Parameter``, which requires grad unless
``:requires_grad=False`` says otherwise; ``:param=False``, a plain tensor; without it, as
when the key was compiled), ``t=[]`` (a 0-d tensor), ``t=10.0`` (a Python float), and the other Python
values Dynamo specializes on (:mod:`fxcache_core.lookup.pyvalues`): ``clip=True``,
``mask=None``, ``act='gelu'`` (or ``act=gelu``), ``dims=(2,3)``, and a
``torch.dtype``, ``dtype=torch.float16``; ``b=@a`` says the call passes for ``b`` the very
tensor it passes for ``a`` (one tensor for two parameters, which Dynamo takes as one graph
input). Each name is the
Dynamo source of a local (``x`` means ``L['x']``); a full source (``G['net']...``)
is taken as written. A guard placeholder's source (``L['x'].size()[0]``) is
then read off these values. ``torch.is_grad_enabled()=False`` is no input but the
grad mode the call runs under (:data:`GRAD_MODE`; without it, as when the key was
compiled).

Which graph Dynamo traces for a call also depends on how each dim is made
symbolic, which the cache does not record: :class:`DynamicMode` (the
``dynamic=`` given to ``torch.compile``) and the dims a tensor has marked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from fxcache_core.errors import ShapeSpecError, param
from fxcache_core.lookup.input_names import canonical_source, item_path, not_whole_and_items
from fxcache_core.lookup.pyvalues import PyValue, TorchDtype, parse_value
from fxcache_core.lookup.same_tensors import SameAs, same_tensors, user_name


class DynamicMode(Enum):
    """How ``torch.compile(fn, dynamic=...)`` makes a call's sizes symbolic.

    Mirrors ``_automatic_dynamic`` in torch/_dynamo/variables/builder.py and
    ``ShapeEnv.create_symbol`` in torch/fx/experimental/symbolic_shapes.py, for
    a fresh process's first call of the function (before any recompile):

    * ``TRUE`` (``dynamic=True``): an unmarked dim is ``DimDynamic.DUCK``:
      symbolic, and equal sizes share one symbol (duck sizing);
    * ``NONE`` (the default, automatic dynamic) and ``FALSE``: an unmarked dim
      is static; automatic dynamic only makes a dim symbolic when a later call
      in the same process changes it;
    * in every mode a dim marked dynamic (``torch._dynamo.mark_dynamic``, or
      one propagated from a compiled graph's output) is ``DimDynamic.DYNAMIC``:
      symbolic, with a symbol of its own (never duck-sized);
    * in every mode a dim marked static (``torch._dynamo.mark_static``), not marked
      dynamic (which wins), is ``DimDynamic.STATIC``, whatever automatic dynamic says;
    * ``UNKNOWN``: not said. The cache does not record it (``dynamic=True``
      and ``mark_dynamic`` on every dim give the same key and entry), so what
      depends on it is reported as undecided.

    Parameters and buffers (``._parameters[...]``, ``._buffers[...]``) are
    static in every mode (``force_parameter_static_shapes``).
    """

    TRUE = "true"
    NONE = "none"
    FALSE = "false"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class TensorArg:
    """A tensor input as far as shapes go.

    Attributes:
        shape: sizes per dim.
        stride: strides per dim (elements); None means contiguous.
        storage_offset: elements.
        marked: dims marked dynamic (``torch._dynamo.mark_dynamic(x, dim)``,
            or propagated from a compiled graph's output): see :class:`DynamicMode`.
        dtype: torch's name of the dtype (``float32``, ``bool``: :func:`parse_dtype`);
            None when not said (a verdict then assumes the key's, and says so).
        ranges: (dim, min, max) for each marked dim given a range
            (``mark_dynamic(x, dim, min=..., max=...)``; None: that bound not given);
            () when marked without one.
        static: dims marked static (``torch._dynamo.mark_static``), none in ``marked``.
        requires_grad: whether the tensor requires grad; None when not said (a verdict
            then takes it to be as when the key was compiled).
        param: whether it is an ``nn.Parameter`` (Dynamo makes a parameter a static input of
            the graph); None when not said (as when the key was compiled).
        same_as: the source of the other input this is the very tensor of (``b=@a``:
            ``L['a']``), whose shape, dtype and marks it has; None for a tensor of its own.
    """

    shape: tuple[int, ...]
    stride: tuple[int, ...] | None = None
    storage_offset: int = 0
    marked: frozenset[int] = frozenset()
    dtype: str | None = None
    ranges: tuple[tuple[int, int | None, int | None], ...] = ()
    static: frozenset[int] = frozenset()
    requires_grad: bool | None = None
    param: bool | None = None
    same_as: str | None = None

    def strides(self) -> tuple[int, ...]:
        """The given strides, or those of a contiguous tensor of this shape."""
        if self.stride is not None:
            return self.stride
        out, acc = [], 1
        for size in reversed(self.shape):
            out.append(acc)
            acc *= max(size, 1)
        return tuple(reversed(out))

    def __str__(self) -> str:
        if self.same_as is not None:
            return "@" + user_name(self.same_as)
        s = "[" + ",".join(map(str, self.shape)) + "]"
        if self.stride is not None:
            s += ":stride=[" + ",".join(map(str, self.stride)) + "]"
        if self.storage_offset:
            s += f":offset={self.storage_offset}"
        if self.marked:
            s += ":mark_dynamic=[" + ",".join(map(str, sorted(self.marked))) + "]"
        if self.ranges:
            for i, what in ((1, "min"), (2, "max")):
                bounds = [r[i] for r in self.ranges]
                if any(b is not None for b in bounds):
                    shown = ["" if b is None else str(b) for b in bounds]
                    s += f":{what}=" + (shown[0] if len(set(shown)) == 1 and len(self.ranges) == len(self.marked)
                                        else "[" + ",".join(shown) + "]")
        if self.static:
            s += ":mark_static=[" + ",".join(map(str, sorted(self.static))) + "]"
        if self.dtype is not None:
            s += f":dtype={self.dtype}"
        if self.param is not None:
            s += ":param" if self.param else ":param=False"
        if self.requires_grad is not None and not (self.param and self.requires_grad):
            s += f":requires_grad={self.requires_grad}"
        return s


DTYPE_ABBRS: dict[str, str] = {
    "b8": "bool", "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "c32": "complex32", "c64": "complex64", "c128": "complex128",
    "f8e5m2": "float8_e5m2", "f8e4m3fn": "float8_e4m3fn", "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3fnuz": "float8_e4m3fnuz", "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fnx2": "float4_e2m1fn_x2",
    "b1x8": "bits1x8", "b2x4": "bits2x4", "b4x2": "bits4x2", "b8x1": "bits8", "b16x1": "bits16",
}
"""The dtype prefix of a printed tensor type (``f32`` of ``f32[s0, 8][8, 1]cpu``) -> torch's
name of the dtype: ``dtype.abbr`` as torch.utils._dtype_abbrs lists it for
``torch._C._get_all_dtypes()`` (torch 2.13), which ``Graph.python_code`` in torch/fx/graph.py
prints."""

DTYPE_ALIASES: dict[str, str] = {
    "float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
    "short": "int16", "cfloat": "complex64", "cdouble": "complex128", "chalf": "complex32",
}
"""The other names torch gives a dtype (``torch.long is torch.int64``; note ``torch.int``
is int32, not Python's int, which torch.tensor makes int64)."""


def parse_dtype(text: str, what: str = "dtype") -> str:
    """Torch's name of the dtype ``text`` names: ``float32``, an alias torch accepts
    (``float``, ``half``, ``long``, ``double``...) or either with ``torch.`` before it.

    Raises:
        ShapeSpecError: not a dtype torch prints; the message lists the known names.
    """
    t = text.strip().removeprefix("torch.")
    if t in DTYPE_ALIASES:
        return DTYPE_ALIASES[t]
    if t in DTYPE_ABBRS.values():
        return t
    shown = text if len(text) <= 30 else text[:27] + "..."
    known = ", ".join(sorted(set(DTYPE_ABBRS.values()) | set(DTYPE_ALIASES)))
    raise ShapeSpecError(f"{what}: {shown!r} is not a torch dtype (known: {known})",
                         param="inputs", value=text)


def dtype_of_abbr(abbr: str) -> str | None:
    """Torch's name for a printed dtype prefix (``b8`` -> ``bool``); None when unknown."""
    return DTYPE_ABBRS.get(abbr)


InputValue = TensorArg | int | float | PyValue
"""One input of a call: a tensor, a Python int, a Python float, or another Python
value (:class:`~fxcache_core.lookup.pyvalues.PyValue`: a bool, None, a str, a tuple)."""

GRAD_MODE = "torch.is_grad_enabled()"
"""The name of the ``--inputs`` item that gives the grad mode a call runs under
(``torch.is_grad_enabled()=False`` for a call under ``torch.no_grad()``), and its key in
the parsed inputs; :mod:`fxcache_core.lookup.ambient` reads it."""

INFERENCE_MODE = "torch.is_inference_mode_enabled()"
"""The ``--inputs`` item that gives whether the call runs under ``torch.inference_mode()``."""

STATE_FLAGS = (INFERENCE_MODE, "torch.is_autocast_enabled()",
               "torch.are_deterministic_algorithms_enabled()")
"""The ``--inputs`` items (``NAME=True|False``) that give global state a call runs under
besides the grad mode; :mod:`fxcache_core.lookup.global_state` reads them."""

NUM_THREADS = "torch.get_num_threads()"
"""The ``--inputs`` item that gives the run's intra-op threads (``torch.set_num_threads``)."""

DEFAULT_DTYPE = "torch.get_default_dtype()"
"""The ``--inputs`` item that gives the default dtype (``torch.get_default_dtype()=torch.float64``)."""

DYNAMO_CONFIG = "torch._dynamo.config."
"""The prefix of Dynamo's config items a call may state (``--inputs``)."""

SETTING_PREFIXES = ("torch.compile.", DYNAMO_CONFIG, "torch._inductor.config.", "torch._functorch.config.")
"""The prefixes of ``--inputs`` items that give a setting of the run
(``torch.compile.mode='max-autotune'``, ``torch._dynamo.config.specialize_float=True``)."""

COMPILE_KEYWORDS = ("mode", "fullgraph", "backend")
"""The ``torch.compile`` keywords ``torch.compile.NAME=VALUE`` may give (``dynamic`` has its own option)."""


STATE_NAMES = (GRAD_MODE, DEFAULT_DTYPE, NUM_THREADS, *STATE_FLAGS)
"""Every state item named in full (the settings are :data:`SETTING_PREFIXES` + a name)."""


def is_state_item(name: str) -> bool:
    """Whether ``name`` (the part of an ``--inputs`` item before ``=``) names global state
    or a setting (:data:`GRAD_MODE`, :data:`STATE_FLAGS`, :data:`DEFAULT_DTYPE`,
    :data:`SETTING_PREFIXES`), not an argument."""
    name = name.strip()
    return name in STATE_NAMES or name.startswith(SETTING_PREFIXES)


def _state_value(name: str, raw: str, spec: str) -> PyValue:
    """The value of the state item ``name`` (:func:`is_state_item`): True or False for a
    flag, a dtype for :data:`DEFAULT_DTYPE`, a Python literal for a setting."""
    if name == DEFAULT_DTYPE:
        return PyValue(TorchDtype(parse_dtype(raw, f"{param('inputs')} {name}")))
    if name == NUM_THREADS:
        n = parse_int64(raw, f"{param('inputs')} {name}", "inputs")
        if n < 1:
            raise ShapeSpecError(f"{param('inputs')} {name}={n}: a thread count is at least 1",
                                 param="inputs", value=spec)
        return PyValue(n)
    if name.startswith("torch.compile.") and name.removeprefix("torch.compile.") not in COMPILE_KEYWORDS:
        raise ShapeSpecError(f"{param('inputs')} {name[:60]}: not a torch.compile keyword (one of "
                             f"{', '.join(COMPILE_KEYWORDS)}; dynamic has its own option)", param="inputs", value=spec)
    if name.startswith(SETTING_PREFIXES):
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name.split(".config.")[-1]):
            raise ShapeSpecError(f"{param('inputs')} {name[:60]!r}: not a config name", param="inputs", value=spec)
        if name in ("torch.compile.mode", "torch.compile.backend"):
            text = parse_value(raw)
            if text is None or not isinstance(text.value, str):
                raise ShapeSpecError(f"{param('inputs')} {name}: {raw[:20]!r} is not a str "
                                     f"(e.g. {name}={'inductor' if name.endswith('backend') else 'default'!r})",
                                     param="inputs", value=spec)
            return text
        try:
            number = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            number = None
        if isinstance(number, (int, float)) and not isinstance(number, bool) and len(raw) <= 40:
            return PyValue(number)
        value = parse_value(raw)
        if value is None:
            raise ShapeSpecError(f"{param('inputs')} {name[:60]}: {raw[:20]!r} is not a Python value",
                                 param="inputs", value=spec)
        return value
    value = parse_value(raw)
    if value is None or type(value.value) is not bool:
        raise ShapeSpecError(f"{param('inputs')} {name}: {raw[:20]!r} is not True or False",
                             param="inputs", value=spec)
    return value


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The values a torch size or SymInt can hold (int64)."""


def parse_int64(text: str, what: str, name: str | None = None) -> int:
    """A decimal int that torch can hold (int64), for ``what`` (``param('sym') + " t0"``),
    the value of parameter ``name`` (the error's ``param``).

    Raises:
        ShapeSpecError: not a decimal int, or outside int64: one line naming
            ``what`` (a 5,000-digit number is cut short in it, never parsed).
    """
    t = text.strip()
    shown = t if len(t) <= 24 else t[:21] + "..."
    if not re.fullmatch(r"-?[0-9]+", t):
        raise ShapeSpecError(f"{what}: {shown!r} is not an integer", param=name, value=text)
    if len(t.lstrip("-").lstrip("0")) > 19 or not INT64_MIN <= (v := int(t)) <= INT64_MAX:
        raise ShapeSpecError(f"{what}: {shown} is out of range: torch's sizes and SymInts are "
                             "int64 (-2**63 to 2**63-1)", param=name, value=text)
    return v


def checked_tensor(what: str, shape: Sequence[int], stride: Sequence[int] | None = None, offset: int = 0,
                   marked: Iterable[int] = (), dtype: str | None = None, name: str = "inputs",
                   value: object = None) -> TensorArg:
    """A tensor input as ``match`` takes it, checked as torch could have it: every
    size, stride and offset an int64, sizes not negative, as many strides as sizes,
    marked dims among its dims. The one check of ``--inputs`` and of the inputs a
    trace gives (``--from-trace``): the same values are refused from either.

    Raises:
        ShapeSpecError: one line naming ``what`` (``--inputs x``), parameter ``name``.
    """
    shown = "[" + ",".join(map(str, shape[:8])) + (",..." if len(shape) > 8 else "") + "]"
    values = (*shape, *(stride or ()), offset)
    if any(not isinstance(v, int) or isinstance(v, bool) or not INT64_MIN <= v <= INT64_MAX for v in values):
        raise ShapeSpecError(f"{what}: a value is out of range: torch's sizes are int64 (below 2**63)",
                             param=name, value=value)
    if any(d < 0 for d in shape):
        raise ShapeSpecError(f"{what}: sizes cannot be negative: {shown}", param=name, value=value)
    if stride is not None and len(stride) != len(shape):
        raise ShapeSpecError(f"{what}: stride has {len(stride)} dims, shape has {len(shape)}",
                             param=name, value=value)
    dims = tuple(marked)
    bad = [d for d in dims if not 0 <= d < len(shape)]
    if bad:
        raise ShapeSpecError(f"{what}: mark_dynamic dim {str(bad[0])[:24]} is not a dim of a {len(shape)}-d tensor",
                             param=name, value=value)
    return TensorArg(tuple(shape), None if stride is None else tuple(stride), offset, frozenset(dims), dtype)


def mark_static(t: TensorArg, dims: Sequence[int], what: str, value: object = None) -> TensorArg:
    """``t`` with ``dims`` marked static (``torch._dynamo.mark_static``). Raises ShapeSpecError
    for a dim that is not ``t``'s, or one marked dynamic too (torch would trace it dynamic)."""
    bad = [d for d in dims if not 0 <= d < len(t.shape) or d in t.marked]
    if bad:
        why = ("is marked both dynamic and static (torch traces it dynamic: give it in mark_dynamic only)"
               if bad[0] in t.marked else f"is not a dim of a {len(t.shape)}-d tensor")
        raise ShapeSpecError(f"{what}: mark_static dim {str(bad[0])[:24]} {why}", param="inputs", value=value)
    return replace(t, static=frozenset(dims))


def mark_ranges(t: TensorArg, marked: Sequence[int], bounds: Mapping[str, Sequence[int]], what: str,
                value: object = None) -> TensorArg:
    """``t`` with the range of each marked dim: ``bounds`` holds ``min`` and/or ``max``,
    one value for every marked dim, or one per dim in the order ``marked`` lists them
    (``mark_dynamic(x, d, min=..., max=...)``; a bound not given is open).

    Raises:
        ShapeSpecError: no dim marked, another number of values than marked dims, or
            a min over its max; one line naming ``what``.
    """
    if not marked:
        raise ShapeSpecError(f"{what}: min= and max= are the range of a marked dim: give "
                             "mark_dynamic=[...] too", param="inputs", value=value)
    per: dict[str, list[int | None]] = {}
    for k in ("min", "max"):
        vals = list(bounds.get(k, ()))
        if len(vals) == 1:
            vals = vals * len(marked)
        if k in bounds and len(vals) != len(marked):
            raise ShapeSpecError(f"{what}: {k}= has {len(vals)} values for {len(marked)} marked dims",
                                 param="inputs", value=value)
        per[k] = vals if k in bounds else [None] * len(marked)  # type: ignore[assignment]
    ranges = tuple((d, lo, hi) for d, lo, hi in zip(marked, per["min"], per["max"], strict=True))
    bad = next(((d, lo, hi) for d, lo, hi in ranges if lo is not None and hi is not None and lo > hi), None)
    if bad is not None:
        raise ShapeSpecError(f"{what}: dim {bad[0]}'s min={bad[1]} is over its max={bad[2]}",
                             param="inputs", value=value)
    return replace(t, ranges=ranges)


def checked_int(what: str, v: int, name: str = "inputs", value: object = None) -> int:
    """An int input, checked as :func:`parse_int64` checks one typed: an int64.

    Raises:
        ShapeSpecError: outside int64, one line naming ``what``.
    """
    if not INT64_MIN <= v <= INT64_MAX:
        raise ShapeSpecError(f"{what}: the value is out of range: torch's sizes and SymInts are "
                             "int64 (-2**63 to 2**63-1)", param=name, value=value)
    return v


def _int_list(text: str, what: str, name: str = "inputs") -> tuple[int, ...]:
    shown = text if len(text) <= 40 else text[:37] + "..."
    try:
        val = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ShapeSpecError(f"{what} {shown!r} is not a list of integers", param=name, value=text) from None
    if isinstance(val, int) and not isinstance(val, bool):
        val = [val]
    if not isinstance(val, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in val
    ):
        raise ShapeSpecError(f"{what} {shown!r} is not a list of integers", param=name, value=text)
    if any(not INT64_MIN <= v <= INT64_MAX for v in val):
        raise ShapeSpecError(f"{what}: a value is out of range: torch's sizes are int64 (below 2**63)",
                             param=name, value=text)
    return tuple(val)


def parse_shape_spec(spec: str) -> tuple[str, InputValue]:
    """Parse one ``--inputs`` item into (source, value).

    Forms: ``NAME=[d0,d1,...]`` (a tensor; ``[]`` is a 0-d tensor),
    ``NAME=[...]:stride=[...]``, ``NAME=[...]:offset=N``,
    ``NAME=[...]:mark_dynamic=[i,...]`` (dims marked dynamic; with ``:min=N:max=M``, or
    ``:min=[...]:max=[...]`` one per marked dim, their range, :func:`mark_ranges`),
    ``NAME=[...]:mark_static=[i,...]`` (dims marked static: :func:`mark_static`),
    ``NAME=[...]:dtype=bool`` (torch's dtype names, :func:`parse_dtype`; options combine),
    ``NAME=[...]:requires_grad=True``, ``NAME=[...]:param`` (an ``nn.Parameter``: requires grad
    unless ``:requires_grad=False``; ``:param=False`` a plain tensor), ``torch.is_grad_enabled()=False`` (the grad mode:
    :data:`GRAD_MODE`),
    ``NAME=INT`` (a Python int), ``NAME=FLOAT`` (a Python float, e.g. ``2.5`` or ``10.0``),
    and the other Python values (:func:`~fxcache_core.lookup.pyvalues.parse_value`):
    ``NAME=True``/``False``/``None``, a string (``'gelu'``, ``"gelu"``, or a bare
    word ``gelu``), a tuple (``(2,3)``), a ``torch.dtype`` (``torch.float16``, ``torch.half``;
    a bare ``float16`` is the str: :class:`~fxcache_core.lookup.pyvalues.TorchDtype`). The three
    scalars differ as torch traces them: an int is a constant or a SymInt, a float a constant
    or a tensorified 0-d float64 input, a 0-d tensor a tensor input; the rest are constants.

    Raises:
        ShapeSpecError: anything else, with the reason (an unknown dtype lists the known
            ones; a dtype on an int or float says that a Python scalar has none).
    """
    if "=" not in spec:
        raise ShapeSpecError(f"{param('inputs')} {spec!r}: expected NAME=[d0,d1,...], NAME=INT or NAME=VALUE",
                             param="inputs", value=spec)
    name, _, raw = spec.partition("=")
    if is_state_item(name):
        return name.strip(), _state_value(name.strip(), raw.strip(), spec)
    if name.strip().startswith("torch."):
        known = ", ".join((*STATE_NAMES, *(p + "NAME" for p in SETTING_PREFIXES)))
        raise ShapeSpecError(f"{param('inputs')} {name.strip()[:60]}: no parameter, and not global state match "
                             f"knows (known: {known})", param="inputs", value=spec)
    source = canonical_source(name)
    raw = raw.strip()
    rhs = raw.replace(" ", "")
    if not rhs:
        raise ShapeSpecError(f"{param('inputs')} {spec!r}: no value after '='", param="inputs", value=spec)
    if rhs.startswith("["):
        shape_text, *opts = rhs.split(":")
        shape = _int_list(shape_text, f"{param('inputs')} {name}: shape")
        stride, offset, marked, dtype, static, grad, is_param = None, 0, (), None, (), None, None
        bounds: dict[str, tuple[int, ...]] = {}
        for opt in opts:
            k, _, v = opt.partition("=")
            if k == "stride":
                stride = _int_list(v, f"{param('inputs')} {name}: stride")
            elif k == "offset":
                offset = parse_int64(v, f"{param('inputs')} {name}: offset", "inputs")
            elif k == "mark_dynamic":
                marked = _int_list(v, f"{param('inputs')} {name}: mark_dynamic")
            elif k == "mark_static":
                static = _int_list(v, f"{param('inputs')} {name}: mark_static")
            elif k == "dtype":
                dtype = parse_dtype(v, f"{param('inputs')} {name}: dtype")
            elif k in ("min", "max"):
                bounds[k] = _int_list(v, f"{param('inputs')} {name}: {k}")
            elif k == "requires_grad" and v in ("True", "False"):
                grad = v == "True"
            elif k == "requires_grad":
                raise ShapeSpecError(f"{param('inputs')} {name}: requires_grad={v[:20]!r} is not True or False",
                                     param="inputs", value=spec)
            elif k == "param" and (opt == "param" or v in ("True", "False")):
                is_param = opt == "param" or v == "True"
            elif k == "param":
                raise ShapeSpecError(f"{param('inputs')} {name}: param={v[:20]!r} is not True or False",
                                     param="inputs", value=spec)
            else:
                raise ShapeSpecError(
                    f"{param('inputs')} {name}: unknown option {k!r} (stride=[...], offset=N, "
                    "mark_dynamic=[...], mark_static=[...], min=N, max=N, dtype=NAME, requires_grad=True or param)",
                    param="inputs", value=spec)
        t = checked_tensor(f"{param('inputs')} {name.strip()}", shape, stride, offset, marked, dtype, value=spec)
        if static:
            t = mark_static(t, static, f"{param('inputs')} {name.strip()}", spec)
        if grad is not None:
            t = replace(t, requires_grad=grad)
        if is_param is not None:  # nn.Parameter(t) requires grad unless told otherwise
            t = replace(t, param=is_param, requires_grad=True if is_param and grad is None else t.requires_grad)
        return source, mark_ranges(t, marked, bounds, f"{param('inputs')} {name.strip()}", spec) if bounds else t
    item_path(source, name, spec)
    if rhs.startswith("@"):  # the very tensor given for another parameter
        other = rhs[1:]
        if not re.fullmatch(r"[A-Za-z_]\w*(\[[^\]]+\])*", other):
            raise ShapeSpecError(f"{param('inputs')} {name.strip()[:40]}: {raw[:40]!r}: after '@' the name of "
                                 "another input of the call (b=@a)", param="inputs", value=spec)
        return source, SameAs(canonical_source(other))  # type: ignore[return-value]
    if ":" in rhs and raw[:1] not in ("'", '"'):
        _scalar_with_options(spec, name, rhs)
    if re.fullmatch(r"-?[0-9]+", rhs):
        return source, parse_int64(rhs, f"{param('inputs')} {name.strip()}", "inputs")
    if re.fullmatch(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?|[-+]?(inf|nan)", rhs):
        return source, float(rhs)
    if re.fullmatch(r"torch\.\w*", rhs):  # torch.float16; a bare "torch." is no dtype either
        return source, PyValue(TorchDtype(parse_dtype(rhs, f"{param('inputs')} {name.strip()[:40]}")))
    value = parse_value(raw)
    if value is not None:
        return source, value
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    raise ShapeSpecError(
        f"{param('inputs')} {name.strip()[:40]}: {shown!r} is neither a shape like [16,4], an integer, a float, "
        "True/False/None, a string ('gelu') nor a tuple ((2,3))", param="inputs", value=spec)


def _scalar_with_options(spec: str, name: str, rhs: str) -> None:
    """Raises ShapeSpecError for ``t=10:dtype=int64`` and the like: a Python int or
    float has no dtype (nor strides), and a 0-d tensor is written ``t=[]:dtype=...``."""
    value, _, opts = rhs.partition(":")
    if re.fullmatch(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|[-+]?(inf|nan)", value):
        kind = "an int" if re.fullmatch(r"-?[0-9]+", value) else "a float"
        has = "no dtype" if opts.startswith("dtype") else f"no option {opts.partition('=')[0]!r}"
        n = name.strip()
        raise ShapeSpecError(
            f"{param('inputs')} {spec!r}: {n}={value} is {kind}, a Python scalar, which has {has} "
            f"(a 0-d tensor of a dtype is {n}=[]:dtype=NAME)", param="inputs", value=spec)


def parse_shapes(specs: Iterable[str]) -> dict[str, InputValue]:
    """Parse every ``--inputs`` item; later items may not rebind a name.

    An item with no name (``[2,3,32,32]``) is a positional input: the i-th such
    item is ``args[i]`` (``L['args'][i]``), the call's i-th positional argument.

    Raises:
        ShapeSpecError: a malformed item, a name given twice, or given whole and by an
            item of it (``n=2`` and ``n['k']=4``: one of them is not the call).
    """
    out: dict[str, InputValue] = {}
    names: dict[str, str] = {}
    n_positional = 0
    for spec in specs:
        for part in _split_top(spec):
            if part.startswith("["):  # a positional input: the call's args[i], in order
                part = f"args[{n_positional}]={part}"
                n_positional += 1
            src, val = parse_shape_spec(part)
            if src in out:
                raise ShapeSpecError(f"{param('inputs')}: {src} is given twice", param="inputs", value=spec)
            out[src] = val
            names[src] = part.partition("=")[0].strip()
    not_whole_and_items(names)
    return same_tensors(out, names, TensorArg)


def _split_top(spec: str) -> list[str]:
    """Split ``x=[1,2],n=3,dims=(2,3),act='a,b'`` on commas outside brackets,
    parentheses and quotes (one flag may hold several items)."""
    parts, depth, cur = [], 0, []
    quote: str | None = None
    for ch in spec:
        if quote is not None:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0 and quote is None:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in (x.strip() for x in parts) if p]


def parse_sym(specs: Iterable[str]) -> dict[str, int]:
    """Parse ``--sym t0=16`` (or ``--sym s77=16``) items.

    Raises:
        ShapeSpecError: not ``NAME=INT`` with NAME a placeholder or symbol, or
            INT outside int64.
    """
    out: dict[str, int] = {}
    for spec in specs:
        for part in _split_top(spec):
            m = re.fullmatch(r"\s*([a-z]+[0-9]+)\s*=\s*(-?[0-9]+)\s*", part)
            if not m:
                shown = part if len(part) <= 40 else part[:37] + "..."
                raise ShapeSpecError(f"{param('sym')} {shown!r}: expected tN=INT or a symbol, e.g. s77=INT", param="sym", value=part)
            out[m.group(1)] = parse_int64(m.group(2), f"{param('sym')} {m.group(1)}", "sym")
    return out
