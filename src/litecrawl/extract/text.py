"""Plain-text helpers: whitespace, preview, language tags and the words of a text.

Everything here works on ``str`` and never raises. The hot paths (:func:`normalize_lines`,
:func:`spaced_words`) run on every crawled page, so they do their per-character work in C
(``str.split``, ``bytes.translate``) and keep Python loops to the few distinct characters that need
them. Counting words (keywords, language) is :mod:`litecrawl.extract.vocabulary`'s job.
"""

from __future__ import annotations

import re

__all__ = [
    "PREVIEW_CHARS",
    "collapse_whitespace",
    "non_ascii",
    "normalize_language_tag",
    "normalize_lines",
    "preview",
    "spaced_words",
    "words",
]

PREVIEW_CHARS = 500

# A word: letters only (no digits, no underscore), with inner apostrophes ("don't", "l'homme").
# words() yields exactly this regex's matches without running it over the whole text.
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# ASCII bytes: "A"-"Z" -> lower case, "a"-"z" and "'" kept, everything else -> space. Bytes >= 0x80
# (UTF-8 sequences of non-ASCII characters) are kept and handled one distinct character at a time.
_ASCII_GAPS = bytes(
    b
    if b >= 0x80 or b == ord("'") or ord("a") <= b <= ord("z")
    else b + 32
    if ord("A") <= b <= ord("Z")
    else ord(" ")
    for b in range(256)
)
_ASCII_BYTES = bytes(range(0x80))
_WORD_CHAR = re.compile(r"[^\W\d_]|['’]")  # what may stay inside a word
_MAX_FOREIGN_CHARS = 64  # distinct non-ASCII characters worth one str.replace each
_FINAL_SIGMA = "\u03a3"  # the one character whose str.lower() depends on its neighbours
# an apostrophe that does not sit between two letters ("'quoted'", "x''y", "1'a"); one pattern per
# apostrophe, as a pattern starting with a literal is scanned for much faster than a class
_LOOSE_APOSTROPHES = tuple(
    (a, re.compile(rf"{a}(?:(?!\w)|(?<!\w{a}))")) for a in ("'", "\N{RIGHT SINGLE QUOTATION MARK}")
)
_SPACES = re.compile("  +")
# the ASCII characters str.isprintable() rejects, but the line break
_ASCII_CONTROL = bytes(b for b in range(0x80) if (b < 0x20 and b != ord("\n")) or b == 0x7F)
_LANG_TAG = re.compile(r"[a-z]{2,3}")


def non_ascii(text: str) -> str:
    """The non-ASCII characters of ``text``, in order (a script test need not scan the rest)."""
    data = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES)
    return data.decode("utf-8", "surrogatepass")


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace becomes one space; leading/trailing whitespace goes."""
    return " ".join(text.split())


def normalize_lines(text: str) -> str:
    """Collapse spaces inside lines, strip each line and drop empty ones (newline-separated)."""
    lines = list(filter(None, map(str.strip, text.splitlines())))
    out = "\n".join(lines)
    # A printable line has no whitespace but " " (all other whitespace is category Z* or Cc): the
    # usual case, one C scan. Lines with tabs, no-break spaces, ... are collapsed one by one.
    if not _printable_lines(out):
        out = "\n".join([ln if ln.isprintable() else " ".join(ln.split()) for ln in lines])
    # what is left are runs of " " inside (stripped) lines
    if "  " in out:
        out = _SPACES.sub(" ", out)
    return out


def _printable_lines(text: str) -> bool:
    """``text.replace("\\n", " ").isprintable()``. ASCII text (most pages) is checked for its
    control characters by one ``bytes.translate``, 4x faster than ``isprintable``'s lookup of
    every character's category (bench/README.md, issue 29)."""
    if text.isascii():  # O(1) in CPython
        return len(text.encode("ascii").translate(None, _ASCII_CONTROL)) == len(text)
    return text.replace("\n", " ").isprintable()


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first ``limit`` characters of ``text`` with whitespace collapsed."""
    # already collapsed text (single spaces and newlines, e.g. from normalize_lines): no split
    head = text[: limit + 1].replace("\n", " ")
    if head.isprintable() and "  " not in head and not head.startswith(" "):
        return head[:limit].rstrip()
    # collapsing only shrinks text, so a bounded window avoids scanning huge documents
    window = limit * 4
    out = collapse_whitespace(text[:window])
    while len(out) < limit and window < len(text):
        window *= 4
        out = collapse_whitespace(text[:window])
    return out[:limit].rstrip()


def normalize_language_tag(tag: str | None) -> str | None:
    """``"en-US"`` -> ``"en"``; None for anything that is not a plausible language tag."""
    if not tag:
        return None
    primary = tag.strip().replace("_", "-").split("-", 1)[0].lower()
    if _LANG_TAG.fullmatch(primary) and primary not in ("und", "mul", "zxx"):
        return primary
    return None


def _foreign_word_chars(chars: set[str]) -> dict[str, str] | None:
    """For each non-ASCII character: what it becomes in lower-cased words (" " if no letter).

    None when ``str.lower`` cannot be applied character by character (a capital sigma).
    """
    if _FINAL_SIGMA in chars:
        return None
    table = {}
    for char in chars:
        lower = char.lower()  # may be two characters ("İ" -> "i" + U+0307, not a letter)
        new = "".join([c if _WORD_CHAR.match(c) else " " for c in lower])
        if new != char:
            table[char] = new
    return table


def spaced_words(text: str) -> str:
    """:func:`words` joined by single or repeated ASCII spaces (nothing else between them).

    Lower-cases every character or, when it cannot be part of a word, makes it a space: ASCII
    characters in one ``bytes.translate``; the few distinct non-ASCII ones of a Western page get one
    ``str.replace`` each. Text made mostly of non-ASCII characters (CJK, Cyrillic, ...) keeps the
    regex, which is fast there (few, long matches).
    """
    data = text.encode("utf-8", "surrogatepass")
    lowered = data.translate(_ASCII_GAPS).decode("utf-8", "surrogatepass")
    if not lowered.isascii():
        foreign = data.translate(None, _ASCII_BYTES)  # whole UTF-8 sequences stay whole
        table = None
        if len(foreign) * 4 <= len(data):
            chars = set(foreign.decode("utf-8", "surrogatepass"))
            if len(chars) <= _MAX_FOREIGN_CHARS:
                table = _foreign_word_chars(chars)
        if table is None:
            return " ".join(_WORD.findall(text.lower()))
        # lower() is idempotent, so a replacement never brings in a character still to replace
        for char, new in table.items():
            lowered = lowered.replace(char, new)
    for apostrophe, loose in _LOOSE_APOSTROPHES:
        if apostrophe in lowered:
            lowered = loose.sub(" ", lowered)
    return lowered


def words(text: str) -> list[str]:
    """The lower-cased words (letters, inner apostrophes) of ``text``, in order.

    Equal to ``_WORD.findall(text.lower())`` without a regex match per word (~0.5 µs each); see
    :func:`spaced_words`.
    """
    return spaced_words(text).split()
