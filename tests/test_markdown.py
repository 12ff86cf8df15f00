"""litecrawl.extract.markdown: Markdown rendering and atomic writes (the output tree layout:
test_output_files.py)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.extract import (
    Extracted,
    extract_page,
    markdown_path,
    sidecar_path,
    to_markdown,
    write_atomic,
)

# --- to_markdown --------------------------------------------------------------------------------

PAGE = b"""<html><head><title>Guide</title><script>var hidden = 1;</script></head><body>
<nav><a href="/">Home</a></nav>
<h2>Install</h2><p>Run <code>uv sync</code> then read <a href="/docs/intro">the intro</a>.</p>
<ul><li>fast</li><li>small</li></ul>
<h3>Notes</h3><p>Second&nbsp;paragraph with <strong>bold</strong> text.</p>
</body></html>"""


def test_fullpage_markdown_uses_atx_headings_and_absolute_links() -> None:
    page = extract_page(PAGE, "https://example.com/guide", "text/html", extra_remove=["nav"])
    md = to_markdown(page)
    assert md.startswith("# Guide\n\n## Install\n\n")
    assert "### Notes" in md
    assert "[the intro](https://example.com/docs/intro)" in md
    assert "- fast\n- small" in md
    assert "**bold**" in md
    assert "hidden" not in md and "Home" not in md
    assert "\n\n\n" not in md and md.endswith("\n") and not md.endswith("\n\n")


def test_title_heading_is_not_repeated() -> None:
    page = extract_page(b"<title>Same</title><h1>Same</h1><p>Body text.</p>", "u", "text/html")
    md = to_markdown(page)
    assert md.count("Same") == 1
    assert md.startswith("# Same\n\nBody text.")


def test_title_heading_after_the_navigation_is_not_repeated() -> None:
    """DocBook's pages (Valgrind's manual) open with a Prev/Up/Next table, then the title's
    heading: the title stands once, where the page puts it."""
    nav = '<div class="nav"><table><tr><td><a href="a.html">Prev</a></td></tr></table></div>'
    html = f"<title>5. Cachegrind</title>{nav}<pre><code># not a heading</code></pre>"
    page = extract_page(f"{html}<h1>5. Cachegrind</h1><p>Body.</p>".encode(), "u", "text/html")
    md = to_markdown(page)
    assert md.count("5. Cachegrind") == 1, md
    assert "# 5. Cachegrind\n\nBody." in md
    other = extract_page(f"{html}<h1>Valgrind</h1><p>Body.</p>".encode(), "u", "text/html")
    assert to_markdown(other).startswith("# 5. Cachegrind\n\n")  # another first heading


def test_markdown_of_empty_and_title_only_pages() -> None:
    assert to_markdown(Extracted(url="u")) == ""
    assert to_markdown(Extracted(url="u", title="Only a title")) == "# Only a title\n"


def test_too_deep_markup_falls_back_to_text() -> None:
    deep = "<body>" + "<div>" * 3000 + "deep" + "</div>" * 3000 + "</body>"
    page = Extracted(url="u", title="T", text="deep", html_for_markdown=deep)
    assert to_markdown(page) == "# T\n\ndeep\n"


# --- write_atomic ---------------------------------------------------------------------------------


def test_write_atomic_writes_and_skips_identical_content(tmp_path: Path) -> None:
    target = tmp_path / "example.com" / "docs" / "intro.md"
    assert write_atomic(target, "# Intro\n\nHällo €\n") is True
    assert target.read_text(encoding="utf-8") == "# Intro\n\nHällo €\n"

    old = 1_600_000_000_000_000_000
    os.utime(target, ns=(old, old))
    inode = target.stat().st_ino
    assert write_atomic(target, "# Intro\n\nHällo €\n") is False
    assert target.stat().st_mtime_ns == old
    assert target.stat().st_ino == inode

    assert write_atomic(target, "# Intro\n\nchanged\n") is True
    assert target.read_text(encoding="utf-8") == "# Intro\n\nchanged\n"
    assert target.stat().st_mtime_ns != old
    assert sorted(p.name for p in target.parent.iterdir()) == ["intro.md"]  # no temp files left


def test_write_atomic_same_size_different_content(tmp_path: Path) -> None:
    target = tmp_path / "f.md"
    assert write_atomic(target, "aaaa") is True
    assert write_atomic(target, "bbbb", fsync=True) is True
    assert target.read_text() == "bbbb"


def test_recrawl_of_unchanged_page_writes_nothing(tmp_path: Path) -> None:
    url = "https://example.com/guide/"
    for expected in (True, False):
        page = extract_page(PAGE, url, "text/html")
        md_path = markdown_path(tmp_path, url)
        assert write_atomic(md_path, to_markdown(page)) is expected
        assert write_atomic(sidecar_path(md_path), json.dumps({"url": url}) + "\n") is expected
    assert md_path == tmp_path / "example.com" / "guide" / "index.md"
    assert sidecar_path(md_path).exists()


# --- fidelity on real-shaped pages (tests/data/html) --------------------------------------------

DATA = Path(__file__).parent / "data" / "html"
DOCS_URL = "https://docs.example.org/docs/2.4/guide/frontier.html"


def docs_markdown(**kwargs: object) -> str:
    raw = (DATA / "docs_page.html").read_bytes()
    return to_markdown(extract_page(raw, DOCS_URL, "text/html", **kwargs))  # type: ignore[arg-type]


def test_docs_page_markdown_keeps_structure() -> None:
    md = docs_markdown(extra_remove=[".ads", ".related", ".footer", "iframe"])
    lines = md.splitlines()
    assert "## Queue order" in lines and "## Settings" in lines and "### Example" in lines
    # nested list: the inner items indented under their parent item
    outer = lines.index("- breadth first, the default")
    inner = next(line for line in lines[outer:] if "by depth, then by discovery time" in line)
    assert inner.startswith("  - ")
    assert "1. Pick an order." in lines and "2. Set `frontier.order`." in lines
    # a GFM table: header, delimiter row, body rows
    header = next(i for i, line in enumerate(lines) if line.startswith("| Setting"))
    assert re.fullmatch(r"\| -+ \| -+ \| -+ \|", lines[header + 1])
    assert re.match(r"\| max_depth +\| 2 +\| links followed from the seeds +\|", lines[header + 3])
    # fenced code in the language the page names (Sphinx: div.highlight-python; code.language-sql)
    assert '```python\nfrom crawlkit import Frontier\nfrontier = Frontier(order="bfs")\n```' in md
    assert "```sql\nSELECT url FROM frontier ORDER BY depth LIMIT 10;\n```" in md
    # relative links and images made absolute against the page URL
    assert "(https://docs.example.org/docs/2.4/tutorial/first-crawl.html)" in md
    assert "(https://docs.example.org/docs/2.4/reference/settings.html#frontier)" in md
    image = "https://docs.example.org/docs/2.4/_images/frontier-diagram.png"
    assert f"![Frontier diagram]({image})" in md
    # extra_remove and the always-removed elements are gone
    for gone in ("Crawlkit Cloud", "Built with Sphinx", "genindex", "video.example.net"):
        assert gone not in md
    assert "DOCUMENTATION_OPTIONS" not in md and ".sidebar" not in md


def test_docs_page_markdown_without_filters_keeps_everything() -> None:
    md = docs_markdown()
    for kept in (
        "Crawlkit Cloud",
        "Built with Sphinx",
        "(https://docs.example.org/docs/2.4/genindex.html)",
    ):
        assert kept in md
    assert "DOCUMENTATION_OPTIONS" not in md  # scripts never reach the Markdown


@pytest.mark.parametrize("engine", ["trafilatura", "resiliparse"])
def test_article_markdown_from_each_engine(engine: str) -> None:
    md = docs_markdown(main_article=True, engine=engine)
    assert "## Queue order" in md.splitlines()
    assert "SELECT url FROM frontier ORDER BY depth LIMIT 10;" in md
    assert "(https://docs.example.org/docs/2.4/tutorial/first-crawl.html)" in md
    assert "Crawlkit Cloud" not in md and "Built with Sphinx" not in md


@pytest.mark.parametrize(
    ("markup", "fence"),
    [
        ('<pre><code class="language-rust">fn main() {}</code></pre>', "```rust"),
        ('<pre><code class="hljs lang-js">let x = 1;</code></pre>', "```js"),
        (
            '<div class="highlight-python notranslate"><div><pre>x = 1</pre></div></div>',
            "```python",
        ),
        ('<div class="highlight highlight-source-go"><pre>x := 1</pre></div>', "```go"),
        ('<pre data-lang="sql">SELECT 1;</pre>', "```sql"),
        ('<pre class="brush: bash; gutter: false">ls -l</pre>', "```bash"),
        ('<pre class="sourceCode haskell"><code>main = pure ()</code></pre>', "```haskell"),
        ('<div class="highlight-default"><pre>plain block</pre></div>', "```\n"),
        ('<pre class="programlisting">no language named</pre>', "```\n"),
    ],
)
def test_code_block_language_from_the_markup(markup: str, fence: str) -> None:
    page = extract_page(
        f"<html><body><p>Intro.</p>{markup}</body></html>".encode(), "https://e.org/", "text/html"
    )
    md = to_markdown(page)
    assert fence in md, md
    assert md.count("```") == 2  # one fenced block, the code's text inside it


def test_empty_list_items_are_dropped_and_code_is_left_as_it_is() -> None:
    # Sphinx's navigation bar: items holding only a search form, an empty switcher, a spacer
    page = extract_page(
        b"""<title>Nav</title><body><ul>
        <li><a href="/genindex.html">index</a> |</li>
        <li class="right"><form><input type="search" name="q"/><input type="submit"/></form></li>
        <li><span class="language_switcher_placeholder"></span></li>
        <li>modules</li></ul>
        <ol><li></li><li>first step</li></ol>
        <pre><code>-
1.
+</code></pre></body>""",
        "https://docs.example.org/x.html",
        "text/html",
    )
    md = to_markdown(page)
    lines = md.splitlines()
    assert "- [index](https://docs.example.org/genindex.html) |" in lines and "- modules" in lines
    assert "first step" in md
    assert "```\n-\n1.\n+\n```" in md  # the same lines inside a code block stay
    outside = md.split("```")[0].splitlines()
    assert not [line for line in outside if line.strip() in ("-", "1.", "2.", "+", "*")], md


def test_permalink_marks_and_code_block_controls_are_left_out() -> None:
    # Sphinx's "¶" after a heading; Node.js's "#" (whose id is the section's anchor), and its
    # code blocks: an ES module and a CommonJS variant in one <pre>, a checkbox, a copy button
    page = extract_page(
        b"""<title>fs</title><body>
        <h2 id="x">Sphinx heading<a class="headerlink" href="#x" title="Link">\xc2\xb6</a></h2>
        <p>Words of the Sphinx section, and a link <a href="#x">back to it</a>.</p>
        <h2>File system<span><a class="mark" href="#file-system" id="file-system">#</a></span></h2>
        <p>The fs module reads and writes files, as the examples below show.</p>
        <pre><input class="js-flavor-selector" type="checkbox"><code class="language-js mjs">\
import * as fs from 'node:fs';</code><code class="language-js cjs">\
const fs = require('node:fs');</code><button class="copy-button">copy</button></pre>
        </body>""",
        "https://nodejs.example/api/fs.html",
        "text/html",
        want_sections=True,
    )
    md = to_markdown(page)
    lines = md.splitlines()
    assert "## Sphinx heading" in lines and "## File system" in lines, md
    assert "\xb6" not in md and "[#]" not in md and "copy" not in md, md
    assert "[back to it](https://nodejs.example/api/fs.html#x)" in md  # a link in the text stays
    # the two variants are two blocks, each a program of its own, in the page's order
    mjs = "```js\nimport * as fs from 'node:fs';\n```"
    cjs = "```js\nconst fs = require('node:fs');\n```"
    assert f"{mjs}\n\n{cjs}" in md, md
    assert "copy" not in page.text and "\xb6" not in page.text
    assert "import * as fs from 'node:fs';\nconst fs = require('node:fs');" in page.text
    places = [place for section in page.sections for place in section.places]
    assert [anchor for _, heading, anchor in places if heading == "File system"] == ["file-system"]


def test_icon_links_and_script_links_are_left_out_of_the_markdown() -> None:
    # The Erlang/OTP docs: a paperclip and a pencil drawn by CSS after each heading (links with
    # no words, whose title the converter would write as their text) and types linked through
    # javascript:erlhref(...), a script's call and no place to go
    page = extract_page(
        b"""<title>Erlang -- lists</title><body>
        <h3 id="all-2"><a href="#all-2" title="Link to this place!"><span class="paperclip">\
</span></a><a href="https://github.com/erlang/otp/edit/lists.xml#L65" title="Fix it!">\
<span class="pencil"></span></a> all(Pred, List) -&gt; <span class="bold_code"><a \
href="javascript:erlhref('../../','erts','erlang.html#type-boolean');">boolean()</a></span></h3>
        <p>Returns true if Pred(Elem) returns true for all elements, as <a href="#any-2">any</a>
        does for one; <a href="/logo"><img src="logo.png" alt="logo"></a> stays.</p>
        </body>""",
        "https://erlang.example/lists.html",
        "text/html",
    )
    md = to_markdown(page)
    assert "### all(Pred, List) -> boolean()" in md.splitlines(), md
    assert "Link to this place" not in md and "Fix it" not in md and "javascript" not in md, md
    assert "[any](https://erlang.example/lists.html#any-2)" in md  # a link with words stays
    assert "[![logo](https://erlang.example/logo.png)](https://erlang.example/logo)" in md, md


def test_links_inside_a_code_block_are_written_as_their_text() -> None:
    # rustdoc's (and Javadoc's) signatures link every type: a fenced block cannot hold a link,
    # so its Markdown would show "[RandomState](https://...)" inside the code
    page = extract_page(
        b"""<title>HashMap</title><body><p>A hash map, with its declaration below.</p>
        <pre class="rust item-decl"><code>pub struct HashMap&lt;K, V, S = \
<a class="struct" href="../hash/struct.RandomState.html">RandomState</a>&gt; { /* private */ }\
</code></pre><p>See <a href="struct.HashMap.html#method.new"><code>new</code></a>.</p></body>""",
        "https://doc.example/std/collections/struct.HashMap.html",
        "text/html",
        want_links=True,
    )
    md = to_markdown(page)
    assert "pub struct HashMap<K, V, S = RandomState> { /* private */ }" in md, md
    assert "](https://doc.example/std/hash/struct.RandomState.html" not in md.split("See")[0]
    # outside code, links stay links; and the crawl still follows the one in the code
    assert "[`new`](https://doc.example/std/collections/struct.HashMap.html#method.new)" in md
    assert page.links is not None
    assert "../hash/struct.RandomState.html" in page.links.links  # as written, resolved later


def test_a_button_beside_a_headings_words_is_left_out() -> None:
    # rustdoc: "Copy item path" after every item's name; an accordion's question is all button
    page = extract_page(
        b"""<title>read_to_string</title><body><main>
        <h1>Function <span>read_to_string</span><button id="copy-path"
        title="Copy item path to clipboard">Copy item path</button></h1>
        <p>Reads the entire contents of a file into a string, as the examples show.</p>
        <h2 class="accordion-header"><button class="accordion-button">Is it atomic?</button></h2>
        <p>No: another process may write to the file while it is read.</p></main></body>""",
        "https://doc.example/std/fs/fn.read_to_string.html",
        "text/html",
        want_sections=True,
    )
    md = to_markdown(page)
    assert "# Function read_to_string\n" in md and "Copy item path" not in md, md
    assert "## Is it atomic?" in md, md
    assert "Copy item path" not in page.text and "Is it atomic?" in page.text
    assert page.sections[0].heading == "Function read_to_string"  # what search results show


def test_code_wrapped_a_line_at_a_time_stays_one_block() -> None:
    # a highlighter's <code> a line, naming no language: one program, one fenced block
    page = extract_page(
        b"<title>t</title><body><p>Run these two lines to build the program first.</p>"
        b"<pre><code>make</code>\n<code>make install</code></pre></body>",
        "https://example.com/build",
        "text/html",
    )
    md = to_markdown(page)
    assert md.count("```") == 2 and "make\nmake install" in md, md


def _plain_tidy(markdown: str) -> str:
    """_tidy as first written: every trailing run of spaces and tabs cut by a regex."""
    from litecrawl.extract.markdown import _without_empty_items

    markdown = re.sub(r"[ \t]+\n", "\n", markdown.replace("\r\n", "\n"))
    return re.sub(r"\n{3,}", "\n\n", _without_empty_items(markdown)).strip()


_MARKDOWN_BITS = [" ", "\t", "\n", "\n\n\n", " \n\t\n", "\r", "\r\n", "-", "1.", "* "]
_MARKDOWN_BITS += ["```", "~~~", "x", "\u00a0"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_MARKDOWN_BITS)).map("".join))
def test_property_tidy_cuts_trailing_blanks_as_the_regex_did(markdown: str) -> None:
    from litecrawl.extract.markdown import _tidy

    assert _tidy(markdown) == _plain_tidy(markdown)
