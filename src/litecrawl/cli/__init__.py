"""The ``litecrawl`` command: thin typer commands that build a config and call the library."""

from litecrawl.cli.app import app, main

__all__ = ["app", "main"]
