"""What Frontera's strategies import from packages that no longer work here, on litecrawl's own
parts: ``publicsuffix`` (needs pkg_resources) by litecrawl's registered domains (the public
suffix list bundled with tldextract), ``w3lib.util`` (deprecated: importing it warns) by the
two functions it had."""

from __future__ import annotations

from typing import IO, Any

from litecrawl.strategy import registered_domain


class PublicSuffixList:
    def __init__(self, input_file: IO[str] | None = None) -> None:
        if input_file is not None:
            input_file.close()  # the list bundled with litecrawl is used instead

    def get_public_suffix(self, domain: str) -> str:
        return registered_domain(domain)


def to_bytes(text: Any, encoding: str | None = None, errors: str = "strict") -> bytes:
    if isinstance(text, bytes):
        return text
    return str(text).encode(encoding or "utf-8", errors)


def to_native_str(text: Any, encoding: str | None = None, errors: str = "strict") -> str:
    if isinstance(text, str):
        return text
    return bytes(text).decode(encoding or "utf-8", errors)
