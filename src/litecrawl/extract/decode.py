"""Bytes -> text for HTML bodies: BOM, HTTP header, ``<meta>`` in the first 2 KB, then detection;
a body that is valid UTF-8 is read as UTF-8 whatever its label says.

Labels are mapped the way browsers map them (WHATWG Encoding Standard): ``iso-8859-1`` and
``ascii`` mean windows-1252, ``shift_jis`` means windows-31J (cp932), ``gb2312`` means GBK/GB18030,
and a ``<meta>`` claiming UTF-16 on an ASCII-compatible page means UTF-8. Decoding never raises:
undecodable bytes become U+FFFD.
"""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes

__all__ = ["charset_from_content_type", "charset_from_meta", "decode_html", "normalize_charset"]

META_SNIFF_BYTES = 2048
DETECT_BYTES = 64 * 1024  # charset-normalizer looks at this much of a large body at most

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

# WHATWG label -> Python codec, for the labels where the two disagree in practice
_ALIASES = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "ansi_x3.4-1968": "cp1252",
    "iso-8859-9": "cp1254",
    "latin5": "cp1254",
    "iso-8859-11": "cp874",
    "tis-620": "cp874",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "csshiftjis": "cp932",
    "windows-31j": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "utf8": "utf-8",
    "unicode-1-1-utf-8": "utf-8",
    "x-user-defined": "cp1252",
}
_WESTERN = "cp1252"
_UTF16 = {"utf-16", "utf-16le", "utf-16be", "utf16", "ucs-2", "unicode"}

_CT_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.IGNORECASE)
_META = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([a-zA-Z0-9._:\-]+)""", re.IGNORECASE)


def normalize_charset(label: str | None) -> str | None:
    """A Python codec name for a charset label, or None when the label is unknown/unusable."""
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    if not name or len(name) > 40:
        return None
    name = _ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError):
        return None
    # never let a header pick a codec that is not a text encoding (rot13, base64, ...)
    if not getattr(info, "_is_text_encoding", True):
        return None
    return info.name


def charset_from_content_type(content_type: str) -> str | None:
    """The codec named by an HTTP ``Content-Type`` header's ``charset=`` parameter."""
    if not content_type:
        return None
    match = _CT_CHARSET.search(content_type)
    return normalize_charset(match.group(1)) if match else None


def charset_from_meta(body: bytes) -> str | None:
    """The codec named by ``<meta charset>`` or ``<meta http-equiv content=...>`` in 2 KB."""
    head = body[:META_SNIFF_BYTES]
    for tag in _META.finditer(head):
        match = _META_CHARSET.search(tag.group())
        if match is None:
            continue
        label = match.group(1).decode("ascii", "replace").lower()
        if label in _UTF16:  # a page readable enough to sniff is not UTF-16 (WHATWG)
            return "utf-8"
        codec = normalize_charset(label)
        if codec is not None:
            return codec
    return None


def _bom_charset(body: bytes) -> str | None:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec
    return None


def _detect(body: bytes) -> str:
    """charset-normalizer's guess for a body that is not valid UTF-8 (cp1252 if none).

    BOM-less UTF-16/32 guesses are ignored (they turn binary junk into CJK noise), and on a tie
    windows-1252, the web's most common legacy encoding, wins over its look-alikes (cp1250, ...).
    """
    try:
        matches = list(from_bytes(body[:DETECT_BYTES]))
    except Exception:  # the detector must never take the page down
        matches = []
    candidates = [m for m in matches if not m.encoding.startswith(("utf_16", "utf_32"))]
    if not candidates:
        return "cp1252"
    best = candidates[0]
    if _WESTERN in best.could_be_from_charset or any(
        m.encoding == _WESTERN and m.chaos <= best.chaos and m.coherence >= best.coherence
        for m in candidates[1:]
    ):
        return _WESTERN
    return normalize_charset(best.encoding) or _WESTERN


def decode_html(body: bytes, content_type: str = "") -> str:
    """Decode an HTML body: BOM, then header charset, then ``<meta>``, then detection.

    Never raises; bytes that do not fit the chosen encoding become U+FFFD.
    """
    if not body:
        return ""
    codec = _bom_charset(body) or charset_from_content_type(content_type) or charset_from_meta(body)
    legacy = codec is not None and not codec.replace("_", "-").startswith(("utf", "ucs", "unicode"))
    if legacy and not body.isascii():
        # A label that is wrong is common (a UTF-8 page sent as gb2312 becomes Chinese-looking
        # garbage); text in a legacy charset that is also valid UTF-8 is all but unheard of.
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if codec is None:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start >= len(body) - 3:  # only a truncated sequence at the very end
                return body.decode("utf-8", errors="replace")
        codec = _detect(body)
    try:
        return body.decode(codec, errors="replace")
    except (LookupError, ValueError, TypeError):
        return body.decode("utf-8", errors="replace")
