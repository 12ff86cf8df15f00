"""The link graph's statements, written once for both backends (SQLite's spelling,
:mod:`litecrawl.store.dialect`).

``page_links`` holds each page's outgoing links, indexed by source page: a page's links are
written side by side. Links in are found through ``page_links_in`` (target key, link id), a
compact index merged in key order every :data:`MERGE_EVERY` links from ``page_links_in_new``
(the links written since, in id order). An index of target keys written with every link put
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
    "STAGED",
    "delete_links",
]

# Links written between merges: a merge writes at most every page of page_links_in once
# (~25,000 at 200k kit pages, 6 million links); the links in of a page are looked for among
# up to this many unmerged ones by a scan.
MERGE_EVERY = 131_072


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

# An upper bound of the links written since the last merge, from the ends of the id's index
# (a count would read every row; so would SQLite for max(id) - min(id) in one SELECT).
STAGED = (
    "SELECT coalesce((SELECT max(link_id) FROM page_links_in_new)"
    " - (SELECT min(link_id) FROM page_links_in_new) + 1, 0)"
)

# The links into a page (parameters: its key twice, its URL), as a condition on page_links l.
IN_LINKS = (
    "l.id IN (SELECT link_id FROM page_links_in WHERE dst_key = ?"
    " UNION ALL SELECT link_id FROM page_links_in_new WHERE dst_key = ?) AND l.dst = ?"
)

# SQLite's merge (one writer at a time).
MERGE = (
    "INSERT INTO page_links_in (dst_key, link_id) "
    "SELECT dst_key, link_id FROM page_links_in_new ORDER BY dst_key, link_id",
    "DELETE FROM page_links_in_new",
)

# PostgreSQL's moves the rows in one statement: a link another worker writes meanwhile is not
# in its snapshot, so it is neither moved nor deleted.
MERGE_POSTGRES = (
    "WITH moved AS (DELETE FROM page_links_in_new RETURNING dst_key, link_id) "
    "INSERT INTO page_links_in (dst_key, link_id) SELECT * FROM moved ORDER BY 1, 2"
)
