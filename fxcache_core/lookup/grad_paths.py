"""Whether an AOTAutograd entry without a backward shows that grad was off when it was compiled.

With grad enabled, AOTAutograd compiles a training graph (a forward and a backward)
when an input requires grad and an output does too, and an inference graph (no
backward) when no output requires grad (``create_aot_state`` in
torch/_functorch/aot_autograd.py: ``needs_autograd``, dropped where every output that
requires grad is an input or a view of one). An output requires grad, with grad
enabled, where ops that carry grad compute it from an input that requires grad. So an
entry with no backward, an input its metadata records as requiring grad
(``input_info[i].requires_grad``), and a printed forward graph in which such ops compute
an output from that input, was compiled with grad disabled (``torch.no_grad()``,
``torch.inference_mode()``): :func:`grad_off_path` says where the graph shows that, on the
graph :func:`inference_forward_graph` reads only where the entry's own fields say it holds
no backward (not just where none was decoded).

Read strictly, as a closed world: every op of the path is one of :data:`_CARRY`, with a
floating-point result, printed under a stack-trace comment of the compiled function's own
lines (an op a callee makes could run under a grad mode the callee sets), and the
function's source names nothing that turns grad off or cuts it (:data:`_GRAD_WORDS`), calls
no helper or module (one could set the grad mode and leave it set), nor runs under a
decorator's wrapper; the path holds an op that is no view (an output that is a view of
the input does not make a training graph). Reads printed
text and source only; never imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import entry_root
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import run_one, task
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.ast_reads import root_name
from fxcache_core.lookup.dtype_args import graph_nodes

__all__ = ["grad_off_path", "inference_forward_graph"]

_VIEWS = frozenset("view _unsafe_view t permute transpose expand unsqueeze squeeze".split())
_CARRY = _VIEWS | frozenset(
    "mm addmm bmm relu gelu silu sigmoid tanh exp log sin cos neg add sub mul div sum mean _softmax "
    "_log_softmax sqrt rsqrt pow convolution".split()
)
"""Ops whose floating-point result requires grad, with grad enabled, where a tensor
argument does (each has a derivative for its tensor arguments; the views keep the flag)."""

_FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
_GRAD_WORDS = re.compile(
    r"no_grad|enable_grad|set_grad_enabled|inference_mode|detach|requires_grad|\.data\b"
    r"|autograd|torch\.func|functorch|vmap"
)
"""Source text that may turn grad off around an op or cut it from an input."""
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def grad_off_path(
    graph: str, requires_grad: Sequence[bool | None], frame: CompiledFrom | None
) -> str | None:
    """For an AOTAutograd entry with no backward, whose printed forward graph is
    ``graph`` and whose inputs' ``requires_grad`` flags are ``requires_grad`` (in the
    graph's input order): the path of ops (``arg1_1 -> mm -> relu -> add``) by which the
    graph computes an output from an input that required grad, every op carrying grad
    (the module docstring), so that the entry was compiled with grad disabled; None where
    the graph or the source of ``frame`` does not show that."""
    if frame is None or frame.wrappers or frame.whole_module:
        return None
    fn = function_node(frame.file, frame.line, frame.function)
    if (
        fn is None
        or _GRAD_WORDS.search(ast.unparse(fn))
        or any(
            isinstance(c, ast.Call)
            and not (isinstance(c.func, ast.Attribute) and root_name(c.func) != "self")
            for c in ast.walk(fn)
        )
    ):
        return None  # a helper or a module's forward could set the grad mode and leave it set
    lines = range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)
    g = graph_nodes(graph)
    if len(g.inputs) != len(requires_grad):
        return None
    reached: dict[str, list[str]] = {
        name: [name]
        for (name, dtype), rg in zip(g.inputs, requires_grad, strict=True)
        if rg is True and dtype in _FLOATING
    }
    if not reached:
        return None
    ops: dict[str, str] = {}
    for n in g.nodes:
        if (
            n.op not in _CARRY
            or n.dtype not in _FLOATING
            or n.file != frame.file
            or n.line not in lines
        ):
            continue
        came = next((reached[a] for a in _NAME.findall(n.args) if a in reached), None)
        if came is not None:
            reached[n.name] = [*came, n.op]
            ops[n.name] = n.op
    for out in _outputs(graph):
        path = reached.get(out)
        if path is not None and out in ops and any(op not in _VIEWS for op in path[1:]):
            return " -> ".join(path)
    return None


def _outputs(graph: str) -> list[str]:
    """The names the printed graph's ``return`` gives (its comments left out)."""
    text = graph.split("\n        return ", 1)
    if len(text) != 2:
        return []
    body = text[1].split("\n\n", 1)[0]
    return [m for line in body.splitlines() for m in _NAME.findall(line.split("#", 1)[0])]


def inference_forward_graph(key: CacheKey) -> str | None:
    """The printed forward graph (``aot_forward_graph_str``) of the first of an AOTAutograd
    key's entries that decodes, where that entry holds no backward by its own fields: it
    has ``compiled_bw`` and ``aot_backward_graph_str``, both None (an entry whose fields
    are named otherwise, or that one cannot read, shows nothing). None otherwise."""
    for e in key.entries:
        if e.size > MAX_ENTRY_BYTES:
            continue
        got = run_one("inference-forward-graph", e.file.where, e.size)
        if isinstance(got, list) and len(got) == 2 and got[0] == "found":
            return got[1] if isinstance(got[1], str) else None
        if got != ["unread"]:
            return None
    return None


_ABSENT = object()


@task("inference-forward-graph")
def _inference_forward_graph_task(where: str) -> list:
    """Worker side: an entry's path -> ``["found", its forward graph or None]`` (None where
    it has a backward or does not say), or ``["unread"]``."""
    root = entry_root(where)
    if root is None:
        return ["unread"]
    no_backward = all(
        root.field(n, _ABSENT) is None for n in ("compiled_bw", "aot_backward_graph_str")
    )
    graph = root.field("aot_forward_graph_str")
    return ["found", graph if no_backward and isinstance(graph, str) else None]
