"""The section a hit names is the one its snippet shows.

A hit found by its words shows a snippet of them and is named by the section that snippet is
in (keyword search and hybrid alike): before, hybrid named the section closest in meaning under
a snippet quoted from another part of the page. A hit found by meaning alone is named by its
closest section (:mod:`litecrawl.index.semantic`) and shows that section's first words, not the
page's. A page's sections are its stored section headings (``section_vectors``, in page order:
pages with more than one section, crawled with embeddings): each heading is the first line of
its section in the page's text (:mod:`litecrawl.extract.sections`), so the headings found in
order mark where each section starts. A hit on a page without stored sections, or whose snippet
is in the text before the first heading, names no section.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from litecrawl.store.index import IndexReader, SearchHit

__all__ = ["PREVIEW", "name_sections", "opening", "section_offsets", "section_url"]

PREVIEW = 200  # characters of a hit found by meaning shown as its snippet

Start = tuple[int, str, str | None]  # where a section starts in the text, heading, anchor


def section_url(url: str, anchor: str | None) -> str:
    """The URL that leads to a section of the page at ``url``."""
    return f"{url.split('#', 1)[0]}#{anchor}" if anchor else url


def opening(text: str) -> str:
    """The first :data:`PREVIEW` characters of ``text``, cut at a word."""
    return text if len(text) < PREVIEW else text[:PREVIEW].rsplit(" ", 1)[0] + " …"


def name_sections(
    index: IndexReader,
    hits: Sequence[SearchHit],
    by_words: Collection[int],
    marks: tuple[str, str],
    ellipsis: str = "…",
) -> list[SearchHit]:
    """``hits`` named by the section their snippet is from (see the module doc): the resources
    ``by_words`` show a snippet of matched words (when it marks one), the others the opening of
    the section they are named by."""
    quoted = {h.resource_id for h in hits if h.resource_id in by_words and _marked(h, marks)}
    wanted = [h.resource_id for h in hits if h.resource_id in quoted or h.section is not None]
    if not wanted:
        return list(hits)
    starts = _section_starts(index, wanted)
    texts = index.texts(wanted) if starts else {}
    named = []
    for hit in hits:
        rid = hit.resource_id
        text, found = texts.get(rid, ""), starts.get(rid, [])
        if rid in quoted:
            at = _snippet_at(text, hit.snippet, marks, ellipsis)
            section = _section_at(_placed(text, found), at)
            if section is None:
                hit = replace(hit, section=None, section_url=None)
            else:
                _, heading, anchor = section
                hit = replace(hit, section=heading, section_url=section_url(hit.url, anchor))
        elif hit.section is not None:
            place = next((p for p in _placed(text, found) if p[1] == hit.section), None)
            if place is not None:
                hit = replace(hit, snippet=opening(text[place[0] :]))
        named.append(hit)
    return named


def section_offsets(index: IndexReader, texts: Mapping[int, str]) -> dict[int, list[int]]:
    """Where each section of each text starts (the first at 0: the text before the first
    heading is a section too); a text without stored sections is one section."""
    starts = _section_starts(index, list(texts))
    return {
        rid: sorted({0, *(at for at, _, _ in _placed(text, starts.get(rid, [])))})
        for rid, text in texts.items()
    }


def _marked(hit: SearchHit, marks: tuple[str, str]) -> bool:
    """Does the snippet quote matched words (not only the text's start: a title match)?"""
    return not marks[0] or marks[0] in hit.snippet


def _section_starts(
    index: IndexReader, resource_ids: Sequence[int]
) -> dict[int, list[tuple[str, str | None]]]:
    found: dict[int, list[tuple[str, str | None]]] = {}
    for rid, heading, anchor in index.vectors.headings(resource_ids):
        found.setdefault(rid, []).append((heading, anchor))
    return found


def _placed(text: str, sections: Sequence[tuple[str, str | None]]) -> list[Start]:
    """Where each section starts in ``text``: its heading as a line, after the one before
    (a heading not found as a line is left out: the text changed, or a merged section)."""
    placed: list[Start] = []
    cursor = 0
    for heading, anchor in sections:
        if not heading:
            placed.append((0, heading, anchor))
            continue
        at = _line_at(text, heading, cursor)
        if at >= 0:
            placed.append((at, heading, anchor))
            cursor = at + len(heading)
    return placed


def _line_at(text: str, line: str, start: int) -> int:
    at = text.find(line, start)
    while at > 0 and text[at - 1] != "\n":
        at = text.find(line, at + 1)
    return at


def _snippet_at(text: str, snippet: str, marks: tuple[str, str], ellipsis: str) -> int:
    """Where the snippet's text is in ``text`` (-1: not found): the snippet without its
    marks and ellipses, or, when a mark is also a character of the text, its longest piece
    between marks."""
    cuts = [re.escape(m) for m in (*marks, ellipsis) if m]
    pieces = [p for p in re.split("|".join(cuts), snippet)] if cuts else [snippet]
    plain = "".join(pieces).strip()
    at = text.find(plain) if plain else -1
    if at >= 0:
        return at
    longest = max(pieces, key=len).strip()
    return text.find(longest) if longest else -1


def _section_at(placed: Sequence[Start], at: int) -> Start | None:
    """The section whose text holds position ``at`` (None: before the first heading, or
    unknown)."""
    if at < 0:
        return None
    found = None
    for start in placed:
        if start[0] > at:
            break
        found = start
    if found is None or not found[1]:
        return None
    return found
