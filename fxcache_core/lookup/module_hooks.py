"""A module's forward whose source files register forward hooks: no decided verdict.

``torch.compile(module)`` runs the module's forward pre-hooks and forward hooks and the
global module hooks in the compiled call. In torch 2.13 each hook is a Dynamo frame of its
own around ``forward`` (``module.compile()`` traces them into ``Module._call_impl``'s
frame). A hook's Python test of the call (``if x.shape[0] > 5:``, ``if eps < 0:``) is
that frame's guard: where the hook made no graph on the side the build took, no key
shows it, and ``forward``'s entry does not carry it. A call on the hook's other side
then compiles the hook's graph, a new graph, while ``forward``'s key alone says HIT; and a
pre-hook may change the arguments ``forward`` is looked up with. So where a source file of
a key of a module's forward (its frames, as the cache records them, but for its decorator
wrappers' files: :func:`_files`) registers a forward
hook (:func:`~fxcache_core.functions.hook_sites.hook_sites`), the function's HIT, MISS, ERROR or
NEW GRAPH is UNDECIDED (:func:`hooks_registered`, ``module-hooks-registered``), naming the
registration. A run's TORCH_TRACE, whose guards name each test a hook made, would decide.
Where no readable file shows a registration (one made in a file no frame names, or
sources not at hand) the verdict stands: nothing says either way. Never imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence

from fxcache_core.functions.frames import CompiledFrom, resume_parent
from fxcache_core.functions.hook_sites import hook_sites
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.reasons import Reason

__all__ = ["HOOKS_CODE", "hooked_frame", "hooks_registered"]

HOOKS_CODE = "module-hooks-registered"


def hooked_frame(frame: CompiledFrom | None) -> bool:
    """Whether a module's hooks run in the compiled call of ``frame``: a whole module's
    call, or a module's ``forward`` (or a resume frame of it)."""
    if frame is None:
        return False
    if frame.whole_module:
        return True
    return (
        frame.module_class is not None
        and (resume_parent(frame.function) or frame.function) == "forward"
    )


def _files(m: KeyMatch) -> list[str]:
    """The source files of key ``m``'s frames: the compiled frame's and those of the frames
    every op's stack passes through, but not a decorator wrapper's alone: a wrapper runs
    inside the compiled call, so what it registers there Dynamo traces with the call
    (transformers' ``capture_outputs`` hooks a model's layers from its file when outputs are
    asked for), and it is a library's, not the module's. Not the file of a helper the
    graph's first op sits in (transformers' modeling_utils.py, which hooks an embedding in
    ``enable_input_require_grads``): a callee, not a frame of the key."""
    c, o = m.compiled, m.origin
    out = [] if c is None else [c.file]
    if o is not None:
        out += [f[1] for f in o.outer]
    wrappers = set() if c is None else {w[1] for w in c.wrappers} - {c.file}
    return [f for f in out if f not in wrappers]


def hooks_registered(keys: Sequence[KeyMatch]) -> Reason | None:
    """Why a decided verdict over ``keys`` (one function's) is not known, where one of them
    is a key of a module's forward and a source file of its frames registers a forward
    hook; else None."""
    for m in keys:
        if not hooked_frame(m.compiled):
            continue
        sites = hook_sites(_files(m))
        if sites:
            assert m.compiled is not None
            more = f" (and {len(sites) - 1} more)" if len(sites) > 1 else ""
            return Reason(
                f"{m.compiled.name} is a module's forward, and {sites[0]}{more} registers a forward hook: "
                "torch.compile runs each hook as a compiled frame of its own around forward, and a hook's test "
                "of the call (a size, a float) is that frame's guard, which the cache keeps only where the hook "
                "made a graph; on the hook's other side torch compiles another graph, and a pre-hook may change "
                "what forward is called with. A run's TORCH_TRACE, whose guards name each test a hook made, "
                "would decide",
                "module-hooks-registered",  # HOOKS_CODE, spelled where the reference generator reads it
            )
    return None
