"""The search query syntax, parsed as SQLite's FTS5 parses it, for a backend that is not FTS5.

Words are split and folded as the index splits them (:func:`litecrawl.index.words.words`).

:func:`parse` reads FTS5's grammar: phrases (``word``, ``"a phrase"``, ``a + b``), ``word*``
prefixes, column filters (``title:word``, ``{title text}:``, ``-title:``), ``NEAR(...)``,
``AND``, ``OR``, ``NOT`` and parentheses, with FTS5's precedence (a run of phrases binds
tightest, then NOT, AND, OR; all left-associative) and FTS5's syntax errors
(:class:`QuerySyntaxError`), after which search runs :func:`fallback`: every word quoted, as
the SQLite index does. Two forms are read more widely than FTS5 reads them: ``NEAR(a b)``
as ``a AND b`` and ``^word`` (first word of a column) as ``word``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from litecrawl.index.words import words

__all__ = [
    "And",
    "Node",
    "Not",
    "Or",
    "Phrase",
    "QuerySyntaxError",
    "fallback",
    "highlighted",
    "parse",
    "plain_words",
]

_SPACE = " \t\n\r\f\v"
_SINGLE = {"(", ")", "{", "}", ":", ",", "+", "*", "-", "^"}
_KEYWORDS = {"AND", "OR", "NOT"}
_PREFIX_WORD = re.compile(r"(.*?)(\*?)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words in a row; ``prefix[i]``: word ``i`` matches any word it begins; ``columns``: the
    columns it must be in (None: any)."""

    words: tuple[str, ...]
    prefix: tuple[bool, ...]
    columns: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class And:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or:
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Not:
    """``left`` without ``right``."""

    left: Node
    right: Node


Node = Phrase | And | Or | Not


class QuerySyntaxError(ValueError):
    """A query FTS5 would reject."""


def parse(query: str, columns: Mapping[str, str]) -> Node | None:
    """The query's tree (None: nothing to search, which matches nothing). ``columns`` maps
    each column's lower-case name to its name in :attr:`Phrase.columns`."""
    return _Parser(_lex(query), columns).top()


def fallback(query: str) -> Node | None:
    """Every whitespace-separated word as a quoted phrase (a trailing ``*`` kept as a
    prefix), all of them required: the query run when :func:`parse` fails."""
    phrases: list[Node | None] = []
    for word in query.split():
        match = _PREFIX_WORD.fullmatch(word)
        assert match is not None
        body, star = match.group(1).replace('"', ""), match.group(2)
        if body:
            phrases.append(_phrase(words(body), bool(star)))
    return _implicit_and(phrases)


def plain_words(query: str) -> list[str] | None:
    """The distinct words of a query of words alone (``how do I back up``, or words FTS5's
    grammar rejects, such as ``csv.DictReader`` or ``c++ std``), which search reads as all of
    them required; None for a query with a phrase, a prefix, a column filter or an operator
    (the user asked for exactly that)."""
    try:
        node = parse(query, {})
    except QuerySyntaxError as exc:
        if '"' in query or "no such column" in str(exc):
            return None
        return list(dict.fromkeys(words(query)))
    found: list[str] = []
    stack: list[Node | None] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, And):
            stack += [item.right, item.left]
        elif isinstance(item, Phrase) and len(item.words) == 1 and not any(item.prefix):
            found.append(item.words[0])
        else:
            return None
    return list(dict.fromkeys(found))


def highlighted(node: Node | None, column: str) -> list[Phrase]:
    """The phrases whose matches in ``column`` a snippet marks (not those after NOT)."""
    if node is None:
        return []
    if isinstance(node, Phrase):
        return [node] if node.columns is None or column in node.columns else []
    if isinstance(node, Not):
        return highlighted(node.left, column)
    return highlighted(node.left, column) + highlighted(node.right, column)


def _lex(query: str) -> list[tuple[str, str]]:
    """(kind, text) pairs: kind is the character itself for punctuation, ``STRING`` for a
    word or a quoted string, ``AND``/``OR``/``NOT``."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(query)
    while i < n:
        char = query[i]
        if char in _SPACE:
            i += 1
        elif char in _SINGLE:
            out.append((char, char))
            i += 1
        elif char == '"':
            text, i = _quoted(query, i + 1)
            out.append(("STRING", text))
        elif _is_bare(char):
            start = i
            while i < n and _is_bare(query[i]):
                i += 1
            word = query[start:i]
            out.append((word if word in _KEYWORDS else "STRING", word))
        else:
            raise QuerySyntaxError(f"syntax error near {char!r}")
    return out


def _quoted(query: str, i: int) -> tuple[str, int]:
    text: list[str] = []
    while True:
        end = query.find('"', i)
        if end < 0:
            raise QuerySyntaxError("unterminated string")
        text.append(query[i:end])
        if query.startswith('"', end + 1):  # "" is a quote inside the string
            text.append('"')
            i = end + 2
            continue
        return "".join(text), end + 1


def _is_bare(char: str) -> bool:
    return not char.isascii() or char.isalnum() or char in "_\x1a"


class _Parser:
    def __init__(self, lexed: list[tuple[str, str]], columns: Mapping[str, str]) -> None:
        self.lexed = lexed
        self.pos = 0
        self.columns = columns

    def top(self) -> Node | None:
        node = self.expr()
        if self.peek() != "":
            raise QuerySyntaxError(f"syntax error near {self.lexed[self.pos][1]!r}")
        return node

    def peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.lexed[at][0] if at < len(self.lexed) else ""

    def take(self, kind: str) -> str:
        if self.peek() != kind:
            near = self.lexed[self.pos][1] if self.pos < len(self.lexed) else ""
            raise QuerySyntaxError(f"syntax error near {near!r}")
        self.pos += 1
        return self.lexed[self.pos - 1][1]

    def expr(self) -> Node | None:
        node = self.conjunction()
        while self.peek() == "OR":
            self.pos += 1
            right = self.conjunction()
            node = right if node is None else node if right is None else Or(node, right)
        return node

    def conjunction(self) -> Node | None:
        node = self.negation()
        while self.peek() == "AND":
            self.pos += 1
            right = self.negation()
            node = None if node is None or right is None else And(node, right)
        return node

    def negation(self) -> Node | None:
        node = self.unit()
        while self.peek() == "NOT":
            self.pos += 1
            right = self.unit()
            node = None if node is None else node if right is None else Not(node, right)
        return node

    def unit(self) -> Node | None:
        """``( expr )``, ``columns : ( expr )`` or a run of phrases; then an operator, ``)``
        or the end must follow."""
        if self.peek() == "(":
            node = self.group()
        elif (
            self.starts_columns()
            and self.peek(self.columns_length()) == ":"
            and (self.peek(self.columns_length() + 1) == "(")
        ):
            wanted = self.column_set()
            self.take(":")
            node = _restricted(self.group(), wanted)
        else:
            items = [self.near_set()]
            while self.starts_near_set():
                items.append(self.near_set())
            node = _implicit_and(items)
        if self.peek() not in ("AND", "OR", "NOT", ")", ""):
            raise QuerySyntaxError(f"syntax error near {self.lexed[self.pos][1]!r}")
        return node

    def group(self) -> Node | None:
        self.take("(")
        node = self.expr()
        self.take(")")
        return node

    def starts_near_set(self) -> bool:
        return self.peek() in ("STRING", "{", "-", "^")

    def starts_columns(self) -> bool:
        return self.peek() in ("{", "-") or (self.peek() == "STRING" and self.peek(1) == ":")

    def columns_length(self) -> int:
        """How many tokens the column set at the cursor takes."""
        at = 1 if self.peek() == "-" else 0
        if self.peek(at) != "{":
            return at + 1
        while self.peek(at) not in ("}", ""):
            at += 1
        return at + 1

    def column_set(self) -> frozenset[str]:
        negated = self.peek() == "-"
        if negated:
            self.pos += 1
        names: list[str] = []
        if self.peek() == "{":
            self.pos += 1
            names.append(self.take("STRING"))
            while self.peek() == "STRING":
                names.append(self.take("STRING"))
            self.take("}")
        else:
            names.append(self.take("STRING"))
        chosen = set()
        for name in names:
            if name.lower() not in self.columns:
                raise QuerySyntaxError(f"no such column: {name}")
            chosen.add(self.columns[name.lower()])
        return frozenset(set(self.columns.values()) - chosen if negated else chosen)

    def near_set(self) -> Node | None:
        wanted = None
        if self.starts_columns():
            wanted = self.column_set()
            self.take(":")
        if self.peek() == "^":  # first word of the column: read as the word anywhere
            self.pos += 1
        if self.peek() == "STRING" and self.peek(1) == "(":
            if self.take("STRING") != "NEAR":
                raise QuerySyntaxError("syntax error near '('")
            self.take("(")
            items = [self.phrase()]
            while self.peek() == "STRING":
                items.append(self.phrase())
            if self.peek() == ",":
                self.pos += 1
                if not self.take("STRING").isdigit():
                    raise QuerySyntaxError("expected integer")
            self.take(")")
            node = _implicit_and(items)  # NEAR read as AND
        else:
            node = self.phrase()
        return node if node is None or wanted is None else _restricted(node, wanted)

    def phrase(self) -> Node | None:
        found: list[str] = []
        prefix: list[bool] = []
        while True:
            piece = words(self.take("STRING"))
            star = self.peek() == "*"
            if star:
                self.pos += 1
            found += piece
            prefix += [star and i == len(piece) - 1 for i in range(len(piece))]
            if self.peek() != "+":
                return Phrase(tuple(found), tuple(prefix)) if found else None
            self.pos += 1


def _phrase(found: list[str], star: bool) -> Phrase | None:
    if not found:
        return None
    return Phrase(tuple(found), tuple(star and i == len(found) - 1 for i in range(len(found))))


def _implicit_and(items: list[Node | None]) -> Node | None:
    """Phrases side by side: all required; a phrase without words drops out."""
    kept = [item for item in items if item is not None]
    if not kept:
        return None
    node = kept[0]
    for item in kept[1:]:
        node = And(node, item)
    return node


def _restricted(node: Node | None, wanted: frozenset[str]) -> Node | None:
    """``node`` with every phrase kept to the columns ``wanted`` (nested filters intersect;
    a phrase left with no column matches nothing)."""
    if node is None:
        return None
    if isinstance(node, Phrase):
        columns = wanted if node.columns is None else node.columns & wanted
        return replace(node, columns=columns) if columns else None
    left, right = _restricted(node.left, wanted), _restricted(node.right, wanted)
    if isinstance(node, Or):
        return right if left is None else left if right is None else Or(left, right)
    if isinstance(node, Not):
        return None if left is None else left if right is None else Not(left, right)
    return None if left is None or right is None else And(left, right)
