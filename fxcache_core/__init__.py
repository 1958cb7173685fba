"""fxcache_core: read, explain and prune PyTorch Inductor's on-disk compile cache.

No module here imports torch, and none executes anything read from a cache:
entries are decoded by a restricted unpickler (:mod:`fxcache_core.decode.entries`) and
guards expressions are parsed with :mod:`ast` through a whitelist
(:mod:`fxcache_core.guards.expr`). Data flows one way::

    location -> store (scan) -> decode (entries) -> guards -> symbols/binding
             -> frames (which function a key was compiled from), floats
             -> match (verdicts) / gc (plans)

A run's TORCH_TRACE joins in at explain::

    trace (records) -> trace_run (compiles, lookups) -> explain (with a catalog;
             guards_in_force for hits) -> usage (facts gc ranks by) / trace_call (match inputs)
"""

__version__ = "0.1.0"
