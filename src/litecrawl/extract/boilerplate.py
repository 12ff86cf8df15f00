"""A page's boilerplate, dropped from the text the index holds: navigation, site headers and
footers, sidebars, previous/next blocks, permalink marks.

A full page's text went into the index whole, so every page of a site began with the same menu
("Previous topic ... Next topic ... Navigation index modules | next | previous"), its keywords
held "previous" and "next", and a search for a menu word found every page. What is dropped is
what the page's markup says is not content:

- ``<nav>`` and the ARIA roles ``navigation``, ``banner``, ``contentinfo``, ``search``;
- ``<header>`` and ``<footer>`` outside a ``<section>`` (inside one they hold its own title or
  notes);
- an element whose class or id names a part of the page frame: a word (split at ``-`` and
  ``_``) among :data:`FRAME_WORDS` (``nav``, ``navbar``, ``sidebar``, ``footer``,
  ``breadcrumb``, ``related``... e.g. Sphinx's ``sphinxsidebar`` and ``related``, DocBook's
  ``navheader``/``navfooter``);
- a link whose whole text is a permalink mark (``¶``, ``§``, ``#``, ``🔗``).

Never dropped: anything inside an ``<article>``, ``<main>`` or ``role="main"`` element (a
contents list or a sidebar there is the content's own), an element holding one, or one holding
more than half of the page's text (a wrapper named ``nav-open`` is the page, not its menu).
The Markdown output is converted before this runs and keeps its own rules (the converter
drops ``<nav>`` and ``<header>``). Measured in bench/README.md ("Search that finds the
answer"): on the Python and PostgreSQL documentation no word of a page's marked main content
is lost.
"""

from __future__ import annotations

import re
from typing import cast

from lxml import etree

__all__ = ["FRAME_WORDS", "PERMALINK_MARKS", "drop_boilerplate"]

FRAME_WORDS = frozenset({
    "nav", "navbar", "navigation", "navheader", "navfooter", "navbox", "breadcrumb",
    "breadcrumbs", "sidebar", "sphinxsidebar", "sidebarwrapper", "footer", "related", "menu",
    "menubar", "skiplink", "skip", "masthead", "cookie", "cookies", "topbar",
})  # fmt: skip
PERMALINK_MARKS = frozenset({"¶", "§", "#", "🔗", "⚓", "¶¶"})
_ROLES = ("navigation", "banner", "contentinfo", "search")
_MAX_SHARE = 0.5
# candidates found in C; their class/id words are checked in Python
_CANDIDATES = etree.XPath(
    ".//nav | .//header | .//footer"
    f" | .//*[{' or '.join(f'@role={r!r}' for r in _ROLES)}]"
    " | .//*[contains(@class, 'nav') or contains(@class, 'sidebar') or contains(@class, 'footer')"
    " or contains(@class, 'breadcrumb') or contains(@class, 'related') or contains(@class, 'menu')"
    " or contains(@class, 'skip') or contains(@class, 'masthead') or contains(@class, 'cookie')"
    " or contains(@class, 'topbar')"
    " or contains(@id, 'nav') or contains(@id, 'sidebar') or contains(@id, 'footer')"
    " or contains(@id, 'breadcrumb') or contains(@id, 'menu') or contains(@id, 'masthead')]"
)
_MARK_LINKS = etree.XPath(".//a[not(*) and string-length(normalize-space(.)) <= 2]")
_HOLDS_MAIN = etree.XPath("boolean(descendant-or-self::main | descendant-or-self::*[@role='main'])")
_IN_MAIN = etree.XPath("boolean(ancestor::article | ancestor::main | ancestor::*[@role='main'])")
_IN_SECTION = etree.XPath("boolean(ancestor::section)")
_WORD_SPLIT = re.compile(r"[\s_-]+")


def _names_frame(el: etree._Element) -> bool:
    for attr in ("class", "id"):
        value = el.get(attr)
        if value and any(w in FRAME_WORDS for w in _WORD_SPLIT.split(value.lower())):
            return True
    return False


def _is_frame(el: etree._Element) -> bool:
    if _IN_MAIN(el):
        return False  # the content's own contents list, sidebar or notes
    tag = el.tag
    if tag == "nav" or el.get("role") in _ROLES:
        return True
    if tag in ("header", "footer"):
        return not _IN_SECTION(el)
    return _names_frame(el)


def _text_length(el: etree._Element) -> int:
    return sum(len(t) for t in cast("list[str]", el.itertext()))


def drop_boilerplate(body: etree._Element) -> int:
    """Remove the page frame from ``body`` (see the module doc), in place; the number of
    elements removed."""
    found = [el for el in cast("list[etree._Element]", _CANDIDATES(body)) if _is_frame(el)]
    removed = 0
    if found:
        chosen = set(found)
        total = _text_length(body)
        for el in found:
            if any(a in chosen for a in el.iterancestors()):
                continue  # goes with its ancestor
            if _HOLDS_MAIN(el) or _text_length(el) > total * _MAX_SHARE:
                chosen.discard(el)  # the page itself, not its frame: its parts may still go
                continue
            _drop(el)
            removed += 1
    for a in cast("list[etree._Element]", _MARK_LINKS(body)):
        if "".join(cast("list[str]", a.itertext())).strip() in PERMALINK_MARKS:
            _drop(a)
            removed += 1
    return removed


def _drop(el: etree._Element) -> None:
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
