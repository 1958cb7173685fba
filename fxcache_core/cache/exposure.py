"""Who else can write where torch loads code from: the cache dir, the dirs above it and below it.

Anyone who can write into the cache dir can plant an entry, a wrapper module or a
kernel library that torch will load and run on a hit; anyone who can rename or
replace a dir above it can put another cache dir in its place. So, as unsloth's
loader checks a mega-cache before it loads one (owner-only, no group or other
write, no symlink), :func:`dir_exposure` looks at:

- the cache dir as given: a symlink (``dir-is-symlink``: whoever can change the
  link chooses what torch loads);
- the cache dir, and every dir below it that torch reads code from (``fxgraph/``,
  ``aotautograd/``, ``dynamo/``, their key dirs, the code dirs), down to three
  levels: owned by another user (``dir-not-owned``), or writable by its group or
  by others (``dir-writable-by-others``); a symlink among them (``dir-is-symlink``:
  torch follows it);
- every dir above it (the path as given and the real one), up to the user's home
  or the file system root: owned by neither the user nor root (``dir-not-owned``),
  or writable by group or others without the sticky bit (``dir-writable-by-others``).
  A sticky world-writable dir such as ``/tmp`` is fine above the cache dir (only
  a file's owner may rename or delete it there): torch's default
  ``/tmp/torchinductor_<user>`` is safe when that dir itself is the user's alone.

Each finding is a warning, not a verdict on the cache's content: it says who could
plant code later, not that anyone did. Only the mode bits and owners are read (an
ACL that grants more is not seen). Read-only: ``lstat`` and directory listings,
never following a link below the cache dir. Mirrors nothing in torch (torch checks
none of this).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fxcache_core.reasons import Reason

__all__ = ["MAX_DEPTH", "dir_exposure"]

MAX_DEPTH = 3
"""Levels of dirs below the cache dir looked at (``fxgraph/<xy>/<key>``)."""
MAX_DIRS = 200_000
"""Dirs below the cache dir looked at, at most."""


def dir_exposure(root: Path, *, uid: int | None = None, home: Path | None = None) -> tuple[Reason, ...]:
    """The ways others could write where torch loads code from under ``root`` (module
    docstring), one :class:`~fxcache_core.reasons.Reason` per finding (many dirs below
    the cache dir with one finding: one reason that counts them). ``uid``: the user
    (default: this process's effective one); ``home``: where the walk up stops
    (default: the user's home)."""
    uid = os.geteuid() if uid is None else uid
    if home is None:
        try:
            home = Path.home()
        except (KeyError, RuntimeError, OSError):
            home = None
    given = Path(os.path.abspath(root))
    out: dict[tuple[str, str], Reason] = {}
    try:
        st = os.lstat(given)
    except OSError:
        return ()
    if stat.S_ISLNK(st.st_mode):
        out[(str(given), "dir-is-symlink")] = Reason(
            f"the cache dir {given} is a symlink (to {os.path.realpath(given)}): whoever can change the link "
            "chooses what torch loads", "dir-is-symlink")
    real = Path(os.path.realpath(given))
    for chain in (_chain(given, home), _chain(real, home)):
        for d in chain:
            for r in _judge(d, d == real or d == given, uid):
                out.setdefault((str(d), r.code), r)
    out.update({(str(real), r.code + "-below"): r for r in _below(real, uid)})
    return tuple(out.values())


def _chain(start: Path, home: Path | None) -> list[Path]:
    """``start`` and the dirs above it, up to ``home`` (included) or the root."""
    out = [start]
    at = start
    while at != at.parent and at != home:
        at = at.parent
        out.append(at)
    return out


def _judge(d: Path, is_cache_dir: bool, uid: int) -> list[Reason]:
    try:
        st = os.lstat(d)
    except OSError:
        return []
    if stat.S_ISLNK(st.st_mode):
        return []  # its target is judged on the real path; the dir holding it on this one
    what = "the cache dir" if is_cache_dir else "the dir above the cache dir"
    out = []
    owners = {uid} if is_cache_dir else {uid, 0}
    if st.st_uid not in owners:
        out.append(Reason(f"{what} {d} is owned by user {st.st_uid}, not by you"
                          + ("" if is_cache_dir else " or root")
                          + ": its owner can plant code torch will load", "dir-not-owned"))
    sticky = bool(st.st_mode & stat.S_ISVTX)
    if st.st_mode & 0o022 and (is_cache_dir or not sticky):
        who = "its group and others" if st.st_mode & 0o022 == 0o022 else \
              "its group" if st.st_mode & 0o020 else "others"
        out.append(Reason(f"{what} {d} is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o}): "
                          "they can plant code torch will load", "dir-writable-by-others"))
    return out


def _below(real: Path, uid: int) -> list[Reason]:
    """One reason per finding over the dirs below the cache dir (to :data:`MAX_DEPTH`)."""
    counts: dict[str, list] = {}
    todo: list[tuple[str, int]] = [(str(real), 0)]
    seen = 0
    while todo and seen < MAX_DIRS:
        path, depth = todo.pop()
        try:
            with os.scandir(path) as it:
                listed = list(it)
            subdirs = [x for x in listed if x.is_dir(follow_symlinks=False)]
            links = [x for x in listed if x.is_symlink()]
        except OSError:
            continue
        for x in links:
            counts.setdefault("dir-is-symlink", [0, os.path.relpath(x.path, real)])[0] += 1
        for x in subdirs:
            seen += 1
            try:
                st = x.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = os.path.relpath(x.path, real)
            if st.st_uid != uid:
                counts.setdefault("dir-not-owned", [0, rel])[0] += 1
            if st.st_mode & 0o022:
                counts.setdefault("dir-writable-by-others", [0, rel])[0] += 1
            if depth + 1 < MAX_DEPTH:
                todo.append((x.path, depth + 1))
    out = []
    for code, (n, first) in sorted(counts.items()):
        if code == "dir-is-symlink":
            out.append(Reason(f"{n} symlink{'s' if n != 1 else ''} in the cache dir (first: {first}): torch "
                              "follows them, so whoever can change one, or write where it points, chooses "
                              "what torch loads", code))
            continue
        what = "owned by another user" if code == "dir-not-owned" else "writable by their group or others"
        out.append(Reason(f"{n} dir{'s' if n != 1 else ''} in the cache dir {'are' if n != 1 else 'is'} {what} "
                          f"(first: {first}): they can plant code torch will load", code))
    return out
