"""The text chunks of a PNG file, read with ``struct`` and ``zlib`` (no imaging library).

A character card's PNG carries the card as a ``tEXt`` chunk: ``chara`` (V2, base64 of its JSON) or ``ccv3`` (V3).
``zTXt`` (compressed) and ``iTXt`` (international) chunks are read too, since some editors write those.

A compressed chunk is inflated with a bound (:data:`MAX_CHUNK_TEXT`, and :data:`MAX_TEXT` over the whole file):
a 0.25 MB card can hold a chunk that inflates past 500 MB, and the 20 MB file cap alone would let one reach
about 20 GB. A card's text is far smaller than either bound.
"""

from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_CHUNK_TEXT = 20 * 1024 * 1024
"""The most one text chunk may inflate to (bytes): an import file's own cap."""
MAX_TEXT = 40 * 1024 * 1024
"""The most all of a file's text chunks may come to together."""


class PngError(ValueError):
    """The bytes are not a well-formed PNG (the message says where it breaks)."""


def is_png(data: bytes) -> bool:
    return data.startswith(SIGNATURE)


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Each chunk's type and data, up to IEND; checks lengths and CRCs."""
    out: list[tuple[bytes, bytes]] = []
    at = len(SIGNATURE)
    while at < len(data):
        if at + 8 > len(data):
            raise PngError(f"truncated chunk header at byte {at}")
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        end = at + 8 + length + 4
        if end > len(data):
            raise PngError(f"chunk {kind.decode('latin-1')!r} at byte {at} runs past the end of the file")
        body = data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(kind + body) != crc:
            raise PngError(f"chunk {kind.decode('latin-1')!r} at byte {at} is damaged (its CRC does not match)")
        out.append((kind, body))
        if kind == b"IEND":
            break
        at = end
    return out


def _text(kind: bytes, body: bytes) -> tuple[str, str] | None:
    """A text chunk's keyword and text (None: not a text chunk)."""
    try:
        if kind == b"tEXt":
            keyword, _, text = body.partition(b"\0")
            return keyword.decode("latin-1"), text.decode("latin-1")
        if kind == b"zTXt":
            keyword, _, rest = body.partition(b"\0")
            return keyword.decode("latin-1"), _inflate(kind, rest[1:]).decode("latin-1")
        if kind == b"iTXt":
            keyword, _, rest = body.partition(b"\0")
            compressed, rest = rest[0], rest[2:]
            _language, _, rest = rest.partition(b"\0")
            _translated, _, text = rest.partition(b"\0")
            return keyword.decode("latin-1"), (_inflate(kind, text) if compressed else text).decode("utf-8")
    except (zlib.error, UnicodeDecodeError, IndexError) as exc:
        raise PngError(f"text chunk {kind.decode('latin-1')!r} cannot be read: {exc}") from None
    return None


def _inflate(kind: bytes, data: bytes) -> bytes:
    """``data`` inflated, never past :data:`MAX_CHUNK_TEXT` bytes."""
    inflater = zlib.decompressobj()
    out = inflater.decompress(data, MAX_CHUNK_TEXT + 1)
    if len(out) > MAX_CHUNK_TEXT or inflater.unconsumed_tail:
        raise PngError(
            f"text chunk {kind.decode('latin-1')!r} inflates past {MAX_CHUNK_TEXT // 1024 // 1024} MB, far more than "
            "a card holds; refused (a file built to exhaust memory?)"
        )
    return out


def text_chunks(data: bytes) -> dict[str, str]:
    """The PNG's text chunks, keyword -> text (the first of each keyword).

    Raises:
        PngError: not a PNG, or a chunk is truncated or damaged.
    """
    if not is_png(data):
        raise PngError("not a PNG (its first bytes are not the PNG signature)")
    out: dict[str, str] = {}
    total = 0
    for kind, body in _chunks(data):
        found = _text(kind, body)
        if found is not None:
            total += len(found[1])
            if total > MAX_TEXT:
                raise PngError(f"its text chunks come to more than {MAX_TEXT // 1024 // 1024} MB together; refused")
            out.setdefault(*found)
    return out
