"""What both backends' statements share: LIKE patterns and the link graph's key."""

from __future__ import annotations

import zlib

__all__ = ["MAX_LINKS_PER_PAGE", "like_prefix", "link_key"]

# A page with more links than this (a sitemap-like index, a spam page) keeps its first ones: the
# graph is for people looking at a page, not a complete web graph.
MAX_LINKS_PER_PAGE = 1000


def like_prefix(text: str) -> str:
    """``text`` as a LIKE prefix pattern (``ESCAPE '\\'``) with its own % and _ taken
    literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def link_key(url: str) -> int:
    """The indexed key of a link's target (a collision only costs a row read: the URL is
    compared too)."""
    return zlib.crc32(url.encode())
