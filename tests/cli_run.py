"""Running the ``fxcache`` command in-process, for tests that check what it parses
and prints, not what a process does (start-up, SIGPIPE and the console script's
exit codes keep real subprocesses: tests/test_startup.py, test_cli_conventions.py).

Import as ``from cli_run import fxcache_in_process``.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass


@dataclass
class Run:
    """What one in-process run did, shaped like ``subprocess.CompletedProcess``."""

    returncode: int
    stdout: str
    stderr: str


def fxcache_in_process(*args: str) -> Run:
    """``fxcache ARGS...`` through :func:`fxcache_cli.fxcache.main`, stdout and stderr
    captured (never a terminal: as in a pipe), the exit code as main gave it."""
    from fxcache_cli.fxcache import main

    argv, stdout, stderr = sys.argv, sys.stdout, sys.stderr
    sys.argv = ["fxcache", *map(str, args)]
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    code = 0
    try:
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
        sys.argv, sys.stdout, sys.stderr = argv, stdout, stderr
    return Run(code, out, err)
