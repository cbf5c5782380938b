"""Sentence splitting, chunking and parsing edge cases."""

from __future__ import annotations

import json

import pytest

from kb.ingest import (MAX_CHUNK_TOKENS, MAX_SENTENCE_CHARS, MAX_SENTENCE_TOKENS, Document, IngestError,
                       assign_chunks, bart_token_counts, bart_tokenizer, decode_bytes, document_sentences,
                       html_to_text, parse_file, split_sentences, stable_id)


def test_split_keeps_offsets_and_abbreviations():
    text = "Bees pollinate flowers. Dr. Smith studies bees, e.g. honey bees!  Is the sun a star?\n\nYes"
    sents = split_sentences(text)
    assert [s.text for s in sents] == ["Bees pollinate flowers.", "Dr. Smith studies bees, e.g. honey bees!",
                                       "Is the sun a star?", "Yes"]
    for s in sents:
        assert " ".join(text[s.start:s.end].split()) == s.text


def test_one_megabyte_line_is_cut_into_bounded_pieces():
    text = ("word " * 200_000).strip()  # 1 MB, no punctuation
    sents = split_sentences(text)
    assert len(sents) > 100
    assert all(len(s.text) <= MAX_SENTENCE_CHARS for s in sents)
    assert sum(len(s.text.split()) for s in sents) == 200_000  # nothing lost
    doc = document_sentences(Document(doc_id="d", text=text[:60_000]))
    counts = bart_token_counts([s.text for s in doc])
    assert max(counts) <= MAX_SENTENCE_TOKENS


def test_unbroken_megabyte_token_is_split_by_tokens():
    text = "x" * 1_000_000
    sents = split_sentences(text)
    assert all(len(s.text) <= MAX_SENTENCE_CHARS for s in sents)
    assert "".join(s.text for s in sents) == text


def test_chunks_hold_at_most_512_bart_tokens_and_are_consecutive():
    sents = split_sentences(" ".join(f"Sentence number {i} talks about photosynthesis in green plants." for i in range(300)))
    assign_chunks(sents)
    counts = bart_token_counts([s.text for s in sents])
    per_chunk: dict[int, int] = {}
    for s, n in zip(sents, counts):
        per_chunk[s.chunk] = per_chunk.get(s.chunk, 0) + n
    assert max(per_chunk.values()) <= MAX_CHUNK_TOKENS
    assert len(per_chunk) > 1
    assert [s.chunk for s in sents] == sorted(s.chunk for s in sents)


def test_bart_tokenizer_is_gpt2_bpe():
    tok = bart_tokenizer()
    assert tok.convert_ids_to_tokens(tok("Hello world", add_special_tokens=False)["input_ids"]) == ["Hello", "Ġworld"]


def test_non_utf8_and_empty_files(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Café au lait is a drink. Ünïcödé text.".encode("latin-1"))
    docs = parse_file(latin)
    assert "Caf" in docs[0].text and len(split_sentences(docs[0].text)) == 2
    assert decode_bytes(b"\xff\xfe\x00garbage\x80") is not None
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert parse_file(empty) == []
    assert split_sentences("") == [] and split_sentences("   \n\n ") == []


def test_parsers_html_md_jsonl_and_errors(tmp_path):
    html = tmp_path / "p.html"
    html.write_text("<html><head><title>Bees</title><script>var x=1;</script></head>"
                    "<body><p>Bees pollinate.</p><p>They make honey.</p></body></html>")
    (doc,) = parse_file(html)
    assert doc.title == "Bees" and "var x" not in doc.text
    assert [s.text for s in split_sentences(doc.text)] == ["Bees pollinate.", "They make honey."]
    md = tmp_path / "n.md"
    md.write_text("# Title here\n\nSome **bold** text with a [link](http://x).\n")
    (mdoc,) = parse_file(md)
    assert mdoc.title == "Title here" and "bold" in mdoc.text and "http" not in mdoc.text
    md.write_text("# Guide\n## Contraindications\nZorvatinib must not be given to pregnant women.\n"
                  "Take it with food.\n")
    (mdoc,) = parse_file(md)
    assert [s.text for s in split_sentences(mdoc.text)] == [  # a heading never runs into its first line
        "Guide", "Contraindications", "Zorvatinib must not be given to pregnant women.", "Take it with food."]
    jl = tmp_path / "d.jsonl"
    jl.write_text(json.dumps({"id": "a", "text": "First doc.", "title": "A", "url": "http://a"}) + "\n\n"
                  + json.dumps({"id": "b", "abstract": "Second doc."}) + "\n")
    docs = parse_file(jl, license="CC0")
    assert [d.title for d in docs] == ["A", "d #b"] and docs[0].url == "http://a" and docs[0].license == "CC0"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(IngestError, match="line 1"):
        parse_file(bad)
    with pytest.raises(IngestError, match="unsupported"):
        parse_file(tmp_path / "x.docx") if (tmp_path / "x.docx").write_text("x") else None


def test_stable_ids_depend_only_on_content():
    assert stable_id("doc", "text") == stable_id("doc", "text") != stable_id("doc", "text2")
