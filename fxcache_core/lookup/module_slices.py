"""An int parameter that slices a module's list of layers: how many layers a key's graph applied.

``for layer in self.layers[:depth]: x = layer(x)`` runs the first ``depth`` layers of a
``ModuleList`` (or ``Sequential``). On a fresh process's first call under
``dynamic=None``/``False`` Dynamo bakes the int in (``VariableBuilder`` in
torch/_dynamo/variables/builder.py), slices the Python list (``ModuleList.__getitem__``
in torch/nn/modules/container.py, traced) and inlines each layer it keeps. Under
``inline_inbuilt_nn_modules`` (torch/_dynamo/config.py, on by default) every parameter
or buffer a layer reads is an input of the graph, named by its source
(``L['self']._modules['layers']._modules['2']._parameters['weight']``, the AOTAutograd
entry's ``aot_autograd_arg_pos_to_source``). Dynamo's guard on ``depth`` is not part
of the Inductor cache key, which hashes the graph: a call whose slice keeps the same
layers traces the same graph and looks up the same key.

:func:`slice_provenance` reads, never running either, the compiled function's source
(``ast``) and the key's input sources, and decides only where it is exact:

* the parameter's one read is the upper bound of such a slice (``self.A.B[:p]``, no
  lower bound or step), the iterable of a ``for`` whose body calls the loop variable
  and has no other control flow (no ``if``, loop, ``break``, ``continue``, ``return``,
  ``try``, ``with``, nested function); the parameter is never assigned;
* nothing else can read those layers: the class (the file, for a function outside
  one) reads ``self.A.B`` (or calls ``self.A``) nowhere else outside ``__init__``
  (a base class in another file is not read), and the compiled function uses
  ``self`` only through attributes that are not introspection (``parameters()``,
  ``modules()``, ``_modules``, ...), and does not call ``super()``;
* the compiled function calls no method of ``self`` that the class's ``__init__`` does
  not set (a method, maybe a base class's or a subclass's, could read the layers).

A key that takes inputs from layer ``n - 1`` (its highest) applied at least ``n`` layers.
A call with ``depth=d`` applies ``min(d, len)``: ``0 <= d < n`` leaves layer ``n - 1`` out,
another graph. Nothing else is exact: a layer without parameters after ``n - 1`` (a
``ReLU``) makes no input, so the key may have applied more; the list's length is not in
the cache; and two instances of the class (an encoder's and a decoder's stacks) compile
keys of one frame, so another key's layers say nothing of this key's list.
Nothing here imports torch.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.trees import _parse
from fxcache_core.lookup.ast_reads import parents as _parents
from fxcache_core.lookup.float_exprs import Provenance
from fxcache_core.reasons import Reason

__all__ = ["layer_indices", "other_read", "slice_loop", "slice_provenance", "unseen_call"]

_INTROSPECTION = frozenset({
    "parameters", "named_parameters", "buffers", "named_buffers", "modules", "named_modules", "children",
    "named_children", "state_dict", "apply", "get_submodule", "get_parameter", "get_buffer", "_modules",
    "_parameters", "_buffers", "__dict__", "_apply", "to", "cuda", "cpu", "__class__",
})
"""Attributes of ``self`` through which a method could reach every layer's parameters."""

_CONTROL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Break, ast.Continue, ast.Return, ast.Try, ast.With,
            ast.AsyncWith, ast.Raise, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
            ast.IfExp, ast.Yield, ast.YieldFrom, ast.Await)


def _chain(e: ast.expr) -> list[str] | None:
    """``self.a.b`` -> ``['a', 'b']``; None for anything else."""
    out: list[str] = []
    while isinstance(e, ast.Attribute):
        out.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name) and e.id == "self" and out:
        return out[::-1]
    return None


def slice_loop(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str
               ) -> tuple[tuple[str, ...], ast.expr] | Reason | None:
    """``(chain, sliced)`` where ``param``'s one read in ``fn`` is the upper bound of a
    slice ``self.<chain>[:param]`` (``sliced`` is ``self.<chain>`` there) that a plain
    ``for`` loop runs over, and ``fn`` reaches no layer another way (see the module
    docstring; the rest of the file is :func:`other_read`'s); a Reason where the slice
    is there but a condition fails; None where ``param`` is not read that way at all."""
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == param]
    parents = _parents(fn)
    found = None
    for n in reads:
        s = parents.get(n)
        sub = parents.get(s) if isinstance(s, ast.Slice) else None
        if isinstance(s, ast.Slice) and s.upper is n and s.lower is None and s.step is None \
                and isinstance(sub, ast.Subscript) and sub.slice is s and (chain := _chain(sub.value)) is not None:
            loop = parents.get(sub)
            found = (n, sub, chain, loop)
    if found is None:
        return None
    n, sub, chain, loop = found
    where = f"{param} slices self.{'.'.join(chain)} (line {n.lineno})"
    if len(reads) != 1 or not isinstance(n.ctx, ast.Load):
        return Reason(f"{where}, and is read or assigned elsewhere too", "slice-length-unknown")
    if not (isinstance(loop, ast.For) and loop.iter is sub and isinstance(loop.target, ast.Name) and not loop.orelse):
        return Reason(f"{where} but not as the iterable of a plain for loop", "slice-length-unknown")
    var = loop.target.id
    body = [x for stmt in loop.body for x in ast.walk(stmt)]
    if any(isinstance(x, _CONTROL) for x in body):
        return Reason(f"{where}, and the loop's body has control flow: which layers it applied is not "
                      "read from its inputs", "slice-length-unknown")
    if not any(isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == var for x in body):
        return Reason(f"{where}, and the loop's body does not call {var}", "slice-length-unknown")
    for x in ast.walk(fn):
        if isinstance(x, ast.Name) and x.id == "self":
            up = parents.get(x)
            if not isinstance(up, ast.Attribute) or up.attr in _INTROSPECTION:
                return Reason(f"{where}, and the function uses self other than through its attributes "
                              f"(line {x.lineno})", "slice-length-unknown")
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and x.func.id == "super":
            return Reason(f"{where}, and the function calls super() (line {x.lineno})", "slice-length-unknown")
    return tuple(chain), sub.value


def other_read(tree: ast.Module, chain: Sequence[str], mine: ast.expr) -> int | None:
    """The line of a read of ``self.<chain>`` (or a call of a prefix of it) in the class of
    ``tree`` that holds ``mine`` (the whole file where no class does: another class's
    ``self`` is another object), outside ``__init__``, other than ``mine``; None where
    there is none."""
    classes = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
               and c.lineno <= mine.lineno <= (c.end_lineno or c.lineno)]
    if classes:
        tree = max(classes, key=lambda c: c.lineno)  # type: ignore[assignment]  # the innermost
    skip: set[int] = set()
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "__init__":
            skip.update(id(x) for x in ast.walk(f))
    parents = _parents(tree)
    for x in ast.walk(tree):
        if not isinstance(x, ast.Attribute) or id(x) in skip or isinstance(parents.get(x), ast.Attribute):
            continue
        c = _chain(x)
        if c is None or (x.lineno, x.col_offset) == (mine.lineno, mine.col_offset) or not isinstance(x.ctx, ast.Load):
            continue
        k = min(len(c), len(chain))
        if c[:k] == list(chain[:k]):
            return x.lineno
    return None


def unseen_call(tree: ast.Module, fn: ast.FunctionDef | ast.AsyncFunctionDef, mine: ast.expr) -> int | None:
    """The line of a call ``self.m(...)`` in ``fn`` whose ``m`` the ``__init__`` of the
    class that holds ``mine`` does not assign (so a method, maybe of a base class in
    another file or of a subclass, which may read the layers where :func:`other_read`
    cannot see it); None where every such call is of an attribute ``__init__`` sets (a
    submodule)."""
    classes = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
               and c.lineno <= mine.lineno <= (c.end_lineno or c.lineno)]
    set_in_init: set[str] = set()
    for c in classes[-1:]:
        for f in c.body:
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "__init__":
                set_in_init |= {t.attr for x in ast.walk(f) if isinstance(x, (ast.Assign, ast.AnnAssign))
                                for t in (x.targets if isinstance(x, ast.Assign) else [x.target])
                                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                                and t.value.id == "self"}
    for x in ast.walk(fn):
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and isinstance(x.func.value, ast.Name) \
                and x.func.value.id == "self" and x.func.attr not in set_in_init:
            return x.lineno
    return None


def layer_indices(sources: Sequence[str | None], chain: Sequence[str]) -> frozenset[int]:
    """The indices ``i`` of the layers ``self.<chain>[i]`` that ``sources`` (a key's
    input sources) take a parameter or buffer of."""
    head = re.escape("L['self']" + "".join(f"._modules['{a}']" for a in chain))
    pat = re.compile(head + r"\._modules\['([0-9]{1,6})'\]\.")
    return frozenset(int(m.group(1)) for s in sources if s and (m := pat.match(s)))


def slice_provenance(catalog: Catalog, key: CacheKey, frame: CompiledFrom,
                     fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str, value: object) -> Provenance | None:
    """What the call's int ``value`` of ``param`` does to ``key``'s graph where it slices
    a list of layers (see the module docstring): ``same``, ``differs`` (another graph)
    or ``unknown``, with the reason; None where ``param`` does not slice one (the other
    rules read it). Raises nothing."""
    if type(value) is not int:
        return None
    loop = slice_loop(fn, param)
    if loop is None:
        return None
    if isinstance(loop, Reason):
        return Provenance("unknown", loop)
    chain, sliced = loop
    where, line = "self." + ".".join(chain), sliced.lineno
    tree = _parse(frame.file)  # the whole file, parsed only for a slice of layers
    other = other_read(tree, chain, sliced) if tree is not None else 0
    call = unseen_call(tree, fn, sliced) if tree is not None else None
    if call is not None:
        return Provenance("unknown", Reason(
            f"{param} slices {where} (line {line}), and line {call} calls a method of self that this class's "
            "__init__ does not set: it may read the layers where fxcache does not look", "slice-length-unknown"))
    if other is not None:
        return Provenance("unknown", Reason(
            f"{param} slices {where} (line {line}), and " + (f"line {other} reads {where} too: its layers' "
                                                            "inputs may come from there" if other else
                                                            "its file cannot be read to see what else reads it"),
            "slice-length-unknown"))
    first = catalog.first_readable(key)
    mine = layer_indices(first[1].arg_sources, chain) if first is not None else frozenset()
    if not mine:
        return Provenance("unknown", Reason(
            f"{param} slices {where} (line {line}), and this key takes no input from its layers: how many the "
            "loop applied is not read", "slice-length-unknown"))
    n = max(mine) + 1
    applied = f"this key's graph takes parameters of {where}[{n - 1}], so it applied at least {n} layer(s)"
    if 0 <= value < n:
        return Provenance("differs", Reason(
            f"{param}={value} runs at most {value} layer(s) of {where} (line {line}); {applied}: torch traces "
            "another graph", "slice-length-differs"))
    if value < 0:
        return Provenance("unknown", Reason(
            f"{param}={value} slices {where} (line {line}) from its end, and the cache does not record its "
            "length", "slice-length-unknown"))
    return Provenance("unknown", Reason(
        f"{param}={value} slices {where} (line {line}); {applied}, and may have applied more (a layer without "
        f"parameters makes no input), or the list may end before {value}: its layers and its length are not "
        "in the cache", "slice-length-unknown"))
