"""litecrawl.export and ``litecrawl export``: every format read back by a real reader, from
both backends."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import sqlite3
import tracemalloc
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
import typer
from conftest import NewDb, db_execute
from psycopg.rows import dict_row
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from litecrawl.cache import DiskCache
from litecrawl.cli.export import export as export_cmd
from litecrawl.errors import ConfigError
from litecrawl.export import FIELDS, export
from litecrawl.fetch.base import FetchResult
from litecrawl.frontier import open_frontier
from litecrawl.frontier.base import PageUpdate
from litecrawl.index.document import IndexDocument
from litecrawl.index.simhash import simhash

TEXTS = {
    "https://a.example/": 'Welcome to A. A page about apples, "quotes", commas, and\nnew lines.',
    "https://a.example/b": "Bananas are yellow; élan, naïve, 日本語 text too.",
    "https://c.example/x?y=1": "",  # a document without text: no resource
}


def make_doc(url: str, text: str, **fields: Any) -> IndexDocument:
    return IndexDocument(
        url=url,
        title=fields.pop("title", f"Title {url}"),
        keywords=fields.pop("keywords", ("apples", "bananas")),
        text_preview=text[:500],
        text=text,
        text_hash=hashlib.sha256(text.encode()).hexdigest(),
        simhash=simhash(text),
        language="en",
        content_type="text/html; charset=utf-8",
        status=200,
        **fields,
    )


async def _setup(db: str, cache: DiskCache | None) -> None:
    """Documents via the frontier's finalize (as a crawl writes them) and a disk cache."""
    async with open_frontier(db) as frontier:
        updates = []
        for i, (url, text) in enumerate(TEXTS.items()):
            updates.append(
                PageUpdate(
                    url,
                    "host",
                    1_700_000_000 + i,
                    1_800_000_000,
                    "h",
                    status=200,
                    document=make_doc(url, text, author="Ann" if i == 0 else None),
                )
            )
            if cache is not None and i < 2:
                headers = {
                    "content-type": "text/html; charset=utf-8",
                    "etag": f'"e{i}"',
                    "content-encoding": "gzip",
                    "content-length": "12",
                }
                body = f"<html><body>{text}</body></html>".encode()
                cache.store(url, FetchResult(url, url, 200, headers, body), "h")
        updates.append(PageUpdate("https://gone.example/", "gone.example", 1, 2, "h", status=404))
        await frontier.finalize(updates)


@pytest.fixture
def cache(tmp_path: Path) -> DiskCache:
    return DiskCache(tmp_path / "cache")


@pytest.fixture
def db(new_db: NewDb, cache: DiskCache) -> str:
    location = new_db("index")
    asyncio.run(_setup(location, cache))
    return location


_RECORDS = (
    "SELECT d.*, r.text FROM documents d LEFT JOIN resources r ON r.id = d.resource_id"
    " ORDER BY d.id"
)


def db_records(db: str) -> list[dict[str, Any]]:
    if db.startswith("postgresql://"):
        with psycopg.connect(db, row_factory=dict_row) as pg:
            return list(pg.execute(_RECORDS).fetchall())
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    rows = conn.execute(_RECORDS).fetchall()
    conn.close()
    return [dict(row) for row in rows]


def insert_many(db: str, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
    """``sql`` with ``?`` placeholders run for every row, in one transaction."""
    if db.startswith("postgresql://"):
        with psycopg.connect(db) as pg, pg.cursor() as cur:
            cur.executemany(sql.replace("?", "%s").encode(), rows)
        return
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany(sql, rows)
    conn.close()


def iso(stamp: str) -> str:
    return stamp.replace(" ", "T") + "Z"


def check_record(got: dict[str, Any], row: dict[str, Any]) -> None:
    for name in FIELDS:
        expected = row[name]
        if name == "keywords":
            expected = json.loads(expected)
        elif name in ("crawled_at", "updated_at"):
            expected = iso(expected)
        assert got[name] == expected, name


def test_jsonl_round_trip(db: str) -> None:
    out = io.StringIO()
    assert export(db, "jsonl", out) == 3
    lines = out.getvalue().splitlines()
    records = [json.loads(line) for line in lines]
    rows = db_records(db)
    assert len(records) == len(rows) == 3
    for got, row in zip(records, rows, strict=True):
        assert list(got) == list(FIELDS)
        check_record(got, row)
    assert records[0]["author"] == "Ann" and records[2]["resource_id"] is None
    assert "日本語" in out.getvalue()  # UTF-8, not \u escapes


def test_csv_round_trip_binary_stream(db: str) -> None:
    out = io.BytesIO()
    assert export(db, "csv", out) == 3
    assert not out.closed
    reader = csv.DictReader(io.StringIO(out.getvalue().decode("utf-8"), newline=""))
    assert tuple(reader.fieldnames or ()) == FIELDS
    rows = db_records(db)
    for got, row in zip(reader, rows, strict=True):
        assert json.loads(got["keywords"]) == json.loads(row["keywords"])
        assert got["url"] == row["url"] and got["title"] == row["title"]
        assert got["text_preview"] == row["text_preview"]  # quotes, commas, new lines survive
        assert int(got["status"]) == row["status"] and int(got["depth"]) == row["depth"]
        assert got["crawled_at"] == iso(row["crawled_at"])
        assert got["resource_id"] == ("" if row["resource_id"] is None else str(row["resource_id"]))
        assert got["author"] == (row["author"] or "")


def test_es_bulk_is_ndjson_action_document_pairs(db: str) -> None:
    out = io.BytesIO()
    assert export(db, "es-bulk", out, index_name="pages") == 3
    data = out.getvalue().decode("utf-8")
    assert data.endswith("\n")
    lines = data.split("\n")[:-1]
    assert len(lines) == 6
    rows = db_records(db)
    for (action_line, doc_line), row in zip(
        zip(lines[::2], lines[1::2], strict=True), rows, strict=True
    ):
        action, doc = json.loads(action_line), json.loads(doc_line)
        assert action == {
            "index": {"_index": "pages", "_id": hashlib.sha256(row["url"].encode()).hexdigest()}
        }
        check_record(doc, row)
        assert doc["text"] == (row["text"] or "")
    assert json.loads(lines[1])["text"] == TEXTS["https://a.example/"]


def test_since_filters_on_updated_at(db: str) -> None:
    db_execute(db, "UPDATE documents SET updated_at = '2020-01-01 10:00:00'")
    db_execute(db, "UPDATE documents SET updated_at = '2024-06-01 12:00:00' WHERE url LIKE '%/b'")
    out = io.StringIO()
    assert export(db, "jsonl", out, since=datetime(2024, 1, 1)) == 1
    assert json.loads(out.getvalue())["url"] == "https://a.example/b"
    # an aware time is converted to UTC: 13:30 at +02:00 is 11:30 UTC, before 12:00
    plus2 = timezone(timedelta(hours=2))
    assert export(db, "jsonl", io.StringIO(), since=datetime(2024, 6, 1, 13, 30, tzinfo=plus2)) == 1
    assert export(db, "jsonl", io.StringIO(), since=datetime(2024, 6, 1, 14, 30, tzinfo=plus2)) == 0
    assert export(db, "csv", io.StringIO(), since=datetime(2019, 1, 1, tzinfo=UTC)) == 3


def test_warc_request_response_pairs_from_the_cache(db: str, cache: DiskCache) -> None:
    out = io.BytesIO()
    skipped: list[str] = []
    assert export(db, "warc", out, cache_dir=cache.directory, on_skip=skipped.append) == 2
    assert skipped == ["https://c.example/x?y=1"]  # fetched, but no cached body
    out.seek(0)
    records = list(_read_warc(out))
    # warcio writes each pair response first, the request pointing to it (WARC-Concurrent-To)
    types = ["warcinfo", "response", "request", "response", "request"]
    assert [r["type"] for r in records] == types
    assert all(r["version"] == "WARC/1.1" for r in records)
    for url, (response, request) in zip(
        list(TEXTS)[:2], zip(records[1::2], records[2::2], strict=True), strict=True
    ):
        cached = cache.load(url)
        assert cached is not None
        assert request["uri"] == response["uri"] == url
        assert request["concurrent_to"] == response["id"]
        assert request["http"].protocol == "GET"
        assert response["http"].get_statuscode() == "200"
        assert response["http"].get_header("ETag") == cached.headers["etag"]
        assert response["http"].get_header("Content-Encoding") is None  # the body is decoded
        assert response["http"].get_header("Content-Length") == str(len(cached.body))
        assert response["body"] == cached.body
        fetched = datetime.fromtimestamp(cached.fetched_at, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        assert response["date"].startswith(fetched)


def _read_warc(stream: io.BytesIO) -> list[dict[str, Any]]:
    records = []
    for record in ArchiveIterator(stream):
        records.append(
            {
                "type": record.rec_type,
                "version": record.rec_headers.protocol,
                "uri": record.rec_headers.get_header("WARC-Target-URI"),
                "id": record.rec_headers.get_header("WARC-Record-ID"),
                "date": record.rec_headers.get_header("WARC-Date"),
                "concurrent_to": record.rec_headers.get_header("WARC-Concurrent-To"),
                "http": record.http_headers,
                "body": record.content_stream().read(),
            }
        )
    return records


def test_warc_since_and_errors(db: str, cache: DiskCache, tmp_path: Path) -> None:
    future = datetime(2100, 1, 1, tzinfo=UTC)
    assert export(db, "warc", io.BytesIO(), cache_dir=cache.directory, since=future) == 0
    with pytest.raises(ConfigError, match="cache"):
        export(db, "warc", io.BytesIO())
    with pytest.raises(ConfigError, match="no database"):
        export(tmp_path / "missing.db", "jsonl", io.StringIO())
    with pytest.raises(ConfigError, match="format"):
        export(db, "xml", io.StringIO())  # type: ignore[arg-type]


def test_streaming_keeps_memory_flat(tmp_path: Path, new_db: NewDb) -> None:
    """20k documents (~30 MB of es-bulk output) are exported with a small, bounded peak."""
    path = new_db("big")
    asyncio.run(_setup(path, None))
    texts = [f"resource {i} " + "lorem ipsum dolor sit amet " * 40 for i in range(100)]
    insert_many(
        path,
        "INSERT INTO resources (id, text_hash, simhash, band0, band1, band2, band3, title, text)"
        " VALUES (?, ?, 0, 0, 0, 0, 0, 't', ?)",
        [(1000 + i, f"hash{i}", text) for i, text in enumerate(texts)],
    )
    insert_many(
        path,
        "INSERT INTO documents (url, resource_id, title, keywords, text_preview)"
        ' VALUES (?, ?, ?, \'["lorem", "ipsum"]\', ?)',
        [
            (f"https://big.example/{i}", 1000 + i % 100, f"Page {i}", "x" * 300)
            for i in range(20_000)
        ],
    )
    for fmt in ("es-bulk", "csv"):  # jsonl shares the es-bulk code path
        target = tmp_path / f"out.{fmt}"
        with target.open("wb") as handle:
            tracemalloc.start()
            try:
                written = export(path, fmt, handle)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
        assert written == 20_003
        size = target.stat().st_size
        assert peak < 6 * 2**20, (fmt, peak)
        if fmt == "es-bulk":
            assert size > 25 * 2**20 and peak < size / 8


# --- CLI ------------------------------------------------------------------------------------------

app = typer.Typer()
app.command("export")(export_cmd)


@app.callback()
def _root() -> None:
    pass


runner = CliRunner()


def test_cli_jsonl_to_stdout(db: str) -> None:
    result = runner.invoke(app, ["export", "--format", "jsonl", "--db", db])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["url"] for line in result.stdout.splitlines()] == list(TEXTS)
    assert "exported 3 documents" in result.stderr


def test_cli_csv_and_warc_to_files(db: str, cache: DiskCache, tmp_path: Path) -> None:
    out = tmp_path / "index.csv"
    result = runner.invoke(app, ["export", "-f", "csv", "--db", db, "--out", str(out)])
    assert result.exit_code == 0, result.output
    with out.open(newline="", encoding="utf-8") as handle:
        assert [row["url"] for row in csv.DictReader(handle)] == list(TEXTS)
    warc = tmp_path / "crawl.warc.gz"
    args = [
        "export",
        "-f",
        "warc",
        "--db",
        str(db),
        "-o",
        str(warc),
        "--cache-dir",
        str(cache.directory),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "exported 2 pages" in result.stderr and "skipped 1" in result.stderr
    with warc.open("rb") as handle:
        assert sum(r.rec_type == "response" for r in ArchiveIterator(handle)) == 2


def test_cli_since_and_bad_usage(db: str, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["export", "-f", "es-bulk", "--db", db, "--since", "2100-01-01T00:00:00Z"]
    )
    assert result.exit_code == 0 and result.stdout == ""
    result = runner.invoke(app, ["export", "-f", "jsonl", "--db", db, "--since", "yesterday"])
    assert result.exit_code == 2 and "--since" in result.output
    result = runner.invoke(app, ["export", "-f", "jsonl", "--db", str(tmp_path / "no.db")])
    assert result.exit_code == 2 and "no database" in result.output
    result = runner.invoke(app, ["export", "-f", "xml", "--db", db])
    assert result.exit_code == 2
