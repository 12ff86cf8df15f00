"""Loaded by every Python process of a crawl that bench/stages.py runs (this folder on
PYTHONPATH, ``LC_STAGES`` naming where to write): the analysis workers' stages and the writer's
wrapped with ``time.thread_time`` (the calling thread's CPU), each process's totals written to
``LC_STAGES/PID.json`` at its exit. Nothing happens without ``LC_STAGES``."""

from __future__ import annotations

import os
import sys

OUT = os.environ.get("LC_STAGES")


def _install(out: str) -> None:
    import atexit
    import inspect
    import json
    import time
    from typing import Any

    spent: dict[str, list[float]] = {}

    def wrap(owner: Any, name: str, label: str) -> None:
        fn = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                total = spent.setdefault(label, [0.0, 0])
                total[0] += time.thread_time() - start
                total[1] += 1

        static = isinstance(inspect.getattr_static(owner, name), staticmethod)
        setattr(owner, name, staticmethod(timed) if static else timed)

    def dump() -> None:
        times = os.times()
        with open(f"{out}/{os.getpid()}.json", "w") as f:
            json.dump({"argv": sys.orig_argv, "cpu": times.user + times.system, "stages": spent}, f)

    atexit.register(dump)
    if "litecrawl.index.pool" in sys.orig_argv:  # an analysis worker
        import litecrawl.extract.page as page
        import litecrawl.index.work as work
        from litecrawl.extract.dom import LxmlDoc

        wrap(work, "analyze", "worker: analyze, all of it")
        wrap(work, "extract_page", "worker: extract_page, all of it")
        wrap(page, "decode_html", "worker: decode")
        wrap(page, "_valid_chars", "worker: valid characters")
        wrap(page, "parse_html", "worker: parse (links read)")
        wrap(LxmlDoc, "render_sections", "worker: text and sections")
        wrap(LxmlDoc, "render", "worker: text (no sections)")
        wrap(LxmlDoc, "title_candidates", "worker: title")
        wrap(page, "keywords", "worker: keywords")
        wrap(page, "preview", "worker: preview")
        wrap(work, "_vectors", "worker: vectors")
        wrap(work, "simhash", "worker: simhash")
        wrap(work, "resolve_links", "worker: links resolved")
        # the worker's loop runs as __main__ (python -m litecrawl.index.pool), made after this
        # file runs: its pickles and pipe are read as the worker's CPU outside analyze
    elif "crawl" in sys.orig_argv:  # the crawler: its writer thread's statements
        import litecrawl.store.sqlite.index as index
        import litecrawl.store.sqlite.writes as writes
        from litecrawl.store.sqlite.frontier import SQLiteFrontier

        wrap(SQLiteFrontier, "_transaction", "writer: transactions, all of them")
        wrap(writes, "write_batch", "writer: a batch's writes, all of them")
        wrap(writes, "insert_links", "writer: the frontier's link rows")
        wrap(writes, "write_links", "writer: the link graph")
        wrap(writes, "write_documents", "writer: documents, all of it")
        wrap(index, "_known", "writer: documents' look-ups")
        wrap(index, "_write", "writer: resource and document rows")
        wrap(index, "write_document_vectors", "writer: vector rows")
        wrap(index, "index_texts", "writer: FTS5 insert")


if OUT:
    _install(OUT)
