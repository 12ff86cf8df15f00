"""Politeness: robots.txt policy (RFC 9309) and per-host pacing. Pure; no I/O."""

from litecrawl.politeness.ratelimit import HostPacer, PacerState, TokenBucket, parse_retry_after
from litecrawl.politeness.robots import (
    DEFAULT_ERROR_TTL,
    DEFAULT_TTL,
    MAX_ROBOTS_BYTES,
    RobotsMode,
    RobotsPolicy,
    RobotsRecord,
    RobotsRequestRate,
    product_token,
    robots_url,
)

__all__ = [
    "DEFAULT_ERROR_TTL",
    "DEFAULT_TTL",
    "MAX_ROBOTS_BYTES",
    "HostPacer",
    "PacerState",
    "RobotsMode",
    "RobotsPolicy",
    "RobotsRecord",
    "RobotsRequestRate",
    "TokenBucket",
    "parse_retry_after",
    "product_token",
    "robots_url",
]
