"""A page's boilerplate, dropped from the text the index holds: navigation, site headers and
footers, sidebars, previous/next blocks; and the page's controls, dropped from the Markdown
too (:func:`drop_controls`): permalink marks, a code block's buttons (and its links' tags).

A full page's text went into the index whole, so every page of a site began with the same menu
("Previous topic ... Next topic ... Navigation index modules | next | previous"), its keywords
held "previous" and "next", and a search for a menu word found every page. What is dropped is
what the page's markup says is not content:

- ``<nav>`` and the ARIA roles ``navigation``, ``banner``, ``contentinfo``, ``search``;
- what opens over the page: ``<dialog>``, the roles ``dialog`` and ``alertdialog``, a class or
  id naming a ``popup`` or ``modal`` (mdBook's keyboard help, a newsletter or cookie pop-up);
- ``<header>`` and ``<footer>`` outside a ``<section>`` (inside one they hold its own title or
  notes);
- an element whose class or id names a part of the page frame: a word (split at ``-`` and
  ``_``) among :data:`FRAME_WORDS` (``nav``, ``navbar``, ``sidebar``, ``footer``,
  ``breadcrumb``, ``related``... e.g. Sphinx's ``sphinxsidebar`` and ``related``, DocBook's
  ``navheader``/``navfooter``, MediaWiki's ``printfooter`` ("Retrieved from ...") and
  ``catlinks`` (the page's categories));
- (by :func:`drop_controls`, before the Markdown's HTML is taken) a link whose whole text is a
  permalink mark (``¶``, ``§``, ``#``, ``🔗``) or that shows no words nor image (an icon drawn
  by CSS: the converter would write its ``title`` as its text), the target of a
  ``javascript:`` link (its words stay), and the buttons and inputs inside a ``<pre>`` (a
  "copy" button's word is not the code's).

Never dropped: anything inside an ``<article>``, ``<main>`` or ``role="main"`` element (a
contents list or a sidebar there is the content's own), an element holding one, or one holding
more than half of the page's text (a wrapper named ``nav-open`` is the page, not its menu).
The Markdown output is converted before the frame is dropped and keeps its own rules (the
converter drops ``<nav>`` and ``<header>``). Measured in bench/README.md ("Search that finds the
answer"): on the Python and PostgreSQL documentation no word of a page's marked main content
is lost.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import cast

from lxml import etree

__all__ = [
    "FRAME_WORDS",
    "NAVIGATION_WORDS",
    "PERMALINK_MARKS",
    "drop_boilerplate",
    "drop_controls",
    "drop_keeping_tail",
    "names_navigation",
]

FRAME_WORDS = frozenset({
    "nav", "navbar", "navigation", "navheader", "navfooter", "navbox", "breadcrumb",
    "breadcrumbs", "sidebar", "sphinxsidebar", "sidebarwrapper", "footer", "related", "menu",
    "menubar", "skiplink", "skip", "masthead", "cookie", "cookies", "topbar", "popup", "modal",
    "printfooter", "catlinks",
})  # fmt: skip
# the frame words that name navigation and nothing else, even inside an article
NAVIGATION_WORDS = frozenset({
    "nav", "navbar", "navigation", "navbox", "breadcrumb", "breadcrumbs", "menu", "menubar",
    "popup", "modal", "printfooter", "catlinks", "toc",
})  # fmt: skip
PERMALINK_MARKS = frozenset({"¶", "§", "#", "🔗", "⚓", "¶¶"})
_ROLES = ("navigation", "banner", "contentinfo", "search", "dialog", "alertdialog")
_MAX_SHARE = 0.5
_NAVIGATION_NAME = re.compile(
    r"(?:^|[\s_-])(?:"
    + "|".join(sorted(NAVIGATION_WORDS, key=len, reverse=True))
    + r")(?=$|[\s_-])",
    re.IGNORECASE,
)
# The frame sits in the page's outer blocks: the walk looks this deep below <body>, never into
# the main content or into blocks that hold text rather than layout (a full-tree XPath scan
# cost more than the rest of the page's extraction).
MAX_DEPTH = 12
_NOT_LAYOUT = frozenset({
    "p", "pre", "table", "dl", "blockquote", "code", "span", "a", "em", "strong", "b", "i",
    "h1", "h2", "h3", "h4", "h5", "h6", "img", "figure", "form", "select", "textarea",
})  # fmt: skip
_TEXT_LENGTH = etree.XPath("string-length(.)")
_HEADING_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# one of FRAME_WORDS as a whole word of a class or id (words split at whitespace, "-" and "_")
_FRAME_NAME = re.compile(
    r"(?:^|[\s_-])(?:" + "|".join(sorted(FRAME_WORDS, key=len, reverse=True)) + r")(?=$|[\s_-])",
    re.IGNORECASE,
)
# Whether an element holds the main part (an <a role="main"> does not count). One XPath call,
# in C: iterating the frame's descendants in Python cost ~1 us an element.
_HOLDS_MAIN = etree.XPath("boolean(.//main | .//article | .//*[@role='main'][not(self::a)])")
_MAIN_TAGS = frozenset({"main", "article"})
_HEADER_FOOTER = frozenset({"header", "footer"})


@lru_cache(maxsize=4096)
def _frame_name(value: str) -> bool:
    """Whether a class or id value names a part of the frame. A site repeats a few hundred
    values on every page: the regex runs once per value."""
    return _FRAME_NAME.search(value) is not None


def names_navigation(el: etree._Element) -> bool:
    """Whether the markup names ``el`` a way around the site, for a block inside an article
    (docs/search.md#main-article): ``<nav>``, ``<dialog>``, one of the frame's ARIA roles, a
    word of :data:`NAVIGATION_WORDS` in its class, or an id that is one whole. Narrower than
    the frame: inside an article a ``sidebar`` or a ``footer`` is often the article's own (the
    Debian handbook's "TIP" and "GOING FURTHER" boxes), and an id's words come from headings
    and names (``new-features-related-to-type-hints``, ``EmailMessage.make_related``)."""
    if el.tag == "nav" or el.tag == "dialog" or el.get("role") in _ROLES:
        return True
    value = el.get("class")
    if value and _NAVIGATION_NAME.search(value) is not None:
        return True
    return (el.get("id") or "").lower() in NAVIGATION_WORDS


def drop_boilerplate(body: etree._Element) -> int:
    """Remove the page frame from ``body`` (see the module doc), in place; the number of
    elements removed."""
    total = -1  # the page's text length, measured when first needed
    removed = 0
    stack: list[tuple[etree._Element, int, bool]] = [(body, 0, False)]
    # The rules of _is_main and _is_frame inlined, each attribute read once: this loop runs for
    # every outer block of every page (~1 us an element saved; bench/README.md, issue 29)
    while stack:
        parent, depth, in_section = stack.pop()
        for el in list(parent):
            tag = el.tag
            if tag.__class__ is not str:
                continue  # comments
            role = el.get("role")
            if role == "main" or tag in _MAIN_TAGS:
                continue  # the content's own contents list, sidebar or notes
            if tag == "nav" or tag == "dialog" or role in _ROLES:
                frame = True
            elif tag in _HEADER_FOOTER:
                frame = not in_section
            else:
                value = el.get("class")
                frame = bool(value) and _frame_name(value)
                if not frame:
                    value = el.get("id")
                    frame = bool(value) and _frame_name(value)
            if frame:
                if total < 0:  # string-length(.) of the body, written out by libxml2's
                    # serializer: 44k instructions a kit page, the XPath's string value 165k
                    # (bench/README.md, issue 29, session 15)
                    total = len(
                        etree.tostring(body, method="text", encoding="unicode", with_tail=False)
                    )
                length = float(cast("float", _TEXT_LENGTH(el)))
                if length <= total * _MAX_SHARE and not _HOLDS_MAIN(el):
                    drop_keeping_tail(el)
                    removed += 1
                    continue
                # the page itself, not its frame: its parts may still go
            if depth < MAX_DEPTH and tag not in _NOT_LAYOUT and len(el):
                stack.append((el, depth + 1, in_section or tag == "section"))
    return removed


def drop_controls(body: etree._Element) -> None:
    """Remove what is there to be clicked, not read, in place: permalink marks (a link whose
    whole text is one: Sphinx's ``¶`` after each heading, Node.js's ``#``), a button beside a
    heading's words (rustdoc's "Copy item path"), the buttons and inputs inside code blocks,
    and the links there (their text stays: a fenced block cannot hold a link, and rustdoc's
    signatures link every type); the ``<code>`` variants of one block (Node.js's ES module and
    CommonJS forms) each start on a line of their own. A link that shows nothing (the Erlang
    docs' paperclip and pencil icons, drawn by CSS) goes as a mark does, and a ``javascript:``
    link keeps its words but no target (a script's call is no place to go). One walk over the
    links, blocks and buttons. The page's links were read from the parse before this."""
    marks: list[etree._Element] = []
    blocks: list[etree._Element] = []
    # (an XPath asking for leaves whose text holds a mark's character was 2-3x slower than this)
    for el in body.iter("a", "pre", "button"):
        if el.tag == "pre":
            blocks.append(el)
        elif el.tag == "button":
            if _beside_a_heading(el):
                marks.append(el)
        elif _is_mark(el):
            marks.append(el)
        elif (el.get("href") or "").lstrip()[:11].lower() == "javascript:":
            del el.attrib["href"]
    for a in marks:
        if a.tag == "button" or (a.get("id") is None and a.get("name") is None):
            drop_keeping_tail(a)
        else:  # the section's anchor (Node.js's headings): kept as an empty target
            a.text = None
            a.attrib.pop("href", "")
    for pre in blocks:
        for control in list(pre.iter("button", "input")):
            drop_keeping_tail(control)
        codes = [child for child in pre if child.tag == "code"]
        for code in codes[:-1]:
            if not (code.tail or "").startswith("\n"):
                code.tail = "\n" + (code.tail or "")
        # after the variants are told: the <code> a link held is no variant of the block
        # (Sphinx's grammar links each name of a rule: "atom ::= identifier | literal")
        etree.strip_tags(pre, "a")


def _is_mark(a: etree._Element) -> bool:
    """A link whose whole text is a permalink mark, or with no words and no image in it."""
    own = (a.text or "").strip()
    if own:
        return len(a) == 0 and own in PERMALINK_MARKS
    return next(a.iter("img"), None) is None and not "".join(str(t) for t in a.itertext()).strip()


def _beside_a_heading(button: etree._Element) -> bool:
    """A button inside a heading that has words of its own: rustdoc's "Copy item path" after
    each item's name. (A heading that is all button, an accordion's question, keeps it.)"""
    heading = next(button.iterancestors(*_HEADING_TAGS), None)
    if heading is None:
        return False
    words = "".join(str(t) for t in button.itertext())
    own = "".join(str(t) for t in heading.itertext()).replace(words, "", 1)
    return bool(own.strip())


def drop_keeping_tail(el: etree._Element) -> None:
    """Remove ``el`` but keep its tail text (the words after it belong to its parent)."""
    parent = el.getparent()
    if parent is None:
        return
    tail = el.tail
    if tail:
        previous = el.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)
