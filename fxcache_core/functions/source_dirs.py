"""Where a compiled frame's source file is read from: the recorded path, or the same
file under another directory (a cache from another machine, a moved checkout).

A cache records each compiled frame's file as the path it had where the cache was
built (``/home/ci/src/model.py``). Given a mapping ``OLD -> NEW`` of absolute
directories (:func:`source_dirs`), a recorded path under ``OLD`` is read from
``NEW`` instead (:func:`located`): the longest ``OLD`` that is a whole-component
prefix of the path wins (``/a/b`` maps ``/a/b/x.py``, never ``/a/bc/x.py``). The
mapping in force is a context value, as :func:`fxcache_core.errors.use_names` keeps
the naming of parameters: a caller installs it for a run (:func:`use_source_dirs`),
and every reading of a source file in :mod:`fxcache_core.functions.frames` goes
through :func:`located`. The file found there is checked as the recorded one would be:
it must still hold the function at the recorded line
(:func:`fxcache_core.functions.params.frame_reads`, ``source-changed``). Only where a
file is read changes: a frame keeps its recorded path (what ``ls`` shows, what a
trace's frames are matched by).

A caller that found a file changed since a key was compiled (its lines no longer those
the key's graph was traced from: :mod:`fxcache_core.lookup.source_lines`) withholds it
while it judges that key (:func:`withhold`): every reading in
:mod:`fxcache_core.functions.frames` and :mod:`fxcache_core.functions.params` then takes
it as not there, and :func:`withheld` says why. Never imports torch.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar

from fxcache_core.errors import FxcacheError, param
from fxcache_core.reasons import Reason

SourceDirs = tuple[tuple[str, str], ...]
"""(OLD, NEW) pairs of absolute, normalized directories, longest OLD first."""

_DIRS: ContextVar[SourceDirs] = ContextVar("fxcache_source_dirs", default=())
Withheld = tuple[tuple[str, Reason], ...]
"""(recorded path, why it is not read) pairs: :func:`withhold`."""
_WITHHELD: ContextVar[Withheld] = ContextVar("fxcache_withheld_sources", default=())


def source_dirs(mapping: Mapping[str, str] | Iterable[tuple[str, str]], given_as: str | None = None) -> SourceDirs:
    """``mapping`` (a recorded directory -> the directory to read it from; or the
    ``(OLD, NEW)`` pairs as given, repeats included) checked and normalized, longest OLD
    first. ``given_as``: what gave the pairs, as a message names it (an environment
    variable's name); default the parameter ``source_dirs``. Raises
    :class:`~fxcache_core.errors.FxcacheError` (parameter ``source_dirs``) when a
    directory is empty or not absolute, or one OLD (once normalized: ``/a`` and ``/a/``)
    is mapped to two directories."""
    said = given_as or param("source_dirs")
    out: dict[str, str] = {}
    for old, new in (mapping.items() if isinstance(mapping, Mapping) else mapping):
        for d in (old, new):
            if not d or not os.path.isabs(d):
                raise FxcacheError(f"{said}: {d!r} is not an absolute directory "
                                   "(OLD=NEW, both absolute)", param="source_dirs", value=f"{old}={new}")
        o, n = os.path.normpath(old), os.path.normpath(new)
        if o in out and out[o] != n:
            raise FxcacheError(f"{said}: {o} is mapped twice ({out[o]} and {n})",
                               param="source_dirs", value=f"{old}={new}")
        out[o] = n
    return tuple(sorted(out.items(), key=lambda p: len(p[0]), reverse=True))


def use_source_dirs(mapping: Mapping[str, str] | Iterable[tuple[str, str]],
                    given_as: str | None = None) -> Callable[[], None]:
    """Install ``mapping`` (checked by :func:`source_dirs`) as the one in force for the
    source files read from now on in this context. Returns a function that puts the
    previous one back. Raises as :func:`source_dirs`."""
    token = _DIRS.set(source_dirs(mapping, given_as))
    return lambda: _DIRS.reset(token)


def in_force() -> SourceDirs:
    """The mapping in force (() when none)."""
    return _DIRS.get()


def located(path: str, dirs: SourceDirs | None = None) -> str:
    """Where the source file recorded as ``path`` is read: under the NEW of the longest
    OLD of ``dirs`` (default: :func:`in_force`) that holds it, else ``path`` itself."""
    for old, new in in_force() if dirs is None else dirs:
        if path == old:
            return new
        if path.startswith(old.rstrip("/") + "/"):
            return os.path.join(new, path[len(old.rstrip("/")) + 1:])
    return path


def withhold(files: Mapping[str, Reason]) -> Callable[[], None]:
    """Take the source files recorded as ``files`` (recorded path -> why) as not readable
    from now on in this context, as a file that is not there: the frame readings of
    :mod:`fxcache_core.functions.frames` and :mod:`fxcache_core.functions.params` see none
    of them, and :func:`~fxcache_core.functions.params.frame_reads` answers with the
    reason. Returns a function that puts the previous set back."""
    token = _WITHHELD.set(tuple(sorted(files.items())))
    return lambda: _WITHHELD.reset(token)


def withheld(path: str | None = None) -> Reason | None:
    """Why the source file recorded as ``path`` is withheld (:func:`withhold`), None
    when it is not."""
    return next((why for p, why in _WITHHELD.get() if p == path), None)


def withheld_now() -> Withheld:
    """Every file withheld in this context (() when none): a cache key of the readings."""
    return _WITHHELD.get()


def shown(path: str) -> str:
    """``path`` as a message names it: the recorded path, with where it was read from when
    a mapping in force puts it elsewhere (``/build/m.py (read from /here/m.py)``)."""
    there = located(path)
    return path if there == path else f"{path} (read from {there})"


__all__ = ["SourceDirs", "Withheld", "in_force", "located", "shown", "source_dirs", "use_source_dirs", "withheld",
           "withheld_now", "withhold"]
