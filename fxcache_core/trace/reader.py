"""Reading torch's structured trace (``TORCH_TRACE``), one record at a time.

``TORCH_TRACE=DIR python train.py`` makes torch write, per process, a file
``DIR/dedicated_log_torch_trace_<random>.log`` (``..._rank_<r>_<random>.log``
once ``torch.distributed`` is initialized): ``LazyTraceHandler`` and
``TorchLogsFormatter`` in torch/_logging/_internal.py. It is the input of
tlparse. Each record is one line::

    V1201 11:57:15.562000 5039 torch/_functorch/_aot_autograd/autograd_cache.py:1130] {"artifact": {...}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "<md5>"}

a glog prefix (level, ``MMDD HH:MM:SS.micros`` local time, pid, the logging
file:line), then a JSON object whose first key is the event name
(``dynamo_start``, ``artifact``, ``create_symbol``...) mapped to its metadata,
then the context torch adds (``rank``, ``frame_id``, ``frame_compile_id``,
``attempt``, ``compiled_autograd_id``) and, when a payload follows,
``has_payload``: the md5 of the payload. The payload follows as lines that
each start with a tab (the payload split at ``\\n``). ``{"str": [text, n]}``
records intern a string (file names in stacks) as ``n``
(torch/_logging/structured.py).

This module streams a file line by line in binary (the payload never splits on
anything but ``\\n``), keeps only the payloads its caller asks for, verifies each
kept payload against its md5, and never holds the whole file. A run killed
while writing leaves a last record cut short: it is dropped and the file is
marked truncated, with the reason. Anything that is not such a trace raises
:class:`TraceError`.

Times: the glog prefix is local time without a year. The first
``chromium_event`` payload carries an epoch timestamp (``ts``, microseconds);
the file's UTC offset and year are taken from it. Without one, this machine's
local time zone and the file's modification year are assumed
(:attr:`TraceFileInfo.clock`). Nothing here imports torch.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fxcache_core.errors import FxcacheError
from fxcache_core.fsutil import NotRegularFile, open_regular

TRACE_PREFIX = "dedicated_log_torch_trace_"
"""File name prefix torch's ``LazyTraceHandler`` gives every trace file (``LOG_PREFIX``)."""

_RANK_NAME_RE = re.compile(r"dedicated_log_torch_trace_rank_([0-9]{1,9})_")
_HEAD_RE = re.compile(rb"[VIWEC]([0-9][0-9])([0-9][0-9]) ([0-9][0-9]):([0-9][0-9]):([0-9][0-9])\.([0-9]{6}) ([0-9]+) (.+?):([0-9]+)\] \{")
_CONTEXT_KEYS = frozenset({"rank", "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id",
                           "has_payload", "stack", "subgraph_name", "severity", "timestamp",
                           "pathname", "thread"})
MAX_HEAD_BYTES = 8 * 1024 * 1024
"""A record line longer than this (bytes) is not read as JSON (torch keeps metadata
small; a longer line is damage, not a trace record)."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""A line longer than this (bytes) is damage: skipped, never held whole in memory
(a payload's lines are torch's lines, a compile's whole FX key on one line at most)."""
MAX_PAYLOAD_BYTES = 32 * 1024 * 1024
"""A kept payload larger than this (bytes) is not kept: its record is skipped as damage
(held as lines, joined and decoded, a kept payload costs about three times its size)."""
MAX_PEEK_BYTES = 64 * 1024
"""A skipped record's payload is looked into for ``peek``'s needles up to this many bytes
(a ``chromium_event`` payload is a few hundred)."""
MAX_JSON_VALUES = 200_000
"""Most values (strings, numbers, lists...) one JSON text read from a trace may hold:
each costs 50 to 60 bytes once parsed, so ``[[],[],...]`` would cost twenty times
its size. Torch's records hold a few thousand."""


class TraceError(FxcacheError):
    """The path is not a TORCH_TRACE file or directory of them, or cannot be read."""


@dataclass(frozen=True, slots=True)
class CompileRef:
    """Which compile a record belongs to (torch's ``CompileId`` and attempt).

    Attributes:
        frame_id, frame_compile_id: Dynamo's frame and its n-th compile; None
            for records outside a compile.
        attempt: the restart of analysis within the compile (0 first).
        compiled_autograd_id: set for compiled-autograd graphs.
    """

    frame_id: int | None
    frame_compile_id: int | None
    attempt: int = 0
    compiled_autograd_id: int | None = None

    @property
    def compile_id(self) -> str:
        """torch's ``str(CompileId)``: ``0/1``, or ``!2/0/1`` for compiled autograd
        (torch/_guards.py); ``-`` outside any compile."""
        frame = (f"{self.frame_id}/{self.frame_compile_id}"
                 if self.frame_id is not None and self.frame_compile_id is not None else None)
        if self.compiled_autograd_id is not None:
            return f"!{self.compiled_autograd_id}" + (f"/{frame}" if frame else "")
        return frame or "-"

    def __str__(self) -> str:
        """tlparse's form: the compile id, ``_<attempt>`` after a restart."""
        return self.compile_id + (f"_{self.attempt}" if self.attempt else "")


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One record of a trace file.

    Attributes:
        event: the event name (``artifact``, ``create_symbol``...).
        meta: the event's metadata (the JSON object under ``event``; a
            non-object is wrapped as ``{"value": ...}``).
        compile: the compile it was logged in, or None.
        rank: ``torch.distributed`` rank when it was initialized, else None.
        time: when it was logged, seconds since the epoch (see the module docstring).
        payload: the payload text when the reader was asked to keep it, else None.
        has_payload: whether the record has a payload (kept or not).
        line: 1-based line number of the record in its file.
    """

    event: str
    meta: dict[str, Any]
    compile: CompileRef | None
    rank: int | None
    time: float
    payload: str | None
    has_payload: bool
    line: int

    @property
    def name(self) -> str | None:
        """The artifact's (or graph dump's) ``name``, if the metadata has one."""
        n = self.meta.get("name")
        return n if isinstance(n, str) else None


@dataclass(frozen=True, slots=True)
class TraceFileInfo:
    """What reading one trace file found, besides its records.

    Attributes:
        path: the file.
        size: bytes.
        records: records read (interned strings and dropped records not counted).
        rank: the rank its records name (or its file name says), else None.
        truncated: why the file ends mid-record (the run was killed while
            writing), else None. The cut record is not yielded.
        skipped: lines that were neither a record nor a payload line (damage),
            and records whose payload does not match its md5.
        clock: how times were read: ``trace`` (the file's own epoch
            timestamps set the UTC offset), or ``local`` (no such timestamp:
            this machine's time zone assumed).
    """

    path: Path
    size: int
    records: int
    rank: int | None
    truncated: str | None
    skipped: int
    clock: str


def trace_files(path: Path) -> tuple[Path, ...]:
    """The trace files at ``path``: the file itself, or a dir's
    ``dedicated_log_torch_trace_*.log`` files, sorted by name.

    Raises:
        TraceError: ``path`` does not exist, cannot be read, is a dir without
            trace files, or a file that does not start like a trace.
    """
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror or e}") from None
    if not exists:
        raise TraceError(f"{path} does not exist")
    if is_dir:
        try:
            names = sorted(n for n in os.listdir(path) if n.startswith(TRACE_PREFIX) and n.endswith(".log"))
        except OSError as e:
            raise TraceError(f"cannot list {path}: {e.strerror or e}") from None
        files = tuple(path / n for n in names if (path / n).is_file())
        if not files:
            raise TraceError(f"{path} holds no TORCH_TRACE files ({TRACE_PREFIX}*.log): not a trace dir")
    else:
        files = (path,)
    for f in files:
        _sniff(f)
    return files


def open_trace_file(path: Path) -> Any:
    """``path`` opened for reading (binary), only if it is a regular file: opened
    ``O_NONBLOCK`` (a FIFO would block the open until a writer came) and checked
    with ``fstat`` on the descriptor itself, so a file swapped for a FIFO or a
    device after it was listed is refused, never waited on.

    Raises:
        TraceError: it cannot be opened, or is not a regular file.
    """
    try:
        fd = open_regular(path)
    except NotRegularFile:
        raise TraceError(f"{path} is not a regular file (a FIFO, device or socket): not a trace") from None
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _sniff(path: Path) -> None:
    """Raise TraceError unless ``path`` is empty or starts with a trace record."""
    fh = open_trace_file(path)
    try:
        first = fh.readline(MAX_HEAD_BYTES)
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror or e}") from None
    finally:
        fh.close()
    if not first:
        return  # a run killed before it logged anything: an empty trace
    if _HEAD_RE.match(first) is None:
        raise TraceError(f"{path} is not a TORCH_TRACE file (its first line is not a "
                         "glog-prefixed JSON record)")


class TraceFileReader:
    """Stream the records of one trace file (see the module docstring).

    Iterate once; afterwards :attr:`info` says what was found. ``keep_payload(event,
    meta)`` decides which payloads are kept (and md5-verified); the others are
    skipped without being decoded. Records of the events in ``skip`` are counted
    but neither parsed nor yielded (``chromium_event`` is most of a trace), unless
    ``peek`` names needles for their event: such a record whose payload (up to
    :data:`MAX_PEEK_BYTES`) holds one is parsed, its payload kept and verified.
    ``on_bytes(n)`` is called with the bytes read since the last call, about
    every 4 MB (a progress hook).

    Memory: one record and its kept payload at a time, plus the interned strings.
    """

    def __init__(self, path: Path, keep_payload: Callable[[str, dict[str, Any]], bool] = lambda e, m: False,
                 on_bytes: Callable[[int], None] | None = None, skip: frozenset[str] = frozenset(),
                 peek: Mapping[str, tuple[bytes, ...]] | None = None) -> None:
        self.path = path
        self._skip = tuple(sorted(skip))
        self._peek = {k.encode(): v for k, v in (peek or {}).items()}
        self._keep = keep_payload
        self._on_bytes = on_bytes
        self.strings: dict[int, str] = {}
        """Interned strings (``{"str": [text, n]}`` records): n -> text."""
        self.info: TraceFileInfo | None = None
        self._offset: float | None = None  # epoch = the glog time read as UTC + offset
        self._year = time.gmtime().tm_year

    def resolve(self, value: Any) -> Any:
        """An interned string id (an int in a stack's ``filename``) -> its text."""
        return self.strings.get(value, value) if isinstance(value, int) else value

    def __iter__(self) -> Iterator[TraceRecord]:
        fh = open_trace_file(self.path)
        try:
            yield from self._read(fh)
        finally:
            fh.close()

    def _read(self, fh: Any) -> Iterator[TraceRecord]:
        st = os.fstat(fh.fileno())
        local = time.localtime(st.st_mtime)
        self._year = local.tm_year  # until a chromium event says otherwise
        clock = "trace"
        m = _RANK_NAME_RE.search(self.path.name)
        self._rank: int | None = int(m.group(1)) if m else None
        self._records = self._skipped = 0
        pending: dict[str, Any] | None = None  # the record being read; its payload lines follow
        early: list[dict[str, Any]] = []  # complete records read before the clock was known
        lineno = pos = reported = 0
        last = b"\n"
        on_bytes = self._on_bytes
        skip = {e.encode() for e in self._skip}
        for line in _lines(fh):
            lineno += 1
            if line.__class__ is int:  # an overlong line, consumed: damage
                pos += line
                last = b"\n"
                self._skipped += 1
                if pending is not None:
                    pending["damaged"] = True
                continue
            pos += len(line)
            last = line
            if line[0] == 9:  # a tab: a payload line
                if pending is None:
                    self._skipped += 1
                elif pending["payload"] is not None:
                    pending["payload"].append(line[1:-1] if line[-1] == 10 else line[1:])
                    pending["size"] += len(line)
                    if pending["size"] > MAX_PAYLOAD_BYTES:
                        pending["payload"], pending["damaged"] = None, True
                    elif "skip" in pending and pending["size"] > MAX_PEEK_BYTES:
                        pending["payload"] = None  # too long to peek at: skipped
                continue
            if on_bytes is not None and pos - reported >= 4 << 20:
                on_bytes(pos - reported)
                reported = pos
            if pending is not None:  # a new line that is not payload: the record is complete
                if self._offset is None:
                    self._calibrate(pending, early)
                    early.append(pending)
                    if self._offset is None and len(early) > 256:
                        self._offset, clock = -float(local.tm_gmtoff), "local"
                if self._offset is not None:
                    for p in early or (pending,):
                        if (rec := self._finish(p)) is not None:
                            yield rec
                    early.clear()
                pending = None
            if line.isspace():
                continue
            i = line.find(b'] {"', 0, 512)
            if (skip and self._offset is not None and i != -1
                    and (ev := line[i + 4:line.find(b'"', i + 4, i + 128)]) in skip):
                # A record nobody reads: counted, checked for a cut at the end, not parsed
                # (unless its payload holds a needle of ``peek``).
                j = line.rfind(b'"has_payload": "')
                md5 = line[j + 16:j + 48].decode("ascii", "replace") if j != -1 else None
                peek = self._peek.get(ev)
                pending = {"skip": True, "event": "skipped", "meta": {}, "md5": md5, "line": lineno,
                           "start": pos - len(line), "payload": [] if peek else None, "keep": False, "size": 0,
                           "peek": (line, peek) if peek else None}
                continue
            head = self._parse_head(line, lineno)
            if head is None:
                self._skipped += 1
                continue
            if head is _INTERNED:
                continue
            pending = head
            pending["start"] = pos - len(line)
        complete = last.endswith(b"\n")
        unreported = pos - reported
        if self._on_bytes is not None and unreported:
            self._on_bytes(unreported)
        truncated = None
        if pending is not None:
            cut = self._cut_short(fh, pending, complete)
            if cut is not None:
                truncated = (f"the last record (line {pending['line']}, {_label(pending)}) is cut "
                             f"short ({cut}): the run was killed while writing it")
            else:
                if self._offset is None:
                    self._calibrate(pending, early)
                early.append(pending)
        elif not complete and lineno:
            truncated = f"the file ends without a newline at line {lineno}"
        if self._offset is None:
            self._offset, clock = -float(local.tm_gmtoff), "local"
        for p in early:
            if (rec := self._finish(p)) is not None:
                yield rec
        self.info = TraceFileInfo(self.path, st.st_size, self._records, self._rank, truncated,
                                  self._skipped, clock)

    def _finish(self, rec: dict[str, Any]) -> TraceRecord | None:
        """A complete record as a TraceRecord (None if its kept payload fails its md5,
        or it is of an event the reader was told to skip)."""
        if "skip" in rec:
            rec = self._peeked(rec)
            if "skip" in rec:
                self._records += 1
                return None
        if rec.get("damaged"):
            self._skipped += 1
            return None
        text = None
        if rec["keep"]:
            raw = b"\n".join(rec["payload"])
            rec["payload"] = None  # one copy of a large payload at a time, not three
            if rec["md5"] is not None and hashlib.md5(raw, usedforsecurity=False).hexdigest() != rec["md5"]:
                self._skipped += 1
                return None
            text = raw.decode("utf-8", errors="replace")
            del raw
        self._records += 1
        if rec["rank"] is not None and self._rank is None:
            self._rank = rec["rank"]
        return TraceRecord(rec["event"], rec["meta"], rec["compile"], rec["rank"],
                           rec["naive"] + (self._offset or 0.0), text, rec["md5"] is not None, rec["line"])

    def _peeked(self, rec: dict[str, Any]) -> dict[str, Any]:
        """A skipped record whose payload holds a needle of ``peek``: parsed, its payload
        to be kept; else ``rec`` as it is."""
        if rec.get("peek") is None or not rec["payload"] or rec.get("damaged"):
            return rec
        line, needles = rec["peek"]
        if not any(n in p for p in rec["payload"] for n in needles):
            return rec
        head = self._parse_head(line, rec["line"])
        if head is None or head is _INTERNED or head["md5"] is None:
            return rec
        head.update(payload=rec["payload"], keep=True, start=rec["start"], size=rec["size"])
        return head

    def _parse_head(self, line: bytes, lineno: int) -> dict[str, Any] | None:
        """A record line -> the record's fields; None if the line is not a record;
        :data:`_INTERNED` for a ``str`` record (its string is kept in :attr:`strings`)."""
        if len(line) > MAX_HEAD_BYTES:
            return None
        m = _HEAD_RE.match(line)
        if m is None:
            return None
        obj = bounded_json(line[m.end() - 1:])
        if not isinstance(obj, dict) or not obj:
            return None
        event = next(iter(obj))
        if event == "str":
            v = obj["str"]
            if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and _int_or_none(v[1]) is not None:
                self.strings[v[1]] = v[0]
            return _INTERNED
        meta = obj[event]
        if not isinstance(meta, dict):
            meta = {"value": meta}
        mo, dd, hh, mi, ss, us = (int(g) for g in m.groups()[:6])
        try:
            naive = calendar.timegm((self._year, mo, dd, hh, mi, ss, 0, 0, 0)) + us / 1e6
        except (ValueError, OverflowError):
            return None
        fid, fcid = _int_or_none(obj.get("frame_id")), _int_or_none(obj.get("frame_compile_id"))
        caid = _int_or_none(obj.get("compiled_autograd_id"))
        comp = None
        if fid is not None or caid is not None:
            comp = CompileRef(fid, fcid, _int_or_none(obj.get("attempt")) or 0, caid)
        md5 = obj.get("has_payload")
        md5 = md5 if isinstance(md5, str) else None
        keep = md5 is not None and self._keep(event, meta)
        calibrating = md5 is not None and self._offset is None and event == "chromium_event"
        return {"event": event, "meta": meta, "compile": comp, "rank": _int_or_none(obj.get("rank")),
                "naive": naive, "md5": md5, "keep": keep, "line": lineno, "size": 0,
                "payload": [] if keep or calibrating else None}

    def _calibrate(self, rec: dict[str, Any], early: list[dict[str, Any]]) -> None:
        """Learn the file's UTC offset (and year) from a chromium event's epoch ``ts``;
        re-date ``rec`` and ``early`` if the year was not the one assumed."""
        if rec["event"] != "chromium_event" or not rec["payload"]:
            return
        obj = bounded_json(b"\n".join(rec["payload"]))
        ts = obj.get("ts") if isinstance(obj, dict) else None
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or not 0 < ts < 1e17:
            return
        epoch = ts / 1e6
        assumed = calendar.timegm((self._year, 1, 1, 0, 0, 0, 0, 0, 0))
        into_year = rec["naive"] - assumed  # seconds since Jan 1 of the glog date
        best = None
        for y in range(time.gmtime(epoch).tm_year - 1, time.gmtime(epoch).tm_year + 2):
            shift = calendar.timegm((y, 1, 1, 0, 0, 0, 0, 0, 0)) - assumed
            off = round((epoch - (assumed + shift + into_year)) / 900.0) * 900.0
            err = abs(epoch - (assumed + shift + into_year) - off)
            if abs(off) <= 15 * 3600 and (best is None or err < best[0]):
                best = (err, y, shift, off)
        if best is None or best[0] > 60:
            return
        _, y, shift, off = best
        for r in (*early, rec):
            r["naive"] += shift
        self._year, self._offset = y, off

    def _cut_short(self, fh: Any, rec: dict[str, Any], complete: bool) -> str | None:
        """Why the file's last record is incomplete, or None if it is whole."""
        if not complete:
            return "its last line has no newline"
        if rec["md5"] is None or rec.get("damaged"):
            return None
        h = hashlib.md5(usedforsecurity=False)
        if rec["payload"] is not None:
            h.update(b"\n".join(rec["payload"]))
        else:  # skipped while streaming: read this record's payload again, a line at a time
            fh.seek(rec["start"])
            fh.readline(MAX_LINE_BYTES)
            first = True
            for ln in _lines(fh):
                if ln.__class__ is int or ln[:1] != b"\t":
                    break
                h.update((b"" if first else b"\n") + (ln[1:-1] if ln[-1] == 10 else ln[1:]))
                first = False
        return None if h.hexdigest() == rec["md5"] else "its payload does not match its md5"


# A JSON string, or (group 1) a comma or an opening bracket: what starts a value.
_JSON_TOKEN_RE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|([,\[{])')
_JSON_TOKEN_RE_B = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|([,\[{])')


def bounded_json(text: str | bytes, max_values: int = MAX_JSON_VALUES) -> Any:
    """``json.loads(text)``, or None when ``text`` is not JSON, nests too deep, holds
    an integer past Python's digit limit, or holds more than ``max_values`` values
    (counted before parsing, from the commas and brackets outside strings; see
    :data:`MAX_JSON_VALUES`). Never raises."""
    if isinstance(text, bytes):
        comma, lb, lc, tokens = b",", b"[", b"{", _JSON_TOKEN_RE_B
    else:
        comma, lb, lc, tokens = ",", "[", "{", _JSON_TOKEN_RE
    if text.count(comma) + text.count(lb) + text.count(lc) > max_values:
        n = 0  # counted again outside strings (commas inside strings cost nothing), up to the bound
        for m in tokens.finditer(text):
            if m.lastindex:
                n += 1
                if n > max_values:
                    return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError, MemoryError):
        return None


def _lines(fh: Any) -> Iterator[Any]:
    """The lines of ``fh`` (bytes, with their newline); a line longer than
    :data:`MAX_LINE_BYTES` is read through in chunks and yielded as its length (an int)."""
    readline = fh.readline
    while True:
        line = readline(MAX_LINE_BYTES)
        if not line:
            return
        if len(line) == MAX_LINE_BYTES and line[-1] != 10:
            n = len(line)
            while True:
                more = readline(MAX_LINE_BYTES)
                n += len(more)
                if not more or more[-1] == 10:
                    break
            yield n
            continue
        yield line


_INTERNED: dict[str, Any] = {}
"""What :meth:`TraceFileReader._parse_head` returns for a ``str`` record."""


def _label(rec: dict[str, Any]) -> str:
    name = rec["meta"].get("name") if isinstance(rec["meta"], dict) else None
    return f"{rec['event']} {name}" if isinstance(name, str) else rec["event"]


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
