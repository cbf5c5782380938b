"""Markdown pipe tables: text in, a raw grid, header and caption out."""

from __future__ import annotations

import re

from kb.errors import TableError

_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _split_md_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [c.strip().replace("\\|", "|") for c in cells]


def _read_markdown(text: str) -> tuple[list[list[str]], list[str] | None, str | None]:
    lines = text.splitlines()
    table_lines = [i for i, ln in enumerate(lines) if ln.strip().startswith("|") or
                   (ln.count("|") >= 2 and not ln.strip().startswith("#"))]
    if not table_lines:
        raise TableError("No Markdown table (lines of cells separated by |) was found in the file.")
    start = table_lines[0]
    block = []
    for ln in lines[start:]:
        if not ln.strip():
            if block:
                break
            continue
        if "|" not in ln:
            break
        block.append(ln)
    caption = None
    for ln in reversed(lines[:start]):
        if ln.strip():
            caption = ln.strip().lstrip("#").strip().strip("*_").strip()
            break
    header = None
    if len(block) >= 2 and _MD_SEPARATOR.match(block[1]):
        header = _split_md_row(block[0])
        body = block[2:]
    else:
        body = block
    grid = [_split_md_row(ln) for ln in body if not _MD_SEPARATOR.match(ln)]
    return grid, header, caption
