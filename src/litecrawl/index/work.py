"""The work for one page, in an analysis worker: extraction, hashes, Markdown + sidecar.

:func:`analyze` is what :class:`~litecrawl.index.analyze.PageAnalyzer` runs in its worker
processes (and inline with ``workers=0``): plain data in, an
:class:`~litecrawl.index.document.IndexDocument` and the page's links out, resolved by the
engine's URL rules when it sends them (the event loop then only checks their scope). It never
raises: a page that cannot be analyzed yields the reason as a string.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from litecrawl.cache import open_cache
from litecrawl.errors import ConfigError
from litecrawl.extract import (
    earlier_markdown_path,
    extract_page,
    markdown_path,
    sidecar_path,
    to_markdown,
    write_atomic,
)
from litecrawl.extract.page import Extracted
from litecrawl.extract.sections import Section
from litecrawl.index.analyze import AnalyzerSettings
from litecrawl.index.document import IndexDocument, SectionVector
from litecrawl.index.embed import SECTION_WORDS, embed_many, page_words, titled
from litecrawl.index.simhash import simhash
from litecrawl.index.tsvector import tsvector_binary
from litecrawl.parse.links import PageLinks, extract_links
from litecrawl.parse.resolve import LinkRules, ResolvedLinks, resolve_links

__all__ = ["analyze", "analyze_task", "sidecar"]

log = logging.getLogger("litecrawl.index")
_embed_failed = False  # the model could not be loaded in this process


def sidecar(
    url: str,
    extracted: Extracted,
    *,
    fetched_at: float,
    headers: Mapping[str, str],
    source: str,
    depth: int,
    status: int,
    content_hash: str,
    cache_path: str | None,
) -> dict[str, object]:
    """The ``.meta.json`` record: the fields of docs/datasets.md, in that order, plus the page's
    ``language`` and its markup's ``date`` and ``author`` only when they are known."""
    record: dict[str, object] = {
        "url": url,
        "title": extracted.title,
        "fetched_at": _iso_utc(fetched_at),
        "last_modified": headers.get("last-modified"),
        "etag": headers.get("etag"),
        "source": source,
        "depth": depth,
        "status": status,
        "content_hash": content_hash,
        "cache_path": cache_path,
        "extraction_mode": extracted.extraction_mode,
    }
    if extracted.language:
        record["language"] = extracted.language
    if extracted.date:
        record["date"] = extracted.date
    if extracted.author:
        record["author"] = extracted.author
    return record


def analyze(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    status: int,
    depth: int,
    source: str,
    settings: AnalyzerSettings,
    fetched_at: float,
    revalidated: bool = False,
    link_rules: LinkRules | None = None,
) -> tuple[IndexDocument | str, PageLinks | ResolvedLinks | None, str]:
    """The worker: an :class:`IndexDocument` (or the reason it could not be made), the page's
    links (None if they could not be had): resolved by ``link_rules`` if given, else as written,
    and the body's SHA-256 (the page's ``content_hash``: hashed here once, not again by the
    event loop). ``revalidated``: the body is the disk cache's, confirmed by a 304."""
    content_type = headers.get("content-type", "")
    body_hash = hashlib.sha256(body).hexdigest()
    links: PageLinks | None = None
    resolved: ResolvedLinks | None = None
    try:
        extracted = extract_page(
            body,
            url,
            content_type,
            extra_remove=settings.extra_remove,
            main_article=settings.main_article,
            engine=settings.article_engine,
            want_markdown=settings.output_dir is not None,
            want_links=True,
            want_sections=settings.embed,
        )
        links = extracted.links
        if links is None:  # lxml could not parse the page: the links the hard way
            links = _links_or_none(body, url, content_type)
        if links is not None and link_rules is not None:
            resolved = resolve_links(links, link_rules)
        md_path = None
        if settings.output_dir is not None:
            # the sidecar tells of this fetch: a 304 is what the server answered
            md_path = _write_outputs(
                url,
                body,
                headers,
                304 if revalidated else status,
                depth,
                source,
                settings,
                fetched_at,
                extracted,
                body_hash,
            )
        text = extracted.text
        embedding, sections = _vectors(url, extracted) if settings.embed else (None, ())
        document = IndexDocument(
            url=url,
            title=extracted.title,
            keywords=extracted.keywords,
            text_preview=extracted.preview,
            text=text,
            text_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
            simhash=simhash(text),
            language=extracted.language,
            author=extracted.author,
            published=extracted.date,
            content_type=content_type or None,
            status=status,
            depth=depth,
            source=source,
            extraction_mode=extracted.extraction_mode,
            markdown_path=str(md_path) if md_path is not None else None,
            embedding=embedding,
            sections=sections,
            canonical=resolved.canonical if resolved is not None else None,
            tsvector=tsvector_binary(extracted.title, text) if settings.tsvector and text else None,
        )
    except Exception as exc:  # never let one page take the worker (or the crawl) down
        return f"{type(exc).__name__}: {exc}", links if resolved is None else resolved, body_hash
    return document, links if resolved is None else resolved, body_hash


def analyze_task(
    context: bytes,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    status: int,
    depth: int,
    source: str,
    fetched_at: float,
    revalidated: bool = False,
) -> tuple[IndexDocument | str, PageLinks | ResolvedLinks | None, str]:
    """:func:`analyze` as a worker runs it: ``context`` is the crawl's settings and link rules,
    pickled once by the crawler (:class:`~litecrawl.index.analyze.PageAnalyzer`) and unpickled
    once here."""
    settings, link_rules = _context(context)
    return analyze(
        url, body, headers, status, depth, source, settings, fetched_at, revalidated, link_rules
    )


# a context per crawl sharing the pool at once: `sites run --workers N` interleaves N site crawls'
# pages in each worker (N is at most 64, config.py), each with its own link rules
@lru_cache(maxsize=64)
def _context(blob: bytes) -> tuple[AnalyzerSettings, LinkRules | None]:
    settings, link_rules = pickle.loads(blob)
    return settings, link_rules


def _vectors(url: str, extracted: Extracted) -> tuple[bytes | None, tuple[SectionVector, ...]]:
    """The page's vector (None for a page without words: no resource holds it) and a vector
    per section of a page that has more than one (one section is the page's own vector): the
    page's title and the section's first :data:`SECTION_WORDS` words (what search embeds again
    to choose among a merged section's headings: ``section_words``). Embedded in one call, so
    the words new to this worker's cache are tokenized and summed together
    (:meth:`~litecrawl.index.embed.Embedder.words_vectors`)."""
    texts = [page_words(extracted.title, extracted.text)] if extracted.text.strip() else []
    chosen: list[Section] = []
    if len(extracted.sections) >= 2:
        head = extracted.title.split()  # once a page, not once a section
        for section in extracted.sections:
            words = section.text.split(maxsplit=SECTION_WORDS)[:SECTION_WORDS]
            if words:
                chosen.append(section)
                texts.append(titled(head, words))
    blobs = _embed_all(url, texts)
    page = blobs.pop(0) if extracted.text.strip() else None
    found = []
    for section, blob in zip(chosen, blobs, strict=True):
        if blob is not None:
            at = next((at for at, heading, _ in section.places if heading), 0)
            places = None
            if len(section.places) > 1:
                places = json.dumps(section.places, ensure_ascii=False, separators=(",", ":"))
            found.append(SectionVector(section.heading, section.anchor, blob, at, places))
    return page, tuple(found)


def _embed_all(url: str, texts: list[list[str]]) -> list[bytes | None]:
    """The vector of each of ``texts``; None for each when this worker has no model or the
    model fails on them (a model that cannot embed costs the vectors, not the page)."""
    global _embed_failed
    if _embed_failed or not texts:
        return [None] * len(texts)
    try:
        return embed_many(texts)
    except ConfigError as exc:  # no model in this worker: say it once, crawl on without vectors
        _embed_failed = True
        log.warning("no embeddings in this worker (from %s on): %s", url, exc)
    except Exception as exc:
        log.warning("no embedding for %s: %s: %s", url, type(exc).__name__, exc)
    return [None] * len(texts)


def _links_or_none(body: bytes, url: str, content_type: str) -> PageLinks | None:
    try:
        return extract_links(body, url, content_type)
    except Exception:
        return None  # the engine extracts them itself


def _write_outputs(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    status: int,
    depth: int,
    source: str,
    settings: AnalyzerSettings,
    fetched_at: float,
    extracted: Extracted,
    body_hash: str,
) -> Path | None:
    """Markdown file + sidecar; each is rewritten only when its content changed, and the
    sidecar also after a 304 (its fetch fields: ``fetched_at``, ``status`` 304, validators)."""
    assert settings.output_dir is not None
    markdown = to_markdown(extracted)
    if not markdown:
        return None  # nothing to show: no empty files
    md_path = markdown_path(settings.output_dir, url)
    write_atomic(md_path, markdown)
    cache_path = (
        str(
            open_cache(settings.cache_dir, settings.cache_layout).path_for(
                url, headers.get("content-type", "")
            )
        )
        if settings.cache_dir is not None
        else None
    )
    record = sidecar(
        url,
        extracted,
        fetched_at=fetched_at,
        headers=headers,
        source=source,
        depth=depth,
        status=status,
        content_hash=body_hash,
        cache_path=cache_path,
    )
    meta_path = sidecar_path(md_path)
    if status == 304 or not _same_except_fetch_time(meta_path, record):
        write_atomic(meta_path, json.dumps(record, ensure_ascii=False, indent=2) + "\n")
    _drop_earlier_files(settings.output_dir, url, md_path)
    return md_path


def _drop_earlier_files(output_dir: Path, url: str, md_path: Path) -> None:
    """Remove the page's files under the name an earlier litecrawl gave them (a path segment
    with ``_``: docs/datasets.md#file-names), once the new ones are written: an output
    directory never holds one page twice. Only files whose sidecar names this URL; then the
    earlier name's directories left empty (the new rule never makes those names, so no other
    page is being written into them)."""
    earlier = earlier_markdown_path(output_dir, url)
    if earlier is None:
        return
    earlier_meta = sidecar_path(earlier)
    try:
        owner: Any = json.loads(earlier_meta.read_text("utf-8"))
    except (OSError, ValueError):
        return  # none there (the usual case), or not ours to judge
    if not (isinstance(owner, dict) and owner.get("url") == url):
        return
    earlier.unlink(missing_ok=True)
    earlier_meta.unlink(missing_ok=True)
    kept = {output_dir, *md_path.parents}
    for directory in earlier.parents:
        if directory in kept or output_dir not in directory.parents:
            break
        try:
            directory.rmdir()
        except OSError:
            break  # not empty: another page's files are there


def _same_except_fetch_time(path: Path, record: Mapping[str, object]) -> bool:
    """True when the sidecar on disk says the same as ``record`` apart from ``fetched_at``:
    an unchanged re-crawl leaves the file (and its ``fetched_at``, the time this content was
    first fetched) alone."""
    try:
        old: Any = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(old, dict):
        return False
    return _without(old, "fetched_at") == _without(record, "fetched_at")


def _without(record: Mapping[str, object], key: str) -> dict[str, object]:
    return {k: v for k, v in record.items() if k != key}


def _iso_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
