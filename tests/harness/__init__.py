"""The torch-side test harness: what the torch tier (tests/torch) runs besides fxcache.

- ``cases``: the tests' corpus, every case the session's real cache is built from
  (the demo's cases among them).
- ``oracle``: torch's own lookup for one call of a ``cases`` case, the ground
  truth of the tests (``python -m tests.harness.oracle``), and the fork server that
  answers many queries without importing torch again.
- ``recorded``: torch's answers to the queries the suite asks every run, recorded once
  per torch version (``python -m tests.harness.recorded``) and read back in the names
  of the session's cache.
- ``real_cache``: the session's real cache, every ``tests.harness.cases`` case compiled once.
- ``models`` / ``model_runs``: tiny Hugging Face models from configs, a cache built
  from them and torch's lookups for many calls in one process.
- ``traced``: workloads run under ``TORCH_TRACE`` with torch's lookups recorded.
- ``variants``: one-change compile variants (``fxcache diff`` / ``key``).
- ``remote_build``: a cache built with the remote caches on (Redis).
- ``pack_app``: a small app for ``fxcache pack``'s round trip.
- ``blob_app`` / ``standalone_app``: torch's other cache forms: an app that saves or
  loads a mega-cache blob (bundled AOTAutograd entries or not), and
  ``standalone_compile`` artifacts in vLLM's layout.
- ``background``: the session's expensive values, built on background threads, and
  where they are built (``build_dir``) and read (``prebuilt``).
- ``zygote``: the build processes above, forked from one that imported torch once.
- ``evaluation``: ``fxcache match`` against torch on families the suite does not use
  (``python -m tests.harness.evaluation``, ``make eval``; not part of the test run).

It imports from ``demo`` (the case type, ``build_cache``, ``recorder``); ``demo`` never
imports from here. Run its entry points from the repository root
(``python -m tests.harness.oracle ...``). Nothing here is imported by
``fxcache_core`` / ``fxcache_cli``.
"""
