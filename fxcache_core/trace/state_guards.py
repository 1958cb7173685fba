"""The state a traced compile was entered under, read from Dynamo's guards: the module's
own attributes and the global state.

Dynamo guards each attribute of a module compiled whole (or of ``self`` in a method) that
the code reads, by its source (``L['self'].training == False``,
``L['self']._modules['bn'].training == False``, ``L['self'].config.use_cache == True``:
torch/_dynamo/guards.py, ``CONSTANT_MATCH`` and ``NN_MODULE``'s guard on ``training``),
and the global state the frame was entered under, once (``GLOBAL_STATE``, printed
``___check_global_state() against {...}``: the JSON of ``GlobalStateGuard``, with
``grad_mode``, ``autocast_state.enabled`` per device, ``default_dtype`` as a ScalarType
number, ``deterministic_algorithms`` and ``num_threads``). AOTAutograd and Inductor compile
the frame's graph under that state (``restore_global_state`` in torch/_dynamo/output_graph.py),
so it is the state their keys hashed.

:func:`state_record` keeps, for one compile, what :mod:`fxcache_core.lookup.recorded_state`
reads: each module attribute pinned to a constant (by Dynamo's source), the names its guards
read (:data:`~fxcache_core.lookup.recorded_state.SELF_NAMES`: only with all its guards, and
none where a guard reads a whole ``__dict__`` or ``vars()``, or pins the module or a
submodule by its identity) and the global state
(:data:`~fxcache_core.lookup.recorded_state.STATE_PREFIX`). Guard text is parsed with ``ast``
and ``json`` (data only) and never run. Nothing here imports torch.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable

from fxcache_core.lookup.kwargs_evidence import guard_literal
from fxcache_core.lookup.recorded_state import SELF_NAMES, STATE_PREFIX

__all__ = ["MAX_SELF_NAMES", "state_record"]

MAX_SELF_NAMES = 2000
"""At most this many names are kept of one compile's guards; with more, none (no evidence)."""
MAX_STATE_CHARS = 24000
"""About the most characters the module's attributes, and apart the names, take in a record
(the usage store keeps a record of at most 64 KiB whole): past it, only the ``training``
guards and the module's own attributes (not its submodules') are kept, and then none; the
names past it are not kept (no evidence)."""

_MAX_CODE = 2000
_GLOBAL_STATE = "___check_global_state() against "
_NAME_RE = re.compile(r"\.([A-Za-z_]\w{0,200})|'([A-Za-z_]\w{0,200})'")
_WHOLE_DICT_RE = re.compile(r"vars\(|__dict__")
"""A guard after which the names are not kept: one that reads a whole ``__dict__``."""
_SELF_ID_RE = re.compile(r"___check_obj_id\(L\['self'\][^\n]{0,1500}?, [0-9]{1,24}\)(?:, type=<class '([\w.]{1,300})'>)?$")
_NOT_MODULES = frozenset({"builtin_function_or_method", "function", "method", "method-wrapper", "method_descriptor",
                          "wrapper_descriptor", "module", "type", "code", "NoneType", "bool", "int", "float", "str",
                          "functools.partial", "torch._ops.OpOverload", "torch._ops.OpOverloadPacket"})
"""The types an identity guard off the module may name without pinning a module: the names
are kept past it. Any other (a module Dynamo specialized, ``NN_MODULE``, whose other
attributes it may read unguarded where ``guard_nn_modules`` is off), or none printed, and
they are not."""
_ONE_NAME_RE = re.compile(r"___dict_contains\('\w{1,200}', (?:[^()]|\([^()]*\)){1,1000}?\.__dict__\)|"
                          r"dict\((?:[^()]|\([^()]*\)){1,1000}?\.__dict__\)\['\w{1,200}'\]")
"""A guard that reads one name of an object's ``__dict__`` (whether it holds ``forward``,
or a class attribute's value), not the whole dict."""
_DTYPES = {5: "float16", 6: "float32", 7: "float64", 15: "bfloat16"}
"""c10::ScalarType numbers of the dtypes a default dtype may be."""


def _self_source(node: ast.expr) -> str | None:
    """``L['self']._modules['bn'].training`` for an attribute chain off ``L['self']``
    through submodules (``_modules['name']``); None for anything else."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(f".{node.attr}")
            node = node.value
        elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
              and isinstance(node.slice.value, str)):
            if isinstance(node.value, ast.Name) and node.value.id == "L" and node.slice.value == "self":
                break
            if not (isinstance(node.value, ast.Attribute) and node.value.attr == "_modules"):
                return None
            parts.append(f"._modules[{node.slice.value!r}]")
            node = node.value.value
        else:
            return None
    if not parts or not parts[0].startswith(".") or parts[0].startswith("._modules["):
        return None
    return "L['self']" + "".join(reversed(parts))


def _self_constant(code: str) -> tuple[str, object] | None:
    """(source, value) for a guard pinning a module attribute to a constant."""
    try:
        tree = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and len(tree.comparators) == 1):
        return None
    op, right = tree.ops[0], tree.comparators[0]
    src = _self_source(tree.left)
    if src is None:
        return None
    if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None:
        return src, None
    ok, value = guard_literal(right)
    return (src, value) if ok and isinstance(op, ast.Eq) else None


def _global_state(text: str) -> dict[str, object]:
    """The fields of a ``GLOBAL_STATE`` guard's JSON a record keeps (empty when it is not
    what torch prints)."""
    try:
        got = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(got, dict):
        return {}
    out: dict[str, object] = {}
    if type(got.get("grad_mode")) is bool:
        out["grad_mode"] = got["grad_mode"]
    auto = got.get("autocast_state")
    enabled = auto.get("enabled") if isinstance(auto, dict) else None
    if isinstance(enabled, list) and enabled and all(type(e) is bool for e in enabled):
        out["autocast"] = any(enabled)
    if type(got.get("default_dtype")) is int and got["default_dtype"] in _DTYPES:
        out["default_dtype"] = _DTYPES[got["default_dtype"]]
    if type(got.get("deterministic_algorithms")) is bool:
        out["deterministic"] = got["deterministic_algorithms"]
    if type(got.get("num_threads")) is int:
        out["num_threads"] = got["num_threads"]
    return out


def state_record(codes: Iterable[str], complete: bool) -> dict[str, object]:
    """What one compile's guards (``codes``; ``complete``: all of them were read) say of
    the state it was entered under (see the module docstring): source -> value for each
    module attribute pinned, ``#self-names`` -> the names its guards read (with
    ``complete`` only, and where a guard reads ``self``), ``#state:FIELD`` -> each global
    state field."""
    out: dict[str, object] = {}
    names: set[str] | None = set() if complete else None
    self_read = False
    for code in codes:
        self_read = self_read or "L['self']" in code
        if code.startswith(_GLOBAL_STATE):
            for k, v in _global_state(code[len(_GLOBAL_STATE):][:_MAX_CODE]).items():
                out[STATE_PREFIX + k] = v
            continue
        if names is not None:
            pinned = _SELF_ID_RE.match(code) if code.startswith("___check_obj_id(L['self']") else None
            if len(code) > _MAX_CODE or _WHOLE_DICT_RE.search(_ONE_NAME_RE.sub("", code)) or (
                    code.startswith("___check_obj_id(L['self']") and (pinned is None or pinned.group(1) not in _NOT_MODULES)):
                names = None
            else:
                names.update(a or b for a, b in _NAME_RE.findall(code))
                if len(names) > MAX_SELF_NAMES:
                    names = None
        if len(code) <= _MAX_CODE and "L['self']" in code and (got := _self_constant(code)) is not None:
            out[got[0]] = got[1]
    attrs = {k: v for k, v in out.items() if not k.startswith(STATE_PREFIX)}
    if _chars(attrs) > MAX_STATE_CHARS:
        for k in attrs:
            if not k.endswith(".training") and "._modules[" in k:
                del out[k]
        if _chars({k: v for k, v in out.items() if k in attrs}) > MAX_STATE_CHARS:
            for k in attrs:
                out.pop(k, None)
    if names is not None and self_read and sum(len(n) + 4 for n in names) <= MAX_STATE_CHARS:
        out[SELF_NAMES] = tuple(sorted(names))
    return out


def _chars(items: dict[str, object]) -> int:
    return sum(len(k) + len(repr(v)) + 8 for k, v in items.items())
