"""Exports of the index and the cached responses, streamed in constant memory.

Formats:

``jsonl``
    One JSON object per document and line: :data:`FIELDS` (``keywords`` is a list), then
    ``text``, the full text of its resource (near-duplicates carry the same text; "" for a
    document without text), and ``markdown``, its Markdown file's content (null when none was
    written, or the file is gone).
``csv``
    A header row, then one row per document with the same columns (RFC 4180, ``\\r\\n`` line
    ends, UTF-8; a text's own line breaks stay inside its quoted cell); ``keywords`` is a JSON
    array in its cell, missing values are empty cells.
``es-bulk``
    Elasticsearch/OpenSearch ``_bulk`` NDJSON: per document an action line
    ``{"index": {"_index": ..., "_id": sha256(url)}}`` and the document (the same fields as
    ``jsonl``), every line newline-terminated, ready for
    ``curl -H 'Content-Type: application/x-ndjson' --data-binary @file .../_bulk``.
``parquet``
    The same columns in one Apache Parquet file (typed, zstd; needs the ``parquet`` extra:
    :mod:`litecrawl.export_parquet`).
``warc``
    WARC 1.1 (:mod:`litecrawl.export_warc`): a ``warcinfo`` record, then per successfully
    fetched URL in the frontier (pages, but also feeds, sitemaps and non-HTML responses) a
    ``request`` and a ``response`` record rebuilt from the disk cache. URLs without a cached
    body are skipped (``on_skip`` is called with each).

``text=False`` and ``markdown=False`` leave those two columns out. ``since`` keeps documents
updated at or after that time (``updated_at``; for ``warc``, URLs fetched at or after it);
``hosts``, ``content_types`` and ``states`` keep those of these hosts (``host[:port]``), media
types (``text/html``, ``text/*``) and frontier states (``crawled``, ``error``...), in every
format. Times are written as ISO 8601 UTC (``2024-05-01T12:00:00Z``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal, get_args

from litecrawl.cache import cache_in
from litecrawl.errors import ConfigError
from litecrawl.export_parquet import check_parquet, write_parquet
from litecrawl.export_warc import write_warc
from litecrawl.store.backends import open_index
from litecrawl.store.documents import DocumentFilter
from litecrawl.store.index import IndexReader
from litecrawl.store.states import STATES

__all__ = ["FIELDS", "FORMATS", "STATES", "ExportFormat", "document_filter", "export"]

log = logging.getLogger("litecrawl.export")

ExportFormat = Literal["jsonl", "csv", "es-bulk", "parquet", "warc"]
FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)
FIELDS = (
    "url",
    "title",
    "keywords",
    "text_preview",
    "language",
    "author",
    "published",
    "status",
    "content_type",
    "depth",
    "source",
    "extraction_mode",
    "markdown_path",
    "crawled_at",
    "updated_at",
    "resource_id",
    # the page's change statistics (docs/freshness.md): re-fetches compared, changes found,
    # estimated changes per second, and the seconds to its next visit the schedule gave it
    "checks",
    "changes",
    "change_rate",
    "recrawl_interval",
)
_BATCH = 500  # documents whose vectors are read at once
_MEDIA = re.compile(r"[a-z0-9][\w.+-]*/(\*|[a-z0-9][\w.+-]*)")
_TIMES = ("crawled_at", "updated_at")


def export(
    db: str | Path,
    fmt: ExportFormat,
    out: IO[bytes] | IO[str],
    *,
    since: datetime | None = None,
    cache_dir: Path | None = None,
    index_name: str = "litecrawl",
    on_skip: Callable[[str], None] | None = None,
    with_vectors: bool = False,
    text: bool = True,
    markdown: bool = True,
    hosts: Sequence[str] = (),
    content_types: Sequence[str] = (),
    states: Sequence[str] = (),
) -> int:
    """Write the index of ``db`` to ``out`` in format ``fmt``; returns how many records
    (documents; for ``warc``, request/response pairs) were written.

    ``out`` may be a text or a binary stream (``warc`` and ``parquet`` need bytes: a text
    stream with a ``buffer``, like ``sys.stdout``, is fine). ``cache_dir`` is the disk cache
    (``warc`` only); a naive ``since`` is taken as UTC. Raises
    :class:`~litecrawl.errors.ConfigError` for a missing database, an unknown format, ``warc``
    without ``cache_dir`` or ``parquet`` without pyarrow. ``with_vectors`` (``jsonl`` only)
    adds each document's ``vector`` (its resource's embedding, a list of floats; null when it
    has none). An unknown state or a content type that is not
    ``type/subtype`` or ``type/*`` is a ConfigError.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}: use one of {', '.join(FORMATS)}")
    if fmt == "warc" and cache_dir is None:
        raise ConfigError("the warc export reads the disk cache: give its directory (cache_dir)")
    if with_vectors and fmt != "jsonl":
        raise ConfigError(f"vectors are exported in jsonl only, not in {fmt}")
    flt = document_filter(since, hosts, content_types, states)
    columns = Columns(text, markdown)
    if fmt == "parquet":
        check_parquet()
    with open_index(str(db)) as index:
        if fmt == "parquet":
            return write_parquet(_documents(index, flt, columns), columns.names, _binary(out))
        if fmt == "warc":
            assert cache_dir is not None
            moment = None if since is None else int(_utc(since).timestamp())
            return write_warc(index, _binary(out), cache_in(cache_dir), moment, flt, on_skip)
        with _Text(out) as stream:
            if fmt == "csv":
                return _csv(index, stream, flt, columns)
            if with_vectors:
                return _ndjson_with_vectors(index, stream, flt, columns)
            es_index = index_name if fmt == "es-bulk" else None
            return _ndjson(index, stream, flt, columns, es_index)


@dataclass(frozen=True, slots=True)
class Columns:
    """The columns after :data:`FIELDS`: the resource's text, the Markdown file's content."""

    text: bool = True
    markdown: bool = True

    @property
    def names(self) -> tuple[str, ...]:
        return (
            *FIELDS,
            *(("text",) if self.text else ()),
            *(("markdown",) if self.markdown else ()),
        )


def document_filter(
    since: datetime | None,
    hosts: Sequence[str],
    content_types: Sequence[str],
    states: Sequence[str],
) -> DocumentFilter:
    """The store's filter for these values; ConfigError naming a bad content type or state."""
    for media in content_types:
        if not _MEDIA.fullmatch(media.strip().lower()):
            raise ConfigError(
                f"content type {media!r}: expected type/subtype or type/* (text/html, image/*)"
            )
    unknown = [s for s in states if s.strip().lower() not in STATES]
    if unknown:
        raise ConfigError(f"unknown state {unknown[0]!r}: use one of {', '.join(STATES)}")
    return DocumentFilter(
        since=None if since is None else _utc(since).strftime("%Y-%m-%d %H:%M:%S"),
        hosts=tuple(h.strip().lower() for h in hosts),
        content_types=tuple(m.strip().lower() for m in content_types),
        states=tuple(STATES[s.strip().lower()] for s in states),
    )


# -- documents ---------------------------------------------------------------------------------


def _documents(
    index: IndexReader, flt: DocumentFilter, columns: Columns, text_as_json: bool = False
) -> Iterator[dict[str, Any]]:
    """Each document as a record of ``columns.names``; with ``text_as_json`` its ``text`` is
    already a JSON string (the database escapes it: the longest value of a record, most of
    an export's encoding time)."""
    names = (*FIELDS, "text") if columns.text else FIELDS
    for row in index.documents(FIELDS, flt, columns.text, text_as_json):
        record = dict(zip(names, row, strict=True))
        record["keywords"] = _keywords(record["keywords"])
        for name in _TIMES:
            record[name] = _iso(record[name])
        if columns.text and record["text"] is None:
            record["text"] = ""
        if columns.markdown:
            record["markdown"] = _markdown(record["markdown_path"])
        yield record


def _markdown(path: object) -> str | None:
    """The Markdown file's content; None when none was written or it cannot be read now."""
    if not isinstance(path, str) or not path:
        return None
    try:
        return Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _ndjson(
    index: IndexReader,
    out: IO[str],
    flt: DocumentFilter,
    columns: Columns,
    index_name: str | None,
) -> int:
    count = 0
    for record in _documents(index, flt, columns, text_as_json=True):
        if index_name is not None:
            doc_id = hashlib.sha256(record["url"].encode("utf-8")).hexdigest()
            action = {"index": {"_index": index_name, "_id": doc_id}}
            out.write(json.dumps(action, separators=(",", ":")) + "\n")
        out.write(_json_line(record, columns))
        count += 1
    return count


def _json_line(record: dict[str, Any], columns: Columns) -> str:
    """``record`` as :func:`json.dumps` writes it (compact, UTF-8 as it is) and a line end,
    its ``text`` being JSON already: spliced in where the encoder would have written it."""
    if not columns.text:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    text = record.pop("text")
    markdown = record.pop("markdown", None)
    head = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    tail = ""
    if columns.markdown:
        tail = ',"markdown":' + json.dumps(markdown, ensure_ascii=False)
    return f'{head[:-1]},"text":{text}{tail}}}\n'


def _ndjson_with_vectors(
    index: IndexReader, out: IO[str], flt: DocumentFilter, columns: Columns
) -> int:
    """JSON Lines with each document's vector, looked up one batch of documents at a time."""
    count = 0
    batch: list[dict[str, Any]] = []
    for record in _documents(index, flt, columns):
        batch.append(record)
        if len(batch) == _BATCH:
            count += _write_with_vectors(index, out, batch)
            batch = []
    return count + _write_with_vectors(index, out, batch)


def _write_with_vectors(index: IndexReader, out: IO[str], records: list[dict[str, Any]]) -> int:
    from litecrawl.index.embed import from_blob  # numpy: only when vectors are asked for

    ids = [r["resource_id"] for r in records if r["resource_id"] is not None]
    vectors = index.vectors.of_resources(ids) if ids else {}
    for record in records:
        blob = vectors.get(record["resource_id"])
        record["vector"] = None if blob is None else [round(float(x), 6) for x in from_blob(blob)]
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    return len(records)


def _csv(index: IndexReader, out: IO[str], flt: DocumentFilter, columns: Columns) -> int:
    writer = csv.writer(out)
    names = columns.names
    writer.writerow(names)
    count = 0
    for record in _documents(index, flt, columns):
        record["keywords"] = json.dumps(record["keywords"], ensure_ascii=False)
        writer.writerow(["" if record[name] is None else record[name] for name in names])
        count += 1
    return count


def _keywords(raw: object) -> list[object]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else []
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def _iso(stamp: object) -> object:
    """SQLite's ``YYYY-MM-DD HH:MM:SS`` (UTC) as ISO 8601 ``YYYY-MM-DDTHH:MM:SSZ``."""
    if isinstance(stamp, str) and len(stamp) == 19 and stamp[10] == " ":
        return f"{stamp[:10]}T{stamp[11:]}Z"
    return stamp


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# -- streams -----------------------------------------------------------------------------------


def _is_binary(out: IO[bytes] | IO[str]) -> bool:
    if isinstance(out, io.TextIOBase):
        return False
    if isinstance(out, io.RawIOBase | io.BufferedIOBase):
        return True
    return "b" in str(getattr(out, "mode", ""))


def _binary(out: IO[bytes] | IO[str]) -> IO[bytes]:
    if _is_binary(out):
        return out  # type: ignore[return-value]
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        raise ConfigError("the warc export writes bytes: give a binary stream")
    out.flush()
    return buffer  # type: ignore[no-any-return]


class _Text:
    """``out`` as a text stream; a binary one is wrapped (UTF-8) and left open afterwards."""

    def __init__(self, out: IO[bytes] | IO[str]) -> None:
        self._out = out
        self._wrapper: io.TextIOWrapper | None = None

    def __enter__(self) -> IO[str]:
        if not _is_binary(self._out):
            return self._out  # type: ignore[return-value]
        self._wrapper = io.TextIOWrapper(
            self._out,  # type: ignore[arg-type]
            encoding="utf-8",
            newline="",
        )
        return self._wrapper

    def __exit__(self, *exc: object) -> None:
        if self._wrapper is not None:
            self._wrapper.flush()
            self._wrapper.detach()
        else:
            self._out.flush()
