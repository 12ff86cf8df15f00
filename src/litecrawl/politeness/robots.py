"""robots.txt policy (RFC 9309) on top of protego: what one origin lets us fetch, and how fast.

The engine fetches ``robots_url(page_url)`` itself and hands the outcome to
:meth:`RobotsPolicy.from_response`; this module never touches the network or the database.

Status handling (RFC 9309 section 2.3.1):

=====================  ==============  ==========================================
response               mode            lifetime
=====================  ==============  ==========================================
2xx                    ``"parsed"``    ``ttl`` (24 h)
3xx (not followed)     ``"allow_all"`` ``ttl`` -- too many redirects = unavailable
4xx except 429         ``"allow_all"`` ``ttl`` -- "unavailable"
429, 5xx, other, None  ``"disallow_all"``  ``error_ttl`` (10 min) -- "unreachable"
=====================  ==============  ==========================================

429 is read as "unreachable" rather than "unavailable" (as Google does): a server asking us to
slow down has not told us that everything is allowed.

A 2xx body is parsed leniently, as RFC 9309 2.2 asks: lines that are no rule are skipped and the
rules that can be read apply, so a body without a single rule (an HTML page served as
robots.txt, binary junk) allows everything; :attr:`RobotsPolicy.problem` says so, and the gate
logs it with the host. Should the parser itself fail, nothing can be known of the rules: the
origin is treated as unreachable (disallow all, ``error_ttl``), never as allowing all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict
from urllib.parse import urlsplit, urlunsplit

from protego import Protego

__all__ = [
    "DEFAULT_ERROR_TTL",
    "DEFAULT_TTL",
    "MAX_ROBOTS_BYTES",
    "RobotsMode",
    "RobotsPolicy",
    "RobotsRecord",
    "RobotsRequestRate",
    "product_token",
    "robots_url",
]

DEFAULT_TTL = 24 * 3600.0  # RFC 9309 2.4: SHOULD NOT use a cached copy for more than 24 hours
DEFAULT_ERROR_TTL = 600.0  # how long a 5xx/unreachable robots.txt means "disallow all"
MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 2.5: parse at least the first 500 KiB

RobotsMode = Literal["parsed", "allow_all", "disallow_all"]


class RobotsRecord(TypedDict):
    """What :meth:`RobotsPolicy.to_record` produces: JSON-safe, small, enough to rebuild."""

    status: int | None
    body: str
    fetched_at: float
    expires_at: float
    cause: NotRequired[str | None]
    cause_detail: NotRequired[str]


@dataclass(frozen=True, slots=True)
class RobotsRequestRate:
    """A ``Request-rate: 1/5s`` directive: ``requests`` per ``seconds``."""

    requests: int
    seconds: int

    @property
    def per_second(self) -> float | None:
        """Requests per second, or None when the directive is degenerate (0 seconds/requests)."""
        if self.requests <= 0 or self.seconds <= 0:
            return None
        return self.requests / self.seconds


def robots_url(page_url: str) -> str:
    """``scheme://host[:port]/robots.txt`` for any URL of that origin (RFC 9309 2.3)."""
    parts = urlsplit(page_url)
    netloc = parts.netloc.rsplit("@", 1)[-1]  # never carry credentials to robots.txt
    return urlunsplit((parts.scheme.lower(), netloc.lower(), "/robots.txt", "", ""))


def product_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against, lower-cased.

    ``"litecrawl/0.1 (+https://example.com/bot)"`` -> ``"litecrawl"``. RFC 9309 2.2.1: the token
    is made of letters, digits, ``-`` and ``_``; the first run of those characters is used.
    """
    text = user_agent.strip().lower()
    end = 0
    while end < len(text) and (text[end].isascii() and (text[end].isalnum() or text[end] in "-_")):
        end += 1
    return text[:end]


def _mode_for(status: int | None) -> RobotsMode:
    if status is None or status == 429:
        return "disallow_all"
    if 200 <= status < 300:
        return "parsed"
    if 300 <= status < 500:
        return "allow_all"
    return "disallow_all"


def _decode(body: bytes) -> str:
    """UTF-8 with replacement, BOM dropped, cut to 500 KiB at the last complete line."""
    if len(body) > MAX_ROBOTS_BYTES:
        cut = body[:MAX_ROBOTS_BYTES]
        newline = max(cut.rfind(b"\n"), cut.rfind(b"\r"))
        body = cut[: newline + 1] if newline >= 0 else cut
    return body.decode("utf-8-sig", errors="replace")


def _group_names(parser: Protego) -> frozenset[str] | None:
    """The user-agent values protego recorded (lower-cased), or None if it cannot tell us."""
    groups = getattr(parser, "_user_agents", None)
    if isinstance(groups, dict):
        return frozenset(str(name) for name in groups)
    return None


def _query_name(parser: Protego, token: str) -> str:
    """The name to ask protego about, so that only an exact product-token group matches.

    protego matches a group whose name is any *prefix* of our token (a group ``lite`` would
    apply to ``litecrawl``). RFC 9309 2.2.1 wants an exact, case-insensitive match, else ``*``.
    Asking with ``"*"`` selects the ``*`` group and nothing else; asking with a group's own name
    selects that group (the longest match wins in protego).
    """
    if not token:
        return "*"
    names = _group_names(parser)
    if names is None:  # protego changed its internals: fall back to its own matching
        return token
    if token in names:
        return token
    # "User-agent: litecrawl/0.1" is written by some sites; its product token is still ours.
    versioned = sorted(n for n in names if product_token(n) == token)
    return versioned[0] if versioned else "*"


# A line that is neither blank nor a comment (RFC 9309 2.2: "#" starts one)
_CONTENT = re.compile(r"^[ \t]*[^#\s]", re.MULTILINE)


def _no_rules(parser: Protego, body: str) -> str | None:
    """Why ``body`` allows everything though it is not empty: not one line of it is a rule."""
    names = _group_names(parser)
    if names is None or names or any(parser.sitemaps) or not (found := _CONTENT.search(body)):
        return None  # rules (or sitemaps) were read; or only comments; or protego cannot say
    first = body[found.start() :].strip().splitlines()[0][:60]
    return (
        f"holds no rule (no User-agent group; it starts {first!r}): all is allowed (RFC 9309 2.2)"
    )


@dataclass(frozen=True, slots=True)
class RobotsPolicy:
    """One origin's robots.txt, as a decision procedure. Immutable; rebuild to refresh.

    Times are epoch seconds (``time.time()``), the clock the engine stores in the database.
    """

    status: int | None  # HTTP status of the robots.txt fetch, None = unreachable
    body: str  # decoded (and truncated) robots.txt text; "" unless status was 2xx
    fetched_at: float
    expires_at: float
    user_agent: str  # our full User-Agent header value
    # why robots.txt could not be fetched (status None): an error category ("dns", "connect",
    # "timeout"...) and its words, so the host's pages are recorded as unreachable, not "robots"
    cause: str | None = None
    cause_detail: str = ""
    # why a 2xx body gives no rules (None: it gives some, or was not 2xx): for the log
    problem: str | None = field(init=False, repr=False, compare=False)
    _parser: Protego | None = field(init=False, repr=False, compare=False)
    _name: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parser: Protego | None = None
        name = "*"
        problem = None
        if self.mode == "parsed":
            try:
                parser = Protego.parse(self.body)
                name = _query_name(parser, product_token(self.user_agent))
            except Exception as exc:  # protego is robust, but a policy must never raise
                parser = None
                problem = f"cannot be parsed ({type(exc).__name__}: {exc}): nothing is fetched"
            else:
                problem = _no_rules(parser, self.body)
        object.__setattr__(self, "problem", problem)
        object.__setattr__(self, "_parser", parser)
        object.__setattr__(self, "_name", name)

    @classmethod
    def from_response(
        cls,
        status: int | None,
        body: bytes,
        fetched_at: float,
        user_agent: str,
        *,
        ttl: float = DEFAULT_TTL,
        error_ttl: float = DEFAULT_ERROR_TTL,
        cause: str | None = None,
        cause_detail: str = "",
    ) -> RobotsPolicy:
        """Build the policy from the robots.txt fetch outcome (``status=None``: network error,
        whose category and words are ``cause`` and ``cause_detail``)."""
        mode = _mode_for(status)
        text = _decode(body) if mode == "parsed" else ""
        lifetime = error_ttl if mode == "disallow_all" else ttl
        if status is not None:
            cause, cause_detail = None, ""
        policy = cls(
            status, text, fetched_at, fetched_at + lifetime, user_agent, cause, cause_detail
        )
        if mode == "parsed" and policy._parser is None:  # as unreachable: asked again soon
            policy = cls(status, text, fetched_at, fetched_at + error_ttl, user_agent)
        return policy

    @classmethod
    def from_record(cls, record: Mapping[str, object], user_agent: str) -> RobotsPolicy:
        """Rebuild from :meth:`to_record` output. Raises ValueError on a malformed record."""
        status = record.get("status")
        body = record.get("body", "")
        fetched_at = record.get("fetched_at")
        expires_at = record.get("expires_at")
        if status is not None and (not isinstance(status, int) or isinstance(status, bool)):
            raise ValueError(f"robots record: bad status {status!r}")
        if not isinstance(body, str):
            raise ValueError("robots record: body must be a string")
        if not isinstance(fetched_at, int | float) or not isinstance(expires_at, int | float):
            raise ValueError("robots record: fetched_at and expires_at must be numbers")
        cause = record.get("cause")
        detail = record.get("cause_detail", "")
        return cls(
            status,
            body,
            float(fetched_at),
            float(expires_at),
            user_agent,
            cause if isinstance(cause, str) else None,
            detail if isinstance(detail, str) else "",
        )

    def to_record(self) -> RobotsRecord:
        """A small JSON-safe dict the engine can store in the host row."""
        record: RobotsRecord = {
            "status": self.status,
            "body": self.body,
            "fetched_at": self.fetched_at,
            "expires_at": self.expires_at,
        }
        if self.cause is not None:
            record["cause"] = self.cause
            record["cause_detail"] = self.cause_detail
        return record

    @property
    def mode(self) -> RobotsMode:
        return _mode_for(self.status)

    def is_expired(self, now: float) -> bool:
        return now >= self.expires_at

    def allowed(self, url: str) -> bool:
        """May our user agent fetch ``url``? (``/robots.txt`` itself is always allowed.)"""
        try:
            path = urlsplit(url).path
        except ValueError:
            return False
        if path == "/robots.txt":
            return True
        if self.mode == "allow_all":
            return True
        if self._parser is None:  # disallow_all, or a 2xx body the parser failed on
            return False
        try:
            return bool(self._parser.can_fetch(url, self._name))
        except Exception:
            return True  # a URL protego cannot handle is not one robots.txt can speak about

    def crawl_delay(self) -> float | None:
        """``Crawl-delay`` seconds of the group that applies to us, if any."""
        if self._parser is None:
            return None
        delay = self._parser.crawl_delay(self._name)
        if delay is None or not math.isfinite(delay) or delay < 0:
            return None
        return float(delay)

    def request_rate(self) -> RobotsRequestRate | None:
        """``Request-rate`` of the group that applies to us, if any."""
        if self._parser is None:
            return None
        rate = self._parser.request_rate(self._name)
        if rate is None:
            return None
        return RobotsRequestRate(int(rate.requests), int(rate.seconds))

    def sitemaps(self) -> tuple[str, ...]:
        """Absolute http(s) ``Sitemap:`` URLs (site-wide, in file order, duplicates dropped)."""
        if self._parser is None:
            return ()
        found = (s.strip() for s in self._parser.sitemaps)
        return tuple(
            dict.fromkeys(s for s in found if s.lower().startswith(("http://", "https://")))
        )
