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
from collections import deque
from functools import cache
from itertools import accumulate, chain, compress, count, repeat
from operator import add, gt, ne, sub

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
# a word's zero byte and number of positions, for each number a word may keep
_COUNTS = [b"\0" + n.to_bytes(2, "big") for n in range(_ALL_POSITIONS + 1)]


def _positions(text: str) -> dict[str, list[int]]:
    """Each word of ``text`` with its positions, as ``to_tsvector('simple', ...)`` keeps them."""
    found: dict[str, list[int]] = {}
    folded = _kept(words(text[:MAX_CHARS]))
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
    PostgreSQL's 1 MB (the database then says so itself, as before).

    Every page a crawl into PostgreSQL analyzes comes here, so it is built in passes that each
    run in C, with no Python statement per word (0.40x the word-by-word way's instructions on a
    kit page, 0.67x on Python's documentation: bench/README.md, "Issue 29: PostgreSQL (session
    10)"): the title's and the text's words in one list; its indices sorted by word (a stable
    sort: each word's positions in order, one run of the sorted list); the first of each run
    takes the word's bytes and its number of positions, every index its position's two bytes;
    all joined once. A title of more than 255 words (a word of it might keep fewer positions
    than it has) or a word that may be too long goes word by word (:func:`_binary`), as
    tests/test_tsvector.py compares them."""
    head = _kept(words(title[:MAX_CHARS]))
    if len(head) > _PART_POSITIONS:
        return _binary(title, text)
    every = head + words(text[:MAX_CHARS])
    if len(every) >= _LAST:  # the later words all stand on the last position, each word once
        every[_LAST - 1 :] = dict.fromkeys(every[_LAST - 1 :])
    size, titled = len(every), len(head)
    a, b = _positions_bytes()
    at = a[1 : titled + 1] + b[titled + 1 : min(size, _LAST - 1) + 1]  # each index's position
    at += b[_LAST:] * (size - len(at))
    order = sorted(range(size), key=every.__getitem__)
    ordered = list(map(every.__getitem__, order))
    firsts = list(map(ne, ordered, chain((None,), ordered)))  # where each word's run starts
    starts = list(compress(count(), firsts))
    keyed = list(compress(ordered, firsts))  # code point order: the UTF-8 bytes', the server's
    if max(map(len, keyed), default=0) * 4 >= MAX_WORD_BYTES:  # a word may be too long (rare)
        return _binary(title, text)
    numbers = list(map(sub, [*starts[1:], size], starts))
    pieces = [b""] * size
    positions = list(map(at.__getitem__, order))
    if max(numbers, default=0) > _PART_POSITIONS:  # a word keeps 255 from a part, 256 in all
        _cut(pieces, positions, starts, numbers, keyed, set(head))
    heads = list(map(add, map(str.encode, keyed), map(_COUNTS.__getitem__, numbers)))
    most = sum(map(len, heads)) + len(heads) + 2 * len(positions)  # a word's padding at most
    if most > _MAX_SIZE and _size([piece[:-3] for piece in heads], numbers) > _MAX_SIZE:
        return None
    deque(map(pieces.__setitem__, starts, heads), 0)  # each word's bytes before its run
    return len(heads).to_bytes(4, "big") + b"".join(
        chain.from_iterable(zip(pieces, positions, strict=True))
    )


def _cut(
    pieces: list[bytes],
    positions: list[bytes],
    starts: list[int],
    numbers: list[int],
    keyed: list[str],
    titled: set[str],
) -> None:
    """Each word's run cut to the positions it keeps (255 from the text, 256 with the title's,
    whose 255 words at most stand first), ``numbers`` and ``starts`` changed to match."""
    cuts = [0] * len(numbers)
    for i in reversed(list(compress(count(), map(gt, numbers, repeat(_PART_POSITIONS))))):
        kept = _ALL_POSITIONS if keyed[i] in titled else _PART_POSITIONS
        if numbers[i] > kept:  # from the end, so the earlier runs stay where they are
            del pieces[starts[i] + kept : starts[i] + numbers[i]]
            del positions[starts[i] + kept : starts[i] + numbers[i]]
            cuts[i], numbers[i] = numbers[i] - kept, kept
    starts[:] = map(sub, starts, accumulate(chain((0,), cuts)))


@cache
def _positions_bytes() -> tuple[list[bytes], list[bytes]]:
    """Each position's two bytes with the title's weight and with the text's, made once."""
    return (
        [(_A + at).to_bytes(2, "big") for at in range(_PART_POSITIONS + 1)],
        [(_B + at).to_bytes(2, "big") for at in range(_LAST + 1)],
    )


def _kept(folded: list[str]) -> list[str]:
    """The words PostgreSQL indexes: each under 2,048 bytes."""
    if max(map(len, folded), default=0) * 4 >= MAX_WORD_BYTES:  # a word may be too long (rare)
        return [word for word in folded if len(word.encode()) < MAX_WORD_BYTES]
    return folded


def _size(keys: list[bytes], kept: list[int]) -> int:
    """The vector's words and positions in bytes, as ``tsvectorin`` counts them."""
    size = 0
    for key, positions in zip(keys, kept, strict=True):
        size = ((size + len(key) + 1) & ~1) + 2 + 2 * positions
    return size


def _binary(title: str, text: str) -> bytes | None:
    """:func:`tsvector_binary` word by word, from :func:`_entries`."""
    keyed = sorted((word.encode(), marks) for word, marks in _entries(title, text).items())
    if _size([key for key, _ in keyed], [len(marks) for _, marks in keyed]) > _MAX_SIZE:
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
