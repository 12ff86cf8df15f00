"""A hostile server: responses no honest server sends, each with the outcome it must get.

The server is a raw asyncio TCP server (aiohttp's own server cannot send a bad status line or
an oversized header); it counts the requests for each path, so a retry shows."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import db_query, db_rows
from typer.testing import CliRunner

from litecrawl.cli import app


def _response(status: str, headers: str = "", body: bytes = b"") -> bytes:
    head = f"HTTP/1.1 {status}\r\n{headers}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return head.encode() + body


_HTML = "Content-Type: text/html\r\n"

# path -> (raw response, the page's recorded category: None = fetched fine)
BAD: dict[str, tuple[bytes, str | None]] = {
    "/to-js": (_response("302 Found", "Location: javascript:alert(1)\r\n"), "bad_redirect"),
    "/to-data": (_response("302 Found", "Location: data:text/html,hi\r\n"), "bad_redirect"),
    "/to-ftp": (_response("301 Moved", "Location: ftp://example.com/x\r\n"), "bad_redirect"),
    "/to-nothing": (_response("301 Moved", "Location: http://[::1\r\n"), "bad_redirect"),
    "/bad-status": (b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\nhi", "bad_response"),
    "/not-http": (b"hello there\r\n\r\n", "bad_response"),
    "/http2": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "bad_response"),
    "/big-header": (_response("200 OK", f"X-Big: {'a' * 100_000}\r\n", b"hi"), "bad_response"),
    "/many-headers": (
        _response("200 OK", "".join(f"X-H{i}: v\r\n" for i in range(5000)), b"hi"),
        "bad_response",
    ),
    "/bad-length": (b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhi", "bad_response"),
    "/bad-chunks": (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"zz\r\nhi\r\n0\r\n\r\n",
        "bad_response",
    ),
    "/bad-gzip": (
        _response("200 OK", "Content-Type: text/html\r\nContent-Encoding: gzip\r\n", b"notgzip"),
        "bad_response",
    ),
    # may have been a dropped connection: worth another try
    "/closed": (b"", "network"),
    "/short": (b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nhi", "network"),
    "/loop": (_response("302 Found", "Location: /loop\r\n"), "redirect_loop"),
    # bodies labelled HTML that are not text: not indexed as garbage words
    "/png": (_response("200 OK", _HTML, b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4), "not_text"),
    "/binary": (_response("200 OK", _HTML, bytes(range(256)) * 16), "not_text"),
    # a UTF-8 page sent as gb2312: read as the UTF-8 it is, not as Chinese-looking garbage
    "/mislabelled": (_response("200 OK", "Content-Type: text/html; charset=gb2312\r\n", (
        "<html><head><title>Grüße aus München</title></head><body><p>Schöne Grüße aus "
        "München, wo die Straßen über den Fluss führen und die Bäcker früh öffnen.</p>"
        "</body></html>").encode()), None),
}  # fmt: skip
RETRIED = {"network"}


@dataclass
class HostileServer:
    base: str = ""
    seen: Counter[str] = field(default_factory=Counter)


def _home() -> bytes:
    links = "".join(f'<a href="{path}">{path}</a> ' for path in BAD)
    html = f"<html><head><title>home</title></head><body>{links}</body></html>".encode()
    return _response("200 OK", "Content-Type: text/html; charset=utf-8\r\n", html)


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer()
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            path = line.split()[1].decode() if len(line.split()) > 1 else "/"
            server.seen[path] += 1
            if path == "/":
                writer.write(_home())
            elif path in BAD:
                writer.write(BAD[path][0])
            else:
                writer.write(_response("404 Not Found"))
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def boot() -> asyncio.Server:
        tcp = await asyncio.start_server(handle, "127.0.0.1", 0)
        server.base = f"http://127.0.0.1:{tcp.sockets[0].getsockname()[1]}"
        ready.set()
        return tcp

    def run() -> None:
        asyncio.set_event_loop(loop)
        tcp = loop.run_until_complete(boot())
        loop.run_forever()
        tcp.close()
        loop.run_until_complete(tcp.wait_closed())
        loop.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    yield server
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_each_bad_response_gets_its_category_and_a_retry_only_if_it_may_succeed(
    tmp_path: Path, hostile: HostileServer
) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[fetch]\nmax_retries = 1\ntimeout = 5\n")  # one retry, after 1 s
    db = tmp_path / "c.db"
    result = CliRunner().invoke(
        app,
        ["crawl", "--db", str(db), "--config", str(config), "--no-cache", "--no-embed",
         "--delay-ms", "0", hostile.base + "/"],
        catch_exceptions=False,
    )  # fmt: skip
    assert "Traceback" not in result.output
    rows = db_rows(db)
    got = {path: rows[hostile.base + path]["error"] for path in BAD}
    assert got == {path: category for path, (_, category) in BAD.items()}
    # (aiohttp itself tries once more when a kept-alive connection turns out closed)
    retried = {path for path in BAD if path != "/loop" and hostile.seen[path] > 1}
    assert retried == {path for path, (_, category) in BAD.items() if category in RETRIED}
    assert all(hostile.seen[path] for path in BAD)
    title, language = db_query(
        db, f"SELECT title, language FROM documents WHERE url = '{hostile.base}/mislabelled'"
    )[0]
    assert (title, language) == ("Grüße aus München", "de")
    indexed = {url for (url,) in db_query(db, "SELECT url FROM documents")}
    assert not {hostile.base + "/png", hostile.base + "/binary"} & indexed
    # the summary's causes: one line per cause, not every bad answer under the first one
    causes = result.output.split("top error causes:")[1].splitlines()
    assert any(re.search(r"redirect to javascript:, not to an http\(s\) URL \(1 page, ", c)
               for c in causes), result.output  # fmt: skip
    assert any("not valid HTTP: Bad status line (3 pages, " in c for c in causes), result.output
