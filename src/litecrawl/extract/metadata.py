"""Author and date of a page, from its markup only.

Where they are read, most trusted first:

- JSON-LD (``datePublished``, else ``dateCreated`` / ``dateModified``; ``author``);
- ``<meta>`` tags (``article:published_time``, Dublin Core, Highwire ``citation_*``, ``author``...);
- microdata (``itemprop="datePublished"`` / ``"author"``), ``<time datetime>`` when the markup says
  it is the page's date (``pubdate``, ``itemprop``, a ``published``/``updated`` class) or it is the
  only one in the page's ``<article>``/``<header>``;
- a byline: ``<a rel="author">``, ``class="byline"`` / ``"author"``, a Sphinx/docutils field list or
  docinfo table whose field is "Author";
- a "Last updated on <date>" line in the page footer (``<footer>``, ``class="footer"``,
  ``role="contentinfo"``: Sphinx writes one).

Nothing is guessed from free text, titles, URLs, element ids or code: a page without such markup
has no date and no author, which is better than a wrong one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from lxml import etree

__all__ = ["markup_metadata"]

_META_DATES = (  # (name or property, lower case), most specific first
    "article:published_time", "datepublished", "dc.date.issued", "dcterms.issued",
    "citation_publication_date", "citation_date", "citation_online_date", "dc.date",
    "dcterms.date", "dcterms.created", "date", "pubdate", "publishdate", "publish-date",
    "publish_date", "published_time", "og:published_time", "parsely-pub-date", "sailthru.date",
    "article.published", "article:modified_time", "og:updated_time", "datemodified",
    "dcterms.modified", "last-modified",
)  # fmt: skip
_META_AUTHORS = (
    "author", "article:author", "dc.creator", "dcterms.creator", "citation_author",
    "parsely-author", "sailthru.author", "byl",
)  # fmt: skip
_JSONLD_DATES = ("datePublished", "dateCreated", "dateModified")
# Cheap tests on the page's source, so a tree walk runs only for what the page may hold: plain
# substring tests in the usual spellings (html.lower() or an alternation regex cost ~1 ms and
# more on a long page).
_CLASS_AUTHOR = re.compile(r"class=[\"']?[^\"'>]*[aA]uthor")
_UPDATED_WORDS = ("ast updated", "ast modified", "pdated on", "AST UPDATED", "AST MODIFIED")
_BYLINE = etree.XPath("descendant::*[contains(@class, 'byline') or contains(@class, 'author')]")
_REL_AUTHOR = etree.XPath("descendant::a[contains(@rel, 'author')]")
_FIELD_LABELS = etree.XPath(
    "descendant::dl[contains(@class, 'field-list')]/dt"
    " | descendant::table[contains(@class, 'docinfo')]//th"
)
_FOOTER = etree.XPath("descendant::footer")
_ITEMPROP = etree.XPath("descendant::*[@itemprop]")
_BYLINE_CLASSES = frozenset(
    {"byline", "author", "post-author", "entry-author", "article-author", "author-name"}
)
_TIME_CLASS = re.compile(r"publish|posted|entry-date|post-date|updated|modified|pubdate")
_UPDATED_LINE = re.compile(
    r"\b(?:last\s+updated|last\s+modified|updated)(?:\s+on)?\s*:?\s*"
    r"(\d{4}-\d{2}-\d{2}|[A-Z][a-z]{2,8}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[A-Z][a-z]{2,8}\.?,?\s+\d{4})",
    re.IGNORECASE,
)
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:$|[T ]\d)")
_HUMAN_FORMATS = ("%B %d %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y", "%Y/%m/%d", "%d.%m.%Y")
_BY = re.compile(r"^(?:by|von|par|por|door|di)\s+", re.IGNORECASE)
_NAME_END = re.compile(r"\s*(?:[,|•·–—(<]|\bon\b|\bupdated\b|\bpublished\b|\d).*$", re.IGNORECASE)
_MAX_NAME = 100


def _elements(xpath: etree.XPath, root: etree._Element) -> list[etree._Element]:
    result = xpath(root)
    return (
        [el for el in result if isinstance(el, etree._Element)] if isinstance(result, list) else []
    )


def _text(el: etree._Element) -> str:
    return " ".join("".join(str(t) for t in el.itertext()).split())


def parse_date(value: str) -> str | None:
    """An ISO ``YYYY-MM-DD`` from a machine-readable date ("2024-05-17T08:30:00Z", "May 17,
    2024"); None when it is not one (then no date is better than a guess)."""
    value = " ".join(value.split())
    match = _ISO_DATE.match(value)
    found: date | None = None
    if match:
        try:
            found = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            return None
    else:
        cleaned = value.replace(",", " ").replace(".", " ").strip()
        cleaned = " ".join(cleaned.split())
        for fmt in _HUMAN_FORMATS:
            try:
                found = datetime.strptime(cleaned, fmt.replace(".", " ")).date()
                break
            except ValueError:
                continue
    if found is None or not 1900 <= found.year <= date.today().year + 1:
        return None
    return found.isoformat()


def _clean_name(value: str) -> str | None:
    name = _BY.sub("", " ".join(value.split()))
    name = _NAME_END.sub("", name).strip(" :;-")
    if not name or len(name) > _MAX_NAME or "://" in name or "@" in name:
        return None
    if not any(c.isalpha() for c in name) or len(name.split()) > 8:
        return None
    return name


def _jsonld_objects(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        for item in data:
            yield from _jsonld_objects(item)
    elif isinstance(data, dict):
        yield data
        graph = data.get("@graph")
        if graph is not None:
            yield from _jsonld_objects(graph)


def _jsonld_author(value: Any) -> str | None:
    if isinstance(value, str):
        return _clean_name(value)
    if isinstance(value, dict):
        name = value.get("name")
        return _clean_name(name) if isinstance(name, str) else None
    if isinstance(value, list):
        names = [n for n in map(_jsonld_author, value) if n]
        return ", ".join(dict.fromkeys(names)) or None
    return None


def _from_jsonld(root: etree._Element) -> tuple[str | None, str | None]:
    author = found = None
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        for obj in _jsonld_objects(data):
            if author is None and "author" in obj:
                author = _jsonld_author(obj["author"])
            for key in _JSONLD_DATES if found is None else ():
                value = obj.get(key)
                if isinstance(value, str) and (found := parse_date(value)):
                    break
    return author, found


def _from_meta(root: etree._Element) -> tuple[str | None, str | None]:
    values: dict[str, str] = {}
    for meta in root.iter("meta"):
        key = (meta.get("property") or meta.get("name") or meta.get("itemprop") or "").lower()
        if key and key not in values and meta.get("content"):
            values[key] = meta.get("content") or ""
    author = next((a for k in _META_AUTHORS if k in values and (a := _clean_name(values[k]))), None)
    found = next((d for k in _META_DATES if k in values and (d := parse_date(values[k]))), None)
    return author, found


def _microdata(root: etree._Element) -> tuple[str | None, str | None]:
    author = found = None
    for el in _elements(_ITEMPROP, root):
        prop = el.get("itemprop")
        if prop == "author" and author is None:
            name = el.get("content")
            if name is None:
                inner = el.find(".//*[@itemprop='name']")
                name = _text(inner if inner is not None else el)
            author = _clean_name(name)
        elif prop in _JSONLD_DATES and found is None:
            found = parse_date(el.get("datetime") or el.get("content") or "")
    return author, found


def _time_element(root: etree._Element) -> str | None:
    """A ``<time datetime>`` the markup marks as the page's date, or the only one in the
    page's ``<article>`` or ``<header>``."""
    plain: list[tuple[etree._Element, str]] = []
    for el in root.iter("time"):
        parsed = parse_date(el.get("datetime") or "")
        if parsed is None:
            continue
        if el.get("pubdate") is not None or _TIME_CLASS.search((el.get("class") or "").lower()):
            return parsed
        plain.append((el, parsed))
    if len(plain) == 1 and any(a.tag in ("article", "header") for a in plain[0][0].iterancestors()):
        return plain[0][1]
    return None


def _field_value(label: etree._Element) -> str | None:
    """The value of a field list's "Author:" label (``<dt>``/``<th>``), else None."""
    if _text(label).rstrip(":").strip().lower() not in ("author", "authors"):
        return None
    value = label.getnext()
    return _clean_name(_text(value)) if value is not None else None


def _byline(root: etree._Element, html: str) -> str | None:
    if "author" in html or "AUTHOR" in html:
        for a in _elements(_REL_AUTHOR, root):
            if "author" in (a.get("rel") or "").lower().split() and (name := _clean_name(_text(a))):
                return name
    if "field-list" in html or "docinfo" in html:  # Sphinx / docutils "Author:" fields
        for label in _elements(_FIELD_LABELS, root):
            if name := _field_value(label):
                return name
    if "byline" in html or "Byline" in html or _CLASS_AUTHOR.search(html):
        for el in _elements(_BYLINE, root):
            classes = (el.get("class") or "").lower().split()
            # "author" also marks the authors of works cited (a bibliography): only in the
            # page's own <article> or <header>
            if "byline" not in classes and (
                not _BYLINE_CLASSES.intersection(classes)
                or not any(a.tag in ("article", "header") for a in el.iterancestors())
            ):
                continue
            text = _text(el)
            if len(text) <= 2 * _MAX_NAME and (name := _clean_name(text)):  # not a whole box
                return name
    return None


def _footers(root: etree._Element) -> Iterator[etree._Element]:
    """``<footer>`` elements, and elements near the top of ``<body>`` marked as the footer."""
    yield from _elements(_FOOTER, root)
    body = root.find("body")
    level = list(body) if body is not None else []
    for _ in range(3):  # a page footer sits high in the tree, not inside the article
        for el in level:
            if el.get("role") == "contentinfo" or "footer" in (el.get("class") or "").split():
                yield el
        level = [child for el in level for child in el]


def _updated_line(root: etree._Element) -> str | None:
    """The date of a "Last updated on ..." line in the page's footer."""
    for el in _footers(root):
        match = _UPDATED_LINE.search(_text(el))
        if match and (found := parse_date(match[1])):
            return found
    return None


def markup_metadata(root: etree._Element, html: str) -> tuple[str | None, str | None]:
    """(author, ISO date) of a page from its markup (see the module docstring). ``root`` is its
    tree with the scripts still in it (JSON-LD), ``html`` its source (to skip what it does not
    hold). Either is None when the markup does not say."""
    author = found = None
    steps = [_from_meta]
    if "ld+json" in html or "LD+JSON" in html:
        steps.insert(0, _from_jsonld)
    if "itemprop" in html or "ITEMPROP" in html:
        steps.append(_microdata)
    for step in steps:
        step_author, step_date = step(root)
        author, found = author or step_author, found or step_date
    if found is None and ("<time" in html or "<TIME" in html):
        found = _time_element(root)
    if author is None:
        author = _byline(root, html)
    if found is None and any(words in html for words in _UPDATED_WORDS):
        found = _updated_line(root)
    return author, found
