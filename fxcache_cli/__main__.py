"""``python -m fxcache_cli``: the ``fxcache`` command."""

from fxcache_cli.fxcache import main

if __name__ == "__main__":  # not when a worker process (spawn) imports it
    main()
