"""An optional tensor parameter (``mask=None``): what the function's source says it does.

Dynamo wraps an argument only when the code reads it; a tensor it computes with
becomes a graph input, and ``None`` leaves ``if mask is not None:`` untaken, so
the two trace two graphs (two keys). Which of a function's keys was traced with the
tensor is in the keys themselves (one takes ``L['mask']`` as an input, another does
not); what a key that does not take it was traced with is not, unless the code
reads the parameter *whenever it is given*: then a key without it was traced with
``None`` (or another non-tensor), and a call that gives a tensor traces another
graph. :func:`read_whenever_given` says whether the source shows that; it reads the
``def`` with ``ast`` (:func:`~fxcache_core.functions.trees.function_node`), never
runs it. :func:`default_is_none` says what a call that leaves the parameter out passes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from fxcache_core import errors
from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.params import param_defaults
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.ast_reads import SIMPLE_STATEMENTS
from fxcache_core.lookup.binding import TensorArg
from fxcache_core.lookup.fn_op_args import fn_tensor_absent
from fxcache_core.lookup.sequence_lengths import element_of, reads_every_element
from fxcache_core.lookup.source_values import LOCAL_RE
from fxcache_core.lookup.tensor_flow import computed_into_output
from fxcache_core.reasons import Reason

if TYPE_CHECKING:
    from fxcache_core.cache.scan import CacheKey

__all__ = ["default_is_none", "item_not_taken", "list_element", "read_whenever_given", "tensor_given", "tensor_left_out"]

Takers = Callable[[str, bool], "CacheKey | None"]
"""(source, takes) -> a key of the function that takes an input from the source (takes
True) or takes none from it (False); None when there is none."""


def tensor_given(src: str, frame: CompiledFrom | None, function: str, takers: Takers,
                 inputs: Mapping[str, object] | None = None,
                 graph: Callable[[], str | None] | None = None) -> Reason | None:
    """A tensor the call gives for parameter ``src`` (``L['mask']``), which the key
    takes no input from: where the source of the key's compiled ``frame`` shows that a
    tensor there is a graph input, the key was traced without a tensor there, so torch
    traces another graph; else None. The source shows it where the code computes with
    the parameter whenever it is given (:func:`read_whenever_given`) and another key of
    the function takes it (``optional-tensor-given``); where torch ops compute it,
    unconditionally, into the value the function returns
    (:func:`~fxcache_core.lookup.tensor_flow.computed_into_output`, ``tensor-into-output``;
    ``inputs``: the call's inputs, whose other tensors it reads as tensors; None where
    the key's inputs are not all named by their sources, so that which it takes is not
    known: then this rule does not speak, nor where the frame has decorator wrappers; where
    the call's tensor may be one it gives for another parameter too, of the same shape, the
    reason is a note, ``aliased-inputs-unknown``: the key may have been traced with one tensor
    for both, which a call says with ``b=@a``); or where the key's printed AOTAutograd graph
    (``graph``, read on demand) shows the one op the parameter reaches holding no tensor
    there (:func:`~fxcache_core.lookup.fn_op_args.fn_tensor_absent`: sdpa's
    ``attn_mask``, ``tensor-arg-absent``)."""
    m = LOCAL_RE.fullmatch(src)
    fn = function_node(frame.file, frame.line, frame.function) if frame is not None and m is not None else None
    if fn is None or m is None or frame is None:
        return None
    p = m.group(1)
    other = takers(src, True)
    if other is not None and (line := read_whenever_given(fn, p)) is not None:
        return Reason(
            f"{src} is a tensor, and this key takes no input from it, while key {other.key[:12]} of {function} "
            f"does: the code computes with {p} whenever it is given (line {line}), so this key was traced with "
            f"{p} None (or not a tensor), and torch traces another graph", "optional-tensor-given")
    if frame.wrappers or frame.whole_module:
        return None  # a decorator's wrapper or a module call may pass the function another value for it
    tensors = None if inputs is None or _said_alias(inputs, src) else {
        t.group(1) for s, v in inputs.items()
        if isinstance(v, TensorArg) and v.shape != () and (t := LOCAL_RE.fullmatch(s)) is not None}
    numbers = {t.group(1) for s, v in (inputs or {}).items()
               if type(v) in (int, float) and (t := LOCAL_RE.fullmatch(s)) is not None}
    if tensors is not None and (line := computed_into_output(fn, frame.file, p, tensors, numbers)) is not None:
        if inputs is not None and (twin := _may_alias(inputs, src)) is not None:
            return Reason(
                f"{src} is a tensor, and this key takes no input from it: torch ops compute {p} into what "
                f"{function} returns on every call that gives it (line {line}), so this key was traced with {p} "
                f"None or the very tensor of another input (one tensor passed twice, which Dynamo takes as one "
                f"input). The call gives {p} a tensor of {twin}'s shape: if it is {twin}'s own tensor, say "
                f"{p}=@{twin}; if it is a tensor of its own, Dynamo takes it as an input, and torch traces another "
                "graph. The shapes do not say which", "aliased-inputs-unknown")
        return Reason(
            f"{src} is a tensor, and this key takes no input from it: torch ops compute {p} into what "
            f"{function} returns on every call that gives it (line {line}), so a trace with a tensor there "
            f"takes it as an input; this key was traced with {p} None (or not a tensor), and torch traces "
            "another graph", "tensor-into-output")
    text = graph() if graph is not None else None
    if text is not None and (line := fn_tensor_absent(fn, frame.file, text, p)) is not None:
        return Reason(
            f"{src} is a tensor, and this key takes no input from it: the one op {p} reaches (line {line}) "
            f"holds no tensor there in this key's graph, so this key was traced with {p} None, and torch "
            "traces another graph", "tensor-arg-absent")
    return None


def _said_alias(inputs: Mapping[str, object], src: str) -> bool:
    """Whether the call says its tensor for ``src`` is the very tensor of another input
    (``src=@a``, or ``b=@src``): :mod:`fxcache_core.lookup.aliased_inputs` judges that."""
    mine = inputs.get(src)
    return (isinstance(mine, TensorArg) and mine.same_as is not None) or any(
        isinstance(v, TensorArg) and v.same_as == src for v in inputs.values())


def _may_alias(inputs: Mapping[str, object], src: str) -> str | None:
    """The name of another tensor parameter the call gives a tensor of ``src``'s shape for
    (and dtype, where both say one), None where there is none: a key traced with one tensor
    passed for both (``attend(x, x, x)``: Dynamo takes one input) takes no input from ``src``
    though it read it. The call gives ``src`` a tensor of its own (it would say ``src=@a``)."""
    mine = inputs.get(src)
    if not isinstance(mine, TensorArg):
        return None
    return next((t.group(1) for s, v in inputs.items()
                 if isinstance(v, TensorArg) and s != src and v.shape == mine.shape
                 and (v.dtype is None or mine.dtype is None or v.dtype == mine.dtype)
                 and (t := LOCAL_RE.fullmatch(s)) is not None), None)


def tensor_left_out(src: str, frame: CompiledFrom | None, function: str, takers: Takers) -> Reason | None:
    """A tensor input ``src`` of the key that the call leaves out, for a parameter that
    defaults to None (:func:`default_is_none`), where another key of the function takes
    no input from it: the call passes None, and a graph that takes a tensor there is not
    traced from None (the reason, ``optional-tensor-left-out``); else None."""
    m = LOCAL_RE.fullmatch(src)
    other = takers(src, False) if m is not None else None
    fn = function_node(frame.file, frame.line, frame.function) if other is not None and frame else None
    if fn is None or m is None or other is None or not default_is_none(fn, m.group(1)):
        return None
    return Reason(
        f"{src} is a tensor input of this key; the call leaves it out, so it is None (its default), as when "
        f"key {other.key[:12]} of {function} was traced: torch traces another graph than this one",
        "optional-tensor-left-out")

def tensor_default_unseen(src: str, type_: str, frame: CompiledFrom | None) -> Reason | None:
    """A tensor input ``src`` (printed type ``type_``) of the key that the call leaves out,
    for a parameter whose default is written as a name or an expression, not a literal
    (``bias=_ZERO``, a tensor of the module): the call passes that object, not None, and
    the cache does not show its shape, dtype or strides, which the key's guards check (the
    reason, ``tensor-default-unseen``); None for any other parameter or where the source
    cannot be read."""
    m = LOCAL_RE.fullmatch(src)
    fn = function_node(frame.file, frame.line, frame.function) if m is not None and frame else None
    if fn is None or m is None:
        return None
    d = next((d for p, d in param_defaults(fn) if p.arg == m.group(1)), None)
    if d is None or isinstance(d, ast.Constant):
        return None
    return Reason(
        f"{m.group(1)} is left out, and its default ({ast.unparse(d)[:60]}) is a value of the source, not None: "
        f"this key takes a tensor input from it ({type_}), and the cache does not show that default's shape, "
        f"dtype or strides, which its guards check; give its shape with {errors.param('inputs')}",
        "tensor-default-unseen")


def float_default_tensorified(src: str, type_: str, frame: CompiledFrom | None) -> bool:
    """Whether the key's input ``src`` of printed type ``type_``, which the call leaves
    out, is its parameter's float default made a graph input: the parameter defaults to a
    float literal (``v=0.5``) and the input is a 0-d float64 tensor (``f64[][]cpu``), as
    Dynamo makes a float it does not specialize (``wrap_symfloat`` in
    torch/_dynamo/variables/builder.py; torch 2.13 names such an input by its source,
    ``L['v']``). The value is then an input of the graph, not a guard: the default is
    taken as a given float is."""
    m = LOCAL_RE.fullmatch(src)
    if m is None or frame is None or not re.fullmatch(r"f64\[\](\[\])?\w*", type_):
        return False
    fn = function_node(frame.file, frame.line, frame.function)
    if fn is None:
        return False
    pairs = param_defaults(fn)
    # A parameter annotated with a tensor type may have been given a 0-d tensor at compile
    # time, which the key's input looks the same as: not known then.
    return any(p.arg == m.group(1) and isinstance(d, ast.Constant) and type(d.value) is float
               and (p.annotation is None or "Tensor" not in ast.unparse(p.annotation)) for p, d in pairs)


_SIZE_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "size", "dim", "numel", "is_cuda", "layout",
                         "requires_grad", "stride", "is_contiguous", "nelement", "element_size"})


def default_is_none(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """Whether ``param`` of ``fn`` defaults to ``None`` (a call that leaves it out passes None)."""
    pairs = param_defaults(fn)
    return any(p.arg == param and isinstance(d, ast.Constant) and d.value is None for p, d in pairs)


def read_whenever_given(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> int | None:
    """The line of a statement that computes with the tensor ``param`` on every call that
    gives one, or None when the source does not show one.

    Such a statement comes before any ``return``, ``raise``, ``break`` or ``continue``
    of the body (an early exit could skip it), is a simple statement at the body's top
    level or directly in the body of a top-level ``if param is not None:`` (without
    ``elif``/``else``), and uses the parameter as a tensor: an operand of arithmetic,
    an argument of a call, or the object of a method call that is not one of its sizes
    or attributes (``mask.shape`` reads no values). The parameter must not be assigned
    anywhere in the function."""
    if any(isinstance(n, ast.Name) and n.id == param and not isinstance(n.ctx, ast.Load) for n in ast.walk(fn)):
        return None
    for stmt in fn.body:
        body: list[ast.stmt] = [stmt]
        if isinstance(stmt, ast.If) and _is_not_none(stmt.test, param) and not stmt.orelse:
            body = stmt.body
        for st in body:
            if _exits(st):
                return None
            if isinstance(st, SIMPLE_STATEMENTS) and \
                    _computes_with(st, param):
                return st.lineno
    return None


def _is_not_none(test: ast.expr, param: str) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == param
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _exits(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` holds a ``return``, ``raise``, ``break`` or ``continue`` (outside
    nested functions) that could skip what follows it; a ``return`` that is ``stmt``
    itself reads its value first, and does not count."""
    stack: list[ast.AST] = list(ast.iter_child_nodes(stmt))
    if isinstance(stmt, (ast.Raise, ast.Break, ast.Continue)):
        return True
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Return, ast.Raise, ast.Break, ast.Continue)):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return False


def _computes_with(stmt: ast.stmt, param: str) -> bool:
    parents: dict[ast.AST, ast.AST] = {}
    for n in ast.walk(stmt):
        for c in ast.iter_child_nodes(n):
            parents[c] = n
    for n in ast.walk(stmt):
        if not (isinstance(n, ast.Name) and n.id == param):
            continue
        p = parents.get(n)
        if isinstance(p, ast.BinOp) or (isinstance(p, ast.UnaryOp) and isinstance(p.op, (ast.USub, ast.Invert))):
            return True
        if isinstance(p, ast.Call) and n is not p.func and not (isinstance(p.func, ast.Name) and p.func.id in (
                "len", "isinstance", "type", "print", "id", "bool", "str", "repr")):
            return True
        if isinstance(p, ast.keyword) and isinstance(parents.get(p), ast.Call):
            return True
        if isinstance(p, ast.Attribute) and p.attr not in _SIZE_ATTRS and isinstance(parents.get(p), ast.Call) \
                and parents[p].func is p:  # type: ignore[attr-defined]
            return True
    return False


def list_element(src: str, base: str, taken: set[str], frame: CompiledFrom | None,
                 name: str | None = None) -> Reason | None:
    """A tensor the call gives as element ``src`` (``L['params'][2]``) of the list, tuple or
    ``*args`` parameter ``base``, which the key takes no input from while it takes others of
    it: where the source reads every element from an index at or before ``src``'s on
    (:func:`~fxcache_core.lookup.sequence_lengths.reads_every_element`: a loop over it or
    over ``base[1:]``, ``torch.cat`` of it), a trace with that element takes it as an
    input, so the key was traced with a shorter sequence and the call's graph is another
    (``list-longer``); elsewhere a note (``list-element-not-input``).
    ``name``: the parameter's name where ``base`` is no ``L['name']`` of it. None when the
    key takes no element of the sequence."""
    if not any(t.startswith(base + "[") for t in taken):
        return None
    m = LOCAL_RE.fullmatch(base)
    name = name or (m.group(1) if m is not None else None)
    el = element_of(src)
    fn = function_node(frame.file, frame.line, frame.function) if frame is not None and name else None
    every = reads_every_element(fn, name) if fn is not None and name is not None else None
    if every is not None and el is not None and el[1] >= every.start:
        what = name if every.start == 0 else f"{name}[{every.start}:]"
        return Reason(
            f"{src} is given, and this key takes other elements of {base} but not this one: the code "
            f"reads every element of {what} (line {every.line}), so a trace with this one takes it as an "
            "input: this key was traced with a shorter sequence, and torch traces another graph",
            "list-longer")
    return Reason(
        f"{src} is given, and this key takes other elements of {base} but not this one: if the code reads "
        "every element, this key was traced with a shorter list and torch traces another graph; if it reads "
        "only some, this key is torch's. The cache does not record which", "list-element-not-input")


_ITEM_RE = re.compile(r"(L\['\w+'\])(?:\['[^']*'\]|\.\w+)(?:\[[^\]]*\]|\.\w+)*")
"""A source inside a parameter by a key or a field (``L['d']['b']``, ``L['cfg'].w``): group 1
the parameter."""


def item_not_taken(src: str, is_param: Callable[[str], bool], taken: set[str]) -> Reason | None:
    """A tensor the call gives at ``src``, an item of a dict (or a field of an object) the
    function takes as a parameter, which the key takes no input from (``taken``: the
    sources it takes): undecided. Dynamo guards a dict's keys, so if the code reads the
    item (``if 'b' in d: out = out + d['b']``) the key was traced without it and torch
    traces another graph; if the code never reads it, the key is torch's."""
    m = _ITEM_RE.fullmatch(src)
    if m is None or not is_param(m.group(1)) or any(t == src or t.startswith((src + "[", src + ".")) for t in taken):
        return None
    return Reason(
        f"{src} is a tensor, and this key takes no input from it: if the code reads it, this key was traced "
        "without it (Dynamo guards a dict's keys) and torch traces another graph; if it never reads it, this "
        "key is torch's. The cache does not record which", "item-not-input")
