"""The index holds a page's content, not its frame: navigation, sidebars, site header and footer
and permalink marks are out of the preview, keywords and searchable text, every content word
is in them (a real crawl of a local documentation-like site)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, db_query, html_page, site_app
from test_semantic import crawl

from litecrawl.index.semantic import find

Serve = Callable[[web.Application], LocalServer]

# the frame of every page: the words in it are on no page's content
FRAME = """
<div class="related" role="navigation"><a href="/">Navigation</a> | <a href="/b">next</a>
 | <a href="/a">previous</a> | Zeppelinworks Handbook</div>
<div class="sphinxsidebar"><h3>Previous topic</h3><p><a href="/a">Quokka husbandry</a></p>
 <h3>Next topic</h3><p><a href="/b">Wombat burrows</a></p></div>
<header class="site">Marmalade portal</header>
<footer>Copyright Glockenspiel Incorporated</footer>
<div id="mdbook-help-container"><div id="mdbook-help-popup"><h2>Keyboard shortcuts</h2>
 <p>Press Xylophone to search the book</p></div></div>
<dialog><p>Subscribe to the Yodeling newsletter</p></dialog>
<div role="alertdialog"><p>We use Kazoo cookies</p></div>
"""
PAGES = {
    "/a": ("Cheese making", "Rennet curdles the warm milk. Whey drains from the curds overnight."),
    "/b": ("Bread baking", "Sourdough rises slowly. Knead the dough and bake it at high heat."),
}
FRAME_WORDS = (
    "zeppelinworks", "quokka", "wombat", "marmalade", "glockenspiel", "previous",
    "xylophone", "yodeling", "kazoo",  # what opens over the page: pop-ups and dialogs
)  # fmt: skip


def frame_site() -> web.Application:
    served = {"/": html_page(FRAME + '<main><a href="/a">cheese</a> <a href="/b">bread</a></main>')}
    for path, (title, text) in PAGES.items():
        body = f'<h1>{title}<a class="headerlink" href="#top">¶</a></h1><p>{text}</p>'
        served[path] = html_page(FRAME + f'<div class="body" role="main">{body}</div>', title)
    return site_app(served)  # type: ignore[arg-type]


def test_frame_words_are_out_of_the_index_and_content_words_in(
    tmp_path: Path, serve: Serve
) -> None:
    site = serve(frame_site())
    db = str(tmp_path / "c.db")
    crawl(db, site)
    stored = {
        url: (json.loads(keywords), preview)
        for url, keywords, preview in db_query(
            db, "SELECT url, keywords, text_preview FROM documents"
        )
    }
    for path, (title, text) in PAGES.items():
        keywords, preview = stored[site.url(path)]
        assert preview == f"{title} {text}"  # no frame, no permalink mark
        assert not set(keywords) & set(FRAME_WORDS), keywords
        for word in text.replace(".", "").split():
            hits = find(db, word, mode="keyword").hits
            assert site.url(path) in [h.url for h in hits], word
    for word in FRAME_WORDS:
        assert find(db, word, mode="keyword").hits == [], word
