"""Errors fxcache raises for bad input.

Every error a user can cause (a wrong cache dir, an unknown key prefix, a
malformed shape spec, an entry that cannot be decoded, a guard string outside
the supported grammar) derives from :class:`FxcacheError`; the CLI turns each
into a one-line message and exit code 2.
"""

from __future__ import annotations


class FxcacheError(Exception):
    """Base class of every error caused by the input fxcache was given."""


class CacheDirError(FxcacheError):
    """The cache dir does not exist, is not a directory, or cannot be read."""


class KeyLookupError(FxcacheError):
    """A key prefix matches no key, or more than one key."""


class ShapeSpecError(FxcacheError):
    """A ``--shapes``/``--sym`` binding is malformed or names nothing the key has."""


class EntryDecodeError(FxcacheError):
    """An entry file is truncated, corrupt, or not a pickle of a known cache object."""


class EntryTooLarge(EntryDecodeError):
    """An entry needs more memory to decode than fxcache allows: not evidence that
    it is invalid (torch, with more memory, may load it)."""


class GuardParseError(FxcacheError):
    """A guards expression uses syntax outside the whitelist, or exceeds a size limit."""


class FunctionLookupError(FxcacheError):
    """No key was compiled from the function asked for (``--fn NAME``).

    Attributes:
        function: the name asked for.
        names: the functions the cache has keys of, sorted.
    """

    def __init__(self, function: str, names: tuple[str, ...] | list[str]) -> None:
        self.function, self.names = function, tuple(names)
        shown = ", ".join(self.names[:20]) + (f" and {len(self.names) - 20} more" if len(self.names) > 20 else "")
        super().__init__(f"no key was compiled from a function named {function!r}; "
                         + (f"the cache has keys of: {shown}" if self.names else "no key records its function"))
