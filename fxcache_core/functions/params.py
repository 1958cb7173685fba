"""How the compiled frame's code reads each of its parameters, read from its source.

Dynamo traces the code of the frame it compiles, and a parameter changes the
graph only where that code reads it. For the ``def`` of a compiled frame
(:class:`~fxcache_core.functions.frames.CompiledFrom`), :func:`frame_reads` says,
per parameter (:class:`ParamUse`): its default (an ``ast`` literal, or why it is
not one), its annotation as written, whether the body reads it at all, whether it
assigns it (then no test on it says what the argument was), and where it reads
it: in the test of an ``if`` that compares it with constants alone
(:class:`BranchTest`: ``if clip:``, ``if not fast:``, ``if mask is not None:``,
``if act == 'gelu':``, ``if mode in ('a', 'b'):``, ``if p > 0.5:`` against an int or
float literal), or anywhere else (computed with, passed to a call...).

A test says which side of it the trace took where the key's graph has an op
traced from a line of that side (``# File: f.py:6 in f`` of a printed graph, the
frames of ``cache_linemap``): :mod:`fxcache_core.lookup.accounting` reads that.
The argument is never assigned, and constant during the trace (or, for an int or
float Dynamo made a symbol, ordered by its value, under a guard that it stays on that
side), so every time the test runs it goes the same way, and the lines of the other
side never run.

A resume frame (``torch_dynamo_resume_in_f_at_N``) runs the code of ``f`` after
line ``N``: :meth:`FrameReads.after` keeps the reads at or after that line (or in a
loop around it). The source is parsed with ``ast``, never run or imported
(:func:`~fxcache_core.functions.sources._parse_bounded`'s bounds). Nothing here
imports torch.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, replace

from fxcache_core.functions import branch_arith as _ba
from fxcache_core.functions import cond_tests as _ct
from fxcache_core.functions.frames import CompiledFrom, resume_parent
from fxcache_core.functions.order_tests import MAX_TESTS, order_tests
from fxcache_core.functions.order_tests import short as _short
from fxcache_core.functions.source_dirs import shown, withheld
from fxcache_core.functions.sources import Stamp, _stat
from fxcache_core.functions.trees import defs_by_name, module_node
from fxcache_core.reasons import Reason


@dataclass(frozen=True, slots=True)
class Default:
    """A parameter's default.

    Attributes:
        given: the parameter has a default.
        value: the default, where it is a literal ``ast.literal_eval`` reads (None
            otherwise, and for a default of None: see ``literal``).
        literal: the default is such a literal.
        text: the default as written (at most 80 characters).
    """

    given: bool = False
    value: object = None
    literal: bool = False
    text: str = ""


@dataclass(frozen=True, slots=True)
class BranchTest:
    """An ``if`` whose test compares one parameter with constants.

    Attributes:
        line: the ``if`` (or ``elif``) line.
        text: the test as written (``clip``, ``act == 'gelu'``), at most 80 characters.
        op: ``truth`` (``if p:``), ``not``, ``is``, ``is-not``, ``eq``, ``ne``, ``in``, ``not-in``,
            or an ordering against a number, the parameter on the left: ``lt``, ``le``, ``gt``,
            ``ge`` (``if p > 0.5:``; ``if 0 < p:`` is ``gt`` of ``p`` the other way round).
        operand: the constant compared with (a tuple for ``in``); None for ``truth``/``not``.
        body: the first and last line of the statements run when the test holds.
        orelse: those of the ``else`` side (an ``elif`` chain included); None when there is none.
        within: the tests this one sits inside, outermost first: (index in
            :attr:`FrameReads.tests`, the side it is on).
        expr: for a test of arithmetic of the parameter with number literals
            (``if n % 2 == 0:``, ``if n - 1 > 2:``), that expression as written, the
            parameter's value computed through it before the comparison; None where the
            parameter itself is compared.
        exits: the body holds a ``return``, ``raise``, ``break`` or ``continue``: without
            an ``else``, the code after the ``if`` is then the other side's, not shared.
        shared_after: the ``if`` is in no loop and nothing after it tests anything (an
            ``if``, a loop, ``a if t else b``, ``and``/``or``, ``assert``, ``match``,
            ``try``, ``with``), which could trace the body's ops for the other side.
        form: ``if`` (a statement), ``and``/``or``: one operand of an ``if`` statement's
            ``and``/``or`` (``if flag and x.dim() > 2:``; ``op`` and ``operand`` are the
            operand's, ``text`` the whole test), or ``ifexp``: a conditional expression that
            is the whole value of a one-line statement alone on its line
            (:func:`~fxcache_core.functions.cond_tests.cond_statement`); ``body`` and
            ``orelse`` are then that line both.
        bare: for ``ifexp``, True where its body is a bare name or constant (no op), False
            where its ``else`` is, None where both or neither are.
    """

    line: int
    text: str
    op: str
    operand: object
    body: tuple[int, int]
    orelse: tuple[int, int] | None
    within: tuple[tuple[int, bool], ...] = ()
    expr: str | None = None
    exits: bool = False
    shared_after: bool = True
    form: str = "if"
    bare: bool | None = None

    @property
    def shown(self) -> str:
        """The test as the code has it: ``if clip:``, or ``... if clip else ...``."""
        return f"`... if {self.text} else ...`" if self.form == "ifexp" else f"`if {self.text}:`"

    def holds(self, value: object) -> bool | None:
        """Whether the test holds for the argument ``value`` (a Python value: bool,
        None, int, float, str, tuple), as Python evaluates it; None where it cannot be
        told (``in`` of an unhashable value...)."""
        try:
            if self.expr is not None:
                value = _ba.arith(self.expr, value)
                if value is None:
                    return None
            if self.op == "truth":
                return bool(value)
            if self.op == "not":
                return not value
            if self.op == "is":
                return value is self.operand
            if self.op == "is-not":
                return value is not self.operand
            if self.op == "eq":
                return bool(value == self.operand)
            if self.op == "ne":
                return bool(value != self.operand)
            if self.op in ("in", "not-in"):
                found = value in self.operand  # type: ignore[operator]
                return found if self.op == "in" else not found
            if self.op in _ba.ORDERINGS and type(value) in (bool, int, float):
                return bool(_ba.ORDERINGS[self.op](value, self.operand))
        except Exception:  # noqa: BLE001 - a comparison of user values: unknown, never an error
            return None
        return None


@dataclass(frozen=True, slots=True)
class ParamUse:
    """One parameter of the compiled function and how its code reads it.

    Attributes:
        name: the parameter.
        keyword_only: declared after ``*`` or ``*args``.
        default: its default (:class:`Default`).
        annotation: its annotation as written (``bool``, ``torch.Tensor | None``), at most
            80 characters; None without one.
        assigned: the body assigns it (``clip = ...``, ``for clip in``, ``del clip``...):
            then no test says what the argument was.
        tests: the :attr:`FrameReads.tests` (indexes) that read it, with their lines.
        other: the lines where it is read other than in such a test.
    """

    name: str
    keyword_only: bool = False
    default: Default = Default()
    annotation: str | None = None
    assigned: bool = False
    tests: tuple[tuple[int, int], ...] = ()
    other: tuple[int, ...] = ()

    @property
    def read(self) -> bool:
        """Whether the body reads it at all."""
        return bool(self.tests or self.other)

    @property
    def tensor_annotated(self) -> bool:
        """Whether its annotation names a tensor type (``torch.Tensor | None``,
        ``Optional[torch.LongTensor]``, ``Tensor``)."""
        return self.annotation is not None and "Tensor" in self.annotation


@dataclass(frozen=True, slots=True)
class FrameReads:
    """The parameters of a compiled function, as its source reads them.

    Attributes:
        function: the ``def``'s name.
        file: its file.
        params: every named parameter but ``self`` (positional, then keyword-only).
        tests: the ``if`` tests on one parameter (:class:`BranchTest`), in source order.
        varargs, varkw: it takes ``*args`` / ``**kwargs``.
        varkw_name: the name of its ``**kwargs`` parameter; None without one.
        varkw_read: its body names that parameter (a closure's included): without,
            no keyword that reaches it can change what Dynamo traces.
        opaque: it calls ``locals``/``vars``/``eval``/``exec``, through which any
            parameter may be read.
        loops: the line spans of its ``for``/``while`` loops.
        order_tests: ``(line, text)`` of each place its code orders values in Python: a
            test (``if``/``elif``/``while``/``assert``/``a if t else b``) holding ``<``,
            ``<=``, ``>`` or ``>=`` of something not a literal (``x.shape[0] > 4``), or a
            ``min()``/``max()`` of two or more values; an ``if`` chain every side of which
            runs the same statements is left out (either way the same ops).
    """

    function: str
    file: str
    params: tuple[ParamUse, ...]
    tests: tuple[BranchTest, ...]
    varargs: bool = False
    varkw: bool = False
    opaque: bool = False
    loops: tuple[tuple[int, int], ...] = ()
    varkw_name: str | None = None
    varkw_read: bool = False
    order_tests: tuple[tuple[int, str], ...] = ()
    attrs: tuple[ParamUse, ...] = ()

    def param(self, name: str) -> ParamUse | None:
        """The parameter ``name``, None when the function has none of that name."""
        return next((p for p in self.params if p.name == name), None)

    def attr(self, name: str) -> ParamUse | None:
        """The module attribute ``name`` (``self.use_act``) as a parameter of its own, where
        the code tests it (:func:`~fxcache_core.functions.cond_tests.self_attrs_tested`);
        ``assigned`` where the code may change it. None where it tests no such attribute."""
        return next((p for p in self.attrs if p.name == name), None)

    def after(self, line: int) -> FrameReads:
        """The reads a resume frame after line ``line`` makes: those at or after it,
        or inside a loop around it (a loop runs its earlier lines again)."""
        spans = [(a, b) for a, b in self.loops if a <= line <= b]
        start = min([line, *(a for a, _ in spans)])

        def keep(n: int) -> bool:
            return n >= start

        def cut(ps: tuple[ParamUse, ...]) -> tuple[ParamUse, ...]:
            return tuple(replace(p, tests=tuple(t for t in p.tests if keep(t[1])),
                                 other=tuple(n for n in p.other if keep(n))) for p in ps)

        return replace(self, params=cut(self.params), attrs=cut(self.attrs))


def frame_reads(frame: CompiledFrom) -> FrameReads | Reason:
    """How the compiled frame ``frame``'s code reads its parameters; for a resume
    frame, the code of the function it resumes after its break line
    (:meth:`FrameReads.after`). A :class:`~fxcache_core.reasons.Reason` where the
    source cannot be read: not a readable ``.py`` file, too large, not Python, or no
    ``def`` of that name at the frame's line (the file changed since), or the file withheld
    (:func:`~fxcache_core.functions.source_dirs.withhold`: its reason)."""
    if (held := withheld(frame.file)) is not None:
        return held
    resumed = resume_parent(frame.function)
    name = resumed or frame.function
    st = _stat(frame.file)
    if st is None:
        return Reason(f"its source {shown(frame.file)} cannot be read here", "source-unreadable")
    got = _reads_in(frame.file, st[0], st[1], frame.line, name)
    if isinstance(got, Reason) or resumed is None:
        return got
    line = _break_line(frame.function)
    return got.after(line) if line is not None else got


def _break_line(function: str) -> int | None:
    """``N`` of ``torch_dynamo_resume_in_f_at_N`` (the innermost resume's)."""
    tail = function.rsplit("_at_", 1)
    return int(tail[1]) if len(tail) == 2 and tail[1].isascii() and tail[1].isdigit() else None


@functools.lru_cache(maxsize=256)
def _reads_in(path: str, size: int, stamp: Stamp, line: int, name: str) -> FrameReads | Reason:
    defs = defs_by_name(path, size, stamp)
    if isinstance(defs, Reason):
        return defs
    fn = _def_named(defs.get(name, ()), line)
    if fn is None:
        return Reason(
            f"{shown(path)} has no def {name} at line {line} (the file changed since)",
            "source-changed",
        )
    try:
        return _read_def(fn, path)
    except RecursionError:
        return Reason(f"{path}: {name} is nested too deep to read", "source-unparsable")


_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _def_named(defs: tuple[_Def, ...], line: int) -> _Def | None:
    """The innermost of ``defs`` (one name's) whose lines (decorators included) hold ``line``."""
    best = None
    for node in defs:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if first <= line <= (node.end_lineno or node.lineno) and (
            best is None or node.lineno >= best.lineno
        ):
            best = node
    return best


def _default(node: ast.expr | None) -> Default:
    if node is None:
        return Default()
    text = _short(node) or ""
    try:
        v = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Default(True, None, False, text)
    if isinstance(v, (list, dict, set, bytes, complex)):
        return Default(True, None, False, text)
    return Default(True, v, True, text)


def _literal(node: ast.expr) -> tuple[bool, object]:
    try:
        v = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None
    return (
        (True, v) if v is None or isinstance(v, (bool, int, float, str, tuple)) else (False, None)
    )


def _test_of(test: ast.expr, params: set[str]) -> tuple[str, str, object, str | None] | None:
    """(parameter, op, operand, expression) when ``test`` compares one parameter, or
    arithmetic of it with number literals (the expression,
    :func:`~fxcache_core.functions.branch_arith.arith_param`), with
    constants alone."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and not isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        for side, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
            if (name := _ba.arith_param(side, _short(side), params)) is not None:
                swapped = ast.Compare(left=ast.Name(id=name, ctx=ast.Load()), ops=test.ops, comparators=[other]) \
                    if side is test.left else ast.Compare(left=other, ops=test.ops,
                                                          comparators=[ast.Name(id=name, ctx=ast.Load())])
                got = _plain_test_of(swapped, params)
                return None if got is None else (*got, _short(side))
    got = _plain_test_of(test, params)
    return None if got is None else (*got, None)


def _plain_test_of(test: ast.expr, params: set[str]) -> tuple[str, str, object] | None:
    """(parameter, op, operand) when ``test`` compares one parameter with constants alone."""
    if isinstance(test, ast.Name) and test.id in params:
        return test.id, "truth", None
    if (
        isinstance(test, ast.UnaryOp)
        and isinstance(test.op, ast.Not)
        and isinstance(test.operand, ast.Name)
        and test.operand.id in params
    ):
        return test.operand.id, "not", None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if type(op) in _ba.ORDER_NAMES:
        return _ba.ordering_of(left, op, right, params, _literal)
    if not (isinstance(left, ast.Name) and left.id in params):
        if (
            isinstance(right, ast.Name)
            and right.id in params
            and isinstance(op, (ast.Eq, ast.NotEq))
        ):
            left, right = right, left
        else:
            return None
    assert isinstance(left, ast.Name)
    ok, value = _literal(right)
    if not ok:
        return None
    if isinstance(op, (ast.Is, ast.IsNot)):
        if not (value is None or isinstance(value, bool)):
            return None
        return left.id, "is" if isinstance(op, ast.Is) else "is-not", value
    if isinstance(op, (ast.Eq, ast.NotEq)):
        return left.id, "eq" if isinstance(op, ast.Eq) else "ne", value
    if isinstance(op, (ast.In, ast.NotIn)) and isinstance(value, tuple):
        return left.id, "in" if isinstance(op, ast.In) else "not-in", value
    return None


def _span(stmts: list[ast.stmt]) -> tuple[int, int] | None:
    if not stmts:
        return None
    return stmts[0].lineno, max(s.end_lineno or s.lineno for s in stmts)


_STORES = (ast.Store, ast.Del)



def _read_def(fn: ast.FunctionDef | ast.AsyncFunctionDef, path: str) -> FrameReads:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pos_defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(
        a.defaults
    )
    decl: list[tuple[ast.arg, bool, ast.expr | None]] = [
        (p, False, d) for p, d in zip(positional, pos_defaults, strict=True)
    ]
    decl += [(p, True, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    names = {p.arg for p, _, _ in decl} - {"self"}
    tests: list[BranchTest] = []
    test_lines: dict[str, list[tuple[int, int]]] = {n: [] for n in names}
    other: dict[str, list[int]] = {n: [] for n in names}
    assigned: set[str] = set()
    loops: list[tuple[int, int]] = []
    opaque = False
    covered: set[int] = set()  # id() of the Name (and self.X) nodes a supported test reads
    testing = [n for n in ast.walk(fn) if isinstance(n, _ba.TESTING)]
    loop_spans = [(n.lineno, n.end_lineno or n.lineno) for n in testing
                  if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]

    attr_names = _ct.loaded_attrs(fn) if positional and positional[0].arg == "self" else set()
    testable = names | attr_names
    test_lines.update({n: [] for n in attr_names})
    alone = _ct.lines_alone(fn)

    def add(s: ast.stmt, test: ast.expr, body: tuple[int, int] | None, orelse: tuple[int, int] | None,
            within: tuple[tuple[int, bool], ...], exits: bool, e: ast.IfExp | None = None) -> int | None:
        form = "if" if e is not None or not isinstance(test, ast.BoolOp) else \
            "and" if isinstance(test.op, ast.And) else "or"
        shared = not any(lo <= s.lineno <= hi for lo, hi in loop_spans) and not any(
            n.lineno > (s.end_lineno or s.lineno) for n in testing)
        first = None
        for part in test.values if isinstance(test, ast.BoolOp) and e is None else [test]:
            read, attrs = _ct.self_attrs_tested(part) if attr_names else (part, [])
            got = _test_of(read, testable)
            if got is None or body is None or len(tests) >= MAX_TESTS:
                continue
            p, op, operand, expr = got
            tests.append(BranchTest(s.lineno, _short(test) or "", op, operand, body, orelse, within, expr, exits,
                                    shared, "ifexp" if e is not None else form,
                                    None if e is None else _ct.bare_side(e)))
            test_lines[p].append((len(tests) - 1, s.lineno))
            covered.update(id(n) for n in (*ast.walk(part), *attrs) if isinstance(n, (ast.Name, ast.Attribute)))
            first = len(tests) - 1 if first is None else first
        return first

    def visit(stmts: list[ast.stmt], within: tuple[tuple[int, bool], ...]) -> None:
        for s in stmts:
            if isinstance(s, ast.If):
                i = add(s, s.test, _span(s.body), _span(s.orelse), within,
                        any(isinstance(n, _ba.EXITS) for b in s.body for n in ast.walk(b)))
                if i is not None:
                    visit(s.body, (*within, (i, True)))
                    visit(s.orelse, (*within, (i, False)))
                    continue
            elif (e := _ct.cond_statement(s, alone)) is not None:
                add(s, e.test, (s.lineno, s.lineno), (s.lineno, s.lineno), within, False, e)
            if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
                loops.append((s.lineno, s.end_lineno or s.lineno))
            for child in _child_blocks(s):
                visit(child, within)

    visit(fn.body, ())
    for n in _walk_body(fn):
        if isinstance(n, ast.Name):
            if n.id in ("locals", "vars", "eval", "exec"):
                opaque = True
            if n.id in names:
                if isinstance(n.ctx, _STORES):
                    assigned.add(n.id)
                elif id(n) not in covered:
                    other[n.id].append(n.lineno)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            assigned.update(set(n.names) & names)
        elif isinstance(n, ast.arg) and n.arg in names:
            assigned.add(n.arg)  # a nested function's or lambda's parameter shadows it
    tested = [n for n in sorted(attr_names) if test_lines[n]]
    attr_other, attr_changed = _ct.attr_reads(fn, covered, _ct.stored_in_file(module_node(path)), tested) \
        if tested else ({}, set())
    params = tuple(
        ParamUse(
            p.arg,
            kw,
            _default(d),
            _short(p.annotation),
            p.arg in assigned,
            tuple(test_lines[p.arg]),
            tuple(sorted(set(other[p.arg]))),
        )
        for p, kw, d in decl
        if p.arg != "self"
    )
    kw = a.kwarg.arg if a.kwarg is not None else None
    kw_read = kw is not None and any(isinstance(n, ast.Name) and n.id == kw for n in _walk_body(fn))
    return FrameReads(
        fn.name,
        path,
        params,
        tuple(tests),
        a.vararg is not None,
        a.kwarg is not None,
        opaque,
        tuple(loops),
        kw,
        kw_read,
        order_tests(fn),
        tuple(ParamUse(n, assigned=n in attr_changed, tests=tuple(test_lines[n]),
                       other=tuple(sorted(set(attr_other[n])))) for n in tested),
    )


def reads_of_def(fn: ast.FunctionDef | ast.AsyncFunctionDef, path: str) -> FrameReads:
    """How the ``def`` ``fn`` (parsed from ``path``, or a view of one made by a rule:
    :func:`fxcache_core.lookup.container_items.item_view`) reads its parameters."""
    return _read_def(fn, path)


def _child_blocks(s: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists nested in ``s`` (an ``if`` not read as a test, loops,
    ``with``, ``try``, ``match``), not those of a nested ``def`` or ``class``."""
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    for field in ("body", "orelse", "finalbody"):
        block = getattr(s, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for h in getattr(s, "handlers", ()):
        yield h.body
    for c in getattr(s, "cases", ()):
        yield c.body


def _walk_body(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Every node of ``fn``'s body and its decorators' arguments aside (nested
    functions and lambdas included: a closure reads the parameter too)."""
    for stmt in fn.body:
        yield from ast.walk(stmt)


def param_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """The parameters of ``fn`` that have a default, each with its default's expression
    (positional ones, then keyword-only), as Python pairs them."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True))
    return pairs + [
        (p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None
    ]


def left_out_defaults(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    given: Container[str],
    read: Callable[[ast.expr], object],
    *,
    none: bool = False,
) -> dict[str, object]:
    """The defaults of ``fn``'s parameters not in ``given`` (the values its code reads when
    a call leaves them out), each as ``read`` gives its expression's value (None: not a
    value it reads, left out); with ``none``, a default written ``None`` is None."""
    out: dict[str, object] = {}
    for p, d in param_defaults(fn):
        if p.arg in given:
            continue
        if none and isinstance(d, ast.Constant) and d.value is None:
            out[p.arg] = None
        elif (v := read(d)) is not None:
            out[p.arg] = v
    return out


__all__ = [
    "BranchTest",
    "Default",
    "FrameReads",
    "ParamUse",
    "frame_reads",
    "left_out_defaults",
    "param_defaults",
    "reads_of_def",
]
