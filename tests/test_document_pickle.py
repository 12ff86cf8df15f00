"""An index document crosses the analysis worker's pipe as a pickle: pickled as a call of its
class with its fields (litecrawl.index.document), it comes back equal to what the dataclass's
own state pickling gives."""

from __future__ import annotations

import dataclasses
import pickle

from hypothesis import given
from hypothesis import strategies as st

from litecrawl.index.document import IndexDocument, SectionVector

_text = st.text(max_size=30)
_maybe = st.none() | _text
_sections = st.builds(
    SectionVector, _text, _maybe, st.binary(max_size=16), st.none() | st.integers(0, 10**6), _maybe
)
_documents = st.builds(
    IndexDocument,
    url=_text,
    title=_text,
    keywords=st.lists(_text, max_size=3).map(tuple),
    text_preview=_text,
    text=_text,
    text_hash=_text,
    simhash=st.integers(-(2**63), 2**63 - 1),
    language=_maybe,
    author=_maybe,
    published=_maybe,
    content_type=_maybe,
    status=st.none() | st.integers(100, 599),
    depth=st.integers(0, 50),
    source=_text,
    extraction_mode=st.sampled_from(["fullpage", "article"]),
    markdown_path=_maybe,
    canonical=_maybe,
    embedding=st.none() | st.binary(max_size=16),
    sections=st.lists(_sections, max_size=3).map(tuple),
    tsvector=st.none() | st.binary(max_size=16),
)


def _plain(value: object) -> object:
    """The dataclass's own pickling: its state restored on a bare instance, fields nested."""
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    copy = object.__new__(type(value))
    state = [_plain(item) for item in value.__getstate__()]  # type: ignore[attr-defined]
    copy.__setstate__(state)  # type: ignore[attr-defined]
    return copy


@given(_documents, st.integers(2, pickle.HIGHEST_PROTOCOL))
def test_property_a_pickled_document_is_the_dataclass_state_restored(
    document: IndexDocument, protocol: int
) -> None:
    back = pickle.loads(pickle.dumps(document, protocol=protocol))
    assert type(back) is IndexDocument and back == document == _plain(document)
    assert [type(s) for s in back.sections] == [SectionVector] * len(document.sections)
    # every field is in the call, in order: a field added later travels too
    names = [f.name for f in dataclasses.fields(IndexDocument)]
    assert document.__reduce__()[1] == tuple(getattr(document, n) for n in names)
