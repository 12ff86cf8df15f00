"""kill -9 soak on a real documentation site: many kills at random moments, then one run to the
end, checked against a crawl of the same site that nobody killed.

    uv run python bench/kill_soak.py --kills 20

The site (default /usr/share/doc/python3.11/html, Debian's python3.11-doc, a real Sphinx site)
is served by nginx. Each killed run is ``litecrawl crawl`` of its index.html into one database
(bench/run.py's flags: one host, 64 concurrent, no delay, robots.txt obeyed, depth unlimited),
killed with SIGKILL (its process group: the analysis workers too) at a random moment ``--min`` to
``--max`` seconds after its run record was written (Python's start on a loaded machine can
take longer than the window); after each kill the claims the dead run held are counted
(pages being fetched, or fetched but not yet written). Then one run goes to the end. Reported:
the pages of the clean crawl and of the soaked one, missing pages, parked pages, the final run's
exit code, the fetches nginx saw beyond one per URL (refetches) against the claims held at the
kills, and SQLite's ``PRAGMA integrity_check``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CRAWL_FLAGS, LITECRAWL, Nginx


def crawl(url: str, db: Path, log: Path) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    return subprocess.Popen(
        [*LITECRAWL, "crawl", url, "--db", str(db), *CRAWL_FLAGS],
        stdout=out,
        stderr=out,
        start_new_session=True,
    )


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db, timeout=60)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def runs(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return int(str(rows(db, "SELECT count(*) FROM runs")[0][0]))
    except sqlite3.OperationalError:  # not made yet
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--min", type=float, default=0.8, help="earliest kill, s after start")
    parser.add_argument("--max", type=float, default=3.0, help="latest kill, s after start")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--port", type=int, default=8383)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4))
    pick = random.Random(seed)
    url = f"http://127.0.0.1:{args.port}/index.html"
    work = Path(tempfile.mkdtemp(prefix="lc-killsoak-"))
    nginx = Nginx(args.site, args.port)
    try:
        clean_db = work / "clean.db"
        start = time.monotonic()
        code = crawl(url, clean_db, work / "clean.log").wait()
        clean_sec = time.monotonic() - start
        reachable = {str(u) for (u,) in rows(clean_db, "SELECT norm_url FROM pages")}
        assert code == 0, (work / "clean.log").read_text()[-2000:]

        nginx.reset_log()
        db = work / "soak.db"
        in_flight, kills, ended, held_at_kill = 0, 0, 0, []
        for i in range(args.kills):
            proc = crawl(url, db, work / "soak.log")
            # the run's moments count from its run record: starting Python on a loaded machine
            # can take longer than the whole window
            while proc.poll() is None and runs(db) <= i:
                time.sleep(0.02)
            time.sleep(pick.uniform(args.min, args.max))
            if proc.poll() is not None:
                ended += 1  # got to the end before its kill
                continue
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
            held = int(str(rows(db, "SELECT count(*) FROM pages WHERE worker_id > 0")[0][0]))
            held_at_kill.append(held)
            in_flight += held
        before_final = len(rows(db, "SELECT 1 FROM pages WHERE last_crawl_time IS NOT NULL"))
        start = time.monotonic()
        final_code = crawl(url, db, work / "soak.log").wait()
        final_sec = time.monotonic() - start
        seen = nginx.requests()
        pages = {str(u) for (u,) in rows(db, "SELECT norm_url FROM pages")}
        crawled = {
            str(u)
            for (u,) in rows(db, "SELECT norm_url FROM pages WHERE last_crawl_time IS NOT NULL")
        }
        parked = rows(db, "SELECT count(*) FROM pages WHERE lost_alone >= 3")[0][0]
        report = {
            "site": str(args.site),
            "seed": seed,
            "kills": kills,
            "runs_that_ended_before_their_kill": ended,
            "claims_held_at_each_kill": held_at_kill,
            "claims_held_at_kills": in_flight,
            "clean_crawl": {"pages": len(reachable), "seconds": round(clean_sec, 1)},
            "crawled_before_final_run": before_final,
            "final_run": {"exit": final_code, "seconds": round(final_sec, 1)},
            "pages": len(pages),
            "crawled": len(crawled),
            "missing": sorted(reachable - crawled),
            "parked": parked,
            "requests": sum(n for p, n in seen.items() if p != "/robots.txt"),
            "refetches": sum(n - 1 for p, n in seen.items() if p != "/robots.txt"),
            "integrity_check": rows(db, "PRAGMA integrity_check")[0][0],
        }
        print(json.dumps(report, indent=2))
    finally:
        nginx.stop()


if __name__ == "__main__":
    main()
