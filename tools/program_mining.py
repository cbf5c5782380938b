"""Verified programs for the program bank (#77): sample programs for a text whose answer is known and keep those
that get it right as the model wrote them (the command and its sources: assistant.evals.program_mining).

Right means: a question's program answers what ``right`` accepts (the caller's gold match); a claim's program gives
the gold verdict *and* its check compares with what the claim states (tools._claim_grounding.check_stated), so a
program right by luck (a threshold the claim never states) is not kept. A program a rewrite rule had to change (an
"argmin" for "the most" turned into "argmax", tools/rules.py) is right only through the rule: showing it would teach
the model what the rule corrects, so it is counted and not kept.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from kb.program_bank import BankEntry
from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_grounding import check_stated
from tools._program_readers import Kind
from tools._table_program import ProgramOutcome, run_sampled, solve
from tools._table_shape import shape_for_programs
from tools.worked_examples import column_sketch, skeleton


@dataclass
class Verified:
    """What sampling for one text gave: its right programs (most often written first) and the counts."""

    programs: list[tuple[dict, str]] = field(default_factory=list)  # (program as written, its result)
    right: int = 0  # runs that got it right, rewritten or not
    right_after_rewrite: int = 0
    ran: int = 0
    samples: int = 0
    by_form: bool = False  # code fixed the program (no model program to show)
    outcome: ProgramOutcome | None = None  # every sampled run, logged: what a reranker of programs learns from


def verified(outcome: ProgramOutcome, table: Table, kind: Kind, text: str, right: Callable[[str], bool]) -> Verified:
    """The runs of ``outcome`` that ``right`` accepts (a question's answer, a claim's verdict), as written."""
    typed = TypedTable.build(shape_for_programs(table).table)  # what the programs were written for
    found = Verified(ran=sum(r.ran for r in outcome.runs), samples=outcome.samples, by_form=outcome.by_form,
                     outcome=outcome)
    if outcome.by_form:
        return found
    counts: Counter[str] = Counter()
    results: dict[str, str] = {}
    for run in outcome.runs:
        if not run.ran or not run.raw or not right(run.verdict):
            continue
        if kind == "claim":
            program = run_sampled(run.raw, typed, kind, text).program
            if program is None or not check_stated(program, text):
                continue
        found.right += 1
        if run.rewritten_by:
            found.right_after_rewrite += 1
            continue
        key = json.dumps(run.raw, sort_keys=True, ensure_ascii=False)
        counts[key] += 1
        results.setdefault(key, run.result)
    found.programs = [(json.loads(k), results[k]) for k, _ in counts.most_common()]
    return found


async def sample_verified(llm, table: Table, kind: Kind, text: str, right: Callable[[str], bool], *, n: int,
                          temperature: float) -> Verified:
    """Sample ``n`` programs for ``text`` on the live path (column choice, programs, today's rules) and verify them."""
    outcome = await solve(llm, table, kind, text, n=n, temperature=temperature)
    return verified(outcome, table, kind, text, right)


def bank_entry(entry_id: str, kind: Kind, table: Table, text: str, program: dict, result: str, *, gold: str,
               source: str, license: str) -> BankEntry:
    """A bank entry for a verified program, with the text's skeleton and the columns as the program names them."""
    typed = TypedTable.build(shape_for_programs(table).table)
    return BankEntry(id=entry_id, kind=kind, text=text, skeleton=skeleton(text, typed), columns=column_sketch(typed),
                     program=program, result=result, gold=gold, source=source, license=license,
                     table=typed.table.fingerprint())
