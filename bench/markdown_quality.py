"""Dataset quality of ``--output`` on a real documentation site: Markdown files against their HTML.

    uv run python bench/markdown_quality.py                         # Python 3.11's docs (Sphinx)
    uv run python bench/markdown_quality.py --site /usr/share/doc/postgresql-doc-15/html

Serves ``--site`` with nginx (bench/run.py's), crawls it from ``index.html`` once per mode
(full page ``--output``; ``--output --main-article`` with each engine), then parses every
Markdown file back with markdown-it-py (CommonMark + GFM tables) and compares it with the HTML
file it came from:

- files: documents that share a Markdown file with another document (one is lost);
- code: the page's ``<pre>`` blocks found as fenced code blocks (same text, whitespace aside);
  of those whose markup names a language (``language-x``, ``lang-x``, Sphinx's
  ``highlight-x`` but not ``highlight-default``), the share fenced with that language;
- links: links and images of the Markdown that are absolute; of those to the crawled site, the
  share whose file exists and whose ``#fragment`` is an ``id`` (or ``<a name>``) in that file;
- tables: the page's data tables (2+ rows and 2+ columns, no table inside, not a navigation
  bar) found as GFM tables with the same first row;
- dates and authors: the sidecar's against what the markup says (``<meta>``, JSON-LD,
  ``<time>``, a "Last updated on" footer, "Author:" fields); "wrong" = a value the markup does
  not hold;
- index text: pages whose indexed text holds Markdown link syntax, or "http" among its keywords.

In main-article mode, code blocks and tables outside the article are not counted: a block counts
when its text is in the page's main element (``role="main"``, ``<main>``, ``<article>``) or, on
pages without one, anywhere in ``<body>``.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

import lxml.html
from lxml import etree
from markdown_it import MarkdownIt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import CRAWL_FLAGS, LITECRAWL, Nginx, timed

PORT = 8383
MODES: dict[str, list[str]] = {
    "--output": [],
    **{
        f"--output --main-article ({engine})": [
            "--main-article", "--config", f"{{work}}/{engine}.toml"
        ]
        for engine in ("trafilatura", "resiliparse")
    },
}  # fmt: skip
_NOT_LANGUAGES = {"default", "none", "text", "plain", "plaintext", "nohighlight"}
_LANG_CLASS = re.compile(r"^(?:language-|lang-|highlight-)([\w+#.-]+)$")
_UPDATED = re.compile(r"Last updated on ([A-Z][a-z]+ \d{1,2}, \d{4})")


def squeeze(text: str) -> str:
    return "".join(text.split())


@dataclass
class Tally:
    pages: int = 0
    shared_files: int = 0
    pre: int = 0
    pre_fenced: int = 0
    pre_named: int = 0
    pre_named_ok: int = 0
    links: int = 0
    links_absolute: int = 0
    links_local: int = 0
    links_resolve: int = 0
    tables: int = 0
    tables_kept: int = 0
    dates_markup: int = 0
    dates_found: int = 0
    dates_wrong: int = 0
    authors_markup: int = 0
    authors_found: int = 0
    authors_wrong: int = 0
    text_md_syntax: int = 0
    keyword_http: int = 0
    article_pages: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)

    def example(self, kind: str, text: str) -> None:
        self.examples.setdefault(kind, [])
        if len(self.examples[kind]) < 3:
            self.examples[kind].append(text)


class Site:
    """The served files: which exist, and the ids each holds (for ``#fragment`` links)."""

    def __init__(self, root: Path, base: str) -> None:
        self.root, self.base = root, base
        self._ids: dict[Path, set[str]] = {}

    def file_of(self, url: str) -> Path | None:
        path = unquote(urlsplit(url).path).lstrip("/")
        target = self.root / path
        if target.is_dir():
            target = target / "index.html"
        return target if target.is_file() else None

    def ids(self, path: Path) -> set[str]:
        if path not in self._ids:
            found: set[str] = set()
            if path.suffix in (".html", ".htm"):
                tree = lxml.html.fromstring(path.read_bytes())
                found = {str(v) for v in tree.xpath("//@id | //a/@name")}
            self._ids[path] = found
        return self._ids[path]


def _languages(pre: etree._Element) -> str | None:
    candidates = [pre]
    code = pre.find("code")
    if code is not None:
        candidates.insert(0, code)
    node = pre.getparent()
    for _ in range(2):
        if node is None:
            break
        candidates.append(node)
        node = node.getparent()
    for el in candidates:
        for word in (el.get("class") or "").split():
            match = _LANG_CLASS.match(word)
            if match:
                lang = match[1].lower()
                return None if lang in _NOT_LANGUAGES else lang
    return None


def _main_element(tree: etree._Element) -> etree._Element:
    for xp in ("//*[@role='main']", "//main", "//article", "//body"):
        found = tree.xpath(xp)
        if found:
            return found[0]  # type: ignore[no-any-return]
    return tree


def _data_tables(scope: etree._Element) -> list[list[str]]:
    """The first row (squeezed cell texts) of each data table."""
    out = []
    for table in scope.iter("table"):
        summary = (table.get("summary") or "").lower()
        if "navigation" in summary or table.get("role") == "presentation":
            continue
        if table.find(".//table") is not None:
            continue
        rows = [
            tr
            for tr in table.iter("tr")
            if tr.find(".//td") is not None or tr.find(".//th") is not None
        ]
        if len(rows) < 2:
            continue
        cells = [squeeze(c.text_content()) for c in rows[0] if c.tag in ("td", "th")]
        if len(cells) < 2:
            continue
        out.append(cells)
    return out


def _markup_date(tree: etree._Element, source: str) -> str | None:
    for meta in tree.iter("meta"):
        key = (meta.get("property") or meta.get("name") or "").lower()
        if key in ("article:published_time", "date", "dc.date", "datepublished"):
            return (meta.get("content") or "")[:10] or None
    for time_el in tree.iter("time"):
        if time_el.get("datetime"):
            return str(time_el.get("datetime"))[:10]
    match = _UPDATED.search(source)
    if match:
        return datetime.strptime(match[1], "%B %d, %Y").date().isoformat()
    return None


def _markup_author(tree: etree._Element) -> str | None:
    for meta in tree.iter("meta"):
        if (meta.get("name") or "").lower() == "author" and meta.get("content"):
            return str(meta.get("content"))
    for dt in tree.xpath("//dl[contains(@class, 'field-list')]/dt"):
        if dt.text_content().strip().rstrip(":").lower() in ("author", "authors"):
            dd = dt.getnext()
            return " ".join(dd.text_content().split()) if dd is not None else None
    return None


def _compare(md: str, source: bytes, url: str, meta: dict[str, object], site: Site,
             article: bool, t: Tally, md_parser: MarkdownIt) -> None:  # fmt: skip
    tree = lxml.html.fromstring(source)
    text_source = source.decode("utf-8", "replace")
    tokens = md_parser.parse(md)
    fences = [
        (squeeze(tok.content), tok.info.strip().lower()) for tok in tokens if tok.type == "fence"
    ]
    fence_text = "\x00".join(f for f, _ in fences)
    md_squeezed = squeeze(md)
    scope = _main_element(tree) if article else tree
    for pre in scope.iter("pre"):
        body = squeeze(pre.text_content())
        if not body:
            continue
        t.pre += 1
        hit = body in fence_text
        t.pre_fenced += hit
        if not hit:
            t.example("pre lost", f"{url}: {body[:60]}")
        lang = _languages(pre)
        if lang:
            t.pre_named += 1
            ok = any(body in f and info.split()[:1] == [lang] for f, info in fences)
            t.pre_named_ok += ok
            if not ok:
                t.example("language lost", f"{url}: {lang} {body[:40]}")
    for tok in tokens:
        for child in [tok, *(tok.children or [])]:
            href = (
                child.attrGet("href")
                if child.type == "link_open"
                else (child.attrGet("src") if child.type == "image" else None)
            )
            if not isinstance(href, str):
                continue
            t.links += 1
            absolute = bool(re.match(r"^(?:https?|mailto|ftp):", href))
            t.links_absolute += absolute
            if not absolute:
                t.example("relative link", f"{url}: {href}")
                continue
            if not href.startswith(site.base):
                continue
            t.links_local += 1
            target = site.file_of(href)
            fragment = unquote(urlsplit(href).fragment)
            ok = target is not None and (not fragment or fragment in site.ids(target))
            t.links_resolve += ok
            if not ok:
                t.example("link does not resolve", f"{url}: {href}")
    md_tables = []
    for i, tok in enumerate(tokens):
        if tok.type == "tr_open":
            row = []
            for inner in tokens[i + 1 :]:
                if inner.type == "tr_close":
                    break
                if inner.type == "inline":
                    row.append(squeeze(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", inner.content)))
            md_tables.append(row)
    for first_row in _data_tables(scope):
        t.tables += 1
        wanted = [re.sub(r"[`*_\\]", "", c) for c in first_row]
        kept = any(len(r) == len(wanted) and [re.sub(r"[`*_\\]", "", c) for c in r] == wanted
                   for r in md_tables)  # fmt: skip
        t.tables_kept += kept
        if not kept:
            t.example("table lost", f"{url}: {first_row[:3]}")
    date, author = _markup_date(tree, text_source), _markup_author(tree)
    got_date, got_author = meta.get("date"), meta.get("author")
    t.dates_markup += date is not None
    t.dates_found += got_date is not None
    if got_date is not None and got_date != date:
        t.dates_wrong += 1
        t.example("wrong date", f"{url}: {got_date} (markup: {date})")
    t.authors_markup += author is not None
    t.authors_found += got_author is not None
    if got_author is not None and squeeze(str(got_author)) not in squeeze(tree.text_content()):
        t.authors_wrong += 1
        t.example("wrong author", f"{url}: {got_author} (markup: {author})")
    del md_squeezed


def _crawl(work: Path, site_url: str, flags: list[str]) -> tuple[Path, Path, dict[str, float]]:
    db, out = work / "q.db", work / "out"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if out.exists():
        import shutil

        shutil.rmtree(out)
    extra = [f.format(work=work) for f in flags]
    cmd = [
        *LITECRAWL,
        "crawl",
        site_url,
        "--db",
        str(db),
        "--output",
        str(out),
        *CRAWL_FLAGS,
        *extra,
    ]
    return db, out, timed(cmd)


def _evaluate(site: Site, db: Path, article: bool) -> Tally:
    t = Tally()
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT d.url, d.markdown_path, d.extraction_mode, d.keywords, r.text FROM documents d"
        " LEFT JOIN resources r ON r.id = d.resource_id WHERE d.markdown_path IS NOT NULL"
    ).fetchall()
    conn.close()
    per_file = Counter(r[1] for r in rows)
    md_parser = MarkdownIt("commonmark").enable("table")
    for url, md_path, mode, keywords, text in rows:
        source_file = site.file_of(url)
        if source_file is None or source_file.suffix not in (".html", ".htm"):
            continue
        t.pages += 1
        t.shared_files += per_file[md_path] > 1
        t.article_pages += mode == "article"
        if "http" in json.loads(keywords or "[]"):
            t.keyword_http += 1
        if text and re.search(r"\]\((?:https?:|/|#)", text):
            t.text_md_syntax += 1
            t.example("markdown in text", url)
        md_file = Path(md_path)
        meta_file = md_file.with_name(md_file.name[: -len(".md")] + ".meta.json")
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
        if meta.get("url") != url:
            continue  # the file holds another document (counted in shared_files)
        _compare(md_file.read_text(), source_file.read_bytes(), url, meta, site,
                 article and mode == "article", t, md_parser)  # fmt: skip
    return t


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "n/a (0)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--modes", default=",".join(MODES), help="of: " + ", ".join(MODES))
    parser.add_argument("--examples", action="store_true", help="print a few failures of each kind")
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}/"
    site = Site(args.site, base)
    nginx = Nginx(args.site, args.port)
    results: dict[str, tuple[Tally, dict[str, float]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for engine in ("trafilatura", "resiliparse"):
                (work / f"{engine}.toml").write_text(f'[extract]\nengine = "{engine}"\n')
            for mode in (m.strip() for m in args.modes.split(",")):
                db, _, timing = _crawl(work, base + "index.html", MODES[mode])
                tally = _evaluate(site, db, "--main-article" in mode)
                results[mode] = (tally, timing)
                print(f"{mode}: {tally.pages} pages, {timing['wall']:.1f} s", flush=True)
                if args.examples:
                    for kind, items in tally.examples.items():
                        for item in items:
                            print(f"  {kind}: {item}")
    finally:
        nginx.stop()
    names = list(results)
    print(f"\nsite: {args.site}\n")
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, cells in _rows([results[n][0] for n in names]):
        print(f"| {label} | " + " | ".join(cells) + " |")


def _rows(tallies: list[Tally]) -> list[tuple[str, list[str]]]:
    return [
        ("pages (article mode)", [f"{t.pages} ({t.article_pages})" for t in tallies]),
        ("documents sharing a file", [str(t.shared_files) for t in tallies]),
        ("`<pre>` blocks fenced", [_pct(t.pre_fenced, t.pre) for t in tallies]),
        (
            "... with the language the page names",
            [_pct(t.pre_named_ok, t.pre_named) for t in tallies],
        ),
        ("links absolute", [_pct(t.links_absolute, t.links) for t in tallies]),
        (
            "site links resolving (file and fragment)",
            [_pct(t.links_resolve, t.links_local) for t in tallies],
        ),
        ("data tables kept as tables", [_pct(t.tables_kept, t.tables) for t in tallies]),
        (
            "dates: in markup / found / wrong",
            [f"{t.dates_markup} / {t.dates_found} / {t.dates_wrong}" for t in tallies],
        ),
        (
            "authors: in markup / found / not in the page",
            [f"{t.authors_markup} / {t.authors_found} / {t.authors_wrong}" for t in tallies],
        ),
        ("indexed text with Markdown links", [str(t.text_md_syntax) for t in tallies]),
        ('pages with "http" among keywords', [str(t.keyword_http) for t in tallies]),
    ]


if __name__ == "__main__":
    main()
