"""What gc prunes: :class:`GcPolicy`, a frozen value checked when it is made.

One field per rule (:mod:`fxcache_core.prune.rules` has one ``_select_<rule>``
function per field); :meth:`GcPolicy.default` is what ``fxcache gc`` plans
with no rule given. Mirrors nothing in torch, which never prunes its caches;
the shape is huggingface_hub's ``DeleteCacheStrategy`` made before it runs.
Never looks at a cache: a policy is checked on its own fields only.
"""

from __future__ import annotations

from dataclasses import dataclass

from fxcache_core.errors import FxcacheError, param

TEMP_FILE_GRACE_S = 3600.0
"""Temp files and generated code younger than this (seconds) may belong to a
compile in flight (written, about to be loaded); never touched."""


class PolicyError(FxcacheError, ValueError):
    """A gc policy whose fields do not go together (a ``ValueError`` too, as it
    always was)."""


@dataclass(frozen=True)
class GcPolicy:
    """What to prune. An entry goes if any selected rule selects it.

    Attributes:
        older_than_s: entries last used more than this many seconds ago.
        max_size_bytes: then, least recently used first, until the entries
            left total at most this many bytes.
        keep_last: per key, keep at most the N most recently used entries.
        unreadable: entries that cannot be decoded or whose file name is not
            the sha256 of their content (torch names every entry so), and temp
            files older than :data:`TEMP_FILE_GRACE_S`.
        dangling: AOTAutograd entries whose forward or backward FX entry is
            gone (torch can never serve them).
        artifacts: generated-code files last used more than ``older_than_s``
            ago (which it needs), never younger than :data:`TEMP_FILE_GRACE_S`.
        stale_against: the installed torch's build component hashes
            (``((name, hash), ...)`` from :func:`fxcache_core.keying.current.current_build`):
            FX entries built by another torch or system, which no lookup can
            reach again (with the AOTAutograd entries that load them).
        stale_include_dir: the installed torch's include dir (with
            ``stale_against``): precompiled headers and compiled libraries
            built against other headers (:mod:`fxcache_core.cache.provenance`).
        orphaned_locks: lock files whose compile key, precompiled header, PGO
            state or Triton dir is gone, untouched for :data:`TEMP_FILE_GRACE_S`.
        now: the clock (epoch seconds) ages are measured against.
        trace_use: ``((entry name, last hit in a trace (epoch seconds, 0: none),
            compile seconds a trace recorded or None), ...)`` from
            :class:`fxcache_core.state.usage.UsageStore`: a hit is a use, whatever atime says.
        keep_costly_s: with ``max_size_bytes``: entries that took at least this
            many seconds to compile (as a trace recorded, else as the entry
            stores) go only once every cheaper entry is gone.

    The rules for what is not an entry (Triton kernels, precompiled headers,
    PGO state, locks, temp files) are :mod:`fxcache_core.prune.units`'s.

    Raises:
        PolicyError: ``artifacts`` without ``older_than_s``, or ``keep_costly_s``
            without ``max_size_bytes`` (a ``ValueError``).
    """

    older_than_s: float | None = None
    max_size_bytes: int | None = None
    keep_last: int | None = None
    unreadable: bool = False
    dangling: bool = False
    artifacts: bool = False
    stale_against: tuple[tuple[str, str], ...] | None = None
    stale_include_dir: str | None = None
    orphaned_locks: bool = False
    now: float | None = None
    trace_use: tuple[tuple[str, float, float | None], ...] = ()
    keep_costly_s: float | None = None

    def __post_init__(self) -> None:
        if self.artifacts and self.older_than_s is None:
            raise PolicyError(f"{param('artifacts')} prunes generated code by age: give "
                              f"{param('older_than_s')} too", param="artifacts", value=True)
        if self.keep_costly_s is not None and self.max_size_bytes is None:
            raise PolicyError(f"{param('keep_costly_s')} orders what {param('max_size_bytes')} removes: "
                              f"give {param('max_size_bytes')} too", param="keep_costly_s",
                              value=self.keep_costly_s)

    @classmethod
    def default(cls, now: float | None = None) -> GcPolicy:
        """What gc does with no policy given: only what torch can never use
        (``unreadable``, ``dangling`` and ``orphaned_locks``)."""
        return cls(unreadable=True, dangling=True, orphaned_locks=True, now=now)

    @property
    def is_empty(self) -> bool:
        return (self.older_than_s is None and self.max_size_bytes is None
                and self.keep_last is None and not self.unreadable and not self.dangling
                and not self.artifacts and self.stale_against is None and not self.orphaned_locks)
