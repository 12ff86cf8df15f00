"""hrefs.join_quickly: urljoin's answer with str methods, or None (then urljoin decides)."""

from __future__ import annotations

from urllib.parse import urljoin

from hypothesis import given, settings
from hypothesis import strategies as st

from litecrawl.hrefs import join_quickly

_segment = st.sampled_from(
    ["x", "..", ".", "", "p;q", "a b", "%41", "\u00fc", "docs", "y.html", "a:b", "a\\b", "\t"]
)
_hrefs = st.builds(
    lambda prefix, segments, tail: prefix + "/".join(segments) + tail,
    st.sampled_from(["", "./", "../", "/", "//b.org/", "http://a.com/", "mailto:", "?", "#",
                     " ", "x:", "#a#b", "../../../"]),
    st.lists(_segment, max_size=5),
    st.sampled_from(["", "?", "#", "?q=1", "#f", "?q=1#f", "?a?b#c#d", "#\u00fc"]),
)  # fmt: skip
_bases = st.builds(
    lambda origin, path, tail: origin + path + tail,
    st.sampled_from(["http://a.com", "https://b.org:8443", "HTTP://a.com", "http://u@a.com",
                     "http://[::1]:80", "http://b\u00fccher.de"]),
    st.sampled_from(["", "/", "/d/e.html", "/d/", "/x/y/z", "/a//b/c", "/a/./b/../c", "/p;q/r"]),
    st.sampled_from(["", "?q=1", "#f", ";p"]),
)  # fmt: skip


@settings(max_examples=600)
@given(href=_hrefs, base=_bases)
def test_property_a_quick_join_is_urljoins(href: str, base: str) -> None:
    quick = join_quickly(href, base)
    assert quick is None or quick == urljoin(base, href)


def test_the_usual_relative_links_of_a_docs_page_take_the_quick_way() -> None:
    base = "https://docs.python.org/3/library/functions.html"
    for href in ["#open", "stdtypes.html#str", "../tutorial/index.html", "./x.html?q=1#y", "#"]:
        assert join_quickly(href, base) == urljoin(base, href)
