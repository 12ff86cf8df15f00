"""How the CLI talks: rich on a terminal, plain ``key=value`` log lines otherwise."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping

from rich.console import Console
from rich.table import Table

__all__ = ["console", "print_summary", "setup_logging"]

console = Console(stderr=True)


def setup_logging(verbose: bool, quiet: bool) -> None:
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter("%(asctime)s level=%(levelname)s logger=%(name)s msg=%(message)s")
    )
    root = logging.getLogger("litecrawl")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False


def print_summary(title: str, summary: Mapping[str, object]) -> None:
    """A table on a terminal; ``key: value`` lines (greppable) otherwise."""
    if console.is_terminal:
        table = Table(title=title, show_header=False)
        for key, value in summary.items():
            table.add_row(key, _show(value))
        console.print(table)
    else:
        for key, value in summary.items():
            print(f"{key}: {_show(value)}", file=sys.stderr)


def _show(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    return str(value)
