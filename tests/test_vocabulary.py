"""The page's words as hashes: counts, first appearances, stop-word hits, keywords."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.extract.stopwords import stopwords_for
from litecrawl.extract.text import words as text_words
from litecrawl.extract.vocabulary import Vocabulary, word_hashes


def _as_words(vocabulary: Vocabulary) -> dict[str, tuple[int, int]]:
    """word -> (count, index of its first occurrence)."""
    return {
        vocabulary.word(int(first)): (int(count), int(first))
        for count, first in zip(vocabulary.counts, vocabulary.first, strict=True)
    }


def test_counts_and_first_appearances() -> None:
    vocabulary = Vocabulary.of("Beta alpha, BETA! gamma beta; alpha")
    assert vocabulary.total == 6
    assert _as_words(vocabulary) == {"beta": (3, 0), "alpha": (2, 1), "gamma": (1, 3)}


def test_a_text_without_words() -> None:
    vocabulary = Vocabulary.of("123 -- 456 ...")
    assert vocabulary.total == 0
    assert vocabulary.keywords(stopwords_for("en"), 10) == ()


def test_the_same_word_hashes_the_same_wherever_it_stands() -> None:
    hashes = word_hashes(b"alpha beta alpha")
    assert len(hashes) == 3 and hashes[0] == hashes[2] != hashes[1]
    assert word_hashes("café".encode())[0] != word_hashes(b"cafe")[0]


def test_keyword_forms_of_words_with_apostrophes_that_are_not_words_of_the_text() -> None:
    # "d'orange" counts for "orange", which never appears on its own
    vocabulary = Vocabulary.of("d'orange citron d'orange")
    assert vocabulary.keywords(stopwords_for("fr"), 10) == ("orange", "citron")


_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "l'eau", "naïve", "Über", "x"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=300))
def test_counts_and_first_appearances_as_the_plain_definition(words: list[str]) -> None:
    # a few words repeated many times: equal hashes in long runs, where a sort that is not
    # stable scrambles the indexes within a run (the first occurrence must not move)
    text = " ".join(words)
    found = text_words(text)
    expected = {w: (found.count(w), found.index(w)) for w in dict.fromkeys(found)}
    vocabulary = Vocabulary.of(text)
    assert vocabulary.total == len(found)
    assert _as_words(vocabulary) == expected
    assert list(vocabulary.distinct) == sorted(vocabulary.distinct)  # searched by bisection
