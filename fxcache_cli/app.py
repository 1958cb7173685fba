"""The ``fxcache`` command line: argument parsing and rendering only.

Every decision lives in :mod:`fxcache_core`; the commands (one module each in
this package) turn its values into text or JSON (``--json``). Errors the user
caused become one line on stderr and exit code 2.
"""

from __future__ import annotations

import sys

import typer

from fxcache_core.errors import FxcacheError

from . import df, explain, gc, guards, key, ls, match, verify
from ._app import app
from ._context import close_all
from ._output import error_line

# The commands, in the order --help lists them.
for _name, _fn in (
    ("ls", ls.ls_cmd),
    ("df", df.df_cmd),
    ("guards", guards.guards_cmd),
    ("match", match.match_cmd),
    ("verify", verify.verify_cmd),
    ("key", key.key_cmd),
    ("diff", key.diff_cmd),
    ("explain", explain.explain_cmd),
    ("gc", gc.gc_cmd),
    ("rm", gc.rm_cmd),
):
    app.command(_name)(_fn)

def _is_usage_error(e: BaseException) -> bool:
    """A command-line usage error (unknown option, bad value...), whichever click raised it.

    Typer releases differ in where click lives (the ``click`` package or a copy
    vendored inside typer); both mark usage errors with ``exit_code == 2``.
    """
    return getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))


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
    try:
        try:
            code = app(standalone_mode=False)
            sys.stdout.flush()
        finally:
            close_all()
    except BrokenPipeError:
        _stdout_gone()
        sys.exit(141)
    except SystemExit:
        # click turns EPIPE into exit 1 after wrapping stdout in its PacifyFlushWrapper.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _stdout_gone()
            sys.exit(141)
        raise
    except FxcacheError as e:
        error_line(str(e))
        sys.exit(2)
    except KeyboardInterrupt:
        error_line("interrupted")
        sys.exit(130)
    except Exception as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # plain `fxcache`: show the help
            sys.stdout.write(e.format_message() + "\n")  # type: ignore[attr-defined]
            sys.exit(0)
        if _is_usage_error(e):
            msg = e.format_message()  # type: ignore[attr-defined]
            if "--cache-dir" in msg:
                msg += " (it is a global option: fxcache --cache-dir DIR COMMAND ...)"
            elif getattr(e, "ctx", None) is not None:
                msg += f" (see {e.ctx.command_path} --help)"  # type: ignore[attr-defined]
            error_line(msg)
            sys.exit(2)
        if isinstance(e, typer.Abort) or type(e).__name__ == "Abort":
            error_line("aborted")
            sys.exit(1)
        raise
    sys.exit(code if isinstance(code, int) else 0)
