"""A graph as its entry prints it, and what a static graph baked in where another
takes a SymInt.

:func:`parse_printed_graph` reads a printed graph (an AOTAutograd entry's
``aot_forward_graph_str``, an FX entry's ``inductor_post_grad_graph_str``) into its
placeholders and its lines as tokens; :func:`specialized_values` aligns a static graph
with one of the same function that takes an int as a SymInt, and reads the constant
the static one has in its place (:mod:`fxcache_core.lookup.int_args` uses it). Reads
text only; nothing here imports torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fxcache_core.decode.entries import MAX_GRAPH_LINES, GraphInput, parse_graph_signature

__all__ = ["PrintedGraph", "parse_printed_graph", "specialized_values"]

_TOKEN_RE = re.compile(r"[A-Za-z_]\w*|-?[0-9]+|\S")
_INT_RE = re.compile(r"-?[0-9]+")
_DELETES_RE = re.compile(r";  (?:\w+ = )+None$")
_TRAILING_COMMENT_RE = re.compile(r"\s+# .*$")


@dataclass(frozen=True, slots=True)
class PrintedGraph:
    """A graph as ``GraphModule.print_readable`` prints it.

    Attributes:
        inputs: the placeholders, in order (name, printed type, SymInt expression).
        body: the lines after the signature, as token tuples: comments, blank
            lines and the ``;  x = y = None`` deletion lists (which name the
            placeholders a node frees) left out.
    """

    inputs: tuple[GraphInput, ...]
    body: tuple[tuple[str, ...], ...]


def parse_printed_graph(text: str | None) -> PrintedGraph | None:
    """Read a printed graph (``aot_forward_graph_str``); None without a ``def forward(``.

    At most :data:`~fxcache_core.decode.entries.MAX_GRAPH_LINES` lines are read.
    """
    if not text:
        return None
    lines = text.splitlines()[:MAX_GRAPH_LINES]
    start = next((i for i, ln in enumerate(lines) if "def forward(" in ln), None)
    if start is None:
        return None
    end = start
    if not lines[start].rstrip().endswith("):"):
        end = next((i for i in range(start + 1, len(lines)) if lines[i].strip().startswith("):")), None)
        if end is None:
            return None
    body = []
    for line in lines[end + 1:]:
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        s = _DELETES_RE.sub("", _TRAILING_COMMENT_RE.sub("", s))
        body.append(tuple(_TOKEN_RE.findall(s)))
    return PrintedGraph(parse_graph_signature("\n".join(lines[start:end + 1])), tuple(body))


def specialized_values(dynamic: PrintedGraph, static: PrintedGraph) -> dict[str, int] | None:
    """What ``static`` baked in for the SymInts of ``dynamic``, when the two are
    one trace but for them.

    The graphs are compared line by line and token by token. Where they
    differ, ``dynamic`` must have a SymInt placeholder (``arg1_1``) or a symbol
    (``s86``, in a printed type) and ``static`` an int literal, the same one
    wherever that name appears; or both have placeholders (renumbered when a
    SymInt placeholder before them is gone); or both define a node there, named
    otherwise (a symbolic trace numbers its nodes past those it dropped:
    ``add_3`` for ``add``), one name for the other throughout, each its own
    (never an op's name: ``aten.mul`` is not ``aten.div``).
    The tensor placeholders of the
    two must pair up in order, and the SymInt ones of ``static`` with those of
    ``dynamic`` it did not bake in, with their types equal but for the
    symbols.

    Returns:
        Name -> int for every SymInt placeholder and symbol of ``dynamic``
        that ``static`` has as a constant (a placeholder and its symbol agree),
        or None when the graphs differ in anything else.
    """
    if len(dynamic.body) != len(static.body):
        return None
    d_names = {i.name: i for i in dynamic.inputs if i.name}
    s_names = {i.name for i in static.inputs if i.name}
    symbols = {i.expr for i in dynamic.inputs if i.symbol}
    d_nodes, s_nodes = _nodes(dynamic), _nodes(static)
    values: dict[str, int] = {}
    renamed: dict[str, str] = {}
    nodes: dict[str, str] = {}

    def align(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
        if len(a) != len(b):
            return False
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x == y:
                if x in d_nodes and y in s_nodes and (i == 0 or a[i - 1] != ".") and nodes.setdefault(x, y) != y:
                    return False  # a node kept its name here and was renamed elsewhere
                continue
            inp = d_names.get(x)
            if inp is not None and y in s_names:
                if renamed.setdefault(x, y) != y:
                    return False
            elif ((inp is not None and inp.is_symint) or x in symbols) and _INT_RE.fullmatch(y):
                if values.setdefault(x, int(y)) != int(y):
                    return False
            elif x in d_nodes and y in s_nodes and (i == 0 or a[i - 1] != "."):  # never an op's name
                if nodes.setdefault(x, y) != y:  # a node numbered otherwise (add_3, add): one name throughout
                    return False
            else:
                return False
        return True

    if not all(align(a, b) for a, b in zip(dynamic.body, static.body, strict=True)):
        return None

    def pair(ds: list[GraphInput], ss: list[GraphInput]) -> bool:
        if len(ds) != len(ss):
            return False
        for d, st in zip(ds, ss, strict=True):
            if d.name is None or st.name is None or renamed.setdefault(d.name, st.name) != st.name:
                return False
            if not align(tuple(_TOKEN_RE.findall(d.type)), tuple(_TOKEN_RE.findall(st.type))):
                return False
        return True

    # Tensors stay inputs (their types may give symbol values); SymInts may be baked in.
    tensors = [i for i in dynamic.inputs if not i.is_symint]
    if not pair(tensors, [i for i in static.inputs if not i.is_symint]):
        return None
    kept = []
    for i in (i for i in dynamic.inputs if i.is_symint):
        v = values.get(i.name or "", values.get(i.symbol or ""))
        if v is None:
            kept.append(i)
        elif (i.name and values.setdefault(i.name, v) != v) or (
                i.symbol and values.setdefault(i.symbol, v) != v):
            return None  # a placeholder and its symbol are one value
    if not pair(kept, [i for i in static.inputs if i.is_symint]):
        return None
    if len(set(renamed.values())) != len(renamed) or len(set(nodes.values())) != len(nodes):
        return None
    return values


def _nodes(g: PrintedGraph) -> frozenset[str]:
    """The names ``g``'s lines define (``add_3`` of ``add_3: "f32[...]" = ...``)."""
    return frozenset(line[0] for line in g.body if len(line) > 2 and line[1] == ":" and line[0] != "return")
