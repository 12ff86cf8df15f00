"""What the index holds of a page, against the page's main content: words lost, boilerplate left.

    uv run python bench/index_text.py [--show N]

Every HTML page of two real documentation sites (Debian's python3.11-doc and postgresql-doc-15)
goes through ``extract_page`` as the crawler's index sees it (full-page mode, no Markdown), with
and without :mod:`litecrawl.extract.boilerplate`. The main content is read from the page's own
markup, independently of the rules: Sphinx's ``role="main"`` element; for DocBook, the body's
children other than its ``navheader`` / ``navfooter`` blocks. Words are lowercased runs of
letters and digits; "lost" = a main-content word absent from the indexed text (must be 0),
"frame share" = the share of indexed word occurrences that are not in the main content.
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

import lxml.html
from lxml import etree

import litecrawl.extract.dom as dom
from litecrawl.extract import extract_page

SITES = {
    "python": Path("/usr/share/doc/python3.11/html"),
    "postgresql": Path("/usr/share/doc/postgresql-doc-15/html"),
}
WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def main_text(html: bytes) -> str | None:
    root = lxml.html.document_fromstring(html)
    etree.strip_elements(root, *dom.ALWAYS_REMOVE, with_tail=False)
    main = root.xpath("//*[@role='main']")
    if main:
        return dom._plain_text(main[0])  # the index's own text pass, on the marked part only
    body = root.find("body")
    if body is None:
        return None
    frame = [c for c in body if (c.get("class") or "") in ("navheader", "navfooter")]
    if not frame:
        return None  # no marked frame: no reference
    for el in frame:
        body.remove(el)
    return dom._plain_text(body)


def index_words(html: bytes, url: str) -> tuple[list[str], str]:
    got = extract_page(html, url, "text/html; charset=utf-8", want_markdown=False)
    return words(got.title + "\n" + got.text), got.preview


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=2, help="previews to print per site")
    args = parser.parse_args()
    keep = dom.drop_boilerplate
    for site, root in SITES.items():
        pages = sorted(p for p in root.rglob("*.html") if "_static" not in p.parts)
        lost_pages = lost_words = 0
        shares: dict[str, list[float]] = {"before": [], "after": []}
        shown = 0
        for page in pages:
            html = page.read_bytes()
            reference = main_text(html)
            if reference is None:
                continue
            content = set(words(reference))
            url = f"http://127.0.0.1/{page.relative_to(root)}"
            for label in ("before", "after"):
                dom.drop_boilerplate = keep if label == "after" else (lambda body: 0)  # type: ignore[assignment]
                indexed, preview = index_words(html, url)
                if not indexed:
                    continue
                frame = sum(1 for w in indexed if w not in content)
                shares[label].append(frame / len(indexed))
                if label == "after":
                    missing = content - set(indexed)
                    lost_pages += bool(missing)
                    lost_words += len(missing)
                    if missing and lost_pages <= 3:
                        print(f"  {page.relative_to(root)} lost {sorted(missing)[:10]}")
                    if shown < args.show:
                        shown += 1
                        print(f"  preview {page.relative_to(root)}: {preview[:160]!r}")
        dom.drop_boilerplate = keep
        n = len(shares["after"])
        print(
            f"{site}: {n} pages with a marked main content; pages losing a main-content word:"
            f" {lost_pages} ({lost_words} words); frame share of indexed words, median"
            f" before {statistics.median(shares['before']):.3f}"
            f" after {statistics.median(shares['after']):.3f},"
            f" mean before {statistics.mean(shares['before']):.3f}"
            f" after {statistics.mean(shares['after']):.3f}"
        )


if __name__ == "__main__":
    main()
