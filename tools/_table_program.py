"""Program-aided table reasoning (issue 13): the model writes programs, code computes the answer.

1. Column choice (grammar-bound): the model names the columns the claim or question needs, from an
   enum of the table's column identifiers plus ``not_in_table``. Needing something absent means NOT
   ENOUGH INFO, with no program at all.
2. ``n`` programs sampled in one request (``n`` choices, temperature ~0.7) under a typed JSON schema whose
   column names are the table's own identifiers and whose parts must fit together: numbers against
   numbers, filters on values the column holds (``tools._table_grammar``).
3. Each program runs in ``tools._table_ops.execute``. A claim's program that does not check what the
   claim states (``tools._claim_grounding``) runs but does not vote. When none runs or votes, the request
   is repeated once with the first error message; a plain superlative question still without a vote gets the
   program its words give (``tools._question_rules``).
4. Majority vote over the programs that ran; the share of all samples that agree is the confidence.
   A question whose vote splits may have ``n`` more programs sampled (``more_on_split``), voted with the first.
   No strict majority (or none ran) leaves the decision to the caller's fallback (CCoE).

The program form is selectable (``program_form``): ``ops`` (the default, above) or ``sql``, one read-only
SELECT under a grammar of this table's typed identifiers, run in a SQLite sandbox (``tools._table_sql``).
Both give the same :class:`~tools._table_ops_model.Execution`, so voting, reasons and citations are shared.

The reason is written here from computed values, so it can only quote numbers the table holds
(or sums and averages of them, or the value the claim itself states).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Literal

from pydantic import BaseModel, Field

from prompts import render
from kb.program_bank import DEFAULT_BANK
from kb.tables import Table
from tools._grounding import column_named, position_asked, uncomputed_column_asked, uncomputed_reason, yes_no_asked
from tools._cells import TypedTable, cell_number, display_cell, format_value, is_empty, join_listed
from tools._claim_counts import read_joint_rows, restricted_to_category
from tools._claim_grounding import check_stated
from tools._claim_changes import than_years
from tools._claim_compare import compared_groups, compared_rows
from tools._question_rules import extreme_by_words, one_of_several, yes_or_no
from tools._program_readers import Kind, header_of, reader_name, readers_for
from tools._question_counts import asks_share
from tools._table_shape import ShapedTable, describe, ratio_as_percent, read_written_share, shape_for_programs
from tools._table_grammar import typed_program_schema
from tools.worked_examples import worked_examples
from tools.program_rerank import Reranker, load_reranker, run_features
from tools._table_ops import execute
from tools._table_ops_model import NOT_IN_TABLE, Execution, NoNumbersError, Program, ProgramError, column_choice_schema
from tools._table_sql import Sandbox, describe_sql, execute_sql, sql_grammar
from tools.rules import ANNOTATES, SampledRun, annotate, parse_off, veto, withhold

ProgramForm = Literal["ops", "sql"]
PROGRAM_FORMS: tuple[str, ...] = ("ops", "sql")
DEFAULT_FORM = "ops"
DEFAULT_SAMPLES = 5
DEFAULT_TEMPERATURE = 0.7
COLUMNS_MAX_TOKENS = 80
# A program is ~60-110 tokens of JSON; the free-form SQL probe lost 21 of 50 samples at 160 tokens,
# but the schema admits no prose, so 240 leaves room without inviting rambling.
PROGRAM_MAX_TOKENS = 240
# A query is ~25-60 tokens (shorter than the JSON); the grammar admits no prose, and one cut off is unreadable.
SQL_MAX_TOKENS = 160
# The table's share of the program prompt. The served window is 4,096 tokens; instructions, few-shot
# examples and the column list take ~900 tokens and the program up to 240. Numeric tables run at ~1.8
# characters per token, so 3,500 characters (~1,950 tokens) leave a margin. Programs still run over all rows.
PROGRAM_TABLE_CHARS = 3500
PROGRAM_COLUMNS_CHARS = 1500  # the column list's share (~600 tokens)


class ProgramRun(BaseModel):
    """One sampled program: what it said, what it computed or why it could not run."""

    program: str = Field(description="The program in words, with the real column names.")
    raw: dict | None = None
    ran: bool
    error: str = ""
    vetoed_by: list[str] = Field(default_factory=list, description="The veto rules that held it (tools/rules.py).")
    withheld_by: list[str] = Field(default_factory=list,
                                   description="The withhold rule that held it from the vote, beside the other "
                                               "programs of its sampling (tools/rules.py).")
    rewritten_by: list[str] = Field(default_factory=list,
                                    description="The rewrite rules that changed it, in order (tools._program_readers).")
    annotated_by: list[str] = Field(default_factory=list,
                                    description="The annotate rules that added a note, cited cells or steps to what "
                                                "it computed, in order (tools/rules.py).")
    result: str = ""
    verdict: str = ""  # SUPPORTS/REFUTES for claims, the answer for questions
    rows: list[int] = Field(default_factory=list, description="Rows that decided the result.")
    cells: list[tuple[int, int]] = Field(default_factory=list)
    # the operation that ran, after code's repairs (``raw`` is what the model wrote); empty for SQL
    fn: str = ""
    logprob: float | None = Field(None, description="The mean log-probability of its tokens as sampled (when the "
                                                    "server gave them): what the program reranker reads.")
    # the values its filters compare with, after code's repairs; None when unknown (SQL). An answer over every row
    # of a question about some of them, or over rows picked by values the question never states, says so
    # (tools._question_counts).
    filter_values: list[str] | None = None


class ProgramOutcome(BaseModel):
    kind: Kind
    columns_needed: list[str] = Field(default_factory=list)
    not_in_table: bool = False
    # The column the text asks about whose cells are all formulas saved without results (tools._grounding).
    uncomputed: str = ""
    runs: list[ProgramRun] = Field(default_factory=list)
    retried: bool = False
    # Samples per request voted on: [5], or [5, 5] when a split vote had a second batch sampled (the replay of a
    # logged run reads the first batch alone from it).
    batches: list[int] = Field(default_factory=list)
    votes: dict[str, int] = Field(default_factory=dict)
    samples: int = 0
    winner: str | None = Field(None, description="The majority verdict or answer, None when split or none ran.")
    confidence: float = 0.0
    cells: list[tuple[int, int]] = Field(default_factory=list)
    rows: list[int] = Field(default_factory=list)
    cols: list[int] = Field(default_factory=list)
    reason: str = ""
    program: str = Field("", description="The first program that gave the majority result, in words.")
    annotated_by: list[str] = Field(default_factory=list,
                                    description="The annotate rules that added to the program that stands for the "
                                                "majority (its reason and cells are the answer's; tools/rules.py).")
    form: str = Field("as uploaded", description="How the programs read the table (tools._table_shape).")
    program_form: ProgramForm = Field(DEFAULT_FORM, description="What the programs were written as: ops or sql.")
    by_form: bool = Field(False, description="The question's form fixed the program (a row's own bounds, two "
                                             "columns of each row, one row across year columns, a claim comparing "
                                             "two named rows): code ran it once, with no model call.")

    @property
    def decided(self) -> bool:
        return self.winner is not None

    def winning_rewrites(self) -> list[str]:
        """The rewrite rules that changed the programs whose result won, in the order they first applied: what the
        reply names beside "program" (empty when no program decided)."""
        if self.winner is None:
            return []
        return list(dict.fromkeys(name for run in self.runs if run.ran and run.verdict == self.winner
                                  for name in run.rewritten_by))

    def vote_text(self) -> str:
        ran = sum(1 for r in self.runs if r.ran)
        if self.by_form:
            return f"the {self.kind}'s form fixes the program, so code ran it once, with no model call"
        if not self.runs:
            return "no program was written"
        # An empty cell read votes as "(empty)": "votes : 1" read as a glitch (found as a new user).
        tally = ", ".join(f"{k if k.strip() else '(empty)'}: {v}"
                          for k, v in sorted(self.votes.items(), key=lambda kv: -kv[1]))
        return f"{ran} of {len(self.runs)} programs ran" + (f"; votes {tally}" if tally else "")


MAX_AS_WRITTEN_ROWS = 3  # a computation over cells that hold no number answers with them, for so many rows at most


@dataclass
class _Sampled:
    program: Program | None
    error: str = ""
    execution: Execution | None = None
    raw: dict = field(default_factory=dict)
    shown: str = ""  # the program in words, when it is not a Program (SQL)
    no_numbers: bool = False  # it failed because its rows hold no number there (tools._table_ops_model.NoNumbersError)
    vetoed_by: list[str] = field(default_factory=list)  # the veto rules that held it (tools/rules.py)
    rewritten_by: list[str] = field(default_factory=list)  # the rewrite rules that changed it (tools._program_readers)
    annotated_by: list[str] = field(default_factory=list)  # the annotate rules that added to it (tools/rules.py)
    logprob: float | None = None  # the mean log-probability of its tokens as the model sampled them (when known)


def columns_for_prompt(typed: TypedTable, max_chars: int = PROGRAM_COLUMNS_CHARS) -> list[str]:
    """The column lines, clipped to a budget: a 100-column table once pushed the prompt past the window.

    The grammar still offers every column; the prompt only stops describing them one by one.
    """
    lines, size = [], 0
    all_lines = typed.schema_lines()
    for i, line in enumerate(all_lines):
        if size + len(line) > max_chars and lines:
            rest = typed.idents[i:]
            lines.append(f"… and {len(rest)} more columns: " + ", ".join(rest)[: max_chars // 2])
            break
        lines.append(line)
        size += len(line)
    return lines


def table_for_prompt(typed: TypedTable, max_chars: int = PROGRAM_TABLE_CHARS) -> str:
    """The table with identifier headers (what programs name) and ``R<r>`` row numbers, clipped."""
    lines = ["| row | " + " | ".join(typed.idents) + " |", "|---|" + "---|" * len(typed.idents)]
    size = sum(len(x) + 1 for x in lines)
    table = typed.table
    for r in range(1, table.n_rows + 1):
        line = f"| R{r} | " + " | ".join(display_cell(v) for v in table.rows[r - 1]) + " |"
        if size + len(line) + 1 > max_chars:
            lines.append(f"({table.n_rows - r + 1} more rows not shown; programs still run over all rows)")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def program_prompt(layout: str, task: Literal["columns", "program"], typed: TypedTable, kind: Kind, text: str,
                   needed: list[str] | None = None, error: str = "", worked: list[dict] | None = None) -> str:
    """The column-choice or program prompt in the configured layout (``Settings.table_prompt_layout``).

    Either way the two prompts of one check share their head, so the table is prefilled once per check;
    ``instructions-first`` also puts the instructions and examples, the same for every check, before the table,
    where the server's prefix cache serves them to every check instead of computing them each time. ``worked``: the
    bank's worked examples for this text (tools.worked_examples), shown in the program prompt only.
    """
    shown = {"kind": kind, "text": text, "title": typed.table.title, "columns": columns_for_prompt(typed),
             "table": table_for_prompt(typed)}
    if layout == "instructions-first":
        return render("table_program_shared", task=task, needed=needed or [], error=error, worked=worked or [],
                      **shown)
    if task == "columns":
        return render("table_program_columns", **shown)
    return render("table_program", needed=needed or [], error=error, worked=worked or [], **shown)


async def choose_columns(llm, typed: TypedTable, kind: Kind, text: str) -> list[str]:
    prompt = program_prompt(llm.settings.table_prompt_layout, "columns", typed, kind, text)
    # One sample through structured_samples, which returns a malformed choice instead of raising: an
    # unreadable column choice only skips the NEI shortcut, the programs still run.
    [choice] = await llm.structured_samples([{"role": "user", "content": prompt}],
                                            column_choice_schema(tuple(typed.idents)), n=1,
                                            max_tokens=COLUMNS_MAX_TOKENS, temperature=0.0)
    return list(dict.fromkeys(choice.columns)) if isinstance(choice, BaseModel) else []


async def _sample(llm, typed: TypedTable, kind: Kind, text: str, needed: list[str], n: int, temperature: float,
                  error: str = "") -> list[_Sampled]:
    settings = llm.settings
    worked = worked_examples(settings.table_program_bank or DEFAULT_BANK, settings.table_examples, typed, kind, text)
    prompt = program_prompt(settings.table_prompt_layout, "program", typed, kind, text, needed, error, worked)
    schema = typed_program_schema(typed, kind == "claim")
    samples = await llm.scored_samples([{"role": "user", "content": prompt}], schema, n=n,
                                       temperature=temperature, max_tokens=PROGRAM_MAX_TOKENS)
    out = []
    for s, logprob in samples:
        if not isinstance(s, BaseModel):  # the client's error for a choice that did not match the schema
            out.append(_Sampled(None, error=f"the program was not valid JSON for the schema ({s})", logprob=logprob))
            continue
        out.append(replace(run_sampled(s.model_dump(), typed, kind, text, parse_off(llm.settings.rules_off)),
                           logprob=logprob))
    return out


def run_sampled(raw: dict, typed: TypedTable, kind: Kind, text: str,
                rules_off: frozenset[str] = frozenset()) -> _Sampled:
    """Read one sampled program (``raw``, as the model wrote it) as asked, and run it; never raises.

    Shared by the live path and the evaluations' replay of logged programs under the current rules; ``rules_off``
    names rewrite, annotate and veto rules switched off (``EVIDENTIA_RULES_OFF``), to measure one.
    """
    program = None
    rewritten_by: list[str] = []
    try:
        program = Program.model_validate(raw)
        for reader in readers_for(kind):
            name = reader_name(reader)
            if name in rules_off:
                continue
            rewritten = reader(program, typed, text)
            if rewritten != program:
                rewritten_by.append(name)
            program = rewritten
        # Several values of one column: any of them in a question; in a claim, only the rows it names jointly.
        union = kind == "question"
        if kind == "claim" and (joint := read_joint_rows(program, text, typed)) is not None:
            program, union = joint, True
        try:
            execution = execute(program, typed, union_same_column=union)
        except NoNumbersError:
            if kind != "question" or program.fn not in ("sum", "avg", "median", "min", "max"):
                raise
            # "How many nurses work in Central?" over a cell holding the formula text "=1000+2000": the answer is
            # what the cell holds, shown as written, not a failure that leaves a sum over other rows to answer.
            as_written = program.model_copy(update={"fn": "value",
                                                    "options": program.options.undivided().replaced(nth=1)})
            execution = execute(as_written, typed, union_same_column=True)
            cells = execution.result if isinstance(execution.result, list) else [execution.result]
            if len(execution.selected) > MAX_AS_WRITTEN_ROWS \
                    or (all(is_empty(str(c)) for c in cells)
                        and (len(execution.selected) != 1 or not column_named(header_of(typed, program.column), text))):
                # Empty cells are no answer: the failure stands, unless the question names the column and the
                # program selects one row; then the table's answer is "no value given". Found as a new user: "How
                # many deaths were there in 2019-20?" over an empty cell failed in all 5 programs, and the model's
                # fallback quoted the row's hospitalisations as its deaths. (Without the column named: WTQ's "how
                # long did it take the netherlands to finish?" was read by 4 programs as the winner's empty
                # Deficit cell, not its Time.)
                raise
            program = as_written
            execution = replace(execution, steps=execution.steps + [
                f"no number in {describe(as_written, typed).split(' → ', 1)[-1]}: the cell as the table holds it"])
        # A refutation restricted_to_category can narrow is one ignored_category_blocker holds (its conditions are
        # a subset of the blocker's), so the blocker need not run twice here.
        if kind == "claim" and execution.truth is False \
                and (narrowed := restricted_to_category(program, typed, text)) is not None:
            try:  # the claim's own check over the rows of the category it names; if it cannot run, it stays held
                program, execution = narrowed, execute(narrowed, typed)
            except ProgramError:
                pass
        # The annotate rules (tools/rules.py) add a note, cited cells or steps to what the program computed, never
        # changing it; before a question's answer is read off it: the one of several rows asked for is cited in the
        # columns already cited, and a yes or no is the last step, which the reason quotes.
        execution, annotated_by = annotate(program, execution, typed, kind, text, rules_off)
        if kind == "question":
            execution = read_written_share(execution, program, typed, asks_share(text))
            execution = ratio_as_percent(execution, program, text)
            execution = one_of_several(execution, position_asked(text))
            if yes_no_asked(text):
                execution = yes_or_no(execution)
        # The veto rules (tools/rules.py): it ran, but it does not check what the claim states, so it must not vote.
        held = veto(program, execution, typed, text, rules_off) if kind == "claim" else []
        if held:
            return _Sampled(program, error="does not vote: " + "; ".join(v.reason for v in held), raw=raw,
                            vetoed_by=[v.rule for v in held], rewritten_by=rewritten_by)
        return _Sampled(program, execution=execution, raw=raw, rewritten_by=rewritten_by, annotated_by=annotated_by)
    except ProgramError as exc:
        return _Sampled(program, error=str(exc), raw=raw, no_numbers=isinstance(exc, NoNumbersError),
                        rewritten_by=rewritten_by)
    except ValueError as exc:  # pydantic's ValidationError: a schema the server did not enforce
        return _Sampled(None, error=f"the program is malformed: {exc}", raw=raw)


async def _sample_sql(llm, typed: TypedTable, kind: Kind, text: str, needed: list[str], n: int, temperature: float,
                      error: str = "") -> list[_Sampled]:
    """``n`` queries under this table's grammar, each checked and run in the SQLite sandbox."""
    try:
        grammar = sql_grammar(typed, kind)
        box = Sandbox(typed)
    except ProgramError as exc:  # a table no query can run on (too many rows, no columns): ask no model
        return [_Sampled(None, error=str(exc))]
    prompt = render("table_sql", kind=kind, text=text, title=typed.table.title, columns=typed.schema_lines(),
                    table=table_for_prompt(typed), needed=needed, error=error)
    out = []
    with box:  # read-only: the samples share one copy of the table
        samples = await llm.grammar_samples([{"role": "user", "content": prompt}], grammar, n=n,
                                            temperature=temperature, max_tokens=SQL_MAX_TOKENS)
        for s in samples:
            if not isinstance(s, str):  # the client's error for a query cut off before it was complete
                out.append(_Sampled(None, error=str(s)))
                continue
            sql = " ".join(s.split())
            raw, shown = {"sql": sql}, describe_sql(sql, typed)
            try:
                out.append(_Sampled(None, execution=execute_sql(sql, typed, kind, box=box), raw=raw, shown=shown))
            except ProgramError as exc:
                out.append(_Sampled(None, error=str(exc), raw=raw, shown=shown))
    return out


def _verdict(kind: Kind, ex: Execution) -> str:
    if kind == "claim":
        return "SUPPORTS" if ex.truth else "REFUTES"
    return format_value(ex.result)  # the answer itself; result_text adds the value an argmax compared


async def solve(llm, table: Table, kind: Kind, text: str, *, n: int = DEFAULT_SAMPLES,
                temperature: float = DEFAULT_TEMPERATURE, check_columns: bool = True,
                program_form: ProgramForm = DEFAULT_FORM, scope: tuple[int, ...] = (),
                more_on_split: bool = False) -> ProgramOutcome:
    """Choose columns, sample ``n`` programs (``program_form``: fixed operations or SQL), run them and vote.

    ``scope``: the table's rows a follow-up ranges over ("which of them …"); the programs' filters apply within
    them where :func:`kept_scope` keeps it. ``more_on_split``: when programs ran but no answer has a strict
    majority, sample ``n`` more and vote over all of them before leaving the decision to the caller."""
    if program_form not in PROGRAM_FORMS:
        raise ValueError(f"unknown program form {program_form!r}; choose one of {', '.join(PROGRAM_FORMS)}")
    shaped = shape_for_programs(table)
    outcome = await _solve_shaped(llm, shaped, kind, text, n=n, temperature=temperature, check_columns=check_columns,
                                  program_form=program_form, scope=kept_scope(shaped, scope, program_form),
                                  more_on_split=more_on_split)
    return to_original(outcome, shaped)


def kept_scope(shaped: ShapedTable, scope: tuple[int, ...], program_form: ProgramForm = DEFAULT_FORM
               ) -> tuple[int, ...]:
    """The rows the programs range over: ``scope`` where the table is programmed as uploaded (a reshaped table
    numbers its rows otherwise) and for the fixed operations (a SQL query reads the whole table); else all."""
    return () if (shaped.cell_map and not shaped.rows_kept) or program_form == "sql" else scope


def to_original(outcome: ProgramOutcome, shaped: ShapedTable) -> ProgramOutcome:
    """Cells, rows and columns of a reshaped table's programs, as the uploaded table's own cells."""
    if not shaped.cell_map:
        return outcome
    runs = []
    for run in outcome.runs:
        cells = shaped.original_cells(run.cells)
        runs.append(run.model_copy(update={"cells": cells, "rows": sorted({r for r, _ in cells})}))
    cells = shaped.original_cells(outcome.cells)
    label = shaped.original.row_label_col
    rows = sorted({r for r, _ in cells})
    cols = sorted({c for _, c in cells} | ({label} if label and cells else set()))
    if outcome.decided and not rows:  # only a restored header row decided: show the table's first rows
        rows = list(range(1, min(shaped.original.n_rows, 10) + 1))
        cols = list(range(1, shaped.original.n_cols + 1))
    return outcome.model_copy(update={"runs": runs, "cells": cells, "rows": rows, "cols": cols,
                                      "form": shaped.form})


def settled_by_form(typed: TypedTable, text: str, annotations_off: frozenset[str] = frozenset()) -> _Sampled | None:
    """The run of the program a question's form alone fixes, or None.

    The rules that replace whatever program the model wrote with one of their own (each row against its own range,
    tools._settle_rules; one column against another of the same row or two arms' columns, tools._claim_changes;
    one row across year columns, tools._claim_changes) give the same program for every sample, so sampling is
    skipped: a placeholder program goes through the same rules, and when it comes out comparing columns within rows
    or aggregating across them, that is the answer's program. "More … in 2024 than in 2023" keeps conditions the
    model wrote ("with coverage below 90%"), so it is sampled as before. ``annotations_off``: annotate rules switched
    off (:func:`decided_by_form`)."""
    if not typed.label_col or than_years(typed, text) is not None:
        return None
    ident = typed.columns[typed.label_col - 1].ident
    ran = run_sampled({"filters": [], "fn": "value", "column": ident, "answer_column": ident}, typed, "question", text,
                      annotations_off)
    program = ran.program
    if ran.execution is None or program is None \
            or not (program.options.across or any(f.than_column for f in program.filters)):
        return None
    return ran


def decided_by_form(typed: TypedTable, kind: Kind, text: str, rules_off: frozenset[str] = frozenset()
                    ) -> _Sampled | None:
    """The run of the program the text's form alone fixes, which replaces sampling; None when the model samples.
    Shared by the live path and the evaluations' replay, so a replay decides such texts as a live run would.

    A question: :func:`settled_by_form` (found as a new user: 5 of 5 identical programs after 80-100 s of sampling
    for "Which results are outside their reference range?"). A claim: "A … colder than B", one row before the
    comparative, one after "than", one column named (tools._claim_compare; found as a new user: the sampled
    programs compared rows the claim never names, or wrote tautologies), or two groups' totals or means
    (tools._claim_compare); against several rows, the annotate rule ``most-demanding-row`` says why the one row
    compared stands for all.

    Of ``rules_off`` only the annotate rules reach the form's program: its rewrite and veto rules always ran, and the
    committed per-rule measurements (docs/eval/rules.json) were taken so."""
    annotations_off = rules_off & frozenset(rule.name for rule in ANNOTATES)
    if kind == "question":
        return settled_by_form(typed, text, annotations_off)
    words = compared_rows(typed, text) or compared_groups(typed, text)
    if words is None:
        return None
    ran = run_sampled(words.raw, typed, kind, text, annotations_off)
    return ran if ran.execution is not None else None


async def _solve_shaped(llm, shaped: ShapedTable, kind: Kind, text: str, *, n: int, temperature: float,
                        check_columns: bool, program_form: ProgramForm, scope: tuple[int, ...] = (),
                        more_on_split: bool = False) -> ProgramOutcome:
    typed = TypedTable.build(shaped.table, scope=scope)
    outcome = ProgramOutcome(kind=kind, form=shaped.form, program_form=program_form)
    sample = _sample_sql if program_form == "sql" else _sample
    rules_off = parse_off(llm.settings.rules_off)
    rerank = load_reranker() if llm.settings.table_chooser == "reranker" else None
    if check_columns:
        if (uncomputed := uncomputed_column_asked(typed, text)) is not None:  # the upload settles it: no model call
            outcome.not_in_table, outcome.uncomputed = True, uncomputed.name
            outcome.reason = uncomputed_reason(uncomputed, typed)
            return outcome
        if program_form != "sql" and (settled := decided_by_form(typed, kind, text, rules_off)) is not None:
            outcome.by_form, outcome.batches = True, [1]
            decide(outcome, [settled], typed, kind, text, rules_off)
            return outcome
        needed = await choose_columns(llm, typed, kind, text)
        outcome.columns_needed = [c for c in needed if c != NOT_IN_TABLE]
        if NOT_IN_TABLE in needed:
            outcome.not_in_table = True
            outcome.reason = ("The table has no column for part of this " + kind
                              + (f" (it has: {', '.join(c.name for c in typed.columns)})" if typed.columns else "")
                              + ", so no program was run.")
            return outcome
    sampled = await sample(llm, typed, kind, text, outcome.columns_needed, n, temperature)
    if not any(s.execution for s in sampled):
        first_error = next((s.error for s in sampled if s.error), "no program came back")
        sampled = await sample(llm, typed, kind, text, outcome.columns_needed, n, temperature, error=first_error)
        outcome.retried = True
    first = outcome.model_copy(deep=True)
    decide(outcome, sampled, typed, kind, text, rules_off, rerank)
    outcome.batches = [len(sampled)]
    if kind == "question" and program_form != "sql" and not any(r.ran for r in outcome.runs) \
            and (raw := extreme_by_words(typed, text)) is not None:
        # No sampled program voted on a plain superlative question: its words give the program (found as a new
        # user: the model's own answer named the second lowest for "the second-highest occupancy")
        sampled = [*sampled, run_sampled(raw, typed, kind, text, rules_off)]
        outcome = first.model_copy(deep=True)
        decide(outcome, sampled, typed, kind, text, rules_off, rerank)
        outcome.batches = [len(sampled)]
    if more_on_split and split_vote(outcome):
        # A split vote otherwise falls back to the model's own answer, which was right on 9 of 40 such WTQ test
        # questions (0.225) where the programs' winners were right on 125 of 258 (0.48); a second batch is one
        # more batched request (~15-20 s on a 2-core CPU) and is voted with the first, not instead of it.
        more = await sample(llm, typed, kind, text, outcome.columns_needed, n, temperature)
        outcome = first
        decide(outcome, sampled + more, typed, kind, text, rules_off, rerank)
        outcome.batches = [len(sampled), len(more)]
    return outcome


def split_vote(outcome: ProgramOutcome) -> bool:
    """Programs ran and voted, but no answer has a strict majority (what a second batch is sampled for)."""
    return not outcome.decided and any(r.ran for r in outcome.runs)


def voted_answers(sampled: list[_Sampled], kind: Kind) -> list[str]:
    """Each sampled program's answer as the vote counts it ("" for one that did not run)."""
    verdicts = [_verdict(kind, s.execution) if s.execution is not None else "" for s in sampled]
    return one_form_per_number(verdicts) if kind == "question" else verdicts


def decide(outcome: ProgramOutcome, sampled: list[_Sampled], typed: TypedTable, kind: Kind, text: str,
           rules_off: frozenset[str] = frozenset(), rerank: Reranker | None = None) -> None:
    """Record every sampled program's run in ``outcome``, hold from the vote the runs the withhold rules hold
    (tools/rules.py; ``rules_off``: those switched off, ``EVIDENTIA_RULES_OFF``), and take the strict majority.

    ``rerank`` (``Settings.table_chooser = "reranker"``): the fitted reranker (tools.program_rerank) chooses among
    the programs that ran instead, in place of the withhold rules and the majority; it decides whenever one ran."""
    outcome.samples = len(sampled)
    verdicts = voted_answers(sampled, kind)
    for s, verdict in zip(sampled, verdicts):
        shown = s.shown or (describe(s.program, typed, any_of=kind == "question") if s.program
                            else "(unreadable program)")
        if s.execution is None:
            outcome.runs.append(ProgramRun(program=shown, raw=s.raw or None, ran=False, error=s.error,
                                           vetoed_by=s.vetoed_by, rewritten_by=s.rewritten_by, logprob=s.logprob))
        else:
            ex = s.execution
            outcome.runs.append(ProgramRun(program=shown, raw=s.raw, ran=True, result=ex.result_text,
                                           verdict=verdict, rows=ex.decisive_rows, cells=ex.cells,
                                           rewritten_by=s.rewritten_by, annotated_by=s.annotated_by,
                                           logprob=s.logprob,
                                           fn=s.program.fn if s.program else "",
                                           filter_values=[f.than_column or f.value for f in s.program.filters]
                                           if s.program else None))
    # The withhold rules (tools/rules.py): programs that ran but compare badly with the others of this sampling.
    runs = [SampledRun(s.program, s.execution, s.raw, verdict, s.no_numbers) for s, verdict in zip(sampled, verdicts)]
    for held in ([] if rerank is not None else withhold(runs, typed, kind, text, rules_off)):
        _withhold(outcome, held.run, held.reason, held.rule)
    ran = [r for r in outcome.runs if r.ran]
    outcome.votes = dict(Counter(r.verdict for r in ran))
    if ran:
        top, count = Counter(r.verdict for r in ran).most_common(1)[0]
        if rerank is not None:
            top = rerank.choose(run_features(sampled, verdicts, typed, kind, text)) or top
            count = len(ran)  # the reranker's choice stands without a majority
        if count * 2 > len(ran):
            outcome.winner = top
            outcome.confidence = round(outcome.votes[top] / max(1, outcome.samples), 2)
            # The program most of the winners wrote stands for them (its cells cited, its reason shown): the first
            # one was "Wait (days) > 1" for "more than a week" while 4 of 5 wrote "> 7" (found as a new user).
            winners = [i for i, r in enumerate(outcome.runs) if r.ran and r.verdict == top]
            written = Counter(outcome.runs[i].program for i in winners)
            # Among as many, one whose check compares with what the claim states: "India's coverage recovered to
            # above its 2019 level in 2022" showed "every one has 2022 >= 73%" (Brazil's 2019 value) while another
            # winner compared India's 2022 with its 2019 (found as a new user).
            grounded = {i: kind != "claim" or sampled[i].program is None or check_stated(sampled[i].program, text)
                        for i in winners}
            best = max(winners, key=lambda i: (written[outcome.runs[i].program], grounded[i], -i))
            run, ex = outcome.runs[best], sampled[best].execution  # runs and samples share indices
            assert ex is not None
            outcome.cells = list(run.cells)
            outcome.rows = sorted(set(ex.decisive_rows) | set(ex.selected[:20]))
            outcome.cols = sorted({c for _, c in ex.cells} | ({typed.label_col} if typed.label_col else set()))
            outcome.reason = write_reason(kind, run, ex, typed, top)
            outcome.program = run.program
            outcome.annotated_by = list(run.annotated_by)


def one_form_per_number(answers: list[str]) -> list[str]:
    """Answers that are one number written differently ("58" from a minimum, "58%" from the cell) as one answer,
    written as its most decorated form (the cell's, with its unit), so they vote together.

    Found as a new user: "What was its response rate?" split 3 to 1 between "58" and "58%" and answered "58".
    """
    numbers = [cell_number(a) if a else None for a in answers]
    forms: dict[float, list[str]] = {}
    for a, x in zip(answers, numbers):
        if x is not None:
            forms.setdefault(x, []).append(a)

    def rank(form: str, fs: list[str]) -> tuple[bool, int, int]:
        # as a cell writes it ("58%", "$4,512", "8,500"), then the commoner form, then the shorter ("2", not "2.0")
        return any(ch not in "0123456789.- " for ch in form), fs.count(form), -len(form)

    written = {x: max(sorted(set(fs)), key=lambda f: rank(f, fs)) for x, fs in forms.items()}
    return [a if x is None else written[x] for a, x in zip(answers, numbers)]


def _withhold(outcome: ProgramOutcome, i: int, why: str, rule: str) -> None:
    """Run ``i`` ran, but does not vote, for the reason ``why`` (shown in the step), held by the withhold ``rule``."""
    run = outcome.runs[i]
    outcome.runs[i] = run.model_copy(update={"ran": False, "error": f"does not vote: {why}",
                                             "withheld_by": [*run.withheld_by, rule]})


_ONE_ROW_SAME = ("min of ", "max of ", "sum of ", "avg of ")


def write_reason(kind: Kind, run: ProgramRun, ex: Execution, typed: TypedTable, verdict: str) -> str:
    """The reason, from computed values only: what was computed, its value, where, and the verdict."""
    names = [typed.row_name(r) for r in ex.decisive_rows[:3]]
    more = len(ex.decisive_rows) - len(names)
    where = join_listed(names) + (f" and {more} more" if more > 0 else "")
    computed = run.program.split(" → ", 1)[-1].split("; check:", 1)[0]
    if len(ex.selected) == 1 and computed.startswith(_ONE_ROW_SAME):
        # Over one row a min, max, sum or mean is that row's cell: "Min of Deaths is 142 (rows: Drug A)" (seen as
        # a new user) says a computation that did not happen; "Deaths is 142" says what the table holds.
        computed = computed.split(" of ", 1)[1]
    if kind == "question" and verdict in ("yes", "no") and ex.steps and ex.steps[-1].endswith(verdict):
        return ex.steps[-1][0].upper() + ex.steps[-1][1:] + (f" (rows: {where})." if where and ex.selected else ".")
    text = f"{computed} is {ex.result_text}" + (f" (rows: {where})" if where else "")
    if ex.bounds:
        text += "; " + "; ".join(ex.bounds)
    if kind == "claim":
        # "every"/"only" state their condition in the program, not as a value the result must meet. The fn that
        # ran decides: the model's "only" rewritten by code into "2021 < 2020 of the same row" (found as a new
        # user) lost its "the claim needs it …" when the model's raw fn decided.
        if ex.check_text and (run.fn or (run.raw or {}).get("fn")) not in ("every", "only"):
            text += f"; the claim needs it {ex.check_text}"
        word = {"SUPPORTS": "supports", "REFUTES": "refutes"}[verdict]
        text += f", so the table {word} the claim."
    else:
        text += "."
    return text[0].upper() + text[1:]


def program_lines(outcome: ProgramOutcome | None) -> list[str]:
    """Each program in words with its result or error: the work a user can check."""
    if outcome is None:
        return []
    lines = []
    if outcome.form != "as uploaded":
        lines.append(f"how the table was read: {outcome.form}")
    if outcome.uncomputed:
        lines.append(f"no program was run: {outcome.uncomputed} holds only formulas saved without their results")
    elif outcome.columns_needed or outcome.not_in_table:
        lines.append("columns needed: " + ", ".join(outcome.columns_needed + (["not in the table"]
                                                                             if outcome.not_in_table else [])))
    if len(outcome.batches) > 1:
        lines.append(f"the first {outcome.batches[0]} programs split their vote, so {sum(outcome.batches[1:])} more "
                     "were sampled and all were voted on")
    for i, run in enumerate(outcome.runs, start=1):
        tail = f"= {run.result} → {run.verdict}" if run.ran and outcome.kind == "claim" else \
            (f"= {run.result}" if run.ran else f"did not run: {run.error}")
        rows = f" (rows {', '.join(f'R{r}' for r in run.rows[:6])})" if run.ran and run.rows else ""
        lines.append(f"program {i}: {run.program} {tail}{rows}")
    return lines
