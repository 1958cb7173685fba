"""Inductor's remote cache on Redis: listing, reading, and pruning it.

Torch's layout (torch/_inductor/remote_cache.py ``RedisRemoteCache``,
codecache.py ``FxGraphCache``, _functorch/_aot_autograd/autograd_cache.py):

* Redis keys ``pt2:fx-graph-v1::<key>:c1`` (FX graphs) and
  ``pt2:autograd-experimental::<key>:c1`` (AOTAutograd results), where
  ``<key>`` is the same cache key as on disk;
* values are JSON ``{"data": base64(pickle), "time_taken_ms": int}`` written
  with ``SET`` and no TTL: one entry per key, the last writer wins (a key's
  dynamic-shape entries overwrite each other, so only the last one is there);
* on lookup torch reads the local entries first, then the remote one.

fxcache reads the remote cache into a *snapshot*: every value is fetched
(its length first, ``STRLEN``, then pipelined ``GETRANGE`` of at most that many
bytes; one over :data:`MAX_VALUE_BYTES` is reported ``too-large`` and not read),
its pickle decoded from JSON and base64, and written into
a local cache layout in a temp dir (``<kind>/<key>/<sha256 of the pickle>``,
mtime and atime set from ``OBJECT IDLETIME``). ``ls``, ``guards``, ``match``,
``key``, ``diff`` and ``verify`` then run on the snapshot unchanged, through
the same stub decoder. A value that is not JSON, or whose ``data`` is not
base64, is written as it is and reported unreadable like any corrupt entry.

``gc`` plans on the snapshot (the same policies) and maps each removed entry
back to its Redis key, deleted with ``UNLINK`` or given an expiry
(``EXPIRE``, ``--set-ttl``). Nothing is deleted unless the whole cache was
listed and read.

Needs ``redis`` (redis-py); imported only here, only for ``--remote``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fxcache_core.cache.keys import KeyKind, is_key, sha256_hash
from fxcache_core.cache.scan import CacheScan
from fxcache_core.errors import FxcacheError, param
from fxcache_core.prune.execute import GcResult
from fxcache_core.prune.plan import GcPlan
from fxcache_core.reasons import Reason
from fxcache_core.remote.fetch import MAX_VALUE_BYTES, Unread, fetch_values, unwrap

__all__ = ["MAX_VALUE_BYTES", "unwrap"]  # read here by callers and tests (fxcache_core.remote.fetch)

PREFIXES = {KeyKind.FX_GRAPH: "pt2:fx-graph-v1::", KeyKind.AOT_AUTOGRAD: "pt2:autograd-experimental::"}
"""Redis key prefix per kind; the key is followed by ``:c1`` (``RedisRemoteCache._key_fmt``)."""
SUFFIX = ":c1"
SCAN_BATCH = 1000
"""Keys per ``SCAN`` round trip, and commands per pipeline."""


class RemoteError(FxcacheError):
    """The remote cache cannot be used: no connection, refused, wrong password, timeout."""


def redact_url(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***`` (in the user info,
    ``redis://user:secret@host``, and in a ``password=`` query parameter, both of
    which redis-py reads): what fxcache may print or write anywhere."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hostport = netloc.rpartition("@")
            if ":" in userinfo:
                netloc = f"{userinfo.partition(':')[0]}:***@{hostport}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(k.lower() == "password" for k, _ in pairs):
                query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "<a Redis URL that cannot be shown>"


def _secrets(url: str) -> list[str]:
    """The passwords in ``url`` (to scrub from messages that may quote them)."""
    from urllib.parse import parse_qsl, unquote, urlsplit

    out = []
    try:
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        if ":" in userinfo:
            out.append(userinfo.partition(":")[2])
        out += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() == "password"]
    except ValueError:
        pass
    return [x for s in out for x in {s, unquote(s)} if x]


def _scrubbed(url: str, message: object) -> str:
    text = str(message)
    for secret in _secrets(url):
        text = text.replace(secret, "***")
    return text


def redis_url(spec: str, environ: dict[str, str] | None = None) -> str:
    """The Redis URL ``--remote`` names: a ``redis://``/``rediss://``/``unix://``
    URL, or ``env`` for torch's own variables (``TORCHINDUCTOR_REDIS_URL``, else
    ``TORCHINDUCTOR_REDIS_HOST``/``_PORT``, default localhost:6379), as
    ``RedisRemoteCacheBackend`` reads them.

    Raises:
        RemoteError: anything else.
    """
    env = os.environ if environ is None else environ
    if spec == "env":
        if env.get("TORCHINDUCTOR_REDIS_URL"):
            return env["TORCHINDUCTOR_REDIS_URL"]
        return f"redis://{env.get('TORCHINDUCTOR_REDIS_HOST', 'localhost')}:{env.get('TORCHINDUCTOR_REDIS_PORT', '6379')}"
    if spec.split("://", 1)[0] in ("redis", "rediss", "unix") and "://" in spec:
        return spec
    raise RemoteError(f"{param('remote')} {redact_url(spec)!r}: expected redis://host:port/db or env",
                      param="remote", value=redact_url(spec))


@dataclass(frozen=True)
class RemoteEntry:
    """One value of the remote cache.

    Attributes:
        kind, key: the cache key it stands for.
        redis_key: the Redis key (``pt2:...::<key>:c1``).
        size: bytes Redis uses for it (``MEMORY USAGE``; 0 if the server refuses it).
        idle_s: seconds since it was last read or written (``OBJECT IDLETIME``),
            None where the eviction policy does not keep it (LFU).
        listed_at: when the idle time was read (epoch seconds).
    """

    kind: KeyKind
    key: str
    redis_key: str
    size: int
    idle_s: float | None
    listed_at: float = 0.0

    @property
    def accessed(self) -> float | None:
        """When Redis last saw the key read or written, as it reports (epoch
        seconds), None without an idle time. fxcache's own reads count too on a
        server before 7.2: :meth:`RedisStore.last_used` discounts them."""
        return None if self.idle_s is None else self.listed_at - self.idle_s


def parse_redis_key(name: str) -> tuple[KeyKind, str] | None:
    """(kind, cache key) of a Redis key torch writes, or None for any other key."""
    for kind, prefix in PREFIXES.items():
        if name.startswith(prefix) and name.endswith(SUFFIX):
            key = name[len(prefix):-len(SUFFIX)]
            if is_key(key) and KeyKind.of_key(key) is kind:
                return kind, key
    return None


def connect(url: str, timeout_s: float = 10.0):  # -> redis.Redis
    """A connected client (PING checked), with ``CLIENT NO-TOUCH ON`` where the
    server has it (Redis 7.2+), so fxcache's reads do not count as uses of the
    keys; ``client.fxcache_touches`` says whether they do.

    Raises:
        RemoteError: redis-py missing, connection refused or timed out, auth failed.
    """
    try:
        import redis
    except ImportError:
        raise RemoteError(f"{param('remote')} needs the redis package (pip install redis)", param="remote") from None
    shown = redact_url(url)  # never the password, in any message
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
        client.ping()
    except ValueError as e:
        raise RemoteError(f"{param('remote')} {shown}: {_scrubbed(url, e)}", param="remote", value=shown) from None
    except redis.exceptions.AuthenticationError as e:
        raise RemoteError(f"{shown}: authentication failed: {_scrubbed(url, e)}", param="remote", value=shown) from None
    except redis.exceptions.ResponseError as e:  # e.g. NOAUTH
        raise RemoteError(f"{shown}: {_scrubbed(url, e)}", param="remote", value=shown) from None
    except redis.exceptions.TimeoutError:
        raise RemoteError(f"{shown}: timed out after {timeout_s:g} s", param="remote", value=shown) from None
    except redis.exceptions.ConnectionError as e:
        raise RemoteError(f"{shown}: cannot connect: {_scrubbed(url, e)}", param="remote", value=shown) from None
    except redis.exceptions.RedisError as e:
        raise RemoteError(f"{shown}: {type(e).__name__}: {_scrubbed(url, e)}", param="remote", value=shown) from None
    try:
        client.execute_command("CLIENT", "NO-TOUCH", "ON")
        client.fxcache_touches = False
    except redis.exceptions.RedisError:
        client.fxcache_touches = True  # before 7.2: GET resets a key's idle time
    return client


def _guard(fn: Callable[[], object], what: str) -> object:
    import redis

    try:
        return fn()
    except redis.exceptions.TimeoutError:
        raise RemoteError(f"{what}: timed out") from None
    except redis.exceptions.RedisError as e:
        raise RemoteError(f"{what}: {e}") from None


def _batches(items: list, n: int = SCAN_BATCH) -> Iterator[list]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def list_entries(client, on_batch: Callable[[int], None] | None = None) -> tuple[RemoteEntry, ...]:
    """Every torch value on the server: ``SCAN`` (never ``KEYS``) by prefix, then
    ``MEMORY USAGE`` and ``OBJECT IDLETIME``, :data:`SCAN_BATCH` keys per round trip.

    Raises:
        RemoteError: the server failed mid-way (nothing partial is returned).
    """
    names: list[str] = []
    for prefix in PREFIXES.values():
        for raw in _guard(lambda p=prefix: list(client.scan_iter(match=p + "*", count=SCAN_BATCH)), "SCAN"):
            name = raw.decode() if isinstance(raw, bytes) else raw
            if parse_redis_key(name) is not None:
                names.append(name)
    names.sort()
    out: list[RemoteEntry] = []
    for batch in _batches(names):
        res = _sizes_and_idle(client, batch)
        listed_at = time.time()
        for i, n in enumerate(batch):
            mem, idle = res[2 * i: 2 * i + 2]
            if mem is None or mem == -1:
                continue  # gone between SCAN and now
            kind, key = parse_redis_key(n)  # type: ignore[misc]
            out.append(RemoteEntry(kind, key, n, mem if isinstance(mem, int) else 0,
                                   float(idle) if isinstance(idle, int) and idle >= 0 else None,
                                   listed_at))
        if on_batch is not None:
            on_batch(len(batch))
    return tuple(out)


# MEMORY USAGE and OBJECT IDLETIME of a batch of keys in one round trip; neither
# counts as a use of the key. -1 where a key is gone or the server keeps no idle
# time (an LFU eviction policy).
_SIZES_AND_IDLE = """
local out = {}
for i, k in ipairs(KEYS) do
  out[2*i-1] = redis.call('MEMORY', 'USAGE', k) or -1
  local ok, idle = pcall(redis.call, 'OBJECT', 'IDLETIME', k)
  out[2*i] = ok and idle or -1
end
return out
"""


def _sizes_and_idle(client, batch: list[str]) -> list:
    """[size, idle, size, idle, ...] for ``batch``: one Lua call (a pipeline of
    ``MEMORY USAGE``/``OBJECT IDLETIME`` where the server refuses scripts)."""
    import redis

    try:
        return client.register_script(_SIZES_AND_IDLE)(keys=batch)
    except redis.exceptions.ResponseError:
        pass  # scripts refused (ACL, a proxy): the same commands, pipelined
    except redis.exceptions.RedisError as e:
        raise RemoteError(f"MEMORY USAGE/OBJECT IDLETIME: {e}") from None
    pipe = client.pipeline(transaction=False)
    for n in batch:
        pipe.memory_usage(n)
        pipe.object("idletime", n)
    res = _guard(lambda: pipe.execute(raise_on_error=False), "MEMORY USAGE/OBJECT IDLETIME")
    return [None if isinstance(r, redis.exceptions.RedisError) else r for r in res]


@dataclass(frozen=True)
class Fetched:
    """A remote value as fetched: where it came from, the SHA-1 of its bytes
    (checked by Redis itself right before gc deletes it: :func:`unlink`), when
    it was read (epoch seconds before and after its ``GET``) and the key's last
    use the snapshot file carries (its mtime and atime)."""

    entry: RemoteEntry
    sha1: str
    read_lo: float = 0.0
    read_hi: float = 0.0
    last_use: float | None = None
    unread: str | None = None
    """Why the value was not read (over :data:`MAX_VALUE_BYTES`, changed while it
    was read, not a string): its snapshot file is an empty placeholder, and
    :meth:`RedisStore.not_read` says so to the catalog. ``sha1`` is then the one
    Redis computed for a value too large to read, else ``""`` (never deleted)."""


def snapshot(client, entries: tuple[RemoteEntry, ...], dst: Path,
             on_batch: Callable[[int], None] | None = None,
             last_use: Callable[[RemoteEntry, str | None], float | None] | None = None) -> dict[Path, Fetched]:
    """Fetch every value and write it as a local cache under ``dst``, each file's
    mtime and atime the key's last use: ``last_use(entry, sha1 of the value)``, by
    default the access time Redis reported (:attr:`RemoteEntry.accessed`).

    Each value's length is asked first (``STRLEN``); one over
    :data:`MAX_VALUE_BYTES` is not read, and one that is read is read with
    ``GETRANGE key 0 <length>``, so a value that grew meanwhile costs at most a
    byte more than was asked (it is then not taken either). Values are fetched in
    pipelined round trips of at most :data:`BATCH_BYTES`. A value not read gets an
    empty placeholder file and :attr:`Fetched.unread` says why; for one too large,
    Redis computes its SHA-1 (a script: the value is not sent), so that gc may
    still delete it by age, checked unchanged as any other.

    Returns the written entry file -> what it came from. Values gone since the
    listing are left out.

    Raises:
        RemoteError: the server failed mid-way, or the snapshot cannot be written.
    """
    try:
        return _snapshot(client, entries, dst, on_batch, last_use)
    except OSError as e:
        raise RemoteError(f"cannot write the snapshot of the remote cache in {dst}: "
                          f"{e.strerror or e}") from None


def _snapshot(client, entries: tuple[RemoteEntry, ...], dst: Path,
              on_batch: Callable[[int], None] | None,
              last_use: Callable[[RemoteEntry, str | None], float | None] | None) -> dict[Path, Fetched]:
    written: dict[Path, Fetched] = {}
    for batch in _batches(list(entries)):
        read_lo = time.time()
        values = _guard(lambda b=batch: fetch_values(client, [e.redis_key for e in b]), "GET")
        read_hi = time.time()
        for e, value in zip(batch, values, strict=True):
            if value is None:
                continue
            unread = value if isinstance(value, Unread) else None
            data = b"" if unread is not None else unwrap(value)[0]  # type: ignore[arg-type]
            d = e.kind.key_dir(dst, e.key)
            d.mkdir(parents=True, exist_ok=True)
            p = d / sha256_hash(data)
            p.write_bytes(data)
            sha1 = unread.sha1 if unread is not None else hashlib.sha1(value).hexdigest()  # type: ignore[arg-type]
            t = last_use(e, sha1 or None) if last_use is not None else e.accessed
            if t is None:
                t = read_lo  # no idle time (LFU policy): nothing known but that it is there now
            os.utime(p, (t, t))
            written[p] = Fetched(e, sha1, read_lo, read_hi, t if e.idle_s is not None else None,
                                 unread.why if unread is not None else None)
            value = data = None  # type: ignore[assignment]  # one value in memory at a time
        if on_batch is not None:
            on_batch(len(batch))
    return written


# Delete (or expire) a key only while it still holds the value that was planned:
# torch overwrites a whole key on each write, so between the snapshot and the
# deletion it may have stored a new, valid entry there. Redis runs the script
# atomically. 1: done; 0: the key is gone; -1: its value changed.
_IF_UNCHANGED = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if redis.sha1hex(v) ~= ARGV[1] then return -1 end
if ARGV[2] == '' then return redis.call('UNLINK', KEYS[1]) end
return redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
"""


def unlink(client, planned: list[tuple[str, str]]) -> tuple[list[str], list[tuple[str, str]]]:
    """``UNLINK`` each (key, SHA-1 of its planned value) whose value is unchanged;
    (done, [(key, why not)])."""
    return _apply(client, planned, "")


def expire(client, planned: list[tuple[str, str]], ttl_s: int) -> tuple[list[str], list[tuple[str, str]]]:
    """Give each unchanged key an expiry of ``ttl_s`` seconds (``EXPIRE``)."""
    return _apply(client, planned, str(int(ttl_s)))


def _apply(client, planned: list[tuple[str, str]], ttl: str) -> tuple[list[str], list[tuple[str, str]]]:
    script = client.register_script(_IF_UNCHANGED)
    done: list[str] = []
    failed: list[tuple[str, str]] = []
    for batch in _batches(planned):
        pipe = client.pipeline(transaction=False)
        for k, sha1 in batch:
            script(keys=[k], args=[sha1, ttl], client=pipe)
        try:
            res = pipe.execute(raise_on_error=False)
        except Exception as e:  # noqa: BLE001 - the connection failed: every key of the batch
            failed += [(k, Reason(str(e), "server-error")) for k, _ in batch]
            continue
        for (k, _), r in zip(batch, res, strict=True):
            if isinstance(r, Exception):
                failed.append((k, Reason(str(r), "server-error")))
            elif r == 1:
                done.append(k)
            elif r == -1:
                failed.append((k, Reason("changed since the plan", "changed-since-plan")))
            else:
                failed.append((k, Reason("already gone", "already-gone")))
    return done, failed


def agreement(remote_scan: CacheScan, local_scan: CacheScan) -> dict[str, str]:
    """For each key of a remote snapshot that the local cache also has: ``same``
    when the remote value is one of the local entries (same content hash, as
    entry names are), else ``differs``."""
    names = {k.key: {e.name for e in k.entries} for k in local_scan.keys}
    return {k.key: ("same" if any(e.name in names[k.key] for e in k.entries) else "differs")
            for k in remote_scan.keys if k.key in names}


class RedisStore:
    """Inductor's remote cache on one Redis server, seen as a local cache.

    The listing (:meth:`entries`) reads no value; :meth:`snapshot` fetches
    every value once into a temp dir laid out as a local cache, on which the
    local machinery runs unchanged; :meth:`execute` carries out a gc plan made
    on that snapshot on Redis. :meth:`close` removes the snapshot.

    Raises:
        RemoteError: from the constructor when the server cannot be used.
    """

    def __init__(self, url: str, timeout_s: float = 10.0, reads_path: Path | None | str = "default") -> None:
        """``reads_path``: the log of fxcache's own reads
        (:mod:`fxcache_core.state.remote_reads`; "default": in the index dir, None: none)."""
        self.url = url
        self.display_url = redact_url(url)
        """The URL without its password: what may be shown."""
        self.client = connect(url, timeout_s)
        self._entries: tuple[RemoteEntry, ...] | None = None
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._fetched: dict[Path, Fetched] = {}
        from fxcache_core.state.remote_reads import RemoteReads, default_log_path, server_id

        path = default_log_path() if reads_path == "default" else reads_path
        self.reads = RemoteReads(path if self.touches else None, server_id(self.client))  # type: ignore[arg-type]
        self._remembered: dict | None = None

    @property
    def touches(self) -> bool:
        """Whether reading a value counts as a use of its key on this server
        (no ``CLIENT NO-TOUCH``: before Redis 7.2)."""
        return bool(getattr(self.client, "fxcache_touches", True))

    def entries(self, on_batch: Callable[[int], None] | None = None) -> tuple[RemoteEntry, ...]:
        """The listing (:func:`list_entries`), read once."""
        if self._entries is None:
            self._entries = list_entries(self.client, on_batch)
        return self._entries

    def last_used(self, entry: RemoteEntry, sha1: str | None = None) -> float | None:
        """The key's last use (epoch seconds): the access time Redis reports, unless
        fxcache's own remembered read of it (the same value, ``sha1``, where known)
        explains it (:func:`fxcache_core.state.remote_reads.last_use`); None without an
        idle time (an LFU eviction policy)."""
        from fxcache_core.state.remote_reads import last_use

        if entry.accessed is None:
            return None
        if self._remembered is None:
            self._remembered = self.reads.remembered()
        return last_use(entry.accessed, self._remembered.get(entry.redis_key), sha1)

    def snapshot(self, on_batch: Callable[[int], None] | None = None) -> Path:
        """The root of the local snapshot (:func:`snapshot`), fetched once; each
        file's times are the key's :meth:`last_used`. On a server where reads count
        as uses (:attr:`touches`), the reads are remembered (:attr:`reads`) so the
        next run discounts them."""
        if self._dir is None:
            entries = self.entries()
            self._dir = tempfile.TemporaryDirectory(prefix="fxcache-remote-")
            self._fetched = snapshot(self.client, entries, Path(self._dir.name), on_batch,
                                     last_use=self.last_used)
            if self.touches:
                from fxcache_core.state.remote_reads import Read

                self.reads.remember((f.entry.redis_key, Read(f.sha1, f.read_lo, f.read_hi, f.last_use))
                                    for f in self._fetched.values() if f.last_use is not None)
        return Path(self._dir.name)

    def fetched(self, path: Path) -> Fetched | None:
        """What the snapshot file ``path`` was fetched from (None for another path)."""
        return self._fetched.get(path)

    def not_read(self) -> dict[str, str]:
        """Snapshot entry file (as a scan spells it) -> why its value was not read
        (:attr:`Fetched.unread`): for :class:`~fxcache_core.catalog.reader.Catalog`,
        which reports such an entry ``too-large`` (not checked, never corrupt)."""
        return {str(p): f.unread for p, f in self._fetched.items() if f.unread is not None}

    def execute(self, plan: GcPlan, ttl_s: int | None = None) -> GcResult:
        """Carry out ``plan`` (made on :meth:`snapshot`): ``UNLINK`` each planned
        entry's Redis key, or ``EXPIRE`` it after ``ttl_s`` seconds, atomically and
        only while it holds the value that was planned (:func:`unlink`). Keys gone
        or changed since are ``skipped``; server errors are ``failed``."""
        by_key = {f.entry.redis_key: r for r in plan.removals
                  if (f := self._fetched.get(r.file.path)) is not None}
        unread = [(k, r) for k, r in by_key.items() if not self._fetched[r.file.path].sha1]
        planned = [(k, self._fetched[r.file.path].sha1) for k, r in by_key.items()
                   if self._fetched[r.file.path].sha1]
        done, not_done = (expire(self.client, planned, ttl_s) if ttl_s is not None
                          else unlink(self.client, planned))
        kept = ("already gone", "changed since the plan")
        return GcResult(
            removed=tuple(by_key[k] for k in done),
            skipped=tuple((r.file.path, Reason("its value's checksum is not known: fxcache deletes only "
                                               "a value Redis checks unchanged", "value-not-checked"))
                          for _k, r in unread)
            + tuple((by_key[k].file.path, why) for k, why in not_done if why in kept),
            failed=tuple((by_key[k].file.path, why) for k, why in not_done if why not in kept),
            dirs_removed=(),
        )

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        self.reads.close()
