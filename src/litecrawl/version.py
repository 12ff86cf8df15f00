"""The installed version, read once (``0.0.0`` when run from a bare source tree)."""

from importlib import metadata

__all__ = ["VERSION"]

try:
    VERSION = metadata.version("litecrawl")
except metadata.PackageNotFoundError:  # pragma: no cover - no installed metadata
    VERSION = "0.0.0"
