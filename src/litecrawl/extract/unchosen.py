"""What lies between the article's ends but is not the article: the blocks the engine skipped
that the page marks, or shows, as navigation (:func:`drop_unchosen_links`; the cut itself is
:mod:`litecrawl.extract.boundaries`, the rules in docs/search.md#main-article)."""

from __future__ import annotations

import re
from bisect import bisect_right

from lxml import etree

from litecrawl.extract.boilerplate import drop_keeping_tail, names_navigation
from litecrawl.extract.boundaries import (
    BLOCKS,
    GAP,
    HEADINGS,
    MAX_HITS,
    WHOLE,
    engine_lines,
    squeeze,
)

__all__ = ["drop_unchosen_links"]

_LINK_SHARE = 0.75  # a block at least this much link text, none of it chosen: navigation
# ... unless such blocks together are this large beside the text the engine chose: then the
# links are what the page is about (an index, a list of functions), the engine took its frame
_NAV_SHARE = 0.2
_NAV_FLOOR = 1000  # characters: a site's menus beside a short article are not its content
_STEADY = 12  # an engine line this long placed in the page moves the search on past it
_NAVIGATION_BLOCKS = (BLOCKS | {"dialog"}) - {"section", "article", "main", *HEADINGS}
# a table of contents inside the article goes (Node.js's, SQLite's: the headings once more)
# unless it is most of it: a chapter's page whose text is its contents (PostgreSQL's, the
# Debian handbook's) is that page
_CONTENTS = re.compile(r"(?:^|[\s_-])toc(?:$|[\s_-])")
_CONTENTS_SHARE = 0.5


def _spans(body: etree._Element) -> tuple[list[tuple[etree._Element, int, int]], str]:
    """Each element under ``body`` with the offsets of its text in the squeezed page text
    (start, end; its tail is not its own), in document order; and that text."""
    spans: list[tuple[etree._Element, int, int]] = []
    opened: list[tuple[etree._Element, int]] = []
    parts: list[str] = []
    total = 0
    for event, el in etree.iterwalk(body, events=("start", "end")):
        if el is body:
            if event == "end":
                break
            text = el.text
        elif event == "start":
            opened.append((el, total))
            text = el.text
        else:
            node, start = opened.pop()
            spans.append((node, start, total))
            text = el.tail
        if text and (squeezed := squeeze(text)):
            total += len(squeezed)
            parts.append(squeezed)
    return spans, "".join(parts)


def _chosen(page: str, lines: list[str]) -> tuple[list[int], list[int]]:
    """Where the engine's lines are in ``page``, in order: (starts, ends), sorted. A line is
    placed where the next one follows it closely (a table of contents repeats the headings,
    each followed by the next entry), else at its first place; it is looked for after the
    last long one placed, so a short one ("Home") met early in a menu hides nothing after."""
    starts: list[int] = []
    ends: list[int] = []
    cursor = 0
    for i, line in enumerate(lines):
        follow = lines[i + 1] if i + 1 < len(lines) else ""
        pos = first = page.find(line, cursor)
        for _ in range(MAX_HITS):
            if pos == -1 or not follow:
                break
            after = pos + len(line)
            if page.find(follow, after, after + GAP + len(follow)) != -1:
                break
            pos = page.find(line, after)
        pos = first if pos == -1 else pos
        if pos == -1:
            continue
        if not ends or pos >= ends[-1]:
            starts.append(pos)
            ends.append(pos + len(line))
        if len(line) >= _STEADY:
            cursor = pos + len(line)
    return starts, ends


def _head_gap(starts: list[int], ends: list[int]) -> tuple[int, int]:
    """The first stretch of the page the engine skipped between two of its lines (at least
    ``GAP`` characters): where a stray first line (a tagline) pulled the cut wider than the
    article; (0, 0) when there is none."""
    for i in range(len(starts) - 1):
        if starts[i + 1] - ends[i] >= GAP:
            return ends[i], starts[i + 1]
    return 0, 0


def drop_unchosen_links(body: etree._Element, engine_text: str) -> int:
    """Remove from the cut ``body`` what lies between the article's ends but is not the
    article, by two rules; returns how many blocks went.

    A block the markup names navigation (``<nav>``, a ``navbar`` or ``breadcrumb`` class...:
    :func:`~litecrawl.extract.boilerplate.names_navigation`) that holds none of the engine's
    lines, wherever it is: the markup and the engine agree (cppreference's ``t-navbar``
    tables of the library's parts, below the title of every page); or that is mostly link
    text, the engine's lines or not (LilyPond's Prev/Up/Next tables between sections). Never a
    heading, a block holding one, a section or an article, nor inside a table (its cells are
    its own).

    A block that is mostly link text and holds none of the engine's lines, no table, no code,
    no heading, no paragraph, nor is in a table, and lies in the first stretch the engine
    skipped, before any heading: a menu between a stray first line and the article (SQLite's
    pages hold their menus beside the tagline an engine keeps). Link lists inside the article
    stay (an engine skips lists of functions, an index's entries), and so do blocks without
    text (an image, a rule: no evidence). When such blocks together are large beside the
    engine's choice they are the page itself, and all stay."""
    spans, page = _spans(body)
    starts, ends = _chosen(page, engine_lines(engine_text))
    named = [
        (el, start, end)
        for el, start, end in spans
        # blocks only (a navigation bar is one; the ~nine in ten elements of a page that are
        # inline are not asked: Python's stdtypes.html, 17,070 elements, 23 ms -> 3)
        if el.tag in _NAVIGATION_BLOCKS
        and end > start
        and names_navigation(el)
        and (not _holds_chosen(starts, ends, start, end) or _mostly_links(el) or _is_contents(el))
        and next(el.iter(*HEADINGS), None) is None
        and not any(a.tag in WHOLE for a in el.iterancestors())
    ]
    contents = [(start, end) for el, start, end in named if _is_contents(el)]
    if _covered(contents) > _CONTENTS_SHARE * len(page):  # a chapter's page: its contents
        named = [one for one in named if not _is_contents(one[0])]
    doomed = [el for el, _, _ in named]
    doomed += _unchosen_menus(spans, starts, ends)
    gone = {id(el) for el in doomed}
    outermost = [el for el in doomed if not any(id(a) in gone for a in el.iterancestors())]
    for el in outermost:
        drop_keeping_tail(el)
    return len(outermost)


def _is_contents(el: etree._Element) -> bool:
    """A table of contents by its class word or id (``toc``)."""
    return _CONTENTS.search(f"{el.get('class') or ''} {el.get('id') or ''}".lower()) is not None


def _covered(spans: list[tuple[int, int]]) -> int:
    """Characters of the page text that ``spans`` (nested or not) cover."""
    total, reached = 0, 0
    for start, end in sorted(spans):
        if end > reached:
            total += end - max(start, reached)
            reached = end
    return total


def _mostly_links(el: etree._Element) -> bool:
    """At least :data:`_LINK_SHARE` of ``el``'s text is its links' (LilyPond's Prev/Up/Next
    tables between a page's sections, which resiliparse takes for the article's)."""
    text = len(squeeze("".join(str(t) for t in el.itertext())))
    links = sum(len(squeeze("".join(str(t) for t in a.itertext()))) for a in el.iter("a"))
    return text > 0 and links >= _LINK_SHARE * text


def _holds_chosen(starts: list[int], ends: list[int], start: int, end: int) -> bool:
    """Whether any of the engine's placed lines overlaps ``[start, end)``."""
    i = bisect_right(ends, start)
    return i < len(starts) and starts[i] < end


def _unchosen_menus(
    spans: list[tuple[etree._Element, int, int]], starts: list[int], ends: list[int]
) -> list[etree._Element]:
    """The second rule of :func:`drop_unchosen_links`: the menus in the first skipped stretch."""
    lo, hi = _head_gap(starts, ends)
    if any(el.tag in HEADINGS and start < lo for el, start, _ in spans):
        return []  # the article had begun: what the engine skipped after its title is its own
    where = {id(el): (start, end) for el, start, end in spans}  # spans holds the proxies
    most = max(_NAV_SHARE * sum(b - a for a, b in zip(starts, ends, strict=True)), _NAV_FLOOR)
    doomed: list[etree._Element] = []
    for el, start, end in spans:
        if end == start or el.tag not in BLOCKS:
            continue
        if el.tag in HEADINGS or el.tag in WHOLE or el.tag == "p":  # a paragraph is prose
            continue
        if not (lo <= start and end <= hi):
            continue
        if next(el.iter("table", "pre"), None) is not None:
            continue
        if any(a.tag in WHOLE for a in el.iterancestors()):  # a table's cells: its own
            continue
        linked = sum(b - a for a, b in (where[id(x)] for x in el.iter("a")))
        if linked >= (end - start) * _LINK_SHARE:
            doomed.append(el)
    gone = {id(el) for el in doomed}
    outermost = [el for el in doomed if not any(id(a) in gone for a in el.iterancestors())]
    if sum(where[id(el)][1] - where[id(el)][0] for el in outermost) > most:
        return []
    return outermost
