"""Which ``torch.dtype`` a key's graph was traced with, read from the constant it left there.

Dynamo passes a ``torch.dtype`` argument (``def cast_to(x, dtype=torch.float16)``) to
the graph as a constant and guards its value (torch/_dynamo/variables/builder.py
wraps it as a constant; the guard is not in the cache). A call with another dtype
traces again, and the graph differs where the dtype reached an op: torch looks up
another key. Which dtype a key was traced with is read from its printed graph, only
where the parameter reaches one op directly:

* ``R.to(dtype)`` or ``R.to(dtype=dtype)`` (no other argument): the op is
  ``prims.convert_element_type(R, dtype)`` or ``aten._to_copy(R, dtype=dtype)``, its
  first operand the receiver's value: a graph input from the parameter ``R``, or the
  output of the op the receiver's expression computes last (``mul`` of ``(x * 2)``).
  ``.to`` of a tensor's own dtype returns the tensor: no op. Where the statement
  traced ops and has no dtype constant, the key was traced with the receiver's own
  dtype, but only if the result is read (the statement returns an arithmetic
  expression of it, so that a convert would have stayed in the graph); the
  receiver's dtype is then read off its graph input or its op;
* a factory given ``dtype=dtype`` (``torch.zeros(..., dtype=dtype)``, ``torch.full``,
  ``torch.arange``, ``x.new_zeros``...): the op (``full``, ``arange``...) carries
  ``dtype = torch.NAME``.

The statement that reads it (the graph's ``# File: PATH:LINE`` comments name it)
must have exactly one op with a dtype constant (the one above). Anything else, a
dtype reached through an expression (``getattr(torch, name)``, a dict lookup, a
local assigned from it, a test), a second read in one statement, or an op that is
not the expected one, is ``unknown``, naming what was read. :func:`dtype_provenance`
judges the call's dtype against what was read (``same``: the key's graph;
``differs``: another graph). Never imports torch, never runs the source or the graph.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.ast_reads import SIMPLE_STATEMENTS
from fxcache_core.lookup.ast_reads import parents as _parents
from fxcache_core.lookup.ast_reads import root_name as _root_name
from fxcache_core.lookup.binding import (
    DTYPE_ABBRS,
    DTYPE_ALIASES,
    InputValue,
    TensorArg,
    dtype_of_abbr,
)
from fxcache_core.lookup.floats import graph_text
from fxcache_core.lookup.pyvalues import TorchDtype
from fxcache_core.lookup.traced_lines import signature_lines, traced_lines
from fxcache_core.reasons import Reason

__all__ = ["DtypeProvenance", "default_dtype", "dtype_account", "dtype_evidence", "dtype_provenance", "graph_nodes"]

_DTYPES = frozenset(DTYPE_ABBRS.values())
_DTYPE_TOKEN_RE = re.compile(r"(?<![\w.])torch\.(\w+)(?!\w)")
_NODE_RE = re.compile(r"^\s*(?P<name>\w+): \"(?P<type>[^\"]{0,2000})\" = torch\.ops\.(?:aten|prims)\."
                      r"(?P<op>\w+)\.\w+\((?P<args>.*)\)$")
_PLACEHOLDER_RE = re.compile(r"(?P<name>\w+): \"(?P<type>[^\"]{0,2000})\"")

# A factory's torch function (or tensor method) -> the aten ops it may print as.
_FACTORIES: dict[str, frozenset[str]] = {
    **dict.fromkeys(("zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
                     "new_zeros", "new_ones", "new_full", "new_empty"),
                    frozenset({"full", "empty", "zeros", "ones", "full_like", "empty_like", "zeros_like",
                               "ones_like", "new_zeros", "new_ones", "new_full", "new_empty", "empty_strided",
                               "empty_permuted", "empty_memory_format"})),
    "arange": frozenset({"arange", "iota"}),
    "eye": frozenset({"eye"}),
    "linspace": frozenset({"linspace"}),
    "rand": frozenset({"rand", "uniform"}),
    "randn": frozenset({"randn", "normal"}),
}
_CONVERTS = frozenset({"convert_element_type", "_to_copy"})
# The aten op a Python operator between tensors computes (its name's stem).
_BINOP_STEMS: dict[type[ast.operator], frozenset[str]] = {
    ast.Add: frozenset({"add"}), ast.Sub: frozenset({"sub", "rsub"}), ast.Mult: frozenset({"mul"}),
    ast.Div: frozenset({"div"}), ast.Pow: frozenset({"pow"}),
}


def default_dtype(text: str) -> TorchDtype | None:
    """The ``torch.dtype`` a parameter's default names, as the source writes it
    (``torch.float16``, ``torch.half``): a dotted ``torch.NAME`` of a dtype, read as
    text (never imported); None for anything else."""
    m = re.fullmatch(r"torch\.(\w+)", text.strip())
    if m is None:
        return None
    name = DTYPE_ALIASES.get(m.group(1), m.group(1))
    return TorchDtype(name) if name in _DTYPES else None


@dataclass(frozen=True, slots=True)
class Node:
    """One op line of a printed graph: its output ``name``, printed ``dtype`` (torch's
    name, None when not a known tensor type), the op's name (``convert_element_type``),
    its arguments as printed, and the ``file``/``line`` of the statement it was traced
    from."""

    name: str
    dtype: str | None
    op: str
    args: str
    file: str
    line: int

    @property
    def dtypes(self) -> list[str]:
        """The dtype constants among its arguments (``torch.float16`` -> ``float16``)."""
        return [t for t in _DTYPE_TOKEN_RE.findall(self.args) if t in _DTYPES]

    @property
    def first_operand(self) -> str | None:
        m = re.match(r"\s*(\w+)\s*(?:,|$)", self.args)
        return m.group(1) if m is not None else None


@dataclass(frozen=True, slots=True)
class Graph:
    """A printed graph's op lines (those under a ``# File:`` comment) and its inputs
    (placeholder name -> printed dtype, in order)."""

    nodes: tuple[Node, ...]
    inputs: tuple[tuple[str, str | None], ...]


def _dtype_of(printed: str) -> str | None:
    m = re.match(r"([a-z0-9]+)\[", printed)
    return dtype_of_abbr(m.group(1)) if m is not None else None


def graph_nodes(graph: str) -> Graph:
    """The op lines and inputs of a printed graph (``aot_forward_graph_str``,
    ``inductor_post_grad_graph_str``); at most :data:`~fxcache_core.lookup.traced_lines.MAX_LINES` lines are read."""
    inputs: list[tuple[str, str | None]] = []
    in_sig = False
    for text in signature_lines(graph):
        if in_sig or "def forward(" in text:
            in_sig = True
            sig = text.split("def forward(", 1)[-1]
            inputs += [(m.group("name"), _dtype_of(m.group("type"))) for m in _PLACEHOLDER_RE.finditer(sig)]
            if text.rstrip().endswith("):"):
                break
    nodes: list[Node] = []
    for file, line, _code, text in traced_lines(graph):
        m = _NODE_RE.match(text)
        if m is not None:
            nodes.append(Node(m.group("name"), _dtype_of(m.group("type")), m.group("op"), m.group("args"), file, line))
    return Graph(tuple(nodes), tuple(inputs))


@dataclass(frozen=True, slots=True)
class DtypeProvenance:
    """What the call's ``torch.dtype`` does to one key's graph.

    Attributes:
        status: ``same`` (the key's graph was traced with it), ``differs`` (with
            another: torch traces another graph), ``unknown``.
        why: in words, naming the parameter, the statement's line and what was read;
            codes ``dtype-constant-same``, ``dtype-constant-differs``,
            ``dtype-provenance-unknown``.
        traced: the dtype the key was traced with, where read.
    """

    status: Literal["same", "differs", "unknown"]
    why: Reason
    traced: TorchDtype | None = None


@dataclass(frozen=True, slots=True)
class _Read:
    kind: Literal["to", "factory"]
    stmt: ast.stmt
    call: ast.Call
    factory: str = ""




def _read(n: ast.Name, parents: dict[ast.AST, ast.AST], fn: ast.AST, param: str) -> _Read | str:
    """What one read of ``param`` is: a direct dtype of ``.to`` or of a factory, or why not."""
    stmt: ast.stmt | None = None
    cur: ast.AST | None = n
    while cur is not None and cur is not fn:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return f"read in a nested function or lambda (line {n.lineno})"
        if stmt is None and isinstance(cur, ast.stmt):
            stmt = cur
        cur = parents.get(cur)
    if not isinstance(n.ctx, ast.Load):
        return f"assigned at line {n.lineno}"
    parent = parents.get(n)
    if isinstance(parent, ast.expr):
        why = f"read through {ast.unparse(parent)[:80]} (line {n.lineno}), not passed as it is to .to() or a factory"
    elif isinstance(parent, ast.keyword):
        callee = parents.get(parent)
        name = ast.unparse(callee.func)[-40:] if isinstance(callee, ast.Call) else "a call"
        why = f"passed as {parent.arg}= to {name}() (line {n.lineno}), which is not .to() or a factory"
    else:
        why = f"assigned to a local (line {n.lineno}: {ast.unparse(parent)[:60]})" if isinstance(
            parent, (ast.Assign, ast.AnnAssign)) else f"read at line {n.lineno}, not passed to .to() or a factory"
    if stmt is None or not isinstance(stmt, SIMPLE_STATEMENTS):
        kind = type(stmt).__name__.lower() if stmt is not None else "expression"
        return f"read in the {kind} statement at line {n.lineno}"
    if isinstance(parent, ast.keyword):
        call = parents.get(parent)
        if parent.arg != "dtype" or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            return why
        attr = call.func.attr
        if attr == "to" and not call.args and len(call.keywords) == 1:
            return _Read("to", stmt, call)
        root = _root_name(call.func)
        if attr in _FACTORIES and (attr.startswith("new_") or root == "torch") and \
                sum(k.arg == "dtype" for k in call.keywords) == 1:
            return _Read("factory", stmt, call, attr)
        return why
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "to" \
            and parent.args == [n] and not parent.keywords:
        return _Read("to", stmt, parent)
    return why


def _stems(receiver: ast.expr) -> frozenset[str] | None:
    """The aten op (its name's stem) the receiver's expression computes last, or None."""
    if isinstance(receiver, ast.BinOp):
        return _BINOP_STEMS.get(type(receiver.op))
    if isinstance(receiver, ast.UnaryOp) and isinstance(receiver.op, ast.USub):
        return frozenset({"neg"})
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute):
        return frozenset({receiver.func.attr.rstrip("_")})
    return None


def _of_stem(op: str, stems: Iterable[str]) -> bool:
    return any(op == s or op.startswith(s + "_") for s in stems)


def _live(call: ast.Call, stmt: ast.stmt, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether the value of ``call`` is returned, as it is or through arithmetic and
    tuples: an output of the graph, which no pass removes."""
    if not isinstance(stmt, ast.Return):
        return False
    cur: ast.AST = call
    while cur is not stmt:
        p = parents.get(cur)
        if p is None or not (p is stmt or isinstance(p, (ast.BinOp, ast.UnaryOp, ast.Tuple))):
            return False
        cur = p
    return True


def dtype_provenance(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str,
                     value: TorchDtype, tensor_params: frozenset[str],
                     input_source: Callable[[str], str | None] = lambda _: None,
                     param_sources: Callable[[str], Sequence[str]] = lambda p: (f"L[{p!r}]",),
                     ) -> DtypeProvenance | None:
    """What the call's ``value`` of ``param`` does to the key whose printed graph is
    ``graph``, traced from ``fn`` in ``file`` (see the module docstring). None where
    ``fn`` never reads ``param``. ``tensor_params``: the parameters that are tensors;
    ``input_source``: a graph input's placeholder name (``arg2_1``) -> its Dynamo source
    (``L['x']``), None where not known; ``param_sources``: a parameter's sources in the
    key (``L['x']``, ``L['args'][0]``...). Raises nothing."""
    parents = _parents(fn)
    names = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param]
    if not names:
        return None
    reads: list[_Read] = []
    for n in sorted(names, key=lambda n: (n.lineno, n.col_offset)):
        r = _read(n, parents, fn, param)
        if isinstance(r, str):
            return _unknown(param, r)
        if any(o.stmt is r.stmt for o in reads):
            return _unknown(param, f"read twice in the statement at line {r.stmt.lineno}")
        reads.append(r)
    g = graph_nodes(graph)
    found: list[tuple[str, str, int, bool]] = []  # dtype, how, line, whether a convert shows it
    for r in reads:
        got = _traced(r, g, file, param, tensor_params, input_source, param_sources, parents)
        if isinstance(got, DtypeProvenance):
            return got
        found.append(got)
    if len({d for d, _, _, _ in found}) != 1:
        shown = ", ".join(f"torch.{d} at line {line}" for d, _, line, _ in found)
        return _unknown(param, f"its reads show several dtypes ({shown})")
    traced, how, line, shown = next((f for f in found if f[3]), found[0])  # a convert shows it, if one does
    if not shown and traced == value.name:
        # .to(None), or .to() of the device the tensor is on, makes no op either, and is
        # another graph than .to(torch.float32) (Dynamo's graph keeps the argument); a
        # factory given dtype=None makes the op of the default or inferred dtype.
        also = ("so does a .to() given None or the tensor's device" if how.startswith("its graph converts")
                else "a call given dtype=None makes the same op")
        return _unknown(param, f"{how} (line {line}), and {also}: whether the key was traced with "
                               f"{param}={value!r} the graph does not say")
    if traced == value.name:
        return DtypeProvenance("same", Reason(
            f"{param}={value!r}: this key's graph was traced with it ({how}, line {line})",
            "dtype-constant-same"), TorchDtype(traced))
    was = f"{param}=torch.{traced}" if shown else f"another value than {value!r}"
    return DtypeProvenance("differs", Reason(
        f"{param}={value!r}: this key's graph was traced with {was} ({how}, line {line}); "
        "Dynamo guards a torch.dtype argument and puts it in the graph: torch traces another graph",
        "dtype-constant-differs"), TorchDtype(traced) if shown else None)


def _traced(r: _Read, g: Graph, file: str, param: str, tensor_params: frozenset[str],
            input_source: Callable[[str], str | None], param_sources: Callable[[str], Sequence[str]],
            parents: dict[ast.AST, ast.AST]) -> tuple[str, str, int, bool] | DtypeProvenance:
    """The dtype one read shows the key was traced with: (dtype, how, line, True), or for a
    ``.to`` that made no op (dtype of the receiver, how, line, False), or why not."""
    lo, hi = r.stmt.lineno, r.stmt.end_lineno or r.stmt.lineno
    mine = [o for o in g.nodes if o.file == file and lo <= o.line <= hi]
    if not mine:
        return _unknown(param, f"no op of this key's graph was traced from line {lo} (the trace did not "
                               "reach it, or its ops were folded)")
    with_dtype = [o for o in mine if o.dtypes]
    if len(with_dtype) > 1:
        shown = ", ".join(f"{o.op}(torch.{o.dtypes[0]})" for o in with_dtype[:4])
        return _unknown(param, f"the ops traced from line {lo} hold several dtype constants ({shown}), and "
                               "which one is its the graph does not say")
    if r.kind == "factory":
        stems = _FACTORIES[r.factory]
        if len(with_dtype) != 1 or with_dtype[0].op not in stems or len(set(with_dtype[0].dtypes)) != 1:
            return _unknown(param, f"no op traced from line {lo} is {r.factory}'s with one dtype constant")
        got = with_dtype[0].dtypes[0]
        # dtype=None gives an op with a dtype too: the default dtype, one inferred from the
        # values (int64, bool), or the receiver's (new_*, *_like). Such a constant rules out
        # every other dtype, but is no evidence of the one it names.
        return got, f"the dtype of its {with_dtype[0].op} op", lo, not (
            got in _NONE_GIVES or r.factory.startswith("new_") or r.factory.endswith("_like"))
    receiver = r.call.func.value  # type: ignore[attr-defined]
    by_name = {o.name: o for o in g.nodes}
    inputs = dict(g.inputs)
    if isinstance(receiver, ast.Name) and receiver.id in tensor_params:
        if receiver.id in _rebound(parents):  # x = x.half(); x.to(dtype): not the graph input's dtype
            return _unknown(param, f"{receiver.id} is assigned in the function, so which tensor .to() converts "
                                   f"at line {lo} is not the graph input of {receiver.id}")
        srcs = set(param_sources(receiver.id))
        own = [i for i in inputs if input_source(i) in srcs]
        if len(own) != 1:
            return _unknown(param, f"the graph input of {receiver.id} is not known here")
        recv_dtype = inputs[own[0]]

        def is_receiver(v: str | None) -> bool:
            return v == own[0]
    else:
        stems_ = _stems(receiver)
        if stems_ is None:
            return _unknown(param, f"which op computes {ast.unparse(receiver)[:60]} (line {lo}) is not read here")
        ops = [o for o in mine if _of_stem(o.op, stems_)]
        if len(ops) != 1:
            return _unknown(param, f"{len(ops)} ops traced from line {lo} compute {ast.unparse(receiver)[:60]}")
        recv_dtype = ops[0].dtype

        def is_receiver(v: str | None) -> bool:
            return v is not None and v == ops[0].name and v in by_name
    if with_dtype:
        o = with_dtype[0]
        if o.op not in _CONVERTS or len(set(o.dtypes)) != 1 or not is_receiver(o.first_operand):
            return _unknown(param, f"the dtype constant traced from line {lo} ({o.op}, torch.{o.dtypes[0]}) is "
                                   f"not shown to convert {ast.unparse(receiver)[:60]}")
        return o.dtypes[0], f"its {o.op} to torch.{o.dtypes[0]}", lo, True
    # No convert: .to of the receiver's own dtype (or of None, or of its device), if the result is read.
    if not _live(r.call, r.stmt, parents) or recv_dtype is None:
        return _unknown(param, f"the ops traced from line {lo} convert nothing: .to() of a tensor's own dtype "
                               "makes no op, but so does one whose result is not read, and this one is not "
                               "shown to be read")
    return (recv_dtype, f"its graph converts {ast.unparse(receiver)[:60]}, a {recv_dtype} tensor, to nothing",
            lo, False)


_NONE_GIVES = frozenset({"float32", "float64", "int64", "bool"})
"""Dtypes a factory given ``dtype=None`` may make (the default dtype, or one inferred from
its values): torch/_refs/__init__.py's ``full``/``arange`` and ``torch.get_default_dtype``."""


def _rebound(parents: dict[ast.AST, ast.AST]) -> frozenset[str]:
    """The names the function (the tree ``parents`` maps) binds anywhere: assigned, a loop's
    or a ``with``'s target, a walrus, deleted."""
    return frozenset(n.id for n in parents if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)))


def _unknown(param: str, why: str) -> DtypeProvenance:
    return DtypeProvenance("unknown", Reason(
        f"{param}: {why}: fxcache cannot tell which torch.dtype this key was traced with; Dynamo's guards in a "
        "run's TORCH_TRACE would", "dtype-provenance-unknown"))


def dtype_evidence(catalog: Catalog, key: CacheKey, entry: DecodedEntry, frame: CompiledFrom, name: str,
                   sources: Callable[[str], Sequence[str]], inputs: Mapping[str, InputValue],
                   value: TorchDtype) -> DtypeProvenance | None:
    """:func:`dtype_provenance` of the parameter ``name`` of ``key``'s compiled ``frame``
    for the call's ``value`` (given, or its default), read from the key's printed graph
    (:func:`~fxcache_core.lookup.floats.graph_text`) and the source of the frame; the
    graph's inputs are named by ``entry``'s sources. ``sources``: a parameter's sources in
    the key (the accounting's); ``inputs``: the call's, by source. None where the
    source or the graph is not readable, or the function never reads ``name``: the
    other evidence decides."""
    fn = function_node(frame.file, frame.line, frame.function)
    graph = graph_text(catalog, key) if fn is not None else None
    if fn is None or graph is None:
        return None
    tensors = frozenset(p for p in frame.params if any(isinstance(inputs.get(s), TensorArg) for s in sources(p)))
    a = fn.args
    tensors |= frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                         if p.annotation is not None and "Tensor" in ast.unparse(p.annotation)
                         and "None" not in ast.unparse(p.annotation))
    placeholders = [n for n, _ in graph_nodes(graph).inputs]
    by_placeholder = ({n: i.source for n, i in zip(placeholders, entry.inputs, strict=True)}
                      if len(placeholders) == len(entry.inputs) else {})
    return dtype_provenance(fn, frame.file, graph, name, value, tensors, by_placeholder.get, sources)


def dtype_account(catalog: Catalog, key: CacheKey, entry: DecodedEntry, frame: CompiledFrom, name: str,
                  sources: Callable[[str], Sequence[str]], inputs: Mapping[str, InputValue],
                  value: TorchDtype) -> tuple[str, Reason, str] | None:
    """:func:`dtype_evidence` as the parameters' accounting
    (:func:`fxcache_core.lookup.baked_accounts.baked_account`) takes it: (status, reason,
    brief): ``accounted`` with a ``baked-constant`` reason, ``rules-out`` or
    ``undecided``; None where there is no evidence."""
    got = dtype_evidence(catalog, key, entry, frame, name, sources, inputs, value)
    if got is None:
        return None
    if got.status == "same":
        return "accounted", Reason(got.why.text, "baked-constant"), "the dtype its graph was traced with"
    return ("rules-out" if got.status == "differs" else "undecided"), got.why, ""
