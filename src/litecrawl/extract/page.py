"""``extract_page``: one HTTP body in, title/text/keywords/preview/language/Markdown source out.

Pure and picklable (top-level function, plain-data result), so the engine can run it in a
worker process. It never raises for bad input: the worst case is an :class:`Extracted`
with empty fields.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from litecrawl.extract.article import DEFAULT_ENGINE, ArticleEngine, engine_text
from litecrawl.extract.boundaries import drop_edge_navigation, keep_between, locate_article
from litecrawl.extract.decode import decode_html
from litecrawl.extract.dom import LxmlDoc, parse_html
from litecrawl.extract.fallback import RegexDoc
from litecrawl.extract.language import detect_language
from litecrawl.extract.metadata import markup_metadata
from litecrawl.extract.sections import Section
from litecrawl.extract.text import normalize_lines, preview
from litecrawl.extract.unchosen import drop_unchosen_links
from litecrawl.extract.vocabulary import keywords
from litecrawl.parse.links import PageLinks

__all__ = ["MIN_ARTICLE_CHARS", "Extracted", "ExtractionMode", "extract_page"]

log = logging.getLogger(__name__)

ExtractionMode = Literal["article", "fullpage"]

# An "article" from the engine shorter than this, or made mostly of link texts (a menu, a list
# of teasers), is not taken: the full filtered page is used instead.
MIN_ARTICLE_CHARS = 100
_MAX_LINK_SHARE = 0.5

_BINARY_TYPES = ("image/", "audio/", "video/", "font/", "model/")
_BINARY_EXACT = frozenset(
    {
        "application/pdf",
        "application/octet-stream",
        "application/zip",
        "application/gzip",
        "application/x-gzip",
        "application/x-tar",
        "application/x-7z-compressed",
        "application/vnd.rar",
        "application/wasm",
    }
)
# characters libxml2 and XML serializers reject
_INVALID_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# each C0 control byte libxml2 rejects, as a one-byte string for a memchr search
_C0_BYTES = tuple(bytes([b]) for b in range(0x20) if b not in b"\t\n\r")
_NONCHARACTERS_UTF8 = (b"\xef\xbf\xbe", b"\xef\xbf\xbf")  # U+FFFE, U+FFFF


@dataclass(frozen=True, slots=True)
class Extracted:
    """What one page yields. Plain data: picklable, hashable, comparable."""

    url: str
    title: str = ""
    text: str = ""  # plain text, one block per line
    keywords: tuple[str, ...] = ()  # top 10 non-stop-words, most frequent first
    preview: str = ""  # first 500 characters of text, whitespace collapsed
    language: str | None = None  # ISO 639-1 primary subtag, e.g. "en"
    author: str | None = None  # from the markup (main-article mode or Markdown wanted)
    date: str | None = None  # from the markup, ISO date (main-article mode or Markdown wanted)
    extraction_mode: ExtractionMode = "fullpage"
    html_for_markdown: str = ""  # filtered <body> HTML (or the article's), for the converter
    article_text: str = ""  # the article's text, one block per line (article mode)
    links: PageLinks | None = None  # from the same parse, when asked for (want_links)
    sections: tuple[Section, ...] = ()  # the text split at headings (want_sections)


class _Doc(Protocol):
    def title_candidates(self) -> tuple[str, str, str]: ...
    def language(self) -> str | None: ...
    def anchor_texts(self) -> frozenset[str]: ...
    def render(self, url: str, extra_remove: Sequence[str], want_html: bool) -> tuple[str, str]: ...


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _is_binary(media_type: str) -> bool:
    return media_type.startswith(_BINARY_TYPES) or media_type in _BINARY_EXACT


def _valid_chars(html: str) -> tuple[str, bytes]:
    """(``html`` without the characters libxml2 rejects, its UTF-8 bytes for the parser).

    The regex pass costs ~10 ns a character; the usual page has nothing to remove, which the UTF-8
    encode (it fails on surrogates) and a search for each C0 control byte tell several times
    faster (29 memchr passes: 147k instructions a kit page, 11 us, against a ``bytes.translate``
    deleting them, 290k and 17 us; bench/README.md, issue 29, session 15).
    """
    try:
        data = html.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        pass
    else:
        if not any(c in data for c in _C0_BYTES) and (
            html.isascii()  # O(1) in CPython
            or b"\xef\xbf" not in data
            or not any(c in data for c in _NONCHARACTERS_UTF8)
        ):
            return html, data
    html = _INVALID_CHARS.sub("", html)
    return html, html.encode("utf-8")


def _is_article(text: str, anchors: frozenset[str]) -> bool:
    """Long enough, and not mostly made of the page's link texts."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    total = sum(len(line) for line in lines)
    if total < MIN_ARTICLE_CHARS:
        return False
    linked = sum(len(line) for line in lines if line in anchors)
    return linked <= total * _MAX_LINK_SHARE


def _keep_article(doc: LxmlDoc | None, chosen: str) -> bool:
    """Cut ``doc`` down to the article the engine chose; False (``doc`` untouched) when its
    text cannot be found in the tree."""
    if doc is None:
        return False
    body = doc.root.find("body")
    body = body if body is not None else doc.root
    found = locate_article(body, chosen)
    if found is None:
        return False
    keep_between(body, *found)
    drop_unchosen_links(body, chosen)
    drop_edge_navigation(body)
    return True


def _extract(
    body: bytes,
    url: str,
    content_type: str,
    extra_remove: Sequence[str],
    main_article: bool,
    want_markdown: bool,
    want_links: bool = False,
    engine: ArticleEngine = DEFAULT_ENGINE,
    want_sections: bool = False,
) -> Extracted:
    media_type = _media_type(content_type)
    if _is_binary(media_type):
        return Extracted(url=url)
    html, data = _valid_chars(decode_html(body, content_type))
    if media_type == "text/plain":
        text = normalize_lines(html)
        language = detect_language(text)
        return Extracted(
            url=url,
            text=text,
            keywords=keywords(text, language),
            preview=preview(text),
            language=language,
            html_for_markdown=(
                "".join(f"<p>{_escape(line)}</p>" for line in text.splitlines())
                if want_markdown
                else ""
            ),
        )
    if not html or html.isspace():
        return Extracted(url=url)

    with_metadata = main_article or want_markdown
    lxml_doc = parse_html(data, url if want_links else None, keep_raw=with_metadata)
    author = date = None
    chosen = ""  # the engine's article text
    if lxml_doc is not None and with_metadata:  # on the tree as parsed: JSON-LD is in <script>
        author, date = markup_metadata(lxml_doc.root, html)
    # No engine for a page lxml gave up on (nesting over 255 levels, ...): its article could
    # not be located in the tree (_keep_article), and resiliparse's time on such a page grows
    # with the square of its nesting (minutes at 30,000 levels).
    if main_article and lxml_doc is not None:
        source = html
        if lxml_doc.remove_selected(extra_remove):
            source = lxml_doc.serialize()  # the filters hold for the article too
        chosen = engine_text(lxml_doc.root, source, url, engine)
    if lxml_doc is not None:
        lxml_doc.strip_raw()
    doc: _Doc = lxml_doc or RegexDoc(html)
    title, h1, og_title = doc.title_candidates()
    html_lang = doc.language()

    # a menu or a stub is not an article; nor is text the page's own tree does not hold: the
    # full page instead (docs/search.md, "Main article")
    mode: ExtractionMode = "fullpage"
    if chosen and _is_article(chosen, doc.anchor_texts()) and _keep_article(lxml_doc, chosen):
        mode = "article"
    sections: tuple[Section, ...] = ()
    if want_sections and lxml_doc is not None:
        text, html_for_markdown, sections = lxml_doc.render_sections(
            url, extra_remove, want_markdown
        )
    else:
        text, html_for_markdown = doc.render(url, extra_remove, want_markdown)

    language = html_lang or detect_language(text)
    return Extracted(
        url=url,
        title=title or h1 or og_title or "",
        text=text,
        keywords=keywords(text, language),
        preview=preview(text),
        language=language,
        author=author,
        date=date,
        extraction_mode=mode,
        html_for_markdown=html_for_markdown,
        article_text=text if mode == "article" else "",
        links=lxml_doc.links if lxml_doc is not None else None,
        sections=sections,
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def extract_page(
    body: bytes,
    url: str,
    content_type: str,
    *,
    extra_remove: Sequence[str] = (),
    main_article: bool = False,
    want_markdown: bool = True,
    want_links: bool = False,
    engine: ArticleEngine = DEFAULT_ENGINE,
    want_sections: bool = False,
) -> Extracted:
    """Extract title, text, keywords, preview, language and Markdown source from one response.

    ``body`` is the raw HTTP body, ``content_type`` the ``Content-Type`` header (its charset is
    honoured). ``extra_remove`` holds CSS selectors of elements to drop (``"nav"``, ``".ads"``);
    script, style, svg, noscript and template are always dropped. With ``main_article``, the
    ``engine`` (trafilatura or resiliparse) picks the main text and the page is cut down to it
    (``extraction_mode="article"``, see :mod:`litecrawl.extract.boundaries`); if it finds no real
    article (nothing, under ``MIN_ARTICLE_CHARS``, mostly link texts, or text the page's tree does
    not hold) the full filtered page is used (``"fullpage"``). Author and date come from the
    markup (:mod:`litecrawl.extract.metadata`) in main-article mode and whenever Markdown is
    wanted. With ``want_markdown=False`` the work only Markdown needs (link resolving,
    serializing the filtered body) is skipped and ``html_for_markdown`` stays "": the indexer's
    hot path. With
    ``want_links``, ``links`` holds the page's links read from the same parse (None when lxml
    could not parse the page). With ``want_sections``, ``sections`` holds the text split at
    its headings (:mod:`litecrawl.extract.sections`; empty when lxml could not parse the
    page). Never raises.
    """
    try:
        if isinstance(body, str):  # tolerate a caller that already decoded
            body = body.encode("utf-8", errors="replace")
        return _extract(
            bytes(body or b""),
            str(url or ""),
            str(content_type or ""),
            tuple(s for s in (extra_remove or ()) if isinstance(s, str)),
            bool(main_article),
            bool(want_markdown),
            bool(want_links),
            engine,
            bool(want_sections),
        )
    except Exception:
        log.warning("extraction failed for %s", url, exc_info=True)
    try:  # last resort: the regex stripper on the decoded body, no trafilatura
        html = _INVALID_CHARS.sub("", decode_html(bytes(body or b""), str(content_type or "")))
        text, markup = RegexDoc(html).render("", (), bool(want_markdown))
        return Extracted(
            url=str(url or ""), text=text, preview=preview(text), html_for_markdown=markup
        )
    except Exception:
        return Extracted(url=str(url or ""))
