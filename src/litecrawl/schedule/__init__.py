"""Re-crawl scheduling: when is a page fetched again (docs/freshness.md).

Three policies side by side: ``multiplicative`` (litecrawl()'s default, :class:`Schedule`),
``uniform`` (every page at the same interval) and ``freshness`` (each page's change rate
estimated from its fetch history by :mod:`.estimate`, revisits allocated under a fetch budget by
:mod:`.allocate`, imported from there: it needs numpy, whose import every litecrawl() batch and
CLI command would pay for a policy most crawls do not use).
"""

from litecrawl.schedule.estimate import ChangeHistory, Estimator, StopShare
from litecrawl.schedule.multiplicative import Schedule

__all__ = [
    "ChangeHistory",
    "Estimator",
    "Schedule",
    "StopShare",
]
