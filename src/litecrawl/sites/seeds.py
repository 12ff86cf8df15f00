"""Base URLs for the site queue, from arguments or a file (``+`` whitelist, ``-`` blacklist)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from litecrawl.urls import UrlRules

__all__ = ["SiteSeed", "base_url", "parse_site_lines"]

_RULES = UrlRules()


@dataclass(frozen=True, slots=True)
class SiteSeed:
    base_url: str
    annotation: str | None  # "whitelist" (a leading +), "blacklist" (a leading -) or None


def base_url(url: str) -> str | None:
    """A site's base URL: the normalized URL up to its last '/' (``https://a.org/blog/`` stays,
    ``https://a.org/index.html`` is ``https://a.org/``), no query; None if not http(s)."""
    normalized = _RULES.normalize(url)
    if normalized is None:
        return None
    parts = urlsplit(normalized)
    path = parts.path[: parts.path.rfind("/") + 1] or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def parse_site_lines(lines: list[str]) -> tuple[list[SiteSeed], list[str]]:
    """The sites of a file's lines (blank lines and ``#`` comments skipped) and the lines that
    are not http(s) URLs."""
    seeds: list[SiteSeed] = []
    bad: list[str] = []
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        annotation = {"+": "whitelist", "-": "blacklist"}.get(line[0])
        url = base_url(line[1:].strip() if annotation else line)
        if url is None:
            bad.append(line)
        else:
            seeds.append(SiteSeed(url, annotation))
    return seeds, bad
