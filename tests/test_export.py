"""litecrawl.export and ``litecrawl export``: every format read back by a real reader, from a
real crawl of a local site into either backend."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
import struct
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiohttp import web
from conftest import LocalServer, NewDb, db_execute, html_page
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.rows import dict_row
from typer.testing import CliRunner
from warcio.archiveiterator import ArchiveIterator

from litecrawl.cache import DiskCache
from litecrawl.cli import app
from litecrawl.errors import ConfigError
from litecrawl.export import FIELDS, export
from litecrawl.store.vectors import DIMENSIONS, MODEL

Serve = Callable[[web.Application], LocalServer]
runner = CliRunner()

HOME = html_page(
    '<article><h1>Apples</h1><p>Welcome to A. A page about apples, "quotes", commas, and<br>'
    "new lines. Apples grow on trees in orchards; they are picked in autumn and kept cool over "
    'the winter.</p></article><a href="/b">b</a> <a href="/empty?y=1">e</a> '
    '<a href="/gone">g</a> <a href="/notes.txt">n</a>',
    "Apples",
    '<meta name="author" content="Ann Smith">',
)
# path -> (body, content type); anything else is a 404
SITE = {
    "/": (HOME, "text/html"),
    "/b": (html_page("<p>Bananas are yellow; élan, naïve, 日本語 text too.</p>", "B"), "text/html"),
    "/empty?y=1": (html_page(""), "text/html"),  # a document without text: no resource
    # not a page, fetched because the crawl accepts text/plain: in the WARC only
    "/notes.txt": ("plain notes, not a document", "text/plain"),
}
PATHS = ("/", "/b", "/empty?y=1")  # the documents (exported by id: the order they were stored)


def export_site() -> web.Application:
    """``SITE`` with an ETag on every answer, compressed when the client asks (it does)."""

    async def handler(request: web.Request) -> web.Response:
        entry = SITE.get(request.path_qs)
        if entry is None:
            return web.Response(status=404, text="not found")
        body, ctype = entry
        etag = '"' + hashlib.sha256(body.encode()).hexdigest()[:8] + '"'
        response = web.Response(text=body, content_type=ctype, headers={"ETag": etag})
        response.enable_compression()
        return response

    site = web.Application()
    site.router.add_route("GET", "/{tail:.*}", handler)
    return site


@dataclass(frozen=True)
class Crawled:
    db: str
    site: LocalServer
    cache: DiskCache

    def url(self, path: str) -> str:
        return self.site.url(path)


def crawl(db: str, site: LocalServer, tmp_path: Path) -> DiskCache:
    """``litecrawl crawl`` of the whole site in main-article mode with Markdown output; the
    disk cache (in ``tmp_path``) is returned."""
    cache = tmp_path / "cache"
    config = tmp_path / "cache.toml"
    config.write_text(f'[cache]\ndir = "{cache}"\n')
    args = ["crawl", site.url("/"), "--db", db, "--config", str(config), "--max-depth", "0"]
    args += ["--delay-ms", "0", "--quiet", "--main-article", "--output", str(tmp_path / "md")]
    args += ["--accept-type", "text/plain"]
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return DiskCache(cache)


@pytest.fixture(scope="module")
def crawled(
    module_db: NewDb, serve_module: Serve, tmp_path_factory: pytest.TempPathFactory
) -> Crawled:
    """One crawl per backend (and xdist worker) for the tests that only read it."""
    db, site = module_db("index"), serve_module(export_site())
    return Crawled(db, site, crawl(db, site, tmp_path_factory.mktemp("crawled")))


@pytest.fixture
def own_crawl(new_db: NewDb, serve: Serve, tmp_path: Path) -> Crawled:
    """A crawl of its own, for a test that changes the database."""
    db, site = new_db("index"), serve(export_site())
    return Crawled(db, site, crawl(db, site, tmp_path))


_RECORDS = (
    "SELECT d.*, r.text, p.checks, p.changes, p.change_rate, p.recrawl_interval FROM documents d"
    " LEFT JOIN resources r ON r.id = d.resource_id LEFT JOIN pages p ON p.norm_url = d.url"
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


def by_path(crawled: Crawled, records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` in the order of ``PATHS`` (every document exactly once)."""
    urls = {record["url"]: record for record in records}
    assert sorted(urls) == sorted(crawled.url(p) for p in PATHS) and len(records) == len(PATHS)
    return [urls[crawled.url(p)] for p in PATHS]


def test_jsonl_round_trip(crawled: Crawled) -> None:
    out = io.StringIO()
    assert export(crawled.db, "jsonl", out) == 3
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    rows = db_records(crawled.db)
    assert len(records) == len(rows) == 3
    for got, row in zip(records, rows, strict=True):
        assert list(got) == [*FIELDS, "text", "markdown"]
        check_record(got, row)
        assert got["text"] == (row["text"] or "")
        markdown = row["markdown_path"] and Path(row["markdown_path"]).read_text("utf-8")
        assert got["markdown"] == (markdown or None)
    home, bananas, empty = by_path(crawled, records)
    assert "Apples grow on trees" in home["text"] and "日本語" in bananas["text"]
    assert home["markdown"].startswith("# Apples") and empty["markdown"] is None
    assert home["author"] == "Ann Smith" and home["extraction_mode"] == "article"
    assert '"quotes", commas, and new lines' in home["text_preview"]
    assert home["keywords"] and all(isinstance(k, str) for k in home["keywords"])
    assert Path(home["markdown_path"]).read_text("utf-8").startswith("# Apples")
    assert home["crawled_at"].endswith("Z") and home["depth"] == 0 and bananas["depth"] == 1
    assert empty["resource_id"] is None and empty["markdown_path"] is None
    assert "日本語" in out.getvalue()  # UTF-8, not \u escapes


def plain_line(record: dict[str, Any]) -> str:
    """A record as the plain encoder writes it (the export splices the database's JSON of the
    text into this)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


@pytest.mark.parametrize("flags", [{}, {"markdown": False}, {"text": False}])
def test_jsonl_lines_are_what_the_plain_encoder_writes(
    crawled: Crawled, flags: dict[str, bool]
) -> None:
    out = io.StringIO()
    export(crawled.db, "jsonl", out, **flags)
    lines = [x + "\n" for x in out.getvalue().split("\n")[:-1]]
    assert len(lines) == 3
    assert lines == [plain_line(json.loads(line)) for line in lines]
    # and the records hold what the database holds (test_jsonl_round_trip checks each value)
    texts = [json.loads(line).get("text") for line in lines]
    assert texts == (
        [(r["text"] or "") for r in db_records(crawled.db)]
        if flags != {"text": False}
        else [None] * 3
    )


# every character a text can hold on both backends (PostgreSQL's text has no NUL)
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))


def test_any_text_is_escaped_as_the_plain_encoder_escapes_it(own_crawl: Crawled) -> None:
    """The database writes the text's JSON (json_quote, to_json): for any text, the line is
    byte for byte the plain encoder's."""
    home = own_crawl.url("/")

    @settings(max_examples=60)
    @given(text=st.one_of(_TEXT, st.sampled_from(["", '\x01\x1f\x7f\u2028\\"/\t\r\n\b\f'])))
    def check(text: str) -> None:
        insert_many(
            own_crawl.db,
            "UPDATE resources SET text = ? WHERE id = (SELECT resource_id FROM documents"
            " WHERE url = ?)",
            [(text, home)],
        )
        out = io.StringIO()
        export(own_crawl.db, "jsonl", out, hosts=(), markdown=False)
        # split at line feeds only: splitlines() would also cut at U+2028 inside a text
        lines = [x + "\n" for x in out.getvalue().split("\n")[:-1]]
        line = next(x for x in lines if json.loads(x)["url"] == home)
        assert json.loads(line)["text"] == text
        assert line == plain_line(json.loads(line))

    check()


def test_csv_round_trip_binary_stream(crawled: Crawled) -> None:
    out = io.BytesIO()
    assert export(crawled.db, "csv", out) == 3
    assert not out.closed
    reader = csv.DictReader(io.StringIO(out.getvalue().decode("utf-8"), newline=""))
    assert tuple(reader.fieldnames or ()) == (*FIELDS, "text", "markdown")
    rows = db_records(crawled.db)
    got_rows = list(reader)
    assert len(got_rows) == len(rows) == 3
    for got, row in zip(got_rows, rows, strict=True):
        assert json.loads(got["keywords"]) == json.loads(row["keywords"])
        assert got["url"] == row["url"] and got["title"] == row["title"]
        assert got["text_preview"] == row["text_preview"]  # quotes, commas, UTF-8 survive
        assert int(got["status"]) == row["status"] and int(got["depth"]) == row["depth"]
        assert got["crawled_at"] == iso(row["crawled_at"])
        assert got["resource_id"] == ("" if row["resource_id"] is None else str(row["resource_id"]))
        assert got["author"] == (row["author"] or "")  # missing: an empty cell
        assert got["text"] == (row["text"] or "")  # line breaks inside a quoted cell
    home, _, empty = by_path(crawled, got_rows)
    assert home["author"] == "Ann Smith" and empty["markdown_path"] == ""
    assert home["markdown"] == Path(home["markdown_path"]).read_text("utf-8")
    assert "\n" in home["markdown"] and empty["markdown"] == ""


def test_es_bulk_is_ndjson_action_document_pairs(crawled: Crawled) -> None:
    out = io.BytesIO()
    assert export(crawled.db, "es-bulk", out, index_name="pages") == 3
    data = out.getvalue().decode("utf-8")
    assert data.endswith("\n")
    lines = data.split("\n")[:-1]
    assert len(lines) == 6
    rows = db_records(crawled.db)
    for (action_line, doc_line), row in zip(
        zip(lines[::2], lines[1::2], strict=True), rows, strict=True
    ):
        action, doc = json.loads(action_line), json.loads(doc_line)
        assert action == {
            "index": {"_index": "pages", "_id": hashlib.sha256(row["url"].encode()).hexdigest()}
        }
        check_record(doc, row)
        assert doc["text"] == (row["text"] or "")
    home, bananas, empty = by_path(crawled, [json.loads(line) for line in lines[1::2]])
    assert "Apples grow on trees" in home["text"] and "日本語" in bananas["text"]
    assert empty["text"] == ""


def test_since_filters_on_updated_at(own_crawl: Crawled) -> None:
    db = own_crawl.db
    db_execute(db, "UPDATE documents SET updated_at = '2020-01-01 10:00:00'")
    db_execute(db, "UPDATE documents SET updated_at = '2024-06-01 12:00:00' WHERE url LIKE '%/b'")
    out = io.StringIO()
    assert export(db, "jsonl", out, since=datetime(2024, 1, 1)) == 1
    assert json.loads(out.getvalue())["url"] == own_crawl.url("/b")
    # an aware time is converted to UTC: 13:30 at +02:00 is 11:30 UTC, before 12:00
    plus2 = timezone(timedelta(hours=2))
    assert export(db, "jsonl", io.StringIO(), since=datetime(2024, 6, 1, 13, 30, tzinfo=plus2)) == 1
    assert export(db, "jsonl", io.StringIO(), since=datetime(2024, 6, 1, 14, 30, tzinfo=plus2)) == 0
    assert export(db, "csv", io.StringIO(), since=datetime(2019, 1, 1, tzinfo=UTC)) == 3
    assert export(db, "es-bulk", io.StringIO(), since=datetime(2024, 1, 1)) == 1


def test_filters_by_host_content_type_and_state(own_crawl: Crawled) -> None:
    db, host = own_crawl.db, own_crawl.url("/").split("://")[1].rstrip("/")

    def urls(fmt: str = "jsonl", **select: Any) -> list[str]:
        out = io.StringIO()
        export(db, fmt, out, text=False, markdown=False, **select)  # type: ignore[arg-type]
        records = [json.loads(line) for line in out.getvalue().splitlines()]
        return sorted(r["url"] for r in records if "url" in r)  # es-bulk: not the action lines

    everything = sorted(own_crawl.url(p) for p in PATHS)
    assert urls(hosts=[host.upper()]) == everything and urls(hosts=["elsewhere.example"]) == []
    name, _, port = host.rpartition(":")
    assert urls(hosts=[name]) == everything  # without its port: any port
    assert urls(hosts=[name.rpartition(".")[0]]) == urls(hosts=[f"{name}:{int(port) + 1}"]) == []
    assert urls(content_types=["text/html"]) == urls(content_types=["TEXT/*"]) == everything
    assert urls(content_types=["text/plain", "image/*"]) == []
    assert urls(states=["crawled"]) == everything and urls(states=["error"]) == []
    db_execute(db, "UPDATE pages SET state = 3 WHERE norm_url LIKE '%/b'")  # a later fetch failed
    assert urls(states=["error"]) == [own_crawl.url("/b")]
    assert urls("es-bulk", states=["crawled"], hosts=[host]) == sorted(
        own_crawl.url(p) for p in ("/", "/empty?y=1")
    )
    out = io.BytesIO()  # the WARC too: only the text/plain response
    cache_dir = own_crawl.cache.directory
    assert export(db, "warc", out, cache_dir=cache_dir, content_types=["text/plain"]) == 1
    assert export(db, "warc", io.BytesIO(), cache_dir=cache_dir, hosts=["elsewhere.example"]) == 0
    with pytest.raises(ConfigError, match="unknown state 'done'"):
        export(db, "jsonl", io.StringIO(), states=["done"])
    with pytest.raises(ConfigError, match="content type 'html'"):
        export(db, "csv", io.StringIO(), content_types=["html"])


def test_a_host_with_no_page_is_named_with_the_closest(crawled: Crawled) -> None:
    host = crawled.url("/").split("://")[1].rstrip("/")
    name = host.rpartition(":")[0]
    result = runner.invoke(app, ["export", "-f", "jsonl", "--db", crawled.db, "--host", name])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 3, result.stderr
    wrong = name[:-1] + "9"  # 127.0.0.1 -> 127.0.0.9
    result = runner.invoke(app, ["export", "-f", "jsonl", "--db", crawled.db, "--host", wrong])
    assert result.exit_code == 1 and result.stdout == ""
    assert f"warning: no page of host '{wrong}' in the database; hosts there: {host}" in (
        result.stderr
    )
    help_text = runner.invoke(app, ["export", "--help"], env={"COLUMNS": "200"}).stdout
    assert "gzip" in help_text and ".warc.gz" in help_text


def test_parquet_columns_types_and_values(crawled: Crawled) -> None:
    import pyarrow.parquet as pq

    out = io.BytesIO()
    assert export(crawled.db, "parquet", out) == 3
    table = pq.read_table(io.BytesIO(out.getvalue()))
    assert table.column_names == [*FIELDS, "text", "markdown"]
    types = {field.name: str(field.type) for field in table.schema}
    assert types["keywords"] == "list<element: string>" and types["depth"] == "int64"
    assert types["crawled_at"] == "timestamp[ms, tz=UTC]" and types["text"] == "string"
    rows = db_records(crawled.db)
    for got, row in zip(table.to_pylist(), rows, strict=True):
        assert got["url"] == row["url"] and got["title"] == row["title"]
        assert got["keywords"] == json.loads(row["keywords"])
        assert got["text"] == (row["text"] or "") and got["resource_id"] == row["resource_id"]
        assert got["crawled_at"].strftime("%Y-%m-%d %H:%M:%S") == row["crawled_at"]
    home, _, empty = by_path(crawled, table.to_pylist())
    assert home["markdown"].startswith("# Apples") and empty["markdown"] is None
    lean = io.BytesIO()
    assert export(crawled.db, "parquet", lean, text=False, markdown=False, states=["error"]) == 0
    assert pq.read_table(io.BytesIO(lean.getvalue())).column_names == list(FIELDS)


def test_parquet_without_pyarrow_says_what_to_install(tmp_path: Path) -> None:
    """Where pyarrow cannot be imported: exit 2, one line naming the extra, no file made."""
    target = tmp_path / "pages.parquet"
    blocked = "import sys; sys.modules['pyarrow'] = None; from litecrawl.cli import main; main()"
    args = ["export", "-f", "parquet", "--db", str(tmp_path / "c.db"), "-o", str(target)]
    done = subprocess.run(
        [sys.executable, "-c", blocked, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "litecrawl[parquet]" in done.stderr and not target.exists()


def test_warc_request_response_pairs_from_the_cache(crawled: Crawled) -> None:
    cache = crawled.cache
    fetched = [crawled.url(p) for p in ("/", "/b", "/notes.txt")]  # 2xx, with a cached body
    gone = crawled.url("/empty?y=1")
    cache.path_for(gone).unlink()  # fetched, but its body is no longer in the cache
    out = io.BytesIO()
    skipped: list[str] = []
    assert export(crawled.db, "warc", out, cache_dir=cache.directory, on_skip=skipped.append) == 3
    assert skipped == [gone]
    out.seek(0)
    records = _read_warc(out)
    # warcio writes each pair response first, the request pointing to it (WARC-Concurrent-To)
    types = ["warcinfo", "response", "request", "response", "request", "response", "request"]
    assert [r["type"] for r in records] == types
    assert all(r["version"] == "WARC/1.1" for r in records)
    pairs = {r["uri"]: (r, q) for r, q in zip(records[1::2], records[2::2], strict=True)}
    assert sorted(pairs) == sorted(fetched)  # not the 404, not the skipped URL
    for url, (response, request) in pairs.items():
        cached = cache.load(url)
        assert cached is not None and cached.headers.get("content-encoding")  # sent compressed
        assert request["uri"] == url
        assert request["concurrent_to"] == response["id"]
        assert request["http"].protocol == "GET"
        assert response["http"].get_statuscode() == "200"
        assert response["http"].get_header("ETag") == cached.headers["etag"]
        assert response["http"].get_header("Content-Encoding") is None  # the body is decoded
        assert response["http"].get_header("Content-Length") == str(len(cached.body))
        assert response["body"] == cached.body
        fetched_at = datetime.fromtimestamp(cached.fetched_at, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        assert response["date"].startswith(fetched_at)
    assert pairs[crawled.url("/notes.txt")][0]["body"] == b"plain notes, not a document"
    assert "日本語" in pairs[crawled.url("/b")][0]["body"].decode("utf-8")


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


def test_warc_since_and_errors(own_crawl: Crawled, tmp_path: Path) -> None:
    db, cache = own_crawl.db, own_crawl.cache
    future = datetime(2100, 1, 1, tzinfo=UTC)
    assert export(db, "warc", io.BytesIO(), cache_dir=cache.directory, since=future) == 0
    db_execute(db, "UPDATE pages SET last_crawl_time = 1000000000")  # fetched in 2001
    db_execute(db, "UPDATE pages SET last_crawl_time = 1800000000 WHERE norm_url LIKE '%/b'")
    out = io.BytesIO()
    since = datetime(2020, 1, 1)
    assert export(db, "warc", out, cache_dir=cache.directory, since=since) == 1
    out.seek(0)
    assert {r["uri"] for r in _read_warc(out) if r["type"] == "response"} == {own_crawl.url("/b")}
    with pytest.raises(ConfigError, match="cache"):
        export(db, "warc", io.BytesIO())
    with pytest.raises(ConfigError, match="no database"):
        export(tmp_path / "missing.db", "jsonl", io.StringIO())
    with pytest.raises(ConfigError, match="format"):
        export(db, "xml", io.StringIO())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="jsonl only"):
        export(db, "csv", io.StringIO(), with_vectors=True)


def test_streaming_keeps_memory_flat(own_crawl: Crawled, tmp_path: Path) -> None:
    """20k more documents (~30 MB of es-bulk output) are exported with a small, bounded peak;
    with vectors, every batch of documents finds its vectors while the documents stream."""
    path = own_crawl.db
    texts = [f"resource {i} " + "lorem ipsum dolor sit amet " * 40 for i in range(100)]
    insert_many(
        path,
        "INSERT INTO resources (id, text_hash, simhash, band0, band1, band2, band3, title, text)"
        " VALUES (?, ?, 0, 0, 0, 0, 0, 't', ?)",
        [(1000 + i, f"hash{i}", text) for i, text in enumerate(texts)],
    )

    def add_documents(first: int, end: int) -> None:
        insert_many(
            path,
            "INSERT INTO documents (url, resource_id, title, keywords, text_preview)"
            ' VALUES (?, ?, ?, \'["lorem", "ipsum"]\', ?)',
            [
                (f"https://big.example/{i}", 1000 + i % 100, f"Page {i}", "x" * 300)
                for i in range(first, end)
            ],
        )

    # vectors first, on 2,000 documents: four whole batches of them and a part (export._BATCH)
    add_documents(0, 2_000)
    # resource 1000 + i has the vector [i, 0, 0, ...]
    vector = [0.0] * (DIMENSIONS - 1)
    insert_many(
        path,
        "INSERT INTO resource_vectors (resource_id, model, vector) VALUES (?, ?, ?)",
        [(1000 + i, MODEL, _floats([float(i), *vector])) for i in range(100)],
    )
    target = tmp_path / "vectors.jsonl"
    with target.open("w", encoding="utf-8") as handle:
        assert export(path, "jsonl", handle, with_vectors=True) == 2_003
    with target.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            record = json.loads(line)
            if n >= 3:  # the own_crawl documents' vectors are the model's: see test_semantic
                assert record["vector"][:2] == [float((n - 3) % 100), 0.0], n
                assert len(record["vector"]) == DIMENSIONS
    assert n == 2_002
    add_documents(2_000, 20_000)
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


def _floats(values: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


# --- CLI ------------------------------------------------------------------------------------------


def test_cli_jsonl_to_stdout(crawled: Crawled) -> None:
    result = runner.invoke(app, ["export", "--format", "jsonl", "--db", crawled.db])
    assert result.exit_code == 0, result.output
    urls = [json.loads(line)["url"] for line in result.stdout.splitlines()]
    assert urls == [row["url"] for row in db_records(crawled.db)]
    assert "exported 3 documents" in result.stderr


def test_cli_columns_and_filters(crawled: Crawled, tmp_path: Path) -> None:
    db = crawled.db
    result = runner.invoke(app, ["export", "-f", "jsonl", "--db", db, "--no-text"])
    assert result.exit_code == 0, result.output
    first = json.loads(result.stdout.splitlines()[0])
    assert "text" not in first and first["markdown"].startswith("# Apples")
    args = ["export", "-f", "csv", "--db", db, "--no-markdown", "--content-type", "text/html"]
    result = runner.invoke(app, [*args, "--host", crawled.url("/").split("/")[2]])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout, newline="")))
    assert len(rows) == 3 and "markdown" not in rows[0]
    assert "Apples grow on trees" in rows[0]["text"]
    target = tmp_path / "none.jsonl"
    args = ["export", "-f", "jsonl", "--db", db, "--state", "finished", "-o", str(target)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "unknown state 'finished'" in result.output
    assert not target.exists()


def test_cli_csv_and_warc_to_files(own_crawl: Crawled, tmp_path: Path) -> None:
    # its own crawl: it takes a body out of the cache
    db = own_crawl.db
    out = tmp_path / "index.csv"
    result = runner.invoke(app, ["export", "-f", "csv", "--db", db, "--out", str(out)])
    assert result.exit_code == 0, result.output
    with out.open(newline="", encoding="utf-8") as handle:
        urls = [row["url"] for row in csv.DictReader(handle)]
    assert urls == [row["url"] for row in db_records(db)]
    own_crawl.cache.path_for(own_crawl.url("/notes.txt"), "text/plain").unlink()
    warc = tmp_path / "crawl.warc.gz"
    args = ["export", "-f", "warc", "--db", db, "-o", str(warc)]
    result = runner.invoke(app, [*args, "--cache-dir", str(own_crawl.cache.directory)])
    assert result.exit_code == 0, result.output
    assert "exported 3 pages" in result.stderr and "skipped 1" in result.stderr
    with warc.open("rb") as handle:
        assert sum(r.rec_type == "response" for r in ArchiveIterator(handle)) == 3


def test_cli_options_the_format_does_not_read_are_refused(crawled: Crawled, tmp_path: Path) -> None:
    out = tmp_path / "crawl.warc.gz"
    for fmt, option in [
        ("warc", ["--no-text"]),
        ("warc", ["--no-markdown"]),
        ("jsonl", ["--index-name", "pages"]),
        ("csv", ["--cache-dir", str(crawled.cache.directory)]),
    ]:
        args = ["export", "-f", fmt, "--db", crawled.db, "-o", str(out), *option]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert f"{option[0]} is for " in result.stderr and f"not {fmt}" in result.stderr
        assert not out.exists()


def test_cli_since_and_bad_usage(crawled: Crawled, tmp_path: Path) -> None:
    db = crawled.db
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
    plain = runner.invoke(app, ["export", "-f", "jsonl", "--db", db])
    assert "vector" not in json.loads(plain.stdout.splitlines()[0])
    refused = runner.invoke(app, ["export", "-f", "csv", "--with-vectors", "--db", db])
    assert refused.exit_code == 2
    assert "jsonl only" in refused.output


def test_cli_postgresql_that_cannot_be_read_exits_2_without_the_password(pg_url: str) -> None:
    """A server that is not there, and a database that holds no crawl: one line, exit 2, the
    password masked."""
    away = "postgresql://walter:hunter2@127.0.0.1:1/crawl"
    result = runner.invoke(app, ["export", "-f", "jsonl", "--db", away])
    assert result.exit_code == 2 and "error:" in result.output
    assert "hunter2" not in result.output and "127.0.0.1:1" in result.output
    empty = runner.invoke(app, ["export", "-f", "csv", "--db", pg_url])
    assert empty.exit_code == 2 and "documents" in empty.output
