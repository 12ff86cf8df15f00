"""Hit rate of the embedder's per-word cache by its bound (``litecrawl.index.embed``).

    uv run python bench/word_cache.py [--site /usr/share/doc/python3.11/html]

Replays what the analysis workers embed (each page's first MAX_WORDS words, in crawl order) through
a cache that starts afresh when full, as ``Embedder.vector`` does, and prints the share of
word lookups that hit for each bound. A miss costs one tokenizer call (~1.6 us a word); a cached
word costs 1 KiB (256 float32 sums).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import lxml.html

from litecrawl.index.embed import MAX_WORDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    args = parser.parse_args()
    pages = []
    for path in sorted(args.site.rglob("*.html")):
        try:
            text = lxml.html.parse(str(path)).getroot().text_content()
        except Exception:  # a file lxml cannot read is not a page the crawl would embed
            continue
        pages.append(text.split()[:MAX_WORDS])
    total = sum(len(p) for p in pages)
    distinct = len({w for p in pages for w in p})
    print(f"{len(pages)} pages, {total} words embedded, {distinct} distinct")
    for bound in (2_048, 8_192, 16_384, 32_768, 65_536, 200_000):
        cache: set[str] = set()
        hits = 0
        for words in pages:
            if len(cache) + len(words) > bound:
                cache.clear()
            for word in words:
                if word in cache:
                    hits += 1
                else:
                    cache.add(word)
        print(f"bound {bound:>7} words ({bound // 1024:>4} MiB): hit rate {hits / total:.3f}")


if __name__ == "__main__":
    main()
