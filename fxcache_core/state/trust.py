"""What proves that a file still holds the bytes fxcache read from it: identity, time, file system.

fxcache's index (:mod:`fxcache_core.state.index`) keeps what an entry's bytes
decoded to under the file's identity, ``(dev, ino, size, mtime_ns, ctime_ns)``, as
git's index keeps a clean file's stat data. An identity stands for the bytes only
when three things hold, each decided here:

* the reading was not **racily clean** (:func:`racily_clean`): it ended later than
  the file system's timestamp granularity after the file's last change, so a write
  after it must move ``mtime`` or ``ctime``;
* the file system keeps a **change time no user call can set** and reports a
  change at once (:func:`identity_is_proof`): a local disk file system, not a
  network one (NFS, SMB/CIFS, 9p, Ceph...: attributes cached by the client, a
  change made on another host seen late) nor FUSE (whatever the daemon says);
* the record was written by fxcache (the index file is its own:
  :mod:`fxcache_core.state.own_db`).

The file systems are told apart by the device number a file's ``lstat`` gives,
looked up in ``/proc/self/mountinfo`` (the mount's ``fstype``). A device fxcache
cannot find there (no ``/proc``, another OS, an overlay reporting its lower
layer's device, a btrfs subvolume below the mount) is not proof: when unsure,
read the file again. Mirrors git's ``ie_match_stat``/``is_racy_timestamp``
(read-cache.c). Never opens a cache file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

RACY_FINE_NS = 20_000_000
"""How close to a file's last change (mtime or ctime) a read may end for the file to
count as racily clean, on a file system with sub-second timestamps: above the
kernel's timestamp clock tick (at most 10 ms), so a write in the same tick as the
read, which leaves the timestamps unchanged, cannot go unseen."""
RACY_COARSE_NS = 2_000_000_000
"""The same on a file system whose timestamps are whole seconds (FAT keeps 2 s)."""


def racily_clean(identity: tuple[int, int, int, int, int], read_ns: int) -> bool:
    """Whether bytes read of a file with ``identity`` (``(dev, ino, size, mtime_ns,
    ctime_ns)``), the read ending at ``read_ns`` (epoch ns), may differ from the file
    that identity will show later: the read ended within the file system's timestamp
    granularity of the file's last change, so a write just after it could leave the
    same identity (git's "racily clean" entries). Such a reading never becomes an
    index row, nor proves one; the next run reads the file again. A change time in
    the future is racy too."""
    _dev, _ino, _size, mtime_ns, ctime_ns = identity
    coarse = mtime_ns % 1_000_000_000 == 0 and ctime_ns % 1_000_000_000 == 0
    return read_ns - max(mtime_ns, ctime_ns) < (RACY_COARSE_NS if coarse else RACY_FINE_NS)


LOCAL_FILE_SYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "bcachefs", "f2fs", "jfs", "reiserfs", "nilfs2", "zfs",
    "tmpfs", "ramfs", "overlay",
})
"""The ``fstype`` names (``/proc/self/mountinfo``) whose identity proves a file's
bytes: local file systems that keep an inode change time of their own (FAT, exFAT
and NTFS drivers do not: their ``ctime`` follows ``mtime``, which ``os.utime``
puts back). Anything else, ``nfs``, ``nfs4``, ``cifs``, ``smb3``, ``9p``, ``ceph``,
``fuse.*``, ``fuseblk`` included, is not proof."""


def mount_types(mountinfo: str) -> dict[int, frozenset[str]]:
    """Device number (``os.makedev(major, minor)``) -> the ``fstype`` of every mount
    of it, from the text of ``/proc/self/mountinfo`` (proc(5): the third field is
    ``major:minor``, the field after the `` - `` separator the type). Lines that do
    not parse are left out."""
    out: dict[int, set[str]] = {}
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        try:
            major, minor = fields[2].split(":")
            fstype = fields[fields.index("-", 6) + 1]
            dev = os.makedev(int(major), int(minor))
        except (IndexError, ValueError):
            continue
        out.setdefault(dev, set()).add(fstype)
    return {d: frozenset(t) for d, t in out.items()}


def _read_mountinfo() -> str | None:
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def identity_is_proof(devs: Iterable[int], mountinfo: str | None = None) -> dict[int, bool]:
    """For each device of ``devs`` (``st_dev`` values), whether a file's identity on
    it proves its bytes: every mount of that device is of a
    :data:`LOCAL_FILE_SYSTEMS` type. False for a device not found in the mount table
    (``mountinfo``: its text; read from ``/proc/self/mountinfo`` when None, and
    when that cannot be read, nothing is proof)."""
    text = _read_mountinfo() if mountinfo is None else mountinfo
    types = {} if text is None else mount_types(text)
    return {d: bool(types.get(d)) and types[d] <= LOCAL_FILE_SYSTEMS for d in set(devs)}


__all__ = ["LOCAL_FILE_SYSTEMS", "RACY_COARSE_NS", "RACY_FINE_NS", "identity_is_proof", "mount_types",
           "racily_clean"]
