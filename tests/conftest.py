"""Shared fixtures: real local HTTP servers on 127.0.0.1 (aiohttp in a background thread).

``serve(app)`` starts any aiohttp ``web.Application`` on a free port and returns a
:class:`LocalServer` whose ``requests`` list records every request the server saw (path, headers,
start and end times), so tests assert on what really crossed the wire.

The suite runs in parallel (pytest-xdist, ``-n`` in pyproject's addopts): several worker
processes, each running a share of the tests, in any order, beside each other. A test is safe
there when it keeps to these fixtures:

- HTTP: ``serve(app)`` (a free port per server; ``site_app``, ``demo_site``), ``refused_base``
  (a port where nothing listens). Never a fixed port.
- Files: ``tmp_path`` (one directory per test), never a fixed path, the working directory
  (``monkeypatch.chdir(tmp_path)`` if the code under test writes there) or the home directory.
- PostgreSQL: ``pg_url`` (a new empty database), ``new_db`` (a test run once per backend; its
  PostgreSQL databases come migrated), or
  ``pg_cluster`` (the server itself: ``create_database()``, ``restart()``). Each xdist worker
  starts its own server (session scope is per worker), so a test may restart it without
  disturbing another worker's tests.
- Subprocesses (``python -m litecrawl ...``): give them paths under ``tmp_path`` and the
  fixtures' URLs; wait for them with a timeout and kill what the test started.
- Time: assert what the server saw (order, counts, gaps with generous bounds), never how long
  something took: the workers share the machine's cores with each other.

Tests of one module may share a read-only server or a built database through module- or
session-scoped fixtures (``serve_module``, ``module_db``; each worker builds its own); a test
that changes such a thing must make its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from aiohttp import web
from hypothesis import HealthCheck, settings
from pg_cluster import Cluster, find_bindir
from psycopg.rows import dict_row

from litecrawl.index.document import IndexDocument
from litecrawl.index.simhash import simhash
from litecrawl.store.frontier import Frontier
from litecrawl.store.postgres.frontier import PostgresFrontier
from litecrawl.store.sqlite.frontier import SQLiteFrontier

# Property tests must give the same verdict on a loaded 2-core machine as on an idle one: a
# fixed derandomized run (same examples every time, no example database), no per-example
# deadline and no too_slow health check (both measure wall-clock time). Loaded for every run,
# before any test module builds its own @settings on top of it.
settings.register_profile(
    "litecrawl",
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
settings.load_profile("litecrawl")

# Test crawls in this process (CliRunner, run_crawl) analyse their pages inline (extract.workers
# = 0): each of the ~250 of a run started an analysis worker process, ~0.3 s of CPU to start even
# with bytecode, about a sixth of the suite's CPU. Crawler processes a test starts keep the
# product's path, a pool, of one worker (a few pages need no more): they are started with
# crawler_env(), whose value wins over this one they would inherit. A test that needs other
# workers sets `extract.workers` itself (test_analyze.py runs crawls with 0, 3 and the default).
os.environ.setdefault("LITECRAWL_EXTRACT_WORKERS", "0")


def crawler_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a crawler process (``crawl``, ``sites run``) a test starts: ``env``
    (this process's by default) with one analysis worker process, not the inline analysis of
    this process's own crawls (a test that kills a crawler checks its workers die with it)."""
    return {**(os.environ if env is None else env), "LITECRAWL_EXTRACT_WORKERS": "1"}


def analysis_workers_of(pid: int) -> set[int]:
    """The analysis worker processes (``python -m litecrawl.index.pool``) whose parent is pid."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        if parent == pid and b"litecrawl.index.pool" in cmdline:
            found.add(int(entry))
    return found


def analysis_workers_during(run: Callable[[], object]) -> set[int]:
    """This process's analysis worker processes seen while ``run`` runs (read every 20 ms)."""
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.02):
            seen.update(analysis_workers_of(os.getpid()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run()
    finally:
        done.set()
        watcher.join()
    return seen


@dataclass
class SeenRequest:
    path: str  # path with query string
    headers: dict[str, str]
    start: float  # time.monotonic() when the handler began
    end: float = 0.0  # when the handler returned


@dataclass
class LocalServer:
    base: str
    requests: list[SeenRequest] = field(default_factory=list)

    def url(self, path: str = "/") -> str:
        return self.base + path

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path == path)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _recording_middleware(server: LocalServer) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        seen = SeenRequest(request.path_qs, dict(request.headers), time.monotonic())
        server.requests.append(seen)
        try:
            return await handler(request)
        finally:
            seen.end = time.monotonic()

    return record


# How long a test waits for a crawler process to get somewhere: a bound on a hang, never a
# timing assertion. Generous, since 2 cores shared by several test runs started a crawl in 30 s
# and more (pytest-timeout's 300 s stays the bound of a whole test).
PATIENCE_SEC = 200.0


@pytest.fixture
def serve() -> Iterator[Callable[[web.Application], LocalServer]]:
    """Start aiohttp apps in a background thread; all are stopped at teardown."""
    yield from _serving()


@pytest.fixture(scope="module")
def serve_module() -> Iterator[Callable[[web.Application], LocalServer]]:
    """``serve`` for a module's read-only site, shared by its tests (each xdist worker that runs
    some of them starts its own)."""
    yield from _serving()


def _serving() -> Iterator[Callable[[web.Application], LocalServer]]:
    stops: list[Callable[[], None]] = []

    def start(app: web.Application) -> LocalServer:
        server = LocalServer(base="")
        app.middlewares.append(_recording_middleware(server))
        loop = asyncio.new_event_loop()
        ready = threading.Event()
        holder: dict[str, web.AppRunner] = {}

        async def boot() -> None:
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            server.base = f"http://127.0.0.1:{port}"
            holder["runner"] = runner
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(boot())
            loop.run_forever()
            loop.run_until_complete(holder["runner"].cleanup())
            loop.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        ready.wait(10)

        def stop() -> None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)

        stops.append(stop)
        return server

    yield start
    for stop in stops:
        stop()


def db_rows(db: Path | str) -> dict[str, dict[str, Any]]:
    """Every row of the ``pages`` table, keyed by norm_url (a SQLite file or PostgreSQL)."""
    if str(db).startswith("postgresql://"):
        with psycopg.connect(str(db), row_factory=dict_row) as pg:
            return {r["norm_url"]: r for r in pg.execute("SELECT * FROM pages").fetchall()}
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return {r["norm_url"]: dict(r) for r in conn.execute("SELECT * FROM pages")}
    finally:
        conn.close()


def db_query(db: Path | str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one query (portable SQL) on a SQLite file or a PostgreSQL database."""
    if str(db).startswith("postgresql://"):
        with psycopg.connect(str(db)) as pg:
            return [tuple(r) for r in pg.execute(sql.encode()).fetchall()]
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def db_execute(db: Path | str, sql: str) -> None:
    """Run one statement that changes rows and commit it (a SQLite file or PostgreSQL)."""
    if str(db).startswith("postgresql://"):
        with psycopg.connect(str(db)) as pg:
            pg.execute(sql.encode())
        return
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql)
        conn.commit()
    finally:
        conn.close()


def index_document(url: str, title: str, text: str, canonical: str | None = None) -> IndexDocument:
    """A document as the analysis worker sends it (no vectors), for a store's writes."""
    return IndexDocument(
        url=url,
        title=title,
        keywords=(),
        text_preview=text[:500],
        text=text,
        text_hash=hashlib.sha256(text.encode()).hexdigest(),
        simhash=simhash(text),
        language="en",
        content_type="text/html",
        status=200,
        canonical=canonical,
    )


def html_page(body: str, title: str = "", head: str = "") -> str:
    head = f"<title>{title}</title>{head}"
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


def site_app(pages: Mapping[str, str | tuple[int, str, str]]) -> web.Application:
    """An app serving a dict of path -> HTML, or path -> (status, content_type, body)."""
    app = web.Application()

    async def handler(request: web.Request) -> web.Response:
        entry = pages.get(request.path_qs, pages.get(request.path))
        if entry is None:
            return web.Response(status=404, text="not found")
        if isinstance(entry, tuple):
            status, ctype, text = entry
            return web.Response(status=status, body=text.encode(), content_type=ctype)
        return web.Response(text=entry, content_type="text/html")

    app.router.add_route("GET", "/{tail:.*}", handler)
    return app


def demo_site(state: dict[str, object] | None = None) -> web.Application:
    """The engine's test site: links of every kind, redirects, errors, non-HTML, slow pages.

    ``state`` lets a test change the site between runs (``state["home_extra"]`` adds HTML to
    the home page).
    """
    state = state if state is not None else {}
    app = web.Application()

    async def home(request: web.Request) -> web.Response:
        extra = str(state.get("home_extra", ""))
        body = (
            '<a href="/a">A</a> <a href="b#frag">B</a> <a href="http://127.0.0.1:1/offsite">x</a>'
            '<form action="/form-target"></form> <iframe src="/frame"></iframe>'
            '<a href="mailto:x@y.z">mail</a> <a href="javascript:void(0)">js</a>'
            '<a href="/doc.pdf">pdf</a>' + extra
        )
        return web.Response(text=html_page(body, "Home"), content_type="text/html")

    def page(title: str, body: str = "") -> Handler:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=html_page(body or title, title), content_type="text/html")

        return handler

    async def pdf(request: web.Request) -> web.Response:
        return web.Response(body=b"%PDF-1.4 <a href='/never'>", content_type="application/pdf")

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(float(request.query.get("s", "1")))
        return web.Response(text=html_page("slow", "Slow"), content_type="text/html")

    async def error(request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="err")

    r = app.router
    r.add_get("/", home)
    r.add_get("/a", page("A", '<a href="/">home</a> <a href="/c">C</a>'))
    r.add_get("/b", page("B"))
    r.add_get("/c", page("C"))
    r.add_get("/form-target", page("Form"))
    r.add_get("/frame", page("Frame"))
    r.add_get("/doc.pdf", pdf)
    r.add_get("/slow", slow)
    r.add_get("/status/{code}", error)
    r.add_get("/old", redirect_to("/new"))
    r.add_get("/new", page("New", '<a href="/new-child">child</a>'))
    r.add_get("/new-child", page("Child"))
    r.add_get("/chain1", redirect_to("/chain2", 302))
    r.add_get("/chain2", redirect_to("/c", 301))
    r.add_get("/loop1", redirect_to("/loop2"))
    r.add_get("/loop2", redirect_to("/loop1"))
    r.add_get("/to-excluded", redirect_to("/excluded/x"))
    r.add_get("/excluded/x", page("Excluded"))
    return app


def redirect_to(location: str, status: int = 301) -> Handler:
    async def handler(request: web.Request) -> web.Response:
        if status == 302:
            raise web.HTTPFound(location)
        raise web.HTTPMovedPermanently(location)

    return handler


@pytest.fixture
def refused_base() -> str:
    """``http://127.0.0.1:PORT`` where nothing listens: every connection is refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # bound then closed without listen: the port stays closed for this test
    return f"http://127.0.0.1:{port}"


def have_chromium() -> bool:
    """A Chromium to drive is installed (Debian's /usr/bin/chromium, $LITECRAWL_CHROMIUM, ...)."""
    from litecrawl.errors import BrowserUnavailable
    from litecrawl.fetch.browser import find_chromium

    try:
        find_chromium()
    except BrowserUnavailable:
        return False
    return True


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One PostgreSQL server for the whole run, started when a test first needs it. Without
    PostgreSQL's programs the tests that need it are skipped, except under CI (which has them)."""
    bindir = find_bindir()
    if bindir is None:
        if os.environ.get("CI"):
            raise RuntimeError("no PostgreSQL programs (initdb) on this machine")
        pytest.skip("no PostgreSQL on this machine")
    cluster = Cluster(bindir)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """A fresh empty database on the shared server: ``postgresql://...``."""
    return pg_cluster.create_database()


NewDb = Callable[[str], str]


@pytest.fixture(params=["sqlite", "postgres"])
def new_db(request: pytest.FixtureRequest, tmp_path: Path) -> NewDb:
    """Databases for a test run once per backend: ``new_db("name")`` is a SQLite file in
    ``tmp_path`` or a fresh database on the shared PostgreSQL server (its URL), with the schema
    in force already (a copy of one migrated once; ``pg_url`` is empty, for migration tests)."""
    if request.param == "sqlite":
        return lambda name: str(tmp_path / f"{name}.db")
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return lambda name: cluster.create_database(migrated=True)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def module_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> NewDb:
    """``new_db`` for a database a module's tests share (built once, then only read: a test
    that changes it makes its own with ``new_db``)."""
    if request.param == "sqlite":
        folder = tmp_path_factory.mktemp("module_db")
        return lambda name: str(folder / f"{name}.db")
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return lambda name: cluster.create_database(migrated=True)


OpenFrontier = Callable[[], Frontier]


@pytest.fixture(params=["sqlite", "postgres"])
def new_frontier(request: pytest.FixtureRequest, tmp_path: Path) -> OpenFrontier:
    """Frontiers on one store (a new one for each test): each call is another worker's view."""
    if request.param == "sqlite":
        path = tmp_path / "f.db"
        return lambda: SQLiteFrontier(path)
    url = request.getfixturevalue("pg_url")
    return lambda: PostgresFrontier(url)
