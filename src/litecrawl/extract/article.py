"""Main-article extraction (``--main-article``): trafilatura or resiliparse, markup metadata.

Both engines work on what :mod:`litecrawl.extract.page` already has: trafilatura takes the page's
one lxml tree (it copies it, ~0.1 ms, instead of parsing the page again), resiliparse its own fast
parse of the decoded string. The author, date and title come from the markup of the same lxml
tree whichever engine runs (meta tags, JSON-LD, the byline, ``<time>``, the URL; of the free
text only an ISO date, as a last resort), through trafilatura's metadata functions minus the
fields litecrawl does not keep (site name, categories, tags, licence).

Quality and speed of the two engines on trafilatura's labelled evaluation pages are in
bench/README.md (``bench/article_eval.py``). An engine that fails or finds nothing yields "": the
caller then uses the full page (seed 003).
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass
from typing import Any

from litecrawl.article_engines import DEFAULT_ENGINE, ENGINES, ArticleEngine

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Article", "ArticleEngine", "extract_article"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Article:
    text: str = ""  # one paragraph per line ("" when the engine found nothing)
    markdown: str = ""  # the article as Markdown, when asked for
    author: str | None = None
    date: str | None = None
    title: str | None = None


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def _trafilatura(source: Any, url: str, want_markdown: bool) -> tuple[str, str]:
    """(text, Markdown or "") from trafilatura in ``fast`` mode (no readability/jusText second
    opinion: ~4 ms a page), without its metadata pass (done once, below, for both engines)."""
    import trafilatura  # half a second to import: only main-article mode pays it
    from trafilatura.xml import xmltotxt

    doc = trafilatura.bare_extraction(
        source,
        url=url or None,
        include_comments=False,
        include_links=True,
        include_formatting=False,
        with_metadata=False,
        output_format="python",
        fast=True,
    )
    body = getattr(doc, "body", None)
    if doc is None or body is None:
        return "", ""
    # One extraction for the text and the Markdown, so the index does not depend on --output
    # (include_formatting would change what is extracted, and costs ~10%): headings, lists,
    # tables, code and links are in the body either way; bold and italic are not.
    text = str(getattr(doc, "text", "") or "")
    return _nfc(text), (_nfc(xmltotxt(body, True)) if want_markdown else "")


def _resiliparse(html: str, url: str, want_markdown: bool) -> tuple[str, str]:
    """(text, Markdown or "") from resiliparse's main-content heuristics; the Markdown is its
    minimal HTML (headings, paragraphs, lists, ``<pre>``, links) through the page converter."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    tree = HTMLTree.parse(html)
    options: dict[str, Any] = {"main_content": True, "comments": False, "alt_texts": False}
    text = extract_plain_text(tree, preserve_formatting=True, list_bullets=False, **options)
    markdown = ""
    if want_markdown and text.strip():
        from litecrawl.extract.markdown import convert_html

        minimal = extract_plain_text(
            tree, preserve_formatting="minimal_html", links=True, **options
        )
        markdown = convert_html(minimal, base_url=url or None)
    return _nfc(text), _nfc(markdown)


def _metadata(root: Any, url: str) -> tuple[str | None, str | None, str | None]:
    """(author, date, title) from the markup: what ``trafilatura.extract_metadata`` finds for
    them, without its passes for fields litecrawl does not keep (~40% of its time)."""
    from htmldate import find_date
    from trafilatura import metadata as meta

    found = meta.examine_meta(root)
    if found.author and " " not in found.author:  # a lone handle: trafilatura's own rule
        found.author = None
    try:
        found = meta.extract_meta_json(root, found)
    except Exception:  # malformed JSON-LD
        log.debug("JSON-LD metadata failed on %s", url, exc_info=True)
    author = found.author or meta.extract_author(root)
    # not htmldate's "extensive" scan, which guesses from any date-like string in the free text
    date = find_date(root, extensive_search=False, original_date=True, url=url or None)
    return _clean(author), _clean(date), _clean(found.title)


def extract_article(
    root: Any, html: str, url: str, engine: ArticleEngine, *, want_markdown: bool = False
) -> Article:
    """The main article of a page. ``root`` is the page's lxml tree with scripts still in it
    (JSON-LD), or None when lxml could not parse the page (then trafilatura parses ``html``
    itself and no metadata is read); its links should already be absolute (trafilatura resolves
    relative links against the host alone). Never raises."""
    text = markdown = ""
    try:
        if engine == "resiliparse":
            text, markdown = _resiliparse(html, url, want_markdown)
        else:
            text, markdown = _trafilatura(root if root is not None else html, url, want_markdown)
    except Exception:
        log.debug("%s failed on %s", engine, url, exc_info=True)
        text = markdown = ""
    author = date = title = None
    if root is not None:
        try:
            author, date, title = _metadata(root, url)
        except Exception:
            log.debug("metadata failed on %s", url, exc_info=True)
    return Article(text=text, markdown=markdown, author=author, date=date, title=title)
