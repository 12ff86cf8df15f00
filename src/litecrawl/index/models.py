"""The embedding models a database's vectors can come from, by the name a user gives
(``litecrawl index --model NAME``) and by the name stored beside each vector.

``wordllama`` (the default; :mod:`litecrawl.index.embed`) is what the crawl embeds with.
``minilm`` (:mod:`litecrawl.index.minilm`, the ``minilm`` extra) finds answers far better at
~1,000 times the CPU, so only ``litecrawl index --model minilm`` runs it, off the crawl. A
database's model (``VectorStore.model``) decides how search embeds a query: vectors of two
models are never compared.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from litecrawl.errors import ConfigError
from litecrawl.index import minilm
from litecrawl.store.vectors import MODEL

__all__ = ["DEFAULT", "NAMES", "TextModel", "load", "stored_name", "vectors_of"]

Vector = npt.NDArray[np.float32]

DEFAULT = "wordllama"
# what a user calls a model -> the name stored beside its vectors
NAMES = {DEFAULT: MODEL, "minilm": minilm.MODEL}


class TextModel(Protocol):
    def vector(self, text: str) -> Vector | None: ...

    def words_vector(self, words: list[str]) -> Vector | None: ...


def stored_name(name: str) -> str:
    """The stored name of the model a user names; :class:`ConfigError` naming the choices."""
    try:
        return NAMES[name]
    except KeyError:
        choices = ", ".join(NAMES)
        raise ConfigError(f"unknown model {name!r}: choose one of {choices}") from None


_loaded: dict[str, TextModel] = {}


def load(stored: str) -> TextModel:
    """This process's model of the stored name ``stored``, loaded on first use; a model that
    cannot be loaded (its extra not installed) raises :class:`ConfigError`."""
    model = _loaded.get(stored)
    if model is None:
        if stored == MODEL:
            from litecrawl.index.embed import embedder

            model = embedder()
        elif stored == minilm.MODEL:
            model = minilm.MiniLM()
        else:
            raise ConfigError(f"the database's vectors come from an unknown model {stored!r}")
        _loaded[stored] = model
    return model


def vectors_of(model: TextModel, texts: list[str]) -> list[Vector | None]:
    """The vector of each of ``texts`` (batched where the model runs faster so)."""
    if isinstance(model, minilm.MiniLM):
        return model.vectors(texts)
    return [model.vector(text) for text in texts]
