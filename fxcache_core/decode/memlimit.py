"""A memory budget around decoding one entry.

The bytes of an entry can ask the unpickler for far more memory than they
hold: CPython's C unpickler grows its memo array to twice a ``PUT``/
``BINPUT``/``LONG_BINPUT`` index and zero-fills it, so the 9 bytes
``\\x80\\x02Nr<4-byte index>.`` make it allocate, and touch, gigabytes; a
``BINBYTES8`` length is allocated before it is read. No check of the bytes
short of parsing every opcode in Python (15x the cost of decoding) finds all
such fields, so the budget is enforced by the kernel instead:
:func:`decoding_budget` lowers the process's soft ``RLIMIT_AS`` to its current
address-space size plus :func:`budget_for` the entry, for the duration of one
decode, and puts it back after. An allocation past it fails with
``MemoryError`` at once, before any memory is touched.

Costs about 7 us a decode (``/proc/self/statm`` read, ``setrlimit`` twice),
against 100-400 us for decoding an entry. Linux only: elsewhere (no
``/proc/self/statm``, or ``RLIMIT_AS`` not enforced) it does nothing, and
:data:`ENFORCED` says so. Never raises itself.
"""

from __future__ import annotations

import os

try:
    import resource
except ImportError:  # not POSIX
    resource = None  # type: ignore[assignment]

BASE_BUDGET_BYTES = 64 * 1024 * 1024
"""Address space a decode may add whatever the entry's size (bytes)."""
BUDGET_PER_BYTE = 4
"""... plus this many bytes per byte of the entry: decoding a real entry takes
at most ~2.6x its size at peak (measured with tracemalloc over a cache torch
wrote; strings dominate), so a valid entry never meets the budget."""
_SLACK = 4 * 1024 * 1024  # what the process may map between reading statm and setrlimit

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_state: dict = {"fd": None, "pid": None}


def budget_for(n_bytes: int) -> int:
    """Bytes of address space decoding an entry of ``n_bytes`` may add."""
    return BASE_BUDGET_BYTES + BUDGET_PER_BYTE * n_bytes


def _vm_bytes() -> int | None:
    """This process's address-space size now (bytes), from ``/proc/self/statm``.

    Read on every call (~4 us): the process can grow by gigabytes between two
    decodes (importing torch does), and a stale size would put the cap below
    what is already mapped.
    """
    st = _state
    try:
        if st["fd"] is None or st["pid"] != os.getpid():  # a forked worker reads its own
            st["fd"] = os.open("/proc/self/statm", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            st["pid"] = os.getpid()
        return int(os.pread(st["fd"], 64, 0).split()[0]) * _PAGE + _SLACK
    except (OSError, ValueError, IndexError):
        return None


def _enforced() -> bool:
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return False
    import sys

    return sys.platform.startswith("linux") and _vm_bytes() is not None


ENFORCED: bool = _enforced()
"""Whether :func:`decoding_budget` really bounds memory on this platform."""


class decoding_budget:  # noqa: N801 - used as a function: ``with decoding_budget(n):``
    """Run the block with at most :func:`budget_for` ``n_bytes`` more address
    space: an allocation beyond it raises ``MemoryError`` inside the block.

    The soft limit is only ever lowered (never above the hard limit, nor above
    a soft limit already lower) and is restored on the way out. Single-threaded
    use: the limit is the whole process's while the block runs. (A class rather
    than a generator: entering and leaving it costs no generator, once a decode.)
    """

    __slots__ = ("_n_bytes", "_restore")

    def __init__(self, n_bytes: int) -> None:
        self._n_bytes = n_bytes
        self._restore: tuple[int, int] | None = None

    def __enter__(self) -> None:
        if not ENFORCED:
            return
        vm = _vm_bytes()
        if vm is None:
            return
        try:
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        except (OSError, ValueError):
            return
        cap = vm + budget_for(self._n_bytes)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY and soft <= cap:
            return  # already at least this tight
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        except (OSError, ValueError):
            return
        self._restore = (soft, hard)

    def __exit__(self, *exc: object) -> None:
        restore, self._restore = self._restore, None
        if restore is not None:
            try:
                resource.setrlimit(resource.RLIMIT_AS, restore)
            except (OSError, ValueError):
                pass
