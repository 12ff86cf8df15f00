"""The extraction's fast paths give what the plain versions give.

The frame walk (extract/boilerplate.py) reads each attribute once, asks C (XPath) which links
may be permalink marks and whether a frame holds the main part, and remembers which class/id
values name the frame; a heading's anchor is found by iteration, not an XPath call; the parser
picks element classes in C; the body's text length is its text written out, not an XPath string
value. The plain versions below are the code these replaced (measured in bench/README.md, issue
29): on random pages and on the real pages of tests/data/html, both give the same tree, the same
text and the same sections.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

import lxml.html
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from litecrawl.extract import boilerplate, dom, sections
from litecrawl.extract.page import _INVALID_CHARS, _valid_chars, extract_page

DATA = Path(__file__).parent / "data" / "html"

# --- the plain versions ------------------------------------------------------------------------

_TEXT_LENGTH = etree.XPath("string-length(.)")
_FRAME_NAME = re.compile(
    r"(?:^|[\s_-])(?:"
    + "|".join(sorted(boilerplate.FRAME_WORDS, key=len, reverse=True))
    + r")(?=$|[\s_-])",
    re.IGNORECASE,
)
_NAMED = etree.XPath("string((.//a[@id] | .//a[@name])[1]/@*[name()='id' or name()='name'])")


def _is_main(el: etree._Element) -> bool:
    return el.tag in ("main", "article") or el.get("role") == "main"


def _is_frame(el: etree._Element, in_section: bool) -> bool:
    frame_roles = ("navigation", "banner", "contentinfo", "search", "dialog", "alertdialog")
    if el.tag in ("nav", "dialog") or el.get("role") in frame_roles:
        return True
    if el.tag in ("header", "footer"):
        return not in_section
    return any(_FRAME_NAME.search(el.get(attr) or "") for attr in ("class", "id"))


def plain_drop_boilerplate(body: etree._Element) -> None:
    total = float(cast("float", _TEXT_LENGTH(body)))
    stack: list[tuple[etree._Element, int, bool]] = [(body, 0, False)]
    while stack:
        parent, depth, in_section = stack.pop()
        for el in list(parent):
            if not isinstance(el.tag, str) or _is_main(el):
                continue
            if _is_frame(el, in_section):
                length = float(cast("float", _TEXT_LENGTH(el)))
                holds_main = any(_is_main(d) for d in el.iter(etree.Element) if d.tag != "a")
                if length <= total * 0.5 and not holds_main:
                    boilerplate.drop_keeping_tail(el)
                    continue
            if depth < boilerplate.MAX_DEPTH and el.tag not in boilerplate._NOT_LAYOUT and len(el):
                stack.append((el, depth + 1, in_section or el.tag == "section"))


_BEFORE = etree.XPath("preceding-sibling::*[1][self::a][not(*)][not(normalize-space())]")


def plain_anchor(el: etree._Element) -> str | None:
    found = el.get("id") or str(_NAMED(el)) or None
    before = cast("list[etree._Element]", _BEFORE(el))
    if not found and before:
        found = before[0].get("id") or before[0].get("name")
    if found:
        return found
    parent = el.getparent()
    if parent is not None and parent.get("id") and sections._first_child(parent) is el:
        return parent.get("id")
    return None


# --- random pages ------------------------------------------------------------------------------

_TAGS = ("div", "section", "nav", "header", "footer", "main", "article", "aside", "ul", "li", "p",
         "span", "a", "h1", "h2", "h3", "dt", "dl", "table", "td", "dialog")  # fmt: skip
_NAMES = ("nav", "NavBar", "site-footer", "x_sidebar", "related", "body", "content", "menu-top",
          "skip", "toc", "sphinxsidebar", "navigation ", "Breadcrumbs", "nav-open",
          "footer2", "mdbook-help-popup", "Modal_x", "popups")  # fmt: skip
_ROLES = ("main", "navigation", "banner", "contentinfo", "search", "note", "dialog", "alertdialog")
_TEXTS = ("", "word ", "¶", " § ", "#", "🔗", "⚓", "¶¶", "several words of content here ", "\xa0¶",
          " \n\t", "\xa0", "two  spaces\n", "tab\there ", "é ", "\x7f", "\ue000")  # fmt: skip


@st.composite
def _element(draw: st.DrawFn, depth: int = 0) -> str:
    tag = draw(st.sampled_from(_TAGS))
    attrs = ""
    for attr, values in (("class", _NAMES), ("id", _NAMES), ("role", _ROLES), ("name", _NAMES)):
        if draw(st.integers(0, 3)) == 0:
            attrs += f' {attr}="{draw(st.sampled_from(values))}"'
    children = ""
    if depth < 3:
        for _ in range(draw(st.integers(0, 4))):
            children += draw(_element(depth + 1)) + draw(st.sampled_from(_TEXTS))
    return f"<{tag}{attrs}>{draw(st.sampled_from(_TEXTS))}{children}</{tag}>"


_pages = st.lists(_element(), min_size=1, max_size=6).map(
    lambda parts: "<html><body>" + "".join(parts) + "</body></html>"
)


def _both(html: str) -> tuple[etree._Element, etree._Element]:
    fast, plain = dom.parse_html(html), dom.parse_html(html)
    assert fast is not None and plain is not None
    return cast("etree._Element", fast.root), cast("etree._Element", plain.root)


def _check_same(html: str) -> None:
    fast, plain = _both(html)
    fast_body, plain_body = fast.find("body"), plain.find("body")
    assert fast_body is not None and plain_body is not None
    boilerplate.drop_boilerplate(fast_body)
    plain_drop_boilerplate(plain_body)
    assert etree.tostring(fast) == etree.tostring(plain)
    headings = list(fast_body.iter(*sections._HEADINGS))
    assert [sections._anchor(h) for h in headings] == [plain_anchor(h) for h in headings]


@settings(max_examples=40)
@given(_pages)
def test_property_frame_walk_and_anchors_equal_the_plain_versions(html: str) -> None:
    _check_same(html)


def test_real_pages_lose_the_same_frame_and_get_the_same_sections() -> None:
    pages = sorted(DATA.glob("*.html"))
    assert pages
    for path in pages:
        _check_same(path.read_text("utf-8"))
        page = extract_page(path.read_bytes(), "http://example.test/p", "text/html",
                            want_sections=True, want_markdown=False)  # fmt: skip
        assert "".join(s.text + "\n" for s in page.sections).strip() == page.text


def test_elements_are_lxml_html_elements() -> None:
    # the C lookup keeps lxml.html's element class: drop_tree(), text_content() ...
    doc = dom.parse_html("<html><body><form><input name=q></form><p>x</p></body></html>")
    assert doc is not None
    assert all(isinstance(el, lxml.html.HtmlElement) for el in doc.root.iter(etree.Element))


# --- the characters libxml2 rejects --------------------------------------------------------------

_CHARS = st.sampled_from(["a", " ", "\t", "\n", "\r", "\x00", "\x01", "\x0b", "\x1f", "\x7f", "é",
                          "\ud800", "\ufffe", "\uffff", "\ufffd", "\U0001f517", "<p>"])  # fmt: skip


@settings(max_examples=300)
@given(st.lists(_CHARS, max_size=40).map("".join))
def test_property_valid_chars_equal_the_regex_pass(html: str) -> None:
    # the usual page's fast check (no C0 byte, no surrogate, no noncharacter) against the plain
    # regex pass it stands in for
    plain = _INVALID_CHARS.sub("", html)
    assert _valid_chars(html) == (plain, plain.encode("utf-8"))
