"""Markdown output (docs/datasets.md): the document, and writing it safely. Where it goes on disk is
:mod:`litecrawl.extract.paths`."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from litecrawl.extract.page import Extracted
from litecrawl.files import replacing

__all__ = ["convert_html", "to_markdown", "write_atomic"]

# "\n{3,}" spelled with a literal start, which re searches for instead of trying a match at
# every newline: ~5x faster on a Python-docs page's Markdown (bench/README.md, issue 29, session 10)
_BLANK_LINES = re.compile(r"\n\n\n+")
_HEADING = re.compile(r"#{1,6}\s+(.*?)\s*#*\s*")
# A list item with nothing in it: an <li> that held only a form, a script-filled switcher or an
# image-less spacer (Sphinx's navigation bar has three) is a bare "-" line.
_EMPTY_ITEM = re.compile(r"^[ \t]*(?:[-*+]|[0-9]+[.)])[ \t]*$", re.MULTILINE)
_FENCE = ("```", "~~~")


def _tidy(markdown: str) -> str:
    # each line's trailing spaces and tabs cut by rstrip, not by a "[ \t]+\n" regex tried at
    # every space (534 -> 125 us on a Python-docs page): the last line's too, which the final
    # strip() would take anyway (tests/test_markdown.py holds it to the regex form)
    lines = markdown.replace("\r\n", "\n").split("\n")
    markdown = "\n".join([line.rstrip(" \t") for line in lines])
    return _BLANK_LINES.sub("\n\n", _without_empty_items(markdown)).strip()


def _without_empty_items(markdown: str) -> str:
    """``markdown`` without its empty list items, fenced code left as it is."""
    if _EMPTY_ITEM.search(markdown) is None:
        return markdown
    kept: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(_FENCE):
            fenced = not fenced
        elif not fenced and _EMPTY_ITEM.fullmatch(line):
            continue
        kept.append(line)
    return "\n".join(kept)


def _paragraphs(text: str) -> str:
    return "\n\n".join(line.strip() for line in text.splitlines() if line.strip())


def _has_title_heading(markdown: str, title: str) -> bool:
    """Whether the body's first heading (outside code blocks) is the title: a page may put its
    navigation before it (DocBook's Prev/Up/Next table), and a title written above that would
    stand twice in the file."""
    fenced = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith(_FENCE):
            fenced = not fenced
            continue
        if fenced or not stripped.startswith("#"):
            continue
        match = _HEADING.fullmatch(stripped)
        if match is not None:
            heading = " ".join(match.group(1).split()).casefold()
            return heading == " ".join(title.split()).casefold()
    return False


def _build_options(base_url: str | None) -> Any:
    from html_to_markdown import ConversionOptions

    return ConversionOptions(
        heading_style="atx",
        bullets="-",
        code_block_style="backticks",
        escape_asterisks=True,  # a literal "*" in the text stays a "*", not emphasis
        compact_tables=True,  # no padding to column width: fewer tokens, same table
        autolinks=False,  # a link whose text is its URL stays [url](url)
        extract_metadata=False,  # title and metadata come from our own parse
        hidden_content="drop",
        base_url=base_url,
    )


@lru_cache(maxsize=1)
def _default_options() -> Any:
    return _build_options(None)


def convert_html(html: str, base_url: str | None = None) -> str:
    """HTML -> Markdown with html-to-markdown (Rust): ATX headings, ``-`` bullets with nested
    lists indented, GFM tables, fenced code blocks with the language of ``<code
    class="language-x">``, links and images as they are in the HTML (resolved against
    ``base_url`` when given).
    Raises :class:`ValueError` when the converter fails or had to skip markup nested deeper than
    its depth limit (1024): the caller then uses the plain text, which loses nothing."""
    from html_to_markdown import WarningKind, convert  # Rust: only Markdown output pays it

    try:
        options = _default_options() if base_url is None else _build_options(base_url)
        result = convert(html, options)
    except Exception as exc:  # ConversionError, PanicError, InputTooLargeError...
        raise ValueError(f"html-to-markdown: {exc}") from exc
    for warning in result.warnings:
        if warning.kind == WarningKind.DEPTH_LIMIT_EXCEEDED:
            raise ValueError(f"html-to-markdown: {warning.message}")
    return result.content or ""


def to_markdown(extracted: Extracted) -> str:
    """The page as Markdown, starting with ``# title`` (unless the body's first heading is it).

    The filtered ``<body>`` (in article mode, cut down to the article) through
    :func:`convert_html`; if the converter gives up (absurd nesting), the plain text's lines
    become paragraphs. Ends with exactly one newline ("" for an empty page).
    """
    if extracted.html_for_markdown:
        try:
            body = convert_html(extracted.html_for_markdown)
        except (ValueError, RecursionError):
            body = _paragraphs(extracted.text)
    else:
        body = _paragraphs(extracted.text)
    body = _tidy(body)
    title = " ".join(extracted.title.split())
    if title and not _has_title_heading(body, title):
        body = f"# {title}\n\n{body}" if body else f"# {title}"
    return body + "\n" if body else ""


def write_atomic(path: Path, data: str, *, fsync: bool = False) -> bool:
    """Write ``data`` (UTF-8) to ``path`` atomically; False, touching nothing, if it is unchanged.

    A temporary file in the same directory is written and then ``os.replace``-d over ``path``, so
    readers (and a crash) see the old or the new content, never half of it. Parent directories are
    created. ``fsync=True`` also flushes the data to disk before the rename.
    """
    encoded = data.encode("utf-8")
    try:
        if path.stat().st_size == len(encoded) and path.read_bytes() == encoded:
            return False
    except OSError:
        pass
    with replacing(path, fsync=fsync) as handle:
        handle.write(encoded)
    return True
