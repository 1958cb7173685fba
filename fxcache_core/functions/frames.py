"""The frame Dynamo compiled, read from the cache: the compiled frame of a key, its
resume frames, and a module's class and parameters read from its source file.

``torch.compile(fn)`` makes Dynamo compile the code object of ``fn``; inlined
callees (a model's ``forward``, its layers, a loss) become part of that frame's
graph. After a graph break Dynamo compiles a resume function of its own,
``torch_dynamo_resume_in_<fn>_at_<line>`` (torch/_dynamo/resume_execution.py),
and any function called eagerly from the break (a model whose forward broke the
graph) is a frame compiled on its own. ``torch.compile(module)`` compiles
``Module._call_impl(self, *args, **kwargs)``: the inputs are ``L['args'][i]`` and
``L['kwargs'][name]`` and the first user frame is the module's ``forward`` (or a
decorator around it, as transformers wraps ``forward``).

One name per function (:class:`CompiledFrom`, what ``ls``, ``ls --by function``,
``match`` and ``explain`` all show): decorator wrappers at the head of the stack
fold into the function they wrap (:func:`named`). A frame is such a wrapper when
the entry's stack goes on into another frame and its source says so: the ``def``
around the frame's line carries ``@functools.wraps(...)`` (``@wraps(...)``,
``@x.wraps(...)``), or is a closure taking ``*args, **kwargs`` that calls a
parameter of the function around it (a decorator without ``wraps``). Where the
file cannot be read, the common wrapper names (:data:`WRAPPER_NAMES`:
transformers' ``wrapper`` and ``wrapped_func``...) are taken as wrappers. A
function defined in a class is named ``Class.function``
(``T5ForConditionalGeneration.forward``), and its place is its first line (as
``co_firstlineno``: the ``def``, or its first decorator) where the file is
readable, else the frame's line in the first op's stack. The name depends on the
stack and the source files only, never on the key's kind or its inputs, so an FX
key and the AOTAutograd keys that load it always agree.

The cache keeps the compiled frame in one place: an FX entry's
``cache_linemap`` (``CompiledFxGraph``, torch/_inductor/output_code.py), the
full user stack of each op of the graph, outermost frame first (Dynamo leaves
out frames inside torch, such as ``_call_impl``). The frames every op's stack
shares are :attr:`~fxcache_core.decode.entries.Origin.outer`; the first of them is the
compiled frame. An AOTAutograd key's frame is that of the forward FX entry it
loads.

A module's class is not stored. Where the file a frame names is readable, this
module reads it as text and parses it with ``ast`` (never imports or runs it) to
find the ``def`` around the frame's line: its decorators, the ``class`` around it,
its first line and its parameter names (so ``x=[...]`` can name ``L['args'][0]``).
Which source files are read and parsed, and how often, is
:mod:`~fxcache_core.functions.sources`' (a file over its bounds is not: its functions
then go by their frame's name, their class unknown). Each file's ``def`` s are remembered
(:func:`_defs`); its tree is kept only among the trees last used, a parse the rules that
read whole functions share (:mod:`~fxcache_core.functions.trees`).

:func:`compiled_from` reads the compiled frame of one key, :func:`named` names
the function of a stack. Which keys a ``--fn`` NAME means, and how keys group, is
decided from them in one place, :mod:`fxcache_core.functions.origin`. Never
imports or runs user code.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass, replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import DecodedEntry, Origin
from fxcache_core.functions.source_dirs import (
    SourceDirs,
    Withheld,
    in_force,
    withheld_now,
)
from fxcache_core.functions.sources import (
    _REFUSED,
    _REFUSED_CODES,
    Stamp,
    _stat,
    _tree_at,
)
from fxcache_core.reasons import Reason

_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<parent>\w+?)_at_(?P<line>[0-9]+)$")
_LABEL_RE = re.compile(r"^(?P<cls>\w+\.)?(?P<fn>torch_dynamo_resume_in_\w+?_at_(?P<line>[0-9]+))$")
_MODULE_ROOTS = ("L['self']", "L['args']", "L['kwargs']")

WRAPPER_NAMES = frozenset({"wrapper", "wrapped_func", "wrapped", "inner", "_wrapper", "decorated"})
"""Function names taken for decorator wrappers where the wrapper's file cannot be
read (a cache made on another machine); with the file, its source decides."""


@dataclass(frozen=True, slots=True)
class CompiledFrom:
    """The function a key was compiled from.

    Attributes:
        function: the compiled frame's function name, decorator wrappers folded
            (``loss_fn``, ``torch_dynamo_resume_in_loss_fn_at_12``, ``forward``).
        file: its file.
        line: its first line (``co_firstlineno``) where the file is readable, else
            the frame's line when the first op was traced.
        parent: for a resume frame, the function it resumes (recursively for a
            resume of a resume); else None.
        module_class: the class the function is defined in (a module's ``forward``
            for ``torch.compile(module)``), where the file is readable; else None.
        wrappers: the decorator frames Dynamo compiled around it, outermost first,
            as (function, file, line in the stack); () when it was compiled itself.
        params: the positional parameter names (without ``self``) of the function,
            where the file is readable.
        keywords: its keyword-only parameter names (after ``*`` or ``*args``), where the
            file is readable.
        whole_module: the key's inputs are a module call's ``args``/``kwargs``.
        unread: the parameters (positional or keyword) its body never names, where
            the file is readable and the function takes no ``**kwargs`` or ``*args``
            it could reach them through; None where that is not known. Dynamo only
            traces what the code reads, so no value of such a parameter changes the graph.
    """

    function: str
    file: str
    line: int
    parent: str | None = None
    module_class: str | None = None
    wrappers: tuple[tuple[str, str, int], ...] = ()
    params: tuple[str, ...] = ()
    whole_module: bool = False
    unread: frozenset[str] | None = None
    keywords: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The name keys are grouped under: ``GPT2LMHeadModel.forward`` for a method
        (decorators folded), else the function (a resume frame keeps Dynamo's name,
        ``torch_dynamo_resume_in_<fn>_at_<line>``, prefixed by the class where known;
        :func:`label` shows it as ``fn, resumed after the graph break at line N``)."""
        return f"{self.module_class}.{self.function}" if self.module_class else self.function

    @property
    def ident(self) -> tuple[str, str]:
        """What tells one function from another: its qualified name (a resume frame's
        that of the function it resumes) and its file."""
        base = self.parent or self.function
        return (f"{self.module_class}.{base}" if self.module_class else base), self.file

    def names(self) -> frozenset[str]:
        """Every ``--fn`` NAME that means this key: the function, its class and
        ``Class.function``, the function a resume frame resumes, each decorator
        wrapper folded into it (``wrapper``), and the label itself (``str(self)``)."""
        out = {self.function, self.name, self.ident[0], str(self)}
        if self.parent:
            out.add(self.parent)
        if self.module_class:
            out.add(self.module_class)
        out |= {w[0] for w in self.wrappers}
        return frozenset(out)

    def __str__(self) -> str:
        """``llama_loss (train.py:12)``, ``GPT2LMHeadModel.forward (modeling_gpt2.py:683)``,
        ``loss_fn, resumed after the graph break at line 14 (train.py:10)``."""
        return f"{label(self.name)} ({os.path.basename(self.file)}:{self.line})"


def resume_parent(function: str) -> str | None:
    """The function a resume frame ``torch_dynamo_resume_in_<f>_at_<n>`` resumes
    (following resumes of resumes), None for any other name."""
    parent = None
    while (m := _RESUME_RE.match(function)) is not None:
        parent = function = m.group("parent")
    return parent


def label(name: str) -> str:
    """A function's name as a user reads it: Dynamo's resume functions
    (``torch_dynamo_resume_in_f_at_12``, torch/_dynamo/resume_execution.py; also
    ``Class.torch_dynamo_resume_in_forward_at_12``) become
    ``f, resumed after the graph break at line 12``."""
    m = _LABEL_RE.match(name)
    if m is None:
        return name
    return f"{m.group('cls') or ''}{resume_parent(m.group('fn'))}, resumed after the graph break at line {m.group('line')}"


def compiled_from(catalog: Catalog, key: CacheKey) -> CompiledFrom | None:
    """The function ``key`` was compiled from (:func:`named` of the frames every op's
    stack shares, see the module docstring), or None when no readable entry records
    them (no FX entry with a ``cache_linemap``)."""
    origin, sources = _origin_and_sources(catalog, key)
    if origin is None or not origin.outer:
        return None
    c = named(origin.outer)
    return replace(c, whole_module=True) if _whole_module(tuple(sources)) else c


@functools.lru_cache(maxsize=4096)
def _whole_module(sources: tuple[str, ...]) -> bool:
    """Whether the inputs come from the module and its call's ``*args``/``**kwargs``
    alone (a whole ``nn.Module`` compiled). Keys of one model share their sources,
    and a ``match`` asks of every key several times: remembered."""
    roots = {_root(s) for s in sources if s and not s.startswith("G[")}  # a global is no input
    return (
        bool(roots)
        and roots <= set(_MODULE_ROOTS)
        and ("L['args']" in roots or "L['kwargs']" in roots)
    )


def named(outer: tuple[tuple[str, str, int], ...]) -> CompiledFrom:
    """The function the user compiled, from the frames every op's stack shares
    (:attr:`~fxcache_core.decode.entries.Origin.outer`, outermost first, not empty):
    the first frame that is not a decorator wrapper around the next one
    (:func:`is_wrapper_frame`), with its class, first line and parameters where its
    file is readable (where :func:`~fxcache_core.functions.source_dirs.located` puts
    it). Reads source files as text (``ast``), never runs them."""
    return _named(outer, in_force(), withheld_now())


@functools.lru_cache(maxsize=4096)
def _named(
    outer: tuple[tuple[str, str, int], ...], dirs: SourceDirs, held: Withheld
) -> CompiledFrom:
    i = 0
    while i + 1 < len(outer) and is_wrapper_frame(*outer[i]):
        i += 1
    fn, file, line = outer[i]
    parent = resume_parent(fn)
    d = _def_at(file, line)
    if d is None or d.name not in (fn, parent):  # unreadable, or not the file the stack ran
        return CompiledFrom(
            function=fn, file=file, line=line, parent=parent, wrappers=tuple(outer[:i])
        )
    return CompiledFrom(
        function=fn,
        file=file,
        line=d.first_line,
        parent=parent,
        module_class=d.cls,
        wrappers=tuple(outer[:i]),
        params=d.params,
        unread=d.unread,
        keywords=d.keywords,
    )


def is_wrapper_frame(function: str, file: str, line: int) -> bool:
    """Whether the frame ``function`` at ``file:line`` runs a decorator wrapper: the
    ``def`` around the line is decorated with ``functools.wraps`` or is a closure
    taking ``*args, **kwargs`` that calls a parameter of the function around it;
    where the file cannot be read (or no longer matches), ``function`` is one of
    :data:`WRAPPER_NAMES`."""
    d = _def_at(file, line)
    if d is None or d.name != function:
        return function in WRAPPER_NAMES
    return d.wraps


_ROOT_RE = re.compile(r"([LG])\[('[^']*'|\"[^\"]*\"|[0-9]+)\]")


def _root(source: str) -> str:
    """``L['kwargs']`` of ``L['kwargs']['input_ids'].size()[0]``; ``G[...]`` for globals."""
    m = _ROOT_RE.match(source)
    return m.group(0) if m else source


def _origin_and_sources(catalog: Catalog, key: CacheKey) -> tuple[Origin | None, list[str]]:
    """The first readable entry's origin (through the forward FX entry it loads, for
    an AOTAutograd key; a bundled one's own, from the graph it carries) and the
    sources of its inputs."""
    first = catalog.first_readable(key)
    if first is None:
        return None, []
    d = first[1]
    sources = [s for s in d.arg_sources if s] + [i.source for i in d.inputs if i.source]
    if key.kind is KeyKind.FX_GRAPH:
        if not sources:
            sources = list(catalog.sources_for(key).values())
        return d.origin, sources
    if d.forward is None and d.origin is not None and d.origin.outer:
        return d.origin, sources  # a bundled entry: the frames of the graph it carries
    if d.forward is not None:
        fx = catalog.fx_entry_for(d.forward.key, d.forward.guards_expr)
        if fx is not None:
            fd = catalog.load(fx)
            if isinstance(fd, DecodedEntry) and _same_code(d.origin, fd.origin):
                return fd.origin, sources
    return None, sources


def _same_code(own: Origin | None, fx: Origin | None) -> bool:
    """Whether the FX entry an AOTAutograd entry loads was traced from the code the
    AOTAutograd entry's own graph was (its first op's file and function among the FX
    graph's): two functions whose graphs lower alike share one FX key, whose stacks are
    those of the compile that wrote it, and another function's frame must not be taken
    for this key's. Without the AOTAutograd entry's own frames, the FX entry's stand."""
    if own is None or fx is None:
        return fx is not None
    if own.function == fx.function:  # the same first op, as a rule: then the same file
        return own.file == fx.file
    return own.function in fx.functions  # passes may put another op first


@dataclass(frozen=True, slots=True)
class _Def:
    """A ``def`` read from a source file: its name, class (None outside one), first
    line (its first decorator's, as ``co_firstlineno``), positional parameters
    (without ``self`` in a class) and keyword-only ones, whether it is a decorator wrapper, and the
    parameters its body never names (None: it takes ``*args``/``**kwargs`` or calls
    ``locals()``/``vars()``, through which any could be read)."""

    name: str
    cls: str | None
    first_line: int
    params: tuple[str, ...]
    wraps: bool
    unread: frozenset[str] | None = None
    keywords: tuple[str, ...] = ()


def _enclosing(path: str, line: int) -> tuple[str | None, tuple[str, ...]] | None:
    """The class (None outside one) and positional parameter names (without
    ``self``) of the innermost function around ``line`` of ``path``."""
    d = _def_at(path, line)
    return None if d is None else (d.cls, d.params)


def _def_at(path: str, line: int) -> _Def | None:
    """The innermost ``def`` around ``line`` of ``path`` (None: none, or the file
    is not read, see :func:`~fxcache_core.functions.sources._read_source` and :func:`~fxcache_core.functions.sources._parse_bounded`)."""
    st = _stat(path)
    return None if st is None else _def_in(path, st[0], st[1], line)


@functools.lru_cache(maxsize=4096)
def _def_in(path: str, size: int, stamp: Stamp, line: int) -> _Def | None:
    defs = _defs_cached(path, size, stamp)
    if isinstance(defs, Reason):
        return None
    best: _Def | None = None
    best_line = -1
    for start, first, end, d in defs:  # in the order the tree is walked
        if first <= line <= end and start >= best_line:
            best_line, best = start, d
    return None if best is None else replace(best, unread=_unread_at(path, size, stamp, best_line))


@functools.lru_cache(maxsize=1024)
def _unread_at(path: str, size: int, stamp: Stamp, line: int) -> frozenset[str] | None:
    """:func:`_unread` of the ``def`` on line ``line``, read from the kept (or a new) parse
    for the ``def`` s a frame asks of alone."""
    tree = _tree_at(path, size, stamp)
    node = None if isinstance(tree, Reason) else _def_on_line(tree.module, line)
    return None if node is None else _unread(node)


def _def_on_line(module: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The ``def`` of ``module`` whose ``def`` line is ``line`` (one at most), entering only
    the statements around that line."""
    todo: list[ast.AST] = [module]
    while todo:
        for c in ast.iter_child_nodes(todo.pop()):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef)) and c.lineno == line:
                return c
            if isinstance(
                c, (ast.stmt, ast.excepthandler, ast.match_case)
            ) and c.lineno <= line <= (c.end_lineno or c.lineno):
                todo.append(c)
    return None


_Span = tuple[int, int, int, _Def]


def _defs(tree: ast.Module) -> tuple[_Span, ...]:
    """(``def`` line, first line, last line, :class:`_Def`) of each function reachable
    through classes, functions and ``if``/``try``/``with`` blocks, in walk order: all
    :func:`_def_in` needs, a few hundred bytes a function instead of the tree (what a
    body never names is left to :func:`_def_in`, for the ``def`` s asked of)."""
    out: list[_Span] = []

    def visit(
        node: ast.AST, cls: str | None, outer: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name, None)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                a = child.args
                names = [p.arg for p in (*a.posonlyargs, *a.args)]
                if cls is not None and names[:1] == ["self"]:
                    names = names[1:]
                out.append(
                    (
                        child.lineno,
                        first,
                        child.end_lineno or child.lineno,
                        _Def(
                            child.name,
                            cls,
                            first,
                            tuple(names),
                            _is_wrapper_def(child, outer),
                            None,
                            tuple(p.arg for p in a.kwonlyargs),
                        ),
                    )
                )
                visit(child, None, child)
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                visit(child, cls, outer)

    visit(tree, None, None)
    return tuple(out)


def _unread(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str] | None:
    """The parameters ``fn``'s body (nested functions and lambdas included) never names;
    None when it takes ``*args``/``**kwargs`` or calls ``locals``/``vars``/``eval``/``exec``."""
    a = fn.args
    if a.vararg is not None or a.kwarg is not None:
        return None
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)} - {"self"}
    named: set[str] = set()
    for stmt in fn.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name):
                if n.id in ("locals", "vars", "eval", "exec"):
                    return None
                named.add(n.id)
    return frozenset(params - named)


def _is_wrapper_def(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, outer: ast.FunctionDef | ast.AsyncFunctionDef | None
) -> bool:
    """``@functools.wraps(...)`` (``@wraps(...)``, ``@x.wraps(...)``) on ``fn``; or
    ``fn`` a closure in ``outer`` taking ``*args, **kwargs`` that calls one of
    ``outer``'s parameters (a decorator that does not use ``wraps``)."""
    for d in fn.decorator_list:
        f = d.func if isinstance(d, ast.Call) else None
        if (isinstance(f, ast.Name) and f.id == "wraps") or (
            isinstance(f, ast.Attribute) and f.attr == "wraps"
        ):
            return True
    if outer is None or fn.args.vararg is None or fn.args.kwarg is None:
        return False
    oa = outer.args
    taken = {p.arg for p in (*oa.posonlyargs, *oa.args, *oa.kwonlyargs)}
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in taken
        for n in ast.walk(fn)
    )


@functools.lru_cache(maxsize=64)
def _defs_cached(path: str, size: int, stamp: Stamp) -> tuple[_Span, ...] | Reason:
    got = _tree_at(path, size, stamp)
    tree = got if isinstance(got, Reason) else got.module
    if isinstance(tree, ast.Module):
        try:
            return _defs(tree)
        except RecursionError:
            tree = Reason("does not parse: nested too deep", "source-unparsable")
    if tree.code in _REFUSED_CODES and len(_REFUSED) < 100:
        _REFUSED[path] = tree
    return tree


def unparsed_why(path: str) -> Reason | None:
    """Why the source file ``path`` a frame names is not parsed for its ``def`` s (its
    functions then go by their frame's name, their class unknown), or None when it is:
    not a regular ``.py`` file, unreadable, over :data:`~fxcache_core.functions.sources.MAX_SOURCE_BYTES` or
    :data:`~fxcache_core.functions.sources.MAX_SOURCE_NODES`, or not Python."""
    st = _stat(path)
    if st is None:
        return _REFUSED.get(path) or Reason("not a readable .py file", "source-unreadable")
    got = _defs_cached(path, *st)
    return got if isinstance(got, Reason) else None
