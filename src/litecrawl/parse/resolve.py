"""A page's links resolved by the URL rules: what the analysis worker hands back ready to queue.

The worker has the page's links from its own parse; resolving them there (normalize, validate,
drop duplicates) leaves the crawler process's event loop only the scope check and the rows to
write (bench/README.md, "Issue 29"). :func:`resolve_links` is the one definition of that step,
run by the worker, or by the engine itself when no worker made the page's links.
"""

from __future__ import annotations

from typing import NamedTuple

from litecrawl.parse.links import PageLinks
from litecrawl.urls import UrlRules, host_of

__all__ = ["LinkRules", "ResolvedLinks", "resolve_links"]


# NamedTuples, not dataclasses: both cross the worker pipe once a page, and a tuple pickles
# without a Python-level __getstate__ call.
class LinkRules(NamedTuple):
    """How the engine resolves a page's links (plain data: it travels to the workers)."""

    rules: UrlRules  # pickles as its patterns (urls.UrlRules.__reduce__)
    canonical: bool = False  # <link rel=canonical> is followed too
    feeds: bool = False  # <link rel=alternate> feeds are resolved


class ResolvedLinks(NamedTuple):
    """A page's links after the URL rules, in page order, without duplicates."""

    links: tuple[str, ...]  # every valid link (the canonical one last, if followed)
    feeds: tuple[str, ...] = ()  # valid feed links (only when LinkRules.feeds)
    canonical: str | None = None  # the page's rel=canonical, normalized (not validated)
    # each link's host[:port] (urls.host_of), in the order of links: the scope check and the
    # frontier rows need it, and the event loop need not compute it
    hosts: tuple[str, ...] = ()
    refresh: str | None = None  # the meta refresh's target, if valid: the page redirects there


def resolve_links(found: PageLinks, how: LinkRules) -> ResolvedLinks:
    """``found``'s raw values resolved against its base by ``how.rules``."""
    rules = how.rules
    raw = list(found.links)
    if how.canonical and found.canonical:
        raw.append(found.canonical)
    feeds = tuple(rules.many(found.feeds, found.base)) if how.feeds and found.feeds else ()
    # stored normalized, so search can compare it with the URLs of a resource
    canonical = rules.normalize(found.canonical, found.base) if found.canonical else None
    links = tuple(rules.many(raw, found.base))
    refresh = rules(found.refresh, found.base) if found.refresh else None
    return ResolvedLinks(links, feeds, canonical, _hosts(links), refresh)


def _hosts(links: tuple[str, ...]) -> tuple[str, ...]:
    """Each link's host, one string object per distinct host: the result's pickle to the event
    loop holds each host once and refers to it after."""
    same: dict[str, str] = {}
    return tuple(same.setdefault(host, host) for host in map(host_of, links))
