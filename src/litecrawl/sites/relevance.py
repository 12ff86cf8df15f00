"""Is a site relevant? Annotations first (docs/sites.md), then the filter plugin on its start
page."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from litecrawl.errors import ConfigError
from litecrawl.plugins import load_object
from litecrawl.sites.model import Annotation, Site, StartPage

__all__ = [
    "MIN_WORDS",
    "PathFilter",
    "SiteFilter",
    "decide",
    "default_filter",
    "listing",
    "load_filter",
    "load_path_filter",
]

SiteFilter = Callable[[StartPage], bool]
PathFilter = Callable[[Site, str], bool]  # (site, path with query) -> crawl it?

# "Real text": a start page with fewer words than this is a placeholder, a parked domain or a
# bare redirect page, not a site to follow.
MIN_WORDS = 30


def default_filter(languages: Sequence[str]) -> SiteFilter:
    """An HTML start page with real text, in one of ``languages`` (any when empty)."""

    def relevant(page: StartPage) -> bool:
        if "html" not in page.content_type or len(page.text.split()) < MIN_WORDS:
            return False
        return not languages or page.language in languages

    return relevant


def load_filter(spec: str) -> SiteFilter:
    """The plugin function behind ``module:function``; ConfigError (exit 2) when there is none."""
    found = load_object(spec, f"sites.filter {spec!r}")
    if not callable(found):
        raise ConfigError(f"sites.filter {spec!r}: not a function")
    return cast("SiteFilter", found)


def load_path_filter(spec: str) -> PathFilter:
    """``[sites] path_filter``'s function; ConfigError (exit 2) when there is none."""
    found = load_object(spec, f"sites.path_filter {spec!r}")
    if not callable(found):
        raise ConfigError(f"sites.path_filter {spec!r}: not a function")
    return cast("PathFilter", found)


def listing(annotations: Sequence[Annotation]) -> str | None:
    """ "whitelist" or "blacklist" (the latest such annotation wins), None when neither."""
    marks = [a for a in annotations if a.kind in ("whitelist", "blacklist")]
    return max(marks, key=lambda a: (a.created_at, a.id)).kind if marks else None


def decide(
    annotations: Sequence[Annotation],
    page: StartPage | None,
    why_unread: str,
    plugin: SiteFilter,
    unread_status: str = "irrelevant",
) -> tuple[str, str]:
    """(status, reason): a blacklist or whitelist annotation wins (the latest when both), else
    the filter on the start page; a start page that could not be read is ``unread_status``
    (``unreachable`` when the site could not be reached, checked again sooner)."""
    listed = listing(annotations)
    if listed is not None:
        return (
            ("relevant", "whitelisted") if listed == "whitelist" else ("irrelevant", "blacklisted")
        )
    if page is None:
        return unread_status, why_unread
    try:
        verdict = bool(plugin(page))
    except Exception as exc:  # a plugin's bug is the site's outcome, not the run's end
        return "irrelevant", f"filter raised {type(exc).__name__}: {exc}"
    if verdict:
        return "relevant", "filter: relevant"
    words = len(page.text.split())
    counted = f"{words} word" + ("" if words == 1 else "s")
    detail = f"{counted}, language {page.language or 'unknown'}, {page.content_type or '?'}"
    return "irrelevant", f"filter: not relevant ({detail})"
