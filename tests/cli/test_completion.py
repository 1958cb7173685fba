"""Shell completion (``fxcache --install-completion``): typer's, over the lazy command
table. Completing a command name reads the table (``fxcache_cli._commands``) and
imports no command module, so a TAB costs what ``fxcache --help`` costs; options of
a command come from the command itself. Runs the program as the shell's completion
function does: a fresh process named ``fxcache``, with ``_FXCACHE_COMPLETE`` set."""

from __future__ import annotations

import os
import subprocess
import sys

from fxcache_cli._commands import commands_dict
from tests.helpers import REPO_ROOT

# The shell's completion function runs `fxcache` with these variables set; at exit
# (completion ends in sys.exit) the child writes the modules it loaded to stderr.
_AS_FXCACHE = """
import atexit, sys
atexit.register(lambda: sys.stderr.write(" ".join(sorted(sys.modules)) + "\\n"))
sys.argv[0] = "fxcache"
from fxcache_cli.fxcache import main
main()
"""


def _complete(words: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "_FXCACHE_COMPLETE": "complete_bash",
           "COMP_WORDS": words, "COMP_CWORD": str(len(words.split(" ")) - 1)}
    return subprocess.run([sys.executable, "-c", _AS_FXCACHE], capture_output=True,
                          text=True, cwd=REPO_ROOT, env=env, timeout=60)


def test_command_names_complete_from_the_table_without_importing_a_command():
    p = _complete("fxcache ")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == list(commands_dict)
    loaded = set(p.stderr.split())
    assert "fxcache_cli.fxcache" in loaded  # the list was written
    assert not loaded & {c.module for c in commands_dict.values()}


def test_a_prefix_completes_to_the_commands_it_starts():
    assert _complete("fxcache d").stdout.split() == ["dupes", "df", "diff"]


def test_global_and_command_options_complete():
    assert {"--cache-dir", "--remote", "--version"} <= set(_complete("fxcache --").stdout.split())
    assert {"--dry-run", "--max-size"} <= set(_complete("fxcache gc --").stdout.split())


def test_the_completion_script_names_the_program():
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "_FXCACHE_COMPLETE": "source_bash"}
    p = subprocess.run([sys.executable, "-c", _AS_FXCACHE], capture_output=True, text=True,
                       cwd=REPO_ROOT, env=env, timeout=60)
    assert p.returncode == 0 and "complete -o default -F _fxcache_completion fxcache" in p.stdout
