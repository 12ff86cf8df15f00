"""How the CLI talks: rich on a terminal, plain aligned text otherwise; logs as ``key=value``
lines or JSON lines (``--log-json``), on stderr either way."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.table import Table

from litecrawl.errors import DatabaseUnusable, LitecrawlError

__all__ = [
    "console",
    "duration",
    "exit_code",
    "print_crawl_summary",
    "print_json_summary",
    "print_summary",
    "setup_logging",
]

console = Console(stderr=True)

# LogRecord's own attributes; anything else on a record came in through ``extra=``.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


def exit_code(exc: LitecrawlError) -> int:
    """1 for a database no work can go on with (damaged, its disk full): the command was
    right, the machine is not; 2 for bad usage or configuration."""
    return 1 if isinstance(exc, DatabaseUnusable) else 2


def setup_logging(
    verbose: bool, quiet: bool, json_lines: bool = False, log_file: Path | None = None
) -> None:
    """INFO by default (terminal or not), DEBUG and one record per page with ``verbose``,
    warnings only with ``quiet``. Per-page records (logger ``litecrawl.page``) show only with
    ``verbose``, but for a failed fetch: a warning, shown at every level (docs/crawling.md).
    ``log_file`` gets everything (DEBUG and every page) whatever the terminal shows."""
    level = logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO
    formatter = JsonLinesFormatter() if json_lines else KeyValueFormatter()
    handler = _StderrHandler()
    handler.setLevel(level)
    handler.setFormatter(formatter)
    if not verbose:
        handler.addFilter(_no_page_info)
    handlers: list[logging.Handler] = [handler]
    if log_file is not None:
        to_file = logging.FileHandler(log_file, encoding="utf-8")
        to_file.setFormatter(formatter)
        handlers.append(to_file)
        level = logging.DEBUG
    root = logging.getLogger("litecrawl")
    for old in root.handlers:
        old.close()
    root.handlers[:] = handlers
    root.setLevel(level)
    root.propagate = False
    # no record is even built for a page nobody will see (a crawl logs many pages a second)
    page_level = logging.NOTSET if verbose or log_file else logging.WARNING
    logging.getLogger("litecrawl.page").setLevel(page_level)


def _no_page_info(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING or not record.name.startswith("litecrawl.page")


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stderr`` is at the time (rich's live display swaps it to keep
    log lines above the progress line)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


def _extra(record: logging.LogRecord) -> dict[str, object]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


def _message(record: logging.LogRecord) -> str:
    """The record's words, without the ``url: `` prefix when the url is a field already."""
    message = record.getMessage()
    url = record.__dict__.get("url")
    return message.removeprefix(f"{url}: ") if isinstance(url, str) else message


def _iso(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds")


class KeyValueFormatter(logging.Formatter):
    """``time level=INFO logger=litecrawl.page action=fetch status=200 ... msg=text``: the
    structured fields first (values with spaces quoted), the free text last."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={_kv(v)}" for k, v in _extra(record).items())
        line = f"{_iso(record.created)} level={record.levelname} logger={record.name}"
        line += f" {fields} msg={_message(record)}" if fields else f" msg={_message(record)}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def _kv(value: object) -> str:
    text = "-" if value is None else str(value)
    return json.dumps(text) if not text or any(c in text for c in ' "=') else text


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, msg, then the ``extra=`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "time": _iso(record.created),
            "level": record.levelname,
            "logger": record.name,
            "msg": _message(record),
            **_extra(record),
        }
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False, default=str)


def print_summary(title: str, summary: Mapping[str, object]) -> None:
    """A table on a terminal; ``key: value`` lines (greppable) otherwise."""
    if console.is_terminal:
        table = Table(title=title, show_header=False)
        for key, value in summary.items():
            table.add_row(key, _show(value))
        console.print(table)
    else:
        for key, value in summary.items():
            print(f"{key}: {_show(value)}", file=sys.stderr)


def print_crawl_summary(
    rows: Mapping[str, object],
    causes: Sequence[str],
    verdict: str | None,
    notes: Sequence[str] = (),
) -> None:
    """The closing summary: the counts, the top error causes in words, ``notes`` (what to do
    next, not errors), and why the exit code is not 0 (``verdict``). A rich table on a terminal,
    aligned ``key: value`` text otherwise."""
    if console.is_terminal:
        table = Table(title="litecrawl crawl", show_header=False, title_justify="left")
        table.add_column(style="bold")
        table.add_column(justify="right")
        for key, value in rows.items():
            table.add_row(key.replace("_", " "), _show(value))
        console.print(table)
        if causes:
            console.print("[bold]top error causes[/bold]")
            for cause in causes:
                console.print(f"  {cause}", highlight=False, soft_wrap=True)
        for note in notes:
            console.print(f"note: {note}", highlight=False, soft_wrap=True)
        if verdict:
            console.print(f"[yellow]{verdict}[/yellow]", highlight=False, soft_wrap=True)
        return
    width = max((len(k) for k in rows), default=0) + 1
    lines = [f"{key + ':':<{width}} {_show(value)}" for key, value in rows.items()]
    if causes:
        lines += ["top error causes:", *(f"  {cause}" for cause in causes)]
    lines += [f"note: {note}" for note in notes]
    if verdict:
        lines.append(verdict)
    print("\n".join(lines), file=sys.stderr)


def print_json_summary(summary: Mapping[str, object]) -> None:
    """The closing summary as one JSON line on stderr, shaped like the log records before it
    (logger ``litecrawl.summary``), at every log level."""
    record = {
        "time": _iso(time.time()),
        "level": "INFO",
        "logger": "litecrawl.summary",
        "msg": "crawl finished",
        **summary,
    }
    print(json.dumps(record, ensure_ascii=False, default=str), file=sys.stderr, flush=True)


def _show(value: object) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    return str(value)


def duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``, ``2h10m``, ``4d03h``."""
    if seconds is None:
        return "?"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"
    if seconds < 86400:
        return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"
    return f"{seconds // 86400:.0f}d{seconds % 86400 // 3600:02.0f}h"
