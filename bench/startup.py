"""Start-up cost: CPU a process tree spends before it fetches its first page, and in all.

    uv run python bench/startup.py [--rounds 3] [--pages 100] [--tree NAME=DIR ...]

What cron pays every minute: a ``litecrawl()`` batch of ``--pages`` pages (``fetcher="http"``
and the default ``"playwright"``) and ``litecrawl crawl`` on the same pages, each in a fresh
interpreter, by this tree and by each ``--tree`` (another checkout with its own ``uv sync``),
alternated round by round. A local aiohttp server in this process serves the pages; when the
first page request arrives it reads the client's whole process tree from /proc (user + sys of
the crawler and of every process it started: analysis workers, Playwright's driver, Chromium)
— that is the start-up CPU. The total is user + sys of everything the client reaped.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web

HERE = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        todo.extend(int(k) for k in kids)
    return out


def _tree_cpu(pid: int) -> float:
    """user + sys seconds of ``pid`` and its live descendants, plus what they reaped."""
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / TICK


def _page(i: int, pages: int) -> str:
    # the first page links to every other, so a second batch has ``pages`` pages due
    targets = range(1, pages + 1) if i == 0 else [(i * 7 + k) % pages + 1 for k in range(10)]
    links = " ".join(f'<a href="/p/{t}">page {t}</a>' for t in targets)
    words = " ".join(f"word{(i * 13 + k) % 997}" for k in range(600))
    return (
        f"<!doctype html><html><head><title>Page {i}</title></head>"
        f"<body><h1>Page {i}</h1><p>{words}</p><nav>{links}</nav></body></html>"
    )


class Site:
    def __init__(self, pages: int) -> None:
        self.pages = pages
        self.client_pid = 0
        self.first_cpu: float | None = None
        self.requests = 0

    async def handle(self, request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        self.requests += 1
        if self.first_cpu is None and self.client_pid:
            self.first_cpu = _tree_cpu(self.client_pid)
        i = int(request.match_info.get("i", "0"))
        return web.Response(text=_page(i, self.pages), content_type="text/html")


LITECRAWL_CALL = """
import sys
from litecrawl import litecrawl
litecrawl(sys.argv[1], [sys.argv[2]], n_claims=int(sys.argv[3]), n_concurrent=8,
          fetcher=sys.argv[4], include_patterns=[sys.argv[2].rsplit("/", 2)[0] + "/.*"])
"""


def _command(variant: str, tree: Path, db: str, seed: str, pages: int) -> list[str]:
    python = str(tree / ".venv" / "bin" / "python")
    if variant == "crawl":
        return [
            python,
            "-m",
            "litecrawl",
            "crawl",
            seed,
            "--db",
            db,
            "--delay-ms",
            "0",
            "--max-pages",
            str(pages + 1),
            "-q",
        ]
    fetcher = "http" if variant == "litecrawl(http)" else "playwright"
    return [python, "-c", LITECRAWL_CALL, db, seed, str(pages), fetcher]


async def _run(site: Site, cmd: list[str], tmp: str, tree: Path) -> tuple[int | None, bytes, float]:
    site.first_cpu, site.requests = None, 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        cwd=tmp,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(tree / "src")},
    )
    site.client_pid = proc.pid
    _, err = await proc.communicate()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, err, total


async def _one(site: Site, base: str, variant: str, tree: Path, pages: int) -> tuple[float, float]:
    """The timed run; ``litecrawl()`` first gets an untimed batch that claims the seed only, so
    the timed batch has ``pages`` pages due, as a cron run in a crawl's steady state does."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = _command(variant, tree, f"{tmp}/b.db", f"{base}/p/0", pages)
        if variant != "crawl":
            await _run(site, cmd, tmp, tree)
        code, err, total = await _run(site, cmd, tmp, tree)
        if code not in (0, 1) or site.first_cpu is None:
            raise SystemExit(f"{variant} ({tree}) failed {code}:\n{err.decode()[-2000:]}")
        return site.first_cpu, total


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR")
    parser.add_argument(
        "--variants", nargs="+", default=["litecrawl(http)", "litecrawl(playwright)", "crawl"]
    )
    args = parser.parse_args()
    trees = [("this", HERE)] + [
        (name, Path(d).resolve()) for name, d in (t.split("=", 1) for t in args.tree)
    ]
    site = Site(args.pages)
    app = web.Application()
    app.router.add_get("/p/{i}", site.handle)
    app.router.add_get("/robots.txt", site.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    base = f"http://127.0.0.1:{port}"
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        for variant in args.variants:
            for name, tree in trees:
                start = time.monotonic()
                first, total = await _one(site, base, variant, tree, args.pages)
                results.setdefault((variant, name), []).append((first, total))
                print(
                    f"round {r + 1} {variant:22} {name:8} start-up CPU {first:.2f} s, "
                    f"total CPU {total:.2f} s, {site.requests} pages, "
                    f"{time.monotonic() - start:.1f} s wall",
                    file=sys.stderr,
                )
    await runner.cleanup()
    print(f"\n{args.pages} pages per run, {args.rounds} rounds alternated; medians")
    print("| variant | tree | start-up CPU s (before the first fetch) | total CPU s |")
    print("|---|---|---|---|")
    for (variant, name), rows in results.items():
        first = statistics.median(f for f, _ in rows)
        total = statistics.median(t for _, t in rows)
        print(f"| {variant} | {name} | {first:.2f} | {total:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
