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

The cache keeps the compiled frame in one place: an FX entry's
``cache_linemap`` (``CompiledFxGraph``, torch/_inductor/output_code.py), the
full user stack of each op of the graph, outermost frame first (Dynamo leaves
out frames inside torch, such as ``_call_impl``). The frames every op's stack
shares are :attr:`~fxcache_core.decode.entries.Origin.outer`; the first of them is the
compiled frame. An AOTAutograd key's frame is that of the forward FX entry it
loads.

A module's class is not stored. Where the file a frame names is readable, this
module reads it as text and parses it with ``ast`` (never imports or runs it) to
find the ``class`` around the frame's ``forward`` and that ``forward``'s
parameter names (so ``x=[...]`` can name ``L['args'][0]``). A file that is not a
regular ``.py`` file under :data:`MAX_SOURCE_BYTES` is not read.

:func:`compiled_from` reads the compiled frame of one key. Which function a key
counts as (and which keys a ``--fn`` NAME means) is decided from it in one place,
:mod:`fxcache_core.functions.origin`. Never imports or runs user code, never
decides grouping.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import stat
from dataclasses import dataclass

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.catalog.catalog import Catalog
from fxcache_core.decode.entries import DecodedEntry, Origin

MAX_SOURCE_BYTES = 4 * 1024 * 1024
"""Source files larger than this (bytes) are not parsed for class names."""

_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(?P<parent>\w+?)_at_(?P<line>\d+)$")
_MODULE_ROOTS = ("L['self']", "L['args']", "L['kwargs']")


@dataclass(frozen=True)
class CompiledFrom:
    """The function a key was compiled from.

    Attributes:
        function: the compiled frame's function name (``loss_fn``,
            ``torch_dynamo_resume_in_loss_fn_at_12``, ``forward``, ``wrapper``).
        file, line: where that frame was when the first op was traced.
        parent: for a resume frame, the function it resumes (recursively for a
            resume of a resume); else None.
        module_class: for a module compiled whole (``torch.compile(module)``, inputs
            ``L['args']``/``L['kwargs']``) or a ``forward`` compiled on its own, the
            class whose ``forward`` it runs, where the file is readable; else None.
        forward: that ``forward``'s frame (function, file, line) when it is not the
            compiled frame itself (a decorator wraps it); else None.
        params: the positional parameter names (without ``self``) of that
            ``forward``, else of the compiled function, where the file is readable.
        whole_module: the key's inputs are a module call's ``args``/``kwargs``.
    """

    function: str
    file: str
    line: int
    parent: str | None = None
    module_class: str | None = None
    forward: tuple[str, str, int] | None = None
    params: tuple[str, ...] = ()
    whole_module: bool = False

    @property
    def name(self) -> str:
        """The name a user knows the function by: ``GPT2LMHeadModel.forward`` for a
        module compiled whole, the decorated ``forward`` where the class is unknown,
        else the compiled frame's function (a resume frame keeps Dynamo's name,
        ``torch_dynamo_resume_in_<fn>_at_<line>``; :func:`fxcache_core.functions.origin.frame_label`
        shows it as ``fn (resumed after the graph break at line N)``)."""
        if self.module_class:
            return f"{self.module_class}.forward"
        if self.forward is not None:
            return self.forward[0]
        return self.function

    def names(self) -> frozenset[str]:
        """Every ``--fn`` NAME that means this key: the frame's function, the function a
        resume frame resumes, and for a module its class (``GPT2LMHeadModel``,
        ``GPT2LMHeadModel.forward``) and ``forward``."""
        out = {self.function}
        if self.parent:
            out.add(self.parent)
        if self.forward is not None:
            out.add(self.forward[0])
        if self.module_class:
            out |= {self.module_class, f"{self.module_class}.forward"}
        return frozenset(out)

    def __str__(self) -> str:
        """``llama_loss (train.py:12)``, ``GPT2LMHeadModel.forward (modeling_gpt2.py:683)``,
        ``loss_fn, resumed after a graph break (train.py:14)``."""
        fn, file, line = self.function, self.file, self.line
        if self.module_class:
            fn, file, line = f"{self.module_class}.forward", *(self.forward or (fn, file, line))[1:]
        elif self.forward is not None:  # the class is unknown (its file is not here)
            fn, file, line = self.forward
        elif self.parent:
            fn = f"{self.parent}, resumed after a graph break"
        return f"{fn} ({os.path.basename(file)}:{line})"


def resume_parent(function: str) -> str | None:
    """The function a resume frame ``torch_dynamo_resume_in_<f>_at_<n>`` resumes
    (following resumes of resumes), None for any other name."""
    parent = None
    while (m := _RESUME_RE.match(function)) is not None:
        parent = function = m.group("parent")
    return parent


def compiled_from(catalog: Catalog, key: CacheKey) -> CompiledFrom | None:
    """The function ``key`` was compiled from (see the module docstring), or None
    when no readable entry records it (no FX entry with a ``cache_linemap``)."""
    origin, sources = _origin_and_sources(catalog, key)
    if origin is None or not origin.outer:
        return None
    fn, file, line = origin.outer[0]
    roots = {_root(s) for s in sources if s}
    whole_module = bool(roots) and roots <= set(_MODULE_ROOTS) and (
        "L['args']" in roots or "L['kwargs']" in roots)
    fwd = next((f for f in origin.outer if f[0] == "forward"), None)
    if fwd is not None and not (whole_module or fwd is origin.outer[0] or "L['self']" in roots):
        fwd = None  # a forward a compiled function called, not the compiled frame's own
    module_class, params = None, ()
    found = _enclosing(*(fwd or origin.outer[0])[1:])
    if found is not None:
        module_class, params = found
        if fwd is None:
            module_class = None
    return CompiledFrom(
        function=fn, file=file, line=line, parent=resume_parent(fn), module_class=module_class,
        forward=fwd if fwd is not None and fwd is not origin.outer[0] else None,
        params=params, whole_module=whole_module)


def _root(source: str) -> str:
    """``L['kwargs']`` of ``L['kwargs']['input_ids'].size()[0]``; ``G[...]`` for globals."""
    m = re.match(r"([LG])\[('[^']*'|\"[^\"]*\"|\d+)\]", source)
    return m.group(0) if m else source


def _origin_and_sources(catalog: Catalog, key: CacheKey) -> tuple[Origin | None, list[str]]:
    """The first readable entry's origin (through the forward FX entry it loads, for
    an AOTAutograd key) and the sources of its inputs."""
    first = catalog.first_readable(key)
    if first is None:
        return None, []
    d = first[1]
    sources = [s for s in d.arg_sources if s] + [i.source for i in d.inputs if i.source]
    if key.kind is KeyKind.FX_GRAPH:
        if not sources:
            sources = list(catalog.sources_for(key).values())
        return d.origin, sources
    if d.forward is not None:
        fx = catalog.fx_entry_for(d.forward.key, d.forward.guards_expr)
        if fx is not None:
            fd = catalog.load(fx)
            if isinstance(fd, DecodedEntry):
                return fd.origin, sources
    return None, sources


def _enclosing(path: str, line: int) -> tuple[str | None, tuple[str, ...]] | None:
    """The class (None outside one) and positional parameter names (without
    ``self``) of the innermost function around ``line`` of ``path``."""
    tree = _parse(path)
    if tree is None:
        return None
    best: tuple[int, str | None, tuple[str, ...]] | None = None

    def visit(node: ast.AST, cls: str | None) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if child.lineno <= line <= (child.end_lineno or child.lineno):
                    a = child.args
                    names = [p.arg for p in (*a.posonlyargs, *a.args)]
                    if cls is not None and names[:1] == ["self"]:
                        names = names[1:]
                    if best is None or child.lineno >= best[0]:
                        best = (child.lineno, cls, tuple(names))
                    visit(child, None)
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                visit(child, cls)

    try:
        visit(tree, None)
    except RecursionError:
        return None
    return None if best is None else (best[1], best[2])


@functools.lru_cache(maxsize=64)
def _parse_cached(path: str, size: int, mtime_ns: int) -> ast.Module | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_SOURCE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_SOURCE_BYTES:
        return None
    try:
        return ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _parse(path: str) -> ast.Module | None:
    """``path`` parsed by ``ast`` (never run), or None when it is not a regular ``.py``
    file of at most :data:`MAX_SOURCE_BYTES`, or does not parse."""
    if not path.endswith(".py"):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
        return None
    return _parse_cached(path, st.st_size, st.st_mtime_ns)
