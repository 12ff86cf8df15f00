"""The render path against Playwright itself: ``litecrawl()``, a plain Playwright loop, the CLI.

    uv run python bench/render.py --pages 40 --rounds 3 --memory 500
    uv run python bench/render.py --tree before=/tmp/before/src      # another tree's litecrawl()

Serves Python's documentation (Debian's python3.11-doc, a real Sphinx site: ~75 KB pages with
9 scripts, 2 stylesheets and a few images each) with nginx on 127.0.0.1 and runs, alternated in
one invocation, each variant as its own process on the same ``--pages`` URLs, ``--concurrency``
at a time:

* ``plain``: Playwright with litecrawl()'s steps and nothing else: one browser, one context with the
  same viewport and User-Agent, images/fonts/media blocked by a route pattern (matched by
  Playwright, no Python handler), ``goto``, one scroll, 800 ms wait, network idle, ``content()``;
* ``litecrawl``: a ``litecrawl()`` batch with its defaults (its render path, robots.txt obeyed);
* ``cli``: ``litecrawl crawl --render --no-follow`` on the same URLs (analysis and index on);
* ``tree:NAME``: ``litecrawl()`` from another source tree (``--tree NAME=DIR``, on PYTHONPATH),
  e.g. ``git archive <commit> src | tar -x -C /tmp/before``; ``cli:NAME`` the same for the CLI
  (``--cli-tree NAME=DIR``).

Figures per run: pages/s = pages rendered / wall seconds; CPU = user + sys of the variant's
process and all its descendants: Playwright's driver and Chromium's processes. Chromium's zygote
outlives the browser process and would be reparented to init with the renderers' CPU (~60% of
the tree's), counted by no ``wait4``; so the variant process and this driver are subreapers
(``prctl(PR_SET_CHILD_SUBREAPER)``) and reap every orphan before the figures are taken (before
2026-11-26 this bench missed that CPU). ``call`` figures
are inside the variant process around the call (browser launch included, Python start-up and
imports not); ``process`` figures are the whole process seen from here (start-up included: the
only figures for the CLI). ``--memory N`` then renders N distinct pages with each variant and
samples the proportional set size (PSS) of the variant's process tree against the pages nginx
has served so far: flat means no context, page or process is left open.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DOCS = Path("/usr/share/doc/python3.11/html")
PG_DOCS = "/usr/share/doc/postgresql-doc-15/html"
PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
VIEWPORT = {"width": 2160, "height": 3840}  # litecrawl()'s default
# What the plain loop blocks, by URL: Playwright matches this regex itself, no Python handler.
MEDIA_URL = re.compile(
    r"\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|woff2?|ttf|otf|eot|mp4|webm|ogg|mp3|wav|m4a|mov)"
    r"(\?.*)?$",
    re.IGNORECASE,
)


# -- the variants (each runs in its own process: `render.py _run VARIANT URLS_FILE C`) --------


async def plain_loop(urls: list[str], concurrency: int) -> int:
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    from litecrawl.fetch.browser import LAUNCH_ARGS, find_chromium
    from litecrawl.version import VERSION

    done = 0
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=find_chromium(), headless=True, args=LAUNCH_ARGS
        )
        context = await browser.new_context(
            viewport={"width": VIEWPORT["width"], "height": VIEWPORT["height"]},
            user_agent=f"litecrawl/{VERSION}",
        )
        await context.route(MEDIA_URL, lambda route: route.abort())
        semaphore = asyncio.Semaphore(concurrency)

        async def one(url: str) -> None:
            nonlocal done
            async with semaphore:
                page = await context.new_page()
                try:
                    await page.goto(url)
                    await page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
                    await page.wait_for_timeout(800)
                    await page.wait_for_load_state("networkidle")
                    html = await page.content()
                    done += bool(html)
                except PlaywrightError as exc:  # a timeout under load: not rendered, as there
                    print(f"{url}: {exc}".splitlines()[0], file=sys.stderr)
                finally:
                    await page.close()

        await asyncio.gather(*(one(u) for u in urls))
        await context.close()
        await browser.close()
    return done


def litecrawl_batch(urls: list[str], concurrency: int) -> tuple[int, int]:
    """Pages rendered, and pages whose render ran out of time (kept as served: not counted as
    rendered, as the plain loop does not count a page that timed out)."""
    from litecrawl import alitecrawl

    done = 0

    def count(content: bytes, content_type: str, url: str, fresh: bool) -> None:
        nonlocal done
        done += bool(content) and content_type.startswith("text/html")  # no await: no race

    with tempfile.TemporaryDirectory() as tmp:
        stats = asyncio.run(
            alitecrawl(
                str(Path(tmp) / "bench.db"),
                urls,
                n_claims=len(urls),
                n_concurrent=concurrency,
                downstream_hook=count,
            )
        )
    return done - stats.render_timeouts, stats.render_timeouts


def run_variant(variant: str, urls: list[str], concurrency: int) -> None:
    """In the variant's own process: time the call and print the figures as JSON."""
    import resource

    # imports before the clock starts, as a program does before it calls: Playwright's for
    # the loop, litecrawl()'s module for the batch (what litecrawl() imports lazily inside the
    # call stays in; the "process" figures below include every import)
    import playwright.async_api  # noqa: F401

    from litecrawl import litecrawl  # noqa: F401

    def cpu(who: int) -> float:
        usage = resource.getrusage(who)
        return usage.ru_utime + usage.ru_stime

    become_subreaper()
    start, self0, kids0 = time.monotonic(), cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    cut = 0
    if variant == "plain":
        done = asyncio.run(plain_loop(urls, concurrency))
    else:
        done, cut = litecrawl_batch(urls, concurrency)
    wall = time.monotonic() - start
    reap_orphans(set())  # Chromium's zygote and renderers: counted below once reaped
    py = cpu(resource.RUSAGE_SELF) - self0  # this process alone: the engine, Playwright's client
    spent = py + cpu(resource.RUSAGE_CHILDREN) - kids0
    figures = {"pages": done, "render_timeouts": cut, "wall": wall, "cpu": spent, "py_cpu": py}
    print(json.dumps(figures))


def become_subreaper() -> None:
    """Inherit this process's orphaned descendants. Chromium's zygote outlives the browser
    process that started it; orphaned, it and the renderers it reaped (most of Chromium's CPU)
    are counted by no ``wait4`` up the tree. A subreaper inherits them and reaps them."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reap_orphans(keep: set[int], timeout: float = 20.0) -> float:
    """Wait for every child of this process but ``keep`` (inherited orphans included) to exit
    and reap it; their CPU seconds (with their reaped children's)."""
    spent, deadline = 0.0, time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = [p for p in children_of(os.getpid()) if p not in keep]
        if not kids:
            break
        for kid in kids:
            try:
                pid, _, usage = os.wait4(kid, os.WNOHANG)
            except ChildProcessError:
                continue
            if pid:
                spent += usage.ru_utime + usage.ru_stime
        time.sleep(0.1)
    else:  # still running (Chromium's crash handlers may linger): stopped, not left behind
        for kid in children_of(os.getpid()):
            if kid not in keep:
                os.kill(kid, signal.SIGTERM)
                usage = os.wait4(kid, 0)[2]
                spent += usage.ru_utime + usage.ru_stime
    return spent


# -- the driver ---------------------------------------------------------------------------------


def children_of(parent: int) -> list[int]:
    return [pid for pid in tree_of(parent) if pid != parent and ppid_of(pid) == parent]


def ppid_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except OSError:
        return 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pick_pages(n: int, lo: int, hi: int, indexes: bool = False, root: Path = DOCS) -> list[str]:
    """``n`` documentation pages of ``lo``..``hi`` bytes, by path (the indexes too if asked)."""
    paths = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.html")
        if lo <= p.stat().st_size <= hi
        and (indexes or not p.name.startswith(("genindex", "search")))
    )
    if len(paths) < n:
        raise SystemExit(f"only {len(paths)} pages of {lo}..{hi} bytes under {root}")
    return paths[:n]


def tree_of(pid: int) -> list[int]:
    """``pid`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rpartition(")")[2].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_by_pid(pids: list[int], root: int) -> dict[int, tuple[str, float]]:
    """Each process's CPU seconds so far (user + sys) and its kind: the variant process
    (``python``), Playwright's driver (``driver``), Chromium (``chromium``: browser, renderers,
    GPU and utility processes), the CLI's analysis workers (``analysis``), else ``other``;
    ``exited`` for a zombie (no command line left)."""
    out: dict[int, tuple[str, float]] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if not args:  # a zombie: its kind as seen while it ran (run_once keeps it)
            kind = "exited"
        elif pid == root:
            kind = "python"
        elif "playwright/driver" in args or args.startswith("node"):
            kind = "driver"
        elif "litecrawl.index.pool" in args:
            kind = "analysis"
        elif "chrom" in args.split(" ", 1)[0] or args.startswith("/proc/self/exe"):
            # Chromium starts its helpers as /proc/self/exe, then they exec themselves
            kind = "chromium"
        else:
            kind = "other"
        out[pid] = (kind, (int(fields[11]) + int(fields[12])) / tick)
    return out


def variant_env(src: str | None) -> dict[str, str]:
    """The variants' environment: bytecode cached as on an installed system (with
    PYTHONDONTWRITEBYTECODE every import compiles its module again, seconds of CPU that a
    lazily importing ``litecrawl()`` would pay inside the timed call and the plain loop not)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src:
        env["PYTHONPATH"] = src
    return env


def compile_all(srcs: list[str]) -> None:
    """Bytecode for every module the variants may import, before any of them is timed."""
    import site

    dirs = [*srcs, str(HERE.parent / "src"), *site.getsitepackages()]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", *dirs],
        env=variant_env(None),
        stdout=subprocess.DEVNULL,
        check=False,  # a few test files of third parties do not compile: not ours to time
    )


def html_served(nginx: Any) -> int:
    """HTML pages nginx has logged so far (its log is flushed every second)."""
    log = (nginx.prefix / "logs" / "access.log").read_text()
    return sum(1 for line in log.splitlines() if '.html"' in line)


def memory_mib(pids: list[int]) -> tuple[float, float, int]:
    """The processes' summed PSS and RSS (MiB), and how many of them there are."""
    pss = rss = alive = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        alive += 1
        for key, kb in re.findall(r"^(Pss|Rss):\s+(\d+) kB", text, re.MULTILINE):
            if key == "Pss":
                pss += int(kb)
            else:
                rss += int(kb)
    return pss / 1024, rss / 1024, alive


def command(
    variant: str,
    urls_file: Path,
    urls: list[str],
    concurrency: int,
    db: Path,
    timeout: float = 15.0,
) -> list[str]:
    if variant == "cli":
        exe = str(Path(sys.executable).parent / "litecrawl")
        flags = ["--render", "--no-follow", "--concurrency", str(concurrency)]
        flags += ["--per-host", str(concurrency), "--delay-ms", "0", "--no-cache", "--quiet"]
        # litecrawl()'s pw_timeout_ms (the CLI's own default is 10 s), unless --cli-timeout
        flags += ["--timeout", f"{timeout:g}"]
        return [exe, "crawl", *urls, "--db", str(db), *flags]
    return [sys.executable, __file__, "_run", variant, str(urls_file), str(concurrency)]


def run_once(
    variant: str,
    src: str | None,
    urls: list[str],
    concurrency: int,
    work: Path,
    nginx: Any,
    sample: bool = False,
    timeout: float = 15.0,
) -> dict[str, Any]:
    urls_file = work / "urls.json"
    urls_file.write_text(json.dumps(urls))
    db = work / "cli.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    env = variant_env(src)
    nginx.reset_log()
    load = os.getloadavg()[0]
    start = time.monotonic()
    proc = subprocess.Popen(
        command(variant, urls_file, urls, concurrency, db, timeout),
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        cwd=work,
    )
    samples: list[tuple[int, float, float, int]] = []  # pages served, PSS, RSS, processes
    seen: dict[int, tuple[str, float]] = {}  # pid -> (kind, CPU seconds), as last sampled
    ticks = 0
    while True:  # wait4, not poll: the child's rusage (and its reaped children's) comes with it
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.5)
        tree = tree_of(proc.pid)
        for pid_, (kind, spent) in cpu_by_pid(tree, proc.pid).items():
            if kind == "exited":
                kind = seen.get(pid_, ("other", 0.0))[0]
            seen[pid_] = (kind, spent)
        ticks += 1
        if sample and ticks % 4 == 0:
            samples.append((html_served(nginx), *memory_mib(tree)))
    wall = time.monotonic() - start
    orphans = reap_orphans({nginx.proc.pid})  # the CLI's Chromium, left to us (a subreaper)
    out = proc.stdout.read() if proc.stdout else ""
    # the CLI exits 1 when pages failed (timeouts): its count below says how many were rendered
    if status != 0 and not (variant == "cli" and os.waitstatus_to_exitcode(status) == 1):
        raise SystemExit(f"{variant} failed with status {status}")
    figures: dict[str, Any] = {"p_wall": wall, "p_cpu": usage.ru_utime + usage.ru_stime + orphans}
    figures["load"] = (load + os.getloadavg()[0]) / 2  # the machine's 1-minute load, start and end
    figures["p_rss"] = usage.ru_maxrss / 1024  # the largest single process
    if variant == "cli":
        import sqlite3

        conn = sqlite3.connect(db)
        ok = conn.execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0]
        run = json.loads(conn.execute("SELECT stats FROM runs").fetchone()[0])
        conn.close()
        # a render that ran out of time is kept as served: not rendered, not counted as such
        figures["render_timeouts"] = run.get("render_timeouts", 0)
        figures["pages"] = ok - figures["render_timeouts"]
    else:
        figures.update(json.loads(out.strip().splitlines()[-1]))
    figures["samples"] = samples
    time.sleep(1.2)  # nginx writes its log every second
    # pages navigated to (the CLI retries a page that timed out: each try renders it again)
    figures["navigations"] = html_served(nginx)
    for kind, cpu in seen.values():  # ~0.5 s of a short-lived process's last CPU is missed
        figures[f"cpu_{kind}"] = figures.get(f"cpu_{kind}", 0.0) + cpu
        figures[f"n_{kind}"] = figures.get(f"n_{kind}", 0) + 1  # processes seen
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--variants", nargs="*", default=["plain", "litecrawl", "cli"])
    parser.add_argument("--tree", action="append", default=[], help="NAME=SRC_DIR (repeatable)")
    parser.add_argument("--cli-tree", action="append", default=[], help="NAME=SRC_DIR: the CLI")
    parser.add_argument(
        "--cli-timeout", type=float, default=15.0, help="the CLI's --timeout (renders cut short)"
    )
    parser.add_argument("--memory", type=int, default=0, help="then N distinct pages (0: skip)")
    parser.add_argument("--memory-variants", nargs="*", default=["plain", "litecrawl", "cli"])
    parser.add_argument(
        "--memory-docs", default=str(DOCS), help="the site for --memory (e.g. " + PG_DOCS + ")"
    )
    args = parser.parse_args()
    if len(sys.argv) > 1 and sys.argv[1] == "_run":
        return
    sys.path.insert(0, str(HERE))
    from run import Nginx

    trees = dict(t.split("=", 1) for t in args.tree)
    variants: list[tuple[str, str, str | None]] = [(v, v, None) for v in args.variants]
    variants += [(f"tree:{name}", "litecrawl", src) for name, src in trees.items()]
    cli_trees = dict(t.split("=", 1) for t in args.cli_tree)
    variants += [(f"cli:{name}", "cli", src) for name, src in cli_trees.items()]
    compile_all([src for _, _, src in variants if src])
    become_subreaper()
    port = free_port()
    nginx = Nginx(DOCS, port)
    base = f"http://127.0.0.1:{port}"
    urls = [f"{base}/{p}" for p in pick_pages(args.pages, 60_000, 95_000)]
    args.urls = urls
    results: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in variants}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for round_ in range(args.rounds):
                # alternated, the order reversed every other round: the machine's noise hits all
                order = variants if round_ % 2 == 0 else variants[::-1]
                for name, variant, src in order:
                    r = run_once(
                        variant,
                        src,
                        urls,
                        args.concurrency,
                        Path(tmp),
                        nginx,
                        False,
                        args.cli_timeout,
                    )
                    results[name].append(r)
                    shown = {k: round(v, 2) for k, v in r.items() if k != "samples"}
                    print(f"round {round_ + 1} {name}: {json.dumps(shown)}", flush=True)
            if args.rounds:
                report(results, args)
            if args.memory:
                memory(args, Path(tmp))
    finally:
        nginx.stop()


def report(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    def med(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in runs if key in r)

    def against(runs: list[dict[str, Any]], per_run: Any) -> str:
        """The median of the variant's figure over the plain loop's, and round by round."""
        if not plain or len(plain) != len(runs):
            return "-"
        mine, theirs = [per_run(r) for r in runs], [per_run(p) for p in plain]
        each = ", ".join(f"{a / b:.2f}" for a, b in zip(mine, theirs, strict=True))
        return f"{statistics.median(mine) / statistics.median(theirs):.2f} ({each})"

    plain = results.get("plain")
    loads = [
        statistics.median(r["load"] for rs in results.values() for r in [rs[i]])
        for i in range(args.rounds)
    ]
    print(
        f"\n{args.pages} pages, {args.concurrency} at a time, {args.rounds} rounds alternated "
        "(medians; ratios against the plain loop of the same invocation: median over median, "
        "then each round's); the machine's load average (1 min) by round: "
        + ", ".join(f"{x:.0f}" for x in loads)
        + "\n"
    )
    print(
        "| variant | pages rendered | render timeouts (all rounds) | navigations a page | "
        "call pages/s | x plain | call CPU ms/page | x plain | of it Python ms/page | "
        "process pages/s | x plain | process CPU ms/page | x plain | peak RSS MiB |"
    )
    print("|---|" + "---|" * 13)
    for name, runs in results.items():
        pages = med(runs, "pages")
        cells = [name, f"{pages:.0f}", str(sum(r.get("render_timeouts", 0) for r in runs))]
        cells += [f"{med(runs, 'navigations') / len(args.urls):.2f}"]
        if not name.startswith("cli"):
            cells += [f"{pages / med(runs, 'wall'):.2f}"]
            cells += [against(runs, lambda r: r["pages"] / r["wall"])]
            cells += [f"{med(runs, 'cpu') / pages * 1000:.0f}"]
            cells += [against(runs, lambda r: r["cpu"] / r["pages"])]
            cells += [f"{med(runs, 'py_cpu') / pages * 1000:.0f}"]
        else:
            cells += ["-", "-", "-", "-", "-"]
        cells += [f"{pages / med(runs, 'p_wall'):.2f}"]
        cells += [against(runs, lambda r: r["pages"] / r["p_wall"])]
        cells += [f"{med(runs, 'p_cpu') / pages * 1000:.0f}"]
        cells += [against(runs, lambda r: r["p_cpu"] / r["pages"])]
        cells += [f"{med(runs, 'p_rss'):.0f}"]
        print("| " + " | ".join(cells) + " |")
    by_kind(results)


KINDS = ("python", "driver", "chromium", "analysis", "other")


def by_kind(results: dict[str, list[dict[str, Any]]]) -> None:
    """Process CPU per page by kind of process (sampled), and the render path alone: the whole
    tree but the CLI's analysis workers, against the plain loop's, per round and its median."""
    plain = results.get("plain")
    print(
        "\nprocess CPU ms/page by process (sampled from /proc every 0.5 s; start-up included), "
        "and the render path (all but the analysis workers) against the plain loop's, round by "
        "round\n"
    )
    print(f"| variant | {' | '.join(KINDS)} | render path | x plain (median, each round) |")
    print("|---|" + "---|" * (len(KINDS) + 2))

    def path_cpu(run: dict[str, Any]) -> float:
        return float(sum(run.get(f"cpu_{k}", 0.0) for k in KINDS if k != "analysis"))

    for name, runs in results.items():
        pages = statistics.median(r["pages"] for r in runs)
        cells = [name]
        for kind in KINDS:
            cells.append(
                f"{statistics.median(r.get(f'cpu_{kind}', 0.0) for r in runs) / pages * 1000:.0f}"
            )
        cells.append(f"{statistics.median(path_cpu(r) / r['pages'] for r in runs) * 1000:.0f}")
        if plain and len(plain) == len(runs):
            ratios = [
                (path_cpu(r) / r["pages"]) / (path_cpu(p) / p["pages"])
                for r, p in zip(runs, plain, strict=True)
            ]
            each = ", ".join(f"{x:.2f}" for x in ratios)
            cells.append(f"{statistics.median(ratios):.2f} ({each})")
        else:
            cells.append("-")
        print("| " + " | ".join(cells) + " |")


def memory(args: argparse.Namespace, work: Path) -> None:
    from run import Nginx  # bench/ is on sys.path (main)

    root = Path(args.memory_docs)
    port = free_port()
    nginx = Nginx(root, port)
    try:
        paths = pick_pages(args.memory, 0, 10**9, indexes=True, root=root)
        urls = [f"http://127.0.0.1:{port}/{p}" for p in paths]
        print(f"\nmemory: {len(urls)} distinct pages of {root}, {args.concurrency} at a time")
        print(
            "| variant | pages | PSS MiB of the process tree at 20% / 40% / 60% / 80% / 100% "
            "(peak) | RSS MiB summed (peak) | processes (most) |"
        )
        print("|---|---|---|---|---|")
        for variant in args.memory_variants:
            r = run_once(variant, None, urls, args.concurrency, work, nginx, sample=True)
            samples = r["samples"]
            cells = [variant, str(r["pages"])]
            for column in (1, 2, 3):
                marks = []
                for share in (0.2, 0.4, 0.6, 0.8, 1.0):
                    # the first sample taken once this share of the pages had been served
                    at = next((s[column] for s in samples if s[0] >= share * len(urls)), None)
                    if at is None and share == 1.0 and samples:
                        at = samples[-1][column]  # the last one, before the log showed them all
                    marks.append(f"{at:.0f}" if at is not None else "-")
                peak = max((s[column] for s in samples), default=0.0)
                cells.append(f"{' / '.join(marks)} ({peak:.0f})")
            print("| " + " | ".join(cells) + " |", flush=True)
    finally:
        nginx.stop()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_run":
        run_variant(sys.argv[2], json.loads(Path(sys.argv[3]).read_text()), int(sys.argv[4]))
    else:
        main()
