"""Search quality on two real documentation sites: does the answer come first?

    apt-get install -y python3.11-doc postgresql-doc-15 nginx time
    uv run python bench/search_eval.py [--sites python,postgresql] [--misses] [--recrawl]
    uv run python bench/search_eval.py --sites postgresql --pg     # the PostgreSQL backend

Each site (Debian's HTML documentation, served by nginx on a free local port) is crawled once
with the defaults (embeddings on) and politeness opened up (bench/run.py's flags); the database
is kept under ``--cache`` keyed by a hash of ``src/litecrawl`` (a change to the code crawls
again, a second run with the same code does not). Then every question is searched in each mode
and the rank of the first right page (any URL of the hit, fragment aside) is read:

- MRR@10: 1/rank of the first right page in the top 10 (0 if none), averaged;
- recall@10: share of questions with a right page in the top 10;
- top-3: share of questions with a right page in the top 3.

Two kinds of queries per site: plain-word questions (written from reading the pages, not using
the page's title verbatim) and keyword queries (exact terms from a page). The Python
documentation (python3.11-doc, ~530 pages, Sphinx) is the site search is tuned on; the
PostgreSQL documentation (postgresql-doc-15, ~1,170 pages, DocBook) is never tuned on: its
questions (bench/semantic_eval.py's) were written before any search ran.

``--as-written``: PostgreSQL's questions as first written, without the right pages added on
2026-11-26 (bench/semantic_eval.py's ADDED says which and why).

``--pg``: each site crawled into a throwaway PostgreSQL server (bench/pg.py) instead of a SQLite
file, every run (nothing kept); ``PYTHONPATH=OTHER/src`` measures another tree's code.

``--model NAME`` (``minilm``): the crawl's vectors rebuilt by ``litecrawl index --model NAME``
before the questions are asked, its CPU a page printed. On SQLite the rebuild works on a copy
of the crawl kept beside it (``SITE-KEY-NAME.db``: the rebuild is resumable, so a second run
finds nothing to do). With ``--pg``, the PostgreSQL database gets the rebuilt SQLite copy by
``litecrawl db copy`` when one is kept (the same vectors; ``--pg-rebuild`` rebuilds there
instead), else is rebuilt in place.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import socket
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg import empty, server
from run import CRAWL_FLAGS, LITECRAWL, ROOT, Nginx, timed
from semantic_eval import ANSWERED as PG_QUESTIONS
from semantic_eval import KEYWORDS as PG_KEYWORDS
from semantic_eval import QUESTIONS as PG_AS_WRITTEN

from litecrawl.index.semantic import MODES, find
from litecrawl.store.backends import is_postgres

Queries = dict[str, tuple[str, ...]]

PY_QUESTIONS: Queries = {
    "read and write files of comma separated values": ("library/csv.html",),
    "run another program and capture what it prints": ("library/subprocess.html",),
    "parse the options given to my script on the command line": (
        "library/argparse.html",
        "howto/argparse.html",
    ),
    "save python objects to a file in binary form and load them again": ("library/pickle.html",),
    "find every match of a pattern in a string": ("library/re.html", "howto/regex.html"),
    "measure how long a small snippet of code takes to run": ("library/timeit.html",),
    "add a number of days to a date": ("library/datetime.html",),
    "make a scratch file that is deleted when closed": ("library/tempfile.html",),
    "copy a whole directory with everything in it": ("library/shutil.html",),
    "send an email through a mail server": ("library/smtplib.html",),
    "download a web page over http": ("library/urllib.request.html", "howto/urllib2.html"),
    "write messages about what the program is doing to a file": (
        "library/logging.html",
        "howto/logging.html",
    ),
    "run functions in parallel on several processor cores": (
        "library/multiprocessing.html",
        "library/concurrent.futures.html",
    ),
    "count how many times each item occurs": ("library/collections.html",),
    "all orderings and combinations of some elements": ("library/itertools.html",),
    "remember the results of an expensive function call": ("library/functools.html",),
    "an isolated environment with its own installed packages": (
        "library/venv.html",
        "tutorial/venv.html",
    ),
    "compare two texts and show what changed": ("library/difflib.html",),
    "exact arithmetic with decimal fractions for money": ("library/decimal.html",),
    "pick a random number between two values": ("library/random.html",),
    "annotate what types a function's arguments should have": ("library/typing.html",),
    "write tests that check my functions return the right results": (
        "library/unittest.html",
        "library/doctest.html",
    ),
    "stop the program in the middle and look at the variables": ("library/pdb.html",),
    "find out which functions take the most time": ("library/profile.html",),
    "handle errors raised while the program runs": ("tutorial/errors.html",),
    "a class that holds fields without writing __init__ by hand": ("library/dataclasses.html",),
    "a set of named constant values": ("library/enum.html", "howto/enum.html"),
    "read settings from an ini file": ("library/configparser.html",),
    "compress data to a .gz file": ("library/gzip.html",),
    "run coroutines concurrently with async and await": (
        "library/asyncio.html",
        "library/asyncio-task.html",
    ),
    "list the file names in a folder that match *.txt": (
        "library/glob.html",
        "library/pathlib.html",
    ),
    "store key and value data in a small database file": (
        "library/sqlite3.html",
        "library/shelve.html",
        "library/dbm.html",
    ),
    "sort a list of dictionaries by one of their keys": ("howto/sorting.html",),
    "why does 0.1 + 0.2 not equal 0.3": ("tutorial/floatingpoint.html",),
    "wait for data on several sockets at once": ("library/selectors.html", "library/select.html"),
    "show a number with a comma between the thousands": ("library/string.html",),
    "compute a sha256 digest of some bytes": ("library/hashlib.html",),
    "keep the smallest item at the front of a priority queue": ("library/heapq.html",),
    # answers in one section of a long page
    "assign a value to a variable inside an expression": (
        "reference/expressions.html",
        "whatsnew/3.8.html",
    ),
    "function parameters that can only be passed by keyword": (
        "tutorial/controlflow.html",
        "reference/compound_stmts.html",
    ),
    "remove the whitespace at both ends of a string": ("library/stdtypes.html",),
    "compare a value against several shapes with case clauses": (
        "reference/compound_stmts.html",
        "tutorial/controlflow.html",
        "whatsnew/3.10.html",
    ),
    "make a new list from another one in a single line with for inside brackets": (
        "tutorial/datastructures.html",
    ),
}
PY_KEYWORDS: Queries = {
    "subprocess.run": ("library/subprocess.html",),
    "functools.lru_cache": ("library/functools.html",),
    "collections.Counter": ("library/collections.html",),
    "itertools.permutations": ("library/itertools.html",),
    "json.dumps": ("library/json.html",),
    "pathlib.Path": ("library/pathlib.html",),
    "asyncio.gather": ("library/asyncio-task.html",),
    "contextlib.contextmanager": ("library/contextlib.html",),
    "dataclasses.dataclass": ("library/dataclasses.html",),
    "sqlite3.connect": ("library/sqlite3.html",),
    "unittest.mock": ("library/unittest.mock.html",),
    "timeit": ("library/timeit.html",),
    "heapq.heappush": ("library/heapq.html",),
    "shutil.copytree": ("library/shutil.html",),
    "tempfile.NamedTemporaryFile": ("library/tempfile.html",),
    "re.findall": ("library/re.html",),
    "datetime.timedelta": ("library/datetime.html",),
    "typing.TypedDict": ("library/typing.html",),
    "enum.Enum": ("library/enum.html",),
    "logging.basicConfig": ("library/logging.html",),
    "hashlib.sha256": ("library/hashlib.html",),
    "zipfile.ZipFile": ("library/zipfile.html",),
    "csv.DictReader": ("library/csv.html",),
    "threading.Lock": ("library/threading.html",),
    "os.environ": ("library/os.html",),
    "sys.argv": ("library/sys.html",),
    "urllib.parse.urlparse": ("library/urllib.parse.html",),
    "socket.socket": ("library/socket.html",),
    "pickle.dumps": ("library/pickle.html",),
    "decimal.Decimal": ("library/decimal.html",),
    "random.choice": ("library/random.html",),
    "struct.pack": ("library/struct.html",),
    "abc.ABC": ("library/abc.html",),
    "inspect.signature": ("library/inspect.html",),
}
SITES: dict[str, tuple[Path, Queries, Queries]] = {
    "python": (Path("/usr/share/doc/python3.11/html"), PY_QUESTIONS, PY_KEYWORDS),
    "postgresql": (Path("/usr/share/doc/postgresql-doc-15/html"), PG_QUESTIONS, PG_KEYWORDS),
}
# the question sets as first written, before answers were added (bench/semantic_eval.py: ADDED)
AS_WRITTEN: dict[str, Queries] = {"postgresql": PG_AS_WRITTEN}
CACHE = Path("/tmp/litecrawl-search-eval")


def code_key() -> str:
    """A hash of this tree's package source: a crawl is reused only by the same code."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "src" / "litecrawl").rglob("*.py")):
        digest.update(path.as_posix().encode() + path.read_bytes())
    return digest.hexdigest()[:12]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def crawled(site: str, root: Path, cache: Path, again: bool, pg_url: str | None = None) -> str:
    if pg_url is not None:
        empty(pg_url)
        _crawl(site, root, pg_url)
        return pg_url
    db = cache / f"{site}-{code_key()}.db"
    if db.exists() and not again:
        print(f"{site}: reusing {db}", flush=True)
        return str(db)
    cache.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    _crawl(site, root, str(db))
    return str(db)


def _crawl(site: str, root: Path, db: str) -> None:
    port = free_port()
    nginx = Nginx(root, port)
    try:
        url = f"http://127.0.0.1:{port}/index.html"
        metrics = timed([*LITECRAWL, "crawl", url, "--db", str(db), *CRAWL_FLAGS])
        print(f"{site}: crawled in {metrics['wall']:.1f} s, CPU {metrics['cpu']:.1f} s", flush=True)
    finally:
        nginx.stop()


def rebuilt(site: str, db: str, model: str, cache: Path, pg_rebuild: bool) -> str:
    """``db`` with its vectors rebuilt by ``model`` (see the module doc)."""
    copy = cache / f"{site}-{code_key()}-{model}.db"
    if is_postgres(db) and copy.exists() and not pg_rebuild:
        timed([*LITECRAWL, "db", "copy", "--from", str(copy), "--to", db])
        print(f"{site}: {model} vectors copied from {copy.name}", flush=True)
        return db
    target = db
    if not is_postgres(db):
        if not copy.exists():
            shutil.copyfile(db, copy)
        target = str(copy)
    metrics = timed([*LITECRAWL, "index", "--model", model, "--db", target])
    texts = _texts(target)
    print(
        f"{site}: rebuilt with {model} in {metrics['wall']:.1f} s, CPU {metrics['cpu']:.1f} s"
        f" ({texts} pages with their sections: {1000 * metrics['cpu'] / max(texts, 1):.0f} ms"
        " CPU a page)",
        flush=True,
    )
    return target


def _texts(db: str) -> int:
    from litecrawl.store.backends import open_index

    with open_index(db) as index:
        return index.vectors.count()


def rank(db: str, root: Path, query: str, mode: str, right: tuple[str, ...]) -> int | None:
    hits = find(db, query, mode=mode, limit=10).hits  # type: ignore[arg-type]
    wanted = {str(root / p) for p in right}
    for i, hit in enumerate(hits, start=1):
        for url in (hit.url, *hit.other_urls):
            path = url.split("#", 1)[0].split("/", 3)[-1]
            if str(root / path) in wanted:
                return i
    return None


def report(site: str, db: str, root: Path, kinds: dict[str, Queries], misses: bool) -> None:
    print(f"\n{site} ({db if is_postgres(db) else Path(db).name})\n")
    print("| queries | mode | MRR@10 | recall@10 | top-3 | ms/query |")
    print("|---|---|---|---|---|---|")
    for kind, queries in kinds.items():
        for mode in MODES:
            start = time.perf_counter()
            ranks = {q: rank(db, root, q, mode, right) for q, right in queries.items()}
            ms = (time.perf_counter() - start) * 1000 / len(queries)
            n = len(ranks)
            mrr = sum(1 / r for r in ranks.values() if r) / n
            recall = sum(1 for r in ranks.values() if r) / n
            top3 = sum(1 for r in ranks.values() if r and r <= 3) / n
            print(f"| {kind} ({n}) | {mode} | {mrr:.3f} | {recall:.2f} | {top3:.2f} | {ms:.0f} |")
            if misses:
                late = {q: r for q, r in ranks.items() if r is None or r > 3}
                print(f"   not in the top 3: {late}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sites", default=",".join(SITES), help="comma-separated: python,postgresql"
    )
    parser.add_argument("--cache", type=Path, default=CACHE, help="where crawled databases stay")
    parser.add_argument("--recrawl", action="store_true", help="crawl even if a database is kept")
    parser.add_argument("--misses", action="store_true", help="list questions not in the top 3")
    parser.add_argument("--pg", action="store_true", help="crawl into PostgreSQL (bench/pg.py)")
    parser.add_argument(
        "--as-written", action="store_true", help="the question sets before answers were added"
    )
    parser.add_argument("--model", help="rebuild the vectors with this model first (minilm)")
    parser.add_argument(
        "--pg-rebuild", action="store_true", help="with --pg --model: rebuild in PostgreSQL"
    )
    args = parser.parse_args()
    with ExitStack() as stack:
        pg_url = stack.enter_context(server(None))[0] if args.pg else None
        evaluate(args, pg_url)


def evaluate(args: argparse.Namespace, pg_url: str | None) -> None:
    for site in args.sites.split(","):
        root, questions, keywords = SITES[site.strip()]
        if args.as_written:
            questions = AS_WRITTEN.get(site.strip(), questions)
        absent = sorted(
            {
                p
                for q in (questions, keywords)
                for ps in q.values()
                for p in ps
                if not (root / p).exists()
            }
        )
        if absent:
            raise SystemExit(f"pages not in {root}: {absent}")
        db = crawled(site, root, args.cache, args.recrawl, pg_url)
        if args.model:
            db = rebuilt(site, db, args.model, args.cache, args.pg_rebuild)
        kinds = {"plain-word questions": questions, "keyword": keywords}
        report(site, db, root, kinds, args.misses)


if __name__ == "__main__":
    main()
