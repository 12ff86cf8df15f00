"""The dashboard's second write: site annotations (docs/dashboard.md, docs/differences.md)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from litecrawl.errors import ConfigError
from litecrawl.sites.model import ANNOTATION_KINDS
from litecrawl.sites.seeds import base_url
from litecrawl.store.backends import open_sites

__all__ = ["SiteAnnotator"]

MAX_NOTE = 2000  # characters


@dataclass(frozen=True, slots=True)
class SiteAnnotator:
    db: str

    async def apply(self, url: str, kind: str, text: str, remove: bool) -> dict[str, Any]:
        """Add an annotation of ``kind`` (with ``text`` for a note), or remove the site's
        annotations of ``kind``; ConfigError naming what is wrong with the request."""
        key = base_url(url)
        if key is None:
            raise ConfigError(f"not an http(s) URL: {url!r}")
        if kind not in ANNOTATION_KINDS:
            raise ConfigError(f"kind must be one of {', '.join(ANNOTATION_KINDS)}, got {kind!r}")
        note = text.strip()[:MAX_NOTE] or None
        if kind == "note" and not remove and note is None:
            raise ConfigError("a note needs its text")

        def work() -> dict[str, Any]:
            with open_sites(self.db) as store:
                if remove:
                    return {"site": key, "removed": store.remove_annotations(key, kind)}
                store.annotate(key, kind, note if kind == "note" else None, time.time())
                return {"site": key, "added": kind}

        return await asyncio.to_thread(work)
