"""fxcache_core: read, explain and prune PyTorch Inductor's on-disk compile cache.

No module here imports torch (but :mod:`fxcache_core.keying.current`, which asks
the installed one), and none executes anything read from a cache: entries are
decoded by a restricted unpickler (:mod:`fxcache_core.decode.unpickler`) and
guards expressions are parsed with :mod:`ast` through a whitelist
(:mod:`fxcache_core.guards.grammar`). Data flows one way, one package a concern,
each importing only from those below it (``make lint`` checks it)::

    cache (location, keys, scan, inventory) -> decode (unpickler, sources, entries,
        symbols) -> catalog (decoded entries of a scan, the index) -> functions (which
        function a key was compiled from) -> guards (parse, evaluate, read)
        -> lookup (match: which entry torch loads) | keying (what a key is made of)
        -> trace (a run's TORCH_TRACE: explain, the usage store) -> prune (gc: policy,
        plan, execute; df) -> remote (Redis)

The top level holds what every layer shares: :mod:`~fxcache_core.errors` (errors
that name a parameter), :mod:`~fxcache_core.reasons` (reasons with stable codes),
:mod:`~fxcache_core.quantities` (durations and sizes) and :mod:`~fxcache_core.fsutil`
(link-safe file access: the only module that builds open flags).
"""

__version__ = "0.1.0"
