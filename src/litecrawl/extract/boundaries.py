"""The main article on our own tree: from the text an engine chose to the nodes that hold it.

A main-article engine (trafilatura, resiliparse) says *which* text is the article, but its own
rendering loses what a dataset needs (code blocks become prose, links point to the site root,
tables and nested lists flatten). So only its choice is used: the article's first and last lines
are found in the page's own text (whitespace ignored, which differs between any two renderings),
each is widened to the block that holds it (a whole table or ``<pre>``, never half of one), then
to the children of the smallest element holding both, and the tree is cut down to what lies
between. What lies between is kept whatever the engine thought of it, but for the menus and
the navigation it skipped (:mod:`litecrawl.extract.unchosen`). The result goes through the
same Markdown converter and plain-text pass as a full page.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from lxml import etree

from litecrawl.extract.boilerplate import drop_keeping_tail

__all__ = [
    "BLOCKS",
    "GAP",
    "HEADINGS",
    "MAX_HITS",
    "WHOLE",
    "drop_edge_navigation",
    "engine_lines",
    "keep_between",
    "locate_article",
    "squeeze",
]

BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "caption", "dd", "details", "div", "dl", "dt",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "li",
    "main", "nav", "ol", "p", "pre", "section", "summary", "table", "td", "th", "tr", "ul",
})  # fmt: skip
WHOLE = frozenset({"table", "pre"})  # never cut inside
GAP = 40  # characters (whitespace aside) an engine may leave out between two of its lines
_MIN_ANCHOR = 4  # shorter lines ("¶", "A") occur anywhere: not used to place a boundary
_TRIES = 6  # lines tried at each end before giving up
MAX_HITS = 64
_BULLETS = ("- ", "* ", "• ")
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_MAIN = etree.XPath(".//main | .//*[@role='main'][not(self::a)]")
# a manual's table of contents in a frame beside its page (LilyPond's <div id="tocframe">), by
# a class or id word; not a "toc" alone: PostgreSQL's part pages are their table of contents
_CONTENTS_FRAME = re.compile(r"(?:^|[\s_-])toc-?frame(?:$|[\s_-])")
_FOOTER = re.compile(r"(?:^|[\s_-])footer(?:$|[\s_-])")
# where an article's edge is looked for inside the block that holds it
_CONTAINERS = frozenset({"body", "div", "section", "article", "main"})


def squeeze(text: str) -> str:
    return "".join(text.split())


def engine_lines(text: str) -> list[str]:
    """The engine's lines, without whitespace or list bullets; table rows (cells joined by
    "|", an engine's own spelling) are left out."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(_BULLETS):
            line = line[2:]
        squeezed = squeeze(line)
        if len(squeezed) >= _MIN_ANCHOR and "|" not in squeezed:
            out.append(squeezed)
    return out


def _text_chunks(body: etree._Element) -> tuple[list[etree._Element], list[int], str]:
    """The tree's text in document order, squeezed: (owner element of each chunk, the end
    offset of each chunk, all chunks joined)."""
    owners: list[etree._Element] = []
    ends: list[int] = []
    parts: list[str] = []
    total = 0
    for event, el in etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            text, owner = el.text, el
        else:
            if el is body:
                break
            text, owner = el.tail, el.getparent()
        if text and (squeezed := squeeze(text)):
            total += len(squeezed)
            owners.append(owner)
            ends.append(total)
            parts.append(squeezed)
    return owners, ends, "".join(parts)


def _find_head(page: str, lines: list[str]) -> int | None:
    """The offset of the article's first character: where its first line is followed most
    closely by its second (a breadcrumb may repeat the heading a little earlier)."""
    for i in range(min(_TRIES, len(lines))):
        first = lines[i]
        follow = lines[i + 1] if i + 1 < len(lines) else ""
        hits: list[int] = []
        best: tuple[int, int] | None = None  # (gap, offset)
        pos = page.find(first)
        while pos != -1 and len(hits) < MAX_HITS:
            hits.append(pos)
            after = pos + len(first)
            found = page.find(follow, after, after + GAP + len(follow)) if follow else after
            if found != -1 and (best is None or found - after < best[0]):
                best = (found - after, pos)
            pos = page.find(first, pos + 1)
        if best is not None:
            return best[1]
        if len(hits) == 1:
            return hits[0]
    return None


def _find_tail(page: str, lines: list[str]) -> int | None:
    """The offset of the article's last character (as :func:`_find_head`, from the end)."""
    for i in range(min(_TRIES, len(lines))):
        last = lines[-1 - i]
        before = lines[-2 - i] if i + 1 < len(lines) else ""
        hits: list[int] = []
        best: tuple[int, int] | None = None
        pos = page.rfind(last)
        while pos != -1 and len(hits) < MAX_HITS:
            hits.append(pos)
            found = pos
            if before:
                found = page.rfind(before, max(0, pos - GAP - len(before)), pos)
                found = found + len(before) if found != -1 else -1
            if found != -1 and (best is None or pos - found < best[0]):
                best = (pos - found, pos)
            pos = page.rfind(last, 0, pos + len(last) - 1)
        if best is not None:
            return best[1] + len(last) - 1
        if len(hits) == 1:
            return hits[0] + len(last) - 1
    return None


def _block(el: etree._Element, body: etree._Element) -> etree._Element:
    """The block that holds ``el``: its nearest block ancestor, or the outermost table or
    ``<pre>`` around it."""
    block = whole = None
    node: etree._Element | None = el
    while node is not None and node is not body:
        if block is None and node.tag in BLOCKS:
            block = node
        if node.tag in WHOLE:
            whole = node
        node = node.getparent()
    return whole if whole is not None else block if block is not None else el


def _main_span(body: etree._Element, owners: list[etree._Element], ends: list[int]) -> slice:
    """Where the text of the page's one ``<main>`` (or ``role="main"``) lies in the squeezed
    page text; an empty slice when the page marks no main part, or more than one."""
    found = _MAIN(body)
    listed = found if isinstance(found, list) else []
    mains = [el for el in listed if isinstance(el, etree._Element)]
    if len(mains) != 1:
        return slice(0, 0)
    inside = {id(el) for el in mains[0].iter()}  # the proxies live as long as ``owners``
    chunks = [i for i, owner in enumerate(owners) if id(owner) in inside]
    if not chunks:
        return slice(0, 0)
    return slice(ends[chunks[0] - 1] if chunks[0] else 0, ends[chunks[-1]])


def _within_main(page: str, lines: list[str], main: slice) -> tuple[int, int] | None:
    """The article's first and last character found inside the page's main part alone, when
    the engine's lines found there hold most of its text: the lines it took from outside (a
    help pop-up, the site's title bar: resiliparse on mdBook's pages) are then its mistake."""
    text = page[main]
    if not text:
        return None
    # the engine's lines from its first to its last that <main> holds: a stray line sits at an
    # end (a pop-up before <main>, a footer after it); looking each line up in <main> cost the
    # largest pages a fifth more time (bench/README.md, "Main article: inside the page's <main>")
    lo, hi = 0, len(lines)
    while lo < hi and lines[lo] not in text:
        lo += 1
    while hi > lo and lines[hi - 1] not in text:
        hi -= 1
    # and among the first lines, those <main> holds (mdBook's print link sits between its
    # title bar and the article)
    inside = [line for line in lines[lo : lo + _TRIES] if line in text] + lines[lo + _TRIES : hi]
    # a first line that <main> holds only after the next one is the frame's, quoted later by
    # the article (the Rust Book's title bar, "The Rust Programming Language", in one chapter)
    while len(inside) > 1 and 0 <= text.find(inside[1]) < text.find(inside[0]):
        inside.pop(0)
    if sum(map(len, inside)) * 2 < sum(map(len, lines)):
        return None  # most of the choice is elsewhere: the markup's <main> is not the article
    head, tail = _find_head(text, inside), _find_tail(text, inside)
    if head is None or tail is None or tail < head:
        return None
    return main.start + head, main.start + tail


def locate_article(
    body: etree._Element, engine_text: str
) -> tuple[etree._Element, etree._Element] | None:
    """The first and last block of ``body`` that hold the engine's article text, or None when
    its first or last lines cannot be found in the page. On a page that marks its main part
    (HTML's ``<main>``, ``role="main"``), within it, unless most of the engine's text is
    elsewhere."""
    lines = engine_lines(engine_text)
    if not lines:
        return None
    owners, ends, page = _text_chunks(body)
    found = _within_main(page, lines, _main_span(body, owners, ends))
    head, tail = found if found else (_find_head(page, lines), _find_tail(page, lines))
    if head is None or tail is None or tail < head:
        return None
    first = owners[bisect_right(ends, head)]
    last = owners[min(bisect_right(ends, tail), len(owners) - 1)]
    return _block(first, body), _block(last, body)


def _path(ancestor: etree._Element, el: etree._Element) -> list[etree._Element]:
    """The elements from ``ancestor``'s child down to ``el`` ([] when ``el`` is ``ancestor``)."""
    path = []
    node: etree._Element | None = el
    while node is not None and node is not ancestor:
        path.append(node)
        node = node.getparent()
    return path[::-1]


def _drop_before(parent: etree._Element, child: etree._Element) -> None:
    parent.text = None
    for sibling in list(parent):
        if sibling is child:
            break
        parent.remove(sibling)


def _drop_after(parent: etree._Element, child: etree._Element) -> None:
    child.tail = None
    for sibling in list(child.itersiblings()):  # a list first: removing breaks the iterator
        parent.remove(sibling)


def _is_navigation(el: etree._Element) -> bool:
    """Marked as navigation: ``<nav>``, ``role="navigation"``, a ``nav*`` or ``breadcrumb*``
    class, a table of contents in a frame by its class or id (``tocframe``), or holding a table
    whose summary says so (DocBook's "Navigation header")."""
    if el.tag == "nav" or el.get("role") == "navigation":
        return True
    if any(w.startswith(("nav", "breadcrumb")) for w in (el.get("class") or "").lower().split()):
        return True
    if _CONTENTS_FRAME.search(f"{el.get('class') or ''} {el.get('id') or ''}".lower()) is not None:
        return True
    table = el if el.tag == "table" else el.find("table")
    return table is not None and "navigation" in (table.get("summary") or "").lower()


def drop_edge_navigation(body: etree._Element) -> None:
    """After the cut (and after :func:`~litecrawl.extract.unchosen.drop_unchosen_links`, which
    places the engine's lines in the page as the engine saw it): the navigation at the
    article's edges inside the blocks that hold them (LilyPond's ``<div id="main">`` opens and
    closes with a Prev/Up/Next table, which resiliparse takes), and at its end a footer
    (LilyPond's ``<div id="footer">``)."""
    _drop_edge_navigation(body, 0)
    _drop_edge_navigation(body, -1)


def _drop_edge_navigation(node: etree._Element, edge: int) -> None:
    """Remove the navigation at one edge (``0`` the first child, ``-1`` the last) of ``node``
    and of the container at that edge, down to where the edge is not a container, and at the
    last edge a footer; a block that is all navigation stays."""
    while node.tag in _CONTAINERS:
        # blocks with words only: an image or an empty list at the edge is no edge (Exim's
        # contents icon after its footer)
        children = [c for c in node if isinstance(c.tag, str) and _has_words(c)]
        if not children:
            return
        if len(children) > 1 and (
            _is_navigation(children[edge]) or (edge and _is_footer(children[edge]))
        ):
            drop_keeping_tail(children[edge])
            continue
        node = children[edge]


def _is_footer(el: etree._Element) -> bool:
    names = f"{el.get('class') or ''} {el.get('id') or ''}".lower()
    return el.tag == "footer" or _FOOTER.search(names) is not None


def _has_words(el: etree._Element) -> bool:
    return any(str(t).strip() for t in el.itertext())


def keep_between(body: etree._Element, first: etree._Element, last: etree._Element) -> None:
    """Cut ``body`` down to the children of ``first`` and ``last``'s nearest common ancestor
    from the one holding ``first`` to the one holding ``last``, keeping the elements around
    them (their classes still name code languages)."""
    chain = [last, *last.iterancestors()]  # held: ids of lxml proxies are stable while alive
    ancestors = {id(a) for a in chain}
    common = first
    while id(common) not in ancestors and common is not body:
        parent = common.getparent()
        if parent is None:
            break
        common = parent
    # Cut only among the children of the smallest element that holds both ends: an engine
    # often stops short of a section's last code block or table, never of its container.
    start, end = _path(common, first), _path(common, last)
    kept = list(common)
    lo = kept.index(start[0]) if start else 0
    hi = kept.index(end[0]) if end else len(kept) - 1
    # an engine may take a navigation bar next to the article for part of it (resiliparse
    # does, on DocBook's link tables): dropped at either edge when the markup says so
    while lo < hi and _is_navigation(kept[lo]):
        lo += 1
    while hi > lo and _is_navigation(kept[hi]):
        hi -= 1
    if start or lo > 0:
        _drop_before(common, kept[lo])
    if end or hi < len(kept) - 1:
        _drop_after(common, kept[hi])
    node = common
    while node is not body:  # the wrappers of the article: nothing else in them
        parent = node.getparent()
        if parent is None:
            break
        _drop_before(parent, node)
        _drop_after(parent, node)
        node = parent
