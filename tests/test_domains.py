"""Registered domains (the public suffix list's private section included), as scope,
partitions and domain metadata all see them; the suffix list never comes from the network."""

from __future__ import annotations

import subprocess
import sys
import zlib

from hypothesis import given
from hypothesis import strategies as st

from litecrawl.strategy.domain import domain_meta, partition_hash, registered_domain
from litecrawl.urls import DomainScope

# suffixes of the list's private section (operators that give each customer a host of its own)
_PRIVATE = ["github.io", "herokuapp.com", "netlify.app", "blogspot.com", "pages.dev"]
_LABEL = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)


@given(
    suffix=st.sampled_from(_PRIVATE),
    mine=_LABEL,
    theirs=_LABEL,
    sub=st.lists(_LABEL, max_size=2),
    port=st.sampled_from(["", ":8080"]),
)
def test_sites_under_a_private_suffix_are_sites_of_their_own(
    suffix: str, mine: str, theirs: str, sub: list[str], port: str
) -> None:
    site, other = f"{mine}.{suffix}", f"{theirs}.{suffix}"
    url = f"https://{'.'.join([*sub, site])}{port}/page"
    assert registered_domain(f"{'.'.join([*sub, site])}{port}") == site
    assert domain_meta(url)[b"name"] == site.encode()
    assert partition_hash(url) == zlib.crc32(site.encode())
    scope = DomainScope([f"https://{site}/"])
    assert scope(url)
    assert scope(f"http://{other}/") == (mine == theirs)
    assert not scope(f"https://{suffix}/")  # the operator's own site is another one
    assert registered_domain(suffix) == suffix


def test_icann_suffixes_and_hosts_without_one() -> None:
    assert registered_domain("www.london.co.uk") == "london.co.uk"
    assert registered_domain("wiki.corp") == "wiki.corp"  # no known suffix: the host itself
    assert registered_domain("localhost:8080") == "localhost"
    assert DomainScope(["docs.python.org"])("https://www.python.org/")


def test_scope_verdicts_stay_right_and_bounded_over_many_hosts() -> None:
    """A crawl meets hosts without end (every off-site link): the scope keeps a bounded number
    of verdicts, and a host judged again after they were dropped gets the same answer."""
    scope = DomainScope(["https://python.org/"])
    hosts = [f"https://h{i}.example.com/" for i in range(3 * 8192)]
    assert not any(scope(url) for url in hosts)
    assert scope("https://docs.python.org/3/") and not scope(hosts[0])
    assert len(scope._verdicts) <= 8192


def test_the_suffix_list_never_comes_from_the_network() -> None:
    """A name look-up or a connection while the list loads and answers fails the child."""
    code = """
import sys

used = []

def deny(event, args):
    if event in ("socket.getaddrinfo", "socket.connect", "socket.sendto", "urllib.Request"):
        used.append(event)  # also when the library swallows the error below
        raise RuntimeError(f"network use: {event}")

sys.addaudithook(deny)
from litecrawl.strategy.domain import registered_domain
from litecrawl.urls import DomainScope
assert registered_domain("a.alice.github.io") == "alice.github.io"
assert not DomainScope(["https://alice.github.io/"])("https://bob.github.io/")
print(used or "offline")
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}  # no cache directory to fall back on
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "offline"
