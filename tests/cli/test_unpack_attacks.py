"""``fxcache unpack`` against hostile gzip framing, and two unpacks of one pack at once.

Synthetic on purpose (fast tier, no torch): every archive is the pack fxcache wrote from
the synthetic cache of test_pack_hostile.py (its ``packed`` fixture), with its gzip
member header rewritten as an attacker would (a 40 MB file name or comment, the longest
extra field, a second member whose header carries the name, thousands of empty members).
Each costs under 2 s of CPU and 300 MB (tests.cli_run.run_measured), gives one line and
exit 2, and writes nothing; a header of the ordinary size (``gzip`` writes the file's
name) still unpacks.
"""

from __future__ import annotations

import gzip
import json
import stat
import struct
import sys
import zlib

import pytest

from fxcache_core.pack import install
from fxcache_core.pack.contents import check_pack, plan_unpack
from tests.cli import test_pack_hostile
from tests.cli.test_pack_attacks import _tree
from tests.cli_run import run_measured
from tests.helpers import run_fxcache

packed = test_pack_hostile.packed  # the fixture: that cache and a pack of all of it
CPU_LIMIT_S = 2.0
RSS_LIMIT_KB = 300 * 1024
BIG = 40 << 20
FHCRC, FEXTRA, FNAME, FCOMMENT = 2, 4, 8, 16


def _with_header(pack: bytes, flags: int, fields: bytes, hcrc: bool = False) -> bytes:
    """``pack`` (one gzip member, no optional field) with ``flags`` set and ``fields``
    (the optional fields, in RFC 1952 order) after the fixed 10 bytes."""
    assert pack[:4] == b"\x1f\x8b\x08\x00"
    head = pack[:3] + bytes([flags | (FHCRC if hcrc else 0)]) + pack[4:10] + fields
    return head + (struct.pack("<H", zlib.crc32(head) & 0xFFFF) if hcrc else b"") + pack[10:]


def _empty_member(flags: int = 0, fields: bytes = b"") -> bytes:
    return _with_header(gzip.compress(b"", mtime=0), flags, fields)


HOSTILE = {
    "a 40 MB file name": (lambda p: _with_header(p, FNAME, b"n" * BIG + b"\0"), "file name is over"),
    "a 40 MB comment": (lambda p: _with_header(p, FCOMMENT, b"c" * BIG + b"\0"), "comment is over"),
    "a file name with no end": (lambda p: _with_header(p, FNAME, b"n" * BIG), "file name is over"),
    "the longest extra field": (lambda p: _with_header(p, FEXTRA, b"\xff\xff" + b"x" * 0xFFFF), "extra field"),
    "a second member named by 40 MB": (lambda p: p + _empty_member(FNAME, b"n" * BIG + b"\0"), "file name is over"),
    "a million empty members": (lambda p: p + _empty_member() * 1_000_000, "gzip members"),
    "reserved flag bits": (lambda p: _with_header(p, 0x20, b""), "reserved flag bits"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_gzip_header_is_refused_in_bounded_cpu_and_memory(packed, tmp_path, name):
    make, why = HOSTILE[name]
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(make(packed[1].read_bytes()))
    before = _tree(tmp_path)
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--cache-dir", str(tmp_path / "dst"), "unpack", str(bad)],
                     env={"FXCACHE_JOBS": "1"})
    assert r.returncode == 2, r
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr and why in r.stderr, r
    assert r.cpu < CPU_LIMIT_S and r.maxrss_kb < RSS_LIMIT_KB, r
    assert _tree(tmp_path) == before


def test_a_header_of_the_usual_size_unpacks(packed, tmp_path):
    """What ``gzip`` and other tools write: a name, a comment, an extra field, a header
    CRC, zero padding and a second (empty) member after it."""
    fields = b"\x04\x00abcd" + b"p.tar\0" + b"made elsewhere\0"
    good = tmp_path / "good.tar.gz"
    good.write_bytes(_with_header(packed[1].read_bytes(), FEXTRA | FNAME | FCOMMENT, fields, hcrc=True)
                     + b"\0" * 1000 + _empty_member(FNAME, b"x\0"))
    r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", "--json", str(good))
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["added"]) == 5


def test_a_damaged_member_trailer_is_refused(packed, tmp_path):
    raw = bytearray(packed[1].read_bytes())
    raw[-8] ^= 1  # the CRC-32
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(bytes(raw))
    r = run_fxcache("--cache-dir", str(tmp_path / "dst"), "unpack", str(bad))
    assert r.returncode == 2 and "CRC check failed" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "dst").exists()


def test_two_unpacks_at_once_count_the_others_files_identical(packed, tmp_path):
    """Both plan to add every member; the other finishes first. Its files have the
    pack's bytes: skipped and counted identical, never conflicts (exit 0)."""
    dst = tmp_path / "dst"
    plan = plan_unpack(dst, check_pack(packed[1]))
    assert plan.count("add") == len(plan.manifest.members)
    assert run_fxcache("--cache-dir", str(dst), "unpack", str(packed[1])).returncode == 0
    before = _tree(tmp_path)
    res = install.execute_unpack(plan)
    assert (res.added, res.conflicts, len(res.identical)) == ((), {}, len(plan.manifest.members))
    after = _tree(tmp_path)  # no temp file left, no file rewritten (a dir's mtime moves: a temp came and went)
    assert after.keys() == before.keys()
    assert {p: v for p, v in after.items() if not stat.S_ISDIR(v[0])} == {
        p: v for p, v in before.items() if not stat.S_ISDIR(v[0])}


def test_a_different_file_written_meanwhile_is_kept_and_reported(packed, tmp_path):
    dst = tmp_path / "dst"
    plan = plan_unpack(dst, check_pack(packed[1]))
    target = dst / plan.manifest.members[-1].path
    target.parent.mkdir(parents=True)
    target.write_bytes(b"built here")
    res = install.execute_unpack(plan)
    assert res.conflicts == {plan.manifest.members[-1].path: "a file that appeared while unpacking"}
    assert target.read_bytes() == b"built here" and len(res.added) == len(plan.manifest.members) - 1
