"""JSON tables (records, rows, columns, pandas orients): text in, a raw grid, header and caption out."""

from __future__ import annotations

import json
import math
from typing import Any

from kb.errors import TableError


def _json_float(text: str) -> float | str:
    value = float(text)
    return value if math.isfinite(value) else text  # "1e309" stays as written, not "inf"


def _json_int(text: str) -> int | str:
    return int(text) if len(text) <= 4000 else text  # past Python's int-digit limit: keep the digits


def _read_json(text: str) -> tuple[list[list[Any]], list[str] | None, str | None]:
    try:
        obj = json.loads(text, parse_float=_json_float, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise TableError(f"The JSON file is not valid JSON ({exc.msg} at line {exc.lineno}).") from exc
    except RecursionError as exc:
        raise TableError("The JSON is nested too deeply to be a table (thousands of levels).") from exc
    caption = None
    if isinstance(obj, dict):
        # {"title": ..., "columns": [...], "rows"/"data": [[...]]} (pandas "split" orient and alike)
        caption = next((obj[k] for k in ("caption", "title", "table_caption") if isinstance(obj.get(k), str)), None)
        cols = next((obj[k] for k in ("columns", "header", "table_column_names") if isinstance(obj.get(k), list)), None)
        data = next((obj[k] for k in ("rows", "data", "records", "table_content_values")
                     if isinstance(obj.get(k), list)), None)
        if data is not None and (cols is None or all(isinstance(r, list) for r in data)):
            if data and all(isinstance(r, dict) for r in data):
                return _records(data) + (caption,)
            return data, cols, caption
        values = list(obj.values())
        if values and all(isinstance(v, list) and not any(isinstance(x, dict) for x in v) for v in values):
            # columns: {"Year": [...], ...} (lists of records are not columns: below)
            length = max(len(v) for v in values)
            grid = [[v[i] if i < len(v) else "" for v in values] for i in range(length)]
            return grid, list(obj.keys()), None
        if values and all(isinstance(v, dict) for v in values):  # index orient: {row: {col: v}}
            grid, cols = _records([{"": k, **v} for k, v in obj.items()])
            return grid, cols, None
        # {"study": "REACH-2", "sites": [{…}, …]}: the one list of records is the table, the rest its caption.
        # Found as a new user: an export shaped like this was refused.
        lists = [(k, v) for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
        if len(lists) == 1:
            key, records = lists[0]
            context = [f"{k}: {v}" for k, v in obj.items() if isinstance(v, (str, int, float)) and k != key][:3]
            grid, names = _records(records)
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
            return _records(obj) + (None,)
        if all(isinstance(r, list) for r in obj):
            return obj, None, None
    raise TableError("The JSON must be a list of records, a list of rows, or an object of columns.")


_NESTED_DEPTH = 3  # levels of nested objects spread into columns; deeper ones stay as written


def _flat(record: dict, prefix: str = "", depth: int = 0) -> dict:
    """A record with its nested objects spread into columns: {"pi": {"name": "Dr Shah"}} -> {"pi name": "Dr Shah"}.
    (pandas.json_normalize does this too, but turns a column's integers into floats wherever a record lacks it.)"""
    out: dict = {}
    for k, v in record.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v and depth < _NESTED_DEPTH:
            out.update(_flat(v, f"{name} ", depth + 1))
        else:
            out[name] = v
    return out


def _records(records: list[dict]) -> tuple[list[list[Any]], list[str]]:
    records = [_flat(r) for r in records]
    cols: dict[str, None] = {}
    for rec in records:
        for k in rec:
            cols.setdefault(str(k), None)
    names = list(cols)
    return [[rec.get(k, "") for k in names] for rec in records], names
