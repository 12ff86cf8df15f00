"""Is a body labelled HTML text at all? Binary files served as ``text/html`` (an image, a PDF,
an archive) must not be indexed as text: decoded in any charset they give garbage words, which
language detection then tags as Chinese or worse.

Cheap enough for the event loop: a look at the first bytes, no decoding.
"""

from __future__ import annotations

__all__ = ["not_text"]

SNIFF_BYTES = 8192

# File signatures (as the WHATWG MIME Sniffing standard lists them) of what is never text.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"RIFF", "a RIFF file (WebP, WAV, AVI)"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b\x08", "gzip data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x00\x00\x01\x00", "an icon"),
    (b"wOFF", "a web font"),
    (b"wOF2", "a web font"),
    (b"\x7fELF", "an executable"),
    (b"MZ", "an executable"),
)
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff")  # their text is full of NUL bytes
# C0 controls text never holds (tab, line feed, form feed, carriage return and escape it may)
_CONTROLS = bytes(c for c in range(32) if c not in (9, 10, 12, 13, 27))
_MAX_CONTROL_SHARE = 0.01


def not_text(body: bytes) -> str | None:
    """What ``body`` is when it is not text (``"a PNG image"``, ``"binary data"``), else None."""
    head = body[:SNIFF_BYTES].lstrip(b" \t\r\n")
    for signature, what in _SIGNATURES:
        if head.startswith(signature):
            return what
    if head.startswith(_UTF16_32_BOMS):
        return None
    # Legacy encodings (Shift_JIS, GBK, windows-1252) have no controls either: only binary does
    controls = len(head) - len(head.translate(None, _CONTROLS))
    if b"\x00" in head or controls > _MAX_CONTROL_SHARE * len(head):
        return "binary data"
    return None
