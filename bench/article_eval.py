"""Main-article quality and speed of each ``[extract] engine`` on a labelled set of real pages.

    uv run python bench/article_eval.py --corpus /tmp/trafilatura-eval/tests

The labelled set is trafilatura's own evaluation corpus (its repository's ``tests/``:
``evaldata.json``, ``eval/`` and ``cache/``; ~990 pages in many languages, each with up to six
text snippets that belong to the main text and up to six that do not). It is not copied into
this repository: point ``--corpus`` at a checkout. Scoring is trafilatura's
(``tests/eval_common.py``): a snippet counts when it occurs in the whitespace-normalised output;
precision, recall and F1 over all snippets. Each engine runs through :func:`extract_page` exactly
as a crawl with ``--main-article`` does (the full page when the engine finds no article), so the
figures are what a user gets; "full page" is the same without ``--main-article``, for reference.
CPU ms/page is the extraction alone, in this process.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from litecrawl.extract import extract_page

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _load(corpus: Path, limit: int | None) -> list[tuple[str, bytes, list[str], list[str]]]:
    data = json.loads((corpus / "evaldata.json").read_text("utf-8"))
    pages = []
    for url in sorted(data):
        item = data[url]
        for sub in ("eval", "cache"):
            path = corpus / sub / item["file"]
            if path.is_file():
                pages.append((url, path.read_bytes(), item["with"], item["without"]))
                break
    return pages[:limit] if limit else pages


def _score(
    pages: list[tuple[str, bytes, list[str], list[str]]], main_article: bool, engine: str
) -> dict[str, float]:
    tp = fp = fn = tn = 0
    articles = 0
    cpu = 0.0
    for url, body, with_, without in pages:
        start = time.process_time()
        extracted = extract_page(
            body,
            url,
            "text/html",
            main_article=main_article,
            engine=engine,  # type: ignore[arg-type]
            want_markdown=False,
        )
        cpu += time.process_time() - start
        articles += extracted.extraction_mode == "article"
        text = _norm(extracted.text)
        hits = sum(_norm(w) in text for w in with_)
        misses = sum(_norm(w) in text for w in without)
        tp, fn = tp + hits, fn + len(with_) - hits
        fp, tn = fp + misses, tn + len(without) - misses
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "pages": len(pages),
        "article_pages": articles,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": (tp + tn) / (tp + fp + fn + tn),
        "cpu_ms_per_page": cpu / len(pages) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/tmp/trafilatura-eval/tests"))
    parser.add_argument("--limit", type=int, help="only the first N pages (sorted by URL)")
    parser.add_argument("--engines", default="trafilatura,resiliparse")
    args = parser.parse_args()
    pages = _load(args.corpus, args.limit)
    extract_page(pages[0][1], pages[0][0], "text/html", main_article=True)  # imports, warm-up
    runs = [("full page", False, "trafilatura")]
    runs += [(engine, True, engine) for engine in args.engines.split(",")]
    print(
        "| engine | pages | article / full page | precision | recall | F1 | accuracy "
        "| CPU ms/page |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, main_article, engine in runs:
        s = _score(pages, main_article, engine)
        print(
            f"| {name} | {s['pages']:.0f} | {s['article_pages']:.0f} / "
            f"{s['pages'] - s['article_pages']:.0f} | {s['precision']:.3f} | {s['recall']:.3f} | "
            f"{s['f1']:.3f} | {s['accuracy']:.3f} | {s['cpu_ms_per_page']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
