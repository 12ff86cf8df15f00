"""A page's outgoing links, read back from the crawl's disk cache.

The frontier does not store the link graph; the cache (``cache.dir``, on by default in
``litecrawl crawl``) holds the last body fetched, so links out are re-extracted from it with the
crawler's own extraction and normalization.
"""

from __future__ import annotations

import json

from litecrawl.cache import DiskCache
from litecrawl.parse.links import extract_links, is_html
from litecrawl.urls import UrlRules

__all__ = ["links_out"]


def links_out(cache: DiskCache, url: str, rules: UrlRules) -> list[str] | None:
    """The normalized http(s) links of ``url``'s cached body in page order, each once; None
    when the page is not in the cache."""
    path = cache.path_for(url)
    try:
        body = path.read_bytes()
        meta = json.loads(path.with_suffix(".headers.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    headers = meta.get("headers") if isinstance(meta, dict) else None
    ctype = next(
        (str(v) for k, v in (headers or {}).items() if str(k).lower() == "content-type"), ""
    )
    if not is_html(ctype):
        return []
    base = meta.get("final_url") or url
    found = extract_links(body, str(base), ctype)
    normalized = (rules(href, found.base) for href in found.links)
    return list(dict.fromkeys(u for u in normalized if u and u.startswith(("http://", "https://"))))
