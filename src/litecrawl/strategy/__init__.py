"""Crawling strategies (Frontera's API, docs/strategies.md): what is crawled and in what order."""

from litecrawl.strategy.base import (
    BaseCrawlingStrategy,
    DomainMetadata,
    Request,
    Response,
    States,
)
from litecrawl.strategy.domain import partition_of, registered_domain
from litecrawl.strategy.loader import load_strategy

__all__ = [
    "BaseCrawlingStrategy",
    "DomainMetadata",
    "Request",
    "Response",
    "States",
    "load_strategy",
    "partition_of",
    "registered_domain",
]
