"""What ``litecrawl crawl`` says when it ends: the summary (lines, or one JSON record), the
failed URLs worth another try, and the exit code with the reason in words (docs/crawling.md).
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from litecrawl.cli.output import duration, print_crawl_summary, print_json_summary
from litecrawl.frontier.lost import PARK_AFTER
from litecrawl.outcomes import SKIPPED_CATEGORIES

if TYPE_CHECKING:
    from litecrawl.crawl import CrawlReport
    from litecrawl.engine import CrawlStats

__all__ = ["report_crawl"]


def report_crawl(
    report: CrawlReport,
    partition: str | None,
    failed_out: Path | None,
    log_json: bool,
    unembedded: tuple[str, int] | None = None,
) -> int:
    """Print the summary of ``report`` (the last JSON record with ``log_json``), write
    ``failed_out``; the exit code. ``unembedded``: the database's model when the crawl does not
    embed with it, and the pages without its vectors (said, not an error: docs/search.md)."""
    code, verdict = _exit_code(report)
    if failed_out is not None:
        _write_failed(failed_out, report.stats)
    causes = [str(cause) for cause in report.stats.top_causes(5)]
    if log_json:  # the stream stays JSON lines to its end: the summary is its last record
        record = _summary_record(report, causes, code, verdict)
        if unembedded is not None:
            record |= {"vector_model": unembedded[0], "without_model_vectors": unembedded[1]}
        print_json_summary(record)
        return code
    rows = _summary_rows(report, partition)
    notes = []
    if report.stats.at_max_depth:
        n = report.stats.at_max_depth
        notes.append(
            f"{n} page{'s' if n != 1 else ''} at the depth limit (--max-depth, 2 by default): "
            "their links were not followed; --max-depth 0 follows every link"
        )
    if unembedded is not None and unembedded[1]:
        model, missing = unembedded
        rows["without_model_vectors"] = missing
        notes.append(
            f"{missing} pages have no vector of the database's model ({model}): search finds "
            "them by their words only until 'litecrawl index --embed'"
        )
    print_crawl_summary(rows, causes, verdict, notes)
    return code


def _nothing_due(next_due: int | None, partition: str | None) -> str:
    """The summary's word when a run found nothing due: when the next page is."""
    if next_due is None:
        return "no page is scheduled"
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(next_due))
    wait = next_due - time.time()
    if wait > 0:
        return f"{when} (in {duration(wait)}; --recrawl crawls every page now)"
    # due already, yet this run claimed none: --recrawl would change nothing
    if partition is not None:
        n = partition.partition("/")[2]
        return f"{when} (now, in other partitions than {partition}: stats --partitions {n})"
    return f"{when} (now, but held back: litecrawl stats shows the hosts' politeness)"


def _summary_rows(report: CrawlReport, partition: str | None) -> dict[str, object]:
    """The counts worth a line: the main ones always, the others when they happened."""
    from litecrawl.driver import summary_dict

    summary = summary_dict(report.stats)
    always = ("claimed", "fetched", "ok", "failed", "indexed", "new_links")
    rows = {k: summary[k] for k in always if k in summary}
    rows.update((k, v) for k, v in summary.items() if k not in rows and k != "errors" and v)
    if report.stats.errors:
        rows["errors"] = dict(report.stats.errors.most_common())
    rows["elapsed_sec"] = summary["elapsed_sec"]
    if report.interrupted:
        rows["interrupted"] = True
    if not report.stats.claimed:
        rows["next_due"] = _nothing_due(report.next_due, partition)
    return rows


def _summary_record(
    report: CrawlReport, causes: list[str], code: int, verdict: str | None
) -> dict[str, object]:
    """The summary for machines: every count, the causes, the exit code and why."""
    from litecrawl.driver import summary_dict

    record = {**summary_dict(report.stats), "interrupted": report.interrupted}
    if not report.stats.claimed:
        record["next_due"] = report.next_due  # epoch seconds, or None: nothing scheduled
    return {**record, "causes": causes, "exit_code": code, "verdict": verdict}


def _write_failed(path: Path, stats: CrawlStats) -> None:
    """The failed URLs worth another try (not robots refusals, not 4xx), one per line: feed
    them to ``litecrawl seeds add FILE --due-now``."""
    from litecrawl.errors import is_retry_worthy

    urls = dict.fromkeys(u for u, category in stats.failed_urls if is_retry_worthy(category))
    try:
        path.write_text("".join(f"{u}\n" for u in urls), "utf-8")
    except OSError as exc:  # a log record: JSON too with --log-json
        logging.getLogger("litecrawl").error("cannot write %s: %s", path, exc.strerror)


# a cut the user asked for (--max-depth) is not one the crawl failed to do
_ASKED_CUTS = frozenset({"max_depth"})


def _exit_code(report: CrawlReport) -> tuple[int, str | None]:
    """1 when the crawl needs attention, with the reason in words: internal errors, pages
    parked (they may kill their workers), seeds it would not crawl (the patterns, robots.txt),
    sitemaps cut at their bounds, every page it tried failed, or most fetches failed
    for other reasons than robots.txt, a 4xx, a content type not asked for or a binary body
    labelled HTML."""
    stats = report.stats
    if stats.errors.get("internal"):
        return 1, f"exit 1: {stats.errors['internal']} internal errors (see the log)"
    if stats.parked:
        return 1, (
            f"exit 1: {stats.parked} pages parked: each was lost with its worker, alone, at "
            f"{PARK_AFTER} or more consecutive claims (it may be what kills it); "
            "see 'litecrawl stats'"
        )
    if stats.refused_seeds:
        named = "; ".join(f"{url} ({why})" for url, why in list(stats.refused_seeds.items())[:3])
        more = len(stats.refused_seeds) - 3
        return 1, (
            f"exit 1: {len(stats.refused_seeds)} seeds not crawled: {named}"
            + (f"; and {more} more (see the log)" if more > 0 else "")
        )
    cuts = {k: n for k, n in stats.sitemap_cuts.items() if k not in _ASKED_CUTS}
    if cuts:
        said = ", ".join(f"{k}={n}" for k, n in sorted(cuts.items()))
        return 1, f"exit 1: sitemaps cut ({said}): what they list past the cut was not queued"
    if stats.failed and not stats.ok and not stats.skipped:
        return 1, f"exit 1: every page tried failed ({stats.failed} of {stats.failed})"
    if stats.skipped and not stats.ok:
        return 1, (
            f"exit 1: no page crawled: of {stats.failed + stats.skipped} tried, "
            f"{stats.failed} failed, {stats.skipped} skipped (robots.txt, a content "
            "type not accepted: see --accept-type)"
        )
    serious = sum(
        n
        for cat, n in stats.errors.items()
        if cat not in SKIPPED_CATEGORIES and cat != "strategy" and not cat.startswith("http_4")
    )
    if stats.claimed and serious > stats.claimed / 2:
        return 1, f"exit 1: {serious} of {stats.claimed} pages failed"
    if stats.claimed and stats.render_timeouts > stats.claimed / 2:
        return 1, (
            f"exit 1: {stats.render_timeouts} of {stats.claimed} pages were not rendered in time "
            "(their HTML as served was kept; see --timeout)"
        )
    hooks = stats.errors.get("strategy", 0)  # a hook that raised; its page was still crawled
    if stats.claimed and hooks > stats.claimed / 2:
        return 1, f"exit 1: the strategy's hooks raised {hooks} times (see the log)"
    return 0, None
