"""Main-article text from an engine (``--main-article``): trafilatura or resiliparse.

Only the engine's *choice* of text is used: :mod:`litecrawl.extract.boundaries` finds it on the
page's own tree, and the article's Markdown and indexed text come from there, as for a full page
(code blocks with their language, tables, nested lists, absolute links). trafilatura works on a
copy of the page's lxml tree (no second parse), resiliparse on its own fast parse of the HTML.

Quality and speed of the engines are in bench/README.md (``bench/article_eval.py`` on a labelled
set, ``bench/markdown_quality.py`` on real documentation sites). An engine that fails or finds
nothing yields "": the caller then uses the full page (docs/search.md).
"""

from __future__ import annotations

import logging
from typing import Any

from lxml import etree

from litecrawl.article_engines import DEFAULT_ENGINE, ENGINES, ArticleEngine

__all__ = ["DEFAULT_ENGINE", "ENGINES", "ArticleEngine", "engine_text"]

log = logging.getLogger(__name__)


def _trafilatura(source: Any, url: str) -> str:
    """trafilatura's article text in ``fast`` mode (no readability/jusText second opinion)."""
    import trafilatura  # half a second to import: only main-article mode pays it

    doc = trafilatura.bare_extraction(
        source,
        url=url or None,
        include_comments=False,
        include_links=False,
        include_formatting=False,
        include_tables=True,
        with_metadata=False,
        output_format="python",
        fast=True,
    )
    return str(getattr(doc, "text", "") or "") if doc is not None else ""


def _resiliparse(html: str) -> str:
    """resiliparse's main-content text, one block per line."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    return str(
        extract_plain_text(
            HTMLTree.parse(html),
            preserve_formatting=True,
            list_bullets=False,
            main_content=True,
            comments=False,
            alt_texts=False,
        )
    )


# Elements nested deeper than this are no article: resiliparse parses the raw HTML itself, with
# no depth limit, and its time grows with the square of the nesting (0.3 s at 4,000 levels, a
# hang at 30,000), while lxml stops nesting at 255. Such a page is kept whole (full-page mode).
MAX_DEPTH = 200
_TOO_DEEP = etree.XPath("*" + "/*" * MAX_DEPTH)


def engine_text(root: Any, html: str, url: str, engine: ArticleEngine) -> str:
    """The text ``engine`` takes for the page's main article ("" if none). ``root`` is the
    page's lxml tree, or None when lxml could not parse it (then trafilatura parses ``html``).
    Never raises."""
    try:
        if root is not None and _TOO_DEEP(root):
            log.debug("%s nests deeper than %d elements: no article engine", url, MAX_DEPTH)
            return ""
        if engine == "resiliparse":
            return _resiliparse(html)
        return _trafilatura(root if root is not None else html, url)
    except Exception:
        log.debug("%s failed on %s", engine, url, exc_info=True)
        return ""
