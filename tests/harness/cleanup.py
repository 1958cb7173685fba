"""Removing the session's temp dirs when it ends, without making the run wait for it.

A session's build dirs hold real caches, their copies, a model cache and blobs: tens of
thousands of files, which ``shutil.rmtree`` takes many seconds to remove after the last
test has passed. :func:`remove_at_exit` renames each dir aside at exit (so nothing later
finds it) and removes it in a detached ``rm -rf`` of its own, which outlives the test
process; where that cannot start, it removes the dir in-process as before.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess


def remove_at_exit(path: str | os.PathLike[str]) -> None:
    """Remove the dir ``path`` (and everything under it) when the process exits."""
    atexit.register(_remove, os.fspath(path))


def _remove(path: str) -> None:
    if not os.path.lexists(path):
        return
    aside = f"{path}.removing"
    try:
        os.rename(path, aside)
        subprocess.Popen(["rm", "-rf", "--", aside], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError:
        shutil.rmtree(aside if os.path.lexists(aside) else path, ignore_errors=True)
