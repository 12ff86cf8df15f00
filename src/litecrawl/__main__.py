"""``python -m litecrawl`` runs the CLI."""

from litecrawl.cli import main

main()
