"""Content extraction: pure functions from an HTTP body to title, text, keywords and Markdown.

No network, no database. :func:`extract_page` is CPU-heavy and picklable (arguments and result
are plain data), so the engine runs it in worker processes; :func:`to_markdown` likewise.
"""

from litecrawl.extract.decode import decode_html
from litecrawl.extract.language import detect_language
from litecrawl.extract.markdown import to_markdown, write_atomic
from litecrawl.extract.page import Extracted, ExtractionMode, extract_page
from litecrawl.extract.paths import (
    earlier_markdown_path,
    markdown_path,
    sidecar_path,
    url_domain,
)
from litecrawl.extract.selectors import HAVE_CSSSELECT
from litecrawl.extract.vocabulary import keywords

__all__ = [
    "HAVE_CSSSELECT",
    "Extracted",
    "ExtractionMode",
    "decode_html",
    "detect_language",
    "earlier_markdown_path",
    "extract_page",
    "keywords",
    "markdown_path",
    "sidecar_path",
    "to_markdown",
    "url_domain",
    "write_atomic",
]
