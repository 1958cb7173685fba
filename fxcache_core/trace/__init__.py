"""A run's TORCH_TRACE: the record reader, the run's compiles and lookups, the cache
dir a run is related to (``run_cache``), a traced call's inputs, explain (its report
values and the nearest-key search), and the usage store (which imports nothing else
of this package: gc reads it)."""
