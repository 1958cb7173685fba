"""Which torch a compiled artifact was built against, from the header paths it records.

Torch names a C++ build by the hash of its source and its command line
(``write`` and ``CppBuilder.get_command_line`` in torch/_inductor/codecache.py
and cpp_builder.py), and the command line holds ``-I<torch>/include``: a
library built against another torch install is never looked up by this one.
A precompiled header's name also hashes the preprocessed headers
(``_precompile_header``: ``preprocessor_hash``), so one built before a header
it includes changed is never looked up again either.

GCC records in a precompiled header the path of every header it read, and in
a library the paths that ``__FILE__`` or debug info named. This module reads
those paths back (a bounded, chunked byte search; nothing is executed or
parsed as code) and compares them with the installed torch's include dir. A
file that records no torch include dir gives no verdict (``None``): it is
kept.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

_PATH_RE = re.compile(rb"(/[\x21-\x7e]{0,4000}?/torch/include)(/[\x21-\x7e]{1,4000})?")
_CHUNK = 8 << 20
_MAX_PATHS = 20_000
_O_NOATIME = getattr(os, "O_NOATIME", 0)


@dataclass(frozen=True)
class Recorded:
    """The torch include dirs (and headers under them) a file records.

    Attributes:
        include_dirs: distinct ``.../torch/include`` dirs, as recorded.
        headers: recorded header paths under them (at most 20,000).
    """

    include_dirs: frozenset[str]
    headers: frozenset[str]


def recorded_paths(path: str, *, headers: bool) -> Recorded:
    """The torch include dirs recorded in the file at ``path`` (and, with
    ``headers``, the header paths under them), read in 8 MiB chunks without
    following a symlink and without moving its access time where the OS allows.

    Raises:
        OSError: the file cannot be opened (a symlink included) or read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | _O_NOATIME)
    except PermissionError:
        if not _O_NOATIME:
            raise
        fd = os.open(path, flags)
    dirs: set[str] = set()
    found: set[str] = set()
    tail = b""
    with os.fdopen(fd, "rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            if not chunk:
                break
            buf = tail + chunk
            for m in _PATH_RE.finditer(buf):
                d = m.group(1).decode("ascii", "replace")
                dirs.add(d)
                if headers and m.group(2) and len(found) < _MAX_PATHS:
                    found.add(d + m.group(2).decode("ascii", "replace"))
            tail = buf[-8192:]
    return Recorded(frozenset(dirs), frozenset(found))


def built_by_another_torch(path: str, mtime: float, include_dir: str, *, pch: bool,
                           ) -> tuple[bool | None, str]:
    """Whether the artifact at ``path`` (last modified ``mtime``) can never be
    used by the torch whose headers are in ``include_dir``: ``(True, why)``;
    ``(False, "")`` when it may be; ``(None, why)`` when the file records no
    torch include dir (no verdict).

    For every artifact: it records only other torch include dirs. For a
    precompiled header (``pch``) also: a header it records under this torch's
    include dir is gone now, or was modified after the header was compiled.

    Raises:
        OSError: the file cannot be read.
    """
    rec = recorded_paths(path, headers=pch)
    if not rec.include_dirs:
        return None, "it records no torch include dir"
    mine = os.path.realpath(include_dir)
    same = tuple(d + "/" for d in rec.include_dirs if os.path.realpath(d) == mine)
    if not same:
        return True, f"built against another torch's headers ({min(rec.include_dirs)})"
    if pch:
        for h in sorted(rec.headers):
            if not h.startswith(same):
                continue
            try:
                st = os.stat(h)
            except FileNotFoundError:
                return True, f"a header it was built from is gone ({h})"
            except OSError:
                continue
            if st.st_mtime > mtime:
                return True, f"a header it was built from changed since ({h})"
    return False, ""
