"""A bool or float passed to a torch function whose one op keeps it verbatim, read off that op.

Dynamo specializes a bool always, and a float under ``dynamic=None``/``False`` (under
``dynamic=True`` too where it reaches an op that takes no tensor: a restart,
:mod:`fxcache_core.lookup.float_restart`), and calls the function with its value. For the
functions of :data:`FUNCTIONS` AOTAutograd's forward graph keeps that value at a fixed place
of one op, as the code gave it, or prints nothing there where it is the op's default.
Printed by torch 2.13 on CPU:

* ``F.scaled_dot_product_attention(q, k, v, attn_mask=m, dropout_p=p, is_causal=c,
  scale=s)`` -> ``aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, v, p, c,
  attn_mask = m, scale = s)`` (schema ``(query, key, value, float dropout_p=0.0, bool
  is_causal=False, *, Tensor? attn_mask=None, float? scale=None)``): ``is_causal=True``
  prints ``0.0, True``; ``is_causal=False`` with ``dropout_p=0.0`` prints neither;
  ``scale=0.5`` prints ``scale = 0.5``; a bool mask is first made a float one by a
  ``where`` on the same line. A ``dropout_p`` above 0 traces the math decomposition instead
  (no such op: a dropout's ``rand``, ``gt`` and ``mul``), as does a call the CPU kernel
  cannot take; a training graph is not cached by AOTAutograd at all.

Calls that are *not* here because no op keeps the value: ``F.interpolate``'s ``mode``,
``align_corners`` and ``scale_factor`` (decomposed into index arithmetic: the mode is a
pattern of ops, ``scale_factor`` its reciprocal or only the output's sizes), ``F.gelu``'s
``approximate`` (``erf`` or ``tanh`` arithmetic).

:func:`fn_op_provenance` decides only where that is exact: the parameter is not assigned,
and every read of it is, as the bare name, one argument of :data:`FUNCTIONS` in the table
(positional where the table places it, or by keyword; no starred or ``**`` argument and
no keyword the table does not know) of a call in a plain statement outside any loop, alone
on its lines, with no part that may not run (a conditional expression, ``and``/``or``, a
lambda or comprehension), holding no other call of that function; its value for the call
is of the argument's kind (a bool for a bool, a float for a float, a float or None for
``scale``); and the key's graph has exactly one such op traced from the statement's lines.
Then the op's value there (its default where it prints none) says ``same`` or ``differs``
(another graph: the op holds another value); anything else is ``unknown``. Nothing here
imports torch, runs the source or the graph.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from fxcache_core.functions.params import left_out_defaults
from fxcache_core.lookup.ast_reads import (
    MAY_NOT_RUN,
    SIMPLE_STATEMENTS,
    in_loop,
    root_name,
    shares_lines,
)
from fxcache_core.lookup.ast_reads import parents as ast_parents
from fxcache_core.lookup.float_exprs import FloatUse, Provenance, _statement, unknown_provenance
from fxcache_core.lookup.int_ops import OPAQUE, printed_value
from fxcache_core.lookup.py_names import assigned_names, shadowing
from fxcache_core.lookup.pyvalues import same_value
from fxcache_core.lookup.torch_names import torch_name, torch_roots
from fxcache_core.lookup.traced_lines import op_calls
from fxcache_core.reasons import Reason

__all__ = ["FUNCTIONS", "FnArg", "FnRule", "fn_op_provenance", "fn_tensor_absent", "may_reenter"]


@dataclass(frozen=True, slots=True)
class FnArg:
    """One argument of a function of :data:`FUNCTIONS` that its op keeps.

    Attributes:
        name: the Python keyword (``is_causal``).
        pos: its position among the call's arguments, None for a keyword-only one.
        aten: where the op holds it: a positional index or a keyword name.
        absent: what the op holds when it prints nothing there (the op's default).
        kind: ``bool``, ``float``, ``float?`` (a float or None) or ``tensor?`` (a tensor
            or None: only None is a value read; the op holds a name for a tensor).
    """

    name: str
    pos: int | None
    aten: int | str
    absent: object
    kind: str


@dataclass(frozen=True, slots=True)
class FnRule:
    """A function's op (``stem``, the op's name without its overload), the keywords a
    call may give (``keywords``: the table's and those that move none of them) and the
    arguments the op keeps."""

    stem: str
    positional: int
    keywords: frozenset[str]
    args: tuple[FnArg, ...]


FUNCTIONS: Mapping[str, FnRule] = {
    "scaled_dot_product_attention": FnRule(
        "_scaled_dot_product_flash_attention_for_cpu",
        6,
        frozenset({"query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale"}),
        (
            FnArg("attn_mask", 3, "attn_mask", None, "tensor?"),
            FnArg("dropout_p", 4, 3, 0.0, "float"),
            FnArg("is_causal", 5, 4, False, "bool"),
            FnArg("scale", None, "scale", None, "float?"),
        ),
    ),
}
"""A ``torch.nn.functional`` function -> the op it traces in AOTAutograd's graph and the
arguments that op keeps verbatim (checked against torch 2.13's printed graphs on CPU:
module docstring). ``positional``: how many arguments a call may give by position."""

_ROOTS = frozenset({"torch", "F", "nn", "functional"})


def _function(call: ast.AST) -> str | None:
    """The name of a call of :data:`FUNCTIONS` (``F.scaled_dot_product_attention(...)``,
    ``torch.nn.functional.scaled_dot_product_attention(...)``); None for any other."""
    if not isinstance(call, ast.Call):
        return None
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr in FUNCTIONS and root_name(f) in _ROOTS:
        return f.attr
    return None


def _site(n: ast.Name, parents: Mapping[ast.AST, ast.AST]) -> tuple[ast.Call, FnArg] | None:
    """The call of :data:`FUNCTIONS` and its argument that the name ``n`` is; None where it
    is none (or the call's arguments cannot be placed)."""
    p = parents.get(n)
    call = parents.get(p) if isinstance(p, ast.keyword) else p
    name = _function(call) if call is not None else None
    if name is None or not isinstance(call, ast.Call):
        return None
    rule = FUNCTIONS[name]
    if (
        any(isinstance(a, ast.Starred) for a in call.args)
        or len(call.args) > rule.positional
        or any(k.arg is None or k.arg not in rule.keywords for k in call.keywords)
    ):
        return None
    for arg in rule.args:
        if isinstance(p, ast.keyword) and p.arg == arg.name and p.value is n:
            return call, arg
        if arg.pos is not None and arg.pos < len(call.args) and call.args[arg.pos] is n:
            return call, arg
    return None


def _held(call: ast.Call, arg: FnArg) -> object:
    """What a printed op call holds at the argument's place (its default where it prints
    none): a constant, or OPAQUE."""
    if isinstance(arg.aten, str):
        got = [k.value for k in call.keywords if k.arg == arg.aten]
        return printed_value(got[0]) if got else arg.absent
    return printed_value(call.args[arg.aten]) if len(call.args) > arg.aten else arg.absent


def _of_kind(v: object, kind: str) -> bool:
    if kind == "bool":
        return type(v) is bool
    if kind == "tensor?":
        return v is None
    return type(v) is float or (kind == "float?" and v is None)


def _literal(d: ast.expr) -> object:
    """A default written as a bool, float or None literal; None for anything else (read
    with ``none=True`` for None)."""
    if isinstance(d, ast.Constant) and type(d.value) in (bool, float):
        return d.value
    return None


def fn_op_provenance(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    graph: str,
    param: str,
    values: Mapping[str, object],
) -> Provenance | None:
    """What the call's value of ``param`` (in ``values``, the call's Python values by name;
    one left out at a literal default is read from ``fn``) does to the key whose printed
    AOTAutograd forward graph is ``graph``, traced from ``fn`` in ``file``, where every read
    of it is an argument the module docstring names: ``same``, ``differs`` (another graph)
    or ``unknown`` (a reason says why); None where a read is no such argument (another
    rule's to read)."""
    with shadowing(file, fn):
        return _fn_op_provenance(fn, file, graph, param, values)


@dataclass(frozen=True, slots=True)
class _Held:
    """One read of the parameter: its statement's lines, the function's rule, the argument
    it is and what the key's op holds there (a constant, None, or OPAQUE: a tensor)."""

    line: int
    last: int
    rule: FnRule
    arg: FnArg
    held: object


def _reads(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str
) -> list[_Held] | Provenance | None:
    """What the key's op holds at each read of ``param`` (the module docstring's
    conditions); a Provenance ``unknown`` where a condition fails; None where a read is no
    argument of :data:`FUNCTIONS` (another rule's to read)."""
    if param in assigned_names(fn):
        return None
    parents = ast_parents(fn)
    sites: dict[int, tuple[ast.stmt, list[tuple[ast.Call, FnArg]]]] = {}
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == param) or not isinstance(n.ctx, ast.Load):
            continue
        site = _site(n, parents)
        stmt = _statement(n, parents, fn)
        if site is None or stmt is None:
            return None  # a read that is no such argument: another rule's to read
        sites.setdefault(id(stmt), (stmt, []))[1].append(site)
    if not sites:
        return None
    roots = torch_roots(file, fn)
    for stmt, found in sites.values():
        for c, _ in found:
            if torch_name(c.func, roots) != f"torch.nn.functional.{_function(c)}":
                return _unknown(
                    param, stmt.lineno, f"{ast.unparse(c.func)} is not known to be torch.nn.functional's "
                    "(the module's imports do not show that its name is torch's)"
                )
    if (call := may_reenter(fn)) is not None:
        return _unknown(
            param,
            call.lineno,
            "a call there may run this function again (its own name, a "
            "module of its own class, a helper that calls it back): the op's comment names only "
            "the innermost frame, so which run of the function gave it its value is not known",
        )
    ops = [(line, op, call) for f, line, op, call in op_calls(graph) if f == file]
    out: list[_Held] = []
    for stmt, found in sites.values():
        line, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        if not isinstance(stmt, SIMPLE_STATEMENTS) or in_loop(stmt, parents, fn):
            return _unknown(param, line, "the statement is not a plain one outside any loop")
        if any(isinstance(x, MAY_NOT_RUN) for x in ast.walk(stmt)):
            return _unknown(param, line, "a part of the statement may not run")
        if shares_lines(stmt, fn, parents):
            return _unknown(param, line, "another statement shares its lines")
        calls = [c for c in ast.walk(stmt) if isinstance(c, ast.Call) and _name_of(c) in FUNCTIONS]
        if len(calls) != 1 or any(c is not calls[0] for c, _ in found):
            return _unknown(param, line, f"the statement makes {len(calls)} calls of that function")
        rule = FUNCTIONS[_function(calls[0]) or ""]
        traced = [c for n, op, c in ops if line <= n <= last and op == rule.stem]
        if len(traced) != 1:
            return _unknown(
                param,
                line,
                f"its graph has {len(traced)} {rule.stem} op(s) from that statement "
                "(another path of the function traced it, or more than one call)",
            )
        for _, arg in found:
            held = _held(traced[0], arg)
            if not (_of_kind(held, arg.kind) or (held is OPAQUE and arg.kind == "tensor?")):
                return _unknown(
                    param, line, f"the {rule.stem} op there holds no constant {arg.name}"
                )
            out.append(_Held(line, last, rule, arg, held))
    return out


_SAFE_ROOTS = frozenset({"torch", "F", "nn", "functional", "math", "operator"})
"""Names a call may start from and never run the function again: torch's modules and
the standard library's arithmetic."""
_SAFE_BUILTINS = frozenset(
    {
        "len",
        "int",
        "float",
        "bool",
        "abs",
        "max",
        "min",
        "round",
        "sum",
        "range",
        "isinstance",
        "tuple",
        "list",
        "dict",
        "getattr",
        "hasattr",
        "enumerate",
        "zip",
    }
)


def may_reenter(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Call | None:
    """The first call in ``fn`` that may run ``fn`` again: one by its own name, ``self``'s
    (a submodule may be of the same class), or a function other than torch's, a builtin or
    a method of one of its locals (a helper may call it back); None where there is none.
    An op inlined from a second run of ``fn`` carries the same ``# File: ...`` line as the
    first's, so the value it holds may be another run's."""
    local = {
        a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
    } | assigned_names(fn)
    local.discard("self")
    for c in ast.walk(fn):
        if not isinstance(c, ast.Call):
            continue
        f = c.func
        if isinstance(f, ast.Name):
            if f.id == fn.name or f.id not in _SAFE_BUILTINS:
                return c
            continue
        if isinstance(f, ast.Attribute) and f.attr == fn.name:
            return c
        root = root_name(f)
        if root is None or (root not in _SAFE_ROOTS and root not in local):
            return c
    return None


def _fn_op_provenance(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    file: str,
    graph: str,
    param: str,
    values: Mapping[str, object],
) -> Provenance | None:
    reads = _reads(fn, file, graph, param)
    if not isinstance(reads, list):
        return reads
    values = {**left_out_defaults(fn, values, _literal, none=True), **values}
    v = values.get(param, OPAQUE)
    shown: list[str] = []
    uses: list[FloatUse] = []
    for r in reads:
        if v is OPAQUE or not _of_kind(v, r.arg.kind):
            return _unknown(
                param,
                r.line,
                f"the call's value is not {_KINDS[r.arg.kind]}, as {r.arg.name} takes",
            )
        where = f"the {r.rule.stem} op at line {r.line}"
        if not same_value(v, r.held):
            return Provenance(
                "differs",
                Reason(
                    f"{param}={v!r} gives {where} {r.arg.name}={v!r}; this key's graph has "
                    f"{r.arg.name}={_text(r.held)} there: torch traces another graph",
                    "fn-arg-differs",
                ),
            )
        shown.append(f"{where}: {r.arg.name}={_text(r.held)}")
        if type(v) is float:
            uses.append(
                FloatUse(r.line, r.last, repr(v), frozenset({_function_name(r.rule)}), text=param)
            )
    return Provenance(
        "same",
        Reason(
            f"{param}={v!r} gives this key's graph its op's value ({'; '.join(shown)})",
            "fn-arg-same",
        ),
        tuple(uses),
    )


def fn_tensor_absent(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, file: str, graph: str, param: str
) -> int | None:
    """The line of a read of ``param`` whose op in the key's graph holds no tensor where
    every read of it is an optional tensor argument of :data:`FUNCTIONS` (``attn_mask``)
    under the module docstring's conditions: the key was traced with ``param`` None, and a
    call that gives a tensor traces another graph. None where that is not so or not read."""
    with shadowing(file, fn):
        reads = _reads(fn, file, graph, param)
    if (
        not isinstance(reads, list)
        or not reads
        or any(r.arg.kind != "tensor?" or r.held is not None for r in reads)
    ):
        return None
    return reads[0].line


def _function_name(rule: FnRule) -> str:
    return next(name for name, r in FUNCTIONS.items() if r is rule)


def _text(v: object) -> str:
    return "a tensor" if v is OPAQUE else repr(v)


_KINDS = {"bool": "a bool", "float": "a float", "float?": "a float or None", "tensor?": "None"}


def _name_of(call: ast.Call) -> str | None:
    """The called name, whatever it is called on (``x.f(...)``, ``f(...)``)."""
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _unknown(param: str, line: int, why: str) -> Provenance:
    return unknown_provenance(param, line, why, code="fn-arg-unknown", via=" as an argument of a torch function")
