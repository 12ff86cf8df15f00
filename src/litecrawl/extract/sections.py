"""A page's sections: its text split at its headings, each named by its heading and anchor.

A question about one part of a long page (most of a documentation site's answers) cannot match
the page's one vector, made from its first words; a vector per section can. The split is read
from the same parse and the same text pass as the page's text: before the text pass a marker
character goes at the start of every heading (``<h1>``..``<h6>``, and ``<dt>`` with an id: the
entries of an API reference), the text is split at the markers and the markers removed, so the
page's text is exactly what it was.

Bounded per page: at most :data:`MAX_SECTIONS` sections; sections under :data:`MIN_WORDS` words
join the one before them (a heading with one line under it says little alone), and when a page
has more, neighbours are merged until the count fits (each named by its first heading, and
keeping every heading it holds with where its line starts in the page's text: a hit names the
heading whose part matched, not the group's first). A section's anchor is the heading's ``id``,
an ``<a id|name>`` inside it, an empty ``<a id|name>`` right before it (texinfo's), or the id of
the element it opens (Sphinx's ``<section id>``, DocBook's ``<div id>``): None when there is
none. A heading whose anchor the page gives several headings (the Erlang docs' ``<h3
id="types">`` under every function) is no section of its own: a link to it would lead to the
first of them, so its part joins the section before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from litecrawl.extract.text import normalize_lines

__all__ = ["MAX_SECTIONS", "MIN_WORDS", "Place", "Section", "mark_headings", "split_sections"]

# A reference page has hundreds of entries: merged 16 at most, each section's vector held its
# first entry's words only, and most entries none (Python's docs, hybrid MRR@10 of questions:
# 16 0.763, 32 0.772, 48 0.785, 64 0.784; bench/README.md)
MAX_SECTIONS = 48
MIN_WORDS = 25
MARK = "\ue000"  # a private-use character: in no page's text (removed if it is)
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6", "dt")


# where a heading's line starts in the page's text, the heading ("" for the text before the
# first heading) and its anchor
Place = tuple[int, str, str | None]


@dataclass(frozen=True, slots=True)
class Section:
    heading: str  # "" for the text before the first heading
    anchor: str | None  # the fragment that leads to it on the page
    text: str  # its text, heading line first
    # every heading the section holds (more than one when short sections were merged), first
    # its own, with where each starts in the page's text
    places: tuple[Place, ...] = ()


def _anchor(el: etree._Element) -> str | None:
    found = el.get("id") or _named(el) or _target_before(el)
    if found:
        return found
    parent = el.getparent()
    if parent is not None and parent.get("id") and _first_child(parent) is el:
        return parent.get("id")
    return None


def _named(el: etree._Element) -> str | None:
    """The ``id`` or ``name`` (whichever is written first) of the first ``<a>`` inside ``el``
    that has one: an iteration in C, where an XPath call per heading cost ~5 us."""
    for a in el.iter("a"):
        if a.get("id") is None and a.get("name") is None:
            continue
        for key, value in a.items():
            if key in ("id", "name"):
                return str(value)
    return None


def _target_before(el: etree._Element) -> str | None:
    """The ``id`` or ``name`` of an empty ``<a>`` right before ``el`` (texinfo writes
    ``<a name="pitches"></a>`` before each heading)."""
    before = el.getprevious()
    if before is None or before.tag != "a" or len(before) or (before.text or "").strip():
        return None
    found = before.get("id") or before.get("name")
    return str(found) if found else None


def _first_child(parent: etree._Element) -> etree._Element | None:
    """The first child element that is not an empty link target (Sphinx puts ``<span id>``
    targets before a section's heading)."""
    for child in parent:
        if not isinstance(child.tag, str):
            continue
        if child.tag in ("a", "span") and len(child) == 0 and not (child.text or "").strip():
            continue
        return child
    return None


def mark_headings(body: etree._Element) -> list[str | None]:
    """Put :data:`MARK` before the text of every heading of ``body`` (in place); the anchor of
    each, in document order."""
    anchors: list[str | None] = []
    for el in body.iter(*_HEADINGS):
        if el.tag == "dt" and el.get("id") is None:
            continue  # a definition list's term, not an entry someone links to
        anchors.append(_anchor(el))
        el.text = MARK + (el.text or "")
    return anchors


def split_sections(marked: str, anchors: list[str | None]) -> tuple[str, tuple[Section, ...]]:
    """(the page's text, its sections) from the raw text pass of a tree
    :func:`mark_headings` marked: the text is what the unmarked tree gives (lines
    normalized)."""
    if not anchors and MARK not in marked:  # no heading: one section, the whole text
        text = normalize_lines(marked)
        return text, (Section("", None, text),) if text else ()
    parts = marked.split(MARK)
    if len(parts) - 1 != len(anchors):  # a marker lost in the text pass, or one in the page
        return normalize_lines("".join(parts)), ()
    # each marker starts a heading's line (headings are blocks), so the parts' lines are the
    # page's lines: the page's text is the parts' text joined
    lines = [normalize_lines(part) for part in parts]
    found: list[Section] = []
    at = 0  # where the part starts in the page's text (the non-empty parts joined by newlines)
    if lines[0]:
        found.append(Section("", None, lines[0], ((0, "", None),)))
        at = len(lines[0]) + 1
    for body, anchor in zip(lines[1:], anchors, strict=True):
        if body:
            heading = body.partition("\n")[0]
            found.append(Section(heading, anchor, body, ((at, heading, anchor),)))
            at += len(body) + 1
    return "\n".join(line for line in lines if line), _bounded(found)


def _bounded(found: list[Section]) -> tuple[Section, ...]:
    found = _own_anchors(found)
    if len(found) < 2:
        return tuple(found)  # nothing to merge: no need to count its words
    merged: list[Section] = []
    sizes: list[int] = []
    for section in found:
        size = _words(section.text)
        if merged and (size < MIN_WORDS or (len(merged) == 1 and sizes[0] < MIN_WORDS)):
            # a short section joins the one before; a short first one takes the next
            merged[-1] = _join(merged[-1], section)
            sizes[-1] += size
        else:
            merged.append(section)
            sizes.append(size)
    while len(merged) > MAX_SECTIONS:
        # the pair of neighbours with the fewest words together becomes one
        i = min(range(len(merged) - 1), key=lambda k: sizes[k] + sizes[k + 1])
        merged[i : i + 2] = [_join(merged[i], merged[i + 1])]
        sizes[i : i + 2] = [sizes[i] + sizes[i + 1]]
    return tuple(merged)


def _own_anchors(found: list[Section]) -> list[Section]:
    """``found`` with each section whose anchor several sections share joined to the one
    before it, its heading's place left out (a hit in it names the heading before)."""
    seen: dict[str, int] = {}
    for section in found:
        if section.anchor is not None:
            seen[section.anchor] = seen.get(section.anchor, 0) + 1
    if all(n == 1 for n in seen.values()):
        return found
    kept: list[Section] = []
    for section in found:
        if kept and section.anchor is not None and seen[section.anchor] > 1:
            last = kept[-1]
            kept[-1] = Section(
                last.heading, last.anchor, last.text + "\n" + section.text, last.places
            )
        else:
            kept.append(section)
    return kept


def _words(text: str) -> int:
    """About the number of words of normalized text (single spaces and newlines), without
    splitting it."""
    return text.count(" ") + text.count("\n") + 1


def _join(first: Section, second: Section) -> Section:
    named = first if first.heading else second  # a heading keeps its own anchor
    text = first.text + "\n" + second.text
    return Section(named.heading, named.anchor, text, first.places + second.places)
