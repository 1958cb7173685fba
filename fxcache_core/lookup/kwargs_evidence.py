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
of the keys of a dict the code iterates).

A call that fails a record's guards is told by keyword (:func:`recorded_item`: what
one record's guards show of a key, its constant, there, or not there by
``not ___dict_contains`` or by a length that every other key shown fills): the
accounts name each keyword in which it differs, and a keyword at the value a record
guarded is accounted for on its own (``trace-guard``), the dict still undecided. The
same guards show the parameters a model compiled whole was called without
(:func:`left_out_in`: not in its kwargs, and ``L['args']`` too short to reach them),
which :mod:`fxcache_core.lookup.accounting` takes as recorded at their defaults.
Guard text is parsed with :mod:`ast`, never run. Never imports torch.
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
from fxcache_core.lookup.kwargs_sizes import size_guard
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
_TYPE_RE = re.compile(r"^___check_type_id\((.{1,1500}), (?:[0-9]{1,24}|\.\.\.)\), type=<class '([\w.]{1,80})'>$")
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


def guard_literal(node: ast.expr) -> tuple[bool, object]:
    """A literal of a guard's text (``None``, a bool, int, float or str, or a negated
    number): (True, its value), else (False, None). Read from the ``ast``, never eval'd."""
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
        ok, want = guard_literal(right)
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
    """A guard about tensors given through the dict (:func:`_tensor_item_guard`), or else
    arithmetic of the sizes and ints the call gives through it, evaluated with the call's
    values (:func:`~fxcache_core.lookup.kwargs_sizes.size_guard`)."""
    got = _tensor_item_guard(tree, root, given)
    if got != "unknown":
        return got
    return size_guard(tree, lambda node: _resolve(node, root, given))


def _tensor_item_guard(tree: ast.expr, root: str, given: Mapping[str, object]) -> str:
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


def _dict_facts(codes: Sequence[str], root: str) -> tuple[dict[str, object], set[str], set[str], int | None, bool]:
    """What one compile's guards on the dict ``root`` show of its items: the constants
    guarded (``root['flag'] == True``, ``is None``), the keys shown there (any guard on
    an item, ``___dict_contains``), the keys shown not there (``not ___dict_contains``),
    its length (``len(root) == n``, ``not root``), and whether its keys' order is
    guarded (a ``DictGuardManager``: the printout shows neither its length nor its
    keys)."""
    values: dict[str, object] = {}
    present: set[str] = set()
    absent: set[str] = set()
    length: int | None = None
    ordered = False
    for code in codes:
        if code == "DictGuardManager":
            ordered = True
            continue
        if len(code) > MAX_GUARD_CHARS:
            continue
        m = _TYPE_RE.match(code)
        try:
            tree = ast.parse(m.group(1) if m else code, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        negated = isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.Not)
        inner = tree.operand if negated else tree  # type: ignore[attr-defined]
        if m is None and _is_root(inner, root):
            length = 0 if negated else length
            continue
        if (m is None and isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                and inner.func.id == "___dict_contains" and len(inner.args) == 2
                and isinstance(inner.args[0], ast.Constant) and isinstance(inner.args[0].value, str)
                and _is_root(inner.args[1], root)):
            (absent if negated else present).add(inner.args[0].value)
            continue
        if (m is None and isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq)
                and isinstance(tree.left, ast.Call) and isinstance(tree.left.func, ast.Name)
                and tree.left.func.id == "len" and len(tree.left.args) == 1 and _is_root(tree.left.args[0], root)):
            ok, n = guard_literal(tree.comparators[0])
            length = n if ok and type(n) is int else length
            continue
        for node in ast.walk(tree):  # any guard on an item shows it there
            if (isinstance(node, ast.Subscript) and _is_root(node.value, root)
                    and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
                present.add(node.slice.value)
        if m is None and isinstance(tree, ast.Compare) and len(tree.ops) == 1:
            left, op = tree.left, tree.ops[0]
            ok, want = guard_literal(tree.comparators[0])
            if (ok and isinstance(left, ast.Subscript) and _is_root(left.value, root)
                    and isinstance(left.slice, ast.Constant) and isinstance(left.slice.value, str)
                    and (isinstance(op, ast.Eq) or (isinstance(op, ast.Is) and want is None))):
                values[left.slice.value] = want
    return values, present, absent, length, ordered


def recorded_item(record: Mapping[str, object], root: str, name: str) -> tuple[str, object]:
    """What one recorded compile's guards on the dict ``root`` say of its item ``name``:
    ``("value", v)`` where they guard it equal to a constant, ``("given", None)`` where
    they show it there otherwise (a tensor's guards, ``___dict_contains``), ``("absent",
    None)`` where they show it was not there (``not ___dict_contains(name, ...)``, an
    empty dict, or a length equal to the number of other keys they show there), and
    ``("unknown", None)`` where the record does not hold every guard of its compile, the
    code iterates the dict (its keys' order is guarded, and the printout does not show
    them), or the guards do not say. Parsed with :mod:`ast`, never run."""
    codes = record.get(GUARDS_OF + root)
    if record.get(ALL_GUARDS) is not True or not isinstance(codes, tuple) or not codes \
            or not all(isinstance(c, str) for c in codes):
        return "unknown", None
    values, present, absent, length, ordered = _dict_facts(codes, root)  # type: ignore[arg-type]
    if ordered:
        return "unknown", None
    if name in values:
        return "value", values[name]
    if name in present:
        return "given", None
    if name in absent or (length is not None and length == len(present)):
        return "absent", None
    return "unknown", None


def args_reach(record: Mapping[str, object], position: int) -> bool | None:
    """Whether the call of a recorded compile of a module compiled whole gave the
    parameter at ``position`` positionally (``L['args']`` longer than it): from its
    guards ``not L['args']`` and ``len(L['args']) == n``; None where they do not say."""
    codes = record.get(GUARDS_OF + "L['args']")
    if record.get(ALL_GUARDS) is not True or not isinstance(codes, tuple):
        return None
    for code in codes:
        if code == "not L['args']":
            return False
        m = re.fullmatch(r"len\(L\['args'\]\) == ([0-9]{1,6})", code) if isinstance(code, str) else None
        if m is not None:
            return int(m.group(1)) > position
    return None


def left_out_in(records: Sequence[Mapping[str, object]], params: Sequence[str], name: str,
                default: object) -> list[object]:
    """``default`` once per recorded compile of a module compiled whole whose guards show
    its parameter ``name`` left out of the call (not in ``L['kwargs']``, and ``L['args']``
    too short to reach it; ``params``: the frame's positional parameters): the value
    that compile read, as a recorded constant."""
    out = []
    for r in records:
        if recorded_item(r, "L['kwargs']", name)[0] != "absent":
            continue
        if name not in params or args_reach(r, list(params).index(name)) is False:
            out.append(default)
    return out


def _differences(record: Mapping[str, object], root: str, given: Mapping[str, object]) -> str:
    """The keywords in which the call's ``given`` differs from a recorded compile's dict,
    as far as its guards show them: ``output_hidden_states (not given there)``,
    ``flag=True (False there)``, ``mask (given there)``; empty where they show none."""
    out = []
    for k, v in given.items():
        state, was = recorded_item(record, root, k)
        if state == "absent":
            out.append(f"{k} (not given there)")
        elif state == "value" and not (not isinstance(v, TensorArg) and same_value(_value(v), was)):
            out.append(f"{k}={v if isinstance(v, TensorArg) else text_of(_value(v))} ({text_of(was)} there)")
    codes = record.get(GUARDS_OF + root)
    if isinstance(codes, tuple) and all(isinstance(c, str) for c in codes):
        values, present, _, _, _ = _dict_facts(codes, root)  # type: ignore[arg-type]
        out += [f"{k} (given there)" for k in sorted(present | set(values)) if k not in given]
    return ", ".join(out)


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
    failed = next(((g, r) for (o, g), r in zip(judged, records, strict=True) if o == "fail"), None)
    if failed is not None:
        differs = _differences(failed[1], root, given)
        where = f"a traced compile that looked key {key[:12]} up"
        head = (f"differs in {differs} from {where} (Dynamo's guard `{failed[0]}` fails)" if differs
                else f"fails `{failed[0]}`, Dynamo's guard in {where}")
        return ParamAccount("**kwargs", shown, bool(given), "undecided", Reason(
            f"{what}: {head}: torch traces the call again, and whether that graph is this key's the guards cannot "
            "tell (a flag such as return_dict may change only what the call returns; a run's trace of a call with "
            "these keywords would)", "kwargs-differs-from-record"))
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


__all__ = ["ALL_GUARDS", "GUARDS_OF", "ItemsGiven", "args_reach", "guard_literal", "judge_record", "kwargs_account",
           "left_out_in", "recorded_item"]


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
    if acc.status == "accounted":
        return [replace(acc, name=name, value=str(v), given=True, source=src) for name, src, v in own]
    out = [_item_account(acc, call.key.key, root, name, src, v, recorded) for name, src, v in own]
    return out if any(a.status != "accounted" for a in out) else [*out, acc]


def _item_account(acc: ParamAccount, key: str, root: str, name: str, src: str, v: object,
                  records: Sequence[Mapping[str, object]]) -> ParamAccount:
    """One keyword of a dict that passes no recorded compile's guards whole, by what the
    records' guards say of it alone: the value a compile that looked the key up was
    guarded at (accounted, ``trace-guard``), or not given there or another value there
    (undecided, naming it: torch traces again, and the graph may be this key's all the
    same); else the dict's account ``acc``."""
    value = _value(v)
    said = [recorded_item(r, root, name) for r in records]
    shown = f"{name}={text_of(value)}"
    where = f"a traced compile that looked key {key[:12]} up"
    if any(state == "value" and same_value(w, value) for state, w in said):
        return ParamAccount(name, str(v), True, "accounted", Reason(
            f"{shown}: Dynamo's guard on {root} in {where}", "trace-guard"), src, "Dynamo's guard in a traced run")
    other = next((("not given" if state == "absent" else f"{text_of(w)}") for state, w in said
                  if state in ("absent", "value")), None)
    if other is None:
        return replace(acc, name=name, value=str(v), given=True, source=src)
    return ParamAccount(name, str(v), True, "undecided", Reason(
        f"{shown}: {other} in {where} (Dynamo's guards on {root}): torch traces the call again, and whether that "
        f"graph is this key's the guards cannot tell ({name} may change only what the call returns; a run's "
        "trace of a call with it would)", "kwargs-differs-from-record"), src)
