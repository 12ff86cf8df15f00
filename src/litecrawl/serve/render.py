"""The Jinja2 environment: autoescape on for every template, filters for times and snippets."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import quote, urlencode

import jinja2
from markupsafe import Markup, escape

__all__ = ["make_environment"]


def make_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("litecrawl.serve", "templates"),
        autoescape=True,  # every template, whatever its name: crawled text is hostile
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["at"] = at
    env.filters["duration"] = duration
    env.filters["marked"] = marked
    env.filters["detail"] = detail_href
    env.filters["href"] = safe_href
    env.globals["qs"] = query_string
    return env


def when(value: str | None) -> str:
    """An ISO 8601 time as local 'YYYY-MM-DD HH:MM:SS'; '-' for none."""
    if not value:
        return "-"
    return datetime.fromisoformat(value).strftime("%Y-%m-%d %H:%M:%S")


def at(epoch: float | None) -> str:
    """Epoch seconds as local 'YYYY-MM-DD HH:MM:SS'; '-' for none."""
    return "-" if epoch is None else datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None) -> str:
    """Seconds as '2d 3h', '5h 10m', '4m 2s' or '12s'; '-' for none."""
    if seconds is None:
        return "-"
    s = int(seconds)
    for unit, size, sub, sub_size in (("d", 86400, "h", 3600), ("h", 3600, "m", 60)):
        if s >= size:
            return f"{s // size}{unit} {s % size // sub_size}{sub}"
    return f"{s // 60}m {s % 60}s" if s >= 60 else f"{s}s"


def marked(snippet: str) -> Markup:
    """A search snippet escaped, its matches (between \\x02 and \\x03) in <mark>."""
    text = str(escape(snippet))
    return Markup(text.replace("\x02", "<mark>").replace("\x03", "</mark>"))


def detail_href(url: str) -> str:
    """The dashboard's page about ``url``."""
    return "/page?url=" + quote(url, safe="")


def safe_href(url: str | None) -> str:
    """A crawled URL fit for href: http(s) only (no javascript:, data:, ...)."""
    if url and url.lower().startswith(("http://", "https://")):
        return url
    return "#"


def query_string(**params: object) -> str:
    """``?k=v&...`` for the non-empty params (filters, sorting, paging links)."""
    kept = {k: str(v) for k, v in params.items() if v not in (None, "")}
    return "?" + urlencode(kept) if kept else "?"
