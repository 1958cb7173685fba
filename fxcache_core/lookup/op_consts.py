"""A tuple of ints or a str passed to a torch function whose ops show it exactly, read off them.

Dynamo specializes a str always, and a tuple of ints where its items are no SymInts (under
``dynamic=None``/``False``; under ``dynamic=True`` each int but 0 and 1 is an input of the
graph), and calls the function with the value. For the functions here AOTAutograd's forward
graph shows that value exactly. Printed by torch 2.13 on CPU (``dynamic`` None, True, False):

* ``F.pad(x, pad, mode="constant", value=v)`` -> one ``aten.constant_pad_nd.default(x,
  [1, 1], 0.0)``, whose ``# File:`` comment names ``torch/nn/functional.py`` ``in pad``
  (``torch._C._nn.pad``), not the caller's line; under ``dynamic=True`` the pads are the
  graph's inputs (``[arg4_1, arg5_1]``). ``mode="reflect"`` traces ``iota``, ``abs``,
  ``sub`` and ``_unsafe_index`` ops, ``"replicate"`` ``iota``, ``clamp_min``,
  ``clamp_max`` and ``_unsafe_index``, ``"circular"`` ``empty``, ``slice``, ``copy`` and
  ``slice_scatter`` (all under that same comment): none makes ``constant_pad_nd``. So one
  ``constant_pad_nd`` op, alone under that comment, says ``mode="constant"`` and holds
  ``pad`` as the call gave it (a tuple or list alike: :mod:`~fxcache_core.lookup.baked_accounts`
  says that).
* ``F.gelu(x, approximate=a)`` -> ``"none"``: ``mul`` by 0.5 and 0.7071067811865476,
  ``erf``, ``add``, ``mul``; ``"tanh"``: ``mul``, ``mul`` by 0.044715 and
  0.7978845608028654, ``tanh``, ``add``, ``mul``; both on the caller's line. So one
  ``erf`` and no ``tanh`` from the statement says ``"none"``, one ``tanh`` and no ``erf``
  ``"tanh"``, where the statement's other calls are of :data:`NEITHER` (none traces
  either op).

Not read here, as no op shows them exactly: ``F.pad``'s ``mode`` other than
``"constant"`` (which of the decompositions above a graph holds is a pattern, not a value),
``torch.roll``'s shifts (an ``iota`` plus the shift, ``fmod`` by the size: a sum, not the
shift), ``softmax``'s ``dtype`` (a ``convert_element_type`` before ``amax`` where given, none
where None: :mod:`~fxcache_core.lookup.dtype_args` reads dtypes). ``permute``'s and
``flip``'s dims stay verbatim (``permute.default(x, [1, 0, 2])``, ``prims.rev.default(x,
[0, 2])``) and are :mod:`~fxcache_core.lookup.int_ops`' to read.

:func:`op_const_provenance` decides only where that is exact, under the conditions of
:mod:`~fxcache_core.lookup.fn_op_args`: the parameter is not assigned; the reads of it that
are, as the bare name, the argument (positional where the table places it, or by keyword;
no starred or ``**`` argument) of a call of the function are all of one call, in a plain
statement outside any loop, alone on its lines, not in a part that may not run (a
conditional expression's branch, ``and``/``or``, a lambda or comprehension); its other reads
(``mode == "constant"``) need no reading: a str or a tuple of ints that the graph shows as a
constant is one Dynamo specialized and guards, so the same value reads the same everywhere
and another value traces another graph; no call of the function may
run it again (:func:`~fxcache_core.lookup.fn_op_args.may_reenter`); for ``F.pad`` the
function makes no other call of ``torch.nn.functional`` (one may pad inside: its ops would
carry the same comment) nor of ``stft``, and its graph has exactly one op under
``functional.py``'s ``pad``; the call's value is one the function takes (pads: an even
number of ints; a mode or approximation torch knows). Then the op says ``same`` or
``differs`` (another graph: Dynamo guards the value); anything else is ``unknown``. Nothing
here imports torch, runs the source or the graph.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.decode.origins import graph_comment
from fxcache_core.functions.params import left_out_defaults
from fxcache_core.lookup.ast_reads import (
    MAY_NOT_RUN,
    SIMPLE_STATEMENTS,
    ancestors,
    in_loop,
    root_name,
    shares_lines,
)
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.float_exprs import Provenance, _statement, unknown_provenance
from fxcache_core.lookup.fn_op_args import may_reenter
from fxcache_core.lookup.int_ops import OPAQUE, printed_value
from fxcache_core.lookup.py_names import assigned_names, shadowing
from fxcache_core.lookup.torch_names import torch_name, torch_roots
from fxcache_core.lookup.traced_lines import MAX_LINES, OP_RE, op_calls
from fxcache_core.reasons import Reason

__all__ = ["NEITHER", "PLACES", "op_const_provenance"]


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a call of ``function`` takes the parameter: ``pos`` among its positional
    arguments (None: keyword only), ``keyword``; ``positional``: how many it may take by
    position; ``keywords``: those a call may give; ``values``: the values torch takes."""

    function: str
    keyword: str
    pos: int | None
    positional: int
    keywords: frozenset[str]
    values: frozenset[str] | None = None


_PAD_KW = frozenset({"input", "pad", "mode", "value"})
PLACES: Mapping[tuple[str, str], _Place] = {
    ("pad", "pad"): _Place("pad", "pad", 1, 4, _PAD_KW),
    ("pad", "mode"): _Place(
        "pad", "mode", 2, 4, _PAD_KW, frozenset({"constant", "reflect", "replicate", "circular"})
    ),
    ("gelu", "approximate"): _Place(
        "gelu",
        "approximate",
        None,
        1,
        frozenset({"input", "approximate"}),
        frozenset({"none", "tanh"}),
    ),
}
"""(function, keyword) -> where its call takes the argument (module docstring)."""

NEITHER = frozenset(
    {
        "softmax", "log_softmax", "sum", "mean", "amax", "max", "min", "sin", "cos", "exp", "log",
        "relu", "abs", "neg", "add", "sub", "mul", "div", "view", "reshape", "flatten",
        "transpose", "permute", "contiguous", "unsqueeze", "squeeze", "float", "double", "half",
    }
)  # fmt: skip
"""Methods and functions whose ops are never ``erf`` nor ``tanh`` (torch 2.13's
decompositions): a statement may call them around ``F.gelu``."""

_ROOTS = frozenset({"torch", "F", "nn", "functional"})
_NO_PAD = frozenset(
    {
        "gelu",
        "relu",
        "silu",
        "sigmoid",
        "tanh",
        "softmax",
        "log_softmax",
        "linear",
        "layer_norm",
        "dropout",
    }
)
"""Functions of ``torch.nn.functional`` whose Python body calls no ``pad`` (torch 2.13)."""
_PAD_FRAME = ("torch/nn/functional.py", "pad")


def _called(call: ast.AST) -> str | None:
    """``pad`` or ``gelu`` for a call of ``F.pad``/``torch.nn.functional.gelu``...; None else."""
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    f = call.func
    return f.attr if f.attr in ("pad", "gelu") and root_name(f) in _ROOTS else None


def _place(
    n: ast.Name, param: str, parents: Mapping[ast.AST, ast.AST]
) -> tuple[ast.Call, _Place] | None:
    p = parents.get(n)
    call = parents.get(p) if isinstance(p, ast.keyword) else p
    name = _called(call) if call is not None else None
    if name is None or not isinstance(call, ast.Call):
        return None
    for (fname, _), place in PLACES.items():
        if fname != name:
            continue
        if (
            any(isinstance(a, ast.Starred) for a in call.args)
            or len(call.args) > place.positional
            or any(k.arg is None or k.arg not in place.keywords for k in call.keywords)
        ):
            return None
        if isinstance(p, ast.keyword) and p.arg == place.keyword and p.value is n:
            return call, place
        if place.pos is not None and place.pos < len(call.args) and call.args[place.pos] is n:
            return call, place
    return None


def op_const_provenance(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    graph: str,
    param: str,
    values: Mapping[str, object],
) -> Provenance | None:
    """What the call's value of ``param`` (``values``: the call's Python values by name; one
    left out at a literal default is read from ``fn``) does to the key whose printed
    AOTAutograd forward graph is ``graph``, traced from ``fn`` in ``file``, where every read
    of it is an argument of :data:`PLACES`: ``same``, ``differs`` (another graph) or
    ``unknown``; None where a read is no such argument (another rule's to read)."""
    with shadowing(file, fn):
        return _provenance(fn, file, graph, param, values)


def _provenance(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    graph: str,
    param: str,
    values: Mapping[str, object],
) -> Provenance | None:
    if param in assigned_names(fn):
        return None
    parents = ast_parents(fn)
    found: list[tuple[ast.stmt, ast.Call, _Place]] = []
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load)):
            continue
        site = _place(n, param, parents)
        stmt = _statement(n, parents, fn)
        if stmt is None:
            return None  # read in a nested function or lambda: another rule's to read
        if site is None:
            continue  # a test or another call: the value found below pins it as much
        found.append((stmt, *site))
    if not found:
        return None
    stmt, call, place = found[0]
    line = stmt.lineno
    roots = torch_roots(file, fn)
    if any(torch_name(c.func, roots) != f"torch.nn.functional.{p.function}" for _, c, p in found):
        return _unknown(
            param, line, f"{ast.unparse(call.func)} is not known to be torch.nn.functional.{place.function} "
            "(the module's imports do not show that its name is torch's)"
        )
    if any(c is not call for _, c, _ in found):
        return _unknown(param, line, f"it is read by more than one call of {place.function}")
    if (re := may_reenter(fn)) is not None:
        return _unknown(param, re.lineno, "a call there may run this function again")
    if not isinstance(stmt, SIMPLE_STATEMENTS) or in_loop(stmt, parents, fn):
        return _unknown(param, line, "the statement is not a plain one outside any loop")
    if any(isinstance(x, MAY_NOT_RUN) for x in ancestors(call, parents)):
        return _unknown(param, line, "the call is in a part of the statement that may not run")
    if shares_lines(stmt, fn, parents):
        return _unknown(param, line, "another statement shares its lines")
    held = (
        _pad_held(fn, graph, call, place)
        if place.function == "pad"
        else _gelu_held(file, graph, stmt, call)
    )
    if isinstance(held, str) and held.startswith("?"):
        return _unknown(param, line, held[1:])
    values = {**left_out_defaults(fn, values, _literal), **values}
    v = values.get(param, OPAQUE)
    if place.values is not None:
        ok = isinstance(v, str) and v in place.values
    else:
        ok = (
            isinstance(v, (tuple, list))
            and bool(v)
            and len(v) % 2 == 0
            and all(type(i) is int for i in v)
        )
    if not ok:
        return _unknown(
            param,
            line,
            f"the call's value {v!r} is not one {place.function} takes as {place.keyword}",
        )
    got = tuple(v) if isinstance(v, list) else v  # type: ignore[arg-type]
    where = f"the {place.function} call at line {line}"
    if got != held:
        return Provenance(
            "differs",
            Reason(
                f"{param}={v!r} gives {where} {place.keyword}={got!r}; this key's graph shows "
                f"{place.keyword}={held!r} there: torch traces another graph",
                "op-const-differs",
            ),
        )
    return Provenance(
        "same",
        Reason(
            f"{param}={v!r}: {where} traced this key's graph with {place.keyword}={held!r}",
            "op-const-same",
        ),
    )


def _pad_held(fn: ast.AST, graph: str, call: ast.Call, place: _Place) -> object:
    """What the key's one op of ``F.pad`` shows of ``place``'s argument; ``"?why"`` where
    it is not exact."""
    for c in ast.walk(fn):
        if not isinstance(c, ast.Call) or c is call or not isinstance(c.func, ast.Attribute):
            continue
        dotted = _dotted(c.func)
        if c.func.attr in _NO_PAD:
            continue
        if (
            c.func.attr in ("stft", "istft")
            or (
                dotted is not None
                and dotted.split(".")[0] in _ROOTS
                and dotted.split(".")[0] != "torch"
            )
            or (dotted is not None and dotted.startswith(("torch.nn.", "torch.functional.")))
        ):
            return f"?the call of {ast.unparse(c.func)} at line {c.lineno} may pad too"
    ops = _pad_ops(graph)
    if len(ops) != 1 or ops[0][0] != "constant_pad_nd":
        return f"?its graph has {len(ops)} op(s) of F.pad, not one constant_pad_nd"
    if place.keyword == "mode":
        return "constant"
    args = ops[0][1].args
    pads = printed_value(args[1]) if len(args) > 1 else OPAQUE
    if not (isinstance(pads, tuple) and pads and all(type(i) is int for i in pads)):
        return (
            "?the constant_pad_nd op there holds no constant pads (the graph takes them as inputs)"
        )
    return pads


def _dotted(e: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names; None for anything else (a call's result)."""
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute) and (base := _dotted(e.value)) is not None:
        return f"{base}.{e.attr}"
    return None


def _pad_ops(graph: str) -> list[tuple[str, ast.Call]]:
    """The ops under a ``# File: .../torch/nn/functional.py:N in pad`` comment."""
    out: list[tuple[str, ast.Call]] = []
    inside = False
    for n, text in enumerate(graph.splitlines()):
        if n >= MAX_LINES:
            break
        c = graph_comment(text)
        if c is not None:
            inside = (
                c.file.replace("\\", "/").endswith(_PAD_FRAME[0]) and c.function == _PAD_FRAME[1]
            )
            continue
        if inside and (m := OP_RE.search(text)) is not None:
            try:
                parsed = ast.parse(f"f({m.group('args')})", mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                parsed = ast.Call(ast.Name("f"), [], [])
            out.append(
                (
                    m.group("op"),
                    parsed if isinstance(parsed, ast.Call) else ast.Call(ast.Name("f"), [], []),
                )
            )
    return out


def _gelu_held(file: str, graph: str, stmt: ast.stmt, call: ast.Call) -> str:
    """``"none"`` or ``"tanh"`` as the statement's ops show; ``"?why"`` where not exact."""
    for c in ast.walk(stmt):
        if not isinstance(c, ast.Call) or c is call:
            continue
        name = c.func.attr if isinstance(c.func, ast.Attribute) else None
        if name not in NEITHER:
            shown = ast.unparse(c.func)
            return f"?the statement also calls {shown}, whose ops may be erf or tanh"
    line, last = stmt.lineno, stmt.end_lineno or stmt.lineno
    stems = [op for f, n, op, _ in op_calls(graph) if f == file and line <= n <= last]
    erf, tanh = stems.count("erf"), stems.count("tanh")
    if "gelu" in stems or (erf, tanh) not in ((1, 0), (0, 1)):
        return f"?its graph has {erf} erf and {tanh} tanh op(s) from that statement"
    return "none" if erf else "tanh"


def _literal(d: ast.expr) -> object:
    """A default written as a str literal or a tuple of int literals; None else."""
    if isinstance(d, ast.Constant) and type(d.value) is str:
        return d.value
    if isinstance(d, ast.Tuple) and all(
        isinstance(e, ast.Constant) and type(e.value) is int for e in d.elts
    ):
        return tuple(e.value for e in d.elts)  # type: ignore[union-attr]
    return None


def _unknown(param: str, line: int, why: str) -> Provenance:
    return unknown_provenance(param, line, why, code="op-const-unknown", via=" as an argument of a torch function")
