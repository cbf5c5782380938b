"""The schemas the model writes table programs under, pinned: a change to how programs are run (issue 76: the
executor's operator table) must not change what the model may write.

Pins :class:`tools._table_ops_model.Program`'s JSON schema, the plain per-table schema
(:func:`tools._table_ops_model.program_schema`), the typed grammar (:func:`tools._table_grammar.typed_program_schema`)
and the SQL grammar (:func:`tools._table_sql.sql_grammar`) over two small tables, one of numbers, names and dates, one
of text only. After a deliberate change, review the difference and regenerate:
``PYTHONPATH=$PWD python tests/test_program_schema_pinned.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_grammar import typed_program_schema
from tools._table_ops_model import Program, program_schema
from tools._table_sql import sql_grammar

SNAPSHOT = Path(__file__).parent / "snapshots" / "program_schemas.json"

TABLES = {
    "trials": Table(name="trials", title="Trials", columns=["Trial", "Country", "Published", "Participants", "Deaths"],
                    rows=[["ALPHA-1", "UK", "2019-03-14", "1,204", "187"],
                          ["BETA", "France", "2020-11-02", "856", "142"],
                          ["CARDIO-X", "UK", "2021-06-30", "2,310", "171"]]),
    "vaccines": Table(name="vaccines", title="Vaccines", columns=["Vaccine", "Manufacturer"],
                      rows=[["Comirnaty", "Pfizer"], ["Spikevax", "Moderna"]]),
}


def schemas() -> dict:
    out: dict = {"Program": Program.model_json_schema()}
    for name, table in TABLES.items():
        typed = TypedTable.build(table)
        idents = tuple(col.ident for col in typed.columns)
        for with_check in (False, True):
            kind = "claim" if with_check else "question"
            out[f"{name}/plain/{kind}"] = program_schema(idents, with_check).model_json_schema()
            out[f"{name}/typed/{kind}"] = typed_program_schema(typed, with_check).model_json_schema()
            out[f"{name}/sql/{kind}"] = sql_grammar(typed, kind)
    return out


def test_the_schemas_programs_are_written_under_are_pinned():
    assert SNAPSHOT.exists(), f"no pinned schemas; run: PYTHONPATH=$PWD python {Path(__file__).name}"
    pinned = json.loads(SNAPSHOT.read_text())
    current = json.loads(json.dumps(schemas()))
    assert current.keys() == pinned.keys()
    for key in pinned:
        assert current[key] == pinned[key], f"{key} changed: review, then regenerate (module docstring)"


if __name__ == "__main__":
    SNAPSHOT.write_text(json.dumps(schemas(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")
