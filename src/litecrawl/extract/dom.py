"""Full-page HTML handling with lxml: parse, title candidates, filtering, text and body HTML.

:class:`LxmlDoc` and :class:`litecrawl.extract.fallback.RegexDoc` have the same methods, so
:mod:`litecrawl.extract.page` drives either; :func:`parse_html` returns None when lxml cannot give a
faithful tree (empty document, depth limit hit), and the regex stripper takes over.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import cast
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

from litecrawl.extract.boilerplate import drop_boilerplate, drop_controls
from litecrawl.extract.sections import Section, mark_headings, split_sections
from litecrawl.extract.selectors import select_all
from litecrawl.extract.text import collapse_whitespace, normalize_language_tag, normalize_lines
from litecrawl.hrefs import join_quickly
from litecrawl.parse.links import PageLinks, links_in

__all__ = ["ALWAYS_REMOVE", "BLOCK_TAGS", "LxmlDoc", "parse_html"]

ALWAYS_REMOVE = ("script", "style", "svg", "noscript", "template")
# elements whose content starts on a new line in plain text
BLOCK_TAGS = (
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "dialog",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
    "h4", "h5", "h6", "header", "hgroup", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
    "summary", "table", "tbody", "thead", "tfoot", "tr", "ul", "option", "title", "body",
)  # fmt: skip
CELL_TAGS = ("td", "th")
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_OG_TITLE = etree.XPath("//meta[@property='og:title' or @name='og:title']/@content")
_CONTENT_LANGUAGE = etree.XPath(
    "//meta[translate(@http-equiv, 'CONTENT-LANGUAGE', 'content-language')"
    " = 'content-language']/@content"
)
_LANGUAGE_PREFIXES = ("language-", "lang-", "highlight-source-", "highlight-")
_NOT_LANGUAGES = frozenset({"default", "none", "text", "plain", "plaintext", "nohighlight"})
_LANGUAGE_WORD = re.compile(r"[a-z0-9][a-z0-9+#._-]{0,30}")
_FATAL = 3  # libxml2 error level FATAL: the tree is incomplete (e.g. "Excessive depth")

# The plain text of a subtree in one libxslt pass: a line break after the start tag and after the
# end tag of every block element, a space after every table cell, text nodes as they are (the
# built-in rules); only the element itself, not what libxml2 puts beside the root element.
# Same text as marking the tree up and joining ``itertext()``, without a Python step per element.
_TEXT_XSLT = f"""\
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/"><xsl:apply-templates select="*[1]"/></xsl:template>
  <xsl:template match="{"|".join(BLOCK_TAGS)}">
    <xsl:text>&#10;</xsl:text><xsl:apply-templates/><xsl:text>&#10;</xsl:text>
  </xsl:template>
  <xsl:template match="{"|".join(CELL_TAGS)}">
    <xsl:apply-templates/><xsl:text> </xsl:text>
  </xsl:template>
</xsl:stylesheet>
"""

# lxml parsers and XSLT objects are reused (building them costs more than parsing a small page) but
# not shared between threads
_local = threading.local()


def _parser() -> lxml.html.HTMLParser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = _local.parser = lxml.html.HTMLParser(
            encoding="utf-8",
            huge_tree=True,
            remove_comments=True,
            remove_pis=True,
            no_network=True,
        )
        # lxml.html's own lookup picks an element's class in Python, once per element object
        # made (every child a walk visits, every link); all our code needs is HtmlElement's
        # methods, which a lookup in C gives (the frame walk, links and headings ~20% faster)
        parser.set_element_class_lookup(
            etree.ElementDefaultClassLookup(
                element=lxml.html.HtmlElement,
                comment=lxml.html.HtmlComment,
                pi=lxml.html.HtmlProcessingInstruction,
                entity=lxml.html.HtmlEntity,
            )
        )
    return cast("lxml.html.HTMLParser", parser)


def _text_transform() -> etree.XSLT:
    transform = getattr(_local, "text_xslt", None)
    if transform is None:
        transform = _local.text_xslt = etree.XSLT(etree.XML(_TEXT_XSLT.encode()))
    return cast("etree.XSLT", transform)


def parse_html(
    html: str | bytes, page_url: str | None = None, *, keep_raw: bool = False
) -> LxmlDoc | None:
    """Parse with lxml; None if the document is empty or libxml2 had to give up part of it.

    ``html`` is the decoded page, or already its UTF-8 bytes (saves one encode). With
    ``page_url``, the document's links are read from the same parse (``LxmlDoc.links``). With
    ``keep_raw``, scripts and the rest of ``ALWAYS_REMOVE`` stay until :meth:`LxmlDoc.strip_raw`
    (a main-article extractor reads JSON-LD from the same tree first).
    """
    parser = _parser()
    data = html.encode("utf-8", errors="replace") if isinstance(html, str) else html
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    if root is None or any(err.level >= _FATAL for err in parser.error_log):
        return None
    return LxmlDoc(root, page_url, keep_raw=keep_raw)


# left as they are: already absolute, or not a place on the web. "#frag" is not among them: it
# names a place on this page, and the Markdown is read away from it.
_ABSOLUTE = ("http://", "https://", "mailto:", "tel:", "data:", "javascript:")


def _absolutize(root: etree._Element, body: etree._Element, url: str) -> None:
    """Resolve relative ``a[href]`` / ``img[src]`` against ``<base href>`` or the page URL."""
    base_el = root.find("head/base[@href]")
    try:
        base = urljoin(url, base_el.get("href") or "") if base_el is not None else url
        parts = urlsplit(base)
    except ValueError:
        return
    # "/path" links (the common case) only need the origin; urljoin handles the rest
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
    for el in body.iter("a", "img"):
        attr = "href" if el.tag == "a" else "src"
        value = el.get(attr)
        if value is None:
            continue
        value = value.strip()
        if value.lower().startswith(_ABSOLUTE):
            continue
        if origin and value.startswith("/") and not value.startswith("//"):
            el.set(attr, origin + value)
            continue
        joined = join_quickly(value, base)
        if joined is None:
            try:
                joined = urljoin(base, value)
            except ValueError:
                continue
        el.set(attr, joined)


def _language_hint(el: etree._Element) -> str | None:
    """The code language an element's markup names: ``class="language-x"`` / ``lang-x`` (Prism,
    highlight.js), ``highlight-x`` (Sphinx), ``brush: x`` (SyntaxHighlighter), ``sourceCode x``
    (pandoc), or ``data-lang`` / ``data-language``."""
    lang = el.get("data-lang") or el.get("data-language")
    if lang:
        return lang.strip().lower() or None
    words = (el.get("class") or "").split()
    for i, word in enumerate(words):
        for prefix in _LANGUAGE_PREFIXES:
            if word.startswith(prefix) and len(word) > len(prefix):
                return word[len(prefix) :].lower()
        if word == "brush:" and i + 1 < len(words):
            return words[i + 1].rstrip(";").lower()
        if word == "sourceCode" and i + 1 < len(words):
            return words[i + 1].lower()
    return None


def _code_language(pre: etree._Element, code: etree._Element | None) -> str | None:
    lang = _language_hint(code) if code is not None else None
    el: etree._Element | None = pre
    for _ in range(3):  # the <pre>, then up to two ancestors (Sphinx: div.highlight-x > div > pre)
        if lang is not None or el is None:
            break
        lang = _language_hint(el)
        el = el.getparent()
    if not lang or lang in _NOT_LANGUAGES or not _LANGUAGE_WORD.fullmatch(lang):
        return None
    return lang


def _split_variants(pre: etree._Element) -> None:
    """A ``<pre>`` holding nothing but two or more ``<code>`` elements that each name a language
    (Node.js's docs: an example's ES module and CommonJS spellings, one shown at a time) becomes
    a ``<pre>`` each, placed in order: one fenced block a variant, not one block that runs two
    alternative programs together as if they were one. Per-line ``<code>`` wrappers name no
    language and are left whole."""
    codes = list(pre)
    parent = pre.getparent()
    if len(codes) < 2 or parent is None or (pre.text or "").strip():
        return
    if any(c.tag != "code" or (c.tail or "").strip() or _language_hint(c) is None for c in codes):
        return
    tail, pre.tail = pre.tail, None
    at = parent.index(pre)
    for n, code in enumerate(codes[1:], 1):
        code.tail = None
        twin = etree.Element("pre")
        twin.attrib.update(pre.attrib)
        twin.append(code)
        parent.insert(at + n, twin)
    codes[0].tail = None
    parent[at + len(codes) - 1].tail = tail


def mark_code_languages(body: etree._Element) -> None:
    """Give every ``<pre>`` whose markup names a language a ``<code class="language-x">``: the
    one spelling the Markdown converter turns into a fenced block's info string (a ``<pre>`` of
    several such ``<code>`` variants split first, :func:`_split_variants`)."""
    for pre in list(body.iter("pre")):
        _split_variants(pre)
    for pre in body.iter("pre"):
        only_code = len(pre) == 1 and pre[0].tag == "code" and not (pre.text or "").strip()
        code = pre[0] if only_code else None
        lang = _code_language(pre, code)
        if lang is None:
            continue
        if code is None:
            code = etree.SubElement(pre, "code")
            code.text, pre.text = pre.text, None
            for child in list(pre)[:-1]:
                code.append(child)
        code.set("class", f"language-{lang}")


def _text_of(el: etree._Element) -> str:
    return collapse_whitespace("".join(cast("list[str]", el.itertext())))


def _marked_text(body: etree._Element) -> str:
    """The slow equivalent of ``_TEXT_XSLT`` (mutates the tree), for what libxslt refuses."""
    for el in body.iter(*BLOCK_TAGS):
        el.text = "\n" + (el.text or "")
        el.tail = "\n" + (el.tail or "")
    for el in body.iter(*CELL_TAGS):
        el.tail = " " + (el.tail or "")
    return "".join(cast("list[str]", body.itertext()))


def _plain_text(body: etree._Element) -> str:
    try:
        result = _text_transform()(body)
    except etree.XSLTError:  # e.g. nesting deeper than libxslt's template depth limit
        return _marked_text(body)
    return bytes(result).decode("utf-8", errors="replace")


class LxmlDoc:
    """A parsed page. ``render`` may mutate the tree, so call it last."""

    def __init__(
        self, root: lxml.html.HtmlElement, page_url: str | None = None, *, keep_raw: bool = False
    ) -> None:
        self.root = root
        # links first: an <a> inside <noscript> is still a link
        self.links: PageLinks | None = links_in(root, page_url) if page_url is not None else None
        self._raw = True
        self._filtered = False
        if not keep_raw:
            self.strip_raw()

    def strip_raw(self) -> None:
        """Drop script, style, svg, noscript and template (once; before any text is read)."""
        if self._raw:
            etree.strip_elements(self.root, *ALWAYS_REMOVE, with_tail=False)
            self._raw = False

    def serialize(self) -> str:
        """The document as HTML, as it is now (for an engine that parses HTML itself)."""
        return etree.tostring(self.root, encoding="unicode", method="html")

    def title_candidates(self) -> tuple[str, str, str]:
        """(``<title>``, first non-empty ``<h1>``, ``og:title``), each "" when absent."""
        root = self.root
        title = ""
        node = root.find("head/title")
        if node is None:
            node = root.find(".//title")
        if node is not None:
            title = _text_of(node)
        h1 = ""
        for node in root.iter("h1"):
            h1 = _text_of(node)
            if h1:
                break
        og = ""
        result = _OG_TITLE(root)
        if isinstance(result, list):
            og = next((collapse_whitespace(str(v)) for v in result if str(v).strip()), "")
        return title, h1, og

    def language(self) -> str | None:
        """``<html lang>`` (or ``xml:lang``, or a Content-Language meta), primary subtag only."""
        root = self.root
        lang = normalize_language_tag(root.get("lang") or root.get(_XML_LANG))
        if lang is None:
            result = _CONTENT_LANGUAGE(root)
            if isinstance(result, list) and result:
                lang = normalize_language_tag(str(result[0]).split(",")[0])
        return lang

    def anchor_texts(self) -> frozenset[str]:
        """The collapsed text of every link, to tell link lists from articles."""
        texts = (_text_of(a) for a in self.root.iter("a"))
        return frozenset(t for t in texts if t)

    def remove_selected(self, selectors: Sequence[str]) -> bool:
        """Drop the elements ``selectors`` (CSS) match; True if any selector needed a walk.
        Once per document: later calls do nothing."""
        if self._filtered:
            return False
        self._filtered = True
        # "script", "style"... (dom_remove's defaults) are gone anyway: no tree walk for them
        selectors = [s for s in selectors if s.strip().lower() not in ALWAYS_REMOVE]
        for el in select_all(self.root, selectors) if selectors else ():
            if el.getparent() is not None and isinstance(el, lxml.html.HtmlElement):
                el.drop_tree()
        return bool(selectors)

    def render(self, url: str, extra_remove: Sequence[str], want_html: bool) -> tuple[str, str]:
        """Apply ``extra_remove``, then return (plain text without the page's boilerplate, see
        :mod:`litecrawl.extract.boilerplate`; filtered ``<body>`` HTML or "").

        Without ``want_html`` nothing only Markdown needs is done: no link resolving, no
        serialization.
        """
        text, html, _ = self._render(url, extra_remove, want_html, want_sections=False)
        return text, html

    def render_sections(
        self, url: str, extra_remove: Sequence[str], want_html: bool
    ) -> tuple[str, str, tuple[Section, ...]]:
        """:meth:`render`, and the text's sections (:mod:`litecrawl.extract.sections`) from the
        same text pass."""
        return self._render(url, extra_remove, want_html, want_sections=True)

    def _render(
        self, url: str, extra_remove: Sequence[str], want_html: bool, want_sections: bool
    ) -> tuple[str, str, tuple[Section, ...]]:
        root = self.root
        self.remove_selected(extra_remove)
        body = root.find("body")
        if body is None:
            body = root
        html = ""
        drop_controls(body)  # the Markdown's and the index's: nobody reads a "copy" or a "¶"
        if want_html:
            if url:
                _absolutize(root, body, url)
            mark_code_languages(body)
            html = etree.tostring(body, encoding="unicode", method="html")
        drop_boilerplate(body)  # the index's text only: the Markdown keeps its own rules
        if not want_sections:
            return normalize_lines(_plain_text(body)), html, ()
        anchors = mark_headings(body)
        text, sections = split_sections(_plain_text(body), anchors)
        return text, html, sections
