"""The names of the main-article extractors (``[extract] engine``).

Kept apart from :mod:`litecrawl.extract` so the configuration and the crawler process can name
them without importing the extraction stack (lxml, numpy): that runs in the analysis workers.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["DEFAULT_ENGINE", "ENGINES", "ArticleEngine"]

ArticleEngine = Literal["trafilatura", "resiliparse"]
ENGINES: tuple[str, ...] = get_args(ArticleEngine)
# chosen on real documentation sites (bench/markdown_quality.py, bench/realsite.py): both engines
# give the same code blocks, tables and links once their choice is cut from our own tree
# (extract/boundaries.py); resiliparse at half trafilatura's CPU, the one that keeps
# --main-article above half the plain crawl's speed (bench/README.md)
DEFAULT_ENGINE: ArticleEngine = "resiliparse"
