"""Real pages: PostgreSQL 15's HTML documentation (Debian ``postgresql-doc-15``) served by nginx,
crawled plain, with ``--output`` (Markdown + sidecars) and with ``--main-article`` (each engine),
side by side in one invocation.

    apt-get install -y postgresql-doc-15 nginx time
    uv run python bench/realsite.py --runs 3
    uv run python bench/realsite.py --site /usr/share/doc/python3.11/html --port 8854 \
        --modes plain,--output,--main-article

The site is /usr/share/doc/postgresql-doc-15/html (~1,170 pages, 15 KB on average: chapters,
reference pages with synopses and tables, long tables of contents), served on 127.0.0.1:8282.
Every run crawls it from ``index.html`` with politeness opened up (bench/run.py's flags: one
host, 64 concurrent, no delay, robots.txt obeyed; depth unlimited) into a fresh database; the
modes run interleaved (run 1 of every mode, then run 2...) so the machine's drift hits all alike.
pages/s = pages stored / wall seconds of the crawl command (start-up included); CPU = user+sys of
the crawler and its analysis workers (``/usr/bin/time``), per page stored.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CRAWL_FLAGS, LITECRAWL, Nginx, timed

SITE = Path("/usr/share/doc/postgresql-doc-15/html")
PORT = 8282
MODES: dict[str, list[str]] = {
    "plain": [],
    "--output": ["--output", "{work}/out"],
    "--main-article (trafilatura)": ["--main-article", "--config", "{work}/trafilatura.toml"],
    "--main-article (resiliparse)": ["--main-article", "--config", "{work}/resiliparse.toml"],
    "--output --main-article (resiliparse)": [
        "--output", "{work}/out", "--main-article", "--config", "{work}/resiliparse.toml",
    ],
}  # fmt: skip
# the default engine, without a config file: also runs on code from before [extract] engine
OTHER_MODES = {"--main-article": ["--main-article"]}
ALL_MODES = {**MODES, **OTHER_MODES}


def _crawl(work: Path, flags: list[str], port: int = PORT) -> dict[str, float]:
    db = work / "real.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(work / "out", ignore_errors=True)
    extra = [f.format(work=work) for f in flags]
    url = f"http://127.0.0.1:{port}/index.html"
    metrics = timed([*LITECRAWL, "crawl", url, "--db", str(db), *CRAWL_FLAGS, *extra])
    conn = sqlite3.connect(db)
    metrics["pages"] = conn.execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0]
    metrics["articles"] = conn.execute(
        "SELECT count(*) FROM documents WHERE extraction_mode = 'article'"
    ).fetchone()[0]
    conn.close()
    metrics["markdown_files"] = len(list((work / "out").rglob("*.md")))
    return metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated, of: " + ", ".join(MODES)
    )
    parser.add_argument(
        "--site",
        type=Path,
        default=SITE,
        help="a folder of HTML pages with an index.html (e.g. /usr/share/doc/python3.11/html)",
    )
    parser.add_argument("--port", type=int, default=PORT)
    args = parser.parse_args()
    if not (args.site / "index.html").exists():
        raise SystemExit(f"{args.site} is missing (postgresql-doc-15, python3.11-doc)")
    modes = [m.strip() for m in args.modes.split(",")]
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    nginx = Nginx(args.site, args.port)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for engine in ("trafilatura", "resiliparse"):
                (work / f"{engine}.toml").write_text(f'[extract]\nengine = "{engine}"\n')
            for run in range(args.runs):
                for mode in modes:
                    m = _crawl(work, ALL_MODES[mode], args.port)
                    rows[mode].append(m)
                    print(
                        f"run {run + 1} {mode}: " + ", ".join(f"{k}={v:.2f}" for k, v in m.items()),
                        flush=True,
                    )
    finally:
        nginx.stop()
    plain = statistics.median(r["pages"] / r["wall"] for r in rows[modes[0]])
    print(
        f"\n| mode | pages/s (median of {args.runs}) | runs | vs {modes[0]} | CPU ms/page | "
        "peak RSS MiB | pages | article pages | Markdown files |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        runs = rows[mode]
        rates = [r["pages"] / r["wall"] for r in runs]
        rate = statistics.median(rates)
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        cpu = statistics.median(r["cpu"] / r["pages"] * 1000 for r in runs)
        print(
            f"| {mode} | {rate:.0f} | {', '.join(f'{x:.0f}' for x in rates)} | "
            f"{rate / plain:.2f}x | {cpu:.1f} | {med['rss_mib']:.0f} | {med['pages']:.0f} | "
            f"{med['articles']:.0f} | {med['markdown_files']:.0f} |"
        )


if __name__ == "__main__":
    main()
