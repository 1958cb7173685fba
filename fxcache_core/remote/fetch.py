"""Reading the values of Inductor's remote cache, bounded: what a value costs fxcache
is known before it is read, and what it holds is parsed within Python's own limits.

Torch's values (torch/_inductor/remote_cache.py ``RedisRemoteCache``) are JSON
``{"data": base64(pickle), "time_taken_ms": int}``. :func:`fetch_values` asks
each value's length before reading it, and reads none over
:data:`MAX_VALUE_BYTES`; :func:`unwrap` takes the pickle out of one. Nothing here
writes, deletes or runs anything; :mod:`fxcache_core.remote.redis_store` writes
the snapshot. Needs ``redis`` (redis-py) for :func:`fetch_values` only.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from fxcache_core.reasons import Reason

MAX_VALUE_BYTES = 32 << 20
"""A remote value longer than this (bytes, ``STRLEN``) is not read: it is reported
``too-large`` (not checked, never taken for corrupt). Reading one costs about three
times its length (the value, its JSON string, the pickle)."""
BATCH_BYTES = 64 << 20
"""Bytes of values fetched in one pipelined round trip, at most (one value may be alone in one)."""


def unwrap(value: bytes) -> tuple[bytes, str | None]:
    """The pickle inside a remote value, and None; or the value itself and why it
    is not a torch value (not JSON, no ``data``, not base64).

    JSON that Python's parser refuses for its own limits (arrays nested past the
    recursion limit, an integer of more than ``sys.get_int_max_str_digits()``
    digits) is not JSON either: torch's ``json.loads`` of it raises too. Each
    costs at most a linear pass (the parser stops at the limit it hits)."""
    try:
        obj = json.loads(value)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return value, "the value is not JSON"
    except RecursionError:
        return value, "the value is not JSON (nested too deep)"
    except ValueError as e:  # an integer past Python's int-to-string digit limit
        return value, f"the value is not JSON ({str(e).split(';')[0]})"
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, str):
        return value, 'the value is JSON without a "data" string'
    try:
        return base64.b64decode(data), None  # as torch decodes it (codecache.py): lenient
    except (binascii.Error, ValueError):
        return value, '"data" is not base64'


@dataclass(frozen=True)
class Unread:
    """A value not read: why, and its SHA-1 where Redis computed it (else "")."""

    why: Reason
    sha1: str = ""


def _lengths(client, keys: list[str]) -> list[int | None | Unread]:
    """Per key: its value's length, None when the key is gone, or why it cannot be
    read (not a string). ``STRLEN`` and ``EXISTS``, pipelined."""
    pipe = client.pipeline(transaction=False)
    for k in keys:
        pipe.strlen(k)
        pipe.exists(k)
    res = pipe.execute(raise_on_error=False)
    out: list[int | None | Unread] = []
    for n, there in zip(res[::2], res[1::2], strict=True):
        if isinstance(n, Exception) or not isinstance(n, int):
            out.append(Unread(Reason(f"cannot be read: {n}", "remote-value-unreadable")))
        else:
            out.append(n if n or there else None)
    return out


# The SHA-1 of a value computed by Redis itself, without sending the value: what gc's
# deletion (_IF_UNCHANGED) checks a value fxcache did not read against.
_SHA1_OF = """
local v = redis.call('GET', KEYS[1])
if not v then return false end
return redis.sha1hex(v)
"""


def _checksums(client, keys: list[str]) -> list[str]:
    """The SHA-1 of each key's value as Redis computes it ("" where it cannot: the key
    is gone, or the server refuses scripts)."""
    import redis

    try:
        script = client.register_script(_SHA1_OF)
        pipe = client.pipeline(transaction=False)
        for k in keys:
            script(keys=[k], client=pipe)
        res = pipe.execute(raise_on_error=False)
    except redis.exceptions.RedisError:
        return [""] * len(keys)
    return [h.decode("ascii", "replace") if isinstance(h, bytes) else h if isinstance(h, str) else ""
            for h in res]


def fetch_values(client, keys: list[str]) -> list[bytes | None | Unread]:
    """Per Redis key: its value (at most :data:`MAX_VALUE_BYTES`), None when it is
    gone, or why it was not read (:class:`Unread`).

    Each value's length is asked first (``STRLEN``, pipelined); a value over
    :data:`MAX_VALUE_BYTES` is not read (Redis computes its SHA-1: a script, the
    value is not sent); the others are read with ``GETRANGE key 0 <length>``, so a
    value that grew meanwhile costs at most a byte more than was asked and is not
    taken; at most :data:`BATCH_BYTES` of values per pipelined round trip.

    Raises:
        redis.exceptions.RedisError: the connection failed.
    """
    got: list[bytes | None | Unread] = []
    todo: list[tuple[int, int]] = []
    big: list[tuple[int, int]] = []
    for i, n in enumerate(_lengths(client, keys)):
        got.append(None if isinstance(n, int) else n)
        if isinstance(n, int):
            (big if n > MAX_VALUE_BYTES else todo).append((i, n))
    for (i, n), sha1 in zip(big, _checksums(client, [keys[i] for i, _ in big]), strict=True):
        got[i] = Unread(Reason(f"a value of {n:,} bytes, over fxcache's {MAX_VALUE_BYTES:,} byte limit "
                                "for a remote value: not read", "too-large"), sha1)
    while todo:
        group, size = [], 0
        while todo and (not group or size + todo[0][1] <= BATCH_BYTES):
            group.append(todo.pop(0))
            size += group[-1][1]
        pipe = client.pipeline(transaction=False)
        for i, n in group:
            pipe.getrange(keys[i], 0, n)  # at most n + 1 bytes: one more says it grew
        res = pipe.execute(raise_on_error=False)
        for (i, n), v in zip(group, res, strict=True):
            if isinstance(v, Exception) or not isinstance(v, bytes):
                got[i] = Unread(Reason(f"cannot be read: {v}", "remote-value-unreadable"))
            elif len(v) > n:
                got[i] = Unread(Reason("it grew while being read (a new value was written): not read",
                                        "remote-value-changed"))
            else:
                got[i] = v if v or not n else None  # empty now: gone since (or emptied)
    return got
