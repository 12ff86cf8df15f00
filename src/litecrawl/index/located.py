"""The section a hit names is the one its snippet shows.

A hit found by its words shows a snippet of them and is named by the section that snippet is
in (keyword search and hybrid alike): before, hybrid named the section closest in meaning under
a snippet quoted from another part of the page. A hit found by meaning alone is named by its
closest section (:mod:`litecrawl.index.semantic`) and shows that section's first words, not the
page's. A page's sections are its stored section headings (``section_vectors``, in page order:
pages with more than one section, crawled with embeddings), each with every heading it holds
(several when short sections were merged to fit the bound) and where its line starts in the
page's text (:mod:`litecrawl.extract.sections`; for rows from before, each heading is found as
a line in order). So a hit found by its words names the very heading its snippet is under, and
one found by meaning the heading of the merged section whose part is closest to the query. A
hit on a page without stored sections, or whose snippet is in the text before the first
heading, names no section.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from urllib.parse import quote

from litecrawl.store.index import IndexReader, SearchHit

__all__ = ["PREVIEW", "name_sections", "opening", "section_offsets", "section_url"]

PREVIEW = 200  # characters of a hit found by meaning shown as its snippet
_FRAGMENT = "!$&'()*+,;=:@/?-._~%"  # what a fragment holds as it is (RFC 3986 3.5), and escapes

# where a heading's line starts in the text, the heading, its anchor, and which stored section
# (in page order) holds it
Start = tuple[int, str, str | None, int]
Stored = tuple[tuple[int, str, str | None], ...]  # a stored section's headings' places
# which of a section's parts (their texts, for a hit of this title) is closest to the query
Closest = Callable[[str, Sequence[str]], int]


def section_url(url: str, anchor: str | None) -> str:
    """The URL that leads to a section of the page at ``url``: the anchor as a fragment may
    hold it (the Erlang docs' ``<a name="Match Specifications in Erlang">``: its spaces
    escaped, or the URL ends at the first one where it is pasted)."""
    return f"{url.split('#', 1)[0]}#{quote(anchor, safe=_FRAGMENT)}" if anchor else url


def opening(text: str) -> str:
    """The first :data:`PREVIEW` characters of ``text``, cut at a word."""
    return text if len(text) < PREVIEW else text[:PREVIEW].rsplit(" ", 1)[0] + " …"


def name_sections(
    index: IndexReader,
    hits: Sequence[SearchHit],
    by_words: Collection[int],
    marks: tuple[str, str],
    ellipsis: str = "…",
    closest: Closest | None = None,
) -> list[SearchHit]:
    """``hits`` named by the section their snippet is from (see the module doc): the resources
    ``by_words`` show a snippet of matched words (when it marks one), the others the opening of
    the section they are named by: of the heading ``closest`` chooses among those the section
    holds (a section merged from several), else of its first."""
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
                hit = _named(hit, section)
        elif hit.section is not None:
            placed = _placed(text, found)
            group = [p for p in placed if p[3] == _group_of(placed, hit.section) and p[1]]
            if len(group) > 1 and closest is not None:
                ends = [start[0] for start in placed[1:]]
                parts = [
                    text[p[0] : min((e for e in ends if e > p[0]), default=len(text))]
                    for p in group
                ]
                group = [group[closest(hit.title or "", parts)]]
            if group:
                hit = replace(_named(hit, group[0]), snippet=opening(text[group[0][0] :]))
        named.append(hit)
    return named


def section_offsets(index: IndexReader, texts: Mapping[int, str]) -> dict[int, list[int]]:
    """Where each section of each text starts (the first at 0: the text before the first
    heading is a section too); a text without stored sections is one section. A section merged
    from several is one here, as its vector is."""
    starts = _section_starts(index, list(texts), merged=False)
    found = {}
    for rid, text in texts.items():
        placed = _placed(text, starts.get(rid, []))
        # where the heading that names the section starts (the text before it is a section)
        firsts = {group: at for at, heading, _, group in reversed(placed) if heading}
        found[rid] = sorted({0, *firsts.values()})
    return found


def _named(hit: SearchHit, place: Start) -> SearchHit:
    _, heading, anchor, _ = place
    if not heading:
        return replace(hit, section=None, section_url=None)
    return replace(hit, section=heading, section_url=section_url(hit.url, anchor))


def _group_of(placed: Sequence[Start], heading: str) -> int | None:
    """The stored section that ``heading`` names (the first heading it holds)."""
    named: set[int] = set()
    for _, name, _, group in placed:
        if name and group not in named:
            named.add(group)
            if name == heading:
                return group
    return None


def _marked(hit: SearchHit, marks: tuple[str, str]) -> bool:
    """Does the snippet quote matched words (not only the text's start: a title match)?"""
    return not marks[0] or marks[0] in hit.snippet


def _section_starts(
    index: IndexReader, resource_ids: Sequence[int], merged: bool = True
) -> dict[int, list[Stored]]:
    """Each stored section's headings and places (``merged``: every heading merged into it;
    else its own only). A place not stored (-1) is found as a line."""
    found: dict[int, list[Stored]] = {}
    for row in index.vectors.headings(resource_ids, merged):
        at = -1 if row.at is None else row.at
        places = row.places or ((at, row.heading, row.anchor),)
        found.setdefault(row.resource_id, []).append(places)
    return found


def _placed(text: str, sections: Sequence[Stored]) -> list[Start]:
    """Where each heading of each section starts in ``text``: at its stored place when its
    line is there, else found as a line after the one before (a heading not found is left
    out: the text changed)."""
    placed: list[Start] = []
    cursor = 0
    for group, places in enumerate(sections):
        for stored, heading, anchor in places:
            if not heading:
                placed.append((0, heading, anchor, group))
                continue
            at = stored if _is_line(text, heading, stored) else _line_at(text, heading, cursor)
            if at >= 0:
                placed.append((at, heading, anchor, group))
                cursor = at + len(heading)
    return placed


def _is_line(text: str, line: str, at: int) -> bool:
    return at >= 0 and text.startswith(line, at) and (at == 0 or text[at - 1] == "\n")


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
