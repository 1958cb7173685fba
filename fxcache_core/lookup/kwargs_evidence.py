"""``**kwargs`` under the closed world: what decides the keywords a key was compiled with.

A function taking ``**kwargs`` (every transformers ``forward``, and the decorator
wrappers around them that Dynamo compiles) gets, in one dict, every keyword the call
gives beyond its own parameters. Any of them can change what Dynamo traces (a model
called with ``output_attentions=True`` returns its attention weights: another graph),
and the cache records none of them: a key's inputs are tensors, its graph holds what
the keywords made the code do. So a call's keywords, given or not, are accounted
(:func:`kwargs_account`, one :class:`~fxcache_core.lookup.param_account.ParamAccount`
named ``**kwargs``) only by exact evidence:

* ``unread``: the compiled function's body never names its ``**kwargs`` parameter
  (nor calls ``locals``/``vars``/``eval``/``exec``): no keyword can reach what Dynamo
  traces (:attr:`~fxcache_core.functions.params.FrameReads.varkw_read`);
* ``trace-guard``: a run's TORCH_TRACE recorded Dynamo's guards of a compile that looked
  this key up (torch/_dynamo/guards.py, read by
  :func:`fxcache_core.trace.dict_guards.dict_evidence`), in full, and the call's keywords
  pass every guard on the dict: ``not L['kwargs']`` (no keyword), ``len(L['kwargs']) ==
  1``, ``___dict_contains('flag', L['kwargs'])`` or with ``not``,
  ``L['kwargs']['flag'] == True``, a tensor's ``check_tensor`` (the key's own inputs
  decide its sizes), or no guard on the dict at all (Dynamo never read it). Dynamo
  reuses a compile for every call that passes its guards, so such a call traces that
  compile's graph.

Otherwise the key's lookup is undecided, naming ``**kwargs`` and what would decide it:
``kwargs-unrecorded`` where nothing recorded the key's keywords (a keyword given or
none: one code), ``kwargs-differs-from-record`` where the call fails a recorded guard
(torch traces again, and whether that graph is the key's the guards cannot tell:
``kwargs.get('flag', False)`` traces one graph for ``flag=False`` and for no flag),
``kwargs-guard-unread`` where a recorded guard is one fxcache does not read (the order
of the keys of a dict the code iterates). Guard text is parsed with :mod:`ast`, never
run. Never imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from fxcache_core.errors import param
from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.inputs import candidates
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, same_value, text_of
from fxcache_core.reasons import Reason

if TYPE_CHECKING:
    from fxcache_core.cache.scan import CacheKey
    from fxcache_core.functions.frames import CompiledFrom
    from fxcache_core.functions.params import FrameReads


class KeyCall(Protocol):
    """What :func:`keywords_account` reads of a key's lookup for a call
    (:class:`fxcache_core.lookup.accounting.KeyCall`)."""

    key: CacheKey
    inputs: Mapping[str, object]
    taken: frozenset[str]

ALL_GUARDS = "#all-guards"
"""A record's marker that the compile's guards were read in full
(:data:`fxcache_core.trace.dict_guards.ALL_GUARDS`: the trace layer sits above this one)."""
GUARDS_OF = "guards:"
"""The prefix of a record's guards of one dict (:data:`fxcache_core.trace.dict_guards.GUARDS_OF`)."""

MAX_GUARD_CHARS = 2000
"""A recorded guard longer than this is not parsed (``unknown``): a dict's guards are short lines."""

_MISSING = object()
_TYPE_RE = re.compile(r"^___check_type_id\((.{1,1500}), (?:\d{1,24}|\.\.\.)\), type=<class '([\w.]{1,80})'>$")
_TENSOR_CALLS = frozenset({"check_tensor", "hasattr", "getattr", "set", "check_no_aliasing", "___check_no_aliasing",
                           "___check_tensors"})
_TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str", type(None): "NoneType", tuple: "tuple"}

Outcome = tuple[str, str]
"""``("pass" | "fail" | "unknown", the guard)``."""


class ItemsGiven:
    """A keyword given by its items only (``cfg['n']=4``, ``cfg.n=4`` for a function whose
    ``**kwargs`` takes ``cfg``): the call's dict holds a container fxcache never builds, so a
    guard on the container or inside it is one fxcache does not read (``unknown``), and a
    guard on the dict's keys reads it as any keyword."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[tuple[str, object], ...]) -> None:
        self.items = items

    def shown(self, name: str) -> str:
        return ", ".join(f"{name}{rest}={v if isinstance(v, TensorArg) else text_of(_value(v))}"
                         for rest, v in self.items)


def _value(v: object) -> object:
    return v.value if isinstance(v, PyValue) else v


def _resolve(node: ast.expr, root: str, given: Mapping[str, object]) -> object:
    """The call's value of a source under ``root`` (``L['kwargs']['flag']``,
    ``L['kwargs']['dims'][0]``): ``_MISSING`` when the call gives no such key (the
    guard's ``DictGetItemGuardAccessor`` fails), None-wrapped errors as ``ValueError``."""
    chain: list[object] = []
    while isinstance(node, ast.Subscript):
        if not isinstance(node.slice, ast.Constant):
            raise ValueError("not a source")
        chain.append(node.slice.value)
        node = node.value
    chain.reverse()
    if (not isinstance(node, ast.Name) or node.id != "L" or len(chain) < 2
            or f"L[{chain[0]!r}]" != root or not isinstance(chain[1], str)):
        raise ValueError("not a source under the dict")
    v: object = given[chain[1]] if chain[1] in given else _MISSING
    for i in chain[2:]:
        v = _value(v)
        if isinstance(v, ItemsGiven):
            raise ValueError("inside a container the call gives by its items")
        if not (isinstance(v, tuple) and type(i) is int and -len(v) <= i < len(v)):
            raise ValueError("not an item of a tuple")
        v = v[i]
    return _value(v)


def _constant(node: ast.expr) -> tuple[bool, object]:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return True, -node.operand.value
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (bool, int, float, str)):
        return True, node.value
    return False, None


def _is_root(node: ast.expr, root: str) -> bool:
    return (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "L"
            and isinstance(node.slice, ast.Constant) and f"L[{node.slice.value!r}]" == root)


def _judge(code: str, root: str, given: Mapping[str, object]) -> str:
    """One recorded guard on the dict ``root``, for the call's keywords ``given``:
    ``pass``, ``fail`` or ``unknown`` (a guard fxcache does not read)."""
    if code == "DictGuardManager" or len(code) > MAX_GUARD_CHARS:
        return "unknown"  # the dict's length and its keys' order: the printout shows neither
    if (m := _TYPE_RE.match(code)) is not None:
        try:
            src = ast.parse(m.group(1), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return "unknown"
        if _is_root(src, root):
            return "pass" if m.group(2) == "dict" else "fail"
        try:
            v = _resolve(src, root, given)
        except (ValueError, KeyError):
            return "unknown"
        if v is _MISSING:
            return "fail"
        if isinstance(v, TensorArg):  # a plain tensor, as the call makes one (a subclass is another type)
            return "pass" if m.group(2) in ("torch.Tensor", "Tensor") else "unknown"
        name = _TYPE_NAMES.get(type(v))
        return "unknown" if name is None else "pass" if name == m.group(2) else "fail"
    try:
        tree = ast.parse(code, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "unknown"
    negated = isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)
    inner = tree.operand if negated else tree  # type: ignore[attr-defined]
    if _is_root(inner, root):  # `not L['kwargs']` (DICT_LENGTH of an empty dict)
        return "pass" if (len(given) == 0) == negated else "fail"
    if (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "___dict_contains"
            and len(inner.args) == 2 and isinstance(inner.args[0], ast.Constant)
            and isinstance(inner.args[0].value, str) and _is_root(inner.args[1], root)):
        return "pass" if (inner.args[0].value in given) != negated else "fail"
    if negated:
        return _tensor_guard(inner, root, given)  # `not hasattr(L['kwargs']['ids'], 'jax')`
    if isinstance(tree, ast.Compare) and len(tree.ops) == 1:
        op, left, right = tree.ops[0], tree.left, tree.comparators[0]
        ok, want = _constant(right)
        if not ok:
            return _tensor_guard(tree, root, given)
        if (isinstance(op, ast.Eq) and isinstance(left, ast.Call) and isinstance(left.func, ast.Name)
                and left.func.id == "len" and len(left.args) == 1 and type(want) is int):
            if _is_root(left.args[0], root):
                return "pass" if len(given) == want else "fail"
            try:
                v = _resolve(left.args[0], root, given)
            except (ValueError, KeyError):
                return "unknown"
            if isinstance(v, ItemsGiven):
                return "unknown"
            return "pass" if isinstance(v, tuple) and len(v) == want else "fail"
        try:
            v = _resolve(left, root, given)
        except (ValueError, KeyError):
            return _tensor_guard(tree, root, given)
        if v is _MISSING or isinstance(v, TensorArg):
            return "fail" if not isinstance(op, ast.IsNot) else ("pass" if isinstance(v, TensorArg) else "fail")
        if isinstance(op, (ast.Is, ast.IsNot)) and want is None and isinstance(v, ItemsGiven):
            return "pass" if isinstance(op, ast.IsNot) else "fail"  # a container is not None
        if isinstance(v, ItemsGiven):
            return "unknown"
        if isinstance(op, ast.Is) and want is None:
            return "pass" if v is None else "fail"
        if isinstance(op, ast.IsNot) and want is None:
            return "pass" if v is not None else "fail"
        if isinstance(op, ast.Eq):
            return "pass" if same_value(v, want) else "fail"
        return "unknown"
    return _tensor_guard(tree, root, given)


def _tensor_guard(tree: ast.expr, root: str, given: Mapping[str, object]) -> str:
    """A guard about tensors given through the dict (``check_tensor(L['kwargs']['mask'],
    ...)``, ``hasattr(L['kwargs']['mask'], '_dynamo_dynamic_indices') == False``, a size):
    the key's own inputs and guards decide those; it passes where the call gives each a
    tensor, fails where it gives none. ``unknown`` for any other guard."""
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "check_tensor" \
            and tree.args:
        tree = tree.args[0]  # TENSOR_MATCH: the rest names the tensor's dispatch keys, dtype, sizes
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - {"L"}
    if not names <= _TENSOR_CALLS:
        return "unknown"
    keys: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and _is_root(n.value, root):
            if not (isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)):
                return "unknown"
            keys.add(n.slice.value)
    if not keys:
        return "unknown"
    for k in keys:
        if k not in given:
            return "fail"
        if not isinstance(given[k], TensorArg):
            return "unknown"
    return "pass"


def judge_record(record: Mapping[str, object], root: str, given: Mapping[str, object]) -> tuple[str, str]:
    """How the call's keywords ``given`` fare against one recorded compile's guards on
    the dict ``root``: ``("pass", "")``; ``("fail", guard)`` (the first failing one);
    ``("unknown", guard)``; ``("none", "")`` where the record does not hold every
    guard of its compile (no evidence)."""
    if record.get(ALL_GUARDS) is not True:
        return "none", ""
    codes = record.get(GUARDS_OF + root, ())
    if not isinstance(codes, tuple) or not all(isinstance(c, str) for c in codes):
        return "none", ""
    unknown = ""
    for code in codes:
        got = _judge(code, root, given)  # type: ignore[arg-type]
        if got == "fail":
            return "fail", code  # type: ignore[return-value]
        if got == "unknown" and not unknown:
            unknown = code  # type: ignore[assignment]
    return ("unknown", unknown) if unknown else ("pass", "")


def _shown(given: Mapping[str, object]) -> str:
    if not given:
        return "{}"
    return "{" + ", ".join(v.shown(k) if isinstance(v, ItemsGiven) else
                           f"{k}={v if isinstance(v, TensorArg) else text_of(_value(v))}"
                           for k, v in given.items()) + "}"


def kwargs_account(key: str, function: str, root: str, given: Mapping[str, object],
                   records: Sequence[Mapping[str, object]], read: bool) -> ParamAccount:
    """Account for the call's keywords that reach the compiled frame's ``**kwargs``
    (``given``: keyword -> a :class:`~fxcache_core.lookup.binding.TensorArg`, an int, a
    float, a :class:`~fxcache_core.lookup.pyvalues.PyValue` or an :class:`ItemsGiven`) in key ``key``'s lookup.

    ``root``: the dict's source in the compiled frame (``L['kwargs']``); ``records``:
    the recorded constants of the compiles that looked the key up
    (:data:`~fxcache_core.lookup.accounting.RecordedConstants`); ``read``: whether the
    compiled function's body names the dict. See the module docstring for what each
    outcome means. Raises nothing."""
    shown = _shown(given)
    named = re.fullmatch(r"L\['(\w+)'\]", root)
    star = "**" + (named.group(1) if named else "kwargs")  # the dict's own name: **kw, **options
    what = f"{star}={shown}" if given else f"{star}: no keyword beyond the parameters of " + function
    if not read:
        return ParamAccount("**kwargs", shown, bool(given), "accounted", Reason(
            f"{what}: the code of {function} never reads its {star}", "unread"))
    judged = [judge_record(r, root, given) for r in records]
    if any(o == "pass" for o, _ in judged):
        return ParamAccount("**kwargs", shown, bool(given), "accounted", Reason(
            f"{what}: the call passes every guard Dynamo installed on {root} in a traced compile that "
            f"looked key {key[:12]} up", "trace-guard"), brief=f"Dynamo's guards on {star} in a traced run")
    failed = next((g for o, g in judged if o == "fail"), None)
    if failed is not None:
        return ParamAccount("**kwargs", shown, bool(given), "undecided", Reason(
            f"{what}: fails `{failed}`, Dynamo's guard in a traced compile that looked key {key[:12]} up: torch "
            "traces the call again, and whether that graph is this key's the guards cannot tell (a run's trace "
            "of a call with these keywords would)", "kwargs-differs-from-record"))
    unread = next((g for o, g in judged if o == "unknown"), None)
    if unread is not None:
        return ParamAccount("**kwargs", shown, bool(given), "undecided", Reason(
            f"{what}: Dynamo guarded {root} in a traced compile that looked key {key[:12]} up with `{unread}`, "
            "a guard fxcache does not read", "kwargs-guard-unread"))
    return ParamAccount("**kwargs", shown, bool(given), "undecided", Reason(
        f"{what}: {function} takes {star} and reads them, and the cache does not record which keywords key "
        f"{key[:12]} was compiled with (a flag such as output_attentions=True traces another graph); Dynamo's "
        "guards in a TORCH_TRACE of the run that compiled it would: explain that trace "
        f"(`fxcache explain TRACE` keeps them for match), or give the call as {param('from_trace')}",
        "kwargs-unrecorded"))


__all__ = ["ALL_GUARDS", "GUARDS_OF", "ItemsGiven", "judge_record", "kwargs_account"]


def keywords_account(call: KeyCall, frame: CompiledFrom, reads: FrameReads, params: Sequence[ParamAccount],
                     recorded: Sequence[Mapping[str, object]]) -> list[ParamAccount]:
    """The call's keywords that reach the ``**kwargs`` of the compiled frame, accounted
    by :func:`~fxcache_core.lookup.kwargs_evidence.kwargs_account` (the dict as a whole:
    the keywords given, or none): one account per keyword given that is no parameter of
    the function and no input of the key (a keyword given by its items, ``cfg['n']=4``, one
    per item: :class:`ItemsGiven`), each with the dict's outcome, or one named
    ``**kwargs`` where there is none. Under a module compiled whole the compiled frame's
    ``L['kwargs']`` holds every keyword of the call, its named parameters' too.
    ``params``: the accounts of the frame's named parameters; ``recorded``: what runs'
    traces recorded for the key (:class:`~fxcache_core.lookup.accounting.Ledger`)."""
    if not reads.varkw:
        return []
    named = {p.source for p in params if p.source is not None}
    dict_keys: dict[str, object] = {}
    own: list[tuple[str, str, object]] = []
    dict_name = re.escape(reads.varkw_name or "kwargs") if not frame.whole_module else "kwargs"
    items: dict[str, list[tuple[str, object]]] = {}
    for src, v in call.inputs.items():
        m = re.fullmatch(rf"L\['(?:{dict_name}'\]\[')?(\w+)'\]((?:\[|\.).*)?", src)
        if m is None:
            continue
        name = m.group(1)
        if m.group(2) is not None:  # cfg['n']=4 of no parameter cfg: the keyword cfg, given by its items
            if reads.param(name) is None and not frame.whole_module and not any(
                    t == c or t.startswith((c + "[", c + ".")) for c in candidates(src, frame.params)
                    for t in call.taken):
                items.setdefault(name, []).append((m.group(2), v))
                own.append((name + m.group(2), src, v))
            continue
        if reads.param(name) is None:
            dict_keys[name] = v
            taken = any(t == c or t.startswith((c + "[", c + ".")) for c in candidates(src, frame.params)
                        for t in call.taken)
            if src not in named and not isinstance(v, TensorArg) and not taken:
                own.append((name, src, v))
        elif frame.whole_module:
            pos = f"L['args'][{frame.params.index(name)}]" if name in frame.params else None
            if pos is None or pos not in call.taken:  # passed by keyword: in the wrapper's kwargs
                dict_keys[name] = v
    for name, given in items.items():
        dict_keys.setdefault(name, ItemsGiven(tuple(given)))
    root = "L['kwargs']" if frame.whole_module or reads.varkw_name is None else f"L[{reads.varkw_name!r}]"
    read = frame.whole_module or reads.varkw_read or reads.opaque
    acc = kwargs_account(call.key.key, frame.name, root, dict_keys, recorded, read)
    if not own:
        return [acc]
    return [replace(acc, name=name, value=str(v), given=True, source=src) for name, src, v in own]
