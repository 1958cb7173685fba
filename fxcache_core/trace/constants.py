"""The Python values a traced call was compiled for, read from Dynamo's own guards.

Dynamo guards every Python value the code read as a constant (``VariableBuilder``
in torch/_dynamo/variables/builder.py; the guards ``dynamo_cpp_guards_str``
prints, torch/_dynamo/guards.py): ``TRUE_MATCH``/``FALSE_MATCH`` as
``L['clip'] == True``, ``EQUALS_MATCH`` as ``L['act'] == 'gelu'`` or
``L['n'] == 3``, ``NONE_MATCH`` as ``L['mask'] is None``, and a tuple by its type
(``___check_type_id(L['dims'], ...), type=<class 'tuple'>``), length
(``len(L['dims']) == 2``) and items (``L['dims'][0] == 0``). A compile's guards
(:attr:`~fxcache_core.trace.run_facts.TraceCompile.final_guards`) therefore say
which value of each such argument the graph it looked up, and wrote, was traced
with: evidence the cache does not keep.

:func:`guard_constants` reads them (``ast`` only: a guard is text from a trace,
parsed and never run); :func:`key_constants` ties them to the keys each compile
looked up, for ``match`` (:mod:`fxcache_core.lookup.accounting`) and for the
usage store (:func:`fxcache_core.state.usage.record_constants`). An identity guard
(``___check_obj_id``) names an object by its address, not its value, and is not
read. Nothing here imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from fxcache_core.trace.dict_guards import ALL_GUARDS, dict_evidence
from fxcache_core.trace.run_facts import TraceRun
from fxcache_core.trace.state_guards import state_record

MAX_GUARD_CODE_CHARS = 2000
"""A guard's code longer than this is not parsed (a constant guard is one short line)."""
MAX_CONSTANTS = 500
"""At most this many constants are read from one compile's guards."""

_TYPE_RE = re.compile(r"^(?P<call>___check_type_id\(.{1,1500}\)), type=<class '(?P<t>\w{1,20})'>$")
_SOURCE_ROOTS = ("L[",)

Value = object
"""A constant: a bool, None, an int, a float, a str or a tuple of them."""


def _source(node: ast.expr) -> str | None:
    """``L['dims'][0]`` for a chain of subscripts of ``L`` by a str or int constant;
    None for anything else (an attribute, a global, a call)."""
    parts: list[str] = []
    while isinstance(node, ast.Subscript):
        key = node.slice
        if not isinstance(key, ast.Constant) or type(key.value) not in (str, int):
            return None
        parts.append(f"[{key.value!r}]")
        node = node.value
    if not isinstance(node, ast.Name) or node.id != "L" or not parts or not parts[-1].startswith("['"):
        return None  # a local is named by a str: L['x']
    return "L" + "".join(reversed(parts))


def _constant(node: ast.expr) -> tuple[bool, Value]:
    """(True, value) for a literal constant Dynamo prints (``True``, ``'gelu'``,
    ``3``, ``-2.5``), else (False, None)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        v = node.operand.value
        if type(v) in (int, float):
            return True, -v  # type: ignore[operator]
        return False, None
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (bool, int, float, str)):
        return True, node.value
    return False, None


def _read(code: str, values: dict[str, Value], lengths: dict[str, int], types: dict[str, str]) -> None:
    """One guard's code, into ``values`` (source -> value), ``lengths`` and ``types``."""
    if len(code) > MAX_GUARD_CODE_CHARS:
        return
    m = _TYPE_RE.match(code)
    text = m.group("call") if m else code
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if m is not None:
        if isinstance(tree, ast.Call) and tree.args and (src := _source(tree.args[0])) is not None:
            types[src] = m.group("t")
        return
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and len(tree.comparators) == 1):
        return
    op, left, right = tree.ops[0], tree.left, tree.comparators[0]
    if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None:
        if (src := _source(left)) is not None:
            values[src] = None
        return
    if not isinstance(op, ast.Eq):
        return
    ok, value = _constant(right)
    if not ok:
        return
    if (isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len"
            and len(left.args) == 1 and type(value) is int):
        if (src := _source(left.args[0])) is not None:
            lengths[src] = value  # type: ignore[assignment]
        return
    if (src := _source(left)) is not None:
        values[src] = value


def guard_constants(codes: Iterable[str]) -> dict[str, Value]:
    """The constants a compile's guards pin the call's arguments to: source
    (``L['clip']``, ``L['kwargs']['use_cache']``, ``L['dims']``) -> value. A tuple
    whose type, length and every item are guarded is one value (its items are then
    not listed apart); a module's own state (``L['self']...``) and globals are left
    out. At most :data:`MAX_CONSTANTS`."""
    values: dict[str, Value] = {}
    lengths: dict[str, int] = {}
    types: dict[str, str] = {}
    for code in codes:
        _read(code, values, lengths, types)
        if len(values) > MAX_CONSTANTS:
            break
    for src in sorted(lengths, key=len, reverse=True):  # inner tuples first
        n = lengths[src]
        items = [f"{src}[{i}]" for i in range(n)]
        if types.get(src) == "tuple" and all(i in values for i in items):
            values[src] = tuple(values.pop(i) for i in items)
    return {s: v for s, v in values.items() if not s.startswith("L['self']")}


GUARDED_LOCALS = "#locals"
"""A record's entry: the compile's arguments any of its guards names (``L['x']``, and an
item of a module call's ``L['args']``/``L['kwargs']``: ``L['kwargs']['mask']``), kept only
with all of its guards (:data:`~fxcache_core.trace.dict_guards.ALL_GUARDS`). An argument no
guard names did not change what the compile looked up; one named by a guard fxcache does
not read (an object's identity) did."""

_LOCAL_RE = re.compile(r"L\['(\w{1,200})'\](\[(?:'\w{1,200}'|[0-9]{1,6})\])?")


def guarded_locals(codes: Iterable[str]) -> tuple[str, ...]:
    """The arguments ``codes`` (a compile's guards) name: :data:`GUARDED_LOCALS`."""
    out = set()
    for code in codes:
        for m in _LOCAL_RE.finditer(code[:MAX_GUARD_CODE_CHARS]):
            name, item = m.group(1), m.group(2)
            out.add(f"L[{name!r}]" + (item if name in ("args", "kwargs") and item else ""))
    return tuple(sorted(out))


def key_constants(run: TraceRun) -> dict[str, tuple[Mapping[str, Value], ...]]:
    """For each key a compile of ``run`` looked up (hit or wrote), the constants of
    each such compile's guards (:func:`guard_constants`): key -> one mapping per
    compile, without repeats. The key's graph was traced with those values. Each
    mapping also holds the compile's guards on the dicts it read
    (:func:`~fxcache_core.trace.dict_guards.dict_evidence`: ``**kwargs``), where it
    holds all of them the arguments they name (:data:`GUARDED_LOCALS`), and the state the
    compile was entered under (:func:`~fxcache_core.trace.state_guards.state_record`: the
    module's attributes, the global state)."""
    consts: dict[int, dict[str, Value]] = {}
    out: dict[str, list[Mapping[str, Value]]] = {}
    for lk in run.lookups:
        if lk.compile is None or not lk.key or lk.state == "bypass":
            continue
        c = run.compiles[lk.compile]
        if c.final_guards is None:
            continue
        if lk.compile not in consts:
            got = {**guard_constants(c.final_guards), **dict_evidence(c)}
            if got.get(ALL_GUARDS):
                got[GUARDED_LOCALS] = guarded_locals(c.final_guards)
            got.update(state_record(c.final_guards, got.get(ALL_GUARDS) is True))
            consts[lk.compile] = got
        got = consts[lk.compile]
        if got and got not in out.setdefault(lk.key, []):
            out[lk.key].append(got)
    return {k: tuple(v) for k, v in out.items() if v}


__all__ = ["GUARDED_LOCALS", "MAX_CONSTANTS", "guard_constants", "guarded_locals", "key_constants"]
