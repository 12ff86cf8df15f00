"""CSS selectors -> compiled XPath, for the ``extra_remove`` filter.

``cssselect`` is used when it is importable. Without it, a small built-in translator handles what
crawl configs use in practice: type selectors and ``*``, ``#id``, ``.class``, attribute selectors
(``[a]``, ``[a=v]``, ``~=``, ``|=``, ``^=``, ``$=``, ``*=``), compound selectors (``div.ads#top``),
the combinators descendant (space), child (``>``), adjacent (``+``) and sibling (``~``), and
comma-separated groups. A selector it cannot read (pseudo-classes, escapes) is ignored rather than
raising: a bad config entry must not break extraction.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from lxml import etree

__all__ = ["HAVE_CSSSELECT", "compile_selector", "css_to_xpath", "select_all"]

try:
    _cssselect: Any = importlib.import_module("cssselect")
except ImportError:  # pragma: no cover - depends on the environment
    _cssselect = None

HAVE_CSSSELECT = _cssselect is not None

_IDENT = r"-?[_a-zA-Z\u00a0-\uffff][-\w\u00a0-\uffff]*"
_TOKEN = re.compile(
    rf"""
    (?P<ws>\s*(?P<comb>[>+~])\s*|\s+)
  | (?P<tag>{_IDENT}|\*)
  | \#(?P<id>-?[-\w\u00a0-\uffff]+)
  | \.(?P<cls>{_IDENT})
  | \[\s*(?P<attr>{_IDENT})\s*
      (?:(?P<op>[~|^$*]?=)\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[-\w\u00a0-\uffff]+))\s*)?
    \]
    """,
    re.VERBOSE,
)


def _literal(value: str) -> str:
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    parts = value.split("'")
    return "concat(" + ', "\'", '.join(f"'{p}'" for p in parts) + ")"


def _word_in(attr: str, value: str) -> str:
    return f"contains(concat(' ', normalize-space({attr}), ' '), {_literal(' ' + value + ' ')})"


def _attr_condition(name: str, op: str | None, value: str) -> str | None:
    attr = "@" + name.lower()
    lit = _literal(value)
    if op is None:
        return attr
    if op == "=":
        return f"{attr} = {lit}"
    if op == "~=":
        return _word_in(attr, value) if value and not any(c.isspace() for c in value) else None
    if op == "|=":
        return f"({attr} = {lit} or starts-with({attr}, {_literal(value + '-')}))"
    if not value:  # [a^=""], [a$=""], [a*=""] match nothing (CSS Selectors 3)
        return "false()"
    if op == "^=":
        return f"starts-with({attr}, {lit})"
    if op == "$=":
        return f"substring({attr}, string-length({attr}) - {len(value) - 1}) = {lit}"
    return f"contains({attr}, {lit})"


def _translate_one(selector: str) -> str | None:
    """One selector without commas -> an XPath expression, or None if unsupported."""
    pos, end = 0, len(selector)
    steps: list[str] = []
    axis = "descendant-or-self::"
    tag, started = "*", False
    conds: list[str] = []

    def flush() -> None:
        nonlocal tag, conds, started
        pred = "".join(f"[{c}]" for c in conds)
        if axis.endswith("[1]"):  # adjacent sibling: the first following element, of this type
            step = f"{axis}{'' if tag == '*' else f'[self::{tag}]'}{pred}"
        else:
            step = f"{axis}{tag}{pred}"
        steps.append(step)
        tag, conds, started = "*", [], False

    while pos < end:
        match = _TOKEN.match(selector, pos)
        if match is None:
            return None
        pos = match.end()
        if match.group("ws") is not None:
            if not started or pos >= end:
                if match.group("comb") or not started:
                    return None  # a combinator with nothing before or after it
                continue
            flush()
            comb = match.group("comb")
            axis = {
                None: "/descendant::",
                ">": "/",
                "+": "/following-sibling::*[1]",
                "~": "/following-sibling::",
            }[comb]
            continue
        if match.group("tag") is not None:
            if started:
                return None  # a type selector must come first in a compound
            tag = match.group("tag").lower()
        elif match.group("id") is not None:
            conds.append(f"@id = {_literal(match.group('id'))}")
        elif match.group("cls") is not None:
            conds.append(_word_in("@class", match.group("cls")))
        else:
            value = match.group("dq") or match.group("sq") or match.group("bare") or ""
            cond = _attr_condition(match.group("attr"), match.group("op"), value)
            if cond is None:
                return None
            conds.append(cond)
        started = True
    if not started:
        return None
    flush()
    return "".join(steps)


def css_to_xpath(selector: str) -> str | None:
    """Translate a CSS selector group to XPath; None when it is empty or unsupported."""
    selector = selector.strip()
    if not selector:
        return None
    if _cssselect is not None:
        try:
            return str(_cssselect.HTMLTranslator().css_to_xpath(selector))
        except Exception:
            return None
    parts = [_translate_one(part.strip()) for part in selector.split(",")]
    if not parts or any(p is None for p in parts):
        return None
    return " | ".join(p for p in parts if p)


@lru_cache(maxsize=256)
def compile_selector(selector: str) -> etree.XPath | None:
    """A compiled XPath for ``selector`` (cached per process), or None if it is unusable."""
    expr = css_to_xpath(selector)
    if expr is None:
        return None
    try:
        return etree.XPath(expr)
    except etree.XPathError:
        return None


def select_all(root: etree._Element, selectors: Iterable[str]) -> list[etree._Element]:
    """Every element under ``root`` (inclusive) matched by any of ``selectors``, document order
    not guaranteed, duplicates removed. Unusable selectors match nothing."""
    found: dict[int, etree._Element] = {}
    for selector in selectors:
        xpath = compile_selector(selector)
        if xpath is None:
            continue
        try:
            result = xpath(root)
        except etree.XPathError:
            continue
        if isinstance(result, list):
            for el in result:
                if isinstance(el, etree._Element):
                    found.setdefault(id(el), el)
    return list(found.values())
