"""The ``fxcache`` command line: argument parsing and rendering only.

Every decision lives in :mod:`fxcache_core`; the commands (one module each in
this package, named in :mod:`fxcache_cli._commands` and imported only when they
run) turn its values into text or JSON (``--json``) through
:mod:`fxcache_cli._output`. Errors the user caused become one line on stderr and
exit code 2 (:mod:`fxcache_cli._errors`).
"""

from __future__ import annotations

import sys

from . import _errors
from ._app import app
from ._context import close_all


def _stdout_gone() -> None:
    """Point stdout at /dev/null, so that Python's final flush of what is still
    buffered cannot fail again ("Exception ignored ... BrokenPipeError")."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main() -> None:
    """Entry point of the ``fxcache`` console script.

    Exit codes: 0 success (for ``match``: every function hits), 1 ``match``: a
    miss or a new graph, ``verify``: a bad entry, ``gc``: planned paths left (or
    the user declined), 2 bad input (one line on stderr), 3 ``match``: undecided,
    130 interrupted, 141 the reader of stdout went away (``fxcache ls | head``),
    quietly, as a process killed by SIGPIPE.
    """
    from fxcache_core.errors import use_names

    from ._flags import flag_of

    restore = use_names(flag_of)  # core texts made during the run name flags, not parameters
    try:
        try:
            code = app(standalone_mode=False)
            sys.stdout.flush()
        finally:
            close_all()
            restore()
    except BrokenPipeError:
        _stdout_gone()
        sys.exit(_errors.BROKEN_PIPE)
    except SystemExit:
        # click turns EPIPE into exit 1 after wrapping stdout in its PacifyFlushWrapper.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _stdout_gone()
            sys.exit(_errors.BROKEN_PIPE)
        raise
    except (Exception, KeyboardInterrupt) as e:  # FxcacheError, usage errors...: _errors.CLI_ERROR_MAPPINGS
        _errors.handle(e)
    sys.exit(code if isinstance(code, int) else 0)
