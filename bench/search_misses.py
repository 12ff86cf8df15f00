"""Where a question's right page is lost: each retriever's rank for it, and what outranks it.

    uv run python bench/search_misses.py --db /tmp/litecrawl-search-eval/postgresql-KEY.db \
        --site postgresql [--depth 50] [--all]

For every plain-word question of ``--site`` (bench/search_eval.py's sets), on a crawl that
bench/search_eval.py made: the rank of the first right page in hybrid's keyword list (its
any-word bm25 list), in the meaning list by the page's own vector alone, in the meaning list
(page and best section), and in hybrid, each read ``--depth`` deep ("-" = not there); then
hybrid's top 3 (title, and the section it names). The last lines give the floor: how many
questions have their right page in no list, in one list only, and the MRR@10 and top-3 that a
fusion choosing, for each question, the better of the two lists' ranks would reach (no fusion
of these two lists that keeps each list's order does better on a question than its better
list, except by lifting a page both lists rank low).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_eval import SITES

from litecrawl.index import semantic
from litecrawl.index.embed import embedder
from litecrawl.store.backends import open_index
from litecrawl.store.index import SearchHit


def position(hits: list[SearchHit], root: Path, right: tuple[str, ...]) -> int | None:
    wanted = {str(root / p) for p in right}
    for i, hit in enumerate(hits, start=1):
        for url in (hit.url, *hit.other_urls):
            if str(root / url.split("#", 1)[0].split("/", 3)[-1]) in wanted:
                return i
    return None


def show(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a crawl bench/search_eval.py made")
    parser.add_argument("--site", default="postgresql", choices=sorted(SITES))
    parser.add_argument("--depth", type=int, default=50, help="how deep each list is read")
    parser.add_argument("--all", action="store_true", help="every question, not only misses")
    args = parser.parse_args()
    root, questions, _ = SITES[args.site]
    counts = {"none": 0, "keyword only": 0, "meaning only": 0, "both": 0}
    best: list[int | None] = []  # per question, the better rank of the two lists
    print("| question | keyword | page vector | meaning | hybrid | hybrid's top 3 |")
    print("|---|---|---|---|---|---|")
    with open_index(args.db) as index:
        for question, right in questions.items():
            words, _ = semantic.keyword_list(index, question, args.depth)
            vector = embedder().vector(question)
            assert vector is not None
            pages = semantic._hits(index, index.vectors.nearest(vector, args.depth))
            also = [h.resource_id for h in words]  # as hybrid reads them
            meaning = semantic._by_meaning(index, question, args.depth, also)
            hybrid = semantic.find(args.db, question, mode="hybrid", limit=args.depth).hits
            ranks = [position(found, root, right) for found in (words, pages, meaning, hybrid)]
            k, m = ranks[0] is not None, ranks[2] is not None
            kind = "both" if k and m else "keyword only" if k else "meaning only" if m else "none"
            counts[kind] += 1
            best.append(min((r for r in (ranks[0], ranks[2]) if r is not None), default=None))
            if not args.all and ranks[3] is not None and ranks[3] <= 1:
                continue
            top = "; ".join(
                f"{h.url.rsplit('/', 1)[-1]}" + (f" [{h.section[:30]}]" if h.section else "")
                for h in hybrid[:3]
            )
            print(f"| {question} | {' | '.join(show(r) for r in ranks)} | {top} |")
    total = len(questions)
    shares = ", ".join(f"{name} {n} ({n / total:.0%})" for name, n in counts.items())
    print(f"\nright page within {args.depth} of the keyword and meaning lists: {shares}")
    mrr = sum(1 / r for r in best if r is not None and r <= 10) / total
    top3 = sum(1 for r in best if r is not None and r <= 3) / total
    print(f"the better of the two lists per question: MRR@10 {mrr:.3f}, top-3 {top3:.0%}")


if __name__ == "__main__":
    main()
