"""The ``fxcache`` program: its Typer app, global options, the group that loads
commands lazily, and :func:`main`, the console script's entry point.

Every decision lives in :mod:`fxcache_core`; the commands (one module each in
this package, named in :data:`fxcache_cli._commands.commands_dict` and imported
only when they run) parse, call core, and turn its values into text or JSON
(``--json``) through :mod:`fxcache_cli._output`. :class:`LazyGroup` imports a
command's module only when that command runs (or its ``--help`` is asked for),
so ``fxcache --help`` stays cheap. Errors the user caused become one line on
stderr and exit code 2 (:mod:`fxcache_cli._errors`). Never imports fxcache_core
at module level (``--version`` reads ``fxcache_core.__version__``, the
package's ``__init__`` only).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from . import _errors
from ._commands import commands_dict
from ._context import close_all, state
from ._output import fail


class LazyGroup(TyperGroup):
    """A TyperGroup over :data:`commands_dict`: lists and summarises commands from
    the table, builds a command (typer's own way, as ``app.command(name)(fn)`` would)
    only when asked for it."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(commands_dict)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in commands_dict:
            info = commands_dict[cmd_name]
            fn = getattr(importlib.import_module(info.module), info.function)
            one = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False)
            one.command(cmd_name)(fn)
            self.commands[cmd_name] = typer.main.get_command_from_info(
                one.registered_commands[0], pretty_exceptions_short=True, rich_markup_mode=None)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        from typer._click.utils import make_default_short_help

        limit = formatter.width - 6 - max(map(len, commands_dict))
        rows = [(name, make_default_short_help(info.summary, limit).strip()) for name, info in commands_dict.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        """Shell completion (``--install-completion``) of a command name, from the
        table: typer's own would import every command module on each TAB."""
        from typer._click.shell_completion import CompletionItem
        from typer._click.utils import make_default_short_help

        items = [CompletionItem(name, help=make_default_short_help(info.summary))
                 for name, info in commands_dict.items() if name.startswith(incomplete)]
        # The group's own options (--cache-dir...): click's Command.shell_complete.
        return items + super(TyperGroup, self).shell_complete(ctx, incomplete)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        # typer's own, but suggesting close names ("Did you mean ...?") from the
        # table, not from the commands loaded so far.
        from difflib import get_close_matches

        from typer._click.exceptions import UsageError

        try:
            return self._click_resolve_command(ctx, args)
        except UsageError as e:
            matches = get_close_matches(args[0], list(commands_dict)) if args else []
            if matches:
                e.message = f"{e.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise


app = typer.Typer(
    cls=LazyGroup,
    help="See into, and keep in order, PyTorch Inductor's on-disk compile cache.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion: typer's, for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts show [d0,d1,...] literally
    context_settings={"help_option_names": ["-h", "--help"]},
)

def _version(value: bool) -> None:
    if value:
        from fxcache_core import __version__

        sys.stdout.write(f"fxcache {__version__}\n")
        raise typer.Exit(_errors.SUCCESS)


_SOURCE_DIR_ENV = "FXCACHE_SOURCE_DIR"
"""The environment variable that gives ``--source-dir``'s pairs when the option is not given."""


@app.callback()
def _global(
    ctx: typer.Context,
    cache_dir: Annotated[
        str | None,
        typer.Option(
            "--cache-dir",
            help="The Inductor cache dir. Default: $TORCHINDUCTOR_CACHE_DIR, else "
            "<tempdir>/torchinductor_<user>, as torch resolves it. A torch mega-cache blob, a "
            "standalone_compile artifact or a dir of them (vLLM's) is read as a cache too.",
            show_default=False,
        ),
    ] = None,
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote",
            help="Work on Inductor's remote cache on Redis instead: redis://host:port/db, or env "
            "(torch's TORCHINDUCTOR_REDIS_URL, else TORCHINDUCTOR_REDIS_HOST/_PORT).",
            show_default=False,
        ),
    ] = None,
    source_dir: Annotated[
        list[str] | None,
        typer.Option(
            "--source-dir",
            metavar="OLD=NEW",
            help="Read a compiled function's source file recorded under the directory OLD from NEW "
            "instead (a cache built on another machine, a moved checkout); repeatable, the longest "
            "OLD wins, both absolute. The file there must still hold the function at its recorded line. "
            "Default: $FXCACHE_SOURCE_DIR, OLD=NEW pairs separated by the path separator (':').",
            show_default=False,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_version, help="Print fxcache's version and exit."),
    ] = False,
) -> None:
    state.cache_dir = cache_dir
    state.remote = remote
    said = "--source-dir"
    if not source_dir:
        said = _SOURCE_DIR_ENV
        source_dir = [item for item in os.environ.get(_SOURCE_DIR_ENV, "").split(os.pathsep) if item]
    if source_dir:
        from fxcache_core.functions.source_dirs import use_source_dirs

        pairs = []
        for item in source_dir:
            old, eq, new = item.partition("=")
            if not eq:
                fail(f"{said} {item!r}: expected OLD=NEW (two absolute directories)")
            pairs.append((old, new))
        ctx.call_on_close(use_source_dirs(pairs, None if said == "--source-dir" else said))


def _stdout_gone() -> None:
    """Point stdout at /dev/null, so that Python's final flush of what is still
    buffered cannot fail again ("Exception ignored ... BrokenPipeError")."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main() -> None:
    """Entry point of the ``fxcache`` console script.

    Exit codes: 0 success (for ``match``: every function hits), 1 ``match``: a
    miss or a new graph, ``verify``: a bad entry, ``gc``: planned paths left (or
    the user declined), 2 bad input (one line on stderr), 3 ``match``: undecided,
    130 interrupted, 141 the reader of stdout went away (``fxcache ls | head``),
    quietly, as a process killed by SIGPIPE.
    """
    from fxcache_core.errors import use_names

    from ._flags import flag_of

    restore = use_names(flag_of)  # core texts made during the run name flags, not parameters
    try:
        try:
            code = app(standalone_mode=False)
            sys.stdout.flush()
        finally:
            close_all()
            restore()
    except BrokenPipeError:
        _stdout_gone()
        sys.exit(_errors.BROKEN_PIPE)
    except SystemExit:
        # click turns EPIPE into exit 1 after wrapping stdout in its PacifyFlushWrapper.
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":
            _stdout_gone()
            sys.exit(_errors.BROKEN_PIPE)
        raise
    except (Exception, KeyboardInterrupt) as e:  # FxcacheError, usage errors...: _errors.CLI_ERROR_MAPPINGS
        _errors.handle(e)
    sys.exit(code if isinstance(code, int) else 0)
