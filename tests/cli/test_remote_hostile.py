"""``--remote`` against a hostile Redis: values an attacker with write access can SET.

A redis-server of this module's own on a free loopback port (no torch: the values
are built as torch writes them, ``{"data": base64(pickle), "time_taken_ms": n}``).
Issue 23, item 16: a value of 100,000 ``[`` or JSON holding a 5000-digit integer
gave RecursionError/ValueError tracebacks in ``ls --entries``, ``verify``, ``gc``
and ``match``; item 17: one 100 MB value cost ``verify`` and ``gc --dry-run`` 405 MB.
Each command runs in a fresh process measured from a wrapper of its own.
"""

from __future__ import annotations

import base64
import json
import sys

import pytest

from fxcache_core.cache.keys import KeyKind
from tests.cli_run import run_measured
from tests.helpers import start_redis
from tests.synth import fake_key, fx_entry_bytes

redis = pytest.importorskip("redis")

RSS_LIMIT_KB = 300 * 1024
BIG = 100 << 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """redis://.../0: three good values and the hostile ones; .../1: the good ones only."""
    proc, port = start_redis(tmp_path_factory.mktemp("redis"))
    try:
        url = f"redis://127.0.0.1:{port}"
        keys = {}
        for db in (0, 1):
            c = redis.Redis.from_url(f"{url}/{db}")
            for i in range(3):
                k = fake_key(KeyKind.FX_GRAPH, f"good{i}")
                value = {"data": base64.b64encode(fx_entry_bytes("L['t0'] <= 8", k)).decode(), "time_taken_ms": 3}
                c.set(f"pt2:fx-graph-v1::{k}:c1", json.dumps(value))
        c = redis.Redis.from_url(f"{url}/0")
        keys["nested"] = fake_key(KeyKind.FX_GRAPH, "nested")
        c.set(f"pt2:fx-graph-v1::{keys['nested']}:c1", "[" * 100_000)
        keys["digits"] = fake_key(KeyKind.FX_GRAPH, "digits")
        c.set(f"pt2:fx-graph-v1::{keys['digits']}:c1",
              '{"data": "gAJOLg==", "time_taken_ms": ' + "9" * 5000 + "}")
        keys["big"] = fake_key(KeyKind.FX_GRAPH, "big")
        c.setrange(f"pt2:fx-graph-v1::{keys['big']}:c1", BIG - 1, "x")  # 100 MB, made by the server
        yield {"url": url, **keys}
    finally:
        proc.kill()
        proc.wait()


def _run(server: dict, db: int, *args: str, tmp_path) -> dict:
    r = run_measured([sys.executable, "-m", "fxcache_cli", "--remote", f"{server['url']}/{db}", *args],
                   env={"FXCACHE_INDEX_DIR": str(tmp_path / "index"), "FXCACHE_JOBS": "1", "COLUMNS": "200"})
    assert "Traceback" not in r.stderr and r.returncode in ((0, 1, 3) if args[0] == "match" else (0, 1)), r
    assert r.maxrss_kb < RSS_LIMIT_KB, r
    return r


COMMANDS = [["ls", "--entries", "--json"], ["verify"],
            ["gc", "--dry-run", "--unreadable", "--older-than", "0s", "--json"], ["match", "--shapes", "x=[4,3]"]]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_hostile_values_are_reported_in_bounded_cost(server, args, tmp_path):
    hit = _run(server, 0, *args, tmp_path=tmp_path)
    if args[0] in ("verify", "gc"):  # item 17's commands: against the same without the hostile values
        base = _run(server, 1, *args, tmp_path=tmp_path)
        assert hit.cpu - base.cpu < 2.0, (hit.cpu, base.cpu)
    if args[0] == "verify":
        assert hit.returncode == 1 and "not checked" in hit.stdout, hit  # not a pass
        assert "over fxcache's 33,554,432 byte limit" in hit.stdout, hit
    if "--json" in args and args[0] == "ls":
        by_key = {k["key"]: k for k in json.loads(hit.stdout)}
        assert {server["nested"], server["digits"], server["big"]} <= set(by_key)
    if args[:2] == ["gc", "--dry-run"] and "--json" in args:
        plan = json.loads(hit.stdout)
        why = {r["redis_key"]: r["reasons"] for r in plan["removals"]}
        # Not read, so never taken for corrupt; by age, like any entry.
        assert [w for w in why[f"pt2:fx-graph-v1::{server['big']}:c1"] if "unreadable" in w] == []
        assert any("unreadable" in w for w in why[f"pt2:fx-graph-v1::{server['nested']}:c1"])


def test_gc_deletes_what_is_not_json_and_never_a_value_it_could_not_read(server, tmp_path):
    """--unreadable: the values that are not JSON go (torch cannot load them either);
    the 100 MB one, not read, is not corrupt, and stays."""
    c = redis.Redis.from_url(f"{server['url']}/0")
    big, nested, digits = (f"pt2:fx-graph-v1::{server[k]}:c1" for k in ("big", "nested", "digits"))
    try:
        r = _run(server, 0, "gc", "--unreadable", "--yes", "--json", tmp_path=tmp_path)
        body = json.loads(r.stdout)
        assert set(body["removed"]) == {nested, digits}, body
        assert c.strlen(big) == BIG and not c.exists(nested) and not c.exists(digits)
    finally:  # the module's server is shared
        c.set(nested, "[" * 100_000)
        c.set(digits, '{"data": "gAJOLg==", "time_taken_ms": ' + "9" * 5000 + "}")


def test_a_value_that_grows_between_its_length_and_its_read_is_not_taken(server, tmp_path, monkeypatch):
    """The race made deterministic: right after the STRLEN round trip, the attacker
    SETs 50 MB under a key measured at a few hundred bytes. The read asks for at
    most one byte more than was measured."""
    from fxcache_core.remote import fetch as values
    from fxcache_core.remote import redis_store

    c = redis.Redis.from_url(f"{server['url']}/1")
    entries = redis_store.list_entries(c)
    victim = entries[0].redis_key
    real = values._lengths

    def then_grow(client, batch):
        got = real(client, batch)
        c.setrange(victim, 50 << 20, "x")
        return got

    monkeypatch.setattr(values, "_lengths", then_grow)
    try:
        written = redis_store.snapshot(c, entries, tmp_path / "snap")
    finally:
        c.set(victim, c.getrange(victim, 0, 4095).rstrip(b"\0"))
    by_key = {f.entry.redis_key: (p, f) for p, f in written.items()}
    p, f = by_key[victim]
    assert f.unread is not None and f.unread.code == "remote-value-changed" and p.stat().st_size == 0
    assert all(g.unread is None for k, (_, g) in by_key.items() if k != victim)


def test_json_past_pythons_own_limits_is_not_json():
    from fxcache_core.remote.redis_store import unwrap

    assert unwrap(b"[" * 100_000)[1] == "the value is not JSON (nested too deep)"
    why = unwrap(b'{"data": "gAJOLg==", "n": ' + b"9" * 5000 + b"}")[1]
    assert why.startswith("the value is not JSON (") and "digits" in why
