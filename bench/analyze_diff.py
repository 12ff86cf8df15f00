"""The analysis worker's outputs of two trees, page by page: whether a change kept them.

    uv run python bench/analyze_diff.py --site /tmp/lckit-10000-port8820 --n 2000 \
        --tree before=/path/to/old/src --tree after=src
    uv run python bench/analyze_diff.py --site /usr/share/doc/python3.11/html \
        --tree before=/path/to/old/src --tree after=src

Each tree's :func:`litecrawl.index.work.analyze` (the worker's whole job with the crawl's
default settings: text, sections, keywords, simhash, the page's and its sections' vectors, the
document's hashes, the links) runs in its own interpreter over the site's pages, in one order
(every ``*.html`` under the site, or the kit's first ``--n`` pages), with one worker's caches;
each page's result is pickled (the bytes a worker sends) and compared; for the pages that
differ, the first fields that do. A speed change to the worker that means to keep its outputs
shows 0 pages differing.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

DUMP = """
import pickle, sys
from pathlib import Path
from litecrawl.index.analyze import AnalyzerSettings
from litecrawl.index.work import analyze
site, n, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if (site / "s000").is_dir():  # the kit's pages, by name
    files = sorted(site.glob("s*/*.html"))[:n]
else:
    files = sorted(site.rglob("*.html"))[:n]
settings = AnalyzerSettings()
with open(out, "wb") as f:
    for path in files:
        name = str(path.relative_to(site))
        got = analyze("http://127.0.0.1:8000/" + name, path.read_bytes(),
                      {"content-type": "text/html"}, 200, 1, "seed", settings, 0.0)
        pickle.dump((name, pickle.dumps(got, protocol=5), repr(got)), f)
"""


def dump(src: str, site: Path, n: int, out: Path) -> list[tuple[str, bytes, str]]:
    env = {**os.environ, "PYTHONPATH": src, "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    subprocess.run([sys.executable, "-c", DUMP, str(site), str(n), str(out)], env=env, check=True)
    pages = []
    with out.open("rb") as f:
        while True:
            try:
                pages.append(pickle.load(f))
            except EOFError:
                return pages


def first_difference(a: str, b: str) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"at {at}: {a[max(0, at - 60) : at + 60]!r}\n    vs {b[max(0, at - 60) : at + 60]!r}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True)
    parser.add_argument("--n", type=int, default=10**9, help="at most this many pages")
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC, twice")
    parser.add_argument("--show", type=int, default=3, help="pages that differ shown")
    args = parser.parse_args()
    trees = [t.split("=", 1) for t in args.tree]
    if len(trees) != 2:
        raise SystemExit("two --tree NAME=SRC")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [dump(src, args.site, args.n, Path(tmp) / f"{name}.pickle") for name, src in trees]
    (a_name, _), (b_name, _) = trees
    differ = [(x, y) for x, y in zip(*runs, strict=True) if x[1] != y[1]]
    print(f"{args.site}: {len(runs[0])} pages, {len(differ)} differ ({a_name} vs {b_name})")
    for x, y in differ[: args.show]:
        print(f"  {x[0]}: {first_difference(x[2], y[2])}")


if __name__ == "__main__":
    main()
