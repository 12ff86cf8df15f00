"""Plain-text helpers: whitespace, preview, language guess and keywords.

Everything here works on ``str`` and never raises.
"""

from __future__ import annotations

import re
from collections import Counter

from litecrawl.extract.stopwords import STOPWORDS, stopwords_for

__all__ = [
    "PREVIEW_CHARS",
    "collapse_whitespace",
    "detect_language",
    "keywords",
    "normalize_language_tag",
    "normalize_lines",
    "preview",
    "word_counts",
]

PREVIEW_CHARS = 500
KEYWORD_COUNT = 10

_WS = re.compile(r"\s+")
# a word: letters only (no digits, no underscore), with inner apostrophes ("don't", "l'homme")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_KEYWORD_MIN, _KEYWORD_MAX = 3, 50
_ELISION_MAX = 2  # French/Italian "l'", "d'", "qu'": the word is what follows
_LANG_TAG = re.compile(r"[a-z]{2,3}")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_HAN = re.compile(r"[\u4e00-\u9fff]")

_SAMPLE_CHARS = 20_000  # language detection looks at the start of the text only
_MIN_HITS = 3


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace becomes one space; leading/trailing whitespace goes."""
    return _WS.sub(" ", text).strip()


def normalize_lines(text: str) -> str:
    """Collapse spaces inside lines, strip each line and drop empty ones (newline-separated)."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first ``limit`` characters of ``text`` with whitespace collapsed."""
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


def word_counts(text: str) -> Counter[str]:
    """How often each lower-cased word (letters, inner apostrophes) occurs in ``text``."""
    return Counter(_WORD.findall(text.lower()))


def detect_language(text: str, counts: Counter[str] | None = None) -> str | None:
    """A cheap guess: CJK scripts by character class, else the stop-word list with most hits.

    Returns an ISO 639-1 code ("en", "de", "fr", "es", "ja", "ko", "zh") or None when unsure.
    ``counts`` may pass :func:`word_counts` of ``text`` when the caller already has it.
    """
    sample = text[:_SAMPLE_CHARS]
    if not sample:
        return None
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
        hits = sum(counts[w] for w in stop.intersection(counts))
        if hits > best_hits:
            best, best_hits = lang, hits
    if best_hits >= _MIN_HITS and best_hits * 10 >= total:
        return best
    return None


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
    stop = stopwords_for(language)
    counter: Counter[str] = Counter()
    # normalise the distinct forms only
    for word, n in (counts if counts is not None else word_counts(text)).items():
        if "'" in word or "’" in word:
            word = word.replace("’", "'")
            if word in stop:
                continue
            head, _, tail = word.partition("'")
            # "l'homme" -> "homme"; "john's" / "doesn't" -> "john" / "doesn"
            word = tail.replace("'", "") if len(head) <= _ELISION_MAX else head
        if _KEYWORD_MIN <= len(word) <= _KEYWORD_MAX and word not in stop:
            counter[word] += n
    return tuple(word for word, _ in counter.most_common(count))
