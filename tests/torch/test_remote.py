"""The remote cache on a real redis-server, written by torch itself.

A module fixture starts ``redis-server`` (the Debian package) on a free
loopback port, and a fresh torch process compiles three demo cases with the
remote caches on and the local ones off (``tests.harness.remote_build``), so every
value is torch's own ``SET``. Without redis-server the module is skipped, or
fails under ``CI=true`` (.ci/run installs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.harness.background import builder, prebuilt
from tests.helpers import REPO_ROOT, free_port, run_fxcache, start_redis
from tests.helpers import cli_json as _json

pytestmark = pytest.mark.torch

CASES = ["same_graph_two_regions", "train_mlp", "int_arg"]


@builder("redis_remote", order=6)
def _redis_remote() -> str:
    """A redis-server of its own (stopped when the session ends), with the remote cache
    torch wrote for CASES (built in the background: a torch process)."""
    import atexit

    from demo.build_cache import build_options
    from tests.harness.background import build_dir

    pytest.importorskip("redis")
    tmp = build_dir("redis")
    proc, port = start_redis(tmp)
    atexit.register(proc.kill)
    url = f"redis://127.0.0.1:{port}/0"
    out = subprocess.run([sys.executable, "-m", "tests.harness.remote_build", url, str(tmp / "kernels"),
                          "--cases", ",".join(CASES)], cwd=REPO_ROOT, capture_output=True, text=True,
                         timeout=600, env=dict(build_options().base_env or os.environ, PYTHONPATH=str(REPO_ROOT)))
    assert out.returncode == 0, out.stderr[-3000:]
    return url


@pytest.fixture(scope="session")
def redis_remote() -> str:
    pytest.importorskip("redis")
    return prebuilt("redis_remote")


@pytest.fixture(scope="module")
def server(redis_remote):
    return redis_remote


@pytest.fixture
def client(server):
    import redis

    return redis.Redis.from_url(server)


def _torch_keys(client) -> set[str]:
    return {k.decode() for k in client.scan_iter(match="pt2:*")}


def test_ls_lists_every_key_torch_wrote(server, client):
    from fxcache_core.remote.redis_store import parse_redis_key

    keys = _torch_keys(client)
    assert any(k.startswith("pt2:fx-graph-v1::") for k in keys)
    assert any(k.startswith("pt2:autograd-experimental::") for k in keys)
    listed = _json(run_fxcache("--remote", server, "ls", "--json", block_torch=True))
    assert {k["key"] for k in listed} == {parse_redis_key(k)[1] for k in keys}
    assert all(len(k["entries"]) == 1 for k in listed)  # one value per key: the last writer's


def test_remote_entries_decode_to_what_torch_stored(server, client):
    """The snapshot's entries are torch's pickles: guards as torch unpickles them."""
    import base64
    import pickle

    import torch  # noqa: F401  (pickle.loads needs torch's classes; tests only)

    from fxcache_core.remote.redis_store import parse_redis_key

    listed = {k["key"]: k for k in _json(run_fxcache("--remote", server, "ls", "--json"))}
    n = 0
    for name in _torch_keys(client):
        kind, key = parse_redis_key(name)
        value = json.loads(client.get(name))
        stored = pickle.loads(base64.b64decode(value["data"]))
        g = _json(run_fxcache("--remote", server, "guards", key[:14], "--json", block_torch=True))
        (entry,) = g["entries"]
        assert (entry["guards_expr"] or None) == (stored.guards_expr or None)
        assert listed[key]["kind"] == kind.value and listed[key]["redis_key"] == name
        n += 1
    assert n >= 4


def test_match_on_the_remote_cache(server):
    rep = _json(run_fxcache("--remote", server, "match", "--fn", "same_graph_two_regions",
                            "--shapes", "x=[40,3]", "--dynamic", "true", "--json", block_torch=True))
    aot = [r for r in rep["results"] if r["kind"] == "aotautograd"]
    assert aot and aot[0]["status"] in ("hit", "miss")
    # The remote key holds the last writer's entry only: sizes 4..7 were overwritten by 32.
    assert [r["status"] for r in aot] == ["hit"]


def test_gc_plans_then_unlinks_or_sets_a_ttl(server, client):
    import redis

    before = _torch_keys(client)
    # A value that is not JSON, and one whose data is not base64: unreadable.
    bad1 = "pt2:fx-graph-v1::f" + "a" * 51 + ":c1"
    bad2 = "pt2:autograd-experimental::a" + "b" * 51 + ":c1"
    client.set(bad1, b"\x80\x04not json")
    client.set(bad2, json.dumps({"data": "%%% not base64", "time_taken_ms": 1}))
    plan = _json(run_fxcache("--remote", server, "gc", "--unreadable", "--dry-run", "--json", block_torch=True))
    assert {r["redis_key"] for r in plan["removals"]} == {bad1, bad2}
    assert _torch_keys(client) == before | {bad1, bad2}  # a dry run changes nothing
    done = _json(run_fxcache("--remote", server, "gc", "--unreadable", "--set-ttl", "1h", "--yes", "--json"))
    assert set(done["removed"]) == {bad1, bad2}
    assert 0 < client.ttl(bad1) <= 3600 and client.ttl(next(iter(before))) == -1
    done = _json(run_fxcache("--remote", server, "gc", "--unreadable", "--yes", "--json"))
    assert set(done["removed"]) == {bad1, bad2} and _torch_keys(client) == before
    assert isinstance(client, redis.Redis)


def test_bad_remote_is_one_line_and_exit_2(server, tmp_path):
    port = free_port()
    for args, needle in [
        (["--remote", f"redis://127.0.0.1:{port}/0", "ls"], "cannot connect"),
        (["--remote", "http://x", "ls"], "expected redis://"),
        (["gc", "--set-ttl", "1h"], "needs --remote"),
    ]:
        proc = run_fxcache(*args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr
    proc_srv, pport = start_redis(tmp_path, "--requirepass", "sekret")
    try:
        proc = run_fxcache("--remote", f"redis://127.0.0.1:{pport}/0", "ls")
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
        assert "auth" in proc.stderr.lower() or "NOAUTH" in proc.stderr, proc.stderr
        proc = run_fxcache("--remote", f"redis://:wrong@127.0.0.1:{pport}/0", "ls")
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    finally:
        proc_srv.kill()
        proc_srv.wait()


def test_gc_never_deletes_a_value_that_changed_since_the_plan(server, client, tmp_path):
    """Torch overwrites a whole key on each write: the deletion checks, atomically in
    Redis, that the key still holds the value that was planned."""
    from fxcache_core.remote import redis_store as remote

    k = "pt2:fx-graph-v1::f" + "c" * 51 + ":c1"
    client.set(k, b"not an entry")
    c = remote.connect(server)
    (e,) = [e for e in remote.list_entries(c) if e.redis_key == k]
    (f,) = remote.snapshot(c, (e,), tmp_path).values()
    client.set(k, b"a new value torch just wrote")
    assert remote.unlink(c, [(k, f.sha1)]) == ([], [(k, "changed since the plan")])
    assert remote.expire(c, [(k, f.sha1)], 60) == ([], [(k, "changed since the plan")])
    assert client.get(k) == b"a new value torch just wrote" and client.ttl(k) == -1
    client.set(k, b"not an entry")
    assert remote.unlink(c, [(k, f.sha1)]) == ([k], [])
    assert remote.unlink(c, [(k, f.sha1)]) == ([], [(k, "already gone")])


def test_listing_does_not_count_as_a_use_and_torchs_lenient_base64_is_kept(server, client, tmp_path):
    from fxcache_core.remote import redis_store as remote

    c = remote.connect(server)
    name = next(iter(_torch_keys(client)))
    value = json.loads(client.get(name))
    # torch decodes with base64.b64decode(data): stray newlines are skipped, not an error.
    spaced = "\n".join(value["data"][i:i + 76] for i in range(0, len(value["data"]), 76))
    assert remote.unwrap(json.dumps({"data": spaced}).encode())[1] is None
    k = "pt2:autograd-experimental::a" + "d" * 51 + ":c1"
    client.set(k, b"x")
    time.sleep(1.1)
    (e,) = [e for e in remote.list_entries(c) if e.redis_key == k]
    (e2,) = [e for e in remote.list_entries(c) if e.redis_key == k]
    assert e.idle_s is not None and e2.idle_s >= 1  # MEMORY USAGE / OBJECT IDLETIME do not touch
    client.delete(k)


def test_plain_ls_lists_without_fetching_a_value(server, client):
    k = "pt2:fx-graph-v1::f" + "e" * 51 + ":c1"
    client.set(k, b"y" * 1000)
    time.sleep(1.1)
    proc = run_fxcache("--remote", server, "ls", block_torch=True)
    assert proc.returncode == 0, proc.stderr
    assert "f" + "e" * 51 in proc.stdout and "Redis memory" in proc.stdout
    assert client.object("idletime", k) >= 1  # listed, never read
    for name in _torch_keys(client):
        assert parse_key(name) in proc.stdout
    client.delete(k)


def parse_key(name: str) -> str:
    from fxcache_core.remote.redis_store import parse_redis_key

    return parse_redis_key(name)[1]


def test_a_dry_run_does_not_make_the_same_plan_find_nothing_old(server, client):
    """Redis before 7.2 (Debian 12's 7.0) counts every GET as a use: fxcache reads the
    idle times before any value, remembers its own reads outside Redis, and discounts
    them, so the docs' dry-run-then---yes workflow (docs/tasks/remote-cache.md) plans the same keys twice. A
    read by anyone else still counts."""
    from fxcache_core.remote import redis_store as remote

    keys = ["pt2:fx-graph-v1::f" + ch * 51 + ":c1" for ch in "gh"]
    for k in keys:
        client.set(k, b"an old value, not an entry: " + k.encode())
    time.sleep(3.5)
    plans, notes = [], []
    for _ in range(2):
        p = run_fxcache("--remote", server, "gc", "--older-than", "2s", "--dry-run", "--json")
        assert p.returncode == 0, p.stderr
        plans.append({r["redis_key"] for r in json.loads(p.stdout)["removals"]})
        notes.append(p.stderr)
    assert set(keys) <= plans[0] and set(keys) <= plans[1]
    touches = remote.connect(server).fxcache_touches
    if touches:  # the server did count fxcache's reads: Redis alone would say "just used"
        assert client.object("idletime", keys[0]) < 2
        assert "counts reads as uses" in notes[0] and "remembers its reads" in notes[0]
    text = run_fxcache("--remote", server, "gc", "--older-than", "2s", "--dry-run").stdout
    assert "idle " in text and "max(atime, mtime)" not in text and "last used" not in text
    time.sleep(3.5)  # a use within SLACK_S of fxcache's own read is taken for that read
    client.get(keys[0])  # someone else's read: a use
    p = run_fxcache("--remote", server, "gc", "--older-than", "2s", "--dry-run", "--json")
    planned = {r["redis_key"] for r in json.loads(p.stdout)["removals"]}
    assert keys[1] in planned and keys[0] not in planned
    client.delete(*keys)


def test_a_remembered_read_explains_only_an_access_in_its_window():
    from fxcache_core.state.remote_reads import SLACK_S, Read, last_use

    r = Read("sha", 1000.0, 1001.0, 500.0)
    assert last_use(1000.5, r) == 500.0 and last_use(1000.5, r, "sha") == 500.0
    assert last_use(1001.0 + SLACK_S + 1, r) == 1001.0 + SLACK_S + 1  # a later use by someone else
    assert last_use(1000.5, r, "another value") == 1000.5  # torch wrote a new value
    assert last_use(900.0, None) == 900.0
