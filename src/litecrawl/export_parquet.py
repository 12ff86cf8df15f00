"""The ``parquet`` export: the documents as one Apache Parquet file, written a batch at a time.

Parquet is what dataset tools read first (Hugging Face ``datasets``, pandas, Polars, DuckDB,
Spark): typed columns, compressed (zstd), a fraction of the JSON Lines' size for the same texts.
It needs pyarrow, a large package most crawls never use, so it is the ``parquet`` extra
(``pip install 'litecrawl[parquet]'``); without it the export says so and writes nothing.

Columns: those of ``jsonl`` (:data:`~litecrawl.export.FIELDS`, then ``text`` and ``markdown``
unless left out), with ``keywords`` a list of strings, ``status``, ``depth``, ``resource_id``,
``checks``, ``changes`` and ``recrawl_interval`` integers, ``change_rate`` a float, times UTC
timestamps, and missing values null.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import IO, Any

from litecrawl.errors import ConfigError

__all__ = ["check_parquet", "write_parquet"]

_ROWS = 1000  # documents per row group at most: memory holds one batch of texts
_BYTES = 16 * 2**20  # and at most about this much text and Markdown
_INTEGERS = frozenset({"status", "depth", "resource_id", "checks", "changes", "recrawl_interval"})
_TIMES = frozenset({"crawled_at", "updated_at"})


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(
            "the parquet export needs pyarrow: pip install 'litecrawl[parquet]' (or uv add pyarrow)"
        ) from exc
    return pa, pq


def check_parquet() -> None:
    """Raise :class:`ConfigError` (before any output is opened) when pyarrow is missing."""
    _pyarrow()


def write_parquet(records: Iterable[dict[str, Any]], names: Sequence[str], out: IO[bytes]) -> int:
    """Write ``records`` (the export's documents, times as ISO 8601 strings) to ``out``."""
    pa, pq = _pyarrow()
    schema = pa.schema([(name, _type(pa, name)) for name in names])
    count = 0
    sink = pa.PythonFile(_LeftOpen(out), mode="w")
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        batch: list[dict[str, Any]] = []
        size = 0
        for record in records:
            batch.append({name: _value(name, record[name]) for name in names})
            size += len(record.get("text") or "") + len(record.get("markdown") or "")
            if len(batch) == _ROWS or size >= _BYTES:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count += len(batch)
                batch, size = [], 0
        if batch or count == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
    out.flush()
    return count


class _LeftOpen(io.RawIOBase):
    """``out`` for pyarrow, which closes what it wrote to: the caller's stream stays open."""

    def __init__(self, out: IO[bytes]) -> None:
        super().__init__()
        self._out = out

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self._out.write(data)

    def flush(self) -> None:
        self._out.flush()

    def close(self) -> None:
        self.flush()


def _type(pa: Any, name: str) -> Any:
    if name == "keywords":
        return pa.list_(pa.string())
    if name in _INTEGERS:
        return pa.int64()
    if name == "change_rate":
        return pa.float64()
    if name in _TIMES:
        return pa.timestamp("ms", tz="UTC")  # Parquet has no seconds unit
    return pa.string()


def _value(name: str, value: Any) -> Any:
    if name in _TIMES and isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
        except ValueError:
            return None
    if name == "keywords":
        return [str(k) for k in value]
    return value
