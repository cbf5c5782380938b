"""Rules as records: each hand-written reading rule is a name, a stage, what it reads, the case it came from, and
examples and counter-examples that are data (a message, a small table, what must come out).

After Duckling and spaCy's Matcher: a rule is data that code runs, so it can be listed (``docs/rules.md`` is
generated from :data:`RULES`), switched off by name (``EVIDENTIA_RULES_OFF=name,...``), measured on its own
(``evidentia eval rules``) and tested from its own examples (one parametrised test runs them all).

Stages, each with one signature, checked when this module loads:

- ``settle``: ``(claim, table) -> verdict or None``. A claim whose form settles it in code, with no model call.
  **Conflict policy**: every settle rule runs; when those that fire agree, the first in :data:`RULES` names the
  verdict and all are recorded; when they disagree, none decides: the disagreement is logged and the claim goes to
  the programs as if no rule had fired.

- ``veto``: ``(program, execution, typed, text) -> reason or ""``. A sampled claim program that ran but does not
  check what the claim states must not vote. **Policy**: vetoes are a union of reasons: every veto runs, and the
  program is held when any gives a reason; all the reasons and the names of the vetoes that gave them are kept.
  An example's ``program`` is the program as the model wrote it.

- ``withhold``: ``(runs, typed, text) -> one reason per run ("" for none)``. Unlike a veto, which judges one
  program alone, a withhold rule looks at all the runs of one sampling together: a program that ran is held from
  the vote when it compares badly with the others (it ignores a date another keeps, it answers a number where
  another names the row asked for). Each applies to claims or to questions (``applies_to``). **Policy**: they run
  in the order of :data:`WITHHOLDS`, and a run one rule holds no longer votes, so the rules after it see it as not
  run (:func:`withhold`); each held run records the rule that held it (``withheld_by``). An example's ``programs``
  are the sampled programs as the model wrote them, ``held`` the ones the rule must hold.

- ``rewrite``: ``(program, typed, text) -> program``. A sampled program read as its text states or asks (the
  program readers of ``tools/_program_readers.py``, which keeps the order they apply in). **Policy**: they apply in
  that order, each to what the ones before it made; a record declares ``after`` the rewrites whose output it reads,
  and the order is checked against those when this module loads. An example's ``program`` is the program as it
  reaches the reader, and its ``expected`` the fields the reader sets.

- ``annotate``: ``(program, execution, typed, text) -> Note or None``. What a sampled program computed, said and
  cited more fully without changing it: a phrase of the reason (the interval a count read, whose value a bound is),
  cells cited beside the program's own, steps shown. The rule returns a :class:`~tools._table_ops_model.Note`, never
  a program or an execution, and :func:`annotate` merges it, so the run's result, truth and rows stay the program's.
  Each applies to claims or to questions (``applies_to``). **Policy**: every one runs on the run as the program
  computed it; their notes are merged in the order of :data:`ANNOTATES`, and each annotated run records the rules
  that added to it (``annotated_by``). An example's ``program`` is the program as it reaches the rule (as the rewrite
  rules left it), and its ``note`` what the rule must add.

What a reply adds after the vote stays code: ``tools/table_qa.py``'s note that the programs picked no rows by a
qualifier the question states (it also lowers the answer's confidence) and the cells of the other option's row
beside the chosen one (it reads the option the vote matched), and ``tools/verify_claim.py``'s notes on the judge's
reply (they read the judge's text and mark figures it wrote as the model's, which the reply's check reads).
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from pydantic import BaseModel

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import comparison_blocker, compared_row_note, counts_of_compared_row, most_demanding_note, \
    unnamed_row_blocker
from tools._claim_counts import fraction_of_rows_blocker, ignored_category_blocker, named_rows_blocker, \
    quantity_count_blocker
from tools._claim_grounding import copied_beside_stated, direction_blocker, negated_count_blocker, tautology_blocker, \
    vote_blocker
from tools._claim_multiples import multiple_blocker, ratio_change_check
from tools._grounding import less_grounded, wrong_answer_kind
from tools._values import interval_note
from tools._program_readers import CLAIM_READERS, QUESTION_READERS, REWRITES, Kind, Reader, header_of, \
    reader_name
from tools._question_dates import leaves_out_stated_date
from tools._question_rules import other_column_ranked, shared_row_note
from tools._settle_rules import association_check, dose_trend_check, range_check, range_duration_check, record_check, \
    significance_check, trend_check
from tools._table_ops_model import Execution, Note, Program

log = logging.getLogger(__name__)

Stage = Literal["settle", "veto", "withhold", "annotate"]
STAGE_PARAMETERS: dict[str, tuple[str, ...]] = {"settle": ("claim", "table"),
                                                "veto": ("program", "execution", "typed", "text"),
                                                "withhold": ("runs", "typed", "text"),
                                                "annotate": ("program", "execution", "typed", "text")}


class Settled(Protocol):
    """What a settle rule returns when it fires: the verdict, the cells it read, and why, in words."""

    verdict: str
    cells: list[tuple[int, int]]
    reason: str


@dataclass(frozen=True)
class Example:
    """A message over a small table and what the rule must make of it: a verdict, or ``None`` (it must not fire)."""

    text: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    # a settle rule's verdict; "veto" for a veto rule that holds the program; "annotate" for an annotate rule that
    # adds ``note``
    expected: str | None
    program: dict | None = None  # a veto or annotate rule's input: the program (see the stages above)
    # the claim's own verdict over the table, where it is plain (a veto example's, to check the claim end to end
    # with the rule on and off: ``evidentia eval rules --examples``); a settle example's is ``expected``
    verdict: str | None = None
    # a withhold rule's input: the programs of one sampling as the model wrote them; ``expected`` is "withhold"
    # when the rule holds some, and ``held`` says which (their places in ``programs``)
    programs: tuple[dict, ...] = ()
    held: tuple[int, ...] = ()
    note: Note | None = None  # what an annotate rule adds to the run of ``program``; None: it adds nothing

    def table(self) -> Table:
        return Table(name="example", title="", columns=list(self.columns), rows=[list(r) for r in self.rows])


@dataclass(frozen=True)
class Rule:
    name: str
    stage: Stage
    reads: str  # what of the message and the table it reads, in a line
    came_from: str  # the case it was written for
    fn: Callable[..., Settled | None]
    examples: tuple[Example, ...]
    counter_examples: tuple[Example, ...] = field(default=())
    applies_to: Kind = "claim"  # settle and veto rules read claims; withhold and annotate rules claims or questions


@dataclass(frozen=True)
class SampledRun:
    """One sampled program of a sampling, as the withhold stage sees it beside the others."""

    program: Program | None  # as read and run (after the rewrite rules); None for SQL or a program that did not parse
    # what it computed; None when it did not run, a veto held it, or a withhold rule before this one held it
    execution: Execution | None
    raw: dict = field(default_factory=dict)  # the program as the model wrote it
    verdict: str = ""  # what it votes for: SUPPORTS/REFUTES, or a question's answer (one form per number)
    no_numbers: bool = False  # it did not run because the rows it read hold no number there

    @property
    def votes(self) -> bool:
        return self.execution is not None

    @property
    def model_wrote_check(self) -> bool:
        """Whether the program's check compares with the value the model wrote, not one a rule set."""
        check = self.program.check if self.program is not None else None
        raw = self.raw.get("check") if isinstance(self.raw, dict) else None
        return check is not None and isinstance(raw, dict) and str(raw.get("value")) == check.value


# -- the small tables the examples share --------------------------------------------------------------------
_TRIAL = (("Treatment", "Patients", "Deaths", "Hazard ratio (95% CI)", "p-value"),
          (("Placebo", "1,204", "187", "1.00 (reference)", "–"), ("Drug A", "1,198", "142", "0.74 (0.60–0.92)", "0.006"),
           ("Drug B", "1,211", "171", "0.91 (0.74–1.12)", "0.37")))
_SALES = (("Month", "Revenue", "Costs"),
          (("2024-01", "$1,200,000", "$950,000"), ("2024-02", "$1,150,000", "$980,000"),
           ("2024-03", "$1,380,000", "$1,010,000")))
_DOSES = (("Event", "Placebo (n=100)", "Drug 10 mg (n=100)", "Drug 20 mg (n=100)"),
          (("Headache", "3 (3%)", "5 (5%)", "8 (8%)"), ("Insomnia", "2 (2%)", "4 (4%)", "3 (3%)")))
_LABS = (("Test", "Result", "Unit", "Reference range"),
         (("Sodium", "138", "mmol/L", "135–145"), ("Potassium", "5.6", "mmol/L", "3.5–5.0"),
          ("Glucose", "92", "mg/dL", "70–99")))
# The lab report of the case value-in-range came from (tests/test_value_in_range.py reads the same claims)
_LAB_REPORT = (("Test", "Result", "Unit", "Reference range"),
               (("Sodium", "138", "mmol/L", "135–145"), ("Potassium", "5.6", "mmol/L", "3.5–5.0"),
                ("Creatinine", "1.4", "mg/dL", "0.6–1.2"), ("Glucose", "92", "mg/dL", "70–99"),
                ("Hemoglobin", "11.2", "g/dL", "12.0–15.5")))
_SUBGROUPS = (("Subgroup", "Patients", "Hazard ratio (95% CI)", "P value"),
              (("Overall", "4744", "0.74 (0.65–0.85)", "<0.001"), ("Women", "1109", "0.77 (0.57–1.03)", "0.08")))
_HOSPITALS = (("Hospital", "Beds", "Hand hygiene compliance"),
              (("St Anne's", "420", "87%"), ("Riverside", "610", "79%"), ("Northfield", "260", "92%"),
               ("Lakeview", "340", "84%")))
_BOOK = (("Field", "Value"),
         (("Title", "Field Guide to Coastal Birds"), ("Author", "Maria Ostrova, Jan de Vries"),
          ("Publisher", "Harbour Press, 2014"), ("Length", "312 pages")))
_CALENDAR = (("Date", "Event"),
             (("Monday 7 September", "Entries open"), ("Monday 5 October - Wednesday 16 December", "Fixture window")))


def _on(table: tuple, *cases: tuple[str, str | None]) -> tuple[Example, ...]:
    columns, rows = table
    return tuple(Example(text, columns, rows, expected) for text, expected in cases)


# -- veto rules: a sampled claim program that ran but does not check what the claim states ------------------------
# One signature for all (program, execution, typed, text); each wraps the module function that holds its reading.
def _tautology(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return tautology_blocker(program, typed)


def _fraction_of_rows(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return fraction_of_rows_blocker(program, typed, text)


def _direction(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return direction_blocker(program, typed, text)


def _comparison(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return comparison_blocker(program, text)


def _unnamed_row(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return unnamed_row_blocker(program, typed, text)


def _multiple(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return multiple_blocker(program, text, header_of(typed, program.column))


def _quantity_count(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return quantity_count_blocker(program, typed, text)


def _negated_count(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return negated_count_blocker(program, text, typed)


def _named_rows(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return named_rows_blocker(program, typed, text)


def _unstated_value(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return vote_blocker(program, execution, text, typed.table.n_rows, typed)


def _ignored_category(program: Program, execution: Execution, typed: TypedTable, text: str) -> str:
    return ignored_category_blocker(program, execution, typed, text)


def _veto(table: tuple, *cases: tuple) -> tuple[Example, ...]:
    """Examples from (text, program, expected) or (text, program, expected, the claim's verdict over the table)."""
    columns, rows = table
    return tuple(Example(text, columns, rows, expected, program, *verdict) for text, program, expected, *verdict
                 in cases)


_SITES = (("Site", "Country", "Dropouts"), (("Leeds", "UK", "12"), ("Porto", "Portugal", "20"), ("Lyon", "France", "7")))
_COUNTIES = (("County", "Coverage (%)"),
             (("Ashford", "81"), ("Belmont", "77"), ("Carlow", "64"), ("Dunmore", "79"), ("Elgin", "70")))
_RESERVOIRS = (("Reservoir", "Surface area (km2)"),
               (("Lake Kariba", "5580"), ("Lake Volta", "8502"), ("Three Gorges", "1084")))
_RAIN = (("City", "Annual rainfall (mm)"), (("Bergen", "2250"), ("Cardiff", "1150"), ("Mumbai", "2200")))
_VACCINES = (("Vaccine", "Manufacturer", "Storage (°C)"),
             (("Comirnaty", "Pfizer", "-70"), ("Spikevax", "Moderna", "-20"), ("Nuvaxovid", "Novavax", "2")))
_DEATHS = (("Cause", "Deaths", "Share"),
           (("Heart disease", "659,041", "23%"), ("Cancer", "599,601", "21%"), ("Accidents", "173,040", "6%")))
_STUDIES = (("Study", "Published", "Participants"),
            (("ALPHA-1", "2019-03-14", "1,204"), ("BETA", "2020-11-02", "856"), ("CARDIO-X", "2021-06-30", "2,310")))
_PHASES = (("Trial", "Phase", "Participants"), (("A-1", "2", "300"), ("B-2", "3", "1,200"), ("C-3", "3", "900")))
_ENDPOINTS = (("Trial", "Drug", "Primary endpoint met"),
              (("ALPHA-1", "Semaglutide", "Yes"), ("BETA-2", "Tirzepatide", "Yes"), ("ZETA-6", "Lorcaserin", "No")))
_PLATFORMS = (("Vaccine", "Platform", "Efficacy"),
              (("BNT162b2", "mRNA", "95.0"), ("mRNA-1273", "mRNA", "94.1"), ("Ad26.COV2.S", "Viral vector", "66.9")))
_HEART = [{"column": "cause", "op": "=", "value": "Heart disease"}]

VETOES: tuple[Rule, ...] = (
    Rule("tautology", "veto",
         "a check that holds whatever the table says: not equal to a value its column never holds",
         "\"Riverside has about 20% of all doctors\" supported by \"the clinic with the most doctors != '20%'\"",
         _tautology,
         _veto(_SITES, ("The site with the most dropouts is not in the UK.",
                        {"fn": "argmax", "column": "dropouts", "answer_column": "country",
                         "check": {"op": "!=", "against": "value", "value": "Leeds"}}, "veto", "SUPPORTS")),  # a site, never a country
         _veto(_SITES, ("The site with the most dropouts is not in the UK.",
                        {"fn": "argmax", "column": "dropouts", "answer_column": "country",
                         "check": {"op": "!=", "against": "value", "value": "UK"}}, None))),
    Rule("fraction-of-rows", "veto",
         "a claim about a share of the rows checked by a count of every row, which checks none of its condition",
         "\"more than half of the counties have coverage above 75%\" supported by \"the number of rows > 2.5\"",
         _fraction_of_rows,
         _veto(_COUNTIES, ("More than half of the counties have coverage above 75%.",
                           {"fn": "count", "column": "county", "check": {"op": ">", "against": "value", "value": "2.5"}},
                           "veto", "SUPPORTS")),
         _veto(_COUNTIES, ("More than half of the counties have coverage above 75%.",
                           {"filters": [{"column": "coverage", "op": ">", "value": "75"}], "fn": "count",
                            "column": "county", "check": {"op": ">", "against": "value", "value": "2.5"}}, None))),
    Rule("extreme-direction", "veto",
         "an extreme (argmax, min, ...) that runs the other way from the claim's superlative",
         "\"AWARD-1 had the most dropouts relative to its participants\" written as the row with the fewest",
         _direction,
         _veto(_RESERVOIRS, ("Lake Kariba has the largest surface area.",
                             {"fn": "argmin", "column": "surface_area_km2", "answer_column": "reservoir",
                              "check": {"op": "=", "against": "value", "value": "Lake Kariba"}}, "veto", "REFUTES")),
         _veto(_RESERVOIRS, ("Lake Kariba has the largest surface area.",
                             {"fn": "argmax", "column": "surface_area_km2", "answer_column": "reservoir",
                              "check": {"op": "=", "against": "value", "value": "Lake Kariba"}}, None))),
    Rule("equality-for-comparison", "veto",
         "a check of equality on a claim that says more or less than a row or a bound",
         "\"Can the adult dose of cephalexin be higher than 900 mg?\" answered no by programs checking \"= 900\"",
         _comparison,
         _veto(_RAIN, ("Bergen gets more than 2,000 mm of rain.",
                       {"filters": [{"column": "city", "op": "=", "value": "Bergen"}], "fn": "value",
                        "column": "annual_rainfall_mm", "answer_column": "city",
                        "check": {"op": "=", "against": "value", "value": "2000"}}, "veto", "SUPPORTS")),
         _veto(_RAIN, ("Bergen gets more than 2,000 mm of rain.",
                       {"filters": [{"column": "city", "op": "=", "value": "Bergen"}], "fn": "value",
                        "column": "annual_rainfall_mm", "answer_column": "city",
                        "check": {"op": ">", "against": "value", "value": "2000"}}, None))),
    Rule("unnamed-row", "veto",
         "a check against another row that the claim never names (by any of its text cells)",
         "\"… stored colder than …\" decided by Moderna's value against Comirnaty's, a row the claim never names",
         _unnamed_row,
         _veto(_VACCINES, ("Spikevax is stored colder than Nuvaxovid.",
                           {"filters": [{"column": "vaccine", "op": "=", "value": "Spikevax"}], "fn": "value",
                            "column": "storage_c", "answer_column": "vaccine",
                            "check": {"op": "<", "against": "row", "value": "Comirnaty"}}, "veto", "SUPPORTS")),
         _veto(_VACCINES, ("Spikevax is stored colder than Nuvaxovid.",
                           {"filters": [{"column": "vaccine", "op": "=", "value": "Spikevax"}], "fn": "value",
                            "column": "storage_c", "answer_column": "vaccine",
                            "check": {"op": "<", "against": "row", "value": "Nuvaxovid"}}, None))),
    Rule("multiple-as-value", "veto",
         "a check against the claim's multiple itself (\"twice as many\" checked as a count = 2)",
         "\"South has twice as many general beds as East\" written as the number of rows = 2",
         _multiple,
         _veto(_DEATHS, ("Heart disease killed twice as many people as accidents.",
                         {"filters": _HEART, "fn": "count", "column": "cause",
                          "check": {"op": "=", "against": "value", "value": "2"}}, "veto")),
         _veto(_DEATHS, ("Heart disease and cancer killed 2 groups of people.",
                         {"filters": _HEART, "fn": "count", "column": "cause",
                          "check": {"op": "=", "against": "value", "value": "2"}}, None))),
    Rule("count-for-quantity", "veto",
         "a count of rows checked against a number that is an amount of a numeric column",
         "\"Every study published after 2020 enrolled fewer than 1,000 participants\" read as fewer than 1,000 rows",
         _quantity_count,
         _veto(_STUDIES, ("Every study published after 2020 enrolled fewer than 1,000 participants.",
                          {"fn": "count", "column": "study", "answer_column": "study",
                           "check": {"op": "<", "against": "value", "value": "1000"}}, "veto", "REFUTES")),
         _veto(_STUDIES, ("Two studies enrolled fewer than 1,000 participants.",
                          {"fn": "count", "column": "study", "answer_column": "study",
                           "check": {"op": "<", "against": "value", "value": "2"}}, None))),
    Rule("count-of-every-row-for-none", "veto",
         "a count of every row on a claim that no row (or a named row) has something",
         "\"There is no phase 4 trial.\" supported by \"all rows → the number of different Trial != 4\"",
         _negated_count,
         _veto(_PHASES, ("There is no phase 4 trial.",
                         {"fn": "count_distinct", "column": "trial",
                          "check": {"op": "!=", "against": "value", "value": "4"}}, "veto", "SUPPORTS")),
         _veto(_PHASES, ("There is no phase 4 trial.",
                         {"filters": [{"column": "phase", "op": "=", "value": "4"}], "fn": "count", "column": "trial",
                          "check": {"op": "=", "against": "value", "value": "0"}}, None))),
    Rule("every-row-for-named-rows", "veto",
         "an every/only check over every row on a claim that names its rows",
         "\"Semaglutide and Tirzepatide both met their primary endpoint\" refuted by a trial it never named",
         _named_rows,
         _veto(_ENDPOINTS, ("Semaglutide and Tirzepatide both met their primary endpoint.",
                            {"fn": "every", "column": "primary_endpoint_met", "answer_column": "primary_endpoint_met",
                             "check": {"op": "=", "against": "value", "value": "Yes"}}, "veto", "SUPPORTS")),
         _veto(_ENDPOINTS, ("Every trial met its primary endpoint.",
                            {"fn": "every", "column": "primary_endpoint_met", "answer_column": "primary_endpoint_met",
                             "check": {"op": "=", "against": "value", "value": "Yes"}}, None))),
    Rule("unstated-value", "veto",
         "a refutation against a number the claim does not state (or a count beyond the table's rows)",
         "\"Heart disease is the leading cause of death\" refuted by deaths > 700,000, a number it never states",
         _unstated_value,
         _veto(_DEATHS, ("Heart disease is the leading cause of death.",
                         {"filters": _HEART, "fn": "value", "column": "deaths", "answer_column": "cause",
                          "check": {"op": ">", "against": "value", "value": "700000"}}, "veto", "SUPPORTS")),
         _veto(_DEATHS, ("Heart disease caused 700,000 deaths.",
                         {"filters": _HEART, "fn": "value", "column": "deaths", "answer_column": "cause",
                          "check": {"op": "=", "against": "value", "value": "700,000"}}, None))),
    Rule("ignored-category", "veto",
         "a refutation over every row when the claim names a category of rows (\"every mRNA vaccine\")",
         "\"Is it true that every mRNA vaccine had an efficacy above 94%?\" refuted over every vaccine",
         _ignored_category,
         _veto(_PLATFORMS, ("Every mRNA vaccine had an efficacy above 94%.",
                            {"fn": "every", "column": "efficacy", "check": {"op": ">", "value": "94"}}, "veto", "SUPPORTS")),
         _veto(_PLATFORMS, ("Every mRNA vaccine had an efficacy above 94%.",
                            {"filters": [{"column": "platform", "op": "=", "value": "mRNA"}], "fn": "every",
                             "column": "efficacy", "check": {"op": ">", "value": "94"}}, None))),
)


# -- withhold rules: a sampled program that ran but compares badly with the others of its sampling ----------------
# One signature for all (runs, typed, text), one reason per run; each wraps the module function that holds its
# reading, given the runs that still vote.
def _each_voting(runs: Sequence[SampledRun], reasons: Callable[[list[SampledRun]], list[str]],
                 operations_only: bool = True) -> list[str]:
    """One reason per run: ``reasons`` over the runs that still vote ("" for the others). ``operations_only``: only
    programs of fixed operations are read (a SQL query's filters are not); False passes SQL runs too."""
    voting = [i for i, r in enumerate(runs) if r.votes and (r.program is not None or not operations_only)]
    out = [""] * len(runs)
    for i, why in zip(voting, reasons([runs[i] for i in voting])):
        out[i] = why
    return out


def _programs(voting: list[SampledRun]) -> list[Program]:
    return [r.program for r in voting if r.program is not None]


def _counts_of_compared_row(runs: Sequence[SampledRun], typed: TypedTable, text: str) -> list[str]:
    return _each_voting(runs, lambda voting: counts_of_compared_row(_programs(voting), typed, text))


def _other_column_ranked(runs: Sequence[SampledRun], typed: TypedTable, text: str) -> list[str]:
    return _each_voting(runs, lambda voting: other_column_ranked(_programs(voting), typed, text))


def _less_grounded(runs: Sequence[SampledRun], typed: TypedTable, text: str) -> list[str]:
    found_no_number = [r.program for r in runs if r.no_numbers and r.program is not None]
    return _each_voting(runs, lambda voting: less_grounded(
        [(r.program, r.execution) for r in voting if r.program is not None and r.execution is not None],
        found_no_number, typed, text))


def _wrong_answer_kind(runs: Sequence[SampledRun], typed: TypedTable, text: str) -> list[str]:
    return _each_voting(runs, lambda voting: wrong_answer_kind(
        [(r.verdict, r.execution.result_text if r.execution is not None else "") for r in voting], text),
        operations_only=False)  # a query's answer is a number or a name too


def _leaves_out_stated_date(runs: Sequence[SampledRun], typed: TypedTable, text: str) -> list[str]:
    return _each_voting(runs, lambda voting: leaves_out_stated_date(_programs(voting), typed, text))


def _copied_beside_stated(runs: Sequence[SampledRun], typed: TypedTable, text: str) -> list[str]:
    # Only checks the model wrote: a rule's own ("the intervals holding 75 number 0") are the claim's.
    return _each_voting(runs, lambda voting: copied_beside_stated(
        [(r.program, r.execution, r.model_wrote_check) for r in voting
         if r.program is not None and r.execution is not None], text))


def _withhold(table: tuple, *cases: tuple[str, tuple[dict, ...], tuple[int, ...]]) -> tuple[Example, ...]:
    """Examples from (text, the sampled programs as the model wrote them, the places of those the rule holds)."""
    columns, rows = table
    return tuple(Example(text, columns, rows, "withhold" if held else None, programs=programs, held=held)
                 for text, programs, held in cases)


_PLAYERS = (("Player", "TD's", "Yards"),
            (("Ray Ortiz", "15", "900"), ("Anthony Hines", "12", "822"), ("Lee Moss", "14", "700"),
             ("Dan Price", "13", "650"), ("Sam Hale", "4", "300")))
_HINES_ROW = {"filters": [{"column": "player", "op": "=", "value": "Anthony Hines"}], "fn": "count", "column": "player"}
_BEYOND_HINES = {"filters": [{"column": "td_s", "op": ">", "value": "12"}], "fn": "count", "column": "player"}
_WARDS = (("Hospital", "Beds", "Occupancy (%)"),
          (("St. Mary's", "1,120", "87.5%"), ("Royal Infirmary", "980", "91.2%"), ("Queen Anne's", "1015", "94.6%"),
           ("Westfield Clinic", "220", "69.9%")))
_SECOND = {"filters": [], "fn": "argmax", "answer_column": "hospital", "options": {"nth": 2}}
_STADIUMS = (("Stadium", "City", "Capacity", "Opened"),
             (("Provident Stadium", "Barrington", "27,000", "1999"), ("Ayr Park", "Farmington", "8,500", "2004"),
              ("Glebe Oval", "Rochester", "12,250", "1987"), ("Mill Field", "Rochester", "3,100", "2011"),
              ("Quay Arena", "Dover", "15,000", "1999")))
_STADIUM_COUNT = {"filters": [], "fn": "count", "column": "stadium", "answer_column": "stadium"}
_SMALLEST = {"filters": [], "fn": "argmin", "column": "capacity", "answer_column": "stadium"}
_APPROVALS = (("Drug", "Approved", "Agency", "Indication"),
              (("Lecanemab", "6 Jan 2023", "FDA", "Alzheimer disease"),
               ("Donanemab", "2 Jul 2024", "FDA", "Alzheimer disease"),
               ("Tirzepatide", "13 May 2022", "FDA", "Type 2 diabetes"),
               ("Semaglutide", "5 Dec 2017", "FDA", "Type 2 diabetes")))
_FDA = {"column": "agency", "op": "=", "value": "FDA"}
_EVERY_ALZHEIMER = {"filters": [_FDA], "fn": "every", "column": "indication", "answer_column": "drug",
                    "check": {"op": "contains", "against": "value", "value": "Alzheimer disease"}}
_AFTER_2022 = {**_EVERY_ALZHEIMER, "filters": [_FDA, {"column": "approved", "op": ">", "value": "2022"}]}
_MEASLES = (("Province", "Year", "Number of cases"),
            (("Quebec", "2007", "94"), ("Ontario", "2008", "53"), ("British Columbia", "2010", "82")))


def _ontario_2008(checked: str) -> dict:
    return {"filters": [{"column": "province", "op": "=", "value": "Ontario"},
                        {"column": "year", "op": "=", "value": "2008"}],
            "fn": "value", "column": "number_of_cases", "check": {"op": "=", "value": checked}}


# The order is data, and it matters: a run one rule holds no longer votes, so the rules after it do not see it.
# Questions: the counts of a compared row and the rankings of another column go before grounding, so that grounding
# ranks what is left; grounding goes before the kind of answer: "How many nurses work in Central?", whose Central
# cell holds the formula text "=1000+2000", had its programs that read Central's row held for computing no number,
# and the sum over every row (which ignores "Central") answered, until grounding held that sum first (found as a
# new user). Claims: the stated date first, then the copied check, which looks for a program checking the claim's
# own number among those still voting (the order they had as code paths).
WITHHOLDS: tuple[Rule, ...] = (
    Rule("count-of-compared-row", "withhold",
         "a count of the row a \"how many … more … than <row>\" question compares with (or of every other row), "
         "beside a program that compares with that row's value",
         "\"how many players scored a greater number of touchdowns than anthony hines?\" counted Hines's own row "
         "while one sample compared TD's with his 12 (WTQ training, nt-502)",
         _counts_of_compared_row,
         _withhold(_PLAYERS, ("how many players scored a greater number of touchdowns than anthony hines?",
                              (_HINES_ROW, _BEYOND_HINES, _HINES_ROW), (0, 2))),
         _withhold(_PLAYERS, ("how many players scored a greater number of touchdowns than anthony hines?",
                              (_HINES_ROW, _HINES_ROW), ())),  # nothing better to vote
         applies_to="question"),
    Rule("other-column-ranked", "withhold",
         "a program that ranks rows by another column than the one a plain superlative question names, or ranks none",
         "\"Which hospital has the second-highest occupancy?\" read as the second largest Avg. stay, and \"the "
         "third-highest PM2.5 level\" answered with every city by \"PM2.5 > 0 → City\" (found as a new user)",
         _other_column_ranked,
         _withhold(_WARDS, ("Which hospital has the second-highest occupancy?",
                            ({**_SECOND, "column": "beds"}, {**_SECOND, "column": "occupancy"},
                             {"filters": [{"column": "occupancy", "op": ">", "value": "0"}], "fn": "value",
                              "column": "hospital", "answer_column": "hospital"}), (0, 2))),
         _withhold(_WARDS, ("Which hospital is the second largest?",  # it names no column: every ranking may answer
                            ({**_SECOND, "column": "beds"}, {**_SECOND, "column": "occupancy"}), ())),
         applies_to="question"),
    Rule("less-grounded", "withhold",
         "a question's program that reads less of it (the values it states, the column it names) than the best "
         "of its sampling (a program that found no number where the question points counts among them)",
         "\"How many nurses work in Central?\" answered by the one sum over every row, which ignores \"Central\", "
         "once the programs reading Central's formula cell were held (found as a new user)",
         _less_grounded,
         _withhold(_STADIUMS, ("How many stadiums opened in 1999?",
                               (_STADIUM_COUNT, {**_STADIUM_COUNT, "filters": [
                                   {"column": "opened", "op": "=", "value": "1999"}]}, _STADIUM_COUNT), (0, 2))),
         _withhold(_STADIUMS, ("Which stadium is the smallest?",  # a filter every row meets invents nothing
                               (_SMALLEST, {**_SMALLEST, "filters": [{"column": "capacity", "op": ">", "value": "0"}]}),
                               ())),
         applies_to="question"),
    Rule("wrong-answer-kind", "withhold",
         "an answer that is not the kind the question asks for (a number for \"how many\", a name for \"which\" or "
         "\"who\"), beside one that is",
         "\"Which stadium has the most capacity?\" answered with the largest capacity by three programs of five; "
         "replaying WTQ training's logged programs (dev, first 40) with the question-form rules: 0.350 -> 0.450",
         _wrong_answer_kind,
         _withhold(_STADIUMS, ("Which stadium has the most capacity?",
                               ({"filters": [], "fn": "max", "column": "capacity", "answer_column": "capacity"},
                                {"filters": [], "fn": "argmax", "column": "capacity", "answer_column": "stadium"}),
                               (0,))),
         _withhold(_STADIUMS, ("Which stadium has the most capacity?",  # none names one: all vote as before
                               ({"filters": [], "fn": "max", "column": "capacity", "answer_column": "capacity"},) * 2,
                               ())),
         applies_to="question"),
    Rule("leaves-out-stated-date", "withhold",
         "a claim program that reads no date where another of its sampling keeps the rows of a date or year the "
         "claim states",
         "\"Is it true that every drug the FDA approved after 2022 treats Alzheimer disease?\" refuted by four "
         "programs over every FDA drug, beside one that kept the approvals after 2022 (found as a new user)",
         _leaves_out_stated_date,
         _withhold(_APPROVALS, ("Is it true that every drug the FDA approved after 2022 treats Alzheimer disease?",
                                (_EVERY_ALZHEIMER, _AFTER_2022, _EVERY_ALZHEIMER), (0, 2))),
         _withhold(_APPROVALS, ("Is it true that every drug the FDA approved after 2022 treats Alzheimer disease?",
                                (_EVERY_ALZHEIMER, _EVERY_ALZHEIMER), ()))),  # none keeps the date
    Rule("copied-beside-stated", "withhold",
         "a check \"= v\" of the very value the program computed, a number the claim does not state, beside a "
         "program that checks a number the claim states",
         "\"Ontario had 530 cases of measles in 2008\" supported by \"= 53\", Ontario's cell copied into the "
         "check, while the other programs had not run (found by CI)",
         _copied_beside_stated,
         _withhold(_MEASLES, ("Ontario had 530 cases of measles in 2008.",
                              (_ontario_2008("53"), _ontario_2008("530"), _ontario_2008("53")), (0, 2))),
         _withhold(_MEASLES, ("Ontario had 530 cases of measles in 2008.",  # the claim's 530 checked nowhere
                              (_ontario_2008("53"),), ()))),
)


# -- annotate rules: a run's reason, citations and steps said more fully, its result unchanged ----------------------
# One signature for all (program, execution, typed, text), as a veto's, returning a Note or None; each wraps the
# module function that holds its reading. A rule returns a Note (reason phrases, cells, steps), never a program or an
# execution, and :func:`annotate` merges it into the run, so no annotate rule can change what a program computed.
def _interval_in_reason(program: Program, execution: Execution, typed: TypedTable, text: str) -> Note | None:
    return interval_note(program, typed, execution.decisive_rows)


def _most_demanding_row(program: Program, execution: Execution, typed: TypedTable, text: str) -> Note | None:
    return most_demanding_note(program, typed, text)


def _compared_row_cited(program: Program, execution: Execution, typed: TypedTable, text: str) -> Note | None:
    return compared_row_note(program, typed, text)


def _shared_row_cited(program: Program, execution: Execution, typed: TypedTable, text: str) -> Note | None:
    return shared_row_note(program, typed, text)


def _annotate(table: tuple, *cases: tuple[str, dict, Note | None]) -> tuple[Example, ...]:
    """Examples from (text, the program as it reaches the rule, the note it adds or None)."""
    columns, rows = table
    return tuple(Example(text, columns, rows, "annotate" if note else None, program, note=note)
                 for text, program, note in cases)


# The table readers see: the interval column's bounds written out as columns (tools._table_shape adds them)
_CI = (("Subgroup", "Hazard ratio (95% CI)", "95% CI lower bound", "95% CI upper bound"),
       (("Overall", "0.81 (0.65–1.01)", "0.65", "1.01"), ("Women", "0.72 (0.52–0.99)", "0.52", "0.99"),
        ("Men", "0.90 (0.67–1.21)", "0.67", "1.21")))


def _holds_one(row: str) -> dict:
    """A count of ``row``'s intervals holding 1, as the rewrite rule interval-inclusion writes it (1 with the bounds'
    two decimals)."""
    return {"filters": [{"column": "subgroup", "op": "=", "value": row},
                        {"column": "c3_95_ci_lower_bound", "op": "<=", "value": "1.00"},
                        {"column": "c4_95_ci_upper_bound", "op": ">=", "value": "1.00"}],
            "fn": "count", "column": "subgroup", "check": {"op": ">=", "against": "value", "value": "1"}}


_FOLLOW_UP = (("Trial", "Drug", "Participants", "Median follow-up (months)"),
              (("ALPHA-1", "Rivaroxaban", "14264", "23.1"), ("BETA-2", "Apixaban", "18201", "21.8"),
               ("GAMMA-3", "Edoxaban", "21105", "33.6"), ("DELTA-4", "Dabigatran", "502", "6.0")))


def _gamma_against(row: str) -> dict:
    """GAMMA-3's median follow-up compared with ``row``'s, as tools._claim_compare.compared_rows writes it."""
    return {"filters": [{"column": "trial", "op": "=", "value": "GAMMA-3"}], "fn": "value",
            "column": "median_follow_up_months", "answer_column": "trial",
            "check": {"op": ">", "against": "row", "value": row}}


_SCHOOLS = (("Name", "Town", "Intake", "Rank"),
            (("St Mary's", "Ayr", "1,200", "3"), ("Sacred Heart", "Troon", "950", "1"),
             ("Hillside", "Ayr", "1,010", "2"), ("Kirkview", "Irvine", "640", "5"), ("Riverbank", "Troon", "980", "4")))
_MEDALS = (("Nation", "Gold", "Silver"),
           (("Hungary", "3", "2"), ("Bulgaria", "3", "5"), ("Kenya", "1", "4"), ("Japan", "2", "0")))


def _intake_above(value: str) -> dict:
    return {"filters": [{"column": "intake", "op": ">", "value": value}], "fn": "count", "column": "name"}


def _gold_as(value: str) -> dict:
    return {"filters": [{"column": "gold", "op": "=", "value": value},
                        {"column": "nation", "op": "!=", "value": "Hungary"}],
            "fn": "value", "column": "nation", "answer_column": "nation"}


_FOLLOW_UP_NOTE = ("ALPHA-1's is the largest of ALPHA-1's 23.1 and BETA-2's 21.8, so the claim holds against all of "
                   "them exactly when it holds against it")
# The order is data: the notes are said, and their cells cited, in it (the order they had as code paths).
ANNOTATES: tuple[Rule, ...] = (
    Rule("interval-in-reason", "annotate",
         "a count of the named row's intervals holding a number (interval-inclusion's program): each interval and "
         "whether it holds the number",
         "a claim that a subgroup's 95% CI included 1, refuted with the reason \"The number of rows is 0; the claim "
         "needs it >= 1\", which says nothing about the interval it checked (found as a new user)",
         _interval_in_reason,
         _annotate(_CI, ("The confidence interval for women included 1.", _holds_one("Women"),
                         Note(reason=("Women's 95% CI is 0.52 to 0.99, which does not include 1",))),
                   ("The 95% CI for men does not include 1.", {**_holds_one("Men"), "check": {"op": "=", "value": "0"}},
                    Note(reason=("Men's 95% CI is 0.67 to 1.21, which includes 1",)))),
         _annotate(_CI, ("Women had fewer than 2 subgroups.",  # a count, but of no interval
                         {"filters": [{"column": "subgroup", "op": "=", "value": "Women"}], "fn": "count",
                          "column": "subgroup", "check": {"op": "<", "against": "value", "value": "2"}}, None))),
    Rule("most-demanding-row", "annotate",
         "a comparison with several rows (\"more … than A and B\") written as one with the most demanding of them: "
         "why that row stands for all, citing each listed row's name and value",
         "\"GAMMA-3 had a longer median follow-up than ALPHA-1 and BETA-2\" over a trials XLSX, where the sampled "
         "programs compared with ALPHA-1 alone, right by chance (found as a new user)",
         _most_demanding_row,
         _annotate(_FOLLOW_UP, ("GAMMA-3 had a longer median follow-up than ALPHA-1 and BETA-2.",
                                _gamma_against("ALPHA-1"),
                                Note(reason=(_FOLLOW_UP_NOTE,), cells=((1, 1), (1, 4), (2, 1), (2, 4))))),
         _annotate(_FOLLOW_UP, ("GAMMA-3 had a longer median follow-up than ALPHA-1 and BETA-2.",
                                _gamma_against("BETA-2"), None),  # the less demanding row: the note would not hold
                   ("GAMMA-3 had a longer median follow-up than ALPHA-1.", _gamma_against("ALPHA-1"), None))),
    Rule("compared-row-cited", "annotate",
         "a filter's bound that is the value of the row a question compares with (\"more … than <row>\"): that "
         "row's cell cited, and the reason says whose value it is",
         "\"How many hospitals have more beds than Riverside General?\" answered 2, citing the two hospitals' beds "
         "but not the 310 it compared with (found as a new user)",
         _compared_row_cited,
         _annotate(_SCHOOLS, ("how many schools have a larger intake than sacred heart?", _intake_above("950"),
                              Note(reason=("Intake > 950, Sacred Heart's Intake",), cells=((2, 3),),
                                   steps=("the bound is Sacred Heart's value (R2)",)))),
         _annotate(_SCHOOLS, ("how many schools have a larger intake than sacred heart?", _intake_above("1000"),
                              None)),  # a bound of the program's own
         applies_to="question"),
    Rule("shared-row-cited", "annotate",
         "a filter on the value a question's named row shares (\"the same … as <row>\"): that row's cell cited, "
         "and the reason says whose value it is",
         "\"which nation won the same number of gold medals as hungary?\", read as the other rows holding "
         "Hungary's Gold (WTQ training, with the rewrite rule same-as-row): Hungary's cell cited beside theirs",
         _shared_row_cited,
         _annotate(_MEDALS, ("which nation won the same number of gold medals as hungary?", _gold_as("3"),
                             Note(reason=("Gold = 3, as for Hungary",), cells=((1, 2),),
                                  steps=("the value is the one Hungary has (R1)",)))),
         _annotate(_MEDALS, ("which nation won the same number of gold medals as hungary?", _gold_as("2"), None)),
         applies_to="question"),
)


RULES: tuple[Rule, ...] = (
    Rule("significance", "settle",
         "a claim that one named row's effect was (not) statistically significant; that row's p-value cell",
         "\"Drug B's effect was statistically significant\" over a trial table with a p-value column",
         significance_check,
         _on(_TRIAL, ("Drug A's effect was statistically significant", "SUPPORTS"),
             ("Is it true that Drug B's effect was statistically significant?", "REFUTES")),
         _on(_TRIAL, ("Drug A significantly reduced deaths", None), ("The treatment was significant", None))),
    Rule("trend-every-period", "settle",
         "a claim that one named column rose or fell every period (or from one period to another); its values in "
         "time order",
         "\"Revenue grew every month in 2024\", supported by a program over a monthly table where it fell in February",
         trend_check,
         _on(_SALES, ("Revenue grew every month in 2024", "REFUTES"), ("Costs increased every month", "SUPPORTS")),
         _on(_SALES, ("Revenue grew in March", None), ("Revenue and costs grew every month", None))),
    Rule("dose-trend", "settle",
         "a claim that one row's value rose or fell with dose; its dose arms' values (percentages before counts) in "
         "dose order",
         "\"Insomnia increased with dose\" over an adverse-event table with one column per dose arm",
         dose_trend_check,
         _on(_DOSES, ("Headache increased with dose.", "SUPPORTS"), ("Insomnia increased with dose.", "REFUTES")),
         _on(_DOSES, ("Headache did not increase with dose.", None), ("Headache increased.", None))),
    Rule("value-in-range", "settle",
         "a claim that one row's value is within, above or below its own reference range; the value and range cells",
         "\"Glucose is within its reference range\" over a lab report with a reference-range column",
         range_check,
         _on(_LABS, ("Glucose is within its reference range.", "SUPPORTS"),
             ("Sodium is outside its normal range.", "REFUTES"))
         + _on(_LAB_REPORT, ("Potassium is above the upper limit of its reference range.", "SUPPORTS"),
               ("Creatinine is not within the reference range", "SUPPORTS"),
               ("Hemoglobin is below its reference range", "SUPPORTS"), ("Hemoglobin isn't in the normal range", "SUPPORTS"),
               ("Potassium is below the upper limit of its reference range.", "REFUTES"),
               ("Glucose is above its reference range.", "REFUTES")),
         _on(_LABS, ("Glucose was high.", None), ("Results are within their reference ranges.", None))),
    Rule("ratio-change", "settle",
         "a claim that a treatment changed a risk, hazard or odds by a percentage; the named (or overall) row's ratio",
         "\"The treatment reduced the risk of events by 26% overall\", supported by programs that compared event counts",
         ratio_change_check,
         _on(_SUBGROUPS, ("The treatment reduced the risk of events by 26% overall.", "SUPPORTS"),
             ("The treatment reduced the risk of events by 30%.", "REFUTES")),
         _on(_SUBGROUPS, ("The treatment did not reduce the risk by 26%.", None),
             ("The treatment reduced the risk of events.", None))),
    Rule("association", "settle",
         "a claim that rows with more (or less) of one column have more (or less) of another; the rank correlation "
         "of the two columns",
         "\"Is it true that hospitals with more beds had lower compliance?\", answered NOT ENOUGH INFO by the judge",
         association_check,
         _on(_HOSPITALS, ("Hospitals with more beds had lower compliance", "SUPPORTS"),
             ("Hospitals with more beds had higher hand hygiene compliance.", "REFUTES")),
         _on(_HOSPITALS, ("Riverside has more beds than Lakeview.", None),
             ("Hospitals with more beds did not have lower compliance.", None))),
    Rule("record-field", "settle",
         "a claim that gives a field of a one-record (field, value) table a value the record does not hold",
         "\"The book was written by Nelson Thornes\" over a one-book table whose Author field says otherwise",
         record_check,
         _on(_BOOK, ("Field Guide to Coastal Birds was written by Harbour Press.", "REFUTES"),
             ("Tom Reed wrote the field guide.", "REFUTES")),
         _on(_BOOK, ("Field Guide to Coastal Birds was written by Maria Ostrova.", None),
             ("The guide has 312 pages.", None))),
    Rule("range-duration", "settle",
         "a claim of how long one named row's date range lasts; the days between the range's two dates",
         "\"The fixture window is over 3 months\" over a calendar whose cell holds a date range",
         range_duration_check,
         _on(_CALENDAR, ("The Fixture Window time frame is over 3 months.", "REFUTES"),
             ("The fixture window lasts more than 10 weeks.", "SUPPORTS")),
         _on(_CALENDAR, ("The fixture window opens on 5 October.", None), ("Entries were open for 11 days.", None))),
) + VETOES + WITHHOLDS + ANNOTATES


def _check_registry(rules: Iterable[Rule]) -> dict[str, Rule]:
    """Names are unique, each stage's functions take its parameters, every rule has an example that fires, a
    withhold rule's examples say which of their programs it holds, and an annotate rule's what it adds."""
    registry: dict[str, Rule] = {}
    for rule in rules:
        if rule.name in registry:
            raise ValueError(f"rule {rule.name!r} is declared twice")
        params = tuple(inspect.signature(rule.fn).parameters)
        if params != STAGE_PARAMETERS[rule.stage]:
            raise TypeError(f"rule {rule.name!r}: a {rule.stage} rule takes {STAGE_PARAMETERS[rule.stage]}, "
                            f"not {params}")
        if not any(e.expected is not None for e in rule.examples):
            raise ValueError(f"rule {rule.name!r} has no example that it decides")
        if rule.stage not in ("withhold", "annotate") and rule.applies_to != "claim":
            raise ValueError(f"rule {rule.name!r}: only a withhold or an annotate rule reads questions")
        if rule.stage == "withhold" and any((e.expected == "withhold") != bool(e.held) or not e.programs
                                            or not set(e.held) <= set(range(len(e.programs)))
                                            for e in rule.examples + rule.counter_examples):
            raise ValueError(f"rule {rule.name!r}: a withhold example holds some of its programs, says which, "
                             "and is \"withhold\" exactly then")
        if rule.stage == "annotate" and any((e.expected == "annotate") != bool(e.note) or e.program is None
                                            for e in rule.examples + rule.counter_examples):
            raise ValueError(f"rule {rule.name!r}: an annotate example has a program, and is \"annotate\" exactly "
                             "when it says what the rule adds (a note with something in it)")
        registry[rule.name] = rule
    return registry


REGISTRY: dict[str, Rule] = _check_registry(RULES)


# -- rewrite rules: a sampled program read as its text states or asks --------------------------------------------------
# The program readers of tools._program_readers, one record each: ``(program, typed, text) -> program``, returning the
# program unchanged when the form it reads is absent. tools._program_readers keeps the order they apply in (the
# shared readers first, then the question's or the claim's own); a record declares ``after`` the readers whose output
# it reads, and the registry checks that order against it when this module loads. An example's ``program`` is the
# program as it reaches the reader: the model's, as the readers before it left it.
Applies = Literal["claim", "question", "both"]
# the text's parameter is named after what the reader reads in it (text, question, claim or message)
REWRITE_PARAMETERS = ("program", "typed")


@dataclass(frozen=True)
class RewriteExample:
    """A message over a small table, the program that reaches the reader, and ``expected``: the fields of the program
    that the reader sets, compared after it ran; ``None``: it must leave the program as it is. The table is the one
    the readers see, so a range column's bound columns are written out (tools._table_shape adds them)."""

    text: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    program: dict
    expected: dict | None

    def table(self) -> Table:
        return Table(name="example", title="", columns=list(self.columns), rows=[list(r) for r in self.rows])


@dataclass(frozen=True)
class Rewrite:
    name: str
    applies_to: Applies  # as tools._program_readers' two lists apply it, checked when this module loads
    reads: str  # what of the message and the program it reads, in a line
    came_from: str  # the case it was written for
    fn: Reader
    examples: tuple[RewriteExample, ...]  # with the counter-examples: those whose ``expected`` is None
    after: tuple[str, ...] = ()  # the rewrites whose output it reads: they must apply before it


def _rewrite(name: str, applies_to: Applies, reads: str, came_from: str, examples: tuple[RewriteExample, ...],
             after: tuple[str, ...] = ()) -> Rewrite:
    """The record of the reader ``tools._program_readers`` applies under ``name``."""
    if name not in REWRITES:
        raise ValueError(f"rewrite rule {name!r} is no program reader of tools._program_readers")
    return Rewrite(name, applies_to, reads, came_from, REWRITES[name], examples, after)


def _rw(table: tuple, program: dict, *cases: tuple) -> tuple[RewriteExample, ...]:
    """Examples of ``program`` over ``table`` from (text, expected), or (text, expected, another program)."""
    columns, rows = table
    return tuple(RewriteExample(text, columns, rows, other[0] if other else program, expected)
                 for text, expected, *other in cases)


def _field(program: Program, name: str) -> object:
    """One field of ``program`` as the examples write it (a record as its non-default fields)."""
    value = getattr(program, name)
    if isinstance(value, list):
        return [v.model_dump(exclude_defaults=True) if isinstance(v, BaseModel) else v for v in value]
    return value.model_dump(exclude_defaults=True) if isinstance(value, BaseModel) else value


def rewritten_fields(rewrite: Rewrite, example: RewriteExample) -> dict | None:
    """What ``rewrite`` makes of its example: None when it leaves the program as it is, else the fields the example
    names (every field it changed, for an example that expects none)."""
    program = Program.model_validate(example.program)
    out = rewrite.fn(program, TypedTable.build(example.table()), example.text)
    if out == program:
        return None
    names = example.expected or [n for n in Program.model_fields if getattr(out, n) != getattr(program, n)]
    return {n: _field(out, n) for n in names}


# The small tables the rewrite examples share. Each example is lifted from its reader's own tests (the same text,
# table and program, the table as the reader saw it there); a counter-example is lifted where the tests hold one on
# the same table, else it keeps the example's program under a text without the form the reader reads.
_RW_DRUG_CLASS = (("Drug", "Class", "Adult dose (mg)", "Half-life (h)", "Adult dose (mg) lower bound",
                   "Adult dose (mg) upper bound"),
                  (("Amoxicillin", "Penicillin", "500", "1.0", "500", "500"),
                   ("Azithromycin", "Macrolide", "250 to 500", "68", "250", "500"),
                   ("Ciprofloxacin", "Fluoroquinolone", "250-750", "4", "250", "750"),
                   ("Doxycycline", "Tetracycline", "100", "18", "100", "100"),
                   ("Cephalexin", "Cephalosporin", "250-1000", "0.9", "250", "1000")))
_RW_HOSPITAL_REGION = (("Hospital", "Region", "Beds"),
                       (("St. Luke's", "North", "420"), ("Mercy General", "South", "610"),
                        ("Harbor View", "North", "300"), ("Lakeside Medical", "South", "380"),
                        ("Northgate", "North", "510")))
_RW_MODEL_PARAMS_M = (("Model", "Params (M)", "SST-2 Acc.", "MNLI-m Acc.", "Avg."),
                      (("BERT", "110", "93.5", "84.6", "83.1"), ("BERT-large", "340", "94.9", "86.7", "84.6"),
                       ("DistilBERT", "66", "91.3", "82.2", "81.4"),
                       ("Ours (w/o distill.)", "66", "92.0 ± 0.3", "83.1 ± 0.2", "82.0"),
                       ("Ours", "66", "**93.1 ± 0.2**", "**84.9 ± 0.3**", "**83.2**")))
_RW_VACCINE_APPROVED_IN_EU = (("Vaccine", "Approved in EU"),
                              (("Comirnaty", "✓"), ("Covaxin", "✗"), ("Spikevax", "✓"), ("Sputnik V", "✗")))
_RW_STUDY_PUBLISHED = (("Study", "Published", "Participants", "P value"),
                       (("ALPHA-1", "2019-03-14", "1,204", "<0.001"), ("BETA", "2020-11-02", "856", "0.54"),
                        ("CARDIO-X", "2021-06-30", "2,310", "0.005"), ("DELTA-HF", "2018-01-20", "640", "0.65"),
                        ("ZETA", "2023-02-08", "512", "0.38")))
_RW_EVENT_VACCINE_N_1_20 = (("Event", "Vaccine (n=1,204)", "Placebo (n=1,198)", "Relative risk"),
                            (("Injection-site pain", "612 (50.8%)", "98 (8.2%)", "6.2"),
                             ("Fatigue", "301 (25.0%)", "241 (20.1%)", "1.24"),
                             ("Headache", "265 (22.0%)", "230 (19.2%)", "1.15"),
                             ("Serious adverse events", "9 (0.7%)", "8 (0.7%)", "1.12")))
_RW_VACCINE_DOSES = (("Vaccine", "Doses", "Efficacy (%)"),
                     (("BNT162b2", "2", "95.0"), ("mRNA-1273", "2", "94.1"), ("Ad26.COV2.S", "1", "66.9"),
                      ("ChAdOx1", "2", "70.4"), ("CoronaVac", "2", "50.7")))
_RW_TRIAL_DATE = (("Trial", "Date", "Series", "Celebrity"),
                  (("1", "13 November 2006", "Jungle", "Jan"), ("2", "14 November 2006", "Jungle", "David"),
                   ("3", "30 November 2006", "Desert", "Jan"), ("4", "1 December 2006", "Jungle", "Jan"),
                   ("5", "2 December 2007", "Arctic", "Scott")))
_RW_OUTBREAK_SOURCE = (("Outbreak", "Source", "Deaths"),
                       (("Salmonella Newport", "Red onions", "0"), ("E. coli O157", "Romaine lettuce", "0"),
                        ("Listeria", "Enoki mushrooms", "4"), ("Salmonella Oranienburg", "Onions", "0"),
                        ("Cyclospora", "Iceberg lettuce", "1")))
_RW_COUNTRY_2019 = (("Country", "2019", "2021", "Income group"),
                    (("Brazil", "87", "73", "Upper middle"), ("India", "95", "89", "Lower middle"),
                     ("Nigeria", "59", "59", "Lower middle"), ("Philippines", "67", "57", "Lower middle"),
                     ("Germany", "97", "97", "High")))
_RW_MONTH_UNITS_SOLD = (("Month", "Units sold", "Year"),
                        (("Feb 2024", "905", "2024"), ("Mar 2024", "1034", "2024"), ("Apr 2024", "987", "2024"),
                         ("May 2024", "1120", "2024"), ("Jun 2024", "1201", "2024")))
_RW_MONTH_REVENUE = (("Month", "Revenue"),
                     (("2024-01", "$1,200,000"), ("2024-02", "$1,150,000"), ("2024-03", "$1,380,000"),
                      ("2024-04", "$1,420,000"), ("2024-05", "$1,510,000"), ("2024-06", "$1,490,000")))
_RW_SUBGROUP_PATIENTS = (("Subgroup", "Patients", "Events (treatment)", "Events (control)", "Hazard ratio (95% CI)",
                          "P value"),
                         (("Overall", "4744", "386", "502", "0.74 (0.65–0.85)", "<0.001"),
                          ("Women", "1109", "79", "101", "0.77 (0.57–1.03)", "0.08"),
                          ("Men", "3635", "307", "401", "0.73 (0.63–0.85)", "<0.001")))
_RW_COUNTRY_YEAR = (("Country", "Year", "TB incidence"),
                    (("Kenya", "2019", "267"), ("Kenya", "2020", "259"), ("Ghana", "2019", "143"),
                     ("Ghana", "2020", "139"), ("Total", "", "808")))
_RW_COUNTRY_YEAR_2 = (("Country", "Year", "TB incidence"),
                      (("Uganda", "2019", "200"), ("Uganda", "2020", "196"), ("Uganda", "2021", "199"),
                       ("Ghana", "2019", "143")))
_RW_TITLE_PEAK_POSITION = (("Title", "Peak position", "Weeks"),
                           (("Stand Up", "12", "4"), ("Wide Open Road", "3", "9"), ("Holy Water", "40", "2")))
_RW_STADIUM_CITY = (("Stadium", "City", "Capacity", "Opened"),
                    (("Provident Stadium", "Barrington", "27,000", "1999"), ("Ayr Park", "Farmington", "8,500", "2004"),
                     ("Glebe Oval", "Rochester", "12,250", "1987"), ("Mill Field", "Rochester", "3,100", "2011"),
                     ("Quay Arena", "Dover", "15,000", "1999"), ("Total", "", "65,850", "")))
_RW_TRIAL_EFFICACY = (("Trial", "Efficacy (%)"), (("ARIES-2", "71.5"), ("DORADO", "88.1")))
_RW_NAME_TOWN = (("Name", "Town", "Intake", "Rank"),
                 (("St Mary's", "Ayr", "1,200", "3"), ("Sacred Heart", "Troon", "950", "1"),
                  ("Hillside", "Ayr", "1,010", "2"), ("Kirkview", "Irvine", "640", "5"),
                  ("Riverbank", "Troon", "980", "4"), ("Sílex", "Irvine", "1,100", "6")))
_RW_NATION_GOLD = (("Nation", "Gold"), (("Hungary", "3"), ("Bulgaria", "3"), ("Kenya", "1")))
_RW_WARD_BEDS = (("Ward", "Beds", "DDD Q1", "DDD Q2"),
                 (("Cardiology", "32", "61.2", "58.4"), ("Oncology", "28", "94.7", "101.3"),
                  ("ICU", "16", "142.5", "131.0"), ("Surgery", "40", "77.0", "69.8")))
_RW_TRIAL_DRUG = (("Trial", "Drug", "Participants"),
                  (("ARIES-2", "Velmorin", "1240"), ("BOREAS", "Calditrex", "310"), ("CYGNUS-1", "Velmorin", "205"),
                   ("DORADO", "Nexapril", "2875")))
_RW_ADVERSE_EVENT_PLACEBO_N_412 = (("Adverse event", "Placebo (n=412)", "Drug 10 mg (n=409)", "Drug 20 mg (n=415)"),
                                   (("Headache", "31 (7.5%)", "45 (11.0%)", "58 (14.0%)"),
                                    ("Nausea", "12 (2.9%)", "27 (6.6%)", "41 (9.9%)"),
                                    ("Dizziness", "9 (2.2%)", "14 (3.4%)", "22 (5.3%)"),
                                    ("Fatigue", "20 (4.9%)", "19 (4.6%)", "25 (6.0%)"),
                                    ("Insomnia", "6 (1.5%)", "11 (2.7%)", "9 (2.2%)"),
                                    ("Any serious adverse event", "8 (1.9%)", "10 (2.4%)", "13 (3.1%)")))
_RW_SEASON_HALF = (("Season", "Half", "Wins", "Losses"),
                   (("1980", "", "93", "70"), ("1981", "first", "25", "22"), ("1981", "second", "34", "25"),
                    ("1982", "", "80", "82")))
_RW_CLINIC_REGION = (("Clinic", "Region", "Doctors", "Beds"),
                     (("St Mary", "North", "42", "310"), ("Riverside", "East", "17", "95"),
                      ("Hillcrest", "West", "23", "140"), ("Oakwood", "South", "31", "205"),
                      ("Lakeside", "North", "12", "60")))
_RW_FOOD_CALORIES_KCAL_ = (("Food", "Calories (kcal/100g)", "Sugar (g)", "Category"),
                           (("Apple", "52", "10.4", "Fruit"), ("Banana", "89", "12.2", "Fruit"),
                            ("Chicken breast", "165", "0.0", "Meat"), ("Salmon", "208", "0.0", "Fish"),
                            ("Almonds", "579", "4.4", "Nut"), ("Cheddar", "403", "0.5", "Dairy"),
                            ("Broccoli", "34", "1.7", "Vegetable"), ("Walnuts", "654", "2.6", "Nut"),
                            ("Pear", "57", "9.8", "Fruit")))
_RW_HOSPITAL_BEDS = (("Hospital", "Beds", "Stroke unit"),
                     (("St. Anne's", "420", "Yes"), ("Riverside", "310", "No"), ("Royal Infirmary", "640", "Yes")))
_RW_TRIAL_DRUG_2 = (("trial", "drug", "participants", "responders"),
                    (("ALPHA", "Drug A", "1200", "540"), ("BRAVO", "Drug B", "450", "270"),
                     ("CHARLIE", "Drug A", "800", "296"), ("DELTA", "Drug C", "300", "87"),
                     ("ECHO", "Drug B", "950", "513")))
_RW_TRIAL_DRUG_3 = (("Trial", "Drug", "Participants", "Duration (weeks)", "Dropouts", "Dropouts per 100", "Year"),
                    (("SURPASS-1", "Tirzepatide", "478", "40", "31", "6.5", "2021"),
                     ("AWARD-1", "Dulaglutide", "978", "52", "64", "6.5", "2014"),
                     ("LEAD-3", "Liraglutide", "746", "52", "58", "7.8", "2009"),
                     ("DURATION-1", "Exenatide", "295", "30", "19", "6.4", "2008"),
                     ("EMPTY-0", "Placebo", "0", "12", "0", "0", "2001")))
_RW_COUNTRY_DISEASE = (("Country", "Disease", "Cases", "Deaths", "Population"),
                       (("Chad", "Measles", "8342", "61", "17,700,000"),
                        ("Nigeria", "Diphtheria", "14210", "596", "223,800,000"),
                        ("Pakistan", "Measles", "12003", "38", "240,500,000")))
_RW_WARD_BEDS_2 = (("Ward", "Beds", "DDD Q1", "Audit passed"),
                   (("Cardiology", "32", "61.2", "Yes"), ("Oncology", "28", "94.7", "No"),
                    ("ICU", "16", "142.5", "Yes"), ("Paediatrics", "24", "38.9", "Yes"),
                    ("Surgery", "40", "77.0", "No"), ("Geriatrics", "36", "55.1", "Yes"), ("Total", "176", "", "")))
_RW_COUNTY_POPULATION = (("County", "Population", "Fully vaccinated"),
                         (("Alder", "48210", "35120"), ("Elm Ridge", "9876", "5098"), ("Dunmore", "67402", "57991")))
_RW_CLINIC_REGION_2 = (("Clinic", "Region", "Beds"),
                       (("St Mary", "North", "310"), ("Riverside", "East", "95"), ("Lakeside", "North", "60"),
                        ("Total", "", "465")))
_RW_COUNTRY_YEAR_3 = (("Country", "Year", "TB incidence"),
                      (("Kenya", "2019", "267"), ("Kenya", "2020", "259"), ("Kenya", "2021", "251"),
                       ("Ghana", "2019", "143"), ("Ghana", "2020", "139"), ("Ghana", "2021", "135")))
_RW_CAMPAIGN_COUNTRY = (("Campaign", "Country", "Start", "End", "Doses given"),
                        (("Measles catch-up", "Malawi", "2024-03-04", "2024-03-22", "1,250,000"),
                         ("Polio round 1", "Nigeria", "2024-01-15", "2024-01-19", "8,900,000"),
                         ("HPV school", "Kenya", "2023-10-02", "2023-12-15", "610,000"),
                         ("Cholera OCV", "Mozambique", "2024-02-10", "2024-02-16", "720,000")))
_RW_NAME_TIME_S = (("Name", "Time (s)"), (("A", "3"), ("B", "5"), ("C", "4")))
_RW_HOSPITAL_CITY = (("Hospital", "City", "Beds", "Occupancy (%)", "Annual cost ($M)"),
                     (("St. Mary's", "Leeds", "1,120", "87.5%", "$612.4"),
                      ("Royal Infirmary", "Glasgow", "980", "91.2%", "$540.0"),
                      ("Northgate General", "Leeds", "410", "78.0%", "$198.7"),
                      ("Harbour View", "Cardiff", "655", "83.4%", "$301.2"),
                      ("Westfield Clinic", "Glasgow", "220", "69.9%", "$95.3"),
                      ("Queen Anne's", "Cardiff", "1015", "94.6%", "$588.9")))
_RW_SITE_ENROLLED = (("Site", "Enrolled", "Target", "Dropouts", "PI since"),
                     (("Leeds", "84", "80", "6", "2019"), ("Lyon", "61", "75", "9", "2021"),
                      ("Porto", "77", "70", "4", "2018"), ("Graz", "45", "60", "11", "2022"),
                      ("Cork", "58", "55", "3", "2020"), ("Oslo", "70", "70", "5", "2019")))
_RW_TRIAL_PARTICIPANTS = (("trial", "participants", "primary_outcome_hr", "primary_outcome_hr lower bound",
                           "primary_outcome_hr upper bound"),
                          (("SUSTAIN-6", "3297", "0.74 (0.58-0.95)", "0.58", "0.95"),
                           ("EXSCEL", "14752", "0.91 (0.83-1.00)", "0.83", "1"),
                           ("ELIXA", "6068", "1.02 (0.89–1.17)", "0.89", "1.17")))
_RW_TEST_RESULT = (("Test", "Result", "Unit", "Reference range", "Reference range lower bound",
                    "Reference range upper bound"),
                   (("Sodium", "138", "mmol/L", "135–145", "135", "145"),
                    ("Potassium", "5.6", "mmol/L", "3.5–5.0", "3.5", "5"),
                    ("Creatinine", "1.4", "mg/dL", "0.6–1.2", "0.6", "1.2"),
                    ("Glucose", "92", "mg/dL", "70–99", "70", "99"),
                    ("Hemoglobin", "11.2", "g/dL", "12.0–15.5", "12", "15.5")))
_RW_COUNTRY_2019_2 = (("Country", "2019", "2020", "2021", "2022"),
                      (("Brazil", "73%", "67%", "68%", "77%"), ("India", "91%", "85%", "85%", "93%"),
                       ("Nigeria", "57%", "57%", "56%", "62%"), ("Philippines", "69%", "71%", "57%", "72%"),
                       ("Indonesia", "85%", "77%", "67%", "85%")))
_RW_TRIAL_DRUG_4 = (("Trial", "Drug", "Phase", "Participants"),
                    (("ALPHA-1", "Rivaroxaban", "III", "14264"), ("BETA-2", "Apixaban", "III", "18201"),
                     ("GAMMA-3", "Edoxaban", "III", "21105"), ("DELTA-4", "Apixaban", "II", "502"),
                     ("EPSILON-5", "Edoxaban", "III", "7513"), ("ZETA-6", "Apixaban", "II", "1220")))
_RW_SITE_PATIENTS = (("Site", "Patients", "Nurses"),
                     (("North", "120", "14"), ("Central", "300", "31"), ("South", "95", "9")))
_RW_COUNTRY_TOTAL_TWH = (("Country", "Total (TWh)", "Coal share", "Net importer"),
                         (("Germany", "514.2", "26.1%", "Yes"), ("France", "494.6", "0.4%", "No"),
                          ("Spain", "268.9", "1.4%", "No"), ("Poland", "163.6", "61.0%", "Yes"),
                          ("Italy", "259.0", "4.9%", "yes"), ("Sweden", "163.4", "0.1%", "No"),
                          ("Netherlands", "120.2", "8.7%", "No")))
_RW_OUTCOME_DRUG_A_N_412_E = (("Outcome", "Drug A (n=412) Events", "Drug A (n=412) %", "Placebo (n=405) Events",
                               "Placebo (n=405) %"),
                              (("Stroke", "12", "2.9", "25", "6.2"), ("Major bleeding", "15", "3.6", "6", "1.5")))
_RW_CITY_COUNTRY = (("city", "country", "annual_rainfall_mm", "rainy_days"),
                    (("Bergen", "Norway", "2250", "231"), ("Cardiff", "UK", "1152", "146"),
                     ("Mumbai", "India", "2167", "86"), ("Cairo", "Egypt", "18", "4")))
_RW_COUNTY_CASES_2023 = (("County", "Cases 2023", "Cases 2024", "Deaths 2023", "Deaths 2024"),
                         (("A", "1", "2", "5", "3"),))
_RW_PATHOGEN_ANTIBIOTIC = (("Pathogen", "Antibiotic", "Isolates tested", "Resistant (%)", "Change since 2019 (pp)"),
                           (("E. coli", "Ciprofloxacin", "12,480", "22.4", "+1.8"),
                            ("E. coli", "Ceftriaxone", "12,102", "14.9", "+2.6"),
                            ("K. pneumoniae", "Carbapenems", "4,311", "8.7", "+3.9"),
                            ("K. pneumoniae", "Ceftriaxone", "4,290", "31.2", "+0.4"),
                            ("S. aureus", "Methicillin (MRSA)", "6,874", "17.3", "-2.1"),
                            ("P. aeruginosa", "Carbapenems", "2,955", "16.8", "-0.7")))
_RW_PLACE_PLAYER = (("place", "player", "country", "score", "game"),
                    (("1", "curtis strange", "united states", "278", "1"),
                     ("t2", "chip beck", "united states", "279", "2"), ("t2", "ian woosnam", "wales", "279", "3"),
                     ("t4", "nick faldo", "england", "280", "4"), ("t4", "masashi ozaki", "japan", "280", "5"),
                     ("t4", "scott simpson", "united states", "280", "6")))
_RW_REGION_HOSPITALS = (("Region", "Hospitals", "ICU beds", "General beds", "Occupancy (%)"),
                        (("North", "14", "312", "4,210", "81.5"), ("South", "22", "451", "6,034", "88.2"),
                         ("East", "9", "127", "2,118", "92.7"), ("West", "17", "389", "5,377", "76.0")))
_RW_FOOD_CATEGORY = (("Food", "Category", "Calories (kcal per 100 g)", "Protein (g)"),
                     (("Lentils", "Legume", "116", "9.0"), ("Salmon", "Fish", "208", "20.4"),
                      ("Cod", "Fish", "82", "17.8"), ("Chicken breast", "Meat", "165", "31.0"),
                      ("Tofu", "Legume", "76", "8.1")))
_RW_RESERVOIR_COUNTRY = (("Reservoir", "Country", "Surface area (km²)", "Year completed"),
                         (("Lake Kariba", "Zambia/Zimbabwe", "5,580", "1959"), ("Lake Volta", "Ghana", "8,502", "1965"),
                          ("Lake Nasser", "Egypt/Sudan", "5,250", "1970"), ("Three Gorges", "China", "1,084", "2006")))
_RW_TRIAL_YEAR = (("Trial", "Year", "Enrolled", "Completed", "Serious adverse events", "Dropout %"),
                  (("ALPHA-1", "2019", "1420", "1301", "88", "8.4%"), ("BETA-2", "2020", "2210", "2050", "97", "7.2%"),
                   ("GAMMA-3", "2018", "640", "512", "41", "20.0%"), ("DELTA-4", "2021", "1875", "1790", "120", "4.5%"),
                   ("EPS-5", "2017", "3050", "2480", "210", "18.7%")))
_RW_SITE_COUNTRY = (("Site", "Country", "Patients enrolled", "Dropouts"),
                    (("Leeds", "UK", "1,204", "37"), ("Porto", "Portugal", "388", "52"),
                     ("Utrecht", "Netherlands", "745", "18"), ("Bergen", "Norway", "207", "9")))
_RW_SITE_ENROLLED_2 = (("Site", "Enrolled", "Target", "Year"),
                       (("Leeds", "120", "150", "2019"), ("Oslo", "90", "80", "2020"), ("Lyon", "45", "100", "2021")))
_RW_DRUG_CLASS_2 = (("Drug", "Class", "LDL reduction (%)"),
                    (("Atorvastatin", "Synthetic", "50"), ("Rosuvastatin", "Synthetic", "55"),
                     ("Simvastatin", "Fungal-derived", "41"), ("Pravastatin", "Fungal-derived", "34"),
                     ("Pitavastatin", "Synthetic", "43"), ("Lovastatin", "Fungal-derived", "40")))
_RW_SPECIES_REGION = (("Species", "Region", "Last seen"),
                      (("Mammuthus primigenius (woolly mammoth)", "Northern Eurasia", "ca. 10,000 BP"),
                       ("Megaloceros giganteus (giant deer)", "Europe", "ca. 7,700 BP"),
                       ("Smilodon fatalis (sabre-tooth cat)", "North America", "ca. 10,000 BP"),
                       ("Arctodus simus (short-faced bear)", "North America", "ca. 11,000 BP"),
                       ("Coelodonta antiquitatis (woolly rhinoceros)", "Northern Eurasia", "ca. 14,000 BP")))
_RW_COUNTRY_TOTAL_TWH_2 = (("Country", "Total (TWh)", "Coal share", "Nuclear", "Wind fraction"),
                           (("Germany", "514.2", "26.1%", "1.4%", "0.27"), ("France", "494.6", "0.4%", "65.0%", "0.10"),
                            ("Spain", "268.9", "1.4%", "20.3%", "0.24"), ("Poland", "163.6", "61.0%", "0.0%", "0.14")))
_RW_HOSPITAL_BEDS_2 = (("Hospital", "Beds", "Teaching hospital"),
                       (("St. Mary's", "620", "Y"), ("Riverside General", "340", "N"), ("Lakeside Medical", "510", "Y"),
                        ("Hillcrest", "220", "N"), ("Mercy Central", "780", "Y"), ("Valley Community", "150", "N")))
_RW_MONTH_REFERRALS = (("Month", "Referrals", "Cancelled operations"),
                       (("2024-03", "4410", "335"), ("2024-04", "4275", "351"), ("2024-05", "4502", "298"),
                        ("2024-06", "4190", "276")))
_RW_EVENT_VACCINE_N_1_20_2 = (("Event", "Vaccine (n=1,204)", "Placebo (n=1,198)", "Relative risk"),
                              (("Injection-site pain", "612 (50.8%)", "98 (8.2%)", "6.2"),
                               ("Fatigue", "301 (25.0%)", "241 (20.1%)", "1.24"),
                               ("Fever", "88 (7.3%)", "12 (1.0%)", "7.3"),
                               ("Serious adverse events", "9 (0.7%)", "8 (0.7%)", "1.12")))
_RW_COUNTRY_WHO_REGION = (("Country", "WHO region", "Births (thousands)"),
                          (("Kenya", "Africa", "1,437"), ("Nigeria", "Africa", "8,115"),
                           ("India", "South-East Asia", "23,192"), ("Ethiopia", "Africa", "4,164"),
                           ("Brazil", "Americas", "2,545")))
_RW_TRIAL_PHASE = (("Trial", "Phase", "Participants", "Met", "Dropout rate"),
                   (("ALPHA-1", "3", "1961", "Yes", "7.0%"), ("BETA-2", "3", "2539", "Yes", "6.2%"),
                    ("DELTA-4", "4", "3305", "Yes", "48%"), ("EPSILON-5", "3", "21", "Yes", "14%"),
                    ("ZETA-6", "3", "12000", "No", "12.5%")))
_RW_OUTBREAK_COUNTRY = (("Outbreak", "Country", "Deaths"),
                        (("Cholera Haiti", "Haiti", "9,792"), ("Zika", "Brazil", ""), ("Mpox", "Multi-country", "0")))
_RW_SUBGROUP_HAZARD_RATIO_9 = (("Subgroup", "Hazard ratio (95% CI)", "P value", "95% CI lower bound",
                                "95% CI upper bound"),
                               (("Overall", "0.81 (0.65–1.01)", "0.06", "0.65", "1.01"),
                                ("Women", "0.72 (0.52–0.99)", "0.04", "0.52", "0.99"),
                                ("Men", "0.90 (0.67–1.21)", "0.48", "0.67", "1.21"), ("Unknown", "", "", "", "")))
_RW_FOOD_CATEGORY_2 = (("Food", "Category", "Fibre (g)"),
                       (("Lentils", "Legume", "7.9"), ("Chickpeas", "Legume", "7.6"), ("Oats", "Grain", "10.6"),
                        ("Almonds", "Nut", "12.5")))
_RW_FORMAL_NAME_INFORMAL_NAME = (("FORMAL NAME", "INFORMAL NAME", "% ALL DEATHS"),
                                 (("(1) Diseases of the heart", "heart attack (mainly)", "28.5%"),
                                  ("(2) Malignant neoplasms", "cancer", "22.8%"),
                                  ("(3) Cerebrovascular disease", "stroke", "6.7%"),
                                  ("(9) Nephritis and Nephrosis", "kidney disease", "1.7%"),
                                  ("(10) Septicemia", "systemic infection", "1.4%"),
                                  ("(11) Intentional self-harm", "suicide", "1.3%"),
                                  ("(15) All other causes", "other", "17.4%")))
_RW_CAUSE_OF_DEATH_DEATHS_2022 = (("Cause of death", "Deaths (2022)", "Share of all deaths (%)"),
                                  (("Ischaemic heart disease", "61,250", "10.9"), ("Stroke", "29,800", "5.3"),
                                   ("COPD", "27,300", "4.8"), ("Lung cancer", "28,100", "5.0")))

REWRITE_RULES: tuple[Rewrite, ...] = (
    _rewrite("possible-bound", "both",
             "an order on a range column of text (\"250-1000\") in a text that asks what may be: read on the bound "
             "\"can\" points to",
             "\"Can the adult dose of cephalexin be higher than 900 mg?\" over cells \"250-1000\": every \"Adult dose "
             "(mg) > 900\" failed",
             _rw(_RW_DRUG_CLASS, {"filters": [{"column": "drug", "op": "=", "value": "Azithromycin"}], "fn": "value",
                                  "column": "adult_dose_mg", "answer_column": "drug",
                                  "check": {"op": ">", "value": "600"}},
                 ("Adults may take more than 600 mg of azithromycin.", {"column": "adult_dose_mg_upper_boun"}),
                 ("The adult dose of azithromycin is more than 600 mg.", None))),
    _rewrite("stated-bound", "both",
             "a numeric filter whose operator runs against the bound the text writes before its number",
             "\"Fewer than three hospitals have more than 400 beds.\" written 5 of 5 times with the filter \"Beds < "
             "400\"",
             _rw(_RW_HOSPITAL_REGION, {"filters": [{"column": "beds", "op": "<", "value": "400"}], "fn": "count",
                                       "column": "hospital", "answer_column": "hospital",
                                       "check": {"op": "<", "value": "3"}},
                 ("Fewer than three hospitals have more than 400 beds.",
                  {"filters": [{"column": "beds", "op": ">", "value": "400"}]}),
                 ("Fewer than three hospitals have fewer than 400 beds.", None)),
             after=("possible-bound",)),
    _rewrite("base-row", "both",
             "an '=' filter or a compared row naming a variant (\"Ours (w/o distill.)\") whose qualifier the text "
             "never writes",
             "\"Is it true that our model outperforms DistilBERT on every task …?\" written \"Model = 'Ours (w/o "
             "distill.)'\"",
             _rw(_RW_MODEL_PARAMS_M, {"filters": [{"column": "model", "op": "=", "value": "DistilBERT"}], "fn": "value",
                                      "column": "sst_2_acc",
                                      "check": {"op": "<", "against": "row", "value": "Ours (w/o distill.)"}},
                 ("DistilBERT is behind our model on SST-2", {"check": {"op": "<", "against": "row", "value": "Ours"}}),
                 ("DistilBERT is behind our model without distillation on SST-2", None))),
    _rewrite("flag-in-question", "question",
             "a yes/no column whose header the question writes as a property of its rows (\"net importers\")",
             "\"How many countries are net importers?\" counted over all 7 rows by every program",
             _rw(_RW_VACCINE_APPROVED_IN_EU, {"fn": "count", "column": "vaccine", "answer_column": "vaccine"},
                 ("How many vaccines are approved in the EU?",
                  {"filters": [{"column": "approved_in_eu", "op": "=", "value": "✓"}]}),
                 ("How many vaccines are there?", None))),
    _rewrite("stated-year", "both",
             "a date filter on a full date the text never writes, when the text writes only its year",
             "\"Every study published after 2020 enrolled fewer than 1,000 participants\" written \"Published > "
             "'2020-01-01'\"",
             _rw(_RW_STUDY_PUBLISHED, {"filters": [{"column": "published", "op": ">", "value": "June 2021"}],
                                       "fn": "count", "column": "study", "answer_column": "study"},
                 ("Which studies came out after 2021?",
                  {"filters": [{"column": "published", "op": ">", "value": "2021"}]}),
                 ("Which studies came out after June 2021?", None))),
    _rewrite("stated-percent", "both",
             "a filter or check on cells that write \"n (p%)\" against a number the text states as a percentage",
             "\"fewer than 10% of placebo recipients\" written as \"Placebo < 10\" (or \"< 0.1\") over cells \"41 "
             "(4.1%)\"",
             _rw(_RW_EVENT_VACCINE_N_1_20, {"filters": [{"column": "event", "op": "=", "value": "Headache"}],
                                            "fn": "value", "column": "vaccine_n_1_204",
                                            "check": {"op": "=", "value": "0.22"}},
                 ("22% of vaccine recipients reported headache.", {"check": {"op": "=", "value": "22%"}}),
                 ("265 vaccine recipients reported headache.", None,
                  {"filters": [{"column": "event", "op": "=", "value": "Headache"}], "fn": "value",
                   "column": "vaccine_n_1_204", "check": {"op": "=", "value": "265"}}))),
    _rewrite("numbered-kind", "both",
             "a \"<number>-<header word>\" the text writes (\"two-dose\"): the rows holding that number in that column",
             "\"What is the average efficacy of the two-dose vaccines?\" answered with the mean of all six vaccines, 5 "
             "of 5",
             _rw(_RW_VACCINE_DOSES, {"fn": "avg", "column": "efficacy"},
                 ("The 1-dose vaccine had an efficacy under 70%.",
                  {"filters": [{"column": "doses", "op": "=", "value": "1"}]}),
                 ("the average of the two-arm trials", None))),
    _rewrite("stated-part", "question",
             "an '=' filter on a whole date cell when the question states only its month and year",
             "\"How many trials were in November 2006?\" written as \"Date = '13 November 2006'\" (WTQ's training "
             "split)",
             _rw(_RW_TRIAL_DATE, {"filters": [{"column": "date", "op": "=", "value": "13 November 2006"}],
                                  "fn": "count", "column": "trial", "answer_column": "trial"},
                 ("how many trials were in november 2006?",
                  {"filters": [{"column": "date", "op": "contains", "value": "November 2006"}]}),
                 ("how many trials were on the 13th?", None))),
    _rewrite("widen-partial-value", "question",
             "an '=' filter on one cell when the question writes only a word that several cells share",
             "\"Were any deaths reported in the outbreaks linked to onions?\" written \"Source = 'Red onions'\"",
             _rw(_RW_OUTBREAK_SOURCE, {"filters": [{"column": "source", "op": "=", "value": "Romaine lettuce"}],
                                       "fn": "sum", "column": "deaths", "answer_column": "outbreak"},
                 ("How many people died in the lettuce outbreaks?",
                  {"filters": [{"column": "source", "op": "contains", "value": "lettuce"}]}),
                 ("How many people died in the Romaine lettuce outbreaks?", None))),
    _rewrite("narrow-to-written-value", "question",
             "a \"contains\" filter that holds several cells when the question writes one of them whole",
             "\"Which lower-middle-income country …\" written \"Income group contains 'middle'\", keeping \"Upper "
             "middle\" in",
             _rw(_RW_COUNTRY_2019, {"filters": [{"column": "income_group", "op": "contains", "value": "middle"}],
                                    "fn": "argmax", "column": "c2_2019", "answer_column": "country"},
                 ("Which lower-middle-income country had the highest coverage in 2019?",
                  {"filters": [{"column": "income_group", "op": "=", "value": "Lower middle"}]}),
                 ("Which middle-income country had the highest coverage in 2019?", None))),
    _rewrite("stated-date", "question",
             "a month or year the question states, found in a text column's cells and in no filter the program wrote",
             "\"How many shows were in April?\" over a tour's \"3 March 2010\" dates: the model counted all 7 rows",
             _rw(_RW_TRIAL_DATE, {"fn": "count", "column": "trial", "answer_column": "trial"},
                 ("How many trials were in December?",
                  {"filters": [{"column": "date", "op": "contains", "value": "December"}]}),
                 ("How many trials were there?", None))),
    _rewrite("inclusive-range", "question",
             "two bounds the question states on one column of dates or years (\"between March and May\")",
             "\"How many units were sold between March and May?\" written as Month > 'Mar 2024' and Month < 'May 2024'",
             _rw(_RW_MONTH_UNITS_SOLD, {"filters": [{"column": "month", "op": ">", "value": "Mar 2024"},
                                                    {"column": "month", "op": "<", "value": "May 2024"}],
                                        "fn": "sum", "column": "units_sold", "answer_column": "month"},
                 ("How many units were sold from March to May?",
                  {"filters": [{"column": "month", "op": ">=", "value": "Mar 2024"},
                               {"column": "month", "op": "<=", "value": "May 2024"}]}),
                 ("How many units were sold between spring and summer?", None))),
    _rewrite("stated-quarter", "question",
             "a quarter the question states (\"first quarter\", \"Q3 2019\") over a column of months",
             "\"What was the total revenue in the first quarter of 2024?\" summed over all six months",
             _rw(_RW_MONTH_REVENUE, {"fn": "sum", "column": "revenue", "answer_column": "revenue"},
                 ("What was the total revenue in the first quarter of 2024?",
                  {"filters": [{"column": "month", "op": "=", "value": "January 2024"},
                               {"column": "month", "op": "=", "value": "February 2024"},
                               {"column": "month", "op": "=", "value": "March 2024"}]}),
                 ("What was the total revenue?", None))),
    _rewrite("significance-filter", "question",
             "a question about (not) significant results over a table with one p-value column it reads nowhere",
             "\"How many studies reported a statistically significant result?\" counted all 6 studies",
             _rw(_RW_SUBGROUP_PATIENTS, {"fn": "most_common", "column": "p_value", "answer_column": "p_value"},
                 ("Which subgroups were not significant?",
                  {"filters": [{"column": "p_value", "op": ">=", "value": "0.05"}], "fn": "value", "column": "subgroup",
                   "answer_column": "subgroup"}),
                 ("What was the p value for the significant effect in women?", None,
                  {"filters": [{"column": "subgroup", "op": "=", "value": "Women"}], "fn": "value",
                   "column": "p_value"}))),
    _rewrite("stated-value", "question",
             "a count, sum, average or extreme over all rows when the question writes a cell of the rows it means",
             "\"What was the average TB incidence in Ghana?\" averaged all nine rows (198.8) in all five programs; "
             "Ghana's is 139",
             _rw(_RW_COUNTRY_YEAR, {"fn": "sum", "column": "tb_incidence", "answer_column": "year"},
                 ("What was the total TB incidence in Kenya?",
                  {"filters": [{"column": "country", "op": "=", "value": "Kenya"}]}),
                 ("What is the total TB incidence?", None))),
    _rewrite("answer-kind-asked", "question",
             "a largest or smallest value of a column when a which/who question asks for a name the answer column "
             "holds",
             "\"Which team had the most points?\" written as the maximum of points, with the team as answer column",
             _rw(_RW_STUDY_PUBLISHED, {"fn": "min", "column": "published", "answer_column": "published"},
                 ("Which was the first study to be published?", {"fn": "argmin", "answer_column": "study"}),
                 ("When was the first study published?", None))),
    _rewrite("year-asked", "question",
             "a largest or smallest value when the question asks \"(in) which year\": the year of that row",
             "\"In which year was Uganda's TB incidence lowest?\" answered with the value (196), not its year (2020), "
             "5 of 5",
             _rw(_RW_COUNTRY_YEAR_2, {"filters": [{"column": "country", "op": "=", "value": "Uganda"}], "fn": "min",
                                      "column": "tb_incidence", "answer_column": "country"},
                 ("In which year was Uganda's TB incidence lowest?", {"fn": "argmin", "answer_column": "year"}),
                 ("What was Uganda's lowest TB incidence?", None))),
    _rewrite("rank-order", "question",
             "\"highest/best/top\" over a column of ranks (position, place, seed): the smallest number",
             "\"Which track had the highest peak position?\" read as the largest number (WTQ's training split)",
             _rw(_RW_TITLE_PEAK_POSITION, {"fn": "argmin", "column": "peak_position", "answer_column": "title"},
                 ("which track had the lowest position?", {"fn": "argmax"}),
                 ("which track had the highest position?", None)),
             after=("stated-value",)),
    _rewrite("drop-named-row", "question",
             "a filter on the answer column to a value the question does not state, under a largest or smallest value",
             "\"Which country has the most bronze medals?\" filtered on \"Nation = Belgium\", which names Belgium by "
             "construction",
             _rw(_RW_TITLE_PEAK_POSITION, {"filters": [{"column": "title", "op": "=", "value": "Holy Water"}],
                                           "fn": "argmax", "column": "weeks", "answer_column": "title"},
                 ("which track charted for the most weeks?", {"filters": []}),
                 ("did holy water chart for the most weeks?", None))),
    _rewrite("position", "question",
             "\"the first/last … on this chart\": a row by its place in the table, not by a measure",
             "\"What is the last design code on this chart?\" answered with an extreme of a column the question never "
             "names",
             _rw(_RW_STADIUM_CITY, {"fn": "argmax", "column": "capacity", "answer_column": "stadium"},
                 ("what is the last stadium on this chart?", {"fn": "value", "column": "stadium"}),
                 ("which stadium is the biggest?", None))),
    _rewrite("choice", "question",
             "a largest or smallest value asked of two cells on either side of \"or\": over exactly those two rows",
             "\"Which had a higher share in 1900, Jewish or Roman Catholic?\" filtered on one of them only (WTQ's "
             "training split)",
             _rw(_RW_STADIUM_CITY, {"fn": "min", "column": "capacity", "answer_column": "stadium"},
                 ("which is smaller, Mill Field or Ayr Park?",
                  {"filters": [{"column": "stadium", "op": "=", "value": "Mill Field"},
                               {"column": "stadium", "op": "=", "value": "Ayr Park"}],
                   "fn": "argmin"}),
                 ("which stadium is the smallest?", None))),
    _rewrite("compared-value", "question",
             "a difference of rows when the question compares one row's value with a number it states (\"more or less "
             "than 85%\")",
             "\"Was DORADO's efficacy more or less than 85%?\" written by all five samples as a difference over "
             "DORADO's one row",
             _rw(_RW_TRIAL_EFFICACY, {"filters": [{"column": "trial", "op": "=", "value": "DORADO"}],
                                      "fn": "difference", "column": "efficacy", "answer_column": "efficacy"},
                 ("Was DORADO's efficacy more or less than 85%?", {"fn": "value"}),
                 ("Was DORADO's efficacy more or less than ARIES-2's?", None))),
    _rewrite("neighbour", "question",
             "a program that reads the very column it fixes, when the question asks for the row below or above that "
             "value",
             "\"What circuit is listed below Autodromo di Pergusa?\" answered with the question's own words (WTQ's dev "
             "split, 5 of 5)",
             _rw(_RW_STADIUM_CITY, {"filters": [{"column": "stadium", "op": "=", "value": "Ayr Park"}], "fn": "value",
                                    "column": "stadium", "answer_column": "stadium"},
                 ("which stadium is listed below ayr park?", {"fn": "next_row"}),
                 ("which stadium is Ayr Park?", None))),
    _rewrite("count-choice", "question",
             "\"more <noun>\" asked of two cells on either side of \"or\", the noun naming no column of numbers: a "
             "count of rows",
             "\"Which country had more shows, Germany or France?\" read as the largest \"Chart position\"",
             _rw(_RW_TRIAL_DATE, {"filters": [{"column": "series", "op": "=", "value": "Desert"}], "fn": "argmax",
                                  "column": "trial", "answer_column": "series"},
                 ("which series had more shows, desert or jungle?",
                  {"filters": [{"column": "series", "op": "=", "value": "Desert"},
                               {"column": "series", "op": "=", "value": "Jungle"}],
                   "fn": "most_common", "column": "series"}),
                 ("which series is it, jungle or desert?", None,
                  {"filters": [{"column": "series", "op": "=", "value": "Desert"}], "fn": "count", "column": "trial",
                   "answer_column": "trial"}))),
    _rewrite("count-than-row", "question",
             "a count filtered on the row named after \"more … than\": the rows beyond that row's value",
             "\"how many schools have a larger intake than sacred heart?\" counted Sacred Heart's own row (WTQ's "
             "training split)",
             _rw(_RW_NAME_TOWN, {"filters": [{"column": "name", "op": "=", "value": "St Mary's"}], "fn": "count",
                                 "column": "name"},
                 ("how many schools have a smaller intake than St Mary's?",
                  {"filters": [{"column": "intake", "op": "<", "value": "1,200"}]}),
                 ("how many schools are bigger than Kirkview?", None,
                  {"filters": [{"column": "name", "op": "=", "value": "Kirkview"}], "fn": "count", "column": "name"}))),
    _rewrite("same-as-row", "question",
             "a value or count filtered on the row named after \"the same … as\": the other rows sharing its value",
             "\"which nation won the same number of gold medals as hungary?\" answered Hungary (WTQ's training split)",
             _rw(_RW_NATION_GOLD, {"filters": [{"column": "gold", "op": "=", "value": "3"}], "fn": "value",
                                   "column": "nation", "answer_column": "nation"},
                 ("which nation won the same number of gold as hungary?",
                  {"filters": [{"column": "gold", "op": "=", "value": "3"},
                               {"column": "nation", "op": "!=", "value": "Hungary"}]}),
                 ("which nation won 3 gold?", None))),
    _rewrite("named-difference", "question",
             "\"the difference between A and B\" or \"how many more … than\": the two named rows' difference",
             "\"What is the difference in beds between Surgery and the ICU?\": no program ran and the fallback "
             "invented figures",
             _rw(_RW_WARD_BEDS, {"filters": [{"column": "ward", "op": "=", "value": "Surgery"}], "fn": "value",
                                 "column": "ddd_q1"},
                 ("What is the difference in beds between Surgery and the ICU?",
                  {"filters": [{"column": "ward", "op": "=", "value": "Surgery"},
                               {"column": "ward", "op": "=", "value": "ICU"}],
                   "fn": "difference", "column": "beds"}),
                 ("How many beds does Surgery have?", None))),
    _rewrite("frequency", "question",
             "\"who won the most times\", \"the most <rows>\": the most common value of the answer column",
             "\"Who won the most times?\" answered with the winner of the row with the most finishers",
             _rw(_RW_TRIAL_DRUG, {"fn": "argmax", "column": "participants", "answer_column": "drug"},
                 ("Which drug was tested in the most trials?", {"fn": "most_common", "column": "drug"}),
                 ("Which drug had the most participants?", None))),
    _rewrite("frequency-of-measure", "question",
             "\"which <row> was most frequent on <arm>\" over one row each: the row with the most in the arm's column",
             "\"Which adverse event was most frequent on placebo?\" answered with the most common name, which ties all "
             "six rows",
             _rw(_RW_ADVERSE_EVENT_PLACEBO_N_412, {"fn": "most_common", "column": "adverse_event",
                                                   "answer_column": "adverse_event"},
                 ("Which adverse event was most common on 20 mg?", {"fn": "argmax", "column": "drug_20_mg_n_415"}),
                 ("Which adverse event was most frequent?", None))),
    _rewrite("distinct", "question",
             "\"how many different <noun>\": the different values of the column the noun names, not rows",
             "\"How many different series are listed?\" counted the rows",
             _rw(_RW_TRIAL_DATE, {"fn": "count", "column": "trial", "answer_column": "trial"},
                 ("how many different series are listed?", {"fn": "count_distinct", "column": "series"}),
                 ("how many series are listed?", None))),
    _rewrite("total-asked", "question",
             "a how-many question with no extreme, ordinal or average, written as the smallest or largest of several "
             "rows",
             "\"How many losses did the team have in 1981?\" answered with the smaller half-season, 22, not 47 (WTQ's "
             "dev split)",
             _rw(_RW_SEASON_HALF, {"filters": [{"column": "season", "op": "=", "value": "1981"}], "fn": "min",
                                   "column": "losses", "answer_column": "losses"},
                 ("how many losses did the team have in 1981?", {"fn": "sum"}),
                 ("what were the fewest losses in 1981?", None))),
    _rewrite("group-total", "question",
             "a which-question asking for a total (\"in total\", \"combined\") over an answer column whose values "
             "repeat",
             "\"Which region has the fewest beds in total?\" answered with the region of the clinic with the fewest "
             "beds, 5 of 5",
             _rw(_RW_CLINIC_REGION, {"fn": "argmin", "column": "beds", "answer_column": "region"},
                 ("Which region has the fewest beds in total?", {"options": {"grouping": {"by": "total"}}}),
                 ("Which region has the fewest beds overall?", None))),
    _rewrite("group-mean", "question",
             "a which-question asking for an average over a column whose values repeat: the extreme of the groups' "
             "means",
             "\"Which category has the most calories on average?\" answered with the mean of every row, 236.7",
             _rw(_RW_FOOD_CALORIES_KCAL_, {"fn": "argmax", "column": "calories_kcal_100g", "answer_column": "food"},
                 ("Which category has the highest mean calories?",
                  {"answer_column": "category", "options": {"grouping": {"by": "mean"}}}),
                 ("Which category has the most calories?", None))),
    _rewrite("median", "both",
             "\"median\" in the text, over a column that does not hold medians: the middle value, not the mean",
             "\"What is the median sugar content?\" written as the largest or smallest Sugar by 10 of 10 programs",
             _rw(_RW_FOOD_CALORIES_KCAL_, {"fn": "avg", "column": "sugar_g"},
                 ("What is the median sugar content?", {"fn": "median"}),
                 ("What is the average sugar content?", None))),
    _rewrite("rows-asked", "question",
             "a which/who question written as a count: the answer column over the rows it selects",
             "\"Which week(s) did not have more than 75,000 in attendance?\" answered with how many there are",
             _rw(_RW_TRIAL_DATE, {"filters": [{"column": "celebrity", "op": "=", "value": "Jan"}], "fn": "count",
                                  "column": "trial", "answer_column": "trial"},
                 ("which trials did jan take part in?", {"fn": "value"}),
                 ("did jan take part in a trial?", None))),
    _rewrite("threshold-list", "question",
             "a largest or smallest value of the very column a threshold filter bounds, asked with no superlative",
             "\"Which regions have an occupancy above 85%?\" answered \"East\", the largest of them, by 4 of 5 "
             "programs",
             _rw(_RW_HOSPITAL_BEDS, {"filters": [{"column": "stroke_unit", "op": "=", "value": "Yes"}], "fn": "argmax",
                                     "column": "beds", "answer_column": "hospital"},
                 ("Which hospitals have a stroke unit?", {"fn": "value", "column": "hospital"}),
                 ("Which hospital has a stroke unit?", None))),
    _rewrite("top-rows", "question",
             "\"which three … the most\", \"the top 5 … by\": the rows among the n largest (smallest) of the ranked "
             "column",
             "\"Which three trials had the most participants?\" answered with ALPHA alone, the one program of five "
             "that ran",
             _rw(_RW_TRIAL_DRUG_2, {"fn": "argmax", "column": "participants", "answer_column": "trial"},
                 ("Which three trials had the most participants?",
                  {"filters": [{"column": "participants", "op": ">=", "value": "800"}], "fn": "value",
                   "column": "trial"}),
                 ("Which trial had the most participants?", None))),
    _rewrite("ratio", "both",
             "\"relative to\", \"per\", \"for each\" naming another numeric column: the extreme of the ratio of the "
             "two",
             "\"Which trial had the most dropouts relative to participants?\" read over the dropouts alone",
             _rw(_RW_TRIAL_DRUG_3, {"fn": "argmax", "column": "dropouts", "answer_column": "trial"},
                 ("Which trial had the most dropouts per week?",
                  {"options": {"derive": {"per_column": "duration_weeks"}}}),
                 ("Which trial had the most dropouts?", None))),
    _rewrite("rate-of-one-row", "question",
             "a rate the question asks of one named row (\"the event rate in the placebo arm\"): its count per "
             "population",
             "\"What was the case fatality rate of diphtheria in Nigeria?\" answered 596, the deaths",
             _rw(_RW_COUNTRY_DISEASE, {"filters": [{"column": "country", "op": "=", "value": "Nigeria"}], "fn": "value",
                                       "column": "deaths", "answer_column": "country"},
                 ("What was the case fatality rate of diphtheria in Nigeria?",
                  {"fn": "max", "options": {"derive": {"per_column": "cases"}}}),
                 ("How many died in Nigeria?", None))),
    _rewrite("share-of-rows", "question",
             "\"what share / percentage of <the rows' noun> …\": the share of the table's rows the filters keep",
             "\"What percentage of wards passed the audit?\" answered with the passing wards' mean Q1 use (74.4), 6 of "
             "10",
             _rw(_RW_WARD_BEDS_2, {"filters": [{"column": "audit_passed", "op": "=", "value": "Yes"}], "fn": "avg",
                                   "column": "ddd_q1", "answer_column": "ward"},
                 ("what share of all rows passed the audit?", {"fn": "share", "column": "ward"}),
                 ("What percentage of wards are listed?", None, {"fn": "count", "column": "ward"})),
             after=("flag-in-question",)),
    _rewrite("share", "question",
             "\"what share of <row>'s <column>\": the named row's ratio of the two columns",
             "\"What share of Drug A patients died?\" answered 142, Drug A's deaths",
             _rw(_RW_COUNTY_POPULATION, {"fn": "value", "column": "fully_vaccinated", "answer_column": "county"},
                 ("What share of Elm Ridge's population is fully vaccinated?",
                  {"filters": [{"column": "county", "op": "=", "value": "Elm Ridge"}], "fn": "max",
                   "options": {"derive": {"per_column": "population"}}}),
                 ("What share of the population is fully vaccinated?", None,
                  {"fn": "avg", "column": "fully_vaccinated", "answer_column": "county"}))),
    _rewrite("share-of-all", "question",
             "\"what share of all <column> does <row> have\": the row's value as a percentage of the column's total",
             "\"What share of all beds does St Mary have?\" answered 310, St Mary's beds, by 4 of 5 programs",
             _rw(_RW_CLINIC_REGION_2, {"filters": [{"column": "region", "op": "=", "value": "North"}], "fn": "sum",
                                       "column": "beds", "answer_column": "beds"},
                 ("What share of the beds is in the North?", {"fn": "share"}),
                 ("What share of all beds are in clinics?", None,
                  {"fn": "sum", "column": "beds", "answer_column": "beds"}))),
    _rewrite("column-change", "question",
             "a change the question asks between two columns (or years) of one measure: the later minus the earlier",
             "\"Which country had the largest drop in coverage between 2019 and 2021?\" answered from 2022 alone",
             _rw(_RW_COUNTRY_YEAR_3, {"filters": [{"column": "country", "op": "=", "value": "Kenya"},
                                                  {"column": "year", "op": ">", "value": "2019"}],
                                      "fn": "difference", "column": "tb_incidence", "answer_column": "country"},
                 ("How much did TB incidence in Kenya change between 2019 and 2021?",
                  {"filters": [{"column": "country", "op": "=", "value": "Kenya"},
                               {"column": "year", "op": "=", "value": "2019"},
                               {"column": "year", "op": "=", "value": "2021"}]}),
                 ("How much TB was there in Kenya between 2019 and 2021?", None))),
    _rewrite("duration", "both",
             "how long something lasted, over one start and one end column of dates: the end minus the start, in days",
             "\"Which campaign lasted the longest?\" answered with the campaign that ended last, in all five programs",
             _rw(_RW_CAMPAIGN_COUNTRY, {"fn": "argmax", "column": "end", "answer_column": "campaign"},
                 ("Which campaign was the shortest?",
                  {"fn": "argmin", "options": {"derive": {"minus_column": "start"}}}),
                 ("When did the cholera campaign end?", None,
                  {"filters": [{"column": "campaign", "op": "=", "value": "Cholera OCV"}], "fn": "value",
                   "column": "end", "answer_column": "campaign"}))),
    _rewrite("direction", "question",
             "a question that says only \"most/highest\" or only \"fewest/lowest/best time\": the direction of its "
             "extreme",
             "\"Which region has the second most ICU beds?\" split between the second largest and the second smallest",
             _rw(_RW_NAME_TIME_S, {"fn": "argmax", "column": "time_s", "answer_column": "name"},
                 ("Which runner had the best time?", {"fn": "argmin"}),
                 ("Which runner had the longest time?", None))),
    _rewrite("ordinal", "both",
             "\"the second/third …\" on an extreme: its nth value, which the grammar has no place for",
             "\"Which country won the second-highest number of silver medals?\" read as the largest",
             _rw(_RW_HOSPITAL_CITY, {"fn": "argmax", "column": "beds", "answer_column": "hospital"},
                 ("Which hospital is the second largest?", {"options": {"nth": 2}}),
                 ("Which hospital has the third-highest occupancy?", None,
                  {"fn": "argmax", "column": "occupancy", "answer_column": "hospital", "nth": 3}))),
    _rewrite("column-against", "question",
             "a question comparing two columns of each row (\"missed their target\"): a filter of one column against "
             "the other",
             "\"Which sites missed their enrolment target?\": programs guessed a bound (\"target < 35\") or took a "
             "difference",
             _rw(_RW_SITE_ENROLLED, {"filters": [{"column": "target", "op": "<", "value": "35"}], "fn": "value",
                                     "column": "site", "answer_column": "site"},
                 ("Which sites missed their enrolment target?",
                  {"filters": [{"column": "enrolled", "op": "<", "value": "", "than_column": "target"}]}),
                 ("Which sites enrolled more than 40 patients?", None))),
    _rewrite("interval-question", "question",
             "a question about the rows whose interval includes or excludes a number: both bounds against it",
             "\"Which subgroups' confidence intervals include 1?\": only claims were read so",
             _rw(_RW_TRIAL_PARTICIPANTS, {"fn": "argmax", "column": "primary_outcome_hr_upper",
                                          "answer_column": "trial"},
                 ("Which trials' confidence intervals include 1?",
                  {"filters": [{"column": "primary_outcome_hr_lower", "op": "<=", "value": "1.00"},
                               {"column": "primary_outcome_hr_upper", "op": ">=", "value": "1.00"}],
                   "fn": "value", "column": "trial"}),
                 ("Which trial has the highest upper bound?", None))),
    _rewrite("range-question", "question",
             "a question whether rows are above, below or within their own reference range: value against its bounds",
             "\"Is potassium within its reference range?\": 5 of 5 programs counted Potassium's row and answered yes "
             "for 5.6 in 3.5–5.0",
             _rw(_RW_TEST_RESULT, {"fn": "count", "column": "test"},
                 ("Is sodium above its reference range?",
                  {"filters": [{"column": "test", "op": "=", "value": "Sodium"},
                               {"column": "result", "op": ">", "value": "",
                                "than_column": "reference_range_upper_bo"}]}),
                 ("Which results are above 100?", None, {"fn": "value", "column": "test", "answer_column": "test"}))),
    _rewrite("across-years", "question",
             "an average, total or extreme the question asks of one row across its year columns",
             "\"What was Nigeria's average coverage?\" over a column per year: the mean of one year's column over one "
             "row",
             _rw(_RW_COUNTRY_2019_2, {"filters": [{"column": "country", "op": "=", "value": "Nigeria"}], "fn": "avg",
                                      "column": "c5_2022", "answer_column": "country"},
                 ("What was Nigeria's average coverage?",
                  {"column": "c2_2019",
                   "options": {"grouping": {"columns": ["c2_2019", "c3_2020", "c4_2021", "c5_2022"]}}}),
                 ("What was Nigeria's coverage in 2021?", None))),
    _rewrite("rows-per-value", "question",
             "\"which <noun> in more than one <row>\": the values held by more rows than the bound, not a bound on a "
             "cell",
             "\"Which drugs were tested in more than one trial?\" written \"Participants > 1\" by 3 of 5 programs",
             _rw(_RW_TRIAL_DRUG_4, {"filters": [{"column": "participants", "op": ">", "value": "1"}], "fn": "value",
                                    "column": "drug", "answer_column": "drug"},
                 ("Which drugs were tested in more than one trial?",
                  {"filters": [], "fn": "most_common", "options": {"row_count": {"rows": 1}}}),
                 ("Which drugs were tested in trials with more than 1 participant?", None))),
    _rewrite("yes-no-counts", "question",
             "a yes/no question: the count of the rows that meet the program's filters (yes when there is one)",
             "\"Does Central have 300 patients?\" is whether a row meets the filters; runs last, over the filters the "
             "readers settled",
             _rw(_RW_SITE_PATIENTS, {"filters": [{"column": "site", "op": "=", "value": "Central"}], "fn": "value",
                                     "column": "patients", "check": {"op": "=", "value": "300"}},
                 ("Does Central have 300 patients?", {"fn": "count"}),
                 ("How many patients does Central have?", None)),
             after=("flag-in-question", "column-against")),
    _rewrite("flag-in-claim", "claim",
             "a yes/no column whose header the claim writes as a property of its rows (\"net importers\")",
             "\"How many countries are net importers?\" counted over all 7 rows; claims read the flag the same way",
             _rw(_RW_COUNTRY_TOTAL_TWH, {"fn": "count", "column": "country", "answer_column": "country",
                                         "check": {"op": "=", "value": "3"}},
                 ("Three countries are net importers.",
                  {"filters": [{"column": "net_importer", "op": "=", "value": "Yes"}]}),
                 ("Three countries are listed.", None))),
    _rewrite("arm-comparison", "claim",
             "a claim comparing two column groups (arms) within one row, with \"than\", \"versus\" or \"compared\" "
             "between them",
             "\"Liberia has a bigger population than guinea\" (PubHealthTab's tuning split), a column per country",
             _rw(_RW_OUTCOME_DRUG_A_N_412_E, {"fn": "count", "column": "outcome"},
                 ("Drug A more than halved the rate of stroke compared with placebo",
                  {"filters": [{"column": "outcome", "op": "=", "value": "Stroke"}], "fn": "value",
                   "column": "drug_a_n_412",
                   "check": {"op": "<", "against": "column", "value": "placebo_n_405", "factor": 0.5}}),
                 ("Stroke was reported with Drug A and with placebo.", None))),
    _rewrite("compared-row", "claim",
             "two '=' filters on one column, one naming the row the check compares with: that filter dropped",
             "\"Bergen gets more rain than Cardiff\" written \"city = 'Bergen' and city = 'Cardiff'; check > "
             "Cardiff's\"",
             _rw(_RW_CITY_COUNTRY, {"filters": [{"column": "city", "op": "=", "value": "Bergen"},
                                                {"column": "city", "op": "=", "value": "Cardiff"}],
                                    "fn": "value", "column": "annual_rainfall_mm", "answer_column": "city",
                                    "check": {"op": ">", "against": "row", "value": "Cardiff"}},
                 ("Bergen gets more rain than Cardiff.",
                  {"filters": [{"column": "city", "op": "=", "value": "Bergen"}]}),
                 ("Bergen gets more rain than Cardiff.", None,
                  {"filters": [{"column": "city", "op": "=", "value": "Bergen"}], "fn": "value",
                   "column": "annual_rainfall_mm", "answer_column": "city",
                   "check": {"op": ">", "against": "row", "value": "Cardiff"}}))),
    _rewrite("change", "claim",
             "\"rose/fell (by X) from A to B\": the later column against the earlier, or the amount of the change",
             "\"Metformin's price rose by more than 10%\" supported by 4.60 > 4.20, a rise of 9.5%",
             _rw(_RW_COUNTY_CASES_2023, {"filters": [{"column": "county", "op": "=", "value": "A"}], "fn": "value",
                                         "column": "cases_2023", "answer_column": "county",
                                         "check": {"op": ">", "value": "0"}},
                 ("Deaths fell in A.",
                  {"column": "deaths_2024", "check": {"op": "<", "against": "column", "value": "deaths_2023"}}),
                 ("They rose in A.", None))),
    _rewrite("change-column", "claim",
             "a claim that something rose or fell over a table with a column of changes: the named row's change "
             "against 0",
             "\"MRSA resistance fell since 2019\": no program read \"Change since 2019 (pp)\"",
             _rw(_RW_PATHOGEN_ANTIBIOTIC, {"filters": [{"column": "antibiotic", "op": "=",
                                                        "value": "Methicillin (MRSA)"}],
                                           "fn": "sum", "column": "resistant", "answer_column": "pathogen",
                                           "check": {"op": "<", "value": "19"}},
                 ("Did MRSA resistance decrease?",
                  {"fn": "value", "column": "change_since_2019_pp", "check": {"op": "<", "value": "0"}}),
                 ("MRSA resistance is below 19%.", None))),
    _rewrite("counted-column", "claim",
             "a count checked against a number the claim writes before a text column's name: its different values",
             "\"there be a total of 4 country represent by the player\" counted the 12 players (TabFact's tuning "
             "split)",
             _rw(_RW_PLACE_PLAYER, {"fn": "count", "column": "player", "answer_column": "player",
                                    "check": {"op": "=", "value": "6"}},
                 ("6 player finish the tournament", {"fn": "count_distinct"}),
                 ("4 game be play", None,
                  {"fn": "count", "column": "player", "answer_column": "player", "check": {"op": "=", "value": "4"}}))),
    _rewrite("two-extremes", "claim",
             "\"the <row> with the most X has the lowest Y\": whether one row holds both extremes",
             "\"The region with the fewest hospitals has the highest occupancy\": the programs compared invented "
             "values",
             _rw(_RW_REGION_HOSPITALS, {"filters": [{"column": "hospitals", "op": "<", "value": "10"}], "fn": "max",
                                        "column": "occupancy",
                                        "check": {"op": "=", "against": "row", "value": "South"}},
                 ("The region with the most ICU beds has the lowest occupancy.",
                  {"filters": [], "fn": "argmax", "column": "icu_beds", "answer_column": "region",
                   "check": {"op": "=", "against": "extreme", "value": "occupancy", "extreme": "min"}}),
                 ("South has the most hospitals.", None,
                  {"fn": "argmax", "column": "hospitals", "answer_column": "region",
                   "check": {"op": "=", "value": "South"}}))),
    _rewrite("ranked-claim", "claim",
             "\"<row> has the (nth) most <column>\": the nth extreme of that column, checked against the named row",
             "\"North has the third highest occupancy\" refuted by comparing North with South, a row the claim never "
             "names",
             _rw(_RW_REGION_HOSPITALS, {"filters": [{"column": "region", "op": "=", "value": "North"}], "fn": "value",
                                        "column": "occupancy",
                                        "check": {"op": ">", "against": "row", "value": "South"}},
                 ("West has the most ICU beds.",
                  {"filters": [], "fn": "argmax", "column": "icu_beds", "answer_column": "region",
                   "check": {"op": "=", "value": "West"}}),
                 ("South has the most staff.", None,
                  {"fn": "argmax", "column": "hospitals", "answer_column": "region",
                   "check": {"op": "=", "value": "South"}}))),
    _rewrite("whole-table-extreme", "claim",
             "an extreme narrowed by filters the claim never states, when its superlative says \"in the table\", \"of "
             "all\"",
             "\"Cod is the lowest-calorie food in the table.\" decided over the fish alone",
             _rw(_RW_FOOD_CATEGORY, {"filters": [{"column": "category", "op": "=", "value": "Fish"}], "fn": "min",
                                     "column": "calories_kcal_per_100_g", "answer_column": "food",
                                     "check": {"op": "=", "against": "row", "value": "Cod"}},
                 ("Cod is the lowest-calorie food in the table.", {"filters": []}),
                 ("Cod is the lowest-calorie food.", None))),
    _rewrite("superlative", "claim",
             "\"X has the largest Y\" written as the extreme over X's row alone: the row with it is X",
             "\"Lake Kariba has the largest surface area\" supported by the maximum over its own row",
             _rw(_RW_RESERVOIR_COUNTRY, {"filters": [{"column": "country", "op": "=", "value": "Ghana"}], "fn": "max",
                                         "column": "surface_area_km2", "answer_column": "reservoir",
                                         "check": {"op": "=", "value": "5,580"}},
                 ("Lake Volta has the largest surface area.",
                  {"filters": [], "fn": "argmax", "check": {"op": "=", "value": "Lake Volta"}}),
                 ("The largest reservoir is Lake Nasser.", None))),
    _rewrite("rate", "claim",
             "an extreme over a count the claim calls a rate (\"mortality\", \"case fatality rate\"): that count per "
             "its population",
             "\"What was the case fatality rate of diphtheria in Nigeria?\" answered 596, the deaths",
             _rw(_RW_TRIAL_YEAR, {"fn": "argmax", "column": "completed", "answer_column": "trial",
                                  "check": {"op": "=", "value": "DELTA-4"}},
                 ("DELTA-4 had the highest completion rate.", {"options": {"derive": {"per_column": "enrolled"}}}),
                 ("DELTA-4 had the most completed participants.", None))),
    _rewrite("combined", "claim",
             "\"X has more Y than A and B combined\": X's value against the sum of the rows listed",
             "\"Lyon enrolled more patients than Utrecht and Bergen combined\" written as Lyon against Utrecht alone",
             _rw(_RW_SITE_COUNTRY, {"filters": [{"column": "site", "op": "=", "value": "Porto"}], "fn": "value",
                                    "column": "patients_enrolled", "answer_column": "site",
                                    "check": {"op": ">", "against": "row", "value": "Bergen"}},
                 ("Porto enrolled more patients than Bergen and Utrecht combined.",
                  {"check": {"op": ">", "against": "rows", "value": "Bergen and Utrecht",
                             "rows": ["Bergen", "Utrecht"]}}),
                 ("Porto enrolled more patients than Bergen.", None))),
    _rewrite("own-row", "claim",
             "\"Oslo enrolled more than its target\": one row's value against another column of the same row",
             "\"Oslo enrolled more than its target\" written \"Oslo's Enrolled > Oslo's Enrolled\"",
             _rw(_RW_SITE_ENROLLED_2, {"filters": [{"column": "site", "op": "=", "value": "Leeds"}], "fn": "value",
                                       "column": "enrolled", "check": {"op": ">", "against": "row", "value": "Leeds"}},
                 ("Leeds enrolled more than its target.",
                  {"check": {"op": ">", "against": "column", "value": "target"}}),
                 ("Oslo enrolled more than Leeds.", None,
                  {"filters": [{"column": "site", "op": "=", "value": "Oslo"}], "fn": "value", "column": "enrolled",
                   "check": {"op": ">", "against": "row", "value": "Oslo"}}))),
    _rewrite("quantifier", "claim",
             "an \"only\" program or a value check for a claim that opens with \"every\", \"all\" or \"each\": read as "
             "\"every\"",
             "\"every hospital in Hull opened after 1990\" came back 5 of 5 as \"whether they are the only rows with "
             "Opened > 1990\"",
             _rw(_RW_DRUG_CLASS_2, {"filters": [{"column": "class", "op": "!=", "value": "Fungal-derived"}],
                                    "fn": "value", "column": "ldl_reduction", "answer_column": "drug",
                                    "check": {"op": ">", "value": "40"}},
                 ("Is it true that every synthetic statin lowers LDL by more than 40%?", {"fn": "every"}),
                 ("Is it true that all synthetic statins lower LDL by more than 45%?", None,
                  {"filters": [{"column": "class", "op": "=", "value": "Synthetic"}], "fn": "every",
                   "column": "ldl_reduction", "answer_column": "drug", "check": {"op": ">", "value": "45"}}))),
    _rewrite("every-filter", "claim",
             "an \"every\" program whose condition names no value (\"= 'every'\") but whose one filter states the "
             "claim's condition",
             "\"Every site had fewer than 60 dropouts\" written \"rows where Dropouts < 60 -> every one has Site = "
             "'every'\"",
             _rw(_RW_SITE_COUNTRY, {"filters": [{"column": "dropouts", "op": "<", "value": "40"}], "fn": "every",
                                    "column": "site", "answer_column": "site", "check": {"op": "=", "value": "every"}},
                 ("All sites had fewer than 40 dropouts.",
                  {"filters": [], "column": "dropouts", "answer_column": None, "check": {"op": "<", "value": "40"}}),
                 ("Sites had fewer than 60 dropouts.", None,
                  {"filters": [{"column": "dropouts", "op": "<", "value": "60"}], "fn": "every", "column": "site",
                   "answer_column": "site", "check": {"op": "=", "value": "site"}})),
             after=("quantifier",)),
    _rewrite("self-filtered-every", "claim",
             "an \"every\" check on a numeric column with a filter on that column that implies the check",
             "\"Is it true that all synthetic statins lower LDL by more than 45%?\" checked over rows filtered LDL > "
             "45",
             _rw(_RW_DRUG_CLASS_2, {"filters": [{"column": "class", "op": "=", "value": "Synthetic"},
                                                {"column": "ldl_reduction", "op": ">", "value": "45"}],
                                    "fn": "every", "column": "ldl_reduction", "answer_column": "drug",
                                    "check": {"op": ">=", "value": "45"}},
                 ("Is it true that all synthetic statins lower LDL by more than 45%?",
                  {"filters": [{"column": "class", "op": "=", "value": "Synthetic"}]}),
                 ("Is it true that every synthetic statin lowers LDL by more than 40%?", None,
                  {"filters": [{"column": "class", "op": "!=", "value": "Fungal-derived"}], "fn": "every",
                   "column": "ldl_reduction", "answer_column": "drug", "check": {"op": ">", "value": "40"}}))),
    _rewrite("named-row-every", "claim",
             "a claim about one named row written as \"every\" or \"only\": a count of that row meeting the filters",
             "\"Panthera leo atrox is found in North America.\" read as every North American species being it "
             "(PubHealthTab)",
             _rw(_RW_SPECIES_REGION, {"filters": [{"column": "region", "op": "=", "value": "North America"}],
                                      "fn": "every", "column": "species", "answer_column": "species",
                                      "check": {"op": "=", "value": "Arctodus simus"}},
                 ("Arctodus simus lived in North America.",
                  {"filters": [{"column": "region", "op": "=", "value": "North America"},
                               {"column": "species", "op": "=", "value": "Arctodus simus (short-faced bear)"}],
                   "fn": "count", "check": {"op": ">=", "value": "1"}}),
                 ("Cats were found in North America.", None,
                  {"filters": [{"column": "region", "op": "=", "value": "North America"}], "fn": "every",
                   "column": "species", "answer_column": "species",
                   "check": {"op": "=", "value": "Smilodon fatalis"}}))),
    _rewrite("stated-fraction", "claim",
             "a check of a share column against the fraction the claim states (\"more than half\"): in the column's "
             "scale",
             "\"Poland generated more than half of its electricity from coal\" checked 61.0% against 0.5",
             _rw(_RW_COUNTRY_TOTAL_TWH_2, {"filters": [{"column": "country", "op": "=", "value": "Germany"}],
                                           "fn": "value", "column": "coal_share", "answer_column": "country",
                                           "check": {"op": "=", "value": "0.25"}},
                 ("About a quarter of Germany's electricity came from coal.",
                  {"check": {"op": "=", "value": "25", "relative_tolerance": 0.1}}),
                 ("Spain made more than half of the electricity.", None,
                  {"filters": [{"column": "country", "op": "=", "value": "Spain"}], "fn": "value",
                   "column": "total_twh", "answer_column": "country", "check": {"op": ">", "value": "0.5"}}))),
    _rewrite("stated-fraction-of-rows", "claim",
             "a count (or an \"every\") checked against the claim's share of the rows (\"most\", \"half of\")",
             "\"most vaccines had an efficacy above 80%\" written as \"every one has Efficacy > 80\"",
             _rw(_RW_HOSPITAL_BEDS_2, {"fn": "every", "column": "beds", "answer_column": "hospital",
                                       "check": {"op": ">", "value": "300"}},
                 ("Most hospitals have more than 300 beds.",
                  {"filters": [{"column": "beds", "op": ">", "value": "300"}], "fn": "count",
                   "check": {"op": ">", "value": "3"}}),
                 ("St. Mary's has 30% of all beds.", None,
                  {"filters": [{"column": "hospital", "op": "=", "value": "St. Mary's"}], "fn": "value",
                   "column": "beds", "answer_column": "hospital", "check": {"op": ">", "value": "0.333"}}))),
    _rewrite("share-of-total", "claim",
             "a value of some rows checked for a claim that states a fraction of all of the column: that share of its "
             "total",
             "\"St Mary accounts for more than a third of all beds\" supported by St Mary's 310 beds > 0.333",
             _rw(_RW_HOSPITAL_BEDS_2, {"filters": [{"column": "hospital", "op": "=", "value": "Mercy Central"}],
                                       "fn": "value", "column": "beds", "answer_column": "hospital",
                                       "check": {"op": ">", "value": "600"}},
                 ("Mercy Central has over a quarter of the beds in the city.",
                  {"fn": "sum", "check": {"op": ">", "against": "total", "value": "beds", "factor": 0.25}}),
                 ("A majority of the hospitals with beds are teaching ones.", None))),
    _rewrite("multiplier", "claim",
             "a check against another row or column for a claim that states a multiple (\"twice\", \"5% higher\")",
             "\"South has twice as many general beds as East\" checked as South's beds = East's",
             _rw(_RW_MONTH_REFERRALS, {"filters": [{"column": "month", "op": "=", "value": "2024-05"}], "fn": "value",
                                       "column": "referrals", "answer_column": "month",
                                       "check": {"op": ">", "against": "row", "value": "2024-03"}},
                 ("Referrals in May were more than 5% higher than in March.",
                  {"check": {"op": ">", "against": "row", "value": "2024-03", "factor": 1.05}}),
                 ("Referrals in May were higher than in March.", None))),
    _rewrite("ratio-multiple", "claim",
             "a check of a ratio column against the multiple the claim states (\"nearly eight times\"): the claim's "
             "comparison",
             "\"Fever was more than seven times as common with the vaccine\" (Relative risk 7.3) held out as the "
             "multiple itself",
             _rw(_RW_EVENT_VACCINE_N_1_20_2, {"filters": [{"column": "event", "op": "=", "value": "Fever"}],
                                              "fn": "value", "column": "relative_risk",
                                              "check": {"op": "=", "value": "8"}},
                 ("Fever was nearly eight times as common with the vaccine.",
                  {"check": {"op": "=", "value": "8", "relative_tolerance": 0.15}}),
                 ("Fever was more than eight times as common with the vaccine as with placebo.", None,
                  {"filters": [{"column": "event", "op": "=", "value": "Fever"}], "fn": "value",
                   "column": "relative_risk", "check": {"op": ">", "value": "8"}}))),
    _rewrite("others-combined", "claim",
             "\"X had more than the other <group> combined\": the others' sum without X, compared with X",
             "\"Nigeria had more births than all the other African countries combined\" read as Africa's sum, Nigeria "
             "in it",
             _rw(_RW_COUNTRY_WHO_REGION, {"filters": [{"column": "who_region", "op": "=", "value": "Africa"}],
                                          "fn": "sum", "column": "births_thousands", "answer_column": "country",
                                          "check": {"op": ">", "against": "row", "value": "Ethiopia"}},
                 ("Ethiopia had more births than the other African countries combined.",
                  {"filters": [{"column": "who_region", "op": "=", "value": "Africa"},
                               {"column": "country", "op": "!=", "value": "Ethiopia"}],
                   "check": {"op": "<", "against": "row", "value": "Ethiopia"}}),
                 ("Africa had more births than Nigeria.", None,
                  {"filters": [{"column": "who_region", "op": "=", "value": "Africa"}], "fn": "sum",
                   "column": "births_thousands", "answer_column": "country",
                   "check": {"op": ">", "against": "row", "value": "Nigeria"}}))),
    _rewrite("negated-existence", "claim",
             "\"there is no …\", \"no <row> had …\": the number of rows with the condition = 0",
             "\"There is no phase 4 trial.\" supported, 3 votes to 2, by \"the number of different Trial != 4\"",
             _rw(_RW_TRIAL_PHASE, {"fn": "value", "column": "phase", "answer_column": "phase",
                                   "check": {"op": "=", "value": "4"}},
                 ("There is no phase 4 trial.",
                  {"filters": [{"column": "phase", "op": "=", "value": "4"}], "fn": "count",
                   "check": {"op": "=", "value": "0"}}),
                 ("No trial had a dropout rate above 50%.", None,
                  {"fn": "value", "column": "dropout_rate", "answer_column": "dropout_rate",
                   "check": {"op": "<=", "value": "40"}}))),
    _rewrite("no-value", "claim",
             "\"Zika caused no deaths\": the named row's value of the column after \"no\" = 0, not a count of its rows",
             "\"Zika caused no deaths\" read as \"rows where Outbreak = 'Zika' -> the number of rows = 0\", false of "
             "any table",
             _rw(_RW_OUTBREAK_COUNTRY, {"filters": [{"column": "outbreak", "op": "=", "value": "Mpox"}], "fn": "count",
                                        "column": "deaths", "answer_column": "outbreak",
                                        "check": {"op": "=", "value": "0"}},
                 ("Mpox caused no deaths.", {"fn": "value"}),
                 ("Mpox caused no deaths.", None,
                  {"filters": [{"column": "outbreak", "op": "=", "value": "Mpox"}], "fn": "value", "column": "deaths",
                   "answer_column": "outbreak", "check": {"op": "=", "value": "0"}}))),
    _rewrite("interval-inclusion", "claim",
             "a claim that an interval includes or excludes a number: the count of the row's intervals holding it",
             "\"The confidence interval for men included 1.\" supported by \"upper bound >= 1\" alone",
             _rw(_RW_SUBGROUP_HAZARD_RATIO_9, {"filters": [{"column": "subgroup", "op": "=", "value": "Men"}],
                                               "fn": "value", "column": "c5_95_ci_upper_bound",
                                               "answer_column": "subgroup", "check": {"op": ">=", "value": "1"}},
                 ("The confidence interval for men included 1.",
                  {"filters": [{"column": "subgroup", "op": "=", "value": "Men"},
                               {"column": "c4_95_ci_lower_bound", "op": "<=", "value": "1.00"},
                               {"column": "c5_95_ci_upper_bound", "op": ">=", "value": "1.00"}],
                   "fn": "count"}),
                 ("The upper bound of the confidence interval for men is at least 1.", None))),
    _rewrite("each-as-extreme", "claim",
             "a sum or mean of several rows against another row when the claim says each (\"both\") is above or below",
             "\"Both legumes have more fibre than oats\" supported by the legumes' summed fibre, though each has less",
             _rw(_RW_FOOD_CATEGORY_2, {"filters": [{"column": "category", "op": "=", "value": "Legume"}], "fn": "sum",
                                       "column": "fibre_g", "answer_column": "food",
                                       "check": {"op": "<", "against": "row", "value": "Oats"}},
                 ("Each legume has less fibre than oats.", {"fn": "max"}),
                 ("The legumes combined have more fibre than oats.", None,
                  {"filters": [{"column": "category", "op": "=", "value": "Legume"}], "fn": "sum", "column": "fibre_g",
                   "answer_column": "food", "check": {"op": ">", "against": "row", "value": "Oats"}}))),
    _rewrite("named-value-row", "claim",
             "a value check over several rows holding different values when the claim names one of them",
             "\"Septicemia has a 1.4% death rate\" checked over all fifteen rows (PubHealthTab's tuning split)",
             _rw(_RW_FORMAL_NAME_INFORMAL_NAME, {"fn": "value", "column": "all_deaths",
                                                 "check": {"op": "=", "value": "7.6%"}},
                 ("Stroke causes 7.6% of deaths",
                  {"filters": [{"column": "informal_name", "op": "=", "value": "stroke"}]}),
                 ("Diseases have a 1.4% death rate", None,
                  {"fn": "value", "column": "all_deaths", "check": {"op": "=", "value": "1.4%"}}))),
    _rewrite("rough-value", "claim",
             "an equality check against a number the claim writes as rough (\"about\", \"roughly\"): held within 5%",
             "\"Stroke caused roughly 30,000 deaths in 2022.\" refuted by 3 of 4 programs against the cell 29,800",
             _rw(_RW_CAUSE_OF_DEATH_DEATHS_2022, {"filters": [{"column": "cause_of_death", "op": "=", "value": "COPD"}],
                                                  "fn": "value", "column": "share_of_all_deaths",
                                                  "answer_column": "share_of_all_deaths",
                                                  "check": {"op": "=", "value": "5"}},
                 ("COPD accounts for about 5% of all deaths.",
                  {"check": {"op": "=", "value": "5", "relative_tolerance": 0.1}}),
                 ("COPD accounts for 5% of all deaths.", None))),
)


def _check_rewrites(rewrites: Iterable[Rewrite], order: dict[str, tuple[str, ...]]) -> dict[str, Rewrite]:
    """Names are unique and each is a reader that ``order`` applies (questions' and claims' names, in order), as the
    record says; each takes (program, typed, text) and returns a program; each has an example that it rewrites; and
    the order satisfies every ``after``: each name declared is a rewrite, none in a cycle, and where both apply to a
    kind, the one declared applies first."""
    registry: dict[str, Rewrite] = {}
    for rewrite in rewrites:
        if rewrite.name in registry:
            raise ValueError(f"rewrite rule {rewrite.name!r} is declared twice")
        signature = inspect.signature(rewrite.fn)
        try:
            signature.bind(None, None, "")
        except TypeError:
            raise TypeError(f"rewrite rule {rewrite.name!r} does not take (program, typed, text)") from None
        if tuple(signature.parameters)[:2] != REWRITE_PARAMETERS or signature.return_annotation not in ("Program",
                                                                                                      Program):
            raise TypeError(f"rewrite rule {rewrite.name!r}: a rewrite takes (program, typed, text) and returns a "
                            f"Program, not {signature}")
        kinds = [kind for kind, names in order.items() if rewrite.name in names]
        applies = {0: None, 1: kinds[0] if kinds else None, 2: "both"}[len(kinds)]
        if applies != rewrite.applies_to:
            raise ValueError(f"rewrite rule {rewrite.name!r} applies to {applies or 'nothing'}, not "
                             f"{rewrite.applies_to}")
        if not any(e.expected is not None for e in rewrite.examples):
            raise ValueError(f"rewrite rule {rewrite.name!r} has no example that it rewrites")
        registry[rewrite.name] = rewrite
    if unrecorded := sorted(set().union(*order.values()) - set(registry)):
        raise ValueError(f"program readers with no rewrite record: {', '.join(unrecorded)}")
    for rewrite in registry.values():
        if missing := [n for n in rewrite.after if n not in registry]:
            raise ValueError(f"rewrite rule {rewrite.name!r} is after {', '.join(missing)}, which are no rewrite rules")
    _refuse_cycles(registry)
    for kind, names in order.items():
        place = {name: i for i, name in enumerate(names)}
        for name in names:
            if late := [n for n in registry[name].after if n in place and place[n] > place[name]]:
                raise ValueError(f"rewrite rule {name!r} reads the output of {', '.join(late)}, which the "
                                 f"{kind}s' order applies after it")
    return registry


def _refuse_cycles(registry: dict[str, Rewrite]) -> None:
    """Raise when a rewrite is, through ``after``, after itself (no order could apply it)."""
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"rewrite rules in a cycle: {' -> '.join(path[path.index(name):] + (name,))}")
        if name not in done:
            for before in registry[name].after:
                visit(before, path + (name,))
            done.add(name)

    for name in registry:
        visit(name, ())


APPLIED_ORDER = {"question": tuple(reader_name(r) for r in QUESTION_READERS),
                 "claim": tuple(reader_name(r) for r in CLAIM_READERS)}
REWRITE_REGISTRY: dict[str, Rewrite] = _check_rewrites(REWRITE_RULES, APPLIED_ORDER)
if clash := sorted(set(REGISTRY) & set(REWRITE_REGISTRY)):
    raise ValueError(f"a rewrite rule and a settle, veto, withhold or annotate rule share the name(s) "
                     f"{', '.join(clash)}")


def parse_off(value: str | Iterable[str]) -> frozenset[str]:
    """The names in ``EVIDENTIA_RULES_OFF`` ("trend-every-period,stated-bound"): settle, veto, withhold, annotate and
    rewrite rules. An unknown name is an error, so a typo does not silently leave a rule on."""
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value) if n and n.strip()]
    unknown = sorted(set(names) - set(REGISTRY) - set(REWRITES))
    if unknown:
        raise ValueError(f"unknown rule name(s) {', '.join(unknown)}; the rules are: {', '.join(REGISTRY)}; "
                         f"the rewrite rules: {', '.join(sorted(REWRITES))}")
    return frozenset(names)


@dataclass(frozen=True)
class Fired:
    rule: str
    verdict: str
    cells: list[tuple[int, int]]
    reason: str


@dataclass(frozen=True)
class Settlement:
    """What the settle stage made of a claim: ``decided`` when the rules that fired agree, else None."""

    fired: tuple[Fired, ...] = ()

    @property
    def conflict(self) -> bool:
        return len({f.verdict for f in self.fired}) > 1

    @property
    def decided(self) -> Fired | None:
        return self.fired[0] if self.fired and not self.conflict else None

    @property
    def names(self) -> list[str]:
        return [f.rule for f in self.fired]


def settle(claim: str, table: Table, off: frozenset[str] = frozenset(), rules: Iterable[Rule] = RULES) -> Settlement:
    """Run every settle rule that is not switched off on ``claim`` over ``table`` (see the conflict policy above)."""
    fired = []
    for rule in rules:
        if rule.stage != "settle" or rule.name in off:
            continue
        out = rule.fn(claim, table)
        if out is not None:
            fired.append(Fired(rule.name, out.verdict, list(out.cells), out.reason))
    settlement = Settlement(tuple(fired))
    if settlement.conflict:
        log.info("settle rules disagree on %r: %s; the programs decide",
                 claim, ", ".join(f"{f.rule} {f.verdict}" for f in fired))
    return settlement


@dataclass(frozen=True)
class Vetoed:
    rule: str
    reason: str


def veto(program: Program, execution: Execution, typed: TypedTable, text: str,
         off: frozenset[str] = frozenset(), rules: Iterable[Rule] = RULES) -> list[Vetoed]:
    """Every veto rule that is not switched off, run on one claim program that ran: those that hold it, in order
    (a union: the program does not vote when any does)."""
    held = []
    for rule in rules:
        if rule.stage == "veto" and rule.name not in off and (reason := rule.fn(program, execution, typed, text)):
            held.append(Vetoed(rule.name, reason))
    return held


@dataclass(frozen=True)
class Withheld:
    rule: str
    run: int  # its place in the sampling
    reason: str


def withhold(runs: Sequence[SampledRun], typed: TypedTable, kind: Kind, text: str,
             off: frozenset[str] = frozenset(), rules: Iterable[Rule] = RULES) -> list[Withheld]:
    """Every withhold rule for ``kind`` that is not switched off, in order, over the runs of one sampling: the runs
    each holds from the vote, with why. A run one rule holds no longer votes, so the rules after it see it as not
    run (the order is data: :data:`WITHHOLDS`)."""
    runs = list(runs)
    held = []
    for rule in rules:
        if rule.stage != "withhold" or rule.applies_to != kind or rule.name in off:
            continue
        reasons = rule.fn(runs, typed, text)
        if len(reasons) != len(runs):
            raise ValueError(f"withhold rule {rule.name!r} gave {len(reasons)} reasons for {len(runs)} runs")
        for i, why in enumerate(reasons):
            if why and runs[i].votes:
                held.append(Withheld(rule.name, i, why))
                runs[i] = replace(runs[i], execution=None)
    return held


def annotate(program: Program, execution: Execution, typed: TypedTable, kind: Kind, text: str,
             off: frozenset[str] = frozenset(), rules: Iterable[Rule] = RULES) -> tuple[Execution, list[str]]:
    """Every annotate rule for ``kind`` that is not switched off, in order, on one run: the run with their notes
    merged, and the names of the rules that added to it. Each rule reads the run as the program computed it, so none
    depends on another's note. A note's reason phrases and steps follow the run's own, and its cells not yet cited
    follow the run's; nothing else of the run can change, so its result, truth and rows stay the program's."""
    cells, reason, steps = list(execution.cells), list(execution.bounds), list(execution.steps)
    added = []
    for rule in rules:
        if rule.stage != "annotate" or rule.applies_to != kind or rule.name in off:
            continue
        note = rule.fn(program, execution, typed, text)
        if note is not None and not isinstance(note, Note):
            raise TypeError(f"annotate rule {rule.name!r} returned a {type(note).__name__}, not a Note")
        if not note:
            continue
        for cell in note.cells:
            if cell not in cells:
                cells.append(cell)
        reason += note.reason
        steps += note.steps
        added.append(rule.name)
    return (replace(execution, cells=cells, bounds=reason, steps=steps) if added else execution), added


def _wrapped(reader: Callable) -> Callable:
    """The rule function a reader wraps to fit the common signature (``_multiplier`` calls ``read_multiplier``):
    the one whose docstring and module the catalogue shows; the reader itself when it has a docstring."""
    if reader.__doc__:
        return reader
    for name in reader.__code__.co_names:
        fn = reader.__globals__.get(name)
        if callable(fn) and getattr(fn, "__doc__", None) and name.startswith(("read_", "add_")):
            return fn
    return reader


_KINDS = {"question": "questions", "claim": "claims", "both": "questions and claims"}


def catalogue() -> str:
    """``docs/rules.md``: every rule's name, stage, what it reads, where it came from, and one example."""
    lines = ["# Rules", "",
             "Generated from `tools/rules.py` by `evidentia rules --write` (a test fails when this file and the "
             "registry disagree). Switch rules off by name with `EVIDENTIA_RULES_OFF=name,...`; measure them with "
             "`evidentia eval rules`.", "",
             "| rule | stage | reads | came from | example |", "|---|---|---|---|---|"]
    for rule in RULES:
        ex = next(e for e in rule.examples if e.expected is not None)
        cell = f"“{ex.text}” → {ex.expected}"
        stage = rule.stage
        if rule.stage == "withhold":
            cell += f" {', '.join(str(i + 1) for i in ex.held)} of its {len(ex.programs)} programs"
            stage += f" ({rule.applies_to}s)"
        if rule.stage == "annotate" and ex.note is not None:
            cited = ", ".join(f"R{r}C{c}" for r, c in ex.note.cells)
            cell = f"“{ex.text}” → adds “{'; '.join(ex.note.reason)}”" + (f", cites {cited}" if cited else "")
            stage += f" ({rule.applies_to}s)"
        lines.append(f"| `{rule.name}` | {stage} | {rule.reads} | {rule.came_from} | {cell} |")
    lines += ["", "## Rewrite rules", "",
              ("The program readers of `tools/_program_readers.py` as records, in the order they apply (questions, "
               "then the claims' own): each rewrites a sampled program to compute what the text states or asks, and "
               "returns it unchanged when its form is absent; each run records the ones that changed it "
               "(`rewritten_by`). *after* names the rewrites whose output one reads, which must apply before it "
               "(checked when the registry loads). The example gives the fields of the program the rule sets."), "",
              "| rule | applies to | module | reads | came from | after | example |", "|---|---|---|---|---|---|---|"]
    for rewrite in REWRITE_RULES:
        ex = next(e for e in rewrite.examples if e.expected is not None)
        fields = "; ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in ex.expected.items())
        after = ", ".join(f"`{n}`" for n in rewrite.after)
        cells = [f"`{rewrite.name}`", _KINDS[rewrite.applies_to], f"`{_wrapped(rewrite.fn).__module__}`",
                 rewrite.reads, rewrite.came_from, after, f"“{ex.text}” → `{fields}`"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
