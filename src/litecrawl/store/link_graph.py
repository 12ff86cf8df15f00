"""The link graph's statements, written once for both backends (SQLite's spelling,
:mod:`litecrawl.store.dialect`).

``page_links`` holds each page's outgoing links, indexed by source page: a page's links are
written side by side. Links in are found through ``page_links_in`` (target key, link id), a
compact index merged in key order from ``page_links_in_new`` (the links written since, in id
order) once those are :data:`MERGE_EVERY` and an eighth of the links before them
(:func:`merge_due`). An index of target keys written with every link put
each link on its own index page once that index outgrew the page cache: the crawl's cost per
page grew with the graph (bench/README.md, issue 33); merged in order, each of its pages is
written once a merge.
"""

from __future__ import annotations

__all__ = [
    "IN_LINKS",
    "MERGE",
    "MERGE_EVERY",
    "MERGE_POSTGRES",
    "NEW_IN_LINKS",
    "NEW_IN_LINKS_SQLITE",
    "STAGED",
    "delete_links",
    "merge_due",
]

# The least links written between merges. A merge writes about every page of page_links_in
# (new keys fall all over it), so a fixed interval made a link's share of the merges grow with
# the graph (bench/README.md, issue 33, session 8); merging once the new links are also an
# eighth of the links before them (MERGE_SHARE) bounds it: each page of the index is written
# once per that many links. The links in of a page are looked for among the unmerged ones by
# a scan: up to an eighth of the graph.
MERGE_EVERY = 131_072
MERGE_SHARE = 8


def merge_due(staged: int, before: int, least: int = MERGE_EVERY) -> bool:
    """Whether to merge ``staged`` links (:data:`STAGED`'s first column) into the index of
    links in, ``before`` links having been written before them (its second)."""
    return staged >= max(least, before // MERGE_SHARE)


def delete_links(member: str) -> list[str]:
    """What removes the links of some source pages (``src {member}``, one parameter: the
    dialect's list), in order: from the links not merged first, so that on PostgreSQL a merge
    running beside is waited for (it holds those rows) and the next statement's snapshot
    sees what it moved."""
    of = f"FROM page_links WHERE src {member}"
    return [
        f"DELETE FROM page_links_in_new WHERE link_id IN (SELECT id {of})",
        f"DELETE FROM page_links_in WHERE (dst_key, link_id) IN (SELECT dst_key, id {of})",
        f"DELETE {of}",
    ]


# The links of some source pages, just written, into the links not yet merged.
NEW_IN_LINKS = (
    "INSERT INTO page_links_in_new (link_id, dst_key) "
    "SELECT id, dst_key FROM page_links WHERE src {member}"
)
# SQLite's: OR IGNORE, as its MERGE below (no row can conflict), so that it keeps no
# statement journal (store/sqlite/index.py says what one costs).
NEW_IN_LINKS_SQLITE = NEW_IN_LINKS.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)

# An upper bound of the links written since the last merge, and of the links before them (ids
# from the oldest link kept: links replaced since are counted too, so merges come rarer after
# many re-crawls of changed links), from the ends of the ids' indexes (a count would read every
# row; so would SQLite for max(id) - min(id) in one SELECT).
STAGED = (
    "SELECT coalesce(hi - lo + 1, 0), coalesce(lo - first, 0) FROM"
    " (SELECT (SELECT max(link_id) FROM page_links_in_new) AS hi,"
    " (SELECT min(link_id) FROM page_links_in_new) AS lo,"
    " (SELECT min(id) FROM page_links) AS first) AS ends"
)

# The links into a page (parameters: its key twice, its URL), as a condition on page_links l.
IN_LINKS = (
    "l.id IN (SELECT link_id FROM page_links_in WHERE dst_key = ?"
    " UNION ALL SELECT link_id FROM page_links_in_new WHERE dst_key = ?) AND l.dst = ?"
)

# SQLite's merge (one writer at a time). OR IGNORE: a plain INSERT of many rows inside the
# writer's transaction keeps a statement journal to undo itself on a conflict, and a merge's
# outgrows memory and goes to a temporary file (20 of 432 MiB written in 40,000 pages of
# `bench/write_growth.py links --links 18 --batch 20`: bench/README.md, issue 33, session 8);
# link ids are never handed out twice, so there is no conflict to ignore.
MERGE = (
    "INSERT OR IGNORE INTO page_links_in (dst_key, link_id) "
    "SELECT dst_key, link_id FROM page_links_in_new ORDER BY dst_key, link_id",
    "DELETE FROM page_links_in_new",
)

# PostgreSQL's moves the rows in one statement: a link another worker writes meanwhile is not
# in its snapshot, so it is neither moved nor deleted.
MERGE_POSTGRES = (
    "WITH moved AS (DELETE FROM page_links_in_new RETURNING dst_key, link_id) "
    "INSERT INTO page_links_in (dst_key, link_id) SELECT * FROM moved ORDER BY 1, 2"
)
