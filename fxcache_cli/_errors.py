"""The CLI's error layer: exit codes by name, flags by core parameter, one handler.

Like pip's ``cli/status_codes.py`` and ``base_command._run_wrapper`` (every exit
code named once; exceptions turned into codes in one place, not in the command
handlers) and huggingface_hub's ``cli/_errors.py`` (``CLI_ERROR_MAPPINGS``: the
library raises typed errors with fields, the CLI writes the words).

fxcache_core names its parameters in messages and reasons through
:func:`fxcache_core.errors.param`, never CLI flags; :func:`flag_of`
(:mod:`fxcache_cli._flags`) is the naming ``main()`` installs, so they read as
flags. Never imports more of fxcache_core than :mod:`fxcache_core.errors`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

# Exit codes (main()'s docstring says which command uses which).
SUCCESS = 0
FAILURE = 1  # match: a miss or a new graph; verify: a bad entry; gc: paths left, or declined
BAD_INPUT = 2  # a usage error or an FxcacheError: one line on stderr
UNDECIDED = 3  # match: none misses, some is undecided
INTERRUPTED = 130  # Ctrl-C, as a shell reports SIGINT
BROKEN_PIPE = 141  # the reader of stdout went away, as a process killed by SIGPIPE

def _usage_message(e: BaseException) -> str:
    msg = e.format_message()  # type: ignore[attr-defined]
    if "--cache-dir" in msg:
        msg += " (it is a global option: fxcache --cache-dir DIR COMMAND ...)"
    elif getattr(e, "ctx", None) is not None:
        msg += f" (see {e.ctx.command_path} --help)"  # type: ignore[attr-defined]
    return msg


def is_usage_error(e: BaseException) -> bool:
    """A command-line usage error (unknown option, bad value...), whichever click raised it.

    Typer releases differ in where click lives (the ``click`` package or a copy
    vendored inside typer); both mark usage errors with ``exit_code == 2``.
    """
    return getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))


def _kind(e: BaseException) -> str | None:
    """Which row of :data:`CLI_ERROR_MAPPINGS` handles ``e`` (None: none, re-raise)."""
    from fxcache_core.errors import FxcacheError

    if isinstance(e, FxcacheError):
        return "fxcache"
    if isinstance(e, KeyboardInterrupt):
        return "interrupt"
    if type(e).__name__ == "NoArgsIsHelpError":  # plain `fxcache`: show the help
        return "no-args"
    if is_usage_error(e):
        return "usage"
    if type(e).__name__ == "Abort":
        return "abort"
    return None


# What each kind of error writes, and the exit code: (stream, message, code).
CLI_ERROR_MAPPINGS: dict[str, tuple[str, Callable[[BaseException], str], int]] = {
    "fxcache": ("stderr", str, BAD_INPUT),  # parameters named as flags when it was made
    "usage": ("stderr", _usage_message, BAD_INPUT),
    "interrupt": ("stderr", lambda e: "interrupted", INTERRUPTED),
    "abort": ("stderr", lambda e: "aborted", FAILURE),
    "no-args": ("stdout", lambda e: e.format_message(), SUCCESS),  # type: ignore[attr-defined]
}


def handle(e: BaseException) -> NoReturn:
    """Write ``e`` as :data:`CLI_ERROR_MAPPINGS` says and exit with its code;
    re-raise what no row handles (a bug: a traceback)."""
    kind = _kind(e)
    if kind is None:
        raise e
    stream, message, code = CLI_ERROR_MAPPINGS[kind]
    if stream == "stdout":
        sys.stdout.write(message(e) + "\n")
    else:
        from ._output import error_line

        error_line(message(e))
    sys.exit(code)
