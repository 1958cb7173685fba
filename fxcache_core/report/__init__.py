"""The data of ``fxcache report``'s page: a cache and a traced run, as ``df``, ``ls``,
``gc --dry-run``, ``coverage`` and ``explain`` report them, in one value with its JSON.
Never renders the page (the CLI does), never imports torch, never writes.

Lowest first: ``shape_maps`` (a key's entries over one or two dynamic dims, from
``coverage`` sweeps, with a run's calls placed on them); ``cache_report``
(:func:`~fxcache_core.report.cache_report.cache_report`: the page's whole data,
:class:`~fxcache_core.report.cache_report.CacheReport`)."""
