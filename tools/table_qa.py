"""Question answering over an uploaded table, multiple-choice (UCRET-JS style) or free-form.

Multiple choice: the table is filtered for the question and its options, one explanation is
written per option assuming it is right (concurrently), and a judge picks the option whose
explanation rests on the smallest, clearest set of cells. When the judge finds other options
equally supported, the answer says so — ``tied`` lists them and the confidence drops — rather
than picking one at random (the thesis's own error analysis).

Free form: one schema-constrained call returns the answer and the cells it comes from.
Either way the cited cells are checked against the collapsed table.

By default (issue 13) the answer is computed first: the model writes five table programs in one
request, code runs them and the majority answer wins, its result cells being the citation
(``tools._table_program``). A multiple-choice question then picks the option the computed answer
matches, and says so when several match. A split vote has five more programs sampled and voted with the first
five. Only when no program runs, the vote is still split, or no option matches, do the explanation/judge paths
above answer (``decided_by`` says which).

A question that offers its answers by its form ("Did Sweden or Spain win first?", "more or less than China?")
is multiple choice too, with the options code reads (``tools.lang.choice``): the programs range over the
named rows, a program answering with a number picks its row's option, and the other row's cells are cited
beside the answer's.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Literal

from pydantic import BaseModel, Field

from prompts import render
from kb.tables import Table
from tools._grounding import EXPLETIVE_IT, expected_answer, fits, row_stated, value_grounded, with_subject
from tools._cells import TypedTable, cell_number, compare, is_empty, join_listed, split_listed
from tools._question_rules import comparing_option, swap_target
from tools._question_counts import qualifier_note, row_kinds, row_qualifier
from tools.contracts import TableAnswer
from tools.registry import ToolContext, ToolError, tool
from tools.lang.choice import option_rows, table_choice
from tools._table_llm import (
    JUDGEMENT_MAX_TOKENS, REASON_SCHEMA_EXTRA, CollapsedView, cited_cells_schema_extra, cited_for_view,
    register_evidence, validate_cells)
from tools._table_program import (
    DEFAULT_FORM, DEFAULT_SAMPLES, DEFAULT_TEMPERATURE, ProgramOutcome, program_lines, solve)
from tools._claim_grounding import unstated_numbers
from tools.lang.lexicon import OF_THEM, content_words, singular, without_opener, word_in
from tools.lang.reading import is_superlative
from tools.intent import without_regarding_note
from tools.table_filter import filter_table, resolve_table

OPTION_MAX_TOKENS = 100
ANSWER_MAX_TOKENS = JUDGEMENT_MAX_TOKENS + 60  # upper bound: a capped reason plus a short free-form answer
MAX_OPTIONS = 8
NO_VALUE = "no value given (the cell is empty)"  # the answer when the programs read an empty cell


def last_answer(session) -> TableAnswer | None:
    """The last table turn's answer when that turn asked a question (not a claim): what "it" refers to."""
    last = getattr(session, "last_table_answer", None)
    return last if last is not None and last.kind == "question" else None


class ChoiceJudgement(BaseModel):
    answer: int = Field(description="The chosen option's number (1-based).")
    equally_supported: list[int] = Field(description="Other options the cells support just as well.")
    cited_cells: list[str] = Field(description="Decisive cells as R<row>C<col>.",
                                   json_schema_extra=cited_cells_schema_extra())
    reason: str = Field(json_schema_extra=REASON_SCHEMA_EXTRA)


class FreeAnswer(BaseModel):
    answer: str
    cited_cells: list[str] = Field(description="Cells the answer comes from, as R<row>C<col>.",
                                   json_schema_extra=cited_cells_schema_extra())
    reason: str = Field(json_schema_extra=REASON_SCHEMA_EXTRA)


class QAResult(BaseModel):
    question: str
    table: str
    answer: str
    # The answer as the cells write it, with their unit ("1200 mg" where ``answer`` is "1200"), for the reply; the
    # answer itself stays plain, as the programs voted on it and the benchmarks compare it. Empty when the same.
    answer_shown: str = ""
    option: int | None = Field(None, description="1-based chosen option (multiple choice).")
    tied: list[int] = Field(default_factory=list, description="All options judged equally supported (incl. answer).")
    options: list[str] = Field(default_factory=list, description="The options chosen among: given, or offered by "
                                                                 "the question's form (tools.lang.choice).")
    confidence: Literal["high", "low"] = Field("high", description="low: several options tie, or fewer than half "
                                              "of the sampled programs agree on the answer.")
    cells: list[tuple[int, int]]
    invalid_cells: list[str] = Field(default_factory=list)
    citations_valid: bool = True
    reason: str
    explanations: dict[str, str] = Field(default_factory=dict)
    cols: list[int]
    rows: list[int]
    filter_summary: str = ""
    timings: dict[str, float] = Field(default_factory=dict)
    decided_by: Literal["program", "llm", "columns"] = "llm"
    vote_share: float | None = Field(None, description="Share of the sampled programs that agree.")
    programs: ProgramOutcome | None = None
    unpicked: str = Field("", description="The question's qualifier of its rows (\"European\") that no program "
                                          "applied from the table: the answer is over all rows, or over rows the "
                                          "model chose (tools._question_counts).")


def matching_options(answer: str, options: list[str]) -> list[int]:
    """1-based options the computed ``answer`` matches: same number, same text, or one contains the other."""
    parts = split_listed(answer) or [answer.strip()]
    hits = []
    for i, option in enumerate(options, start=1):
        for part in parts:
            number = cell_number(part)
            if compare(option, cell_number(option), "=", part, number) or (
                    number is None and len(part) > 2 and (compare(option, None, "contains", part)
                                                         or compare(part, None, "contains", option))):
                hits.append(i)
                break
    return hits


async def answer_question(llm, table: Table, question: str, options: list[str] | None = None, *,
                          embedder=None, use_filter: bool = True, seed: int = 0, use_program: bool = True,
                          samples: int = DEFAULT_SAMPLES, temperature: float = DEFAULT_TEMPERATURE,
                          program_form: str = DEFAULT_FORM, scope: tuple[int, ...] = (),
                          more_on_split: bool = True) -> QAResult:
    """Answer ``question`` from ``table`` (choosing among ``options`` when given); ``program_form``: ops or sql;
    ``scope``: the rows a follow-up ranges over; ``more_on_split``: a split vote has a second batch of programs
    sampled before the model answers itself (both: tools._table_program.solve)."""
    t0 = time.perf_counter()
    question = without_opener(question)
    options, rows_named = question_options(question, table, options)
    if len(options) > MAX_OPTIONS:  # the options a question's form offers are two
        raise ToolError(f"At most {MAX_OPTIONS} options, please (got {len(options)}).")
    result = await _answer(llm, table, question, options, embedder=embedder, use_filter=use_filter, seed=seed,
                           use_program=use_program, samples=samples, temperature=temperature,
                           program_form=program_form, scope=scope or tuple(sorted(rows_named)),
                           rows_named=rows_named, more_on_split=more_on_split, t0=t0)
    return result.model_copy(update={"options": options})


async def _answer(llm, table: Table, question: str, options: list[str], *, embedder, use_filter: bool, seed: int,
                  use_program: bool, samples: int, temperature: float, program_form: str, scope: tuple[int, ...],
                  rows_named: tuple[int, ...], more_on_split: bool, t0: float) -> QAResult:
    outcome: ProgramOutcome | None = None
    if use_program:
        outcome = await solve(llm, table, "question", program_task(question, options), n=samples,
                              temperature=temperature, program_form=program_form, scope=scope,
                              more_on_split=more_on_split)
        program_s = time.perf_counter() - t0
        computed = answer_from_program(table, question, options, outcome, program_s, rows_named,
                                       rows_in_scope=len(scope))
        if computed is not None:
            return computed
    result = await _answer_by_model(llm, table, question, options, embedder=embedder, use_filter=use_filter,
                                    seed=seed, t0=t0)
    if not options and not fits(result.answer, kind := expected_answer(question)):
        # Found as a new user: "How many units were sold between March and May?" fell to the model, which answered
        # "May" citing four Units cells, shown as verified. An answer of the wrong kind cites nothing it rests on.
        result = result.model_copy(update={"cells": [], "reason": (
            f"{result.reason.rstrip('. ')}. (The question asks for a {kind} and the model's answer is not one; it "
            "was not computed by code.)").lstrip(". ")})
    return result.model_copy(update={"programs": outcome}) if outcome is not None else result


def question_options(question: str, table: Table, options: list[str] | None = None
                     ) -> tuple[list[str], tuple[int, ...]]:
    """The options a question is answered among (given, or offered by its form: "Sweden or Spain?") and the rows
    they name (empty when they name none). Shared with the evaluations' replay, which must ask as the chat asks."""
    options = [o.strip() for o in (options or []) if o and o.strip()]
    if not options and (choice := table_choice(question, table)) is not None:
        return list(choice.options), choice.option_rows
    return options, option_rows(options, table) if options else ()


def program_task(question: str, options: list[str]) -> str:
    """What the programs are asked: the question, with its options when it has any."""
    return question + (" Options: " + "; ".join(options) if options else "")


_NUMBER_AND_UNIT = re.compile(r"^\s*[−-]?\d[\d,]*(?:\.\d+)?\s+([^\W\d_]+(?:/[^\W\d_]+)?)\s*$")


def _with_unit(outcome: ProgramOutcome) -> str:
    """The winning number with the unit its cells write ("1200 mg"), from what a winning program computed; "" when
    the answer is no number or its cells write no unit word. Found as a new user: "What is the maximum daily dose
    of ibuprofen?" was answered "1200" while the reason read "1200 mg"."""
    winner = outcome.winner or ""
    number = cell_number(winner)
    if number is None:
        return ""
    computed = next((r.result for r in outcome.runs if r.ran and r.verdict == winner), "").strip()
    if computed == f"{winner}%":  # a mean of percentages: "58%"
        return computed
    m = _NUMBER_AND_UNIT.match(computed)
    if m is None or cell_number(computed[:m.start(1)]) != number:
        return ""
    return f"{winner} {m.group(1)}"


def answer_from_program(table: Table, question: str, options: list[str], outcome: ProgramOutcome,
                        program_s: float, rows_named: tuple[int, ...] = (), rows_in_scope: int = 0
                        ) -> QAResult | None:
    """The computed answer as a QAResult, or None when the model's paths must answer. ``rows_in_scope``: the rows
    a follow-up ranges over (0: the whole table)."""
    timings = {"program_s": program_s, "total_s": program_s}
    if outcome.not_in_table and not options:
        return QAResult(question=question, table=table.name, answer="not in the table", cells=[], reason=outcome.reason,
                        cols=[], rows=[], timings=timings, decided_by="columns", programs=outcome)
    if not outcome.decided or outcome.winner is None:
        return None
    view = CollapsedView.build(table, outcome.cols, outcome.rows)
    # "high" beside "confidence 20%" read as two verdicts on one answer (found as a new user in the CLI's JSON):
    # an answer most programs did not agree on is low confidence, whatever the options.
    plurality_only = outcome.confidence < 0.5
    common = dict(question=question, table=table.name, cells=outcome.cells, reason=outcome.reason, cols=view.cols,
                  rows=view.shown_rows, timings=timings, decided_by="program", vote_share=outcome.confidence,
                  programs=outcome, confidence="low" if plurality_only else "high")
    if not options:
        if is_empty(outcome.winner):
            return QAResult(answer=NO_VALUE, **{**common, "reason": _no_value_reason(table, outcome)})
        if (unpicked := _unpicked_qualifier(table, question, outcome, rows_in_scope)) is not None:
            qualifier, note = unpicked
            common.update(reason=f"{outcome.reason} {note}", confidence="low", unpicked=qualifier)
        return QAResult(answer=outcome.winner, answer_shown=_with_unit(outcome), **common)
    hits = matching_options(outcome.winner, options) or _option_of_decisive_row(outcome, rows_named)
    compared = ""
    if not hits and (settled := comparing_option(question, options, outcome.winner,
                                                 _computed_header(table, outcome))) is not None:
        hits, compared = [settled[0]], " " + settled[1]
    if not hits:
        return None
    reason = outcome.reason + compared + (f" Options {', '.join(str(i) for i in hits)} all match it."
                                          if len(hits) > 1 else "")
    beside, against = _beside_cells(table, outcome.cells, rows_named, hits)
    return QAResult(**{**common, "reason": reason + against, "cells": outcome.cells + beside,
                       "confidence": "low" if len(hits) > 1 or plurality_only else "high"},
                    answer=options[hits[0] - 1], option=hits[0], tied=hits if len(hits) > 1 else [])


def _unpicked_qualifier(table: Table, question: str, outcome: ProgramOutcome, rows_in_scope: int
                        ) -> tuple[str, str] | None:
    """(qualifier, note) when the question restricts its rows by a word the table does not write ("the European
    cities") and no program that gave the answer picked rows by what the question states: each kept all the rows,
    or filtered on a value of its own ("Country = 'China'" for "the Asian cities", seen as a new user); None
    otherwise (tools._question_counts)."""
    winners = [r for r in outcome.runs if r.ran and r.verdict == outcome.winner]
    if not winners or any(r.filter_values is None for r in winners):
        return None
    found = row_qualifier(table, question)
    if found is None:
        return None
    if any(r.filter_values and all(value_grounded(v, question) for v in r.filter_values) for r in winners):
        return None  # a program that gave the answer chose its rows by what the question states
    unstated = list(dict.fromkeys(v for r in winners for v in r.filter_values if not value_grounded(v, question)))
    return found[0], qualifier_note(table, found, rows_in_scope or table.n_rows, chosen_by=unstated)


def _no_value_reason(table: Table, outcome: ProgramOutcome) -> str:
    """What the programs read, said as empty cells: "What was the efficacy of FORNAX?" over an empty cell was
    answered with nothing, shown as "****" and "Efficacy (%) is  (rows: FORNAX)." (found as a new user)."""
    label = table.row_label_col
    empty = [(r, c) for r, c in outcome.cells if c != label and is_empty(table.cell(r, c))]
    said = "; ".join(f"{table.columns[c - 1]} of {table.cell(r, label) if label else f'row {r}'}" for r, c in empty)
    verb = "is" if len(empty) < 2 else "are"
    return f"The table gives no value here: {said or 'the cells the programs read'} {verb} empty."


def _beside_cells(table: Table, cells: list[tuple[int, int]], rows_named: tuple[int, ...],
                  hits: list[int]) -> tuple[list[tuple[int, int]], str]:
    """The other named row's cells in the columns the answer's row was cited by, and their words: "Which has
    more beds, Moorland or Riverside?" cites Moorland's 54 beside Riverside's 65, so the comparison can be checked
    (found as a new user: only the winner's cells were cited)."""
    if len(hits) != 1 or not rows_named:
        return [], ""
    chosen = rows_named[hits[0] - 1]
    label = table.row_label_col
    cols = [c for r, c in cells if r == chosen and c != label]
    others = [r for r in rows_named if r != chosen]
    if not cols or not others:
        return [], ""
    beside = [(r, c) for r in others for c in ([label] if label else []) + cols if (r, c) not in cells]
    said = "; ".join(f"{table.cell(r, label) if label else f'row {r}'}: "
                     + ", ".join(f"{table.columns[c - 1]} {table.cell(r, c)}" for c in cols) for r in others)
    return beside, f" Beside it: {said}."


def _computed_header(table: Table, outcome: ProgramOutcome) -> str:
    """The header of the one column the winning programs' cells are in, besides the row labels ("" if several)."""
    cols = {c for _, c in outcome.cells if c != table.row_label_col}
    return table.columns[cols.pop() - 1] if len(cols) == 1 else ""


def _option_of_decisive_row(outcome: ProgramOutcome, rows_named: tuple[int, ...]) -> list[int]:
    """The option whose row decided the winning programs, when they answered with its number, not its name
    ("Does Cadiz or Granada have a larger population?" -> "1,928,962", Cadiz's cell: found on WTQ's training
    split, where the model then chose among the names and picked Granada)."""
    rows = {r for run in outcome.runs if run.ran and run.verdict == outcome.winner for r in run.rows}
    if len(rows) == 1 and (row := rows.pop()) in rows_named:
        return [rows_named.index(row) + 1]
    return []


async def _answer_by_model(llm, table: Table, question: str, options: list[str], *, embedder, use_filter: bool,
                           seed: int, t0: float) -> QAResult:
    """The model's own answer over the collapsed table (the path before programs, and their fallback)."""
    summary = ""
    if use_filter and embedder is not None:
        query = question + (" " + " ; ".join(options) if options else "")
        result = await asyncio.to_thread(filter_table, table, query, embedder, method="jsd" if options else "cosine",
                                         seed=seed)
        cols, rows, summary = result.kept_cols, result.rows, result.summary()
    else:
        cols, rows = list(range(1, table.n_cols + 1)), list(range(1, table.n_rows + 1))
    view = CollapsedView.build(table, cols, rows)
    timings = {"filter_s": time.perf_counter() - t0}

    if not options:
        prompt = render("table_qa_free", question=question, table=view.markdown)
        out = await llm.structured([{"role": "user", "content": prompt}], cited_for_view(FreeAnswer, view.cell_pattern()),
                                   max_tokens=ANSWER_MAX_TOKENS)
        valid, invalid = validate_cells(list(out.cited_cells), view)
        timings["total_s"] = time.perf_counter() - t0
        return QAResult(question=question, table=table.name, answer=out.answer.strip(), cells=valid,
                        invalid_cells=invalid, citations_valid=bool(valid) or not invalid, reason=out.reason.strip(),
                        cols=view.cols, rows=view.shown_rows, filter_summary=summary, timings=timings)

    t1 = time.perf_counter()
    texts = await asyncio.gather(*[
        llm.complete([{"role": "user", "content": render("table_qa_option", question=question, table=view.markdown,
                                                         option=opt)}], max_tokens=OPTION_MAX_TOKENS)
        for opt in options])
    explanations = {opt: " ".join(t.split()) for opt, t in zip(options, texts)}
    timings["explain_s"] = time.perf_counter() - t1
    prompt = render("table_qa_judge", question=question, table=view.markdown,
                    options=[{"number": i + 1, "text": o, "explanation": explanations[o]} for i, o in enumerate(options)])
    out = await llm.structured([{"role": "user", "content": prompt}],
                               cited_for_view(ChoiceJudgement, view.cell_pattern()), max_tokens=ANSWER_MAX_TOKENS)
    if not 1 <= out.answer <= len(options):
        raise ToolError(f"The model chose option {out.answer}, but there are only {len(options)} options.")
    tied = sorted({out.answer} | {i for i in out.equally_supported if 1 <= i <= len(options)})
    valid, invalid = validate_cells(list(out.cited_cells), view)
    timings["total_s"] = time.perf_counter() - t0
    return QAResult(question=question, table=table.name, answer=options[out.answer - 1], option=out.answer,
                    tied=tied if len(tied) > 1 else [], confidence="low" if len(tied) > 1 else "high",
                    cells=valid, invalid_cells=invalid, citations_valid=bool(valid) or not invalid,
                    reason=out.reason.strip(), explanations=explanations, cols=view.cols, rows=view.shown_rows,
                    filter_summary=summary, timings=timings)


class Input(BaseModel):
    question: str = Field(description="The question about the table.")
    options: list[str] | None = Field(None, description="Answer options for a multiple-choice question.")
    table: str | None = Field(None, description="Name of an uploaded table; default: the latest one.")


class Output(BaseModel):
    answer: str
    table: str
    table_id: str = ""
    cells: list[str] = Field(description="Evidence ids of the cells the answer rests on (cite these).")
    tied: list[str] = Field(default_factory=list, description="Options the cells support equally well, if several.")
    confidence: str = Field("high", description="low: several options tie, or fewer than half of the sampled "
                            "programs agree on the answer (vote_share).")
    reason: str
    explanations: dict[str, str] = Field(default_factory=dict)
    invalid_citations: list[str] = Field(default_factory=list)
    unstated_numbers: list[str] = Field(default_factory=list, description="Numbers the model's reason gives that "
                                        "the cells it cites and the table's headers lack (the reply is then "
                                        "unverified).")
    decided_by: str = Field("llm", description="program (code computed it), llm, or columns (not in the table).")
    rewritten_by: list[str] = Field(default_factory=list, description="The rewrite rules that changed the programs "
                                    "whose result decided (docs/rules.md).")
    annotated_by: list[str] = Field(default_factory=list, description="The annotate rules that added to the reason, "
                                    "cells or steps of the program whose result decided (docs/rules.md).")
    vote_share: float | None = Field(None, description="Share of the sampled programs that agree.")
    unpicked_rows: str = Field("", description="The question's qualifier of its rows that no program applied from "
                               "the table: the answer is over all rows or rows the model chose, said in the reason "
                               "(the reply is then unverified).")
    programs: list[str] = Field(default_factory=list, description="Each sampled program, its result or its error.")
    program: str = Field("", description="The program whose result decided, in words.")
    vote: str = ""

    def reply(self) -> str | None:
        if self.decided_by == "columns":
            # Worded so the citation check reads it as "the evidence does not settle it" (no cell to cite).
            return f"**Not enough information** in table {self.table} to answer: {self.reason.strip()}"
        if not self.cells:
            if not self.answer.strip():
                return None
            # The tool's answer stands, said to be uncited: the loop's check marks it unverified.
            reason = self.reason.strip().rstrip(".") or "computed from the table"
            return (f"**{self.answer.strip()}** — {reason}. No cell of the table was cited for this answer, so it "
                    "cannot be checked.")
        # A tie is said in the headline too: a bold first option read as the answer (seen as a new user:
        # "**Germany**" above "the cells support Germany, France equally well").
        head = " or ".join(self.tied) + " (tied)" if len(self.tied) > 1 else self.answer.strip()
        text = f"**{head}** {''.join(f'[{c}]' for c in self.cells)}"
        if self.reason.strip():
            text += f" — {self.reason.strip()}"
        if self.tied:
            text += (f"\n\nThe cells support {', '.join(self.tied)} equally well (confidence: {self.confidence}); "
                     "the table does not single one out.")
        if self.decided_by == "program" and self.vote_share is not None:
            text += (f"\n\nComputed from the table: {self.program.rstrip('.')}. "
                     f"{self.vote[0].upper()}{self.vote[1:]} "
                     f"(confidence {self.vote_share:.0%}).")
        return text


@tool("table_qa")
async def table_qa(ctx: ToolContext, args: Input) -> Output:
    """Answer a question (free-form or multiple-choice) from an uploaded table, citing the cells used."""
    if not args.question.strip():
        raise ToolError("Give a question to answer from the table.")
    table = resolve_table(ctx, args.table)
    options = [o.strip() for o in args.options or [] if o and o.strip()]
    ctx.report(f"Writing programs over {table.name} that answer the question…")
    scope = follow_up_scope(args.question, table, ctx.session)
    previous = last_answer(ctx.session)
    of_other_row = question_for_other_row(args.question, table, ctx.session)
    asked = of_other_row or resolve_follow_up(args.question, table, ctx.session)
    result = await answer_question(ctx.deps.llm, table, asked,
                                   options, embedder=ctx.deps.embedder, samples=ctx.deps.settings.table_program_samples,
                                   temperature=ctx.deps.settings.table_program_temperature,
                                   program_form=ctx.deps.settings.table_program_form, scope=scope)
    table_id, cell_ids = "", []
    if result.cols and result.rows:
        table_id, cell_ids = register_evidence(ctx.evidence, CollapsedView.build(table, result.cols, result.rows),
                                               result.cells, answer=result.answer, question=result.question)
    if result.decided_by != "columns":
        rows = _answer_rows(result)
        before = getattr(ctx.session, "last_table_answer", None)
        extreme = args.question if is_superlative(args.question) else \
            before.extreme_question if before is not None and before.table == table.name else ""
        # "And VaxA's?" after "And VaxD's?" asks the same question again: the one that named the row
        question = previous.question if of_other_row and previous is not None else args.question
        ctx.session.last_table_answer = TableAnswer(table=table.name, question=question, answer=result.answer,
                                                    rows=rows, row_names=[table.row_label(r) for r in rows],
                                                    scope=list(scope), extreme_question=extreme)
    reason = result.reason
    unstated = unstated_numbers(result.reason, table, args.question, result.cells) \
        if result.decided_by == "llm" else []
    if unstated:
        # Found as a new user: "Is Lakeside General older or newer than Moorland Medical?" chose "older" with the
        # reason "the opening year of Lakeside General is 2000, while Moorland Medical is 1995" (1987 and 1993).
        reason += (f" (The model wrote {', '.join(unstated)}, which {'is' if len(unstated) == 1 else 'are'} not in "
                   "the cells it cites: the model's own figure, not computed by code.)")
    tied = [result.options[i - 1] for i in result.tied]
    if tied:
        reason += " Several options are equally supported by the cells: " + ", ".join(tied) + "."
    return Output(answer=result.answer_shown or result.answer, table=table.name, table_id=table_id, cells=cell_ids,
                  tied=tied,
                  confidence=result.confidence, reason=reason, explanations=result.explanations,
                  invalid_citations=result.invalid_cells, unstated_numbers=unstated, decided_by=result.decided_by,
                  rewritten_by=result.programs.winning_rewrites() if result.programs and result.decided_by == "program"
                  else [],
                  annotated_by=result.programs.annotated_by if result.programs and result.decided_by == "program"
                  else [],
                  vote_share=result.vote_share, unpicked_rows=result.unpicked,
                  programs=program_lines(result.programs),
                  program=result.programs.program if result.programs and result.decided_by == "program" else "",
                  vote=result.programs.vote_text() if result.programs else "")


MAX_DETAILS = 3  # text cells of the referenced row named beside it
MAX_DETAIL_CHARS = 40
_POINTS_BACK = re.compile(r"\b(it|its|it's|that one|this one|that row|the same one)\b", re.I)
# "there" points back to a place ("How many patients were enrolled there?" after "Which site had the most
# dropouts?": found as a new user, every program summed all six sites), unless it states existence ("Are there
# sites …?", "How many sites are there?", "Is there one with …?").
_THERE = re.compile(r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bwere )(?<!\bbe )(?<!\bbeen )\bthere\b"
                    r"(?!\s+(?:is|are|was|were|be|been|has|have|had)\b|'s\b)", re.I)
# "they / their / them" point back to an answer of several rows; after one row they are the question's own
# plural ("How many phase III trials met their primary endpoint?" after EPS-5: found as a new user, the note
# named EPS-5's drug and every program counted Warfarin's phase III trials).
_POINTS_BACK_TO_SEVERAL = re.compile(r"\b(they|their|them|those|these)\b", re.I)


# "that month", "this hospital": the previous answer's row, named by what a row of the table is
_THAT = re.compile(r"\b(?:that|this|the same)\s+([^\W\d_]+)\b", re.I)


def _that_row(question: str, table: Table) -> str:
    """The words that point back to one row by its kind ("that month" over a table of months; found as a new user:
    "How many operations were cancelled that month?" after the month with the longest wait summed every month), or
    ""."""
    kinds = row_kinds(table)
    return next((m.group(0) for m in _THAT.finditer(question) if singular(m.group(1).casefold()) in kinds), "")


# "And how many nurses?", "And the doctors?" after a one-row answer: another column of the same row, asked with no
# subject of its own (found as a new user: after "How many doctors does it have?" about Geriatrics, "And how many
# nurses?" was answered 227, every ward's nurses summed). Only an opener and the question's own words besides the
# table's headers: "And how many wards have more than 40 nurses?" has a subject and a condition of its own.
_AND_OPENER = re.compile(r"^\s*(?:and|also|plus)\b[\s,]*", re.I)
_ASKING_WORDS = frozenset("how many much what whats which is are was were number total value about did does do "
                          "have has had".split())


def _asks_more_of_the_row(question: str, table: Table) -> bool:
    """Whether ``question`` is an elliptical "And how many <column>?" (see above)."""
    asked = without_regarding_note(question)
    opener = _AND_OPENER.match(asked)
    if opener is None:
        return False
    words = [w for w in content_words(asked[opener.end():]) if w not in _ASKING_WORDS]
    headers = content_words(" ".join(table.columns))
    return bool(words) and all(w.isalpha() and word_in(w, headers) for w in words)


def resolve_follow_up(question: str, table: Table, session) -> str:
    """Name the row a follow-up's "it" (or "there") points to: the previous table answer's row, on the same table."""
    last = last_answer(session)
    if last is None or last.table != table.name or not last.row_names:
        return question
    it, there = _POINTS_BACK.search(question), _THERE.search(question)
    that_row = _that_row(question, table)
    it = it or (len(last.row_names) == 1 and _asks_more_of_the_row(question, table))
    if not (it or there or that_row or (len(last.row_names) > 1 and _POINTS_BACK_TO_SEVERAL.search(question))):
        return question
    names = join_listed([n for n in last.row_names[:3] if n])  # "Doha, Qatar; Macau": two rows, not three
    if not names:
        return question
    word = that_row or ("there" if there and not it else "it")
    # Not the earlier question itself: found as a new user, "What is its hand-hygiene compliance?" after "Which
    # hospital has the fewest infections per bed?" came back as the earlier question's ratio, 5 programs of 5,
    # when the note ended "the answer to: Which hospital has the fewest infections per bed?". Nor the entities an
    # earlier turn carried: "What is its hand-hygiene compliance? (regarding Eastfield, St. Luke's, infections)",
    # carried from a claim two turns back, was answered 5 of 5 for St. Luke's, though 'it' was Harbor View.
    return f"{without_regarding_note(question)} ('{word}' is {names}{_row_details(table, last.rows)})"


# "And VaxD's?": an elliptical follow-up naming another row in the possessive (swap_target reads "And for VaxD?" and
# "What about VaxD?")
_AND_POSSESSIVE = re.compile(r"^\s*and\s+(?P<x>[^?!.]+?)['’]s\s*[?.!]*\s*$", re.I)


def question_for_other_row(question: str, table: Table, session) -> str | None:
    """The previous table question asked again of the one row an elliptical follow-up names, or None.

    Found as a new user: after "What was its efficacy?" (VaxC, 82), "And VaxD's?" was answered with VaxD's Doses
    (3): the question was asked as written, and the programs picked a column. When the follow-up names one row of
    the table that the previous one-row answer is not, and the previous question named its row or called it "it",
    the new question is that question of the named row."""
    last = last_answer(session)
    if last is None or last.table != table.name or len(last.rows) != 1 or not last.row_names:
        return None
    asked = without_regarding_note(question)
    m = _AND_POSSESSIVE.match(asked)
    other = m.group("x").strip() if m else swap_target(asked)
    row = row_stated(TypedTable.build(table), other) if other else None
    if row is None or row == last.rows[0]:
        return None
    name = " ".join(table.row_label(row).split())
    previous = without_regarding_note(last.question)
    old = " ".join(last.row_names[0].split())
    written = re.search(rf"(?<!\w){re.escape(old)}(?!\w)", previous, re.I) if old else None
    if written:
        return previous[:written.start()] + name + previous[written.end():]
    if _POINTS_BACK.search(previous):
        return f"{previous} ('it' is {name}{_row_details(table, [row])})"
    return None


def claim_with_referent(claim: str, table: Table, session) -> str:
    """A claim's "it" named as the previous table answer's one row, on the same table: "It gets more rain than
    Cardiff." -> "Bergen gets more rain than Cardiff."

    Found as a new user: after "Which city has the most rainy days?" (Bergen), "Is it true that it gets more rain
    than Cardiff?" was checked as written, and the one program that ran compared Cardiff with Bergen the wrong way
    round: Refuted. A question gets a note on what "it" is (:func:`resolve_follow_up`); a claim is rewritten in
    place instead, because the note's words (the earlier question's "most") would be read as the claim's own by
    the rules that hold a claim's programs to what it states.
    """
    last = last_answer(session)
    if last is None or last.table != table.name or len(last.row_names) != 1 or not last.row_names[0].strip():
        return claim
    named = with_subject(claim, " ".join(last.row_names[0].split()), EXPLETIVE_IT, every=True)
    if not named:
        return claim
    return named[0].upper() + named[1:] if claim[:1].isupper() else named


def follow_up_scope(question: str, table: Table, session) -> tuple[int, ...]:
    """The rows a follow-up ranges over: the previous table answer's rows, on the same table, when it named
    several and the question points back to them ("Which of them has the largest coal share?" after three net
    importers: found as a new user, the programs took the largest over all seven rows). Empty: every row.

    A claim's rows are a group too ("Is it true that more than half of the counties have coverage above 75%?",
    then "Which of them reported last?"), and a one-row answer to an "of them" question leaves the group it was
    chosen from for the next one ("Which of them has the smallest population?"). Found as a new user: both
    follow-ups ranged over every county, and the second named Elm Ridge, which is not one of them."""
    last = getattr(session, "last_table_answer", None)
    if last is None or last.table != table.name or not OF_THEM.search(question):
        return ()
    if len(last.rows) >= 2:
        return tuple(last.rows)
    return tuple(last.scope) if len(last.scope) >= 2 else ()


def _answer_rows(result) -> list[int]:
    """The rows an answer rests on, for a follow-up: the winning program's decisive rows (every counted row,
    not only the cited ones, which stop at a dozen cells), else the cited cells' rows."""
    outcome = result.programs
    if result.decided_by == "program" and outcome is not None and outcome.winner is not None:
        run = next((r for r in outcome.runs if r.ran and r.verdict == outcome.winner), None)
        if run is not None and run.rows:
            return sorted(set(run.rows))
    return sorted({r for r, _ in result.cells})


def _row_details(table: Table, rows: list[int]) -> str:
    """The text cells that also name a single referenced row: " (Drug: Liraglutide)".

    Seen: "And what was its HbA1c change?" after LEAD-3; a program selecting the row by "Drug = Liraglutide" did
    not vote, its value being in neither the question nor the note, though it selects the same row.
    """
    if len(rows) != 1 or not (1 <= rows[0] <= table.n_rows):
        return ""
    label = table.row_label_col
    row = table.rows[rows[0] - 1]
    details = []
    for c, (header, cell) in enumerate(zip(table.columns, row), start=1):
        text = " ".join(str(cell).split())
        if c == label or not text or len(text) > MAX_DETAIL_CHARS or cell_number(text) is not None:
            continue
        details.append(f"{header}: {text}")
        if len(details) == MAX_DETAILS:
            break
    return f" ({'; '.join(details)})" if details else ""
