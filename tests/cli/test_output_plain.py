"""What fxcache writes where no person reads a terminal, and under ``NO_COLOR``.

A pipe or a file (a CI log, ``| less``, ``> out.txt``) gets plain text: no escape
sequence, no progress bar on stderr. A terminal gets colour, unless ``NO_COLOR`` is
set (https://no-color.org: no colour, whatever else stays). Each runs the real
program in a fresh process, its stdout a pipe or a pseudo-terminal; the colour test
shows that the terminal case does colour, so the ``NO_COLOR`` one is not vacuous.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.helpers import REPO_ROOT
from tests.synth import fake_key, fx_entry_bytes, write_entry

_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _colours(text: str) -> list[str]:
    """The colour codes (foreground or background, 8, 16, 256 or true colour) of the SGR
    sequences in ``text``; bold, dim and reset are not colour."""
    found = []
    for m in _SGR.finditer(text):
        for p in filter(None, m.group(1).split(";")):
            if 30 <= int(p) <= 49 and int(p) not in (39, 49) or 90 <= int(p) <= 107:
                found.append(p)
    return found


@pytest.fixture
def cache(tmp_path):
    k = fake_key(KeyKind.FX_GRAPH, "k")
    write_entry(tmp_path, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 8", k, origin=("f", "/m.py", 3)))
    return tmp_path, k


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
    env.update(PYTHONPATH=str(REPO_ROOT), FXCACHE_NO_INDEX="1", TERM="xterm-256color", **extra)
    return env


def _on_a_terminal(args: list[str], **extra: str) -> tuple[int, str]:
    """Run ``fxcache ARGS`` with stdout and stderr on a pseudo-terminal; what it wrote."""
    leader, follower = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "fxcache_cli", *args], stdin=subprocess.DEVNULL,
                             stdout=follower, stderr=follower, cwd=REPO_ROOT, env=_env(**extra))
        os.close(follower)
        chunks = []
        while True:
            try:
                b = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not b:
                break
            chunks.append(b)
        return p.wait(timeout=60), b"".join(chunks).decode(errors="replace")
    finally:
        os.close(leader)


def _match_hit(cache) -> list[str]:
    root, k = cache
    return ["--cache-dir", str(root), "match", "--key", k[:8], "--sym", "t0=6"]


def test_a_pipe_gets_plain_text_and_no_progress_bar(cache):
    for args in (_match_hit(cache), ["--cache-dir", str(cache[0]), "ls"], ["--cache-dir", str(cache[0]), "df"]):
        p = subprocess.run([sys.executable, "-m", "fxcache_cli", *args], capture_output=True, text=True,
                           cwd=REPO_ROOT, env=_env(), timeout=60)
        assert p.returncode == 0, p.stderr
        assert p.stdout and "\x1b" not in p.stdout and p.stderr == "", (args, p.stdout, p.stderr)


def test_a_terminal_gets_colour(cache):
    code, text = _on_a_terminal(_match_hit(cache))
    assert code == 0, text
    assert "HIT" in text and _colours(text), repr(text)


def test_no_color_takes_the_colour_away_on_a_terminal(cache):
    code, text = _on_a_terminal(_match_hit(cache), NO_COLOR="1")
    assert code == 0, text
    assert "HIT" in text and not _colours(text), repr(text)
