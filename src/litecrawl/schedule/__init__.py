"""Re-crawl scheduling: when is a page fetched again (docs/freshness.md).

Three policies side by side: ``multiplicative`` (litecrawl()'s default, :class:`Schedule`),
``uniform`` (every page at the same interval) and ``freshness`` (each page's change rate and
when it moved estimated from its checks by :mod:`.changepoint`, revisits allocated under a fetch
budget by :mod:`.allocate`, both imported from there: they need numpy, whose import every
litecrawl() batch and CLI command would pay for a policy most crawls do not use).
"""

from litecrawl.schedule.multiplicative import Schedule

__all__ = ["Schedule"]
