"""A page's PostgreSQL ``tsvector``, built where the page is analyzed rather than in the database.

The PostgreSQL index stores, per resource, the title's words with weight A and the text's with
weight B, words split and folded as FTS5 splits them (:func:`litecrawl.index.words.words`), in
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

import sys
from array import array

from litecrawl.index.words import words

__all__ = ["MAX_CHARS", "MAX_WORD_BYTES", "tsvector", "tsvector_binary"]

MAX_CHARS = 200_000  # a tsvector holds 1 MB (store/postgres/migrations.py, "fts_bounded")
MAX_WORD_BYTES = 2048  # PostgreSQL's MAXSTRLEN: words this long are not indexed
_LAST = 16383  # MAXENTRYPOS - 1: the last position; later words all stand there
_PART_POSITIONS = 255  # MAXNUMPOS - 1: positions a word keeps from one to_tsvector
_ALL_POSITIONS = 256  # MAXNUMPOS: positions a word keeps after ||
_A, _B = 3 << 14, 2 << 14  # the weights in a position's two high bits
_POSITION = (1 << 14) - 1
_WEIGHTS = ("", "C", "B", "A")
_MAX_SIZE = (1 << 20) - 1  # MAXSTRPOS: a tsvector's words and positions, in bytes
_SWAP = sys.byteorder == "little"  # positions go big endian


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
    return " ".join(
        f"{_quoted(word)}:" + ",".join(f"{m & _POSITION}{_WEIGHTS[m >> 14]}" for m in marks)
        for word, marks in _entries(title, text).items()
    )


def tsvector_binary(title: str, text: str) -> bytes | None:
    """:func:`tsvector` in ``tsvector``'s binary format (``tsvectorrecv``: the number of words,
    then each word's UTF-8 bytes, a zero byte, its number of positions and the positions, big
    endian), words in the server's order so it need not sort them; None when the vector is over
    PostgreSQL's 1 MB (the database then says so itself, as before)."""
    keyed = sorted((word.encode(), marks) for word, marks in _entries(title, text).items())
    size = 0
    for key, marks in keyed:  # as tsvectorin counts it
        size = ((size + len(key) + 1) & ~1) + 2 + 2 * len(marks)
    if size > _MAX_SIZE:
        return None
    out = [len(keyed).to_bytes(4, "big")]
    for key, marks in keyed:
        positions = array("H", marks)
        if _SWAP:
            positions.byteswap()
        out += (key, b"\0", len(marks).to_bytes(2, "big"), positions.tobytes())
    return b"".join(out)


def _entries(title: str, text: str) -> dict[str, list[int]]:
    """Each word with its positions and weights (weight << 14 | position), as ``||`` leaves them:
    the title's (A) first, then the text's (B) after the title's last."""
    head = _positions(title)
    body = _positions(text)
    shift = max((seen[-1] for seen in head.values()), default=0)
    out: dict[str, list[int]] = {}
    for word, seen in head.items():
        marks = [at + _A for at in seen]
        after = body.pop(word, None)
        if after is not None and seen[-1] != _LAST:
            marks += _shifted(after, shift, _ALL_POSITIONS - len(seen))
        out[word] = marks
    for word, after in body.items():
        out[word] = _shifted(after, shift, _ALL_POSITIONS)
    return out


def _shifted(seen: list[int], shift: int, room: int) -> list[int]:
    """The text's positions of a word after the title's, as ``||`` adds them: at most
    ``room`` of them, none after the first at the end of the scale."""
    if len(seen) > room:
        seen = seen[:room]
    if seen[-1] + shift >= _LAST:
        moved = [min(at + shift, _LAST) for at in seen]
        seen, shift = moved[: moved.index(_LAST) + 1], 0
    return [at + shift + _B for at in seen]


def _quoted(word: str) -> str:
    if "'" in word or "\\" in word:  # folded words are letters and digits; kept safe anyway
        word = word.replace("\\", "\\\\").replace("'", "''")
    return f"'{word}'"
