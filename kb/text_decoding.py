"""Bytes of an upload to text: byte-order marks, UTF-16 without one, UTF-8, then charset detection.

Shared by table files (``kb.tables``) and text uploads (``assistant.ui.uploads``), so both read an
encoding the same way.
"""

from __future__ import annotations

import unicodedata

from kb.errors import TableError

# Single-byte encodings of Latin-script text are confused with each other by charset detection, more so
# on small files: the same bytes read "São Paulo" in Latin-1 and "Săo Paulo" in cp1250, and a cp1252 "€3"
# came back as cp775's "Ć3". So the Latin readings are compared by what real text does not contain.
_LATIN_CANDIDATES = ("cp1252", "cp1250")


def utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text without a byte-order mark: every other byte of ASCII text is NUL."""
    sample = data[:4096]
    if len(sample) < 4 or len(sample) % 2:
        return None
    even, odd = sample[0::2], sample[1::2]
    for zeros, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros.count(0) >= 0.9 * len(zeros) and other.count(0) <= 0.05 * len(other):
            return codec
    return None


def _implausible(text: str) -> int:
    """Signs that a Latin decoding is wrong: a symbol glued to a letter ("£ód"), a capital inside a
    lowercase word ("odŸ"), control characters."""
    events = 0
    for i, ch in enumerate(text):
        if ord(ch) <= 127:
            continue
        cat = unicodedata.category(ch)
        prev = text[i - 1] if i else " "
        nxt = text[i + 1] if i + 1 < len(text) else " "
        if cat[0] == "S" and (prev.isalpha() or nxt.isalpha()):
            events += 1
        elif cat == "Lu" and prev.isalpha() and prev.islower():
            events += 1
        elif cat == "Cc":
            events += 2
    return events


def _latin_reading(data: bytes, guess: str) -> str:
    """Among the guess and the common Latin code pages, the reading with the fewest implausible signs."""
    try:
        guessed = data.decode(guess)
    except (UnicodeDecodeError, LookupError):
        guessed = None
    if guessed is not None:
        letters = [ch for ch in guessed if ord(ch) > 127 and ch.isalpha()]
        latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
        if letters and latin < len(letters) / 2:
            return guess  # a Cyrillic, Greek… reading: not a Latin code page question
    scored = []
    for rank, enc in enumerate(_LATIN_CANDIDATES + (guess,)):
        try:
            scored.append((_implausible(data[:200_000].decode(enc)), rank, enc))
        except (UnicodeDecodeError, LookupError):
            continue
    return min(scored)[2] if scored else guess


def decode_text(data: bytes) -> tuple[str, str | None]:
    """Text and the detected encoding (``None`` when it was plain UTF-8)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", "replace"), None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace"), "utf-16"
    codec = utf16_without_bom(data)
    if codec:
        return data.decode(codec, "replace"), codec
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data[:1_000_000]).best()
    if best is None or best.encoding is None:
        raise TableError("The file is not text in any encoding I recognise; is it really a text or table file?")
    encoding = _latin_reading(data, best.encoding)
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise TableError(f"The file could not be decoded as {encoding}.") from exc


def looks_binary(data: bytes) -> bool:
    """NUL bytes near the start that are not UTF-16 text: an image, an archive, an executable."""
    sample = data[:10_000]
    if b"\x00" not in sample or data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    return utf16_without_bom(data) is None
