"""What a kill -9 leaves behind: claims held and pages written, for two source trees side by side.

    uv run python bench/claims.py --n 2000 --delay 0.05 --after 8 -- --concurrency 32
    uv run python bench/claims.py --old /tmp/old/src --after 8 -- --concurrency 32 --rate-limit 20

Serves N pages (each answering after ``delay`` seconds, all linked from /) on 127.0.0.1, runs
``litecrawl crawl`` with the given flags (``--no-cache --max-depth 0``), kills it with SIGKILL
after ``after`` seconds and counts the rows still claimed and the rows crawled. ``--old`` runs
the same with another tree on PYTHONPATH (e.g. ``git archive <commit> src | tar -x -C /tmp/old``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from aiohttp import web


def serve(n: int, delay: float) -> str:
    async def page(request: web.Request) -> web.Response:
        if request.path == "/robots.txt":
            return web.Response(status=404)
        await asyncio.sleep(delay)
        body = "".join(f'<a href="/p{i}">{i}</a>' for i in range(n)) if request.path == "/" else ""
        html = f"<html><head><title>{request.path}</title></head><body>{body}x</body></html>"
        return web.Response(text=html, content_type="text/html")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    loop = asyncio.new_event_loop()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    time.sleep(0.5)
    return f"http://127.0.0.1:{port}/"


def killed_run(src: str | None, url: str, after: float, flags: list[str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "k.db"
        env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
        cmd = [sys.executable, "-m", "litecrawl", "crawl", url, "--db", str(db), "--no-cache"]
        proc = subprocess.Popen(
            [*cmd, "--max-depth", "0", "-q", *flags],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(after)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        conn = sqlite3.connect(db)
        claimed, crawled = conn.execute(
            "SELECT sum(processing_time IS NOT NULL), sum(last_crawl_time IS NOT NULL) FROM pages"
        ).fetchone()
        conn.close()
    return f"{src or 'this tree'}: kill -9 after {after:g}s: claimed {claimed}, crawled {crawled}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--after", type=float, default=8.0)
    parser.add_argument("--old", help="another tree's src directory, measured first")
    parser.add_argument("flags", nargs="*", help="litecrawl crawl flags (after --)")
    args = parser.parse_args()
    url = serve(args.n, args.delay)
    for src in ([args.old] if args.old else []) + [None]:
        print(killed_run(src, url, args.after, args.flags), flush=True)


if __name__ == "__main__":
    main()
