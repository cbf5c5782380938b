"""Bytes of an upload to text: byte-order marks, UTF-16 without one, UTF-8, then charset detection.

Shared by table files (``kb.tables``) and text uploads (``assistant.ui.uploads``), so both read an
encoding the same way.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from contextvars import ContextVar
from dataclasses import dataclass

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


_WORD = re.compile(r"\w+")


def _other_latin_reading(data: bytes, text: str, encoding: str) -> str:
    """A Western and a Central European code page read most bytes alike and are told apart by guesswork, more so
    in a short file (a Czech "Plzeň" in cp1250 is "Plzeò" in cp1252): where the other one reads this file
    differently, the words it would change, so the person can tell which reading is right."""
    letters = [ch for ch in text[:200_000] if ord(ch) > 127 and ch.isalpha()]
    if not letters or sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters) < len(letters) / 2:
        return ""
    for other in _LATIN_CANDIDATES:
        if codecs.lookup(other).name == codecs.lookup(encoding).name:
            continue
        try:
            alt = data[:200_000].decode(other)
        except UnicodeDecodeError:
            continue
        changed: list[str] = []
        for m in _WORD.finditer(text[:len(alt)]):
            theirs = alt[m.start():m.end()]
            if theirs != m.group() and theirs.isalpha() and f"“{m.group()}” as “{theirs}”" not in changed:
                changed.append(f"“{m.group()}” as “{theirs}”")
                if len(changed) == 3:
                    break
        if changed:
            return f" (a guess: as {other} it would read {', '.join(changed)})"
    return ""


@dataclass(frozen=True)
class DecodedText:
    """An upload's text, its encoding (``None`` for UTF-8) and what the person should know about the reading."""

    text: str
    encoding: str | None = None
    notes: tuple[str, ...] = ()


# A file counts as UTF-8 with stray bytes, not as a single-byte code page, when its valid multi-byte UTF-8 characters
# are at least this share of its undecodable bytes. A code-page file forms a valid UTF-8 pair only by chance (a
# capital letter followed by a symbol: "Ã©"), so its ratio stays far below; a UTF-8 file with one pasted Latin-1
# byte, or two exports of different encodings joined, is far above.
MIN_UTF8_SHARE = 0.25
_STRAY_SEEN: ContextVar[list[int]] = ContextVar("stray_utf8_bytes")


def _replace_and_count(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: one U+FFFD per undecodable byte, each byte's offset recorded."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _STRAY_SEEN.get().extend(range(exc.start, exc.end))
    return "\ufffd" * (exc.end - exc.start), exc.end


codecs.register_error("evidentia.count-replace", _replace_and_count)


def _line_numbers(data: bytes, offsets: list[int]) -> list[int]:
    """1-based line numbers of byte offsets (ascending), counted in one pass."""
    newline = b"\n" if b"\n" in data else b"\r"
    lines, line, last = [], 1, 0
    for off in offsets:
        line += data.count(newline, last, off)
        last = off
        lines.append(line)
    return lines


def _which_lines(lines: list[int]) -> str:
    unique = sorted(set(lines))
    shown = ", ".join(str(n) for n in unique[:5]) + (" …" if len(unique) > 5 else "")
    return f"line{'s' * (len(unique) != 1)} {shown}"


def _utf8_with_stray_bytes(data: bytes) -> DecodedText | None:
    """The file as UTF-8 with its undecodable bytes shown as U+FFFD, when it is mostly UTF-8; else ``None``."""
    rough = data.decode("utf-8", "replace")
    replaced = rough.count("\ufffd") - data.count("\ufffd".encode())
    non_ascii = len(rough) - len(rough.encode("ascii", "ignore"))
    good = non_ascii - rough.count("\ufffd")
    if good < 1 or good < MIN_UTF8_SHARE * replaced:
        return None
    token = _STRAY_SEEN.set([])
    try:
        text = data.decode("utf-8", "evidentia.count-replace")
        offsets = _STRAY_SEEN.get()
    finally:
        _STRAY_SEEN.reset(token)
    n = len(offsets)
    note = (f"the file is UTF-8 except for {n} byte{'s' * (n != 1)} on {_which_lines(_line_numbers(data, offsets))}, "
            f"which {'are' if n != 1 else 'is'} not valid UTF-8 (another encoding pasted in?) and show{'s' * (n == 1)} "
            "as “\ufffd”; save the file as UTF-8 to keep those characters")
    return DecodedText(text.lstrip("\ufeff"), None, (note,))


def decode_upload(data: bytes) -> DecodedText:
    """The text of an upload: byte-order marks, UTF-16 without one, UTF-8 (with any stray bytes marked), then
    charset detection for single-byte code pages."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        try:
            return DecodedText(data.decode("utf-8").lstrip("\ufeff"))
        except UnicodeDecodeError:
            return _utf8_with_stray_bytes(data) or DecodedText(data.decode("utf-8", "replace").lstrip("\ufeff"))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return DecodedText(data.decode("utf-16", "replace").lstrip("\ufeff"), "utf-16")
    codec = utf16_without_bom(data)
    if codec:
        return DecodedText(data.decode(codec, "replace").lstrip("\ufeff"), codec)
    try:
        return DecodedText(data.decode("utf-8").lstrip("\ufeff"))
    except UnicodeDecodeError:
        pass
    mostly_utf8 = _utf8_with_stray_bytes(data)
    if mostly_utf8 is not None:
        return mostly_utf8
    from charset_normalizer import from_bytes

    best = from_bytes(data[:1_000_000]).best()
    if best is None or best.encoding is None:
        raise TableError("The file is not text in any encoding I recognise; is it really a text or table file?")
    encoding = _latin_reading(data, best.encoding)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise TableError(f"The file could not be decoded as {encoding}.") from exc
    notes = [f"decoded the file as {encoding}"]
    other = _other_latin_reading(data, text, encoding)
    if other:
        notes[0] += other
    return DecodedText(text.lstrip("\ufeff"), encoding, tuple(notes))


def decode_text(data: bytes) -> tuple[str, str | None]:
    """Text and the detected encoding (``None`` when it was UTF-8); :func:`decode_upload` also says what it assumed."""
    decoded = decode_upload(data)
    return decoded.text, decoded.encoding


def looks_binary(data: bytes) -> bool:
    """NUL bytes near the start that are not UTF-16 text: an image, an archive, an executable."""
    sample = data[:10_000]
    if b"\x00" not in sample or data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    return utf16_without_bom(data) is None
