"""A run's TORCH_TRACE: the record reader, the run's compiles and lookups, a traced
call's inputs, and explain (its report values, the nearest-key search, the root
cause). A trace is untrusted input: every size, count and number read from it is
bounded. Never imports torch and never writes fxcache's state (the usage store is
:mod:`fxcache_core.state.usage`).

Lowest first: ``reader`` (one record at a time, bounded); ``record_values`` (a
record's values, as untrusted input); ``steps`` (the C++ compile steps of
``chromium_event``); ``run_facts`` (TraceRun, TraceCompile, TraceLookup: the
frozen facts); ``run`` (read_run: one ``_on_<event>`` handler per event read);
``run_cache`` (the cache dir a run is related to); ``constants`` (the Python values
Dynamo's guards pinned, per key); ``call`` (a traced call's inputs, for match); ``user_terms`` (torch's names as
the user writes them); ``nearest`` (the nearest key and how it differs);
``run_summary`` (a run in one line, and its causes); ``explain_report`` (what
explain reports); ``root_cause`` (the one component that explains a new key);
``dynamic_dims`` (a recompile that made dims symbolic); ``rebuilt`` (hits that
still compiled); ``explain`` (explain: each lookup related to the cache)."""
