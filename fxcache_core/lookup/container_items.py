"""The items of a dict, dataclass or NamedTuple argument that the code reads one by one,
each accounted for as a parameter of its own.

Dynamo wraps a dict argument whose values are Python constants (``ConstDictVariable``)
and an instance of a dataclass or a NamedTuple without reading them whole: it guards
the container's type (``TYPE_MATCH``) and, for each item the code reads, the item under
its own source (``L['cfg']['n']``: ``DictGetItemGuardAccessor``; ``L['cfg'].n``:
``GetAttrGuardAccessor``), with the guard a value of that type has as an argument of
its own (``EQUALS_MATCH``, ``TRUE_MATCH``: torch/_dynamo/guards.py). An item the code
never reads is not guarded, and each item read is specialized as an argument of its
type is (``VariableBuilder`` in torch/_dynamo/variables/builder.py): an int as a size or
a slice bound, a float as an op's scalar, a bool or str the code branches on.

So where every read of a parameter is an item with a constant key or an attribute
(``cfg['n']``, ``cfg.scale``: :func:`item_reads`), and the call gives items of it
(``--inputs "cfg['n']=4"``, ``cfg.scale=0.5``), :func:`item_accounts` accounts for each
item read as the rules of :mod:`~fxcache_core.lookup.accounting` account for a
parameter: it reads the function with each item standing as a parameter of its own
(:func:`item_view`: the item replaced by a name, in the source and in the graph's
``code:`` comments alike), and asks the rules of the constants
(:func:`~fxcache_core.lookup.int_exprs.value_provenance`,
:func:`~fxcache_core.lookup.float_ops.float_op_provenance`,
:func:`~fxcache_core.lookup.float_exprs.float_provenance`) and of the branches
(``ParamAccounting.branch``) about it. An item read and not given is undecided
(``item-not-given``), naming it. The container's type is assumed to be the one the key
was compiled with (a dict for ``cfg['n']``), and said. Nothing here imports torch,
runs the source or the graph.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fxcache_core.cache.keys import KeyKind
from fxcache_core.errors import param
from fxcache_core.functions.frames import resume_parent
from fxcache_core.functions.params import reads_of_def
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.binding import DynamicMode, TensorArg
from fxcache_core.lookup.float_exprs import Provenance, float_provenance
from fxcache_core.lookup.float_ops import float_op_provenance
from fxcache_core.lookup.floats import graph_text
from fxcache_core.lookup.int_exprs import value_provenance
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.pyvalues import PyValue, kind_of, same_value, text_of
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.reasons import Reason

__all__ = ["ItemRead", "graph_view", "item_accounts", "item_reads", "item_view"]

MAX_ITEMS = 64
"""Items read of one parameter at most (a function reading more is left as it was)."""


@dataclass(frozen=True, slots=True)
class ItemRead:
    """One item of a container parameter that the code reads.

    Attributes:
        text: as the user writes it (``cfg['n']``, ``cfg.scale``).
        source: its Dynamo source (``L['cfg']['n']``, ``L['cfg'].scale``).
        alias: the name it stands as in the item view (:func:`item_view`).
        pattern: a regex that finds it in a statement's text (``cfg["n"]`` too).
    """

    text: str
    source: str
    alias: str
    pattern: str


def item_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[ItemRead, ...] | None:
    """The items of parameter ``name`` that ``fn``'s body reads, in source order, where
    every read of it is one: a subscript with a str constant (``cfg['n']``) or an
    attribute (``cfg.n``), loaded, never stored; None where it is read any other way
    (whole, passed on, iterated, a method called, ``cfg.get(...)``, an item assigned), not at all, or for
    more than :data:`MAX_ITEMS` items."""
    parents = ast_parents(fn)
    found: dict[str, ItemRead] = {}
    nodes = sorted((x for stmt in fn.body for x in ast.walk(stmt) if hasattr(x, "lineno")),
                   key=lambda x: (x.lineno, x.col_offset))
    for n in nodes:
        if isinstance(n, ast.arg) and n.arg == name:
            return None  # a nested function's or lambda's parameter shadows it
        if not (isinstance(n, ast.Name) and n.id == name):
            continue
        if not isinstance(n.ctx, ast.Load):
            return None
        p = parents.get(n)
        if isinstance(p, ast.Subscript) and p.value is n and isinstance(p.ctx, ast.Load) \
                and isinstance(p.slice, ast.Constant) and type(p.slice.value) is str:
            key = p.slice.value
            text, source = f"{name}[{key!r}]", f"L[{name!r}][{key!r}]"
            pattern = rf"(?<![\w.]){re.escape(name)}\s*\[\s*(?:'{re.escape(key)}'|\"{re.escape(key)}\")\s*\]"
        elif isinstance(p, ast.Attribute) and p.value is n and isinstance(p.ctx, ast.Load) and not (
                isinstance(parents.get(p), ast.Call) and parents[p].func is p):  # a method called: no item
            text, source = f"{name}.{p.attr}", f"L[{name!r}].{p.attr}"
            pattern = rf"(?<![\w.]){re.escape(name)}\s*\.\s*{re.escape(p.attr)}(?!\w)"
        else:
            return None
        if text not in found:
            if len(found) >= MAX_ITEMS:
                return None
            found[text] = ItemRead(text, source, f"__fxitem{len(found)}__", pattern)
    return tuple(found.values()) or None


def item_view(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, items: Sequence[ItemRead]
              ) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """A copy of ``fn`` where each read of an item of ``name`` is the name of its alias,
    a keyword-only parameter of its own (no default): the rules that read a parameter
    read the item."""
    by_text = {i.text: i.alias for i in items}

    class _Items(ast.NodeTransformer):
        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id == name and isinstance(node.slice, ast.Constant) \
                    and type(node.slice.value) is str and (a := by_text.get(f"{name}[{node.slice.value!r}]")):
                return ast.copy_location(ast.Name(a, ast.Load()), node)
            return self.generic_visit(node)

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if isinstance(node.value, ast.Name) and node.value.id == name and (a := by_text.get(f"{name}.{node.attr}")):
                return ast.copy_location(ast.Name(a, ast.Load()), node)
            return self.generic_visit(node)

    view = _Items().visit(copy.deepcopy(fn))
    view.args.kwonlyargs = [*view.args.kwonlyargs, *(ast.arg(i.alias) for i in items)]
    view.args.kw_defaults = [*view.args.kw_defaults, *([None] * len(items))]
    return ast.fix_missing_locations(view)


def graph_view(graph: str, items: Sequence[ItemRead]) -> str:
    """``graph`` with each item written in its ops' ``# File: ... code:`` comments
    replaced by its alias, as :func:`item_view` writes the source: the statement a
    comment quotes is the statement of the view."""
    def one(m: re.Match[str]) -> str:
        code = m.group(2)
        for i in items:
            code = re.sub(i.pattern, i.alias, code)
        return m.group(1) + code

    return re.sub(r"(# File: .*?, code: )(.*)", one, graph)


class ParamAccounting(Protocol):
    """What :func:`item_accounts` reads of one parameter's accounting
    (:class:`fxcache_core.lookup.accounting.ParamAccounting`, which imports this module),
    and makes another of its class for an item (the view's reads, the item's parameter)."""

    ledger: Any
    call: Any
    frame: Any
    reads: Any
    p: Any
    user_src: str | None

    def branch(self, v: object, what: str) -> ParamAccount | None: ...


def item_accounts(acc: ParamAccounting) -> list[ParamAccount] | None:
    """One account per item of ``acc``'s parameter that the code reads (the module
    docstring), where the call gives the parameter item by item and every read of it is
    an item; None elsewhere (the parameter's own accounting decides)."""
    p, call, frame = acc.p, acc.call, acc.frame
    if acc.user_src is not None or p.assigned or acc.reads.opaque or not p.read:
        return None
    base = f"L[{p.name!r}]"
    given = {s: v for s, v in call.inputs.items() if s.startswith((base + "[", base + "."))}
    fn = function_node(frame.file, frame.line, resume_parent(frame.function) or frame.function) if given else None
    items = item_reads(fn, p.name) if fn is not None else None
    if fn is None or items is None:
        return None
    view = item_view(fn, p.name, items)
    reads = reads_of_def(view, frame.file)
    graph = graph_text(acc.ledger.catalog, call.key)
    gview = graph_view(graph, items) if graph is not None else None
    values: dict[str, object] = {}
    tensors: set[str] = set()
    for src, v in call.inputs.items():
        if (m := LOCAL_RE.fullmatch(src)) is not None:
            if isinstance(v, TensorArg):
                tensors.add(m.group(1))
            else:
                values[m.group(1)] = v.value if isinstance(v, PyValue) else v
    for i in items:
        v = given.get(i.source)
        if v is not None and not isinstance(v, TensorArg):
            values[i.alias] = v.value if isinstance(v, PyValue) else v
        elif isinstance(v, TensorArg):
            tensors.add(i.alias)
    out = []
    for i in items:
        out.append(_item(acc, reads, view, gview, i, given.get(i.source), values, frozenset(tensors)))
    subscript = any("[" in i.text for i in items)
    out.append(ParamAccount(f"type({p.name})", "dict" if subscript else None, True, "assumed", Reason(
        f"{p.name}: {'a dict' if subscript else 'an object read by attribute'}, of the type key "
        f"{call.key.key[:12]} was compiled with (Dynamo guards its type, and each item the code reads, given "
        "item by item)", "container-assumed")))
    return out


def _item(acc: ParamAccounting, reads: Any, view: ast.FunctionDef | ast.AsyncFunctionDef, gview: str | None,
          item: ItemRead, v: object, values: Mapping[str, object], tensors: frozenset[str]) -> ParamAccount:
    call = acc.call

    def result(status: str, how: Reason, brief: str = "") -> ParamAccount:
        shown = None if v is None else str(v) if isinstance(v, TensorArg) else text_of(
            v.value if isinstance(v, PyValue) else v)
        text = str(how).replace(item.alias, item.text)
        return ParamAccount(item.text, shown, v is not None, status, Reason(text, how.code),
                            item.source if v is not None else None, brief.replace(item.alias, item.text))

    if any(t == item.source or t.startswith((item.source + "[", item.source + ".")) for t in call.taken):
        return result("accounted", Reason(f"{item.text}: an input of this key", "key-input"))
    if v is None:
        return result("undecided", Reason(
            f"{item.text}: the code reads it, and the call does not give it: give it with "
            f"{param('inputs')} {item.text}=VALUE", "item-not-given"))
    if isinstance(v, TensorArg):
        return result("accounted", Reason(
            f"{item.text}: a tensor this key takes no input from (the key's own notes say what that decides)",
            "tensor-given"))
    value = v.value if isinstance(v, PyValue) else v
    what = f"{item.text}={text_of(value)}"
    if any(same_value(r[item.source], value) for r in acc.ledger.recorded.get(call.key.key, ()) if item.source in r):
        return result("accounted", Reason(f"{what}: Dynamo's guard in a traced compile that looked this key up",
                                          "trace-guard"), "Dynamo's guard in a traced run")
    baked = _baked(acc, view, gview, item, value, values, tensors)
    if baked is not None and baked[0] != "undecided":
        return result(*baked)
    sub = type(acc)(acc.ledger, call, acc.frame, reads, reads.param(item.alias))
    sub.sources, sub.user_src, sub.given = (item.source,), item.source, v
    branch = sub.branch(value, what) if sub.p is not None else None
    if branch is not None and branch.status == "rules-out":
        return result(branch.status, branch.how, branch.brief)
    if baked is not None:
        return result(*baked)
    if branch is not None:
        return result(branch.status, branch.how, branch.brief)
    return result("undecided", Reason(
        f"{what}: a Python {kind_of(value)} the code reads; the cache does not record which value key "
        f"{call.key.key[:12]} was traced with; Dynamo's guards in a run's TORCH_TRACE would", "constant-unrecorded"))


def _baked(acc: ParamAccounting, view: ast.FunctionDef | ast.AsyncFunctionDef, gview: str | None, item: ItemRead,
           value: object, values: Mapping[str, object], tensors: frozenset[str]) -> tuple[str, Reason, str] | None:
    """The item's value read off the constants of the key's graph, through the view:
    (status, why, brief) as a parameter's ``baked-constant`` is, or None where no rule
    reads it (a str, or no op of the graph computes with it)."""
    if gview is None or isinstance(value, str) or acc.call.key.kind is not KeyKind.AOT_AUTOGRAD:
        return None  # an FX key's post-grad graph is Inductor's, whose passes may fold or drop a constant
    file = acc.frame.file
    prov: Provenance | None = value_provenance(view, file, gview, item.alias, values, tensors)
    scalars = {k: x for k, x in values.items() if type(x) in (int, float)}
    if prov is None and (type(value) in (int, float) or value is None):
        prov = float_op_provenance(view, file, gview, item.alias, values, tensors)
    if prov is None and type(value) in (int, float):
        prov = float_provenance(view, file, gview, item.alias, scalars, tensors)
    if prov is None or prov.status == "unread" or prov.why is None:
        return None
    if prov.status == "differs":
        return "rules-out", prov.why, ""
    if prov.status == "unknown":  # for a bool, None or tuple the branches may still say (as a parameter's)
        return ("undecided", prov.why, "") if type(value) in (int, float) else None
    mode = acc.call.mode
    if type(value) in (int, float) and mode is not DynamicMode.NONE and mode is not DynamicMode.FALSE:
        return "undecided", Reason(
            f"{prov.why}: a fresh process's first call specializes {item.text} so under dynamic=None or False; "
            "under dynamic=True it may take it otherwise (pass the compile's dynamic)", "item-depends-on-mode"), ""
    why = str(prov.why) if str(prov.why).startswith(f"{item.alias}=") else f"{item.text}={text_of(value)}: {prov.why}"
    return "accounted", Reason(why, "baked-constant"), \
        "the constants of its graph"

