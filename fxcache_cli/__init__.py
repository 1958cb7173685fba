"""fxcache_cli: the ``fxcache`` command. Parses arguments, calls fxcache_core, renders with rich."""
