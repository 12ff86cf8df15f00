"""Main-article output of two trees, page by page, on a directory of real pages: what changed.

    uv run python bench/article_diff.py --site /usr/share/doc/sqlite3 \
        --tree before=/path/to/old/src --tree after=src [--engine resiliparse] [--show 8]

Each tree's ``extract_page(..., main_article=True)`` runs in its own interpreter over every
``*.html`` under the site (no crawl: the files as they are); then the pages whose Markdown or
indexed text differ, the characters of each, and the lines the second tree no longer has, for
the pages that lost most; ``--full-page``: the same without ``main_article`` (the full
page's Markdown and indexed text). ``--count WORD`` counts the pages whose Markdown holds WORD
(a menu entry, say) in each tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

DUMP = """
import json, sys
from pathlib import Path
from litecrawl.extract import extract_page, to_markdown
site, engine, out, article = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
res = {}
for f in sorted(site.rglob("*.html")):
    name = str(f.relative_to(site))
    p = extract_page(f.read_bytes(), "http://127.0.0.1:8000/" + name, "text/html",
                     main_article=article, engine=engine)
    res[name] = [p.extraction_mode, p.text, to_markdown(p)]
json.dump(res, open(out, "w"))
"""


def dump(src: str, site: Path, engine: str, out: Path, article: bool) -> dict[str, list[str]]:
    env = {**os.environ, "PYTHONPATH": src, "OPENBLAS_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", DUMP, str(site), engine, str(out), "1" if article else "0"]
    subprocess.run(argv, env=env, check=True)
    data: dict[str, list[str]] = json.loads(out.read_text())
    return data


def gone_lines(old: str, new: str) -> list[str]:
    left = Counter(new.splitlines())
    out = []
    for line in old.splitlines():
        if left[line] > 0:
            left[line] -= 1
        else:
            out.append(line)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True)
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC, twice")
    parser.add_argument("--engine", default="resiliparse")
    parser.add_argument("--show", type=int, default=8)
    parser.add_argument("--count", action="append", default=[])
    parser.add_argument("--full-page", action="store_true", help="without --main-article")
    args = parser.parse_args()
    (na, sa), (nb, sb) = (t.split("=", 1) for t in args.tree[:2])
    with tempfile.TemporaryDirectory() as tmp:
        a = dump(sa, args.site, args.engine, Path(tmp) / "a.json", not args.full_page)
        b = dump(sb, args.site, args.engine, Path(tmp) / "b.json", not args.full_page)
    for i, what in ((2, "Markdown"), (1, "indexed text")):
        changed = [k for k in a if a[k][i] != b.get(k, ["", "", ""])[i]]
        size_a, size_b = sum(len(v[i]) for v in a.values()), sum(len(v[i]) for v in b.values())
        print(f"{what}: {len(changed)} of {len(a)} pages differ; {size_a} -> {size_b} chars")
        losses = sorted(
            ((sum(map(len, g)), k, g) for k in changed if (g := gone_lines(a[k][i], b[k][i]))),
            reverse=True,
        )
        for n, k, g in losses[: args.show]:
            print(f"  {k}: {n} chars only in {na}, e.g. {g[:4]}")
    for word in args.count:
        ca = sum(word in v[2] for v in a.values())
        cb = sum(word in v[2] for v in b.values())
        print(f"pages whose Markdown holds {word!r}: {na} {ca}, {nb} {cb} (of {len(a)})")


if __name__ == "__main__":
    main()
