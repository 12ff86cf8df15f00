"""The export's reading of the documents table, one statement for both backends.

:func:`documents_query` builds the ``SELECT`` that :meth:`IndexReader.documents` streams: the
documents' columns, their resource's text when asked, filtered by :class:`DocumentFilter`; only
the placeholder differs (``?`` for SQLite, ``%s`` for PostgreSQL).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from litecrawl.store.dialect import Dialect
from litecrawl.store.sql import like_prefix

__all__ = ["PAGE_COLUMNS", "DocumentFilter", "documents_query", "fetched_query"]


@dataclass(frozen=True, slots=True)
class DocumentFilter:
    """Which documents to read; every field that is set must hold (empty: no condition).

    ``since``: updated at or after this UTC time (``YYYY-MM-DD HH:MM:SS``). ``hosts``: their
    page's ``host[:port]``, lower case (one without a port matches any port).
    ``content_types``: media types (``text/html``) or families (``text/*``), matched against
    the start of the stored Content-Type, without regard to case. ``states``: their page's
    state (:data:`litecrawl.store.states.STATES` values).
    """

    since: str | None = None
    hosts: tuple[str, ...] = ()
    content_types: tuple[str, ...] = ()
    states: tuple[int, ...] = ()


_PORT = re.compile(r":[0-9]+$")


def _media_pattern(media: str) -> str:
    """``text/*`` -> ``text/%``; ``text/html`` -> ``text/html%`` (charset may follow)."""
    media = media.lower()
    return like_prefix(media[:-1] if media.endswith("/*") else media)


def _conditions(
    flt: DocumentFilter, pages: str, content_type: str, placeholder: str
) -> tuple[list[str], list[object]]:
    """The host, state and content type conditions (``pages``: the pages table's alias)."""
    where: list[str] = []
    params: list[object] = []
    if flt.hosts:
        either = []
        for host in flt.hosts:
            either.append(f"{pages}.host = {placeholder}")
            params.append(host)
            if not _PORT.search(host):  # 127.0.0.1 is also 127.0.0.1:8080
                either.append(f"{pages}.host LIKE {placeholder} ESCAPE '\\'")
                params.append(like_prefix(host + ":"))
        where.append("(" + " OR ".join(either) + ")")
    if flt.states:
        where.append(f"{pages}.state IN ({', '.join([placeholder] * len(flt.states))})")
        params.extend(flt.states)
    if flt.content_types:
        like = f"lower({content_type}) LIKE {placeholder} ESCAPE '\\'"
        where.append("(" + " OR ".join([like] * len(flt.content_types)) + ")")
        params.extend(_media_pattern(media) for media in flt.content_types)
    return where, params


def fetched_query(
    since: int | None, flt: DocumentFilter, placeholder: str
) -> tuple[str, list[object]]:
    """The URLs fetched with a 2xx answer (at or after the epoch ``since``) that ``flt`` keeps
    (its ``since`` aside: the caller's is a fetch time), in the order they were fetched."""
    where, params = _conditions(flt, "pages", "content_type", placeholder)
    where[:0] = ["last_crawl_time IS NOT NULL", "status BETWEEN 200 AND 299"]
    if since is not None:
        where.append(f"last_crawl_time >= {placeholder}")
        params.append(since)
    sql = f"SELECT norm_url FROM pages WHERE {' AND '.join(where)}"
    return sql + " ORDER BY last_crawl_time, norm_url", params


# columns of the page row a document is exported with (its change statistics)
PAGE_COLUMNS = frozenset({"checks", "changes", "change_rate", "recrawl_interval"})


def documents_query(
    columns: Sequence[str],
    flt: DocumentFilter,
    with_text: bool,
    dialect: Dialect,
    text_as_json: bool = False,
) -> tuple[str, list[object]]:
    """The statement and its parameters (``columns``: names of the documents table, or of
    :data:`PAGE_COLUMNS`, trusted); with ``text_as_json``, the text comes as a JSON string
    (:meth:`Dialect.json_string`)."""
    placeholder = "%s" if dialect.postgres else "?"
    names = ", ".join(f"p.{n}" if n in PAGE_COLUMNS else f"d.{n}" for n in columns)
    text = dialect.json_string("r.text") if text_as_json else "r.text"
    sql = f"SELECT {names}{', ' + text if with_text else ''} FROM documents AS d"
    if with_text:
        sql += " LEFT JOIN resources AS r ON r.id = d.resource_id"
    if flt.hosts or flt.states or PAGE_COLUMNS.intersection(columns):
        sql += " LEFT JOIN pages AS p ON p.norm_url = d.url"
    where, params = _conditions(flt, "p", "d.content_type", placeholder)
    if flt.since is not None:
        where.append(f"d.updated_at >= {placeholder}")
        params.append(flt.since)
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql + " ORDER BY d.id", params
