"""Link extraction with lxml (docs/python-api.md, step 6; canonical and feed links for the CLI)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

import lxml.etree
import lxml.html

__all__ = [
    "MAX_REFRESH_DELAY",
    "PageLinks",
    "anchor_texts",
    "extract_links",
    "is_html",
    "links_in",
    "refresh_target",
]

_FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/feed+json"})


@dataclass(frozen=True, slots=True)
class PageLinks:
    """Raw link values as written in the page; resolve them against ``base``."""

    base: str  # <base href> resolved against the page URL, else the page URL
    links: tuple[str, ...]  # href/action/src values
    feeds: tuple[str, ...] = ()  # <link rel=alternate type=rss/atom>
    canonical: str | None = None
    refresh: str | None = None  # <meta http-equiv=refresh>'s URL: the page redirects there


# A refresh after at most this many seconds is a redirect (Scrapy's METAREFRESH_MAXDELAY); a
# longer one is a page reloading itself now and then (docs/crawling.md#redirects).
MAX_REFRESH_DELAY = 100.0

# HTML's "shared declarative refresh steps": a delay, then `;` or `,`, then an optional `url=`,
# then the URL, perhaps quoted.
_REFRESH = re.compile(r"\s*(\d*\.?[\d.]*)\s*[;,]?\s*(?:url\s*=\s*)?(.*)", re.IGNORECASE | re.DOTALL)


def refresh_target(value: str) -> str | None:
    """The URL a refresh (``<meta http-equiv=refresh content>`` or the ``Refresh`` header) sends
    the reader to within :data:`MAX_REFRESH_DELAY`, as written; None for none (a reload of
    the page itself, a delay too long, no URL)."""
    found = _REFRESH.match(value)
    if found is None or not found.group(1).strip("."):
        return None
    delay = float(found.group(1).split(".")[0] or 0)
    url = found.group(2).strip()
    if url[:1] in ("'", '"'):
        url = url[1:].split(url[0], 1)[0]
    if delay > MAX_REFRESH_DELAY:
        return None
    return url.strip() or None


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
    root = _document(body, content_type)
    return PageLinks(page_url, ()) if root is None else links_in(root, page_url)


def anchor_texts(body: bytes, page_url: str, content_type: str = "text/html") -> dict[str, str]:
    """Each ``a[href]``'s URL (resolved against the base) -> its text, whitespace collapsed
    (the texts of several links to one URL joined). A second parse of the page: only for a
    crawling strategy that asks for it."""
    root = _document(body, content_type)
    if root is None:
        return {}
    base = links_in(root, page_url).base
    texts: dict[str, str] = {}
    for element in root.iter("a"):
        href = element.get("href")
        url = _join(base, href) if href else None
        text = " ".join(element.text_content().split())
        if url and text:
            texts[url] = f"{texts[url]} {text}" if url in texts else text
    return texts


def _document(body: bytes, content_type: str) -> lxml.html.HtmlElement | None:
    if not body.strip():
        return None
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
            return None
    return root


def links_in(root: lxml.html.HtmlElement, page_url: str) -> PageLinks:
    """:func:`extract_links` on a document lxml has already parsed (before anything is removed
    from it)."""
    base = page_url
    raw: list[str] = []
    feeds: list[str] = []
    canonical: str | None = None
    refresh: str | None = None
    for element in root.iter("a", "form", "iframe", "link", "base", "meta"):
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
        elif tag == "meta":
            if refresh is None and (element.get("http-equiv") or "").lower() == "refresh":
                refresh = _refresh_of(element)
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
    return PageLinks(base, tuple(raw), tuple(feeds), canonical, refresh)


def _refresh_of(meta: lxml.html.HtmlElement) -> str | None:
    """A meta refresh's target, unless it sits in ``<noscript>``: a browser running scripts (the
    page's own way) does not follow that one."""
    if any(parent.tag == "noscript" for parent in meta.iterancestors()):
        return None
    return refresh_target(meta.get("content") or "")


def _join(base: str, href: str) -> str | None:
    try:
        return urljoin(base, href.strip())
    except ValueError:
        return None
