"""Where the Inductor cache lives on disk.

Mirrors ``torch/_inductor/runtime/cache_dir_utils.py`` (``cache_dir`` and
``default_cache_dir``) without importing torch, and without its side effects:
torch creates the directory and exports ``TORCHINDUCTOR_CACHE_DIR``; fxcache
only reads.
"""

from __future__ import annotations

import getpass
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

from fxcache_core.cache.blob import as_cache_dir, looks_like_blob, read_blob
from fxcache_core.cache.standalone import artifact_header, dir_as_cache, read_artifact
from fxcache_core.errors import CacheDirError, param

ENV_VAR = "TORCHINDUCTOR_CACHE_DIR"


def default_cache_dir() -> Path:
    """Torch's default cache dir: ``<tempdir>/torchinductor_<user>``.

    The user name comes from :func:`getpass.getuser`; when that fails (no
    passwd entry, e.g. in a container) torch uses ``uid_<uid>``, or
    ``unknown_user`` where there is no ``os.getuid``. Characters that are not
    allowed in Windows file names (``\\ / : * ? " < > |``) become ``_``.
    The fbcode-only ``/var/tmp`` branch of torch is not modelled.
    Mirrors ``default_cache_dir`` in torch/_inductor/runtime/cache_dir_utils.py.
    """
    try:
        username = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        getuid = getattr(os, "getuid", None)
        username = f"uid_{getuid()}" if callable(getuid) else "unknown_user"
    sanitized = re.sub(r'[\\/:*?"<>|]', "_", username)
    return Path(tempfile.gettempdir()) / f"torchinductor_{sanitized}"


def resolve_cache_dir(
    explicit: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    explicit_name: str = "cache_dir",
) -> Path:
    """The absolute cache dir torch would use, or ``explicit`` when given.

    Order: ``explicit`` (the ``cache_dir`` a caller gives), then
    ``$TORCHINDUCTOR_CACHE_DIR``, then :func:`default_cache_dir`. Like torch,
    the result is made absolute (``os.path.abspath``, no symlink resolution).
    A torch mega-cache blob, a ``standalone_compile`` artifact file, or a dir of
    such artifacts (vLLM's) is laid out as a private temporary cache dir, which is
    returned (:mod:`fxcache_core.cache.blob`, :mod:`fxcache_core.cache.standalone`).

    Raises:
        BlobError: a blob or artifact is damaged or of an unknown kind.
        CacheDirError: the directory does not exist, is not a directory, or cannot
            be looked up (a name longer than the system allows, a loop of links); the
            message names where it came from (for ``explicit``, the parameter
            ``explicit_name`` that gave it, such as ``"other_cache_dir"``, through
            :func:`~fxcache_core.errors.param`, which the error also carries as its
            ``param``, with ``explicit`` as its ``value``; else the variable or
            "default").
    """
    environ = os.environ if env is None else env
    raw = explicit if explicit is not None else environ.get(ENV_VAR)
    source = param(explicit_name) if explicit is not None else (ENV_VAR if raw is not None else "default")
    given = {"param": explicit_name, "value": explicit} if explicit is not None else {}
    path = Path(os.path.abspath(raw)) if raw is not None else default_cache_dir()
    try:  # a name over NAME_MAX, a loop of links...: one line, never a traceback
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise CacheDirError(f"cache dir {path} ({source}) does not exist", **given) from None
    except OSError as e:
        raise CacheDirError(f"cache dir {path} ({source}) cannot be read: {e.strerror or e}", **given) from None
    except ValueError:  # a NUL byte in the name
        raise CacheDirError(f"cache dir {path!r} ({source}) is not a valid path", **given) from None
    if path.is_file() and artifact_header(path) is not None:  # a standalone_compile artifact
        return as_cache_dir(read_artifact(path), shown=f"{path} (standalone_compile artifact)")
    if path.is_file() and looks_like_blob(path):  # a mega-cache blob
        return as_cache_dir(read_blob(path))
    if not path.is_dir():
        raise CacheDirError(f"cache dir {path} ({source}) is not a directory", **given)
    if not os.access(path, os.R_OK | os.X_OK):
        raise CacheDirError(f"cache dir {path} ({source}) is not readable", **given)
    if path.name in ("fxgraph", "aotautograd") and not (path / "fxgraph").exists():
        raise CacheDirError(f"{path} is the {path.name}/ folder inside a cache dir: give its parent",
                            **given)
    if not _looks_like_cache(path):
        below = dir_as_cache(path)  # a dir of standalone_compile artifacts (vLLM's)
        if below is not None:
            return below
        raise CacheDirError(
            f"{path} ({source}) does not look like an Inductor cache dir "
            "(nothing in it that torch writes, and it is not empty)", **given
        )
    return path


TORCH_DIRS = frozenset({"fxgraph", "aotautograd", "triton", "precompiled_headers", "dynamo", "locks",
                        "aoti_eager", "cache", "autoheuristic"})
"""Dirs torch writes in a cache dir (see :mod:`fxcache_core.cache.inventory`)."""


def _looks_like_cache(path: Path) -> bool:
    """A dir torch could have written: empty (nothing compiled yet), or holding
    one of torch's own subdirs (:data:`TORCH_DIRS`: entries, Triton kernels,
    precompiled headers alone...), two-character code dirs of ``c<hash>``
    files, or a Triton cache dir of its own (``$TRITON_CACHE_DIR``)."""
    try:
        names = os.listdir(path)
    except OSError:
        return False
    if not names:
        return True
    if TORCH_DIRS.intersection(names):
        return True
    # Kernel buckets: <2 chars>/c<hash>.{py,cpp,so,...} as torch's code cache writes them.
    for n in names:
        if re.fullmatch(r"[a-z0-9]{2}", n) and (path / n).is_dir():
            try:
                if any(re.match(r"c[a-z0-9]{51}", f) for f in os.listdir(path / n)):
                    return True
            except OSError:
                continue
    from fxcache_core.cache.inventory import looks_like_triton_cache

    return looks_like_triton_cache(path)


def triton_cache_dir(root: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """``$TRITON_CACHE_DIR`` (absolute) when it is set, is a dir, and is not the
    Inductor cache dir ``root`` or inside it; else None. Torch sends Triton's
    kernels there instead of ``<root>/triton/<device>`` (``triton_cache_dir`` in
    torch/_inductor/runtime/cache_dir_utils.py)."""
    raw = (os.environ if env is None else env).get("TRITON_CACHE_DIR")
    if not raw:
        return None
    path = Path(os.path.abspath(raw))
    if not path.is_dir():
        return None
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    if rel == os.curdir or not rel.startswith(os.pardir):
        return None
    return path
