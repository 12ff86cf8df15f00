"""Snippets as FTS5's ``snippet()`` makes them, for a backend that is not FTS5.

The window of ``size`` words with the most distinct phrases of the query (1000 points each,
1 for each repeat), preferring one that starts a sentence (after ``.`` or ``:`` and a space;
100 points, 120 at the start of the text); each match wrapped in the marks (overlapping
matches as one), the ellipsis where the window cuts the text. Words are
:func:`litecrawl.index.words.tokens`, as the index splits them.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

from litecrawl.index.query import Phrase
from litecrawl.index.words import tokens

__all__ = ["snippet"]

Word = tuple[int, int, str]  # start, end, folded word
Match = tuple[int, int, int]  # first word, number of words, phrase
_SENTENCE_END = re.compile(r"[.:][ \t\n\r]+")  # FTS5's sentence finder: the next word starts one


def snippet(
    text: str,
    phrases: Sequence[Phrase],
    *,
    size: int = 16,
    open_mark: str = "[",
    close_mark: str = "]",
    ellipsis: str = "…",
) -> str:
    found = tokens(text)
    matches = _matches(found, phrases)
    start = _best_start(text, found, matches, max(1, size))
    return _render(text, found, matches, start, max(1, size), (open_mark, close_mark), ellipsis)


def _matches(found: Sequence[Word], phrases: Sequence[Phrase]) -> list[Match]:
    """Every match of every phrase, in the order of the text."""
    folded = [word for _, _, word in found]
    out: list[Match] = []
    for index, phrase in enumerate(phrases):
        head, rest = phrase.words[0], list(zip(phrase.words, phrase.prefix, strict=True))[1:]
        if phrase.prefix[0]:
            starts = [i for i, word in enumerate(folded) if word.startswith(head)]
        else:
            starts = [i for i, word in enumerate(folded) if word == head]
        for at in starts:
            if at + len(phrase.words) <= len(folded) and all(
                folded[at + i].startswith(w) if prefix else folded[at + i] == w
                for i, (w, prefix) in enumerate(rest, start=1)
            ):
                out.append((at, len(phrase.words), index))
    return sorted(out)


def _best_start(text: str, found: Sequence[Word], matches: Sequence[Match], size: int) -> int:
    after_stop = {m.end() for m in _SENTENCE_END.finditer(text)}
    firsts = [i for i, (start, _, _) in enumerate(found) if i == 0 or start in after_stop]
    positions = [at for at, _, _ in matches]
    best_score, best_start = 0, 0
    for at in positions:
        score, adjusted = _score(matches, positions, at, size, len(found))
        if score > best_score:
            best_score, best_start = score, adjusted
        if len(found) > size:
            first = firsts[bisect_right(firsts, at) - 1]
            if first < at:
                score = _score(matches, positions, first, size, len(found))[0]
                score += 120 if first == 0 else 100
                if score > best_score:
                    best_score, best_start = score, first
    return best_start


def _score(
    matches: Sequence[Match], positions: Sequence[int], start: int, size: int, total: int
) -> tuple[int, int]:
    """The window's score, and where a window centred on its matches would start."""
    seen: set[int] = set()
    score, first, last = 0, -1, 0
    for i in range(bisect_left(positions, start), bisect_left(positions, start + size)):
        at, length, index = matches[i]
        score += 1 if index in seen else 1000
        seen.add(index)
        if first < 0:
            first = at
        last = at + length
    adjusted = first - int((size - (last - first)) / 2)  # C's division, towards zero
    adjusted = min(adjusted, total - size)
    return score, max(adjusted, 0)


def _render(
    text: str,
    found: Sequence[Word],
    matches: Sequence[Match],
    start: int,
    size: int,
    marks: tuple[str, str],
    ellipsis: str,
) -> str:
    if not found:
        return text
    end = min(start + size, len(found)) - 1  # the window's last word
    spans = _merged(matches, start, end)
    out = [ellipsis if start > 0 else ""]
    offset = 0 if start == 0 else found[start][0]
    for first, last in spans:
        begin = max(offset, found[first][0])  # words folded from one token share its place
        if found[last][1] <= begin:
            continue
        out += [text[offset:begin], marks[0], text[begin : found[last][1]], marks[1]]
        offset = found[last][1]
    if end == len(found) - 1:
        out.append(text[offset:])
    else:
        out += [text[offset : found[end][1]], ellipsis]
    return "".join(out)


def _merged(matches: Sequence[Match], start: int, end: int) -> list[tuple[int, int]]:
    """The marked runs of words (first, last) inside the window: overlapping matches as one."""
    spans: list[tuple[int, int]] = []
    for at, length, _ in sorted(matches):
        first, last = max(at, start), min(at + length - 1, end)
        if first > last:
            continue
        if spans and first <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], last))
        else:
            spans.append((first, last))
    return spans
