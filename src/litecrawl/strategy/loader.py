"""Find a strategy class by short name (``bfs``, ``dfs`` ...) or ``module.path:ClassName``."""

from __future__ import annotations

from litecrawl.errors import ConfigError
from litecrawl.plugins import SPEC, load_object
from litecrawl.strategy.base import BaseCrawlingStrategy

__all__ = ["BUILTIN", "FAST_PATH", "args_problem", "load_strategy", "strategy_for"]

BUILTIN = {
    "adaptive": "litecrawl.strategy.builtin:BreadthFirst",
    "bfs": "litecrawl.strategy.builtin:BreadthFirst",
    "dfs": "litecrawl.strategy.builtin:DepthFirst",
    "focused": "litecrawl.strategy.builtin:Focused",
}
# Run by the engine itself (every link that passes scope, depth and the URL rules is queued;
# claims in litecrawl()'s order, docs/python-api.md step 3): ``bfs`` is the crawl command's
# default, ``adaptive`` litecrawl()'s.
# Their fresh/stale re-crawl schedule applies under every strategy.
FAST_PATH = frozenset({"adaptive", "bfs"})


def args_problem(name: object, args: dict[str, object] | None) -> str | None:
    """Why ``args`` cannot go with strategy ``name``: the engine's own path reads none, so
    they would be accepted and do nothing; None when they can."""
    if not args or name not in FAST_PATH:
        return None
    return (
        f"strategy {name!r} takes no arguments (got {', '.join(sorted(args))}): they are read "
        "by 'focused' or by a strategy class of yours"
    )


def strategy_for(name: str | type[BaseCrawlingStrategy]) -> type[BaseCrawlingStrategy] | None:
    """The class to run for ``name``; None for the engine's own path (``bfs``, ``adaptive``)."""
    if isinstance(name, type):
        if not issubclass(name, BaseCrawlingStrategy):
            raise ConfigError(f"strategy {name!r} is not a BaseCrawlingStrategy subclass")
        return name
    return None if name in FAST_PATH else load_strategy(name)


def load_strategy(name: str) -> type[BaseCrawlingStrategy]:
    """The class behind ``name``; ConfigError (exit 2) naming it when there is none."""
    spec = BUILTIN.get(name, name)
    if not SPEC.fullmatch(spec):
        known = ", ".join(sorted(BUILTIN))
        raise ConfigError(f"unknown strategy {name!r}: use one of {known} or 'module:Class'")
    target = load_object(spec, f"strategy {name!r}")
    if not (isinstance(target, type) and issubclass(target, BaseCrawlingStrategy)):
        attr = spec.partition(":")[2]
        raise ConfigError(f"strategy {name!r}: {attr} is not a BaseCrawlingStrategy subclass")
    return target
