"""The Typer app and its global options; each command lives in its own module
(``ls``, ``df``, ``guards``, ``match``, ``verify``, ``key``, ``gc``), registered by
:mod:`fxcache_cli.app`."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ._context import state

app = typer.Typer(
    help="See into, and keep in order, PyTorch Inductor's on-disk compile cache.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts show [d0,d1,...] literally
    context_settings={"help_option_names": ["-h", "--help"]},
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]


def _version(value: bool) -> None:
    if value:
        from fxcache_core import __version__

        sys.stdout.write(f"fxcache {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _global(
    cache_dir: Annotated[
        str | None,
        typer.Option(
            "--cache-dir",
            help="The Inductor cache dir. Default: $TORCHINDUCTOR_CACHE_DIR, else "
            "<tempdir>/torchinductor_<user>, as torch resolves it.",
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
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_version, help="Print fxcache's version and exit."),
    ] = False,
) -> None:
    state.cache_dir = cache_dir
    state.remote = remote
