"""Parsing on the hot path: links out of HTML."""

from litecrawl.parse.links import PageLinks, extract_links, is_html

__all__ = ["PageLinks", "extract_links", "is_html"]
