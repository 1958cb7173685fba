"""Where a source file registers a module forward hook, read with ``ast``.

``torch.compile(module)`` runs a module's forward pre-hooks and forward hooks (and the
global module hooks) in the compiled call; in torch 2.13 each hook is a Dynamo frame of its
own around ``forward``. A hook's test of the call (``if x.shape[0] > 5:``, ``if eps < 0:``)
is that frame's guard, kept in the cache only where the hook made a graph: on the side
the build took it may have made none, and then nothing in the cache shows it. What can
show it is the source: a call of ``register_forward_pre_hook``, ``register_forward_hook``,
``register_module_forward_pre_hook`` or ``register_module_forward_hook``, or a store into
a module's hook dicts (``_forward_pre_hooks``, ``_forward_hooks`` and their
``_with_kwargs``/``_always_called`` and global twins). :func:`hook_sites` finds them in
the files fxcache reads anyway (a key's frames), through
:func:`~fxcache_core.functions.trees.module_node` (the same bounds; never imports or runs
the file). A registration in a file no frame of the key names is not seen.
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass

from fxcache_core.functions.source_dirs import located
from fxcache_core.functions.trees import module_node

__all__ = ["HOOK_CALLS", "HOOK_DICTS", "HookSite", "hook_sites"]

HOOK_CALLS = frozenset(
    {
        "register_forward_pre_hook",
        "register_forward_hook",
        "register_module_forward_pre_hook",
        "register_module_forward_hook",
    }
)
"""The functions and methods that register a forward hook (torch/nn/modules/module.py)."""

HOOK_DICTS = frozenset(
    {
        "_forward_pre_hooks",
        "_forward_hooks",
        "_forward_pre_hooks_with_kwargs",
        "_forward_hooks_with_kwargs",
        "_forward_hooks_always_called",
        "_global_forward_pre_hooks",
        "_global_forward_hooks",
        "_global_forward_hooks_always_called",
    }
)
"""The dicts those fill: a store into one (or a method call on one) registers a hook too."""

MAX_SITES = 20
"""At most this many sites are kept per file (the first, in line order)."""


@dataclass(frozen=True, slots=True)
class HookSite:
    """One registration of a forward hook in a source file.

    Attributes:
        file: the file, as the frame recorded it.
        line: its line.
        what: the name called or stored into (``register_forward_pre_hook``).
    """

    file: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.what})"


def hook_sites(files: Iterable[str]) -> tuple[HookSite, ...]:
    """The forward hook registrations in ``files`` (recorded paths; each read where
    :func:`~fxcache_core.functions.source_dirs.located` puts it), in file order then line
    order; a file that is not read (absent, not a bounded ``.py`` file, not Python) has none."""
    out: list[HookSite] = []
    for path in dict.fromkeys(files):
        try:
            st = os.stat(located(path))
        except (OSError, ValueError):
            continue
        out += _sites(path, st.st_size, st.st_mtime_ns, st.st_ino)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _sites(path: str, _size: int, _mtime_ns: int, _ino: int) -> tuple[HookSite, ...]:
    tree = module_node(path)
    if tree is None:
        return ()
    found: dict[int, str] = {}
    try:
        for n in ast.walk(tree):
            for line, what in _registers(n):
                found.setdefault(line, what)
    except RecursionError:
        return ()
    return tuple(HookSite(path, line, found[line]) for line in sorted(found)[:MAX_SITES])


def _registers(n: ast.AST) -> Iterable[tuple[int, str]]:
    """(line, name) of each registration node ``n`` makes."""
    if isinstance(n, ast.Call):
        f = n.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in HOOK_CALLS:
            yield n.lineno, name
        elif (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Attribute)
            and f.value.attr in HOOK_DICTS
        ):
            yield n.lineno, f.value.attr  # m._forward_hooks.update(...), ...__setitem__(...)
    elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
        targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
        for t in targets:
            for a in ast.walk(t):
                if isinstance(a, ast.Attribute) and a.attr in HOOK_DICTS:
                    yield (
                        a.lineno,
                        a.attr,
                    )  # m._forward_hooks[k] = hook, m._forward_pre_hooks = {...}
