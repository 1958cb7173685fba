"""Listing a Redis remote cache: ``fxcache --remote URL ls`` against ``redis-cli --scan | wc -l``.

    python -m benchmarks.bench_remote [--sizes 10000,100000]

(``make bench`` runs it when ``redis-server`` is installed.) A throwaway
``redis-server`` on a free loopback port gets N keys named as torch names them
(``pt2:fx-graph-v1::<key>:c1`` / ``pt2:autograd-experimental::<key>:c1``),
each a 1 KB value: a plain ``ls`` reads no value (``SCAN``, then
``MEMORY USAGE`` and ``OBJECT IDLETIME`` pipelined), so the listing cost does
not depend on the values. Both commands run in fresh processes, best of 3.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _wall(argv: list[str] | str, shell: bool = False) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(argv, shell=shell, check=True, stdout=subprocess.DEVNULL, cwd=REPO,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000")
    a = p.parse_args(argv)
    exe, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if exe is None or cli is None:
        print("redis-server/redis-cli not installed: skipped")
        return 0
    import redis

    from fxcache_core.cache.keys import sha256_hash

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="fxcache-bench-redis-")
    srv = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        url = f"redis://127.0.0.1:{port}/0"
        value = b'{"data": "' + b"A" * 1000 + b'", "time_taken_ms": 1}'
        have = 0
        print(f"{'keys':>8}  {'fxcache --remote ls':>20}  {'redis-cli --scan | wc -l':>26}  ratio")
        for n in (int(x) for x in a.sizes.split(",")):
            pipe = client.pipeline(transaction=False)
            for i in range(have, n):
                kind = "fx-graph-v1" if i % 2 else "autograd-experimental"
                key = ("f" if i % 2 else "a") + sha256_hash(str(i).encode())
                pipe.set(f"pt2:{kind}::{key}:c1", value)
                if len(pipe) >= 5000:
                    pipe.execute()
            pipe.execute()
            have = n
            ours = _wall([sys.executable, "-m", "fxcache_cli", "--remote", url, "ls"])
            ref = _wall(f"{cli} -p {port} --scan --pattern 'pt2:*' | wc -l", shell=True)
            print(f"{n:>8}  {ours:>18.2f} s  {ref:>24.2f} s  {ours / ref:.1f}x")
    finally:
        srv.kill()
        srv.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
