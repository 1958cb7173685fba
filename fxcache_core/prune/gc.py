"""Pruning the cache: a plan first, then its execution (the old single module's names).

gc is now four modules, lowest first: :mod:`~fxcache_core.prune.policy` (what
to prune), :mod:`~fxcache_core.prune.rules` (one ``_select_<rule>`` per policy
field), :mod:`~fxcache_core.prune.plan` (:func:`plan_gc`, :func:`plan_rm`,
:class:`GcPlan`) and :mod:`~fxcache_core.prune.execute` (:func:`execute_plan`,
:class:`GcResult`). This module only re-exports their names for callers that
import them from here; it defines nothing and decides nothing.
"""

from __future__ import annotations

# moved to prune.execute; callers outside prune/ move at merge
from fxcache_core.prune.execute import GcResult, execute_plan

# moved to prune.generated; callers outside prune/ move at merge
from fxcache_core.prune.generated import LOAD_OK

# moved to prune.plan; callers outside prune/ move at merge
from fxcache_core.prune.plan import GcPlan, _plan_rm, plan_gc, plan_rm

# moved to prune.policy; callers outside prune/ move at merge
from fxcache_core.prune.policy import TEMP_FILE_GRACE_S, GcPolicy

# moved to prune.removal; callers outside prune/ move at merge
from fxcache_core.prune.removal import Removal, last_use

__all__ = ["LOAD_OK", "TEMP_FILE_GRACE_S", "GcPlan", "GcPolicy", "GcResult", "Removal", "_plan_rm",
           "execute_plan", "last_use", "plan_gc", "plan_rm"]
