"""Floats in the fit: taken as a tensor (tensorified) or baked into the graph.

``VariableBuilder.wrap_symfloat`` (torch/_dynamo/variables/builder.py) specializes a
Python float into the graph as a constant on a fresh process's first call under
``dynamic=None``/``False``, and under ``dynamic=True`` (or after a recompile) makes
it a 0-d float64 graph input; nan and inf are always specialized. Reading which
floats a key tensorified or baked in is :mod:`fxcache_core.lookup.floats`'s; this
module judges the call's floats against them, adding to the fit's
:class:`~fxcache_core.lookup.fit_binding.Binding`. Never prints.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.errors import param
from fxcache_core.functions.frames import CompiledFrom, resume_parent
from fxcache_core.functions.trees import function_node
from fxcache_core.lookup.binding import DynamicMode, InputValue, TensorArg
from fxcache_core.lookup.fit_binding import Binding, how
from fxcache_core.lookup.float_exprs import Provenance, float_provenance, graph_ops
from fxcache_core.lookup.float_ops import float_op_provenance
from fxcache_core.lookup.float_restart import FloatOps, float_ops
from fxcache_core.lookup.floats import graph_text, tensorified_base
from fxcache_core.lookup.fn_op_args import fn_op_provenance
from fxcache_core.lookup.int_exprs import value_provenance
from fxcache_core.lookup.kept_slices import kept_slice_provenance
from fxcache_core.lookup.module_slices import slice_provenance
from fxcache_core.lookup.op_consts import op_const_provenance
from fxcache_core.lookup.py_exprs import size_names
from fxcache_core.lookup.py_names import no_builtins
from fxcache_core.lookup.pyvalues import PyValue
from fxcache_core.reasons import Reason


def fit_tensorified(b: Binding, base: str, val: InputValue | None, mode: DynamicMode) -> None:
    """A float the key takes tensorified (a 0-d float64 graph input whose source is
    ``L['scale']``, see :mod:`fxcache_core.lookup.floats`): any value serves, but only where torch
    tensorifies it: not on a fresh process's first call under dynamic=None/False,
    nor for nan and inf."""
    if val is None:
        return
    if not isinstance(val, float):
        b.problems.append(Reason(f"{base} is a Python float taken as a tensor here, given {val}",
                                 "wrong-input-type"))
    elif math.isnan(val) or math.isinf(val):
        b.problems.append(Reason(f"{base} = {val}: torch specializes nan and inf floats, so it traces "
                                 "another graph (this key takes the float as a tensor)", "float-specialized"))
    elif mode in (DynamicMode.NONE, DynamicMode.FALSE):
        b.problems.append(Reason(
            f"{base} is a Python float taken as a tensor here (tensorified), but under "
            f"dynamic={mode.value.capitalize()} a fresh process's first call specializes a float "
            "into the graph as a constant, so torch looks up another key (after a call with "
            "another value, automatic dynamic tensorifies it: this key)", "float-specialized"))
    elif mode is DynamicMode.UNKNOWN:
        b.notes.append(Reason(
            f"{base} is a float taken as a tensor here: under dynamic=True torch does that and "
            "looks up this key; under dynamic=None a fresh process's first call specializes it "
            f"into another key ({how()})", "float-depends-on-mode"))


def float_default(name: str, value: float, taken: Iterable[tuple[str | None, str]], sources: Sequence[str],
                        mode: DynamicMode, auto: frozenset[str]) -> tuple[str, Reason] | None:
    """A float parameter ``name`` left out at its default ``value`` that a key takes as a
    tensor (one of the key's inputs, ``taken`` as (source, printed type), is the tensorified
    form of one of its ``sources``, or a 0-d float64 input from one), judged as
    :func:`fit_tensorified` judges one given (``auto``: the floats this pass tensorifies by
    automatic dynamic): ``("rules-out" | "undecided", why)`` as the accounting of
    :mod:`fxcache_core.lookup.accounting` says it, or None where the key does not take it
    so, or torch does tensorify it."""
    base = next((b for src, typ in taken if src and (
        (b := tensorified_base(src)) in sources or (b := src) in sources and re.match(r"f64\[\]", typ))), None)
    if base is None:
        return None
    b = Binding({}, {}, [], [])
    fit_tensorified(b, base, value, DynamicMode.TRUE if base in auto else mode)
    for status, whys in (("rules-out", b.problems), ("undecided", b.notes)):
        if whys:
            return status, Reason(f"{name}={value} (its default): {whys[0]}", whys[0].code)
    return None


def fit_baked_floats(catalog: Catalog, key: CacheKey, b: Binding, inputs: Mapping[str, InputValue],
                     bases: set[str], mode: DynamicMode,
                     frame: Callable[[], CompiledFrom | None] | None = None) -> None:
    """Floats the user gave that the key does not take: specialized, folded into the
    graph's constants through whatever expressions the function computes with them
    (:func:`baked_provenance`). The key serves a value only where every one of those
    constants comes out the same; where that is not readable, the verdict is
    undecided. ``frame``: the key's compiled frame (its source says what the function
    does with the float), read only when a float is given."""
    for src, val in inputs.items():
        if not isinstance(val, float) or src in bases:
            continue
        m = re.fullmatch(r"L\['(\w+)'\]", src)
        if m is None:
            continue
        prov = baked_provenance(catalog, key, m.group(1), inputs, frame() if frame is not None else None)
        if prov is None or prov.status == "unread":
            continue  # no op computes with it: every value traces this graph
        if prov.status == "differs":
            assert prov.why is not None
            b.problems.append(prov.why)
        elif prov.status == "unknown":
            assert prov.why is not None
            b.notes.append(prov.why)
        elif (said := _baked_under_mode(catalog, key, src, val, prov, inputs, mode)) is not None:
            status, why = said
            if status != "baked":
                (b.problems if status == "problem" else b.notes).append(why)


def baked_float(catalog: Catalog, key: CacheKey, src: str, val: float, mode: DynamicMode,
                inputs: Mapping[str, InputValue] | None = None,
                frame: CompiledFrom | None = None) -> tuple[str, Reason] | None:
    """What the float ``val`` of ``src`` (``L['scale']``) says about a key that does not
    take it, as :func:`fit_baked_floats` judges it (:func:`baked_provenance`: through
    the expressions the function computes with it): ``("baked", why)`` when every
    constant it makes in the graph comes out the same (and the mode specializes it),
    ``("note", why)`` when that is unknown or depends on the mode, ``("problem", why)``
    when a constant differs or the mode tensorifies it; None when no op of the graph
    computes with ``src``. The hook the closed-world rule
    (:func:`fxcache_core.lookup.baked_accounts.baked_account`) reads."""
    m = re.fullmatch(r"L\['(\w+)'\]", src)
    if m is None:
        return None
    # A parameter left out is at its default, ``val``: the call's value all the same.
    prov = baked_provenance(catalog, key, m.group(1), {**(inputs or {}), src: val}, frame)
    if prov is None or prov.status == "unread":
        return None
    if prov.status == "differs":
        return "problem", prov.why  # type: ignore[return-value]
    if prov.status == "unknown":
        return "note", prov.why  # type: ignore[return-value]
    if (said := _baked_under_mode(catalog, key, src, val, prov, {**(inputs or {}), src: val}, mode)) is not None:
        return said
    return "baked", Reason(str(prov.why) if prov.why is not None else
                           f"{val} is a constant of this key's graph where its code computes with {m.group(1)}",
                           "baked-constant")


def _baked_under_mode(catalog: Catalog, key: CacheKey, src: str, val: float, prov: Provenance,
                      inputs: Mapping[str, InputValue], mode: DynamicMode) -> tuple[str, Reason] | None:
    """A float ``val`` of ``src`` whose every constant in ``key``'s graph is the one there
    (``prov``, status ``same``), where the mode may make it a tensor input: under
    ``dynamic=True`` torch does, unless an op it reaches cannot take it as a tensor and
    torch traces again with it specialized (:mod:`fxcache_core.lookup.float_restart`, read
    off the key's AOTAutograd graph). ``("problem", why)`` where dynamic=True keeps it a
    tensor, ``("note", why)`` where it is specialized after a restart (which key that trace
    writes is not fixed by the graph), or where that, or the mode, is not known; None where the mode specializes it (dynamic=None or
    False, nan and inf)."""
    if mode not in (DynamicMode.TRUE, DynamicMode.UNKNOWN) or math.isnan(val) or math.isinf(val):
        return None
    values = {m.group(1): v for s, v in inputs.items()
              if isinstance(v, (int, float)) and (m := re.fullmatch(r"L\['(\w+)'\]", s))}
    graph = graph_text(catalog, key) if key.kind is KeyKind.AOT_AUTOGRAD else None
    ops = float_ops(graph, src[3:-2], prov, values) if graph is not None else FloatOps(None)
    if ops.outcome == "specialized":
        # Not decided: the key a restarted trace writes is not fixed by the graph alone. A
        # fresh process's first call with the same value looked up another key than the one
        # a build process (that had traced other functions first) wrote for it.
        return "note", Reason(
            f"{src} = {val} is a constant of this key's graph, passed to {ops.op} at line {ops.line}, "
            "which takes no tensor there: under dynamic=True torch makes the float a tensor input, cannot "
            "keep it one there and traces again with it specialized, as this key has it; whether that "
            "trace writes this key, or another for the same graph, depends on what the process traced "
            "before, which the cache does not keep", "float-restarted")
    if ops.outcome == "tensorified" and mode is DynamicMode.TRUE:
        return "problem", Reason(
            f"{src} = {val} is a constant of this key's graph (specialized), passed to {ops.op} at line "
            f"{ops.line}; under dynamic=True torch takes a float there as a tensor input: another key",
            "float-tensorified")
    if mode is DynamicMode.TRUE:
        return "note", Reason(
            f"{src} = {val} is a constant of this key's graph (specialized): under dynamic=True torch makes "
            f"a float a tensor input unless an op it reaches cannot take one (then it traces again with "
            f"{src} specialized, as here), and this key's graph does not show which ops {src} reached",
            "float-tensorify-unknown")
    return "note", Reason(
        f"{src} = {val} is a constant of this key's graph: torch specializes a float "
        "so on a fresh process's first call under dynamic=None, not under "
        f"dynamic=True ({how()})", "float-depends-on-mode")


def baked_int(catalog: Catalog, key: CacheKey, src: str, val: int, mode: DynamicMode,
              inputs: Mapping[str, InputValue], frame: CompiledFrom | None) -> tuple[str, Reason] | None:
    """What the int ``val`` of ``src`` (``L['shift']``) says about a key that takes no
    input from it, where :mod:`~fxcache_core.lookup.int_args` says nothing of it (a
    keyword-only parameter, one left out at its default): read through the expressions
    the function computes with it (:func:`baked_provenance`: an operand of arithmetic with
    a tensor, ``x + shift``, is ``aten.add.Tensor(x, 0)``; a slice bound, a size, a
    reduction's dim). Under ``dynamic=None``/``False`` a fresh process's first call bakes
    an int in (``wrap_symint`` in torch/_dynamo/variables/builder.py), so ``("baked",
    why)`` when every constant it makes is this graph's, ``("problem", why)`` when one
    differs; without the mode, ``("note", why)`` for the same constants. None under
    ``dynamic=True`` (an int is a SymInt input there, or specialized when 0 or 1) and
    wherever the reads are not all exact (a condition, a loop count, an index, a call
    of anything else), and for an FX key (its post-grad graph is Inductor's, whose passes
    drop or fold constants: ``x + 0`` is gone): the other evidence decides."""
    m = re.fullmatch(r"L\['(\w+)'\]", src)
    if m is None or frame is None or mode is DynamicMode.TRUE or key.kind is not KeyKind.AOT_AUTOGRAD:
        return None
    prov = baked_provenance(catalog, key, m.group(1), {**inputs, src: val}, frame)
    if prov is None or prov.why is None or prov.status not in ("same", "differs"):
        return None
    if prov.status == "differs":
        return "problem", prov.why
    if mode is DynamicMode.UNKNOWN:
        return "note", Reason(
            f"{prov.why}: torch looks this key up under dynamic=None; under dynamic=True {src} is a SymInt "
            f"on the first call (pass {param('dynamic')})", "int-depends-on-mode")
    return "baked", Reason(str(prov.why), "baked-constant")


def baked_value(catalog: Catalog, key: CacheKey, src: str, val: object,
                inputs: Mapping[str, InputValue], frame: CompiledFrom | None) -> tuple[str, Reason] | None:
    """What a bool, a tuple of ints or a None of ``src`` (``L['dims']``) says about a key that
    takes no input from it (:func:`~fxcache_core.lookup.int_exprs.value_provenance`:
    Dynamo specializes both, whatever the mode): ``("baked", why)`` when every constant
    it makes in the graph is the one there, ``("problem", why)`` when one differs; None
    when that is not readable (the other evidence decides). The hook the closed-world
    rule (:func:`fxcache_core.lookup.baked_accounts.baked_account`) reads for them."""
    m = re.fullmatch(r"L\['(\w+)'\]", src)
    if m is None or frame is None:
        return None
    prov = baked_provenance(catalog, key, m.group(1), {**inputs, src: PyValue(val)}, frame)
    if prov is None or prov.why is None or prov.status not in ("same", "differs"):
        return None
    return ("baked" if prov.status == "same" else "problem"), prov.why


def baked_provenance(catalog: Catalog, key: CacheKey, name: str, inputs: Mapping[str, InputValue],
                     frame: CompiledFrom | None) -> Provenance | None:
    """What the call's value of the float parameter ``name`` does to ``key``'s graph
    (:func:`~fxcache_core.lookup.float_exprs.float_provenance`), read from the source of
    the key's compiled ``frame`` where it is readable, else from the statements the
    graph's own ``# File: ... code:`` comments quote (each must parse on its own: a
    statement over several lines leaves it unknown). None when no entry holds a graph,
    or, without the source, when no comment names ``name`` (as no op computes with it)."""
    graph = graph_text(catalog, key)
    if graph is None:
        return None
    scalars = {m.group(1): v for src, v in inputs.items()
               if isinstance(v, (int, float)) and (m := re.fullmatch(r"L\['(\w+)'\]", src))}
    scalars.update(_static_sizes(catalog, key, inputs))
    tensors = frozenset(m.group(1) for src, v in inputs.items()
                        if isinstance(v, TensorArg) and (m := re.fullmatch(r"L\['(\w+)'\]", src)))
    # A resume frame's code is the function's own after the break: its reads before it trace no op.
    fn = function_node(frame.file, frame.line, resume_parent(frame.function) or frame.function) if frame else None
    if fn is not None:
        values = {**scalars, **{m.group(1): v.value for src, v in inputs.items()
                                if isinstance(v, PyValue) and (m := re.fullmatch(r"L\['(\w+)'\]", src))}}
        if (value := slice_provenance(catalog, key, frame, fn, name, values.get(name))) is not None:  # type: ignore[arg-type]
            return value  # a slice of a module's layers: how many the graph applied
        if key.kind is KeyKind.AOT_AUTOGRAD and frame is not None and not frame.wrappers \
                and not frame.whole_module and (value := fn_op_provenance(
                fn, frame.file, graph, name, values)) is not None:  # type: ignore[union-attr]
            return value  # a bool or float a torch function's op keeps: sdpa's is_causal
        if key.kind is KeyKind.AOT_AUTOGRAD and frame is not None and not frame.wrappers \
                and not frame.whole_module and (value := op_const_provenance(
                fn, frame.file, graph, name, values)) is not None:  # type: ignore[union-attr]
            return value  # a tuple or str a torch function's ops show: F.pad's pad and mode
        if frame is not None and not frame.wrappers and not frame.whole_module and (value := kept_slice_provenance(
                fn, frame.file, graph, name, values)) is not None:  # type: ignore[union-attr]
            return value  # an int read only as the start of a kept slice: logits_to_keep
        if (value := value_provenance(fn, frame.file, graph, name, values, tensors)) is not None:  # type: ignore[union-attr]
            return value
        # AOTAutograd's forward graph only: Inductor's post-grad passes may fold or drop an op.
        if key.kind is KeyKind.AOT_AUTOGRAD and (value := float_op_provenance(
                fn, frame.file, graph, name, values, tensors)) is not None:  # type: ignore[union-attr]
            return value
        if name in values and (values[name] is None or isinstance(values[name], str)):
            return None  # a None or str no op keeps (int_ops, op_consts): not a float's to read
        return float_provenance(fn, frame.file, graph, name, scalars, tensors,  # type: ignore[union-attr]
                                _symbolic_params(catalog, key))
    given = inputs.get(f"L['{name}']")
    if isinstance(given, PyValue) and (given.value is None or isinstance(given.value, str)):
        return None  # without the source, a None or str is read by no op here
    quoted = _quoted_function(graph, name, sorted({*scalars, *tensors}))
    if quoted is None:
        return None
    file, fn_or_why = quoted
    if isinstance(fn_or_why, Reason):
        return Provenance("unknown", fn_or_why)
    with no_builtins():  # the quoted statements' module, which could rebind min or math, is not read
        return float_provenance(fn_or_why, file, graph, name, scalars, tensors)


def _static_sizes(catalog: Catalog, key: CacheKey, inputs: Mapping[str, InputValue]) -> dict[str, int]:
    """The sizes of the call's tensor arguments that ``key`` fixes, under
    :func:`~fxcache_core.lookup.py_exprs.size_name`'s texts (``x.shape[1]``): a Python
    expression of one is a constant to Dynamo. A tensor some symbol of the key's first
    readable entry comes from (``L['x'].size()[1]`` -> ``s0``), and a dim the call marks
    dynamic, give none (a symbolic size is no constant); nor does any tensor where the
    entry is unreadable or a symbol's source is not known. Where the call's size is not
    the key's, the shape guards already fail: the sizes are the call's."""
    first = catalog.first_readable(key)
    if first is None:
        return {}
    sources = [info.source for info in catalog.symbols(first[0])]
    if any(s is None for s in sources):
        return {}
    out: dict[str, int] = {}
    for src, v in inputs.items():
        m = re.fullmatch(r"L\['(\w+)'\]", src)
        if m is None or not isinstance(v, TensorArg) or any(s.startswith(src) for s in sources):  # type: ignore[union-attr]
            continue
        out.update(size_names(m.group(1), v.shape, frozenset(range(len(v.shape))) - v.marked))
    return out


def _symbolic_params(catalog: Catalog, key: CacheKey) -> frozenset[str]:
    """The parameters ``key`` takes as symbols (``L['step']`` -> ``s51``: a SymInt after
    a recompile; not one Dynamo specialized, ``Sym(1)``), by its first readable entry's
    symbol table."""
    first = catalog.first_readable(key)
    if first is None:
        return frozenset()
    return frozenset(m.group(1) for info in catalog.symbols(first[0])
                     if info.source and info.expr and re.fullmatch(r"[a-z]+[0-9]+", info.expr)
                     and (m := re.fullmatch(r"L\['(\w+)'\]", info.source)))


def _quoted_function(graph: str, name: str, params: list[str]
                     ) -> tuple[str, ast.FunctionDef | Reason] | None:
    """The statements the graph's comments quote that name ``name``, as the body of a
    function of ``params`` (each at its own line), with their file; a reason where one
    does not parse on its own or they come from several files; None when none names it."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    quoted = {(o.file, o.line): o.code for o in graph_ops(graph) if word.search(o.code)}
    if not quoted:
        return None
    files = {f for f, _ in quoted}
    if len(files) > 1:
        return next(iter(files)), Reason(
            f"{name} is computed with in the code of {len(files)} files, and their source is not "
            "readable here: fxcache cannot tell which value this key was traced with", "float-provenance-unknown")
    body: list[ast.stmt] = []
    for (file, line), code in sorted(quoted.items()):
        try:
            stmts = ast.parse(code.strip()).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return file, Reason(
                f"{name} is computed with at line {line} ({code.strip()[:80]}), a statement whose source is "
                "not readable here and that does not parse on its own: fxcache cannot tell which value this "
                "key was traced with", "float-provenance-unknown")
        for st in stmts:
            ast.increment_lineno(st, line - 1)
        body += stmts
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    fn = ast.FunctionDef(name="quoted", args=args, body=body, decorator_list=[], returns=None, type_params=[],
                         lineno=1, col_offset=0)
    return next(iter(files)), ast.fix_missing_locations(fn)


def traced_float(catalog: Catalog, key: CacheKey, name: str, src: str, v: int,
                 inputs: Mapping[str, InputValue], frame: CompiledFrom | None) -> Reason | None:
    """Where the call gives the int ``v`` for the parameter ``name`` (source ``src``) whose
    constants in ``key``'s graph are floats read exactly from it (:func:`baked_provenance`
    of ``float(v)`` is ``same`` or ``differs``, every read the parameter itself as an op's
    scalar, ``x / t``): the key was traced with a float. Dynamo guards a Python scalar's
    type (``___check_type_id``) as well as its value, and the int's trace puts an int there
    (a literal without a point, or a SymInt input), never this float: another graph, said
    as a ``scalar-type-differs`` reason. None where the graph holds no such float, or a
    read goes through an expression (``-lr / bias`` can make the same float of an int)."""
    m = re.fullmatch(r"L\['(\w+)'\]", src)
    if m is None:
        return None
    prov = baked_provenance(catalog, key, m.group(1), {**inputs, src: float(v)}, frame)
    if prov is None or prov.status not in ("same", "differs") or not prov.uses or any(
            u.expr != m.group(1) or u.opaque or not u.ops for u in prov.uses):
        return None
    line = min(u.line for u in prov.uses)
    return Reason(f"{name}={v} is an int, and this key's graph holds a float read from {name} (line {line}): it "
                  "was traced with a float, and Dynamo guards a Python scalar's type; the int's trace puts an "
                  "int there: torch traces another graph", "scalar-type-differs")
