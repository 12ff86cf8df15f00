"""Where a page's Markdown file and sidecar go under ``output_dir``: one file per URL, never two.

Layout::

    https://example.com/                 -> example.com/index.md
    https://example.com/docs/            -> example.com/docs/index.md
    https://example.com/docs/intro       -> example.com/docs/intro.md
    https://example.com/genindex.html    -> example.com/genindex.html.md
    https://example.com/genindex-_.html  -> example.com/genindex-html-<hash8>.md
    https://example.com/push_back.html   -> example.com/push_back.html.md
    https://example.com/About            -> example.com/about-<hash8>.md
    https://example.com/list?page=2      -> example.com/list_page-2-<hash8>.md
    http://example.com/a                 -> example.com_80/a.md
    http://localhost:8080/a              -> localhost_8080/a.md

The rule that keeps two URLs apart: a path segment that is already a plain name (lower-case
ASCII letters and digits, joined by single ``-``, ``.`` or ``_``) is used as it is; any other
segment becomes its python-slugify slug (``[a-z0-9-]``, transliterated, at most 80 characters) with
``-<hash8>`` appended, the first 8 hex digits of the SHA-256 of the segment as the URL spells it
(percent-decoded). A plain name is its own spelling, and a slug is told apart from every other
spelling by its hash, so the name depends on the URL alone: the same on every run, on every
machine, whatever was crawled before, and two different URLs never share a file (short of
a hash collision, or a URL spelled to look like another's hash). The last segment ``index``
takes a hash too (``/docs/`` owns ``docs/index.md``), as does a directory segment ending in
``.md`` or ``.json`` (no directory can have a file's name). A query adds
``_<slug of the query>-<hash8 of the query>``; a last segment that ends so is not a plain
name.

Before session 14 a plain name held no ``_`` (``push_back.html`` was
``push-back-html-<hash8>.md``): :func:`earlier_markdown_path` gives that name, so a page
written again moves out of it (docs/datasets.md#file-names).

The directory of a host is its IDNA name for ``https`` on port 443, ``host_port`` for ``http``
(``example.com_80``) and ``host_port_https`` for ``https`` on another port, so the same path
on http and https are two files. No name holds ``/`` or starts with ``.``: nothing escapes
``output_dir``.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from slugify import slugify

__all__ = ["earlier_markdown_path", "markdown_path", "sidecar_path", "url_domain"]

_MAX_SEGMENT = 80  # characters of slug per path segment; longer ones are cut and hashed
_MAX_QUERY_SLUG = 40
_PLAIN = re.compile(r"[a-z0-9]+(?:[-._][a-z0-9]+)*")
_PLAIN_EARLIER = re.compile(r"[a-z0-9]+(?:[-.][a-z0-9]+)*")  # the rule before session 14
# the end a query gives a name ("_<slug>-<hash8>", "_<hash8>"): a last segment ending so is not
# plain, or "/list_page-2-<hash8>" would be "/list?page=2"'s file
_QUERY_SHAPED = re.compile(r"_(?:[a-z0-9-]*-)?[0-9a-f]{8}$")
_PLAIN_HOST = re.compile(r"[a-z0-9]+(?:[-.]+[a-z0-9]+)*")
_HOST_UNSAFE = re.compile(r"[^a-z0-9.\-]+")


def _hash8(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def url_domain(url: str) -> str:
    """The output directory name of a URL's host (see the module docstring)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "_invalid"
    scheme = parts.scheme.lower()
    try:
        name = host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        name = host.lower()
    if not _PLAIN_HOST.fullmatch(name):  # not a host name (IPv6, "_"): a slug and a hash
        safe = _HOST_UNSAFE.sub("_", slugify(name) or "").strip("._")
        name = f"{safe or '_host'}-{_hash8(host)}" if host else "_nohost"
    if scheme == "http":
        return f"{name}_{port or 80}"
    if scheme == "https" and port not in (None, 443):
        return f"{name}_{port}_https"
    return name


def _segment_name(segment: str, last: bool, plain: re.Pattern[str] = _PLAIN) -> str:
    if (
        len(segment) <= _MAX_SEGMENT
        and plain.fullmatch(segment)
        and not (last and (segment == "index" or _QUERY_SHAPED.search(segment)))
        and not (not last and segment.endswith((".md", ".json")))
    ):
        return segment
    slug = slugify(segment)[:_MAX_SEGMENT].rstrip("-")
    # nothing sluggable (emoji, punctuation only): the hash alone
    return f"{slug}-{_hash8(segment)}" if slug else f"_{_hash8(segment)}"


def markdown_path(output_dir: Path, url: str) -> Path:
    """Where the Markdown file of ``url`` goes (see the module docstring for the rule)."""
    return _markdown_path(output_dir, url, _PLAIN)


def earlier_markdown_path(output_dir: Path, url: str) -> Path | None:
    """Where litecrawl before session 14 put the Markdown file of ``url``, when that differs
    from :func:`markdown_path` (a path segment holding ``_``); else None."""
    if "_" not in url:
        return None
    earlier = _markdown_path(output_dir, url, _PLAIN_EARLIER)
    return None if earlier == markdown_path(output_dir, url) else earlier


def _markdown_path(output_dir: Path, url: str, plain: re.Pattern[str]) -> Path:
    try:
        parts = urlsplit(url.strip())
        path, query = parts.path, parts.query
    except ValueError:
        path, query = "", ""
    raws: list[str] = []
    # split before decoding: "%2F" stays inside its segment; the root and a trailing "/" make
    # no segment, an empty one inside ("/a//b") does
    split = path.split("/")
    inner = split[1:-1] if split and split[0] == "" else split[:-1]
    last = split[-1] if split else ""
    for raw in (unquote(s) for s in [*inner, last]):
        if raw == ".":
            continue
        if raw == "..":
            if raws:
                raws.pop()
            continue
        raws.append(raw)
    if raws and raws[-1] == "" and unquote(last) == "":
        raws.pop()  # the trailing "/"
    # "/docs/", "/docs/." and "/docs/x/.." all name the directory "docs"
    is_dir = not raws or unquote(last) in ("", ".", "..")
    directories = [_segment_name(raw, False, plain) for raw in (raws if is_dir else raws[:-1])]
    name = "index" if is_dir else _segment_name(raws[-1], True, plain)
    if query:
        query_slug = slugify(unquote(query))[:_MAX_QUERY_SLUG].rstrip("-")
        name = f"{name}_{query_slug}-{_hash8(query)}" if query_slug else f"{name}_{_hash8(query)}"
    return Path(output_dir, url_domain(url), *directories, f"{name}.md")


def sidecar_path(md_path: Path) -> Path:
    """``page.md`` -> ``page.meta.json``, next to it."""
    name = md_path.name
    stem = name[: -len(".md")] if name.endswith(".md") else md_path.stem
    return md_path.with_name(f"{stem}.meta.json")
