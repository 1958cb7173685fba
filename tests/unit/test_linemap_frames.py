"""The outer frames of a linemap: a stack that begins with the lines already read shares them.

:func:`~fxcache_core.decode.origins.parse_linemap_frames` skips a stack whose text begins
with the lines the shared frames were read from; its answer must be that of reading every
stack, whatever the stacks hold (line ends of every kind, lines that are not frames, frames
that differ only in their line, more frames than it reads).
"""

from __future__ import annotations

import random

from fxcache_core.decode.origins import MAX_OUTER_FRAMES, parse_linemap_frames, stack_frames


def _every_stack_read(linemap):
    """Every stack's frames read and compared: the answer without the skip."""
    common = None
    for _, text in linemap:
        frames = []
        for f in stack_frames(text):
            frames.append((f.function, f.file, f.line))
            if common is not None and len(frames) >= len(common):
                break
            if len(frames) >= MAX_OUTER_FRAMES:
                break
        if not frames:
            continue
        if common is None:
            common = frames
            continue
        n = 0
        while n < min(len(common), len(frames)) and common[n][:2] == frames[n][:2]:
            n += 1
        common = common[:n]
        if not common:
            break
    return tuple(common or ())


def _frame(rng):
    fn = rng.choice(["forward", "f", "g", "layer"])
    file = rng.choice(["m.py", "n.py", "/a b/c.py"])
    line = f'  File "{file}", line {rng.choice([1, 2, 30])}, in {fn}'
    code = rng.choice(["    x = f(x)", None, "  # note", ""])
    return [line] if code is None else [line, code]


def _stack(rng, base):
    lines = [ln for f in base for ln in f]
    if rng.random() < 0.5:
        cut = rng.randrange(len(lines) + 1)
        lines = lines[:cut] + [ln for _ in range(rng.randrange(4)) for ln in _frame(rng)]
    if rng.random() < 0.1:
        lines.insert(rng.randrange(len(lines) + 1), "not a frame")
    end = rng.choice(["\n", "\n", "\r\n", "\r", "\x0b", "\x85", "\u2028"])
    return end.join(lines) + rng.choice([end, "", "\n"])


def test_skipping_stacks_that_begin_alike_answers_as_reading_every_stack():
    rng = random.Random(11)
    for _ in range(2000):
        base = [_frame(rng) for _ in range(rng.randrange(1, 8))]
        linemap = [[i, _stack(rng, base)] for i in range(rng.randrange(1, 12))]
        assert parse_linemap_frames(linemap) == _every_stack_read(linemap), linemap


def test_a_model_whose_ops_share_their_outer_frames():
    outer = '  File "m.py", line 10, in forward\n    y = self.layer(x)\n  File "l.py", line 5, in forward\n'
    stacks = [
        outer + f'  File "l.py", line {n}, in act{n}\n    return x.relu()\n' for n in (20, 21, 22)
    ]
    linemap = [[i, s] for i, s in enumerate(stacks)]
    assert (
        parse_linemap_frames(linemap)
        == (("forward", "m.py", 10), ("forward", "l.py", 5))
        == _every_stack_read(linemap)
    )
    many = [
        [0, "".join(f'  File "d.py", line {i}, in f{i}\n' for i in range(MAX_OUTER_FRAMES + 5))]
    ] * 3
    assert parse_linemap_frames(many) == _every_stack_read(many)
    assert len(parse_linemap_frames(many)) == MAX_OUTER_FRAMES


def test_the_decoder_remembers_a_linemap_by_its_stacks_and_answers_as_parsing_it():
    """The entries of one key hold one linemap: the decoder answers the later ones from
    the first one's stacks. Each answer must be the parse of that entry's own linemap,
    in any order of same, differing and odd linemaps."""
    from fxcache_core.decode.entries import _linemap_frames

    rng = random.Random(12)
    base = [_frame(rng) for _ in range(4)]
    maps = [[[i, _stack(rng, base)] for i in range(rng.randrange(1, 6))] for _ in range(20)]
    long_line = [[0, '  File "m.py", line ' + "9" * 5000 + ", in f\n"]]
    kinds = [*maps, long_line, "not a list", [(1, 2)], [], None]
    for _ in range(400):
        linemap = rng.choice(kinds)
        assert _linemap_frames(linemap) == parse_linemap_frames(linemap), linemap
