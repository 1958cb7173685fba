"""Whether the source files a key's graph was traced from still hold the lines it was
traced from: a file edited since the compile must not be read as the compiled code.

Every rule that reads a compiled frame's source (:mod:`fxcache_core.functions.params`,
:func:`~fxcache_core.functions.trees.function_node`) reads the file as it is now. A
key's entries keep what the trace saw of it: a printed graph heads each run of nodes
with ``# File: PATH:LINE in FN, code: TEXT`` (``_parse_stack_trace`` and
``append_stacktrace_summary`` in torch/fx/graph.py: the innermost frame's line, as
``traceback.FrameSummary.line`` read it through ``linecache`` and ``.strip()``), and an
FX entry's ``cache_linemap`` (torch/_inductor/output_code.py) the whole user stack of
each kernel's ops, each frame's ``File "PATH", line N, in FN`` followed by that line's
text, the compiled frame's calls into its callees included. :func:`recorded_lines`
reads both (an AOTAutograd key's forward graph, and the FX entry it loads);
:func:`first_change` compares each line with the file's line of that number
(:func:`~fxcache_core.functions.sources.source_lines`, read once per file identity), as
:func:`same_code` compares two lines' code. A file not read here (another machine,
``python -c``) is not compared: the closed-world rule for it is
:mod:`fxcache_core.lookup.unread_source`.

:func:`changed_sources` says which files to withhold while the key is judged
(:func:`~fxcache_core.functions.source_dirs.withhold`): then every rule takes the
key's code as not readable, and its lookup is undecided as for a source not there
(``source-changed``). Only lines that produced ops are compared: an edit to a line
that made no op (a default in the ``def`` line, a branch the trace did not take, a
Python-only statement) with every traced line still in place is not seen. Reads
text only; never imports torch.
"""

from __future__ import annotations

import contextlib
import re
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey, Entry
from fxcache_core.catalog.pool import worker_count
from fxcache_core.catalog.reader import Catalog
from fxcache_core.decode.entries import Origin, entry_root
from fxcache_core.decode.origins import MAX_GRAPH_LINES, graph_comment, linemap_stacks, stack_frames
from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES
from fxcache_core.decode.workers import run_all, run_one, task
from fxcache_core.functions.source_dirs import shown, withhold
from fxcache_core.functions.sources import source_lines
from fxcache_core.functions.statements import statement_spans
from fxcache_core.reasons import Reason

__all__ = [
    "MAX_RECORDED",
    "changed_sources",
    "first_change",
    "printed_lines",
    "read_ahead_lines",
    "recorded_lines",
    "same_code",
    "source_as_traced",
    "stack_lines",
    "written_since",
]

MAX_RECORDED = 20_000
"""Recorded (file, line, code) triples read from one entry at most."""

Line = tuple[str, int, str]
"""A recorded line: (file as recorded, line number, its code as the trace printed it)."""

_QUOTE_RE = re.compile(r"'''|\"\"\"|'|\"")
_WORD = re.compile(r"\w")


def printed_lines(graph: str) -> Iterator[Line]:
    """The ``# File: PATH:LINE in FN, code: TEXT`` comments of a printed graph, in order
    (:func:`~fxcache_core.decode.origins.graph_comment`); of its first
    :data:`~fxcache_core.decode.origins.MAX_GRAPH_LINES` lines."""
    for n, text in enumerate(graph.splitlines()):
        if n >= MAX_GRAPH_LINES:
            return
        c = graph_comment(text)
        if c is not None:
            yield c.file, c.line, c.code or ""


def stack_lines(stack: str) -> Iterator[Line]:
    """Each frame of a formatted stack that has its text
    (:func:`~fxcache_core.decode.origins.stack_frames`), of its first 400 lines."""
    for f in stack_frames(stack, 400):
        if f.code is not None:
            yield f.file, f.line, f.code


def _normalized(code: str) -> str | None:
    """``code`` (one line) as its tokens: a ``#`` comment outside a string left out,
    whitespace outside strings dropped except one space between two word characters,
    string literals kept as written. None where a string does not end on the line
    (part of a longer literal): then only the exact text compares."""
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "#":
            break
        if c in "'\"":
            q = _QUOTE_RE.match(code, i)
            assert q is not None
            quote = q.group(0)
            j = i + len(quote)
            while j < n and not code.startswith(quote, j):
                j += 2 if code[j] == "\\" else 1
            if j >= n:
                return None
            out.append(code[i : j + len(quote)])
            i = j + len(quote)
            continue
        if c.isspace():
            j = i
            while j < n and code[j].isspace():
                j += 1
            if out and j < n and _WORD.match(out[-1][-1]) and _WORD.match(code[j]):
                out.append(code[i:j])  # between two words: kept as written
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def same_code(recorded: str, now: str) -> bool:
    """Whether a traced line's recorded code and the file's line of that number are the
    same code: equal once stripped (as torch records it), or the same tokens (spaces
    around operators and brackets, a trailing comment aside)."""
    a, b = recorded.strip(), now.strip()
    if a == b:
        return True
    na, nb = _normalized(a), _normalized(b)
    return na is not None and na == nb


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def first_change(
    lines: Iterable[Line], written_since: int | None = None
) -> tuple[str, Reason] | None:
    """The first of ``lines`` (recorded path, line, code) whose file, read here, holds
    another line there (:func:`same_code`), or fewer lines: (its recorded path, why).
    Then, where ``written_since`` (ns) is given and a file's mtime is not older than it
    (the file may have been written after the compile), the first line that lies in a
    statement of several lines (:func:`~fxcache_core.functions.statements.statement_spans`),
    or in a file that does not parse: the trace recorded only the line it names, and
    the statement's other lines cannot be compared. A file not read here is not
    compared. None when every line read agrees."""
    lines = sorted(set(lines))
    for file, n, code in lines:
        now = source_lines(file)
        if now is None:
            continue
        if n > len(now):
            return file, Reason(
                f"changed since the compile: {shown(file)} has {len(now)} lines, and the compile traced "
                f"line {n} (`{_clip(code)}`)",
                "source-changed",
            )
        if not same_code(code, now[n - 1]):
            return file, Reason(
                f"changed since the compile: line {n} of {shown(file)} reads `{_clip(now[n - 1].strip())}` "
                f"where the compile traced `{_clip(code)}`",
                "source-changed",
            )
    if written_since is None:
        return None
    for file, n, _ in lines:
        read = statement_spans(file, written_since)
        if read is None or read[0] < written_since:
            continue
        spans = read[1]
        if spans is None:
            return file, Reason(
                f"may have changed since the compile: {shown(file)} does not parse here, so "
                f"the statements of its traced lines (the compile recorded only each one's first) are not "
                f"known, and the file was written after the key's oldest entry",
                "source-changed",
            )
        if n in spans:
            first, last = spans[n]
            what = (
                f"line {n} of {shown(file)} starts a statement of {last - first + 1} lines, and the "
                f"compile recorded only its first"
                if n == first
                else f"line {n} of {shown(file)} is in a statement of lines {first}-{last}, and the compile "
                f"recorded only line {n} of it"
            )
            return file, Reason(
                f"may have changed since the compile: {what}: the file was "
                f"written after the key's oldest entry",
                "source-changed",
            )
    return None


def written_since(catalog: Catalog, key: CacheKey) -> int | None:
    """The mtime (ns) of ``key``'s oldest entry file (and, for an AOTAutograd key, of the
    FX entry its lines are read from, :func:`recorded_lines`), as the scan read it: a
    source file not older than it may have been written after the compile. None for a
    key with no entry."""
    times = [e.file.mtime_ns for e in key.entries]
    fx = _forward_fx(catalog, key)
    if fx is not None:
        times.append(fx.file.mtime_ns)
    return min(times, default=None)


def _forward_fx(catalog: Catalog, key: CacheKey) -> Entry | None:
    """The FX entry an AOTAutograd ``key``'s first readable entry loads for its forward;
    None for an FX key, or where it names none the cache holds."""
    first = catalog.first_readable(key)
    if first is None or key.kind is KeyKind.FX_GRAPH or first[1].forward is None:
        return None
    return catalog.fx_entry_for(first[1].forward.key, first[1].forward.guards_expr)


def recorded_lines(catalog: Catalog, key: CacheKey) -> tuple[Line, ...] | None:
    """The lines ``key``'s first readable entry records with their code: an FX entry's
    printed post-grad graph and ``cache_linemap`` (for an AOTAutograd key, those of the
    forward FX entry it loads, the same nodes' stacks: else its own forward graph's);
    None when no entry can be read. The entry is read in a decode worker, under the CPU
    budget, once per entry file in this process (:func:`read_ahead_lines` reads many
    keys' at once)."""
    first = catalog.first_readable(key)
    if first is None:
        return None
    entry = first[0]
    fx = _forward_fx(catalog, key)
    got = _read(fx, "inductor_post_grad_graph_str", True) if fx is not None else None
    if got:
        return got
    if key.kind is KeyKind.FX_GRAPH:
        return _read(entry, "inductor_post_grad_graph_str", True)
    return _read(entry, "aot_forward_graph_str", False)


def _first_read(catalog: Catalog, key: CacheKey) -> _Ask | None:
    """The read :func:`changed_sources` asks first for ``key`` (see :func:`recorded_lines`),
    None where it asks none."""
    first = catalog.first_readable(key)
    if first is None or not _any_file_read(first[1].origin):
        return None
    fx = _forward_fx(catalog, key)
    e, field, linemap = (
        (fx, "inductor_post_grad_graph_str", True)
        if fx is not None
        else (first[0], "inductor_post_grad_graph_str", True)
        if key.kind is KeyKind.FX_GRAPH
        else (first[0], "aot_forward_graph_str", False)
    )
    return (
        None
        if e.size > MAX_ENTRY_BYTES
        else (e.file.where, e.size, e.file.mtime_ns, e.file.ino, field, linemap)
    )


def _any_file_read(origin: Origin | None) -> bool:
    """Whether some file of ``origin``'s stack is read here (or there is no origin)."""
    if origin is None:
        return True
    outer = {f for _, f, _ in origin.outer} | {origin.file}
    return any(source_lines(f) is not None for f in outer)


def read_ahead_lines(catalog: Catalog, keys: Iterable[CacheKey]) -> None:
    """Read the lines :func:`changed_sources` will read first for each of ``keys`` (at
    most :data:`_KEPT_READS` of them) in one batch of decode workers, as
    :func:`recorded_lines` would one by one (the same task and budget): a match judges
    every key, and one worker round trip per key is most of a warm match's time."""
    asks = list(
        dict.fromkeys(
            a for k in keys if (a := _first_read(catalog, k)) is not None and a not in _READS
        )
    )
    asks = asks[:_KEPT_READS]
    got: dict[int, tuple[Line, ...] | None] = {}
    run_all(
        "recorded-lines",
        [[a[0], a[4], a[5]] for a in asks],
        [a[1] for a in asks],
        worker_count(len(asks)),
        lambda i, v: got.__setitem__(i, _lines_of(v)),
    )
    for i, a in enumerate(asks):
        _keep(a, got.get(i))


def changed_sources(catalog: Catalog, key: CacheKey) -> dict[str, Reason]:
    """The source files to withhold while ``key`` is judged
    (:func:`~fxcache_core.functions.source_dirs.withhold`): where a line it was traced
    from is no longer in its file (:func:`first_change`), every file of its recorded
    lines and of its compiled frame's stack, each with that reason (its code and
    graph rest on all of them); {} where every line read agrees or none is recorded."""
    first = catalog.first_readable(key)
    origin = first[1].origin if first is not None else None
    outer = {f for _, f, _ in origin.outer} | {origin.file} if origin is not None else set()
    if not _any_file_read(origin):
        return {}  # none of its files is read here: nothing to compare (nor read)
    lines = recorded_lines(catalog, key)
    if not lines:
        return {}
    change = first_change(lines, written_since(catalog, key))
    if change is None:
        return {}
    files = {f for f, _, _ in lines} | outer
    return dict.fromkeys(sorted(files), change[1])


@contextlib.contextmanager
def source_as_traced(catalog: Catalog, key: CacheKey) -> Iterator[None]:
    """While ``key`` is judged, the files :func:`changed_sources` names withheld
    (:func:`~fxcache_core.functions.source_dirs.withhold`), with the mapping in force
    before put back after."""
    restore = withhold(changed_sources(catalog, key))
    try:
        yield
    finally:
        restore()


def _read(e: Entry, field: str, linemap: bool) -> tuple[Line, ...] | None:
    """The lines entry ``e`` records (:func:`_recorded_lines_task`), read once per entry
    file (its path, size, mtime and inode) in this process."""
    if e.size > MAX_ENTRY_BYTES:
        return None
    return _read_once(e.file.where, e.size, e.file.mtime_ns, e.file.ino, field, linemap)


_Ask = tuple[str, int, int, int, str, bool]
"""A read of recorded lines: the entry file (path, size, mtime, inode), field, linemap."""
_READS: OrderedDict[_Ask, tuple[Line, ...] | None] = OrderedDict()
_KEPT_READS = 1024
"""The reads kept (the last ones made)."""


def _read_once(
    where: str, size: int, mtime_ns: int, ino: int, field: str, linemap: bool
) -> tuple[Line, ...] | None:
    ask = (where, size, mtime_ns, ino, field, linemap)
    if ask in _READS:
        _READS.move_to_end(ask)
        return _READS[ask]
    got = _lines_of(run_one("recorded-lines", [where, field, linemap], size))
    _keep(ask, got)
    return got


def _keep(ask: _Ask, got: tuple[Line, ...] | None) -> None:
    _READS[ask] = got
    _READS.move_to_end(ask)
    while len(_READS) > _KEPT_READS:
        _READS.popitem(last=False)


def _lines_of(got: object) -> tuple[Line, ...] | None:
    """A ``recorded-lines`` task's value as lines (None: not read)."""
    if not isinstance(got, list):
        return None
    return tuple(
        (f, n, c)
        for item in got
        if isinstance(item, list) and len(item) == 3
        for f, n, c in [item]
        if isinstance(f, str) and isinstance(n, int) and isinstance(c, str)
    )


@task("recorded-lines")
def _recorded_lines_task(arg: list) -> list | None:
    """Worker side of :func:`_read`: ``[path, field, linemap]`` -> ``[[file, line, code], ...]``
    (each once, at most :data:`MAX_RECORDED`), or None when the entry cannot be read."""
    where, field, linemap = arg
    root = entry_root(where)
    if root is None:
        return None
    seen: dict[Line, None] = {}
    graph = root.field(field)
    if isinstance(graph, str):
        seen.update(dict.fromkeys(printed_lines(graph)))
    if linemap:
        for line in (
            x for text in linemap_stacks(root.field("cache_linemap")) for x in stack_lines(text)
        ):
            if len(seen) >= MAX_RECORDED:
                break
            seen[line] = None
    return [list(t) for t in list(seen)[:MAX_RECORDED]]
