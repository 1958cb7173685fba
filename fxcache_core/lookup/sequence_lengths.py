"""A list, tuple or ``*args`` argument's length: what the elements a key takes say
about the calls it can serve.

A key is looked up by its graph, and Dynamo makes each element of a list, a tuple or a
``*args`` parameter (a tuple local of the frame: ``L['xs']``, its elements
``L['xs'][0]``...) that the code computes with an input of that graph. So a key that
takes element ``j`` as an input was traced with a sequence of more than ``j`` elements,
and a call whose sequence ends before ``j`` traces a graph without that input: another
graph (:func:`shorter_sequence`). (Within one process Dynamo also guards the length,
``SEQUENCE_LENGTH`` in torch/_dynamo/variables/builder.py ``wrap_listlike``; a fresh
process traces anew, and only the graph decides.) A call's sequence is the elements it
gives (``xs[0]=[4,4]`` alone is a one-element sequence).

The other way needs the source: a key that does not take an element the call gives was
traced with a shorter sequence only if the code reads that element into the graph
whenever it is there, as a loop over the sequence (or over a slice of it open at the
end) and ``torch.cat``/``torch.stack`` of it do (:func:`reads_every_element`): then the
call's trace takes it as an input, and its graph is another. Where the code reads
elements by index only, an element past them changes nothing (torch hits the key with
it), and nothing here says so. The ``def`` is read with ``ast``
(:func:`~fxcache_core.functions.frames.function_node`), never run. Never imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from fxcache_core.functions.frames import CompiledFrom, function_node
from fxcache_core.reasons import Reason

__all__ = ["EveryElement", "element_of", "reads_every_element", "shorter_sequence", "vararg_name"]

_ELEMENT_RE = re.compile(r"(L\['\w+'\])\[(\d+)\]")
_WRAPPERS = ("zip", "enumerate", "reversed")
"""Builtins whose loop reads every element of each sequence it is given."""
_JOINS = ("cat", "concat", "concatenate", "stack")
"""``torch`` functions whose first argument is a sequence of tensors, every one an input of the op."""


def element_of(src: str) -> tuple[str, int] | None:
    """``(base, index)`` of a sequence element's source (``L['xs'][2]`` -> (``L['xs']``,
    2)); None for any other source (a nested path, a dict key, an attribute)."""
    m = _ELEMENT_RE.fullmatch(src)
    return None if m is None else (m.group(1), int(m.group(2)))


def vararg_name(frame: CompiledFrom | None) -> str | None:
    """The name of the ``*args`` parameter of ``frame``'s function (``xs`` for
    ``def f(*xs)``), read from its source; None where it has none or the source is not
    readable."""
    if frame is None:
        return None
    fn = function_node(frame.file, frame.line, frame.function)
    return None if fn is None or fn.args.vararg is None else fn.args.vararg.arg


def shorter_sequence(src: str, given: Iterable[str]) -> Reason | None:
    """A tensor input ``src`` of the key that is element ``j`` of a sequence
    (``L['xs'][1]``), where the call gives elements of that sequence (``given``: the
    call's sources, ``L['xs'][0]``) and none at ``j`` or past it: the key was traced with
    more elements than the call has, and the call's trace cannot take that input:
    another graph, the reason (``list-shorter``). None where ``src`` is
    no element, the call gives no element of its sequence, or one at ``j`` or later (an
    element left out in the middle is the user's to give)."""
    el = element_of(src)
    if el is None:
        return None
    base, j = el
    indices = [e[1] for g in given if (e := element_of(re.sub(r"^(L\['\w+'\]\[\d+\]).+$", r"\1", g))) and e[0] == base]
    if not indices or max(indices) >= j:
        return None
    n = max(indices) + 1
    return Reason(
        f"{src} is a tensor input of this key, and the call's {base} has {n} element{'s' if n > 1 else ''}: "
        f"this key was traced with more than {j}, and the call's trace cannot take that input: torch "
        "traces another graph", "list-shorter")


class EveryElement(tuple[int, int]):
    """``(line, start)``: the line of the code that reads every element of a sequence
    from index ``start`` on (a loop, a comprehension, ``torch.cat``)."""

    __slots__ = ()

    @property
    def line(self) -> int:
        """The line of the loop or call (1-based, in the function's file)."""
        return self[0]

    @property
    def start(self) -> int:
        """The first index it reads (0, or ``k`` of a slice ``xs[k:]``)."""
        return self[1]


def reads_every_element(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str,
                        stores: int = 0) -> EveryElement | None:
    """Where ``fn`` reads every element of the sequence parameter ``param`` from some index
    on: a ``for`` or comprehension over ``param`` itself, over a slice of it open at the
    end (``param[1:]``, a non-negative int literal start, no step), or over
    ``zip``/``enumerate``/``reversed`` of those; or ``torch.cat``/``concat``/
    ``concatenate``/``stack`` of one of them. The first such place in the walk, None when
    there is none (a ``for`` with a ``break`` or ``return`` in it may stop early) or the name is assigned in the function more than ``stores`` times (a
    parameter: never; a local: its one assignment), as the loop may read another
    sequence."""
    if sum(isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load)
           for n in ast.walk(fn)) > stores:
        return None
    for n in ast.walk(fn):
        if isinstance(n, (ast.For, ast.AsyncFor)) and any(isinstance(b, (ast.Break, ast.Return))
                                                          for s in n.body for b in ast.walk(s)):
            continue  # it may stop before the end
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            it = n.iter
            seqs = it.args if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
                it.func.id in _WRAPPERS else [it]
        elif isinstance(n, ast.Call) and _is_join(n.func) and n.args:
            seqs = [n.args[0]]
        else:
            continue
        for s in seqs:
            start = _start(s, param)
            if start is not None:
                return EveryElement((getattr(n, "lineno", None) or s.lineno, start))
    return None


def _is_join(f: ast.expr) -> bool:
    return isinstance(f, ast.Attribute) and f.attr in _JOINS and isinstance(f.value, ast.Name) \
        and f.value.id == "torch"


def _start(node: ast.expr, param: str) -> int | None:
    """The first index of ``param`` that ``node`` (``param`` or ``param[k:]``) yields."""
    if isinstance(node, ast.Name) and node.id == param:
        return 0
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == param
            and isinstance(node.slice, ast.Slice) and node.slice.upper is None and node.slice.step is None):
        return None
    lower = node.slice.lower
    if lower is None:
        return 0
    if isinstance(lower, ast.Constant) and type(lower.value) is int and lower.value >= 0:
        return lower.value
    return None
