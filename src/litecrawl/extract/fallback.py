"""A regex tag-stripper for documents lxml cannot represent (absurd nesting, empty trees).

Same methods as :class:`litecrawl.extract.dom.LxmlDoc`. Only type selectors (``nav``, ``footer``)
of ``extra_remove`` can be honoured here; class/id selectors need a tree and are skipped.
"""

from __future__ import annotations

import html as htmllib
import re
from collections.abc import Sequence

from litecrawl.extract.dom import ALWAYS_REMOVE, BLOCK_TAGS
from litecrawl.extract.text import collapse_whitespace, normalize_language_tag, normalize_lines

__all__ = ["RegexDoc"]

_FLAGS = re.IGNORECASE | re.DOTALL
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_RAW = "|".join(ALWAYS_REMOVE)
_RAW_CLOSED = re.compile(rf"<({_RAW})\b[^>]*>.*?</\1\s*>", _FLAGS)
_RAW_UNCLOSED = re.compile(rf"<(?:{_RAW})\b.*\Z", _FLAGS)  # an unclosed <script> eats the rest
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", _FLAGS)
_H1 = re.compile(r"<h1\b[^>]*>(.*?)</h1\s*>", _FLAGS)
_META = re.compile(r"<meta\b[^>]*>", _FLAGS)
_OG = re.compile(r"""(?:property|name)\s*=\s*["']?og:title\b""", re.IGNORECASE)
_CONTENT = re.compile(r"""content\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""", re.IGNORECASE)
_HTML_LANG = re.compile(r"""<html\b[^>]*?\blang\s*=\s*["']?([\w-]+)""", re.IGNORECASE)
_ANCHOR = re.compile(r"<a\b[^>]*>(.*?)</a\s*>", _FLAGS)
_BLOCK = re.compile(rf"</?(?:{'|'.join(BLOCK_TAGS)}|td|th)\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"</?[a-zA-Z!?][^>]*>?")
_HEAD = re.compile(r"<head\b[^>]*>.*?</head\s*>", _FLAGS)
_TYPE_SELECTOR = re.compile(r"[a-zA-Z][a-zA-Z0-9-]*")


def _strip(fragment: str) -> str:
    """Tags out, entities decoded, whitespace collapsed."""
    return collapse_whitespace(htmllib.unescape(_TAG.sub(" ", fragment)))


class RegexDoc:
    """A page handled as a string."""

    def __init__(self, html: str) -> None:
        html = _COMMENT.sub("", html)
        html = _RAW_CLOSED.sub("", html)
        self.html = _RAW_UNCLOSED.sub("", html)

    def title_candidates(self) -> tuple[str, str, str]:
        found = _TITLE.search(self.html)
        title = _strip(found.group(1)) if found else ""
        h1 = ""
        for match in _H1.finditer(self.html):
            h1 = _strip(match.group(1))
            if h1:
                break
        og = ""
        for meta in _META.finditer(self.html):
            tag = meta.group()
            content = _CONTENT.search(tag)
            if _OG.search(tag) and content:
                og = collapse_whitespace(htmllib.unescape(next(g for g in content.groups() if g)))
                if og:
                    break
        return title, h1, og

    def language(self) -> str | None:
        match = _HTML_LANG.search(self.html[:4096])
        return normalize_language_tag(match.group(1)) if match else None

    def anchor_texts(self) -> frozenset[str]:
        texts = (_strip(m.group(1)) for m in _ANCHOR.finditer(self.html))
        return frozenset(t for t in texts if t)

    def render(self, url: str, extra_remove: Sequence[str], want_html: bool) -> tuple[str, str]:
        del url  # links are not rewritten here
        html = _HEAD.sub("", self.html)
        for selector in extra_remove:
            name = selector.strip()
            if _TYPE_SELECTOR.fullmatch(name):
                html = re.sub(rf"<({re.escape(name)})\b[^>]*>.*?</\1\s*>", "", html, flags=_FLAGS)
        html = _BLOCK.sub("\n", html)
        text = normalize_lines(htmllib.unescape(_TAG.sub("", html)))
        body = ""
        if want_html:
            paragraphs = "".join(f"<p>{htmllib.escape(line)}</p>" for line in text.split("\n"))
            body = f"<body>{paragraphs}</body>" if text else "<body></body>"
        return text, body
