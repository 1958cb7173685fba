"""Skip Dynamo's guard-latency profile in the tests' torch processes.

After Dynamo builds a compiled frame's guards it times one evaluation of them, first
flushing the CPU's caches (``profile_guard_manager`` in torch/_dynamo/guards.py, called
by ``CheckFunctionManager``), to report a compile metric (``guard_latency_us``). Here that
costs about 0.15 s of CPU per compiled frame, in every build and every torch lookup of
the suite: a few percent of ``make test`` on two cores. The measurement writes nothing
into a cache, decides no guard and changes no graph, and fxcache reads no such metric,
so the processes the suite forks its torch work from (the zygote of the builds, the
oracle's fork server) replace it with one that reports no latency. Guards are still
built and still checked once against the frame's own locals, as torch does.
"""

from __future__ import annotations


def skip_guard_latency_profile() -> None:
    """Make ``torch._dynamo.guards.profile_guard_manager`` return 0.0 without timing
    anything. Call after ``import torch._dynamo`` in a process that forks torch work;
    its children inherit it."""
    import torch._dynamo.guards as guards

    if hasattr(guards, "profile_guard_manager"):
        guards.profile_guard_manager = _no_profile


def _no_profile(*args: object, **kwargs: object) -> float:
    return 0.0
