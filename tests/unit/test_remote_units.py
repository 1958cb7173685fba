"""The remote cache's pure parts (no server, no torch): names, URLs, values, agreement."""

from __future__ import annotations

import base64
import json

import pytest

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import scan_cache
from fxcache_core.remote.redis_store import (
    RemoteError,
    agreement,
    parse_redis_key,
    redis_url,
    unwrap,
)
from tests.synth import fake_key, fx_entry_bytes, write_entry


def test_redis_keys_are_read_as_torch_writes_them():
    fx, aot = fake_key(KeyKind.FX_GRAPH, "x"), fake_key(KeyKind.AOT_AUTOGRAD, "y")
    assert parse_redis_key(f"pt2:fx-graph-v1::{fx}:c1") == (KeyKind.FX_GRAPH, fx)
    assert parse_redis_key(f"pt2:autograd-experimental::{aot}:c1") == (KeyKind.AOT_AUTOGRAD, aot)
    for other in (f"pt2:fx-graph-v1::{aot}:c1", f"pt2:fx-graph-v1::{fx}:c2", "pt2:fx-graph-v1::fshort:c1",
                  f"pt2:autotune::{fx}:c1", "unrelated"):
        assert parse_redis_key(other) is None


def test_remote_urls_and_torchs_env():
    assert redis_url("redis://h:1/2") == "redis://h:1/2"
    assert redis_url("env", {"TORCHINDUCTOR_REDIS_URL": "redis://u:9/0"}) == "redis://u:9/0"
    assert redis_url("env", {"TORCHINDUCTOR_REDIS_HOST": "c", "TORCHINDUCTOR_REDIS_PORT": "7"}) == "redis://c:7"
    assert redis_url("env", {}) == "redis://localhost:6379"
    with pytest.raises(RemoteError, match="expected redis://"):
        redis_url("http://h")


def test_values_unwrap_like_torch_or_say_why_not():
    data = b"\x80\x04pickle bytes"
    ok = json.dumps({"data": base64.b64encode(data).decode(), "time_taken_ms": 3}).encode()
    assert unwrap(ok) == (data, None)
    assert unwrap(b"\x80\x04raw")[1] == "the value is not JSON"
    assert unwrap(b'{"time_taken_ms": 1}')[1] == 'the value is JSON without a "data" string'
    assert unwrap(b'{"data": "a"}')[1] == '"data" is not base64'


def test_agreement_with_the_local_cache(tmp_path):
    remote_root, local_root = tmp_path / "remote", tmp_path / "local"
    same, differs, only_remote = (fake_key(KeyKind.FX_GRAPH, s) for s in ("a", "b", "c"))
    for k in (same, differs, only_remote):
        write_entry(remote_root, KeyKind.FX_GRAPH, k, fx_entry_bytes("L['t0'] <= 8", k))
    write_entry(local_root, KeyKind.FX_GRAPH, same, fx_entry_bytes("L['t0'] <= 8", same))
    write_entry(local_root, KeyKind.FX_GRAPH, same, fx_entry_bytes("L['t0'] > 8", same))
    write_entry(local_root, KeyKind.FX_GRAPH, differs, fx_entry_bytes("L['t0'] > 8", differs))
    got = agreement(scan_cache(remote_root), scan_cache(local_root))
    assert got == {same: "same", differs: "differs"}


@pytest.mark.parametrize("url,shown", [
    ("redis://user:hunter2@host:6379/0", "redis://user:***@host:6379/0"),
    ("redis://:hunter2@host", "redis://:***@host"),
    ("rediss://host:1/0?password=hunter2&db=1", "rediss://host:1/0?password=***&db=1"),
    ("unix://u:hunter2@/tmp/redis.sock", "unix://u:***@/tmp/redis.sock"),
    ("redis://host:6379", "redis://host:6379"),
])
def test_a_redis_url_is_never_shown_with_its_password(url, shown):
    from fxcache_core.remote.redis_store import redact_url

    assert redact_url(url) == shown


@pytest.mark.parametrize("url", ["redis://user:hunter2@127.0.0.1:1/0", "redis://user:hunter2@[bad/0",
                                 "redis://user:hunter2@localhost:notaport/0", "http://u:hunter2@h"])
def test_connection_errors_never_quote_the_password(url):
    from fxcache_core.remote.redis_store import RemoteError, connect, redis_url

    with pytest.raises(RemoteError) as e:
        connect(redis_url(url), timeout_s=2)
    assert "hunter2" not in str(e.value)
