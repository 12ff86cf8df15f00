"""``bench/run.py compare REV...``: the kit crawl by this tree and by other commits, alternated.

Each REV is checked out into a throwaway git worktree with its own virtual environment
(``uv sync --frozen``, from uv's cache), then every run crawls ``bench/run.py crawl``'s site with
this tree's console script and each REV's in turn (run 1 of each, run 2 of each...), so the
machine's drift hits all alike. It prints each tree's median pages/s, CPU ms per page and peak
RSS, and the ratio of this tree's pages/s to each REV's: the regression guard every change to
the crawl path reports (against the commit before it and the round's start). ``--site kit``
crawls the shared kit's own site instead (the pages ``bench/run.py peers`` measures: headed
sections, so section vectors, and a larger vocabulary, which bench/site.py's pages lack).
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from run import LITECRAWL, ROOT, Nginx, bench_site, bytecode, crawl_once


def checkout(rev: str, into: Path) -> list[str]:
    """``rev``'s tree in ``into`` with its own environment; its console script."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
                   check=True, capture_output=True)  # fmt: skip
    subprocess.run(["uv", "sync", "--frozen", "--quiet"], cwd=into, check=True)
    bytecode(into)
    return [str(into / ".venv" / "bin" / "litecrawl")]


def cmd_compare(args: argparse.Namespace) -> None:
    root = bench_site(args.site, args.n, args.port)
    manifest = json.loads((root / "manifest.json").read_text())
    extra = shlex.split(args.extra)
    tmp = Path(tempfile.mkdtemp(prefix="lcbench-compare-"))
    trees: dict[str, list[str]] = {"HEAD (this tree)": LITECRAWL}
    bytecode(ROOT)
    nginx = Nginx(root, args.port)
    try:
        for rev in args.revs:
            git = ["git", "-C", str(ROOT), "rev-parse", "--short", rev]
            sha = subprocess.run(git, check=True, capture_output=True, text=True).stdout.strip()
            trees[f"{rev} ({sha})"] = checkout(rev, tmp / f"tree-{sha}")
        rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, script in trees.items():
                nginx.reset_log()
                m = crawl_once(manifest["base"], tmp, extra, litecrawl=script)
                m["pages_per_s"] = m["pages_ok"] / m["wall"]
                m["max_per_url"] = max(nginx.requests().values())
                rows[name].append(m)
                print(name, json.dumps({k: round(v, 2) for k, v in m.items()}), flush=True)
    finally:
        nginx.stop()
        for tree in tmp.glob("tree-*"):
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           capture_output=True)  # fmt: skip
        shutil.rmtree(tmp, ignore_errors=True)
    head = statistics.median(r["pages_per_s"] for r in rows["HEAD (this tree)"])
    flags = args.extra or "-"
    print(f"\n{args.site} site, n={args.n}, {args.runs} runs alternated, flags: {flags}")
    print("| tree | pages/s (median) | CPU ms per page | peak RSS MiB | pages ok | "
          "HEAD's pages/s ÷ this tree's |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, runs in rows.items():
        med = lambda key, runs=runs: statistics.median(r[key] for r in runs)  # noqa: E731
        print(
            f"| {name} | {med('pages_per_s'):.0f} | "
            f"{med('cpu') / max(med('pages_ok'), 1) * 1000:.2f} | {med('rss_mib'):.0f} | "
            f"{med('pages_ok'):.0f} / {manifest['reachable']} | {head / med('pages_per_s'):.2f} |"
        )
