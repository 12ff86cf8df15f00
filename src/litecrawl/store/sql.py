"""What both backends' statements share: LIKE patterns, the link graph's key and what a batch
changes in it, the change bands, the stamp of a request's start, and the upserts of a processed
page and of a document."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any

from litecrawl.index.hamming import NEAR_DUPLICATE_DISTANCE
from litecrawl.store.dialect import Dialect

__all__ = [
    "CHANGE_BANDS",
    "DOCUMENT_COLUMNS",
    "MAX_LINKS_PER_PAGE",
    "TAKE_START",
    "UPSERT_PAGE",
    "change_bands",
    "changed_links",
    "document_sets",
    "insert_document",
    "like_prefix",
    "link_key",
    "near_resources",
    "page_sets",
    "take_start_params",
    "taken_start",
    "upsert_document",
]

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


@cache
def near_resources(dialect: Dialect) -> str:
    """The resources within the near-duplicate distance of each simhash of a list (the one
    parameter: a JSON array for SQLite, an array for PostgreSQL), as rows ``(simhash asked,
    resource id, its simhash)``; one sharing several bands with it comes once for each.

    Two simhashes that close agree on one of their four 16-bit bands at least
    (:mod:`litecrawl.index.simhash`): each band's index, on ``(band, simhash)``, is searched for
    the asked band and the distance checked there, in the index. Only the near resources come
    back, however many share a band: on a site of alike pages a band value is shared by more
    resources as the crawl grows, and reading them all made placing a page cost more and more
    (bench/README.md, issue 33)."""
    asked = (
        "SELECT unnest(?::bigint[]) AS h"
        if dialect.postgres
        else "SELECT value AS h FROM json_each(?)"
    )
    near = f"{dialect.hamming('r.simhash', 'q.h')} <= {NEAR_DUPLICATE_DISTANCE}"
    by_band = " UNION ALL ".join(
        f"SELECT q.h, r.id, r.simhash FROM q JOIN resources AS r"
        f" ON r.band{n} = ((q.h >> {16 * n}) & 65535) WHERE {near}{_bands_in(dialect, n)}"
        for n in range(4)
    )
    return dialect.sql(f"WITH q AS ({asked}) {by_band}")


def _bands_in(dialect: Dialect, n: int) -> str:
    """PostgreSQL's planner may join the asked simhashes to a sequential scan of every
    resource (seen at 120k random resources: 450 ms a look-up); the asked band values as an
    array keep it on the band's index whatever its statistics say. SQLite searches the index
    for each asked simhash by itself."""
    if not dialect.postgres:
        return ""
    return f" AND r.band{n} = ANY(ARRAY(SELECT ((h >> {16 * n}) & 65535)::int FROM q))"


def changed_links(
    graph: Sequence[tuple[str, Sequence[str]]], stored: Iterable[tuple[str, str]]
) -> tuple[list[str], list[tuple[str, str, int]]]:
    """What a batch's link graph changes: the source pages whose stored links go, and the
    ``(src, dst, dst_key)`` rows that replace them. ``stored``: the ``(src, dst)`` rows held for
    ``graph``'s pages. A page links each target once, not itself, its first
    :data:`MAX_LINKS_PER_PAGE` targets; a page whose targets are those stored (readers order
    them by URL) is left alone: a re-crawl of an unchanged page writes no link row (deleting
    and inserting its ~30 rows and their two index entries cost ~0.5 ms a page)."""
    held: dict[str, set[str]] = {}
    for src, dst in stored:
        held.setdefault(src, set()).add(dst)
    wanted: dict[str, list[str]] = {}
    for src, dsts in graph:  # a page given twice keeps its last links
        unique = dict.fromkeys(dsts)
        unique.pop(src, None)
        wanted[src] = list(unique)[:MAX_LINKS_PER_PAGE]
    changed = [src for src, dsts in wanted.items() if held.get(src, set()) != set(dsts)]
    rows = [(src, dst, link_key(dst)) for src in changed for dst in wanted[src]]
    return [src for src in changed if src in held], rows


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


# A request to a host starts at :now unless another one started after :after (less than the
# interval before :now): then the row is left as it was. Else :now is stamped as the host's
# last start and the next reservation comes no sooner than :until (docs/scaling.md#workers).
# Both SET expressions read the row as it was; RETURNING gives the last start in force.
TAKE_START = """
UPDATE hosts SET
  last_start = CASE WHEN last_start <= :after THEN :now ELSE last_start END,
  next_start = CASE WHEN last_start <= :after AND next_start < :until THEN :until
    ELSE next_start END
WHERE host = :host
RETURNING last_start
"""


def take_start_params(
    host: str, interval: float, now: float, force: bool = False
) -> dict[str, object]:
    """:data:`TAKE_START`'s parameters (a microsecond's slack for the float arithmetic);
    ``force``: stamp ``now`` unless a later start is stamped already."""
    after = now if force else now - interval + 1e-6
    return {"host": host, "now": now, "after": after, "until": now + interval}


def taken_start(row: tuple[Any, ...] | None, interval: float, now: float) -> float:
    """When the request may start, from :data:`TAKE_START`'s row: ``now`` when it was
    stamped (or the host has no row: nothing was reserved), else the interval after the
    start in force."""
    if row is None:
        return now
    last = float(row[0])
    return now if last == now else last + interval


# A document's columns a reader of the index sees: its updated_at moves when one changes
_DOCUMENT_SEEN = (
    "resource_id",
    "title",
    "keywords",
    "text_preview",
    "language",
    "author",
    "published",
    "content_type",
    "status",
    "extraction_mode",
    "markdown_path",
    "canonical",
)
DOCUMENT_COLUMNS = (*_DOCUMENT_SEEN[:9], "depth", "source", *_DOCUMENT_SEEN[9:])


def document_sets(dialect: Dialect, new: Callable[[str], str]) -> str:
    """The SET list of a document's row (``new``: a column name, or ``rewritten``, whether its
    resource's text was rewritten in place, to the SQL of its new value); ``updated_at`` moves
    only when what a reader sees changed."""
    changed = " OR ".join(f"documents.{c} {dialect.is_distinct} {new(c)}" for c in _DOCUMENT_SEEN)
    sets = ",\n  ".join(f"{c} = {new(c)}" for c in DOCUMENT_COLUMNS)
    return f"""
  updated_at = CASE WHEN {new("rewritten")} OR {changed}
                    THEN {dialect.now_text} ELSE documents.updated_at END,
  {sets}
"""


@cache
def insert_document(dialect: Dialect) -> str:
    """A new document's row (named parameters: its columns; others are ignored)."""
    return dialect.sql(f"""
INSERT INTO documents (url, {", ".join(DOCUMENT_COLUMNS)})
VALUES (:url, {", ".join(f":{c}" for c in DOCUMENT_COLUMNS)})""")


def upsert_document(dialect: Dialect) -> str:
    """A document's row (named parameters: its columns and ``rewritten``), inserted or
    updated."""
    new = lambda c: ":rewritten" if c == "rewritten" else f"excluded.{c}"  # noqa: E731
    update = dialect.sql(f"\nON CONFLICT (url) DO UPDATE SET{document_sets(dialect, new)}")
    return insert_document(dialect) + update


# A processed page's row (a finalize's): its claim released, the fetch's outcome, the schedule
# (a page whose sitemap lastmod is newer than the fetch, with ``recheck_lastmod``, is due again
# at once), what was not learned this time kept as it was; a change rate only with a compared
# re-fetch behind it (a damaged change record starts again at checks 0, its old rate gone too).
# ``new`` names where each new value comes from: the statement's parameters (the upsert), or
# PostgreSQL's batch of rows (``v.column``, store/postgres/writes.py).
def page_sets(new: Callable[[str], str]) -> str:
    """The SET list of a processed page's row."""
    return f"""
  last_crawl_time = {new("last_crawl_time")},
  next_crawl_time = CASE
    WHEN {new("recheck_lastmod")} AND pages.lastmod > coalesce(pages.last_crawl_time, 0)
    THEN {new("last_crawl_time")} ELSE {new("next_crawl_time")} END,
  processing_time = NULL,
  worker_id = NULL,
  lost = 0,
  lost_alone = 0,
  content_hash = coalesce({new("content_hash")}, pages.content_hash),
  state = {new("state")},
  status = {new("status")},
  error = {new("error")},
  content_type = coalesce({new("content_type")}, pages.content_type),
  etag = coalesce({new("etag")}, pages.etag),
  last_modified = coalesce({new("last_modified")}, pages.last_modified),
  fetch_count = pages.fetch_count + 1,
  response_ms = coalesce({new("response_ms")}, pages.response_ms),
  kind = coalesce({new("kind")}, pages.kind),
  checks = coalesce({new("checks")}, pages.checks),
  changes = coalesce({new("changes")}, pages.changes),
  change_rate = CASE WHEN coalesce({new("checks")}, pages.checks) > 0
    THEN coalesce({new("change_rate")}, pages.change_rate) END,
  change_history = coalesce({new("change_history")}, pages.change_history),
  recrawl_interval = coalesce({new("recrawl_interval")}, pages.recrawl_interval)
"""


UPSERT_PAGE = f"""
INSERT INTO pages (norm_url, host, last_crawl_time, next_crawl_time, processing_time, content_hash,
                   depth, state, status, error, content_type, etag, last_modified, fetch_count,
                   response_ms, kind, part)
VALUES (:norm_url, :host, :last_crawl_time, :next_crawl_time, NULL, coalesce(:content_hash, ''),
        :depth, :state, :status, :error, :content_type, :etag, :last_modified, 1, :response_ms,
        coalesce(:kind, 'page'), :part)
ON CONFLICT (norm_url) DO UPDATE SET{page_sets(lambda column: f":{column}")}"""
