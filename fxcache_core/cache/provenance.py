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
from dataclasses import dataclass

from fxcache_core.fsutil import open_regular

_NEEDLE = b"/torch/include"
_PRINTABLE = bytes(range(0x21, 0x7F))
_MAX_PATH = 4096
_CHUNK = 8 << 20
MAX_READ = 1 << 30
"""Files larger than this (bytes) are not searched: no verdict."""
_MAX_PATHS = 20_000
MAX_OCCURRENCES = 100_000
"""A file naming ``/torch/include`` more often than this is not judged (a real
precompiled header names it a few hundred times)."""
MAX_INCLUDE_DIRS = 64
"""A file recording more distinct torch include dirs than this is not judged (a
real build records one or two; each may cost a ``realpath``)."""


@dataclass(frozen=True)
class Recorded:
    """The torch include dirs (and headers under them) a file records.

    Attributes:
        include_dirs: distinct ``.../torch/include`` dirs, as recorded (at most
            :data:`MAX_INCLUDE_DIRS`).
        headers: recorded header paths under them (at most 20,000).
        more_dirs: the file records more distinct include dirs than that (the
            rest are not kept).
    """

    include_dirs: frozenset[str]
    headers: frozenset[str]
    more_dirs: bool = False


def recorded_paths(path: str, *, headers: bool) -> Recorded:
    """The torch include dirs recorded in the file at ``path`` (and, with
    ``headers``, the header paths under them), read in 8 MiB chunks without
    following a symlink and without moving its access time where the OS allows.

    Linear in the file's size whatever its bytes: each occurrence of
    ``/torch/include`` is extended to the printable run around it, at most
    4,096 bytes either way.

    Raises:
        OSError: the file cannot be opened (a symlink included) or read, is not a
            regular file (a FIFO is never waited on), or is larger than :data:`MAX_READ`.
    """
    fd = open_regular(path, follow_symlinks=False, noatime=True)
    dirs: set[str] = set()
    found: set[str] = set()
    with os.fdopen(fd, "rb") as f:
        if os.fstat(f.fileno()).st_size > MAX_READ:
            raise OSError(f"larger than {MAX_READ} bytes: not searched")
        # The tail of what was read, where unsearched bytes start in it, and where the
        # printable run of the last occurrence ended (a run is never read twice).
        keep, skip, done, seen, more = b"", 0, 0, 0, False
        while True:
            chunk = f.read(_CHUNK)
            buf = keep + chunk
            # An occurrence whose printable run may go on into the next chunk waits for it.
            limit = len(buf) if not chunk else max(skip, len(buf) - _MAX_PATH - len(_NEEDLE))
            i = buf.find(_NEEDLE, skip)
            while 0 <= i < limit:
                seen += 1
                if seen > MAX_OCCURRENCES:
                    raise OSError(f"it names torch/include more than {MAX_OCCURRENCES} times: not searched further")
                # The printable run around it, within _MAX_PATH either way and never back
                # into the run before (each byte is looked at a bounded number of times).
                back = buf[max(done, i - _MAX_PATH):i]
                start = i - (len(back) - len(back.rstrip(_PRINTABLE)))
                end = i + len(_NEEDLE)
                ahead = buf[end:end + _MAX_PATH]
                stop = end + len(ahead) - len(ahead.lstrip(_PRINTABLE))
                head = buf[start:end]
                d = head[head.find(b"/"):].decode("ascii", "replace")
                if d in dirs or len(dirs) < MAX_INCLUDE_DIRS:
                    dirs.add(d)
                else:
                    more = True
                if headers and d in dirs and stop > end + 1 and buf[end] == 0x2F and len(found) < _MAX_PATHS:
                    found.add(d + buf[end:stop].decode("ascii", "replace"))
                done = stop
                i = buf.find(_NEEDLE, stop)
            if not chunk:
                break
            base = max(0, limit - _MAX_PATH)  # keep what a deferred path may start with
            keep, skip, done = buf[base:], limit - base, max(0, done - base)
    return Recorded(frozenset(dirs), frozenset(found), more)


def built_by_another_torch(path: str, mtime: float, include_dir: str, *, pch: bool,
                           ) -> tuple[bool | None, str]:
    """Whether the artifact at ``path`` (last modified ``mtime``) can never be
    used by the torch whose headers are in ``include_dir``: ``(True, why)``;
    ``(False, "")`` when it may be; ``(None, why)`` when the file records no
    torch include dir, or more than :data:`MAX_INCLUDE_DIRS` distinct ones (no verdict).

    For every artifact: it records only other torch include dirs. For a
    precompiled header (``pch``) also: a header it records under this torch's
    include dir is gone now, or was modified after the header was compiled.

    Cost: one ``realpath`` per distinct recorded dir not spelled as
    ``include_dir`` itself (at most :data:`MAX_INCLUDE_DIRS`), one ``stat``
    per recorded header under this torch's include dir.

    Raises:
        OSError: the file cannot be read.
    """
    rec = recorded_paths(path, headers=pch)
    if not rec.include_dirs:
        return None, "it records no torch include dir"
    if rec.more_dirs:
        return None, (f"it records more than {MAX_INCLUDE_DIRS} distinct torch include dirs "
                      "(a real build records one or two): not judged")
    mine = os.path.realpath(include_dir)
    same = tuple(d + "/" for d in rec.include_dirs if d in (include_dir, mine) or _resolved(d) == mine)
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


def _resolved(path: str) -> str | None:
    """``realpath`` of a recorded path, None where it cannot be resolved (a NUL byte)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None
