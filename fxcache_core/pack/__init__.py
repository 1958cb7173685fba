"""Ship a warm cache: pack what a run needs (select, closure, archive), unpack it verified (unpack, install), and say whether it will hit (will_hit)."""
