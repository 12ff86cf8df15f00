"""A page's language when its markup does not name one: CLD2 (pycld2) on the page's text.

``<html lang>`` (or ``xml:lang``, or a Content-Language meta) wins when the page has one; this is
for the pages that do not (a DocBook manual's translations, plain text). CLD2 knows ~80
languages by their words and ~160 by script, takes mixed text (a half-translated page is the
language most of its text is in), and says when it is unsure: then the page has no language
rather than a wrong one (docs/search.md, "Language").
"""

from __future__ import annotations

import re

import pycld2

__all__ = ["detect_language"]

# The start of the text is enough: on the Debian handbook's pages in 26 languages, 16,000
# characters were as right as whole texts (2,785 and 2,783 of 2,833), in 0.26 ms a page against
# 0.30 (bench/README.md, "Language: CLD2 for pages that do not name theirs").
_SAMPLE_CHARS = 16_000
# CLD2 refuses control characters its UTF-8 check does not take (C1 controls such as U+0085)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# CLD2 still answers with ISO 639's withdrawn codes for these, and "no" for Bokmål (Nynorsk is "nn")
_CURRENT_CODE = {"iw": "he", "jw": "jv", "in": "id", "ji": "yi", "mo": "ro", "no": "nb"}


def detect_language(text: str) -> str | None:
    """The ISO 639 code of the language most of ``text`` is in ("en", "pt", "el", "zh"...), or
    None when CLD2 is unsure (short or mixed text with no clear winner) or finds only a script."""
    sample = text[:_SAMPLE_CHARS]
    if not sample or sample.isspace():
        return None
    try:
        reliable, _, found = pycld2.detect(sample.encode("utf-8", "replace"))
    except pycld2.error:
        try:
            reliable, _, found = pycld2.detect(_CONTROL.sub(" ", sample).encode("utf-8", "replace"))
        except pycld2.error:
            return None
    code: str = found[0][1]
    if not reliable or code == "un" or code.startswith("xx-"):
        return None
    code = code.split("-")[0]  # zh-Hant, sr-ME
    return _CURRENT_CODE.get(code, code)
