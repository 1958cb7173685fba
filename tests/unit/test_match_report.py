"""What a key's lookup says, independent of how it was judged."""

from __future__ import annotations

from dataclasses import replace

from fxcache_core.cache.keys import KeyKind
from fxcache_core.cache.scan import CacheKey
from fxcache_core.lookup.match_report import KeyMatch
from fxcache_core.reasons import Reason


def test_a_key_says_each_thing_it_cannot_tell_once():
    """Two rules that find the same argument unknown (a float read twice, a reason the
    keys beside it share) give one line, in the order first found."""
    k = CacheKey(KeyKind.AOT_AUTOGRAD, "a0", "/nowhere/a0", ())
    a = Reason("lr is not readable", "float-provenance-unknown")
    b = Reason("act is not recorded", "constant-unrecorded")
    m = replace(KeyMatch(k, True, uncertain=(a, b)), uncertain=(a, b, a))
    assert m.uncertain == (a, b) and [r.code for r in m.uncertain] == [a.code, b.code]
