"""JSON tables (records, rows, columns, pandas orients): text in, a raw grid, header, caption and notes out.

What ``json.loads`` does silently, and a table must not (#79): a repeated key in one object keeps only its last
value; a number a float cannot hold (``1e-400``, ``0.1000000000000000055511``) becomes another number; and the whole
document is parsed before anyone counts its rows. Here repeated keys are both kept (the later one as "a (2)"),
such numbers stay as written, flattened nested names never take an existing column's name, and the rows of the
top-level list (or of the top-level object's lists) are counted as they are decoded, so a file of a million
records is refused at the row limit without being parsed whole. Each of these is said in the notes.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from kb.errors import TableError
from kb.table_limits import too_many_cells
from kb.table_normalise import _cell_text

# The keys that hold a table inside a wrapping object ({"title": …, "columns": […], "rows": [[…]]}).
_CAPTION_KEYS = ("caption", "title", "table_caption")
_COLUMN_KEYS = ("columns", "header", "table_column_names")
_DATA_KEYS = ("rows", "data", "records", "table_content_values")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NESTED_DEPTH = 3  # levels of nested objects spread into columns; deeper ones stay as written


def _json_int(text: str) -> int | str:
    return int(text) if len(text) <= 4000 else text  # past Python's int-digit limit: keep the digits


@dataclass
class _Decoding:
    """One document's decoding: the limits it stops at and what it had to say about the values."""

    text: str
    max_rows: int  # a top-level list (or the top-level object) may hold 10 more items: a header, a title
    max_cells: int
    repeated: Counter = field(default_factory=Counter)  # key -> objects in which it is repeated
    renamed: dict[str, dict[str, None]] = field(default_factory=dict)  # key -> the names its later values got
    as_written: list[str] = field(default_factory=list)  # numbers kept as their text

    def __post_init__(self):
        self.decoder = json.JSONDecoder(parse_float=self._float, parse_int=_json_int,
                                        object_pairs_hook=self._object)
        self.cells = 0

    # -- values -------------------------------------------------------------------------------------------
    def _float(self, text: str) -> float | str:
        """A float when it shows as written ("1.50" as 1.5 is the same number); else the text: "1e309" is no
        float, "1e-400" would be 0, and "0.1000000000000000055511" would be 0.1."""
        value = float(text)
        if math.isfinite(value):
            try:
                if Decimal(_cell_text(value)) == Decimal(text):
                    return value
            except InvalidOperation:
                pass
        self.as_written.append(text)
        return text

    def _object(self, pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        # A key repeated in one object: json.loads keeps the last value only. Both are kept, the later as "a (2)".
        taken = {k for k, _ in pairs}
        obj = {}
        self.repeated.update({k for k, n in Counter(k for k, _ in pairs).items() if n > 1})
        for key, value in pairs:
            if key in obj:
                n = 2
                while f"{key} ({n})" in obj or f"{key} ({n})" in taken:
                    n += 1
                renamed = f"{key} ({n})"
                self.renamed.setdefault(key, {})[renamed] = None
                key = renamed
                taken.add(key)
            obj[key] = value
        return obj

    # -- the document, decoded top-down with its long lists counted as they are read -------------------------
    def error(self, message: str, pos: int) -> TableError:
        return TableError(f"The JSON file is not valid JSON ({message} at line {self.text.count(chr(10), 0, pos) + 1}).")

    def skip(self, pos: int) -> int:
        return _WHITESPACE.match(self.text, pos).end()

    def value(self, pos: int) -> tuple[Any, int]:
        try:
            return self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise TableError(f"The JSON file is not valid JSON ({exc.msg} at line {exc.lineno}).") from exc

    def count(self, n: int, item: Any) -> None:
        if n > self.max_rows + 10:
            raise TableError(f"The table has more than {self.max_rows:,} rows; the limit is {self.max_rows:,} "
                             "(EVIDENTIA_TABLE_MAX_ROWS).")
        self.cells += len(item) if isinstance(item, (dict, list)) else 1
        if self.cells > self.max_cells:
            raise too_many_cells(self.max_cells)

    def array(self, pos: int) -> tuple[list, int]:
        """The list opening at ``pos``, element by element, refused as soon as it has too many."""
        items: list = []
        pos = self.skip(pos + 1)
        if self.text.startswith("]", pos):
            return items, pos + 1
        while True:
            item, pos = self.value(pos)
            items.append(item)
            self.count(len(items), item)
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
            elif self.text.startswith("]", pos):
                return items, pos + 1
            else:
                raise self.error("Expecting ',' delimiter", pos)

    def member_value(self, pos: int) -> tuple[Any, int]:
        return self.array(pos) if self.text.startswith("[", pos) else self.value(pos)

    def object(self, pos: int) -> tuple[dict, int]:
        """The top-level object, its lists (a table's rows or columns) read as :meth:`array` reads them."""
        pairs: list[tuple[str, Any]] = []
        pos = self.skip(pos + 1)
        if self.text.startswith("}", pos):
            return {}, pos + 1
        while True:
            if not self.text.startswith('"', pos):
                raise self.error("Expecting property name enclosed in double quotes", pos)
            key, pos = self.value(pos)
            pos = self.skip(pos)
            if not self.text.startswith(":", pos):
                raise self.error("Expecting ':' delimiter", pos)
            value, pos = self.member_value(self.skip(pos + 1))
            pairs.append((key, value))
            self.count(len(pairs), None)  # {row: {col: value}}: one key per row
            pos = self.skip(pos)
            if self.text.startswith(",", pos):
                pos = self.skip(pos + 1)
            elif self.text.startswith("}", pos):
                break
            else:
                raise self.error("Expecting ',' delimiter", pos)
        keys = Counter(k for k, _ in pairs)
        twice = [k for k in (*_CAPTION_KEYS, *_COLUMN_KEYS, *_DATA_KEYS) if keys[k] > 1]
        if twice:
            raise TableError(f"The JSON object gives the key {twice[0]!r} twice, so it is unclear which one holds "
                             "the table; keep one.")
        return self._object(pairs), pos + 1

    def document(self) -> Any:
        pos = self.skip(0)
        try:
            if self.text.startswith("[", pos):
                obj, pos = self.array(pos)
            elif self.text.startswith("{", pos):
                obj, pos = self.object(pos)
            else:
                obj, pos = self.value(pos)
        except RecursionError as exc:
            raise TableError("The JSON is nested too deeply to be a table (thousands of levels).") from exc
        if self.skip(pos) != len(self.text):
            raise self.error("Extra data", self.skip(pos))
        return obj

    def notes(self) -> list[str]:
        notes = []
        for key, n in self.repeated.items():
            renamed = list(self.renamed[key])
            notes.append(f"the key {key!r} is repeated within {n} object{'s' * (n != 1)}; no value was dropped: the "
                         f"later {'ones are' if len(renamed) > 1 else 'one is'} read as "
                         + ", ".join(repr(r) for r in renamed[:3]) + (" …" if len(renamed) > 3 else ""))
        if self.as_written:
            shown = ", ".join(self.as_written[:3]) + (" …" if len(self.as_written) > 3 else "")
            n = len(self.as_written)
            notes.append(f"kept {n} number{'s' * (n != 1)} as written ({shown}): read as floating-point "
                         f"number{'s' * (n != 1)} {'they' if n != 1 else 'it'} would change (beyond a float's range "
                         "or precision)")
        return notes


def _read_json(text: str, max_rows: int = 200_000,
               max_cells: int = 1_000_000) -> tuple[list[list[Any]], list[str] | None, str | None, list[str]]:
    """(grid, header or None, caption or None, notes)."""
    decoding = _Decoding(text, max_rows=max_rows, max_cells=max_cells)
    obj = decoding.document()
    notes: list[str] = []
    grid, header, caption = _table_of(obj, notes)
    return grid, header, caption, decoding.notes() + notes


def _table_of(obj: Any, notes: list[str]) -> tuple[list[list[Any]], list[str] | None, str | None]:
    caption = None
    if isinstance(obj, dict):
        # {"title": ..., "columns": [...], "rows"/"data": [[...]]} (pandas "split" orient and alike)
        caption = next((obj[k] for k in _CAPTION_KEYS if isinstance(obj.get(k), str)), None)
        cols = next((obj[k] for k in _COLUMN_KEYS if isinstance(obj.get(k), list)), None)
        data = next((obj[k] for k in _DATA_KEYS if isinstance(obj.get(k), list)), None)
        if data is not None and (cols is None or all(isinstance(r, list) for r in data)):
            if data and all(isinstance(r, dict) for r in data):
                return _records(data, notes) + (caption,)
            return data, cols, caption
        values = list(obj.values())
        if values and all(isinstance(v, list) and not any(isinstance(x, dict) for x in v) for v in values):
            # columns: {"Year": [...], ...} (lists of records are not columns: below)
            length = max(len(v) for v in values)
            grid = [[v[i] if i < len(v) else "" for v in values] for i in range(length)]
            return grid, list(obj.keys()), None
        if values and all(isinstance(v, dict) for v in values):  # index orient: {row: {col: v}}
            index = "" if not any("" in v for v in values) else "index"
            grid, cols = _records([{index: k, **v} for k, v in obj.items()], notes)
            return grid, cols, None
        # {"study": "REACH-2", "sites": [{…}, …]}: the one list of records is the table, the rest its caption.
        # Found as a new user: an export shaped like this was refused.
        lists = [(k, v) for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
        if len(lists) == 1:
            key, records = lists[0]
            context = [f"{k}: {v}" for k, v in obj.items() if isinstance(v, (str, int, float)) and k != key][:3]
            grid, names = _records(records, notes)
            return grid, names, caption or (f"{key} ({'; '.join(context)})" if context else str(key))
        if values and all(isinstance(v, (str, int, float, bool)) or v is None for v in values):
            # One record, {"Title": …, "Author": …, "Pages": …}: one row under its fields' names. Found as a new
            # user: a book's record exported as one object was refused.
            return [["" if v is None else v for v in values]], list(obj.keys()), caption
        raise TableError("The JSON holds an object I cannot read as a table: use a list of records "
                         "([{\"col\": value}, …]) or columns ({\"col\": [values]}).")
    if isinstance(obj, list):
        if not obj:
            raise TableError("The JSON file holds an empty list: no rows.")
        if all(isinstance(r, dict) for r in obj):
            return _records(obj, notes) + (None,)
        if all(isinstance(r, list) for r in obj):
            return obj, None, None
    raise TableError("The JSON must be a list of records, a list of rows, or an object of columns.")


def _flat(record: dict, path: tuple[str, ...] = (), depth: int = 0) -> dict[tuple[str, ...], Any]:
    """A record with its nested objects spread into columns, each named by its path of keys:
    {"pi": {"name": "Dr Shah"}} -> {("pi", "name"): "Dr Shah"}.
    (pandas.json_normalize does this too, but turns a column's integers into floats wherever a record lacks it.)"""
    out: dict[tuple[str, ...], Any] = {}
    for k, v in record.items():
        key = (*path, str(k))
        if isinstance(v, dict) and v and depth < _NESTED_DEPTH:
            out.update(_flat(v, key, depth + 1))
        else:
            out[key] = v
    return out


def _column_names(paths: list[tuple[str, ...]], notes: list[str]) -> list[str]:
    """One distinct name per path: "pi name" for ("pi", "name"), unless a key already reads "pi name" (a record's
    own "pi name" was silently overwritten by the nested pi.name, #79); then the nested field is "pi.name", with
    " (2)" and so on if even that is taken, and the notes say so."""
    by_name: dict[str, list[tuple[str, ...]]] = {}
    for p in paths:
        by_name.setdefault(" ".join(p), []).append(p)
    names: dict[tuple[str, ...], str] = {}
    taken = set(by_name)
    for name, group in by_name.items():
        group = sorted(group, key=len)  # a key as written keeps its name; a flattened one gives way (stable sort)
        names[group[0]] = name
        for p in group[1:]:
            candidate, n = ".".join(p), 2
            while candidate in taken:
                candidate, n = f"{'.'.join(p)} ({n})", n + 1
            taken.add(candidate)
            names[p] = candidate
            notes.append(f"the nested field {' → '.join(p)} is named {candidate!r}, since {name!r} is already "
                         "a column")
    return [names[p] for p in paths]


def _records(records: list[dict], notes: list[str]) -> tuple[list[list[Any]], list[str]]:
    flats = [_flat(r) for r in records]
    paths: dict[tuple[str, ...], None] = {}
    for rec in flats:
        for p in rec:
            paths.setdefault(p, None)
    order = list(paths)
    return [[rec.get(p, "") for p in order] for rec in flats], _column_names(order, notes)
