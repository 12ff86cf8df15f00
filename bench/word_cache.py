"""Hit rate of the embedder's per-word cache by its bound and policy (``litecrawl.index.embed``).

    uv run python bench/word_cache.py                      # Python's and PostgreSQL's docs, the kit
    uv run python bench/word_cache.py --site DIR --kit 0   # one site only
    uv run python bench/word_cache.py --kit 0 --cpu /work/main .@8192 --rounds 3   # CPU, alternated

Replays what one analysis worker embeds, in crawl order: each page's title and first MAX_WORDS
words, and with more than one section, the title and first SECTION_WORDS words of each section
(``litecrawl.index.work``), extracted by ``extract_page`` as the worker does. The sites follow
each other in one replay (a crawl moving from one site's vocabulary to another's), then the
kit's pages (bench/site.py: 24 words and the page's own number, a word no other page has).
Printed: the share of word lookups that hit, by bound and policy:

- ``clear``: start afresh when full (``Embedder`` until 2026-11-26);
- ``generations``: two halves; a word found in the older half is copied to the newer, the older
  is dropped when the newer fills (what repeats stays, at the cost of a row copy per old hit);
- ``repeats``: when full, keep the words used in more than one text since they entered (or
  since the last time it filled), the most used first, up to half the bound (``Embedder`` now);
- ``lru``: exact least-recently-used, the reference (too slow per word for the worker).

A miss costs one tokenizer call (~1.6 us a word); a cached word costs 1 KiB (256 float32 sums).

``--cpu TREE[@BOUND]...`` then embeds the documentation's texts with the real ``Embedder`` of this
tree and of each TREE (a checkout, ``.`` for this one; its ``src`` put first on the path; with
``@BOUND``, ``Embedder(cache_words=BOUND)``), each in a fresh interpreter, alternated ``--rounds``
times: CPU seconds of the embedding alone (the model's load excluded), the words tokenized (the
cache's misses) and the peak RSS of each interpreter. ``--texts FILE`` keeps the extracted texts
for the next invocation (extracting the two sites takes minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

from litecrawl.extract import extract_page
from litecrawl.index.embed import MAX_WORDS, SECTION_WORDS, page_text

BOUNDS = (1_024, 2_048, 4_096, 8_192, 16_384, 32_768)
DOCS = ["/usr/share/doc/python3.11/html", "/usr/share/doc/postgresql-doc-15/html"]


def lookups(path: Path, url: str) -> list[list[str]]:
    """The word lists one page costs the embedder (its own vector, then its sections')."""
    try:
        page = extract_page(path.read_bytes(), url, "text/html", want_sections=True)
    except Exception:  # a file the worker could not extract is not embedded either
        return []
    out = [page_text(page.title, page.text).split()[:MAX_WORDS]]
    if len(page.sections) > 1:
        for section in page.sections:
            words = " ".join(section.text.split()[:SECTION_WORDS])
            out.append(page_text(page.title, words).split()[:MAX_WORDS])
    return [words for words in out if words]


def replay_clear(texts: list[list[str]], bound: int) -> int:
    cache: set[str] = set()
    hits = 0
    for words in texts:
        if len(cache) + len(words) > bound:
            cache.clear()
        for word in words:
            if word in cache:
                hits += 1
            else:
                cache.add(word)
    return hits


def replay_generations(texts: list[list[str]], bound: int) -> int:
    half = bound // 2
    new: set[str] = set()
    old: set[str] = set()
    hits = 0
    for words in texts:
        if len(new) + len(words) > half:
            old, new = new, set()
        for word in words:
            if word in new:
                hits += 1
            elif word in old:
                hits += 1
                new.add(word)
            else:
                new.add(word)
    return hits


def replay_repeats(texts: list[list[str]], bound: int) -> int:
    uses: dict[str, int] = {}  # texts that used the word since it entered or the last fill
    hits = 0
    for words in texts:
        if len(uses) + len(words) > bound:
            kept = sorted((w for w, n in uses.items() if n > 1), key=uses.__getitem__)
            uses = dict.fromkeys(kept[-(bound // 2) :], 1)
        for word in words:
            if word in uses:
                hits += 1
            else:
                uses[word] = 0
        for word in set(words):
            uses[word] += 1
    return hits


def replay_lru(texts: list[list[str]], bound: int) -> int:
    cache: OrderedDict[str, None] = OrderedDict()
    hits = 0
    for words in texts:
        for word in words:
            if word in cache:
                hits += 1
                cache.move_to_end(word)
            else:
                cache[word] = None
                if len(cache) > bound:
                    cache.popitem(last=False)
    return hits


POLICIES = {
    "clear": replay_clear,
    "generations": replay_generations,
    "repeats": replay_repeats,
    "lru": replay_lru,
}


def report(name: str, texts: list[list[str]]) -> None:
    total = sum(len(w) for w in texts)
    distinct = len({w for words in texts for w in words})
    print(f"\n{name}: {len(texts)} texts, {total} words looked up, {distinct} distinct")
    print("| bound (words) | MiB | " + " | ".join(POLICIES) + " |")
    print("|---|---|" + "---|" * len(POLICIES))
    for bound in BOUNDS:
        rates = [f"{replay(texts, bound) / total:.3f}" for replay in POLICIES.values()]
        print(f"| {bound} | {bound // 1024} | " + " | ".join(rates) + " |", flush=True)


CPU_CHILD = """
import json, os, resource, sys, time
from litecrawl.index.embed import Embedder
texts = json.load(open(sys.argv[1]))
bound = os.environ.get("LCBENCH_CACHE_WORDS")
e = Embedder(int(bound)) if bound else Embedder()
e.vector("warm up")
start = time.process_time()
for words in texts:
    e.vector(" ".join(words))
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"cpu": cpu, "peak": peak, "tokenized": getattr(e, "tokenized", None)}))
"""


def cpu(texts: list[list[str]], specs: list[str], rounds: int) -> None:
    here = Path(__file__).resolve().parent.parent
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(texts, f)
        f.flush()
        got: dict[str, list[dict[str, float]]] = {}
        for _ in range(rounds):
            for spec in [".", *specs]:  # alternated: the machine's drift
                tree, _, bound = spec.partition("@")
                src = (here if tree == "." else Path(tree).resolve()) / "src"
                env = dict(os.environ, PYTHONPATH=str(src), LCBENCH_CACHE_WORDS=bound)
                out = subprocess.run(
                    [sys.executable, "-c", CPU_CHILD, f.name],
                    env=env, check=True, capture_output=True, text=True,
                ).stdout  # fmt: skip
                got.setdefault(spec, []).append(json.loads(out))
    print(f"\nembedding {len(texts)} texts ({sum(map(len, texts))} words), {rounds} rounds")
    print("| tree@bound | CPU s (each round) | words tokenized | peak RSS MiB |")
    print("|---|---|---|---|")
    for spec, runs in got.items():
        cpus = ", ".join(f"{r['cpu']:.2f}" for r in runs)
        print(f"| {spec} | {cpus} | {runs[0]['tokenized']} | {max(r['peak'] for r in runs):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, action="append", help="default: " + ", ".join(DOCS))
    parser.add_argument("--kit", type=int, default=4000, help="kit pages to replay (0: none)")
    parser.add_argument("--cpu", nargs="*", metavar="TREE", help="CPU of the real Embedder")
    parser.add_argument("--texts", type=Path, help="the documentation's texts, kept here")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    docs: list[list[str]] = []
    if args.texts and args.texts.exists():
        docs = json.loads(args.texts.read_text())
    else:
        for site in args.site or [Path(d) for d in DOCS]:
            for path in sorted(site.rglob("*.html")):
                docs.extend(lookups(path, f"http://docs.test/{path.relative_to(site)}"))
        if args.texts:
            args.texts.write_text(json.dumps(docs))
    if docs and args.cpu is not None:
        cpu(docs, args.cpu, args.rounds)
        return
    if docs:
        report("documentation sites, one after the other", docs)
    if args.kit:
        root = Path(f"/tmp/lcbench-{max(args.kit, 10_000)}")
        kit: list[list[str]] = []
        for i in range(1, args.kit + 1):
            path = root / f"s{i // 1000:03d}" / f"page{i}.html"
            if path.exists():
                kit.extend(lookups(path, f"http://127.0.0.1:8181/{path.relative_to(root)}"))
        report(f"kit pages 1-{args.kit} ({root})", kit)


if __name__ == "__main__":
    main()
