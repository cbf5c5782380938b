"""The one character normalisation of text read from an upload's glyphs (the PDF and Word readers share it).

Targeted, not NFKC: NFKC also folds characters whose difference is meaning ("Chi²" -> "Chi2", "10⁵" -> "105",
"m²" -> "m2", "½" -> "1⁄2", "µ" -> "μ"), and a number read wrongly is worse than one not read. Only what is the
same text drawn another way is changed: the Latin typographic ligatures (ﬁ -> fi), spaces of another width (a
no-break or thin space -> a space), full-width ASCII forms ("１２％" -> "12%"); soft hyphens and zero-width
characters, which show nothing in running text, are dropped. Superscripts, subscripts, fractions, µ, ° and every
other character stay as they are.
"""

from __future__ import annotations

_LIGATURES = {"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
              "\ufb06": "st"}
# no-break, en/em/figure/thin/hair spaces and the like, narrow no-break, medium mathematical, ideographic
_SPACES = dict.fromkeys(map(ord, "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                                 "\u202f\u205f\u3000"), " ")
# soft hyphen, zero-width space, direction marks, word joiner, byte-order mark (the zero-width (non-)joiners stay:
# they change how some scripts are written)
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200e\u200f\u2060\ufeff"), None)
_FULL_WIDTH = {code: chr(code - 0xfee0) for code in range(0xff01, 0xff5f)}  # "！" .. "～" -> "!" .. "~"
_TABLE = str.maketrans({**{ord(k): v for k, v in _LIGATURES.items()}, **_SPACES, **_INVISIBLE, **_FULL_WIDTH})


def normalise_glyphs(text: str) -> str:
    """``text`` with ligatures spelled out, odd spaces made spaces, full-width ASCII made ASCII, and soft hyphens and
    zero-width characters dropped; nothing else changed."""
    return text.translate(_TABLE)
