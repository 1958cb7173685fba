"""Read a pack's gzip stream with every header field bounded (RFC 1952).

Python's :mod:`gzip` reads a member's file name and comment one byte at a time,
with no bound (``_read_gzip_header`` in CPython's Lib/gzip.py), and the zero
padding between members too: a pack whose header carries a 40 MB name costs
seconds of CPU before any size check sees it. :class:`GzipReader` parses each
member header itself: ID1 ID2 CM FLG MTIME XFL OS, then FEXTRA (its length
field), FNAME and FCOMMENT (zero-terminated), FHCRC, refusing any of them over
:data:`MAX_HEADER_FIELD` bytes; inflates with :mod:`zlib` (raw deflate,
``wbits=-15``); checks each member's CRC-32 and ISIZE trailer; skips zero
padding between members in bulk, as :mod:`gzip` skips it; and refuses a stream
of more than :data:`MAX_MEMBERS` members (fxcache writes one). Errors are those
:mod:`gzip` raises (:class:`gzip.BadGzipFile`, :class:`EOFError`) or, for a
bound, :class:`~fxcache_core.pack.manifest.PackError`.
"""

from __future__ import annotations

import io
import zlib
from gzip import BadGzipFile
from typing import IO, Any

from fxcache_core.pack.manifest import PackError

MAX_HEADER_FIELD = 4096
"""Bytes allowed in one header field (FEXTRA's data, FNAME, FCOMMENT): fxcache writes
none; ``gzip`` writes the file's name, a few dozen bytes."""
MAX_MEMBERS = 16
"""gzip members allowed in one stream: fxcache writes one; concatenated streams
(``cat a.gz b.gz``) are read, a stream of thousands of empty members is refused."""
_CHUNK = 1 << 16
_FTEXT, _FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 1, 2, 4, 8, 16
_CUT = "Compressed file ended before the end-of-stream marker was reached"


class GzipReader(io.RawIOBase):
    """The decompressed bytes of the gzip stream ``raw`` (read from its current
    position), every member header bounded (module docstring).

    Raises (from ``readinto``):
        PackError: a header field over :data:`MAX_HEADER_FIELD` bytes, reserved
            flag bits set, more than :data:`MAX_MEMBERS` members.
        BadGzipFile: not gzip (bad magic, method), a CRC or length mismatch.
        EOFError: the stream ends inside a member.
        zlib.error: the deflate data is damaged.
    """

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.buf = b""
        self.d: Any = None  # the member being inflated (a zlib decompressobj), None between members
        self.crc = self.size = self.members = 0
        self.done = False

    def readable(self) -> bool:
        return True

    def _fill(self) -> bool:
        data = self.raw.read(_CHUNK)
        self.buf += data
        return bool(data)

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._fill():
                raise EOFError(_CUT)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _zstring(self, what: str) -> None:
        """Skip a zero-terminated field of at most :data:`MAX_HEADER_FIELD` bytes."""
        while (end := self.buf.find(b"\0", 0, MAX_HEADER_FIELD + 1)) < 0:
            if len(self.buf) > MAX_HEADER_FIELD:
                raise PackError(f"the gzip header's {what} is over {MAX_HEADER_FIELD} bytes: fxcache writes "
                                "none (refused, nothing written)")
            if not self._fill():
                raise EOFError(_CUT)
        self.buf = self.buf[end + 1:]

    def _start_member(self) -> bool:
        """Past any zero padding, read the next member's header (False: the stream ended)."""
        while True:
            self.buf = self.buf.lstrip(b"\0")
            if self.buf:
                break
            if not self._fill():
                self.done = True
                return False
        if self.members >= MAX_MEMBERS:
            raise PackError(f"the archive is more than {MAX_MEMBERS} gzip members: fxcache writes one "
                            "(refused, nothing written)")
        head = self._take(10)
        if head[:2] != b"\x1f\x8b":
            raise BadGzipFile(f"Not a gzipped file ({head[:2]!r})")
        if head[2] != 8:
            raise BadGzipFile("Unknown compression method")
        flags = head[3]
        if flags & ~(_FTEXT | _FHCRC | _FEXTRA | _FNAME | _FCOMMENT):
            raise PackError("the gzip header sets reserved flag bits (refused, nothing written)")
        if flags & _FEXTRA:
            n = int.from_bytes(self._take(2), "little")
            if n > MAX_HEADER_FIELD:
                raise PackError(f"the gzip header's extra field is {n} bytes, over {MAX_HEADER_FIELD}: "
                                "fxcache writes none (refused, nothing written)")
            self._take(n)
        if flags & _FNAME:
            self._zstring("file name")
        if flags & _FCOMMENT:
            self._zstring("comment")
        if flags & _FHCRC:
            self._take(2)
        self.members += 1
        self.d, self.crc, self.size = zlib.decompressobj(-zlib.MAX_WBITS), 0, 0
        return True

    def readinto(self, b: Any) -> int:
        want = len(b)
        while want:
            if self.d is None and (self.done or not self._start_member()):
                return 0
            if self.d.unconsumed_tail:
                data = self.d.unconsumed_tail
            else:
                if not self.buf and not self._fill():
                    raise EOFError(_CUT)
                data, self.buf = self.buf, b""
            out = self.d.decompress(data, want)
            self.crc = zlib.crc32(out, self.crc)
            self.size += len(out)
            if self.d.eof:
                self.buf = self.d.unused_data + self.buf
                self.d = None
                crc, size = self._take(4), self._take(4)
                if int.from_bytes(crc, "little") != self.crc:
                    raise BadGzipFile("CRC check failed")
                if int.from_bytes(size, "little") != self.size & 0xFFFFFFFF:
                    raise BadGzipFile("Incorrect length of data produced")
            if out:
                b[:len(out)] = out
                return len(out)
        return 0


__all__ = ["MAX_HEADER_FIELD", "MAX_MEMBERS", "GzipReader"]
