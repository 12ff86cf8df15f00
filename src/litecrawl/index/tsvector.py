"""A page's PostgreSQL ``tsvector``, built where the page is analyzed rather than in the database.

The PostgreSQL index stores, per resource, the title's words with weight A and the text's with
weight B, words split and folded as FTS5 splits them (:func:`litecrawl.index.query.words`), in
the ``'simple'`` configuration (no stemming, no stop words). Building that in the database
(``to_tsvector`` over ``litecrawl_words``: regular expressions, Unicode normalization, the
text-search parser) cost it ~4 ms of CPU per 22 KB page, so one database core served ~200
pages/s whatever the number of workers (bench/README.md, "PostgreSQL"). :func:`tsvector` builds
the same value in Python, so the database only parses and indexes it; queries name the same
folded words (``store/postgres/search.py``), so index and queries agree by construction.

It keeps PostgreSQL's limits as ``setweight(to_tsvector('simple', ...), 'A') ||
setweight(to_tsvector('simple', ...), 'B')`` applies them (tests/test_tsvector.py compares the
two on generated texts): words from the first :data:`MAX_CHARS` characters of each part; a word
of 2,048 bytes or more is left out (and takes no position); positions count from 1 and stop at
16,383; a word keeps at most 255 positions in each part and 256 in all; the text's positions
follow the title's last one.
"""

from __future__ import annotations

from litecrawl.index.query import words

__all__ = ["MAX_CHARS", "MAX_WORD_BYTES", "tsvector"]

MAX_CHARS = 200_000  # a tsvector holds 1 MB (store/postgres/migrations.py, "fts_bounded")
MAX_WORD_BYTES = 2048  # PostgreSQL's MAXSTRLEN: words this long are not indexed
_LAST = 16383  # MAXENTRYPOS - 1: the last position; later words all stand there
_PART_POSITIONS = 255  # MAXNUMPOS - 1: positions a word keeps from one to_tsvector
_ALL_POSITIONS = 256  # MAXNUMPOS: positions a word keeps after ||


def _positions(text: str) -> dict[str, list[int]]:
    """Each word of ``text`` with its positions, as ``to_tsvector('simple', ...)`` keeps them."""
    found: dict[str, list[int]] = {}
    folded = words(text[:MAX_CHARS])
    if max(map(len, folded), default=0) * 4 >= MAX_WORD_BYTES:  # a word may be too long (rare)
        folded = [word for word in folded if len(word.encode()) < MAX_WORD_BYTES]
    if len(folded) >= _LAST:  # the last positions are one (rare): word by word
        return _bounded(folded)
    for at, word in enumerate(folded, 1):
        seen = found.get(word)
        if seen is None:
            found[word] = [at]
        else:
            seen.append(at)
    for seen in found.values():
        if len(seen) > _PART_POSITIONS:
            del seen[_PART_POSITIONS:]
    return found


def _bounded(folded: list[str]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for position, word in enumerate(folded, 1):
        at = position if position < _LAST else _LAST
        seen = found.get(word)
        if seen is None:
            found[word] = [at]
        elif len(seen) < _PART_POSITIONS and seen[-1] != _LAST:
            seen.append(at)
    return found


def tsvector(title: str, text: str) -> str:
    """``setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', text),
    'B')`` over the folded words of each, as ``tsvector`` input text."""
    head = _positions(title)
    body = _positions(text)
    shift = max((seen[-1] for seen in head.values()), default=0)
    parts: list[str] = []
    for word, seen in head.items():
        marks = "A,".join(map(str, seen)) + "A"
        after = body.pop(word, None)
        if after is not None and seen[-1] != _LAST:
            more = _shifted(after, shift, _ALL_POSITIONS - len(seen))
            if more:
                marks += "," + more
        parts.append(f"{_quoted(word)}:{marks}")
    for word, after in body.items():
        parts.append(f"{_quoted(word)}:{_shifted(after, shift, _ALL_POSITIONS)}")
    return " ".join(parts)


def _shifted(seen: list[int], shift: int, room: int) -> str:
    """The text's positions of a word after the title's, as ``||`` adds them: at most
    ``room`` of them, none after the first at the end of the scale."""
    if shift:
        seen = [at + shift for at in seen]
    if len(seen) > room:
        seen = seen[:room]
    if seen and seen[-1] >= _LAST:
        end = next(i for i, at in enumerate(seen) if at >= _LAST)
        seen = [*seen[:end], _LAST]
    return "B,".join(map(str, seen)) + "B" if seen else ""


def _quoted(word: str) -> str:
    if "'" in word or "\\" in word:  # folded words are letters and digits; kept safe anyway
        word = word.replace("\\", "\\\\").replace("'", "''")
    return f"'{word}'"
