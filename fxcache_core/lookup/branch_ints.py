"""An int argument the compiled function only branches on: the branch rule's to read.

A fresh process's first call under ``dynamic=None``/``False`` bakes an int argument in
(``VariableBuilder`` in torch/_dynamo/variables/builder.py): an ``if`` on it (``if n:``,
``if n == 3:``, ``if n in (1, 2):``) is decided in Python while Dynamo traces, as for a
bool, and leaves no constant of it in the graph. Where every read of the parameter is
such a test (:class:`~fxcache_core.functions.params.BranchTest`), the int rule
(:mod:`fxcache_core.lookup.int_args`) has nothing to read, and says nothing: the
parameters' accounting reads which side of each test the key's graph went
(:meth:`fxcache_core.lookup.accounting.ParamAccounting.branch`), as it does for a bool,
and leaves the key undecided where its graph does not show it. A float so read (``if t >
0.5:``) leaves no constant either: the int rule says nothing of it under a known mode
(``_not_an_int`` in :mod:`fxcache_core.lookup.int_args`). Nothing here imports torch.
"""

from __future__ import annotations

from fxcache_core.functions.frames import CompiledFrom
from fxcache_core.functions.params import frame_reads
from fxcache_core.lookup.source_values import LOCAL_RE

__all__ = ["branched_only"]


def branched_only(frame: CompiledFrom | None, src: str) -> bool:
    """Whether the parameter of the user's source ``src`` (``L['n']``) is read in
    ``frame``'s source only as the test of an ``if`` on it alone (or arithmetic of it with
    number literals) against constants, and
    the code never assigns it (nor reads its locals by ``locals()``/``eval``); False
    where the source cannot be read, or ``src`` is no parameter by name."""
    m = LOCAL_RE.fullmatch(src)
    if frame is None or m is None:
        return False
    name = m.group(1)
    reads = frame_reads(frame)
    if isinstance(reads, str) or reads.opaque:
        return False
    p = next((p for p in reads.params if p.name == name), None)
    return p is not None and bool(p.tests) and not p.other and not p.assigned
