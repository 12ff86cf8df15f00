"""What both backends' statements share: LIKE patterns and the link graph's key."""

from __future__ import annotations

import zlib

__all__ = ["CHANGE_BANDS", "MAX_LINKS_PER_PAGE", "change_bands", "like_prefix", "link_key"]

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


# The pages re-fetched at least once, by what their checks found (docs/freshness.md): totals,
# then pages by estimated change rate. No placeholders: the same text in both dialects.
_BANDS = (
    ("changing hourly or more often", "change_rate >= 1.0 / 3600"),
    ("daily or more often", "change_rate < 1.0 / 3600 AND change_rate >= 1.0 / 86400"),
    ("weekly or more often", "change_rate < 1.0 / 86400 AND change_rate >= 1.0 / 604800"),
    ("less often", "change_rate < 1.0 / 604800"),
)
CHANGE_BANDS = (
    "SELECT count(*), coalesce(sum(checks), 0), coalesce(sum(changes), 0), "
    "coalesce(sum(CASE WHEN changes = 0 THEN 1 ELSE 0 END), 0), "
    + ", ".join(
        f"coalesce(sum(CASE WHEN changes > 0 AND {cond} THEN 1 ELSE 0 END), 0)"
        for _, cond in _BANDS
    )
    + " FROM pages WHERE checks > 0"
)


def change_bands(row: tuple[object, ...]) -> dict[str, int]:
    """:data:`CHANGE_BANDS`' row, named ({} when no page was re-fetched yet)."""
    names = ["pages re-fetched", "checks", "changes found", "no change seen"]
    counts = [int(str(v)) for v in row]
    if not counts or not counts[0]:
        return {}
    return dict(zip(names + [name for name, _ in _BANDS], counts, strict=True))
