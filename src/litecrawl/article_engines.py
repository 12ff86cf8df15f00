"""The names of the main-article extractors (``[extract] engine``).

Kept apart from :mod:`litecrawl.extract` so the configuration and the crawler process can name
them without importing the extraction stack (lxml, numpy): that runs in the analysis workers.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["DEFAULT_ENGINE", "ENGINES", "ArticleEngine"]

ArticleEngine = Literal["trafilatura", "resiliparse"]
ENGINES: tuple[str, ...] = get_args(ArticleEngine)
# chosen by quality and speed on trafilatura's labelled evaluation pages (bench/README.md)
DEFAULT_ENGINE: ArticleEngine = "trafilatura"
