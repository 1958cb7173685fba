"""The decode workers: results come back per item, whichever item a worker dies on.

In-process tasks registered here (a worker forked after they are knows them); the
death is a worker killing itself, standing for one the kernel ends over its CPU
budget (tests/cli/test_cpu_bombs.py runs real bombs through the commands).
"""

from __future__ import annotations

import os
import signal

from fxcache_core.decode import workers


@workers.task("test-echo-or-die")
def _echo_or_die(arg):
    if arg == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return [arg, os.getpid()]


def test_a_worker_dying_mid_chunk_loses_only_the_item_it_died_on():
    args = ["a", "b", "die", "c", "d", "die", "e"]
    got: dict[int, object] = {}
    workers.run_all("test-echo-or-die", args, [1] * len(args), 1, got.__setitem__)
    assert sorted(got) == list(range(len(args)))
    for i, a in enumerate(args):
        if a == "die":
            assert isinstance(got[i], workers.Unfinished)
            assert got[i].reason.code == "decoder-died"
        else:
            assert got[i][0] == a
    # the items after a death went to a fresh worker
    assert got[0][1] == got[1][1] != got[3][1] == got[4][1] != got[6][1]


def test_a_worker_dying_first_in_a_request_is_not_answered_by_its_last_request():
    first: dict[int, object] = {}
    workers.run_all("test-echo-or-die", ["x" * 5000, "y"], [1, 1], 1, first.__setitem__)
    got: dict[int, object] = {}
    workers.run_all("test-echo-or-die", ["die", "w"], [1, 1], 1, got.__setitem__)
    assert first[0][0] == "x" * 5000 and first[1][0] == "y"
    assert first[0][1] == first[1][1]
    assert isinstance(got[0], workers.Unfinished) and got[1][0] == "w"


def test_results_longer_than_one_read_and_many_in_one_read_each_reach_their_item():
    """The parent reads a result pipe a buffer at once: a result spans several reads,
    several results share one, and a death after them still names the item it was on."""
    args = ["x" * 300_000, *(f"s{i}" for i in range(50)), "y" * 70_000, "die", "z" * 130_000]
    got: dict[int, object] = {}
    workers.run_all("test-echo-or-die", args, [1] * len(args), 1, got.__setitem__)
    assert sorted(got) == list(range(len(args)))
    for i, a in enumerate(args):
        if a == "die":
            assert isinstance(got[i], workers.Unfinished) and got[i].reason.code == "decoder-died"
        else:
            assert got[i][0] == a


@workers.task("test-with-text")
def _with_text(arg):
    if arg == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return workers.WithText([arg], f'{arg}"\0\\é' * 20_000) if arg.startswith("t") else [arg]


def test_a_text_sent_beside_a_result_reaches_its_item_as_it_was():
    """A WithText's text follows its JSON as it is: quotes, backslashes, NULs and
    non-ASCII come back unchanged, over several reads, among plain results."""
    args = ["t1", "p1", "t2", "die", "t3", "p2"]
    got: dict[int, object] = {}
    workers.run_all("test-with-text", args, [1] * len(args), 1, got.__setitem__)
    assert sorted(got) == list(range(len(args)))
    for i, a in enumerate(args):
        if a == "die":
            assert isinstance(got[i], workers.Unfinished) and got[i].reason.code == "decoder-died"
        elif a.startswith("t"):
            assert got[i] == workers.WithText([a], f'{a}"\0\\é' * 20_000)
        else:
            assert got[i] == [a]


def test_a_result_message_reads_back_as_written_and_anything_else_is_refused():
    import pytest

    for out in (
        [True, ["abc", None, [1, "\0x"], [2**62, -1]]],
        [False, "a bug: \u00e9\0"],
        [True, workers.WithText(["sha", None, None, None], '{"k":"\0\u00e9"}')],
        [True, workers.WithText([], "")],
    ):
        got = workers._parse_result(bytearray(workers._result(list(out))))
        assert got == tuple(out) and type(got[1]) is type(out[1])
    for junk in (
        b"",
        b" [true,1]",
        b"[true,1] ",
        b"[true,1]x",
        b"[true",
        b"7",
        b"[1,2,3]",
        b"\xff",
        b"[true,1]\0\xff",
        b"nope",
    ):
        with pytest.raises((ValueError, TypeError)):
            workers._parse_result(bytearray(junk))
