"""Full-page Markdown converters on real pages: speed and a sample, side by side.

    uv run --with markdownify python bench/markdown_compare.py --pages 60 --sample sql-select.html

Takes every 20th page of PostgreSQL 15's HTML documentation (``postgresql-doc-15``), runs
:func:`litecrawl.extract.extract_page` once to get the filtered ``<body>`` litecrawl converts
(scripts dropped, links absolute, code languages marked), then times each converter on it (CPU
time, warm, in this process) and prints the first lines of one page's Markdown from each.
markdownify is not a litecrawl dependency any more: ``uv run --with markdownify`` brings it.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from litecrawl.extract import extract_page
from litecrawl.extract.markdown import convert_html

SITE = Path("/usr/share/doc/postgresql-doc-15/html")


def _markdownify() -> Callable[[str], str] | None:
    try:
        from markdownify import markdownify  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    return lambda html: str(markdownify(html, heading_style="ATX", bullets="-"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--sample", default="sql-select.html")
    parser.add_argument("--lines", type=int, default=40)
    args = parser.parse_args()
    files = sorted(SITE.glob("*.html"))[::20][: args.pages]
    url = "http://127.0.0.1:8282/"
    bodies = [
        extract_page(f.read_bytes(), url + f.name, "text/html").html_for_markdown for f in files
    ]
    converters: dict[str, Callable[[str], str]] = {"html-to-markdown": convert_html}
    md = _markdownify()
    if md is not None:
        converters["markdownify"] = md
    size = sum(map(len, bodies)) / len(bodies) / 1024
    print(f"{len(bodies)} pages, {size:.1f} KB of body HTML each")
    for name, convert in converters.items():
        convert(bodies[0])
        start = time.process_time()
        for body in bodies:
            convert(body)
        print(f"{name}: {(time.process_time() - start) / len(bodies) * 1000:.2f} ms/page")
    sample = extract_page((SITE / args.sample).read_bytes(), url + args.sample, "text/html")
    for name, convert in converters.items():
        print(f"\n--- {name}: {args.sample}, first {args.lines} lines")
        print("\n".join(convert(sample.html_for_markdown).strip().splitlines()[: args.lines]))


if __name__ == "__main__":
    main()
