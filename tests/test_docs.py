"""The documentation stands on its own: every flag and key is in docs/, every link resolves.

The flags are read from the CLI's own parser and the keys from the config models, so a flag or
key added without a line in docs/configuration.md fails here.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from pydantic import BaseModel

from litecrawl.cli.app import app
from litecrawl.config import CrawlConfig

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIGURATION = DOCS / "configuration.md"
PAGES = sorted([ROOT / "README.md", *DOCS.glob("*.md")])


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(``"sites run"``, click command) for every leaf command of the typer app."""
    subcommands = getattr(command, "commands", None)
    if subcommands is None:
        yield " ".join(path), command
        return
    for name, sub in sorted(subcommands.items()):
        yield from _commands(sub, (*path, name))


COMMANDS = dict(_commands(typer.main.get_command(app)))


def _flags(command: Any) -> list[str]:
    return sorted(
        opt
        for param in command.params
        if getattr(param, "param_type_name", "") == "option"
        for opt in (*param.opts, *param.secondary_opts)
        if opt != "--help"
    )


def _config_keys(model: type[BaseModel] = CrawlConfig, prefix: str = "") -> Iterator[str]:
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            yield from _config_keys(info.annotation, key + ".")  # a table: its keys
        else:
            yield key


def _sections(text: str, level: str) -> list[tuple[str, str]]:
    """(heading, body) of each heading of exactly ``level`` (``"###"``)."""
    parts = re.split(rf"^{level} (.+)$", text, flags=re.MULTILINE)
    return list(zip(parts[1::2], parts[2::2], strict=True))


def _has_flag(text: str, flag: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def test_the_walk_finds_the_cli() -> None:
    # the walk is what the other tests rely on: it must see subcommands and their flags
    assert {"crawl", "seeds add", "sites run", "db copy"} <= set(COMMANDS)
    assert "--any-domain" in _flags(COMMANDS["crawl"])
    assert "-v" in _flags(COMMANDS["crawl"])
    assert {"concurrency.global", "sites.workers", "strategy.args"} <= set(_config_keys())


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_every_flag_of_every_command_is_documented(path: str) -> None:
    """Each command has a section in docs/configuration.md naming each of its flags (or the
    flags every command takes, in the paragraph before the commands' sections)."""
    text = CONFIGURATION.read_text("utf-8")
    commands = text.split("\n## Every command and flag\n", 1)[1].split("\n## ", 1)[0]
    common = commands.split("\n### ", 1)[0]
    mention = re.compile(rf"`(litecrawl )?{re.escape(path)}[ `]")
    own = [body for heading, body in _sections(commands, "###") if mention.search(heading)]
    assert own, f"no '### `litecrawl {path} ...`' section in {CONFIGURATION.name}"
    missing = [
        flag
        for flag in _flags(COMMANDS[path])
        if not any(_has_flag(body, flag) for body in own) and not _has_flag(common, flag)
    ]
    assert not missing, f"litecrawl {path}: {missing} not in {CONFIGURATION.name}"


def test_every_config_key_is_documented() -> None:
    text = CONFIGURATION.read_text("utf-8")
    missing = [key for key in _config_keys() if f"`{key}`" not in text]
    assert not missing, f"config keys not in {CONFIGURATION.name}: {missing}"


def test_no_key_or_flag_is_documented_that_does_not_exist() -> None:
    """The other way round: a key in the keys' table, or a flag in a command's table, that the
    configuration or the command no longer has is a stale line."""
    text = CONFIGURATION.read_text("utf-8")
    keys = text.split("\n## Every key\n", 1)[1].split("\n## ", 1)[0]
    known = set(_config_keys()) | {k.rsplit(".", 1)[0] for k in _config_keys()}
    rows = re.findall(r"^\| `([^`]+)`", keys, flags=re.MULTILINE)
    assert rows, "no keys' table"
    assert not [k for k in rows if k not in known], "keys that do not exist"
    commands = text.split("\n## Every command and flag\n", 1)[1].split("\n## ", 1)[0]
    stale = []
    for heading, body in _sections(commands, "###"):
        paths = [p for p in COMMANDS if re.search(rf"`(litecrawl )?{re.escape(p)}[ `]", heading)]
        assert paths, f"a section for no command: {heading}"
        flags = {f for p in paths for f in _flags(COMMANDS[p])}
        for cell in re.findall(r"^\| ([^|]+)\|", body, flags=re.MULTILINE):
            stale += [f for f in re.findall(r"(?<![\w-])--?[a-z][\w-]*", cell) if f not in flags]
    assert not stale, f"flags no command of their section has: {stale}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _links(page: Path) -> Iterator[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.MULTILINE | re.DOTALL)
    for match in re.finditer(r"\[[^\]\n]*\]\(([^)\s]+)\)", text):
        yield match.group(1)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for link in _links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto: ...
            continue
        target, _, anchor = link.partition("#")
        file = (page.parent / target).resolve() if target else page
        if not file.exists():
            broken.append(link)
        elif anchor and file.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", file.read_text("utf-8"), flags=re.MULTILINE)
            if anchor not in {_slug(h) for h in headings}:
                broken.append(link)
    assert not broken, f"{page.relative_to(ROOT)}: links to nothing: {broken}"


# A reference to a design document that is not in this repository: "seed 000", "003's keys",
# "(001)", "seed section 9", "Section 4:" (the designs' sections; RFC sections are fine).
_SEED_REFERENCE = re.compile(
    r"\b[Ss]eeds? 00\d|\b[Ss]eed \d{3}|\b00[0-4]'s\b|(?<=[(\s])00[0-4][:)]|\b[Ss]eed section"
    r"|(?<!RFC \d{4} )\b[Ss]ections? \d|§ ?\d|^\W*00[0-4]:"
)


def test_the_seed_pattern_finds_references() -> None:
    found = [
        "seed 000 section 4",
        "Seed 002's site queue",
        "003's keys",
        "a token bucket (001), off",
        "(``--rate-limit``, 001);",
        "(seed section 9's UPSERT)",
        "# Section 5: redirects.",
        "(seed 000 §4)",
        "(003: 500 ms)",
        "# 004: a strategy's meta",
    ]
    kept = [
        "seed URLs",
        "RFC 9309 section 2.3.1",
        "max(x, 0.001)",
        "le=1_000)",
        "at 30,000)",
        "the seed (it sets scope)",
        'text.append(f"   § {hit.section}")',
        'PERMALINK_MARKS = frozenset({"¶", "§", "#"})',
    ]
    assert all(_SEED_REFERENCE.search(text) for text in found)
    assert not any(_SEED_REFERENCE.search(text) for text in kept)


def test_no_module_points_to_a_design_document_outside_the_repository() -> None:
    """Comments point to docs/ (where the decisions are written), never to the seeds."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "src").rglob("*.py"))
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if _SEED_REFERENCE.search(line)
    ]
    assert not found, "\n".join(found)


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each comment and docstring of a Python file: where it explains
    itself (its string data, a test page's text, may say anything)."""
    source = path.read_text("utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = node.body[0] if node.body else None
            if (
                isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                for offset, line in enumerate(doc.value.value.splitlines()):
                    yield doc.lineno + offset, line


def test_prose_finds_comments_and_docstrings(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Module (seed 001)."""\nPAGE = "Section 3 overview"  # after seed 002\n\n\n'
        'def f() -> None:\n    """Seed 003\'s keys."""\n',
        "utf-8",
    )
    found = [(n, t) for n, t in _prose(module) if _SEED_REFERENCE.search(t)]
    assert [n for n, _ in found] == [2, 1, 6]


def test_no_test_or_benchmark_points_to_a_design_document_outside_the_repository() -> None:
    """The tests' and benchmarks' comments and docstrings too (this file's examples aside)."""
    files = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {text.strip()}"
        for path in sorted(files)
        if path.resolve() != Path(__file__).resolve()
        for number, text in _prose(path)
        if _SEED_REFERENCE.search(text)
    ]
    assert not found, "\n".join(found)


# A comment's pointer to a section of a docs page: docs/crawling.md, "Logs", docs/x.md#anchor or
# docs/python-api.md, step 9 (its "### 9. ..." heading)
_SECTION_POINTER = re.compile(r'docs/([\w-]+\.md)(?:, "([^"]+)"|#([\w-]+)|, step (\d+))')


def _headings(page: Path) -> list[str]:
    return re.findall(r"^#+ (.+)$", page.read_text("utf-8"), flags=re.MULTILINE)


def test_pointers_to_a_section_of_the_docs_find_it() -> None:
    """A comment that sends the reader to a section (by its heading, as written, or its
    anchor) sends them to one that exists: a heading renamed leaves no pointer behind."""
    example = '(docs/crawling.md, "Logs"; docs/scaling.md#workers; docs/python-api.md, step 9)'
    assert _SECTION_POINTER.findall(example) == [
        ("crawling.md", "Logs", "", ""),
        ("scaling.md", "", "workers", ""),
        ("python-api.md", "", "", "9"),
    ]
    files = [*(ROOT / "src").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    files += (ROOT / "bench").rglob("*.py")
    broken = []
    for path in sorted(files):
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            for page, heading, anchor, step in _SECTION_POINTER.findall(line):
                doc = DOCS / page
                headings = _headings(doc) if doc.exists() else []
                if step:
                    found = any(h.startswith(f"{step}. ") for h in headings)
                else:
                    found = heading in headings if heading else anchor in map(_slug, headings)
                if not found and path.resolve() != Path(__file__).resolve():
                    broken.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_paths_named_in_the_docs_exist(page: Path) -> None:
    """`engine.py`, `store/sqlite/claims.py`, `tests/conftest.py`: a file the text sends the
    reader to exists (relative to the repository, src/ or src/litecrawl/)."""
    named = set(re.findall(r"`((?:[\w.-]+/)*[\w-]+\.py)`", page.read_text("utf-8")))
    bases = (ROOT, ROOT / "src", ROOT / "src" / "litecrawl")
    missing = sorted(p for p in named if not any((base / p).exists() for base in bases))
    assert not missing, f"{page.relative_to(ROOT)} names files that do not exist: {missing}"


def test_the_readme_links_every_docs_page() -> None:
    """The README is the way in: a page of docs/ it does not link is a page nobody finds."""
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(ROOT / "README.md")}
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert not missing, f"docs pages the README does not link: {missing}"
