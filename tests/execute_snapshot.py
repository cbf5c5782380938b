"""The executor's differential check: every program the dev logs and the rule examples run, with what it gave.

Records each call of :func:`tools._table_ops.execute` (its program, options, a fingerprint of the table and the
:class:`Execution` it returned or the error it raised) while it

- runs every program logged in the committed PubHealthTab dev logs (``docs/eval/runs/pubhealthtab-dev-*.jsonl``)
  as the model wrote it, then replays each logged claim as the evaluation's ``--replay`` does (the programs read
  by today's rules, run and voted, which calls ``execute`` on the rewritten programs too);
- runs each logged program again with every other function of ``Fn`` and with the options code sets (a ratio or
  change column, the second of an extreme, a group total or mean, a count threshold, one row across columns), so
  every operator runs over real tables, not only those the model happened to write;
- runs the examples of every rule in ``tools/rules.py`` (a veto rule's program through ``run_sampled``, a settle
  rule's message through ``settle``).

Made for refactors of the executor that must not change what it computes (issue 76: the if/elif branch turned into
a dispatch table): record before, record after, compare::

    PYTHONPATH=$PWD EVIDENTIA_EVAL_DATA_DIR=../shared/eval-data python tests/execute_snapshot.py before.json
    ... change tools/_table_ops.py ...
    PYTHONPATH=$PWD EVIDENTIA_EVAL_DATA_DIR=../shared/eval-data python tests/execute_snapshot.py after.json \
        --compare before.json

Without the benchmark data (``EVIDENTIA_EVAL_DATA_DIR``) only the rule examples run. Not a pytest module: the dev
tables are not in the repository.

Programs are recorded in the form they had before :class:`tools._table_ops_model.Options` (issue 76: each option a
field of Program's own, :func:`_program_record`), so a recording made before that change compares with one made after
it; the variants set the same options, through the options record.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
from pathlib import Path

import tools._table_ops as table_ops

REPO = Path(__file__).resolve().parent.parent
DEV_LOGS = sorted((REPO / "docs" / "eval" / "runs").glob("pubhealthtab-dev-*.jsonl"))
# The modules that imported ``execute`` by name; ``selected_rows`` looks it up in tools._table_ops at each call.
IMPORTERS = ("tools._table_program", "tools._claim_grounding", "tools.rules")


def _table_key(typed) -> str:
    table = typed.table
    text = json.dumps([table.columns, table.rows, list(typed.scope or ())], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(value):
    return json.loads(json.dumps(value, default=repr))


class Recorder:
    """Wraps ``execute`` and keeps one record per call, in call order."""

    def __init__(self):
        self.calls: list[dict] = []
        self.source = ""
        self.original = table_ops.execute

    def __call__(self, program, typed, **options):
        record = {"source": self.source, "program": _program_record(program), "options": _plain(options),
                  "table": _table_key(typed)}
        try:
            execution = self.original(program, typed, **options)
        except Exception as error:  # noqa: BLE001 - the error is part of what is compared
            record["error"] = f"{type(error).__name__}: {error}"
            self.calls.append(record)
            raise
        record["execution"] = _plain(dataclasses.asdict(execution))
        self.calls.append(record)
        return execution

    def install(self) -> None:
        import importlib

        table_ops.execute = self
        for name in IMPORTERS:
            module = importlib.import_module(name)
            if getattr(module, "execute", None) is self.original:
                module.execute = self


def _program_record(program) -> dict:
    """``program`` as data, with its options as the fields Program had before the options record (module docstring):
    per_column, minus_column, nth, group, across and more_rows_than, with their old defaults."""
    from tools._table_ops_model import RowGroups

    record = program.model_dump(mode="json")
    del record["options"]
    options = program.options
    record.update(per_column=options.divides_by, minus_column=options.subtracts, nth=options.nth,
                  group=options.grouping.by if isinstance(options.grouping, RowGroups) else None,
                  across=list(options.across),
                  more_rows_than=options.row_count.rows if options.row_count is not None else None)
    return record


def _run_logged(recorder: Recorder, data_dir: Path) -> int:
    """The dev logs' programs as written, then each logged claim replayed; the number of logged programs."""
    from assistant.evals.tables_eval import load_split
    from tools._cells import TypedTable
    from tools._table_ops_model import Program, ProgramError
    from tools._table_shape import shape_for_programs
    from tools.program_replay import replay_claims

    items = {it.id: it for it in load_split("pubhealthtab", data_dir, "dev")}
    logged = 0
    for path in DEV_LOGS:
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        records = [r for r in records if r.get("variant") == "program"]
        for rec in records:
            item = items.get(str(rec["id"]))
            if item is None:
                continue
            typed = TypedTable.build(shape_for_programs(item.table).table)
            for i, run in enumerate((rec.get("programs") or {}).get("runs") or []):
                if not run.get("raw"):
                    continue
                logged += 1
                recorder.source = f"{path.name}:{rec['id']}:{i}:as-written"
                try:
                    program = Program.model_validate(run["raw"])
                except ValueError:
                    continue
                for union in (False, True):
                    try:
                        table_ops.execute(program, typed, union_same_column=union)
                    except ProgramError:
                        pass
                for variant in _variants(program, typed):
                    recorder.source = f"{path.name}:{rec['id']}:{i}:variant"
                    try:
                        table_ops.execute(variant, typed)
                    except ProgramError:
                        pass
        recorder.source = f"{path.name}:replay"
        replay_claims(list(items.values()), records)
    return logged


def _variants(program, typed):
    """``program`` with each function, and with each option code sets (module docstring), in the order the
    recordings made before the options record ran them."""
    from typing import get_args

    from tools._table_ops_model import AcrossColumns, Change, Fn, MoreRowsThan, Ratio, RelativeChange, RowGroups

    numeric = [col.ident for col in typed.columns if col.numeric and col.ident != program.column]
    options = program.options
    updates = [{"fn": fn} for fn in get_args(Fn) if fn != program.fn]
    updates += [{"fn": fn, "check": None} for fn in get_args(Fn)]  # as a question asks it
    for fn in ("argmax", "argmin", "max", "min"):
        updates += [{"fn": fn, "options": options.replaced(nth=2)}]
        updates += [{"fn": fn, "options": options.replaced(derive=Ratio(per_column=other))} for other in numeric[:2]]
        updates += [{"fn": fn, "options": options.replaced(derive=Change(minus_column=other))}
                    for other in numeric[:2]]
        updates += [{"fn": fn, "options": options.replaced(derive=RelativeChange(from_column=other))}
                    for other in numeric[:1]]
    updates += [{"fn": "sum", "options": options.replaced(derive=Ratio(per_column=numeric[0]))}] if numeric else []
    updates += [{"fn": fn, "options": options.replaced(grouping=RowGroups(by=group))}
                for fn in ("argmax", "argmin") for group in ("total", "mean")]
    updates += [{"fn": "most_common", "options": options.replaced(row_count=MoreRowsThan(rows=n))} for n in (0, 1)]
    updates += [{"fn": fn, "options": options.replaced(grouping=AcrossColumns(columns=numeric[:3]))}
                for fn in ("avg", "argmax", "count")] if numeric else []
    return [program.model_copy(update=u) for u in updates]


def _run_examples(recorder: Recorder) -> int:
    """Every rule example: a veto rule's program run as sampled, a settle rule's message settled."""
    from tools._cells import TypedTable
    from tools._table_program import run_sampled
    from tools.rules import RULES, settle

    n = 0
    for rule in RULES:
        for i, example in enumerate(rule.examples + rule.counter_examples):
            recorder.source = f"rule:{rule.name}:{i}"
            n += 1
            if example.program is not None:
                run_sampled(example.program, TypedTable.build(example.table()), "claim", example.text)
            else:
                settle(example.text, example.table())
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="where to write the recorded calls (JSON)")
    parser.add_argument("--compare", type=Path, help="a recording to compare with: the first differences")
    args = parser.parse_args()
    recorder = Recorder()
    recorder.install()
    data = os.environ.get("EVIDENTIA_EVAL_DATA_DIR")
    logged = _run_logged(recorder, Path(data)) if data and Path(data).exists() else 0
    examples = _run_examples(recorder)
    args.out.write_text(json.dumps(recorder.calls, indent=0, sort_keys=True))
    print(f"{logged} logged programs, {examples} rule examples: {len(recorder.calls)} execute calls recorded "
          f"({sum('error' in c for c in recorder.calls)} raised), written to {args.out}")
    if args.compare is None:
        return 0
    before = json.loads(args.compare.read_text())
    differing = [i for i, (a, b) in enumerate(zip(before, recorder.calls)) if a != b]
    if len(before) != len(recorder.calls):
        print(f"different numbers of calls: {len(before)} before, {len(recorder.calls)} now")
    for i in differing[:10]:
        print(f"call {i} ({before[i]['source']}) differs:\n  before {json.dumps(before[i])[:2000]}\n"
              f"  now    {json.dumps(recorder.calls[i])[:2000]}")
    same = len(differing) == 0 and len(before) == len(recorder.calls)
    print(f"{len(recorder.calls) - len(differing)} of {len(recorder.calls)} calls identical"
          + ("" if same else f"; {len(differing)} differ"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
