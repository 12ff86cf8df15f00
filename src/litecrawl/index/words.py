"""Words split and folded as the index splits them: FTS5's ``unicode61 remove_diacritics 2``.

Every run of letters and digits is a word, lower-cased, diacritics removed from Latin letters
(``Zürich`` -> ``zurich``; ``й`` or ``ά`` kept), everything else separates words
(``www.example.com`` is three words, ``3.11`` two, ``snake_case`` two). The PostgreSQL index
folds its text with the same rule (``litecrawl_words`` in ``store/postgres/migrations.py``),
its ``tsvector`` is built from :func:`words` (:mod:`litecrawl.index.tsvector`), and snippets
find their matches with :func:`tokens`.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["tokens", "words"]

# a run of word characters, with the combining marks a decomposed letter carries ("_" and
# other characters that are not letters or decimal digits are taken out after)
_WORD = re.compile(r"[\w\u0300-\u036f]+")
_ASCII = re.compile(r"[A-Za-z0-9]+")
_LATIN_MARKS = re.compile(r"([A-Za-z])[\u0300-\u036f]+")
_DECOMPOSED = re.compile("[\u00c0-\u024f\u1e00-\u1eff\u0300-\u036f]")  # Latin, marks
# a word character beyond ASCII, letter or digit, or a combining mark: a text without one has
# only ASCII words (most pages: their characters beyond ASCII are quotes and dashes)
_BEYOND_ASCII = re.compile(r"[^\W\x00-\x7f]")
_MARK = re.compile("[\u0300-\u036f]")
# ASCII letters and digits kept, every other ASCII character a space: str.translate's fast
# path, then str.split (half the time of the regular expression on an ASCII page)
_SPACED = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})


def tokens(text: str) -> list[tuple[int, int, str]]:
    """The words of ``text`` folded (see the module doc), with their start and end offsets."""
    lowered = text.lower()
    cased = len(lowered) == len(text)  # else a letter became two: offsets from the text
    found = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(lowered if cased else text)]
    if cased and lowered.isascii() and "_" not in lowered:
        return found
    out: list[tuple[int, int, str]] = []
    for start, end, word in found:
        if not word.isascii():
            out += [(start, end, part) for part in _folded(word)]
        elif cased and "_" not in word:
            out.append((start, end, word))
        else:
            out += [
                (start + m.start(), start + m.end(), m.group().lower())
                for m in _ASCII.finditer(word)
            ]
    return out


def _folded(raw: str) -> list[str]:
    """A non-ASCII run of word characters as the index folds it: one word or more."""
    folded = raw
    if _DECOMPOSED.search(raw):  # as the index: only such words are decomposed
        decomposed = _LATIN_MARKS.sub(r"\1", unicodedata.normalize("NFD", raw))
        folded = unicodedata.normalize("NFC", decomposed)
    # letters and decimal digits only: "_", marks left on other letters, ², Ⅻ separate words
    return "".join(c if _is_word_char(c) else " " for c in folded).lower().split()


def words(text: str) -> list[str]:
    """The folded words of ``text`` (:func:`tokens` without the offsets, which cost twice
    the time on a page: the PostgreSQL index folds every page's text in its worker)."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter became two: as tokens() reads it
        return [word for _, _, word in tokens(text)]
    if lowered.isascii():
        return lowered.translate(_SPACED).split()
    if not _BEYOND_ASCII.search(lowered) and not _MARK.search(lowered):
        # the others separate words as ASCII's punctuation does: each one a "?"
        return lowered.encode("ascii", "replace").decode("ascii").translate(_SPACED).split()
    out: list[str] = []
    for word in _WORD.findall(lowered):
        if not word.isascii():
            out += _folded(word)
        elif "_" in word:
            out += _ASCII.findall(word)
        else:
            out.append(word)
    return out


def _is_word_char(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] == "L" or category == "Nd"
