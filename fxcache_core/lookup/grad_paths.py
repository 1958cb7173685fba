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
from collections.abc import Collection, Sequence

from fxcache_core.cache.scan import CacheKey
from fxcache_core.decode.entries import entry_root
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import run_one, task
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.ast_reads import root_name
from fxcache_core.lookup.dtype_args import graph_nodes
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.lookup.torch_names import torch_roots

__all__ = ["grad_off_path", "inference_forward_graph"]

_VIEWS = frozenset("view _unsafe_view t permute transpose expand unsqueeze squeeze".split())
_CARRY = _VIEWS | frozenset(
    "mm addmm bmm relu gelu silu sigmoid tanh exp log sin cos neg add sub mul div sum mean _softmax "
    "_log_softmax sqrt rsqrt pow convolution".split()
)
"""Ops whose floating-point result requires grad, with grad enabled, where a tensor
argument does (each has a derivative for its tensor arguments; the views keep the flag)."""

_SHOWN_OPS = 4
"""How many ops a grad path shows at each end."""

_FLOATING = frozenset({"float16", "bfloat16", "float32", "float64"})
_GRAD_WORDS = re.compile(
    r"no_grad|enable_grad|set_grad_enabled|inference_mode|detach|requires_grad|\.data\b"
    r"|autograd|torch\.func|functorch|vmap"
)
"""Source text that may turn grad off around an op or cut it from an input."""
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")


def grad_off_path(
    graph: str,
    requires_grad: Sequence[bool | None],
    frame: CompiledFrom | None,
    taken: Collection[str] = (),
) -> str | None:
    """For an AOTAutograd entry with no backward, whose printed forward graph is
    ``graph`` and whose inputs' ``requires_grad`` flags are ``requires_grad`` (in the
    graph's input order): the path of ops (``arg1_1 -> mm -> relu -> add``) by which the
    graph computes an output from an input that required grad, every op carrying grad
    (the module docstring), so that the entry was compiled with grad disabled; None where
    the graph or the source of ``frame`` does not show that. ``taken``: the sources the
    key takes inputs from (``L['x']``): the parameters whose methods the function may call
    (a tensor's method cannot set the grad mode; another object's could)."""
    if frame is None or frame.wrappers or frame.whole_module:
        return None
    fn = function_node(frame.file, frame.line, frame.function)
    if fn is None or _GRAD_WORDS.search(ast.unparse(fn)):
        return None
    if any(isinstance(n, (ast.With, ast.AsyncWith)) for n in ast.walk(fn)):
        return None  # a context manager, whatever its name, may turn grad off around the ops
    torch_names = set(torch_roots(frame.file, fn))
    roots = _tensor_names(
        fn, {m.group(1) for s in taken if (m := LOCAL_RE.fullmatch(s))}, torch_names
    )
    roots |= torch_names
    if any(
        isinstance(c, ast.Call)
        and not (isinstance(c.func, ast.Attribute) and root_name(c.func) in (roots | {None}))
        for c in ast.walk(fn)
    ):
        return None  # a helper, a module's forward or an object's method could set the grad mode and leave it set
    lines = range(fn.lineno, (fn.end_lineno or fn.lineno) + 1)
    g = graph_nodes(graph)
    if len(g.inputs) != len(requires_grad):
        return None
    # name -> (the name its value came from, the op, whether a non-view op is on the way);
    # the path is read back only for the output found (a copy per node would be quadratic).
    reached: dict[str, tuple[str | None, str, bool]] = {
        name: (None, name, False)
        for (name, dtype), rg in zip(g.inputs, requires_grad, strict=True)
        if rg is True and dtype in _FLOATING
    }
    if not reached:
        return None
    for n in g.nodes:
        if (
            n.op not in _CARRY
            or n.dtype not in _FLOATING
            or n.file != frame.file
            or n.line not in lines
        ):
            continue
        came = next((a for a in _NAME.findall(n.args) if a in reached), None)
        if came is not None and n.name not in reached:
            reached[n.name] = (came, n.op, reached[came][2] or n.op not in _VIEWS)
    for out in _outputs(graph):
        got = reached.get(out)
        if got is not None and got[0] is not None and got[2]:
            return _shown(reached, out)
    return None


def _shown(reached: dict[str, tuple[str | None, str, bool]], out: str) -> str:
    """The path from an input to ``out`` (``arg1_1 -> mm -> relu``), its middle left out
    past :data:`_SHOWN_OPS` ops."""
    path: list[str] = []
    name: str | None = out
    while name is not None:
        prev, op, _ = reached[name]
        path.append(op)
        name = prev
    path.reverse()
    if len(path) > 2 * _SHOWN_OPS + 1:
        path = [
            *path[: _SHOWN_OPS + 1],
            f"... ({len(path) - 2 * _SHOWN_OPS - 1} more)",
            *path[-_SHOWN_OPS:],
        ]
    return " -> ".join(path)


def _tensor_names(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, inputs: set[str], torch_names: set[str]
) -> set[str]:
    """The names of ``fn`` that hold tensors computed from ``inputs`` (its parameters the
    key takes as tensor inputs) and nothing else: each parameter of ``inputs`` and each
    local whose every binding is a plain assignment of an expression that starts from
    such a name, from torch's own namespace (``torch_names``), or from no name (a method of another value
    is not one: its object's method could set the grad mode)."""
    parents = ast_parents(fn)
    bindings: dict[str, list[ast.expr | None]] = {}
    a = fn.args
    for arg in (
        *a.posonlyargs,
        *a.args,
        *a.kwonlyargs,
        *([a.vararg] if a.vararg else []),
        *([a.kwarg] if a.kwarg else []),
    ):
        bindings.setdefault(arg.arg, []).append(
            None if arg.arg not in inputs else ast.Name(arg.arg)
        )
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            up = parents.get(n)
            value = up.value if isinstance(up, ast.Assign) and up.targets == [n] else None
            bindings.setdefault(n.id, []).append(value)
    known = set(inputs) & {
        x for x, vs in bindings.items() if all(isinstance(v, ast.Name) and v.id == x for v in vs)
    }
    changed = True
    while changed:
        changed = False
        for x, vs in bindings.items():
            if x not in known and all(
                v is not None and root_name(v) in (known | torch_names | {None}) for v in vs
            ):
                known.add(x)
                changed = True
    return known


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
