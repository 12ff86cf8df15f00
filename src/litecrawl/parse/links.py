"""Link extraction with lxml (seed 000 section 6; canonical and feed links for the CLI)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

import lxml.etree
import lxml.html

__all__ = ["PageLinks", "extract_links", "is_html", "links_in"]

_FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/feed+json"})


@dataclass(frozen=True, slots=True)
class PageLinks:
    """Raw link values as written in the page; resolve them against ``base``."""

    base: str  # <base href> resolved against the page URL, else the page URL
    links: tuple[str, ...]  # href/action/src values
    feeds: tuple[str, ...] = ()  # <link rel=alternate type=rss/atom>
    canonical: str | None = None


def is_html(content_type: str) -> bool:
    """Seed rule: the content-type header starts with text/html (case-insensitive)."""
    return content_type.strip().lower().startswith("text/html")


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip("\"' ")
    return None


def extract_links(body: bytes, page_url: str, content_type: str = "text/html") -> PageLinks:
    """Links from ``a[href]``, ``form[action]``, ``iframe[src]`` (plus canonical and feeds).

    The values are returned as written (resolving them is the URL rules' job, memoized there);
    ``base`` is ``<base href>`` when the page has one, else the page URL, as a browser would use.
    Broken markup yields what lxml can recover; nothing raises.
    """
    if not body.strip():
        return PageLinks(page_url, ())
    encoding = _charset(content_type)
    try:
        if encoding:
            root = lxml.html.document_fromstring(
                body, parser=lxml.html.HTMLParser(encoding=encoding)
            )
        else:
            root = lxml.html.document_fromstring(body)
    except (lxml.etree.ParserError, ValueError, LookupError):
        try:
            root = lxml.html.document_fromstring(body)
        except (lxml.etree.ParserError, ValueError):
            return PageLinks(page_url, ())
    return links_in(root, page_url)


def links_in(root: lxml.html.HtmlElement, page_url: str) -> PageLinks:
    """:func:`extract_links` on a document lxml has already parsed (before anything is removed
    from it)."""
    base = page_url
    raw: list[str] = []
    feeds: list[str] = []
    canonical: str | None = None
    for element in root.iter("a", "form", "iframe", "link", "base"):
        tag = element.tag
        if tag == "a":
            value = element.get("href")
        elif tag == "form":
            value = element.get("action")
        elif tag == "iframe":
            value = element.get("src")
        elif tag == "base":
            href = element.get("href")
            if href:
                base = _join(page_url, href) or page_url
            continue
        else:
            rel = (element.get("rel") or "").lower().split()
            href = element.get("href")
            if not href:
                continue
            if "canonical" in rel:
                canonical = href
            elif "alternate" in rel and (element.get("type") or "").lower() in _FEED_TYPES:
                feeds.append(href)
            continue
        if value:
            raw.append(value)
    return PageLinks(base, tuple(raw), tuple(feeds), canonical)


def _join(base: str, href: str) -> str | None:
    try:
        return urljoin(base, href.strip())
    except ValueError:
        return None
