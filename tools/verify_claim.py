"""Claim verification against a table: UCRET's column filtering, CCoE explanations and a CCoV judge.

1. Filter the table down to the relevant columns (and rows, for long tables).
2. CCoE: three explanations, each written *assuming* one verdict, requested concurrently.
3. CCoV: a judge sees the collapsed table and the explanations and returns, constrained by a
   JSON schema, one label, the decisive cells (``R<r>C<c>``) and a short reason.
4. Cited cells are checked against the collapsed table; invalid ones are dropped and reported.

Variants for the ablations: ``no-filter`` (whole table), ``no-ccoe`` (the judge sees only the
collapsed table) and ``direct`` (one prompt over the whole table).

The default, ``program`` (issue 13), lets code decide: the model names the columns the claim needs
(``not_in_table`` -> NOT ENOUGH INFO), writes five grammar-bound table programs in one request, code
runs them and the verdicts are voted on (``tools._table_program``). When no program runs or the vote
is split, the path above (``full``) decides, and ``decided_by`` says which did. ``program+ccoe`` runs
both and counts the CCoE verdict as one more vote, which also breaks ties.

Before any of it, the claim's wording is read (the section below the imports): two superlatives of one row joined
by "and" are checked apart, and a negated main verb is checked as its positive form, the verdict turned round.

``program-sql`` and ``program-sql+ccoe`` are the same with the programs written as grammar-bound SQL
over an in-memory SQLite table instead of fixed operations (``tools._table_sql``), for the dev-split
comparison of the two forms; the chat path picks its form with ``EVIDENTIA_TABLE_PROGRAM_FORM``.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

from prompts import render
from kb.tables import Table
from tools._grounding import yes_no_asked
from tools._values import NEI_COVERAGE, claim_coverage
from tools.registry import ToolContext, ToolError, tool
from tools.rules import REGISTRY as RULES, parse_off, settle
from tools._table_llm import (
    JUDGEMENT_MAX_TOKENS, REASON_SCHEMA_EXTRA, CollapsedView, cited_cells_schema_extra, cited_for_view,
    register_evidence, validate_cells)
from tools._table_program import (
    DEFAULT_FORM, DEFAULT_SAMPLES, DEFAULT_TEMPERATURE, ProgramOutcome, program_lines, solve)
from tools._claim_grounding import unstated_numbers
from tools.table_filter import FilterResult, filter_table, resolve_table, whole_table
from tools.contracts import TableAnswer
from tools.table_qa import claim_with_referent
from tools._cells import norm_text
from tools.lang.lexicon import DOWNWARD, UPWARD
from tools.lang.reading import read


# ======================================================================================================================
# "The high dose arm had the fewest events and the fewest dropouts": two superlatives of one row, checked apart.
#
# Found as a new user over a JSON of a trial's arms: every program checked the first part only (the arm with the
# fewest events is High dose) and the claim was Supported, though High dose had the most dropouts (47 of 22, 31,
# 47). A program checks one thing, so code splits the claim's form "<row> <verb> the <extreme> <measure> and/but
# (also) the <extreme> <measure>" into two claims of the same row; the claim holds when both parts do
# (:func:`tools.verify_claim.check_claim` checks each and combines them). Any other claim is left whole.
# ======================================================================================================================

_EXTREME = r"(?:most|least|" + "|".join(sorted(UPWARD | DOWNWARD)) + r")"
_TWO_SUPERLATIVES = re.compile(
    r"^\s*(?P<row>[^,;]{1,60}?)\s+(?P<verb>has|had|have|is|was|are|were|got|recorded|reported|scored)\s+the\s+"
    r"(?P<first>" + _EXTREME + r"\s+[^,;.]{1,60}?)\s*,?\s+(?:and|but)\s+(?P<neg>not\s+)?(?:also\s+)?"
    r"(?:(?:has|had|have|is|was|are|were|got|recorded|reported|scored)\s+)?the\s+(?P<second>" + _EXTREME
    + r"\s+[^,;.]{1,60}?)\s*[.!]?\s*$", re.I)


# "Mpox had more cases than Ebola but fewer deaths": two comparisons of one row with another, the second's "than"
# left out (found as a new user over a CSV of outbreaks: the programs checked the cases alone).
_COMPARATIVE = r"(?:more|fewer|less|higher|lower|greater|smaller|larger|bigger)"
_TWO_COMPARISONS = re.compile(
    r"^\s*(?P<row>[^,;]{1,60}?)\s+(?P<verb>has|had|have|is|was|are|were|got|recorded|reported|scored|saw|caused)\s+"
    r"(?P<first>" + _COMPARATIVE + r"\s+[^,;.]{1,60}?)\s+than\s+(?P<other>[^,;.]{1,60}?)\s*,?\s+(?:and|but)\s+"
    r"(?:also\s+)?(?:(?:has|had|have|is|was|are|were|got|recorded|reported|scored|saw|caused)\s+)?"
    r"(?P<second>" + _COMPARATIVE + r"\s+(?!than\b)[^,;.]{1,60}?)(?:\s+than\s+(?P<other2>[^,;.]{1,60}?))?"
    r"\s*[.!]?\s*$", re.I)


def conjuncts(claim: str) -> list[str]:
    """The two claims a claim of two superlatives, or of two comparisons, of one row makes (section comment),
    else []."""
    m = _TWO_SUPERLATIVES.match(claim)
    if m is not None:
        row, verb = m.group("row").strip(), m.group("verb")
        # "… the most cases but not the most deaths": the second part negated, which its check turns round
        # (the negation below; found as a new user: the programs checked the cases alone)
        second = f"{row} {verb} {'not ' if m.group('neg') else ''}the {m.group('second').strip()}."
        return [f"{row} {verb} the {m.group('first').strip()}.", second]
    m = _TWO_COMPARISONS.match(claim)
    if m is None:
        return []
    row, verb = m.group("row").strip(), m.group("verb")
    other = m.group("other").strip()
    return [f"{row} {verb} {m.group('first').strip()} than {other}.",
            f"{row} {verb} {m.group('second').strip()} than {(m.group('other2') or other).strip()}."]


# ======================================================================================================================
# A claim whose main verb is negated, checked as its positive form with the verdict turned round: "Yemen did not
# have the most deaths" is refuted exactly when "Yemen did have the most deaths" is supported.
#
# Found as a new user over a JSON of outbreaks: "Yemen did not have the most deaths." got five programs that either
# took the smallest number of deaths (held out: the claim says "most") or checked that Yemen *had* the most, and
# the fallback judge refuted the true claim, quoting 112 deaths as "higher than" Nigeria's 596. Programs and the
# rules that read a claim's form (superlatives, changes, comparisons) are written for positive claims, and most of
# them leave a negated one as written; the negation itself is code's to apply.
#
# Only a plain negation of the main verb is read this way, so the flip cannot land on the wrong clause:
# - exactly one "<auxiliary> not" or "<auxiliary>n't" (did, does, do, is, was, are, were, has, have, had), and no
#   other negative word (no, none, never, neither, nor, without, nothing, only);
# - at most eight words before it (the subject), with no clause opener among them or after it (that, which, who,
#   because, but, while, although, if, when, and …: "the only country that do not receive a medal" negates a
#   relative clause, "… but their time on the team do not overlap" a second clause);
# - no quotation marks (a title: "I Don't Like Mondays"), and the negated words are no cell of the table.
# A verdict of NOT ENOUGH INFO stays as it is.
# ======================================================================================================================

def positive_form(claim: str, cells: Iterable[str] = ()) -> str | None:
    """The claim without the negation of its main verb (section comment; the plain negation is the message's
    reading, tools.lang.reading), or None when it has no such negation. ``cells``: the table's text cells, which a
    negated phrase must not be one of."""
    negation = read(claim).negation
    if negation is None:
        return None
    said = norm_text(negation.text)
    if any(said in norm_text(cell) for cell in cells):
        return None
    return negation.positive


def turned_round(label: str) -> str:
    """The verdict of a negated claim, from its positive form's."""
    return {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS"}.get(label, label)


LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
READINGS = {
    "SUPPORTS": "the table supports the claim",
    "REFUTES": "the table refutes the claim",
    "NOT ENOUGH INFO": "the table does not give enough information to decide the claim",
}
_TABLE_SAYS = re.compile(r"so the table (supports|refutes) the claim")
Variant = Literal["program", "program+ccoe", "full", "no-filter", "no-ccoe", "direct"]
# The SQL form of the program variants: for the evaluation (the tool's schema keeps the six above).
SQL_VARIANTS: tuple[str, ...] = ("program-sql", "program-sql+ccoe")
VARIANTS: tuple[str, ...] = ("program", "program+ccoe", "full", "no-filter", "no-ccoe", "direct") + SQL_VARIANTS
DEFAULT_VARIANT = "program"
PROGRAM_VARIANTS = ("program", "program+ccoe") + SQL_VARIANTS
EXPLANATION_MAX_TOKENS = 120  # ~30 s each at 4 tokens/s; the three run concurrently
JUDGE_MAX_TOKENS = JUDGEMENT_MAX_TOKENS  # an upper bound: the JSON normally ends well before


@lru_cache(maxsize=8)
def judgement_schema(labels: tuple[str, ...] = LABELS) -> type[BaseModel]:
    """The judge's output schema, its label restricted to ``labels`` (TabFact has two).

    The label comes first, so narrowing the cells to a view's own (``cited_for_view``) cannot change
    the verdict the model decodes.
    """
    return create_model(
        "TableJudgement",
        label=(Literal[labels], Field(description="The verdict.")),  # type: ignore[valid-type]
        cited_cells=(list[str], Field(description="Decisive cells as R<row>C<col>.",
                                      json_schema_extra=cited_cells_schema_extra())),
        reason=(str, Field(description="One short sentence.", json_schema_extra=REASON_SCHEMA_EXTRA)),
    )


# What decided a verdict: the programs, the judge (CCoE), both, the columns or coverage check, or a named rule.
DECIDED_BY = r"^(?:program|ccoe|program\+ccoe|columns|coverage|rule:[a-z0-9-]+)$"


class ClaimCheck(BaseModel):
    """Everything one claim check produced, for the tool, the UI and the evaluation log."""

    claim: str
    table: str
    variant: str
    label: str
    cells: list[tuple[int, int]] = Field(description="Valid decisive cells (row, col), full-table coordinates.")
    invalid_cells: list[str] = Field(default_factory=list, description="Citations outside the collapsed table.")
    citations_valid: bool = Field(description="False when the judge cited cells but none of them exist.")
    reason: str
    explanations: dict[str, str] = Field(default_factory=dict)
    filter: FilterResult | None = None
    cols: list[int]
    rows: list[int]
    collapsed: str
    timings: dict[str, float] = Field(default_factory=dict)
    # "rule:<name>": a claim whose form settles it in code, by the settle rule of that name (tools/rules.py)
    decided_by: str = Field("ccoe", pattern=DECIDED_BY)
    rules_fired: list[str] = Field(default_factory=list, description="Every settle rule that fired, in order.")
    confidence: float | None = Field(None, description="Share of the sampled programs that agree.")
    programs: ProgramOutcome | None = None
    # checked as its positive form and turned round (the wording readers above): the programs computed that form
    negated: bool = False

    @property
    def cell_refs(self) -> list[str]:
        return [f"R{r}C{c}" for r, c in self.cells]


async def explain(llm, claim: str, view: CollapsedView, labels: tuple[str, ...] = LABELS) -> dict[str, str]:
    """CCoE: one assumption-conditioned explanation per label, all requested at once."""
    prompts = [render("table_explain", claim=claim, table=view.markdown, label=lab, reading=READINGS[lab])
               for lab in labels]
    texts = await asyncio.gather(*[
        llm.complete([{"role": "user", "content": p}], max_tokens=EXPLANATION_MAX_TOKENS) for p in prompts])
    return {lab: " ".join(t.split()) for lab, t in zip(labels, texts)}


async def check_claim(llm, table: Table, claim: str, *, embedder=None, variant: str = DEFAULT_VARIANT,
                      labels: tuple[str, ...] = LABELS, filter_method: Literal["cosine", "jsd"] = "cosine",
                      seed: int = 0, filter_result: FilterResult | None = None, samples: int = DEFAULT_SAMPLES,
                      temperature: float = DEFAULT_TEMPERATURE, program_form: str | None = None) -> ClaimCheck:
    """Verify ``claim`` against ``table``; usable without a ToolContext (the evaluation calls this).

    ``program_form`` (ops or sql) is the form of ``program`` and ``program+ccoe``'s programs; the
    ``program-sql`` variants always write SQL.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if variant in PROGRAM_VARIANTS:
        return await _check_by_program(llm, table, claim, embedder=embedder, variant=variant, labels=labels,
                                       filter_method=filter_method, seed=seed, filter_result=filter_result,
                                       samples=samples, temperature=temperature,
                                       form="sql" if variant in SQL_VARIANTS else program_form or DEFAULT_FORM)
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    if variant in ("full", "no-ccoe"):
        if filter_result is None:
            if embedder is None:
                raise ValueError("column filtering needs an embedder")
            filter_result = await asyncio.to_thread(filter_table, table, claim, embedder, method=filter_method,
                                                    seed=seed)
    else:
        filter_result = whole_table(table, claim)
    timings["filter_s"] = time.perf_counter() - t0
    view = CollapsedView.build(table, filter_result.kept_cols, filter_result.rows)

    explanations: dict[str, str] = {}
    if variant in ("full", "no-filter"):
        t1 = time.perf_counter()
        explanations = await explain(llm, claim, view, labels)
        timings["explain_s"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    prompt = render("table_judge", claim=claim, table=view.markdown, labels=list(labels),
                    explanations=[{"label": k, "text": v} for k, v in explanations.items()])
    verdict = await llm.structured([{"role": "user", "content": prompt}],
                                   cited_for_view(judgement_schema(tuple(labels)), view.cell_pattern()),
                                   max_tokens=JUDGE_MAX_TOKENS)
    timings["judge_s"] = time.perf_counter() - t2
    valid, invalid = validate_cells(list(verdict.cited_cells), view)
    timings["total_s"] = time.perf_counter() - t0
    return ClaimCheck(
        claim=claim, table=table.name, variant=variant, label=verdict.label, cells=valid, invalid_cells=invalid,
        citations_valid=bool(valid) or not invalid, reason=" ".join(verdict.reason.split()),
        explanations=explanations, filter=filter_result if variant in ("full", "no-ccoe") else None,
        cols=view.cols, rows=view.shown_rows, collapsed=view.markdown, timings=timings)


def negated_claim_form(claim: str, table: Table) -> str | None:
    """The claim without the "not" of its main verb when it has one ("Yemen did not have the most deaths" ->
    "Yemen had the most deaths"), which is checked and its verdict turned round; else None."""
    cells = (str(cell) for row in table.rows for cell in row)  # read only when a negation is found
    return positive_form(claim, cells)


async def _check_by_program(llm, table: Table, claim: str, *, embedder, variant: str, labels: tuple[str, ...],
                            filter_method: Literal["cosine", "jsd"], seed: int, filter_result: FilterResult | None,
                            samples: int, temperature: float, form: str) -> ClaimCheck:
    """The ``program`` variants: programs vote; CCoE decides when they cannot (or votes too)."""
    t0 = time.perf_counter()
    if (positive := negated_claim_form(claim, table)) is not None:  # "Yemen did not have the most deaths"
        check = await _check_by_program(llm, table, positive, embedder=embedder, variant=variant, labels=labels,
                                        filter_method=filter_method, seed=seed, filter_result=filter_result,
                                        samples=samples, temperature=temperature, form=form)
        return negated(claim, check, time.perf_counter() - t0)
    if parts := conjuncts(claim):  # two superlatives or comparisons of one row: each part by its own programs
        checks = await asyncio.gather(*(
            _check_by_program(llm, table, part, embedder=embedder, variant=variant, labels=labels,
                              filter_method=filter_method, seed=seed, filter_result=filter_result, samples=samples,
                              temperature=temperature, form=form) for part in parts))
        return both_parts(claim, table, list(checks), time.perf_counter() - t0)
    # Claims whose form settles them in code, with no model call: the settle rules of tools/rules.py (their
    # catalogue: docs/rules.md). When those that fire disagree, none decides and the programs do.
    settlement = settle(claim, table, parse_off(llm.settings.rules_off))
    if (ruled := settlement.decided) is not None:
        view = CollapsedView.build(table, sorted({c for _, c in ruled.cells}), sorted({r for r, _ in ruled.cells}))
        return ClaimCheck(claim=claim, table=table.name, variant=variant, label=ruled.verdict, cells=ruled.cells,
                          citations_valid=True, reason=ruled.reason, cols=view.cols, rows=view.shown_rows,
                          collapsed=view.markdown, timings={"total_s": time.perf_counter() - t0},
                          decided_by=f"rule:{ruled.rule}", rules_fired=settlement.names, confidence=None)
    check = await _decided_without_rules(llm, table, claim, embedder=embedder, variant=variant, labels=labels,
                                         filter_method=filter_method, seed=seed, filter_result=filter_result,
                                         samples=samples, temperature=temperature, form=form, t0=t0)
    # rules that fired but disagreed: recorded, so a measurement sees the conflict
    return check.model_copy(update={"rules_fired": settlement.names}) if settlement.fired else check


async def _decided_without_rules(llm, table: Table, claim: str, *, embedder, variant: str,
                                 labels: tuple[str, ...], filter_method: Literal["cosine", "jsd"], seed: int,
                                 filter_result: FilterResult | None, samples: int, temperature: float, form: str,
                                 t0: float) -> ClaimCheck:
    """Coverage first (a table that does not talk about the claim), then the programs' vote, then CCoE where the
    vote cannot decide (or, in the ``+ccoe`` variants, votes too)."""
    ccoe_variant = "full" if embedder is not None or filter_result is not None else "no-filter"

    def ccoe() -> asyncio.Task[ClaimCheck]:
        return asyncio.ensure_future(check_claim(llm, table, claim, embedder=embedder, variant=ccoe_variant,
                                                 labels=labels, filter_method=filter_method, seed=seed,
                                                 filter_result=filter_result))

    coverage = claim_coverage(claim, table)
    if "NOT ENOUGH INFO" in labels and coverage.share < NEI_COVERAGE:
        # The table does not talk about most of the claim: no program over its rows can settle it.
        view = CollapsedView.build(table, list(range(1, table.n_cols + 1)), list(range(1, min(table.n_rows, 10) + 1)))
        reason = (f"The table mentions only {len(coverage.words) - len(coverage.missing)} of the claim's "
                  f"{len(coverage.words)} content words (not: {', '.join(coverage.missing[:8])}), so it cannot "
                  "settle the claim.")
        return ClaimCheck(claim=claim, table=table.name, variant=variant, label="NOT ENOUGH INFO", cells=[],
                          citations_valid=True, reason=reason, cols=view.cols, rows=view.shown_rows,
                          collapsed=view.markdown, timings={"total_s": time.perf_counter() - t0},
                          decided_by="coverage", confidence=None)
    # The ensemble needs the judge anyway: start it now so it overlaps the programs.
    judge = ccoe() if variant.endswith("+ccoe") else None
    outcome = await solve(llm, table, "claim", claim, n=samples, temperature=temperature, program_form=form)
    program_s = time.perf_counter() - t0
    if outcome.not_in_table and "NOT ENOUGH INFO" in labels and judge is None:
        view = CollapsedView.build(table, list(range(1, table.n_cols + 1)), list(range(1, min(table.n_rows, 10) + 1)))
        return ClaimCheck(claim=claim, table=table.name, variant=variant, label="NOT ENOUGH INFO", cells=[],
                          citations_valid=True, reason=outcome.reason, cols=view.cols, rows=view.shown_rows,
                          collapsed=view.markdown,
                          timings={"program_s": program_s, "total_s": program_s}, decided_by="columns",
                          confidence=None, programs=outcome)
    if judge is None and outcome.decided and outcome.winner in labels:
        view = CollapsedView.build(table, outcome.cols, outcome.rows)
        return ClaimCheck(claim=claim, table=table.name, variant=variant, label=outcome.winner, cells=outcome.cells,
                          citations_valid=True, reason=outcome.reason, cols=view.cols, rows=view.shown_rows,
                          collapsed=view.markdown, timings={"program_s": program_s, "total_s": program_s},
                          decided_by="program", confidence=outcome.confidence, programs=outcome)
    fallback = await (judge if judge is not None else ccoe())
    timings = {**fallback.timings, "program_s": program_s, "total_s": time.perf_counter() - t0}
    if judge is None:  # no program ran, the vote was split, or the table lacks a column the labels cannot say
        return fallback.model_copy(update={"variant": variant, "decided_by": "ccoe", "programs": outcome,
                                           "timings": timings})
    votes = dict(outcome.votes)
    if outcome.not_in_table and "NOT ENOUGH INFO" in labels:
        votes["NOT ENOUGH INFO"] = votes.get("NOT ENOUGH INFO", 0) + 1
    votes[fallback.label] = votes.get(fallback.label, 0) + 1
    best = max(votes.values())
    leaders = [lab for lab, v in votes.items() if v == best]
    label = fallback.label if fallback.label in leaders else leaders[0]
    confidence = round(best / sum(votes.values()), 2)
    if label == fallback.label:
        return fallback.model_copy(update={"variant": variant, "decided_by": "program+ccoe", "programs": outcome,
                                           "timings": timings, "confidence": confidence})
    programs_won = outcome.decided and label == outcome.winner
    view = (CollapsedView.build(table, outcome.cols, outcome.rows) if programs_won
            else CollapsedView.build(table, fallback.cols, fallback.rows))
    return ClaimCheck(claim=claim, table=table.name, variant=variant, label=label,
                      cells=outcome.cells if programs_won else [], citations_valid=True,
                      reason=outcome.reason,
                      explanations=fallback.explanations, cols=view.cols, rows=view.shown_rows,
                      collapsed=view.markdown, timings=timings, decided_by="program+ccoe", confidence=confidence,
                      programs=outcome)


def negated(claim: str, check: ClaimCheck, total_s: float) -> ClaimCheck:
    """The verdict of a claim whose main verb is negated, from its positive form's check (the wording readers above):
    turned round, with a reason that says so. NOT ENOUGH INFO stays."""
    label = turned_round(check.label)
    reason = f"Read without its “not”, “{check.claim}”: {check.reason}"
    if label != check.label:
        reason += (f" The claim says the opposite, so the table {'supports' if label == 'SUPPORTS' else 'refutes'} "
                   "it.")
    return check.model_copy(update={"claim": claim, "label": label, "reason": reason, "timings": {"total_s": total_s},
                                    "negated": True})


def both_parts(claim: str, table: Table, checks: list[ClaimCheck], total_s: float) -> ClaimCheck:
    """One verdict for a claim made of parts (the wording readers above): refuted when a part is, supported when
    every part is, else as the first part that is not supported; the reason says which part decided."""
    refuted = [c for c in checks if c.label == "REFUTES"]
    unsupported = refuted or [c for c in checks if c.label != "SUPPORTS"]
    timings = {"total_s": total_s}
    fired = list(dict.fromkeys(name for c in checks for name in c.rules_fired))
    if unsupported:
        part = unsupported[0]
        return part.model_copy(update={"claim": claim, "timings": timings, "rules_fired": fired,
                                       "reason": f"Its part “{part.claim}”: {part.reason}"})
    cells = list(dict.fromkeys(cell for c in checks for cell in c.cells))
    view = CollapsedView.build(table, sorted({col for c in checks for col in c.cols}),
                               sorted({row for c in checks for row in c.rows}))
    confidences = [c.confidence for c in checks if c.confidence is not None]
    deciders = list(dict.fromkeys(c.decided_by for c in checks))
    return checks[0].model_copy(update={
        "claim": claim, "cells": cells, "cols": view.cols, "rows": view.shown_rows, "collapsed": view.markdown,
        "reason": " ".join(f"Its part “{c.claim}”: {c.reason}" for c in checks), "timings": timings,
        "confidence": min(confidences) if confidences else None, "rules_fired": fired,
        # a part the judge decided makes the whole the judge's: its reason is then checked for unstated numbers
        "decided_by": "ccoe" if "ccoe" in deciders else deciders[0]})


# -- the tool -----------------------------------------------------------------------------------
class Input(BaseModel):
    claim: str = Field(description="The claim to check against the table, as a statement.")
    table: str | None = Field(None, description="Name of an uploaded table; default: the latest one.")
    variant: Variant = Field(DEFAULT_VARIANT, description="program (default), program+ccoe, full, no-filter, "
                                                          "no-ccoe or direct.")


class Output(BaseModel):
    verdict: str = Field(description="SUPPORTS, REFUTES or NOT ENOUGH INFO.")
    claim: str = Field("", description="The claim as checked (with a follow-up's 'it' named).")
    table: str
    table_id: str = Field(description="Evidence id of the collapsed table.")
    cells: list[str] = Field(description="Evidence ids of the decisive cells (cite these).")
    reason: str
    unstated_numbers: list[str] = Field(default_factory=list, description="Numbers the judge's reason gives that "
                                        "neither the cells it cites, the table's headers nor the claim state (the "
                                        "reply is then unverified).")
    explanations: dict[str, str] = Field(description="The three assumption-conditioned explanations.")
    invalid_citations: list[str] = Field(default_factory=list)
    citations_valid: bool = True
    columns_kept: list[str] = Field(default_factory=list)
    filter: str = Field("", description="Why columns (and rows) were kept or dropped.")
    decided_by: str = Field("ccoe", description="program (code computed it), ccoe (the judge), program+ccoe, "
                                                "columns (the table lacks a column the claim needs), coverage "
                                                "(the table does not mention most of the claim), or rule:<name> (a "
                                                "named rule settled it in code; docs/rules.md).")
    rules_fired: list[str] = Field(default_factory=list, description="The settle rules that fired (they disagreed "
                                                                     "when none decided).")
    rewritten_by: list[str] = Field(default_factory=list, description="The rewrite rules that changed the programs "
                                    "whose result decided (docs/rules.md).")
    annotated_by: list[str] = Field(default_factory=list, description="The annotate rules that added to the reason, "
                                    "cells or steps of the program whose result decided (docs/rules.md).")
    confidence: float | None = Field(None, description="Share of the sampled programs that agree.")
    programs: list[str] = Field(default_factory=list, description="Each sampled program, its result or its error.")
    program: str = Field("", description="The program whose result decided, in words.")
    vote: str = ""
    negated: bool = Field(False, description="The claim's main verb is negated: the programs checked it without "
                                             "its 'not', and the verdict is turned round.")

    def reply(self) -> str | None:
        """The verdict with its decisive cells.

        A verdict that cites no valid cell is still the tool's verdict: it is shown, saying that no cell backs
        it, and the loop's citation check marks it unverified (it was once replaced by "no tool returned
        evidence").
        """
        label = {"SUPPORTS": "Supported", "REFUTES": "Refuted", "NOT ENOUGH INFO": "Not enough information"}
        reason = self.reason.strip()
        if reason and reason[-1] not in ".!?…)]\"”'":
            # the judge's reason cut off at its token limit ("… if hospitals with more beds had"): say so, or the
            # next sentence reads as its end (found as a new user)
            reason += " …"
        if yes_no_asked(self.claim):
            # Asked "Is potassium within its reference range?", the user wants yes or no, not "Refuted … so the
            # table refutes the claim" (found as a new user through `evidentia ask`).
            label = {"SUPPORTS": "Yes", "REFUTES": "No", "NOT ENOUGH INFO": "Not enough information"}
            reason = _TABLE_SAYS.sub(lambda m: f"so the answer is {'yes' if m.group(1) == 'supports' else 'no'}",
                                     reason)
        if self.decided_by in ("columns", "coverage"):
            return f"**{label['NOT ENOUGH INFO']}** in table {self.table}: {reason}"
        if not self.cells:
            return (f"**{label.get(self.verdict, self.verdict)}** by table {self.table}: {reason} "
                    "No cell of the table was cited for this verdict, so it cannot be checked.")
        cites = "".join(f"[{c}]" for c in self.cells)
        text = f"**{label.get(self.verdict, self.verdict)}** by table {self.table}: {reason} {cites}"
        if self.decided_by.startswith("rule:") and (rule := RULES.get(self.decided_by[len("rule:"):])):
            text += f"\n\nSettled in code by the rule `{rule.name}`, which reads {rule.reads}."
        if self.decided_by == "program" and self.confidence is not None:
            # a negated claim's programs computed its positive form, whose vote runs the other way
            without_not = " for the claim without its “not”" if self.negated else ""
            text += (f"\n\nComputed from the table{without_not}: {self.program.rstrip('.')}. "
                     f"{self.vote[0].upper()}{self.vote[1:]} "
                     f"(confidence {self.confidence:.0%}).")
        return text


@tool("verify_claim")
async def verify_claim(ctx: ToolContext, args: Input) -> Output:
    """Check whether an uploaded table supports, refutes or cannot decide a claim, citing the decisive cells."""
    if not args.claim.strip():
        raise ToolError("Give the claim to check, as a statement.")
    table = resolve_table(ctx, args.table)
    claim = claim_with_referent(args.claim, table, ctx.session)
    ctx.report(f"Selecting the columns of {table.name} relevant to the claim…")
    if args.variant in PROGRAM_VARIANTS:
        ctx.report(f"Writing programs over {table.name} that check the claim…")
    settings = ctx.deps.settings
    check = await check_claim(ctx.deps.llm, table, claim, embedder=ctx.deps.embedder, variant=args.variant,
                              samples=settings.table_program_samples,
                              temperature=settings.table_program_temperature,
                              program_form=settings.table_program_form)
    table_id, cell_ids = register_evidence(
        ctx.evidence, CollapsedView.build(table, check.cols, check.rows), check.cells,
        verdict=check.label, reason=check.reason, explanations=check.explanations, claim=check.claim)
    if check.decided_by != "columns":
        # "And for myocardial infarction?" asks this claim of another row (tools.lang.routing.claim_of_another)
        rows = list(dict.fromkeys(r for r, _ in check.cells))
        ctx.session.last_table_answer = TableAnswer(table=table.name, question=claim, answer=check.label, rows=rows,
                                                    row_names=[table.row_label(r) for r in rows], kind="claim")
    note = "" if check.citations_valid else " (none of the cells the judge cited exist in the table)"
    judge_wrote = check.decided_by == "ccoe" or (
        check.decided_by == "program+ccoe" and (check.programs is None or check.reason != check.programs.reason))
    unstated = unstated_numbers(check.reason, table, claim, check.cells) if judge_wrote else []
    if unstated:  # the model's arithmetic or memory, not the cited cells': said, and the reply is not "verified"
        note += (f" (The judge wrote {', '.join(unstated)}, which {'is' if len(unstated) == 1 else 'are'} in "
                 "neither the cells it cites nor the claim: the model's own figure, not computed by code.)")
    return Output(
        verdict=check.label, claim=claim, table=table.name, table_id=table_id, cells=cell_ids,
        reason=check.reason + note, unstated_numbers=unstated,
        explanations=check.explanations, invalid_citations=check.invalid_cells,
        citations_valid=check.citations_valid, columns_kept=[table.columns[c - 1] for c in check.cols],
        filter=check.filter.summary() if check.filter else "no column filtering", decided_by=check.decided_by,
        rules_fired=check.rules_fired,
        rewritten_by=check.programs.winning_rewrites() if check.programs and "program" in check.decided_by else [],
        annotated_by=check.programs.annotated_by if check.programs and "program" in check.decided_by else [],
        confidence=check.confidence, programs=program_lines(check.programs),
        program=check.programs.program if check.programs else "",
        vote=check.programs.vote_text() if check.programs else "", negated=check.negated)

