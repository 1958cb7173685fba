"""A module attribute or a global given with a call, read off the key's graph as the constant it became.

Dynamo reads ``self.scale`` or a module global ``GAIN`` through ``VariableBuilder`` as it
reads an argument (``wrap_literal`` in torch/_dynamo/variables/builder.py): a float goes
to ``wrap_symfloat``, which under ``dynamic=None``/``False`` on a fresh process's first
call specializes it (``assume_static_by_default``; ``CONSTANT_MATCH`` guard), and under
``dynamic=True`` makes it a 0-d float64 input; an int from a global or from an
``nn.Module`` is specialized in every mode (``is_int_specialization_case`` in
torch/_dynamo/utils.py). A specialized value is folded by Python and reaches the graph as
the scalar of one op (``aten.mul.Tensor(addmm, 2.0)`` for ``self.fc(x) * self.scale``),
so the rules that read a float or an int parameter's constants
(:func:`~fxcache_core.lookup.float_exprs.float_provenance`,
:func:`~fxcache_core.lookup.int_exprs.value_provenance`) read the value's too, with
``self.scale`` (or ``GAIN``) standing for the parameter in the compiled function's
source: every read of it must be exact (an operand of arithmetic with a tensor, an
argument of a torch function, or a pure arithmetic expression of it there).

:func:`state_constant` decides only where that holds:

* a constant that differs from what the call's value gives there: torch traces
  another graph (``rules-out``), in every mode;
* the same constants: this key, under ``dynamic=None``/``False`` (an int from a
  global or a module whatever the mode), provided some read is the value itself
  (``x * self.scale``, not only ``x * (self.scale // 2)``): the same constant is then
  the same value, so what the code the frame calls (``self.helper()``, a function of
  the module) does with it is the same as well; through expressions alone, it is not
  known;
* anything else (no read in the frame's own code, a read through a call, an
  assignment of it, a str): None, and the caller leaves it undecided.

Never imports torch; the source is parsed (``ast``), never run.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Mapping

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.functions.frames import CompiledFrom, resume_parent
from fxcache_core.functions.trees import function_node, inside_function
from fxcache_core.lookup.ast_reads import parents as _parents
from fxcache_core.lookup.binding import DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.fit_binding import how
from fxcache_core.lookup.float_exprs import Provenance, _is_pure, float_provenance
from fxcache_core.lookup.floats import graph_text
from fxcache_core.lookup.int_exprs import value_provenance
from fxcache_core.lookup.param_account import ParamAccount
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.reasons import Reason

__all__ = ["SELF_ATTR_RE", "StateJudge", "read_state", "state_constant", "state_judge"]

SELF_ATTR_RE = re.compile(r"L\['self'\]((?:\.[A-Za-z_]\w*)+)")
"""A module's attribute as the call gives it (``L['self'].scale``): the dotted path."""
_GLOBAL_RE = re.compile(r"G\['([A-Za-z_]\w*)'\]")

StateJudge = Callable[[str, str, object], "ParamAccount | None"]
"""(the user's source, the name shown, the value) -> its account, or None: undecided."""


def state_constant(catalog: Catalog, key: CacheKey, frame: CompiledFrom, src: str, value: object,
                   inputs: Mapping[str, InputValue], mode: DynamicMode) -> tuple[str, Reason] | None:
    """What the call's ``value`` of a module attribute (``src`` ``L['self'].scale``) or a
    global of the function's module (``G['GAIN']``) says about ``key``, compiled from
    ``frame`` (see the module docstring): ``("accounted", why)`` (code
    ``baked-constant``), ``("rules-out", why)`` (``float-constant-differs``,
    ``baked-value-differs``), ``("undecided", why)`` (the same constants, but the mode
    is not known to specialize it: ``float-depends-on-mode``), or None where nothing
    exact is read. ``inputs``: the call's other inputs (its scalars are computed with).
    Raises nothing."""
    if type(value) not in (int, float):
        return None
    fn = function_node(frame.file, frame.line, resume_parent(frame.function) or frame.function)
    graph = graph_text(catalog, key) if fn is not None else None
    if fn is None or graph is None:
        return None
    return read_state(fn, graph, frame, src, value, inputs, mode)


def read_state(fn: ast.FunctionDef | ast.AsyncFunctionDef, graph: str, frame: CompiledFrom, src: str,
               value: object, inputs: Mapping[str, InputValue], mode: DynamicMode) -> tuple[str, Reason] | None:
    """:func:`state_constant` on the function ``fn`` (the ``def`` of ``frame``, parsed)
    and the key's printed ``graph``, both already read."""
    if type(value) not in (int, float):
        return None
    named = _standing_for(fn, src, frame)
    if named is None:
        return None
    fn, name = named
    scalars: dict[str, float | int] = {m.group(1): v for s, v in inputs.items()
                                       if type(v) in (int, float) and (m := LOCAL_RE.fullmatch(s))}
    scalars[name] = value  # type: ignore[assignment]
    tensors = frozenset(m.group(1) for s, v in inputs.items()
                        if isinstance(v, TensorArg) and (m := LOCAL_RE.fullmatch(s)))
    prov: Provenance | None = None
    if type(value) is int:
        prov = value_provenance(fn, frame.file, graph, name, scalars, tensors)
    if prov is None:
        prov = float_provenance(fn, frame.file, graph, name, scalars, tensors)
    if prov.why is None or prov.status not in ("same", "differs"):
        return None
    if prov.status == "differs":
        return "rules-out", prov.why
    if not _read_alone(fn, name, scalars):
        return None
    always = type(value) is int and (src.startswith("G[") or frame.whole_module)
    if mode in (DynamicMode.NONE, DynamicMode.FALSE) or always:
        return "accounted", Reason(str(prov.why), "baked-constant")
    if type(value) is int:
        return "undecided", Reason(
            f"{prov.why}, as torch specializes an int on a fresh process's first call under dynamic=None; under "
            f"dynamic=True it is a SymInt ({how()})", "int-depends-on-mode")
    return "undecided", Reason(
        f"{prov.why}, as torch specializes a float on a fresh process's first call under dynamic=None; under "
        f"dynamic=True it is a tensor input ({how()})", "float-depends-on-mode")


def state_judge(catalog: Catalog, key: CacheKey, frame: CompiledFrom | None, inputs: Mapping[str, InputValue],
                mode: DynamicMode) -> StateJudge:
    """:func:`state_constant` for ``key``'s call, as the callback
    :func:`~fxcache_core.lookup.module_state.module_state` and
    :func:`~fxcache_core.lookup.ambient.ambient_accounts` take: the value's
    :class:`~fxcache_core.lookup.param_account.ParamAccount`, or None (undecided). An
    AOTAutograd key's only: its forward graph is the one AOTAutograd traced, with each
    constant where Dynamo put it."""
    def judge(src: str, shown: str, value: object) -> ParamAccount | None:
        if frame is None or key.kind is not KeyKind.AOT_AUTOGRAD:
            return None  # an FX key's post-grad graph is Inductor's: its passes drop or fold constants
        got = state_constant(catalog, key, frame, src, value, inputs, mode)
        if got is None:
            return None
        status, why = got
        return ParamAccount(shown, str(value), True, status, why, src,
                            "the constants of its graph" if status == "accounted" else "")
    return judge


def _standing_for(fn: ast.FunctionDef | ast.AsyncFunctionDef, src: str, frame: CompiledFrom
                  ) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str] | None:
    """A copy of ``fn`` in which every read of the value ``src`` names is one name, the
    text it has in the source (``self.scale``, ``GAIN``), and that name; None where the
    function could change it or read it otherwise: ``self`` (or the global) bound in the
    function, the attribute assigned or deleted, a parameter of that name."""
    a = fn.args
    params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    if a.vararg is not None:
        params.append(a.vararg.arg)
    if a.kwarg is not None:
        params.append(a.kwarg.arg)
    if (m := SELF_ATTR_RE.fullmatch(src)) is not None:
        if not (frame.whole_module or frame.module_class is not None) or not params or params[0] != "self":
            return None
        root, text = "self", "self" + m.group(1)
    elif (m := _GLOBAL_RE.fullmatch(src)) is not None:
        root = text = m.group(1)
        if root in params or inside_function(frame.file, fn):
            return None  # a parameter, or an enclosing function's local of that name (a closure)
    else:
        return None
    out = copy.deepcopy(fn)
    for n in ast.walk(out):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and root in n.names:
            return None
        if isinstance(n, ast.Name) and n.id == root and not isinstance(n.ctx, ast.Load):
            return None  # self (or the global) rebound here
        if isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.partition(".")[0]) == root for a in n.names):
            return None  # imported here: a local of that name
        if isinstance(n, ast.ExceptHandler) and n.name == root or \
                isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name == root:
            return None
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not out \
                and root in {p.arg for p in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs)}:
            return None

    class _Rename(ast.NodeTransformer):
        refused = False

        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if ast.unparse(node) == text:
                if not isinstance(node.ctx, ast.Load):
                    self.refused = True
                return ast.copy_location(ast.Name(id=text, ctx=node.ctx), node)
            return self.generic_visit(node)

    if text != root:
        renamer = _Rename()
        out = renamer.visit(out)
        if renamer.refused:
            return None
    return ast.fix_missing_locations(out), text


def _read_alone(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, scalars: Mapping[str, object]) -> bool:
    """Whether some read of ``name`` is the value itself: not inside a pure expression of
    it (``x * self.scale``, not ``x * (self.scale // 2)`` nor ``math.sqrt(self.scale)``), nor
    bound to a local (whose reads may be such expressions)."""
    parents = _parents(fn)
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
            p = parents.get(n)
            if not ((isinstance(p, ast.expr) and _is_pure(p, scalars))
                    or isinstance(p, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))):
                return True
    return False
