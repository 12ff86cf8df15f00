"""Plain-text helpers: whitespace, preview, language guess and keywords.

Everything here works on ``str`` and never raises. The hot paths (:func:`normalize_lines`,
:func:`word_counts`, :func:`keywords`) run on every crawled page, so they do their per-character and
per-token work in C (``str.split``, ``bytes.translate``, ``Counter``, ``sorted``) and keep Python
loops to the few distinct words that need them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

from litecrawl.extract.stopwords import STOPWORDS, stopwords_for

__all__ = [
    "PREVIEW_CHARS",
    "collapse_whitespace",
    "detect_language",
    "keywords",
    "normalize_language_tag",
    "normalize_lines",
    "preview",
    "spaced_words",
    "word_counts",
    "words",
]

PREVIEW_CHARS = 500
KEYWORD_COUNT = 10

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
_KEYWORD_MIN, _KEYWORD_MAX = 3, 50
_ELISION_MAX = 2  # French/Italian "l'", "d'", "qu'": the word is what follows
_LANG_TAG = re.compile(r"[a-z]{2,3}")
_CJK = re.compile(r"[\u3040-\u30ff\uac00-\ud7af\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_HAN = re.compile(r"[\u4e00-\u9fff]")

_SAMPLE_CHARS = 20_000  # language detection looks at the start of the text only
_MIN_HITS = 3


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace becomes one space; leading/trailing whitespace goes."""
    return " ".join(text.split())


def normalize_lines(text: str) -> str:
    """Collapse spaces inside lines, strip each line and drop empty ones (newline-separated)."""
    lines = list(filter(None, map(str.strip, text.splitlines())))
    out = "\n".join(lines)
    # A printable line has no whitespace but " " (all other whitespace is category Z* or Cc): the
    # usual case, one C scan. Lines with tabs, no-break spaces, ... are collapsed one by one.
    if not out.replace("\n", " ").isprintable():
        out = "\n".join([ln if ln.isprintable() else " ".join(ln.split()) for ln in lines])
    # what is left are runs of " " inside (stripped) lines
    if "  " in out:
        out = _SPACES.sub(" ", out)
    return out


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


# The last text's words: keywords and then the simhash of the same page ask for them in turn.
@lru_cache(maxsize=1)
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


def word_counts(text: str) -> Counter[str]:
    """How often each of :func:`words` occurs in ``text``; keys in order of first appearance."""
    return Counter(words(text))


def detect_language(text: str, counts: Counter[str] | None = None) -> str | None:
    """A cheap guess: CJK scripts by character class, else the stop-word list with most hits.

    Returns an ISO 639-1 code ("en", "de", "fr", "es", "ja", "ko", "zh") or None when unsure.
    ``counts`` may pass :func:`word_counts` of ``text`` when the caller already has it.
    """
    sample = text[:_SAMPLE_CHARS]
    if not sample:
        return None
    if not sample.isascii() and _CJK.search(sample):
        kana = len(_KANA.findall(sample))
        hangul = len(_HANGUL.findall(sample))
        han = len(_HAN.findall(sample))
        cjk = kana + hangul + han
        if cjk >= 20 and cjk * 5 >= len(sample):  # a fifth of the characters or more
            if kana * 10 >= cjk:
                return "ja"
            if hangul >= han:
                return "ko"
            return "zh"
    if counts is None or len(text) > _SAMPLE_CHARS:
        counts = word_counts(sample)
    total = sum(counts.values())
    if not total:
        return None
    best, best_hits = None, 0
    for lang, stop in STOPWORDS.items():
        # keys() & frozenset walks the (short) stop list, not the page's vocabulary
        hits = sum(map(counts.__getitem__, counts.keys() & stop))
        if hits > best_hits:
            best, best_hits = lang, hits
    if best_hits >= _MIN_HITS and best_hits * 10 >= total:
        return best
    return None


def _merge_elisions(
    counts: Counter[str], stop: frozenset[str]
) -> tuple[Mapping[str, int], dict[str, int] | None]:
    """Fold the words with apostrophes into their keyword form.

    ``"l'homme"`` counts for ``"homme"``, ``"john's"`` / ``"doesn't"`` for ``"john"`` / ``"doesn"``;
    stop words (``"don't"``) and forms that end up too short/long are dropped. Returns the merged
    counts and, when a merged word now appears earlier than before (or is new), each word's
    position of first appearance (None when ``counts``' own order still holds).
    """
    elided = [w for w in counts if "'" in w or "’" in w]
    merged = dict(counts)
    first: dict[str, int] = dict(zip(counts, range(len(counts)), strict=True))
    moved = False
    for word in elided:
        n = merged.pop(word)
        norm = word.replace("’", "'")
        if norm in stop:
            continue
        head, _, tail = norm.partition("'")
        norm = tail.replace("'", "") if len(head) <= _ELISION_MAX else head
        if not _KEYWORD_MIN <= len(norm) <= _KEYWORD_MAX or norm in stop:
            continue
        if norm in merged:
            merged[norm] += n
            if first[word] < first[norm]:
                first[norm] = first[word]
                moved = True
        else:
            merged[norm] = n
            first[norm] = first[word]
            moved = True
    return merged, first if moved else None


def keywords(
    text: str,
    language: str | None,
    count: int = KEYWORD_COUNT,
    counts: Counter[str] | None = None,
) -> tuple[str, ...]:
    """The ``count`` most frequent lower-cased words of 3+ letters that are not stop words.

    Ties keep the order of first appearance, so the result is deterministic. ``counts`` may pass
    :func:`word_counts` of ``text`` when the caller already has it.
    """
    if count <= 0:
        return ()
    stop = stopwords_for(language)
    if counts is None:
        counts = word_counts(text)
    merged: Mapping[str, int] = counts
    first = None
    vocabulary = "".join(counts)  # one C-level scan tells whether any word has an apostrophe
    if "'" in vocabulary or "’" in vocabulary:
        merged, first = _merge_elisions(counts, stop)
    # first appearance order: the dict's own, unless an elision moved a word forward; then a
    # stable sort by frequency (in C, with a C-level key) keeps it among equal counts
    order = sorted(merged, key=first.__getitem__) if first is not None else merged
    found: list[str] = []
    for word in sorted(order, key=merged.__getitem__, reverse=True):
        if _KEYWORD_MIN <= len(word) <= _KEYWORD_MAX and word not in stop:
            found.append(word)
            if len(found) == count:
                break
    return tuple(found)
