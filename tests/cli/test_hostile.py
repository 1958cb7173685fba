"""Hostile cache content and bad input against every command, each run in a fresh process.

A synthetic cache (tests/synth.py: a real compile cannot produce these) holds
what an attacker with write access to the cache dir can write: guards that
would cost minutes of CPU, a 9-byte entry that asks the unpickler for
gigabytes, terminal escapes and a lone surrogate in a guards string, a file
name that is not UTF-8 and holds an escape and a newline. Every command must
end without a traceback, with its documented exit code, under 300 MB of peak
RSS, and quickly (the timeout is a stall detector, not a speed target: see the
docs/safety.md for measured times), and must never write a control
character that came from the cache to the terminal.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.cli_run import Run, run_measured
from tests.synth import aot_entry_bytes, fake_key, fx_entry_bytes, write_entry

RSS_LIMIT_KB = 300 * 1024
STALL_S = 30  # far above the ~1-2 s these take; only a stall reaches it

def fxcache(*args: str, env: dict[str, str] | None = None) -> Run:
    """Run ``fxcache ARGS`` in a fresh process; its exit code, time, peak RSS, output bytes."""
    return run_measured([sys.executable, "-m", "fxcache_cli", *args],
                        env={"FXCACHE_JOBS": "1", "COLUMNS": "200", **(env or {})}, timeout=STALL_S)


def assert_sane(r: Run, codes: tuple[int, ...] = (0, 1)) -> None:
    """No traceback, an expected exit code, bounded memory, no raw control character."""
    assert "Traceback" not in r.stderr, r
    assert r.returncode in codes, r
    assert r.maxrss_kb < RSS_LIMIT_KB, r
    for stream in (r.stdout_bytes, r.stderr_bytes):
        bad = {b for b in stream if b < 0x20 and b not in (0x0A,) or b == 0x7F}
        assert not bad, (sorted(bad), r)


CPU_GUARDS = " and ".join(["3**4194304 // 3**2000000 > L['t0']"] * 20)  # ~1 KB; minutes of CPU in eval
ESC_GUARDS = "L['t0'] > 2 and \x1b]0;pwned\x07\x1b[31mred\x1b[0m\r\x08 == L['t0']"
SURROGATE_GUARDS = "L['t0'] > 2 and '\ud800' != L['t0']"
MEMO_BOMB = b"\x80\x02Nr" + struct.pack("<I", 2**31) + b"."  # 9 bytes; the C unpickler asks for 32 GB
ODD_NAME = b"\xff\x1b[31mred\nline"  # not UTF-8, an escape, a newline


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    fx = fake_key(KeyKind.FX_GRAPH, "hostile-fx")
    odd_key = fake_key(KeyKind.FX_GRAPH, "odd-names")
    paths = {
        "valid": write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 8", fx)),
        "cpu": write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes(CPU_GUARDS, fx)),
        "esc": write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes(ESC_GUARDS, fx)),
        "surrogate": write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes(SURROGATE_GUARDS, fx)),
        "memo": write_entry(root, KeyKind.FX_GRAPH, fx, MEMO_BOMB),
        # Bounds past Python's 4,300-digit int-to-str limit, in decimal and in hex.
        "bigdec": write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= " + "9" * 5000, fx)),
        "bighex": write_entry(root, KeyKind.FX_GRAPH, fx, fx_entry_bytes("L['t0'] <= 0x" + "f" * 4000, fx)),
    }
    odd_dir = KeyKind.FX_GRAPH.key_dir(root, odd_key)
    write_entry(root, KeyKind.FX_GRAPH, odd_key, fx_entry_bytes("L['t0'] > 1", odd_key))
    odd = os.fsencode(odd_dir) + b"/" + ODD_NAME
    with open(odd, "wb") as f:
        f.write(b"x")
    aot = fake_key(KeyKind.AOT_AUTOGRAD, "hostile-aot")
    write_entry(root, KeyKind.AOT_AUTOGRAD, aot, aot_entry_bytes("L['t0'] <= 8", (fx, "L['t0'] <= 8")))
    old = time.time() - 30 * 86400
    for dirpath, _dirs, files in os.walk(os.fsencode(root)):
        for f in files:
            os.utime(os.path.join(dirpath, f), (old, old))
    return {"root": str(root), "fx": fx, "odd_key": odd_key, "aot": aot, "paths": paths,
            "env": {"FXCACHE_INDEX_DIR": str(tmp_path_factory.mktemp("index"))}}


COMMANDS = [
    ["ls"], ["ls", "--entries"], ["ls", "--check"], ["ls", "--json"], ["ls", "--entries", "--json"],
    ["ls", "--check", "--json"], ["df"], ["df", "--json"],
    ["guards", "{fx}"], ["guards", "{fx}", "--format", "plain"], ["guards", "{fx}", "--format", "pretty"],
    ["guards", "{fx}", "--format", "latex"], ["guards", "{fx}", "--json"], ["guards", "{fx}", "--raw"],
    ["guards", "{odd_key}", "--raw"],
    ["match", "--key", "{fx}", "--sym", "t0=5"], ["match", "--key", "{fx}", "--sym", "t0=5", "--json"],
    ["match", "--shapes", "x=[4,3]"], ["coverage", "{fx}", "--range", "t0=1:64"],
    ["audit"], ["key", "{fx}"], ["verify"], ["verify", "--json"],
    ["gc", "--dry-run"], ["gc", "--dry-run", "--older-than", "1d"], ["gc", "--dry-run", "--max-size", "1B"],
    ["gc", "--dry-run", "--keep-last", "0"], ["gc", "--dry-run", "--unreadable", "--json"],
    ["rm", "{odd_key}", "--dry-run"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_every_command_survives_a_hostile_cache(hostile, args):
    argv = [a.format(**hostile) for a in args]
    r = fxcache("--cache-dir", hostile["root"], *argv, env=hostile["env"])
    # match: 3 (undecided) where the hostile FX keys' inputs have no names to bind the call by
    assert_sane(r, codes=(0, 1, 3) if argv[0] == "match" else (0, 1))
    if "--json" in argv:
        json.loads(r.stdout)  # valid JSON whatever the names and strings hold


def test_guards_shows_control_characters_escaped_and_the_huge_guards_as_refused(hostile):
    r = fxcache("--cache-dir", hostile["root"], "guards", hostile["fx"], "--raw", env=hostile["env"])
    assert_sane(r)
    assert "\\x1b]0;pwned\\x07\\x1b[31m" in r.stdout  # shown, not sent to the terminal
    assert "\\ud800" in r.stdout
    r = fxcache("--cache-dir", hostile["root"], "guards", hostile["fx"], env=hostile["env"])
    assert_sane(r)
    assert "MAX_INT_BITS" in r.stdout and r.seconds < STALL_S


def test_a_file_name_that_is_not_utf8_is_shown_escaped_on_one_row(hostile):
    r = fxcache("--cache-dir", hostile["root"], "ls", "--entries", env=hostile["env"])
    assert_sane(r)
    rows = [line for line in r.stdout.splitlines() if "red" in line]
    assert len(rows) == 1 and "\\xff\\x1b[31mred\\nline" in rows[0], r
    r = fxcache("--cache-dir", hostile["root"], "gc", "--dry-run", "--unreadable", env=hostile["env"])
    assert_sane(r)
    assert "\\xff\\x1b[31mred\\nline" in r.stdout, r


def test_the_memo_bomb_is_reported_unreadable_in_bounded_memory(hostile):
    r = fxcache("--cache-dir", hostile["root"], "ls", "--check", "--json", env=hostile["env"])
    assert_sane(r)
    assert r.maxrss_kb < RSS_LIMIT_KB
    memo = hostile["paths"]["memo"].name
    entries = {e["entry"]: e for k in json.loads(r.stdout) for e in k["entries"]}
    assert entries[memo].get("unreadable"), entries[memo]


def test_verify_counts_what_it_could_not_check_and_is_not_a_pass(tmp_path):
    """Its only other entry is over the decoding limit (a sparse file: no disk used)."""
    from fxcache_core.decode.unpickler import MAX_ENTRY_BYTES

    key = fake_key(KeyKind.FX_GRAPH, "v")
    write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes("L['t0'] > 1", key))
    big = KeyKind.FX_GRAPH.key_dir(tmp_path, key) / ("b" * 51)
    with open(big, "wb") as f:
        f.truncate(MAX_ENTRY_BYTES + 1)
    r = fxcache("--cache-dir", str(tmp_path), "verify")
    assert_sane(r, codes=(1,))
    assert "1 not checked" in r.stdout and "all match" not in r.stdout, r
    r = fxcache("--cache-dir", str(tmp_path), "verify", "--json")
    assert_sane(r, codes=(1,))
    assert json.loads(r.stdout)["not_checked"] == 1


@pytest.mark.parametrize("args,option", [
    (["match", "--key", "f", "--sym", "t0=" + "9" * 5000], "--sym"),
    (["coverage", "f", "--range", "t0=1:" + "9" * 5000], "--range"),
    (["match", "--shapes", "x=[4," + "9" * 5000 + "]"], "--inputs"),
    (["gc", "--max-size", "9" * 400 + "B"], "--max-size"),
    (["gc", "--max-size", ""], "--max-size"),
    (["gc", "--older-than", ""], "--older-than"),
    (["gc", "--older-than", "9" * 400 + "d"], "--older-than"),
])
def test_bad_numbers_are_one_line_and_exit_2(hostile, args, option):
    r = fxcache("--cache-dir", hostile["root"], *args, env=hostile["env"])
    assert_sane(r, codes=(2,))
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and option in lines[0] and len(lines[0]) < 300, r


def test_a_remote_password_is_never_echoed(hostile):
    for args in (["ls"], ["ls", "--json"], ["gc", "--dry-run"]):
        r = fxcache("--remote", "redis://user:hunter2@127.0.0.1:1/0", *args, env=hostile["env"])
        assert_sane(r, codes=(2,))
        assert "hunter2" not in r.stdout + r.stderr and "***" in r.stderr, r


def test_coverage_of_a_key_with_thousands_of_passing_clauses_stops_and_says_where(tmp_path):
    key = fake_key(KeyKind.FX_GRAPH, "wide")
    write_entry(tmp_path, KeyKind.FX_GRAPH, key, fx_entry_bytes(" and ".join(["L['t0'] > 0"] * 8000), key))
    r = fxcache("--cache-dir", str(tmp_path), "coverage", key, "--range", "t0=1:1000000")
    assert_sane(r, codes=(0,))
    assert "of 1..1000000 judged" in r.stdout and "narrow the range" in r.stdout, r
