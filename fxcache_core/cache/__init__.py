"""The cache dir on disk: where it is, what a key is, the scan into frozen records,
the inventory of every file by kind, and which torch built an artifact."""
