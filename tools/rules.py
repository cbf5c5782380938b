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

The other stages the reading layer names are elsewhere: rewrite rules are the program readers of
``tools/_program_readers.py`` (named, traced and switched off by name, not records yet); annotate is still code
paths in ``tools/verify_claim.py`` and ``tools/table_qa.py``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import comparison_blocker, counts_of_compared_row, unnamed_row_blocker
from tools._claim_counts import fraction_of_rows_blocker, ignored_category_blocker, named_rows_blocker, \
    quantity_count_blocker
from tools._claim_grounding import copied_beside_stated, direction_blocker, negated_count_blocker, tautology_blocker, \
    vote_blocker
from tools._claim_multiples import multiple_blocker, ratio_change_check
from tools._grounding import less_grounded, wrong_answer_kind
from tools._program_readers import REWRITES, Kind, header_of
from tools._question_dates import leaves_out_stated_date
from tools._question_rules import other_column_ranked
from tools._settle_rules import association_check, dose_trend_check, range_check, range_duration_check, record_check, \
    significance_check, trend_check
from tools._table_ops import execute
from tools._table_ops_model import Execution, Program

log = logging.getLogger(__name__)

Stage = Literal["settle", "veto", "withhold"]
STAGE_PARAMETERS: dict[str, tuple[str, ...]] = {"settle": ("claim", "table"),
                                                "veto": ("program", "execution", "typed", "text"),
                                                "withhold": ("runs", "typed", "text")}


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
    expected: str | None  # a settle rule's verdict; "veto" for a veto rule that holds the program
    program: dict | None = None  # a veto rule's input: the program as the model wrote it
    # the claim's own verdict over the table, where it is plain (a veto example's, to check the claim end to end
    # with the rule on and off: ``evidentia eval rules --examples``); a settle example's is ``expected``
    verdict: str | None = None
    # a withhold rule's input: the programs of one sampling as the model wrote them; ``expected`` is "withhold"
    # when the rule holds some, and ``held`` says which (their places in ``programs``)
    programs: tuple[dict, ...] = ()
    held: tuple[int, ...] = ()

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
    applies_to: Kind = "claim"  # settle and veto rules read claims; a withhold rule reads claims or questions


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
_SECOND = {"filters": [], "fn": "argmax", "answer_column": "hospital", "nth": 2}
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
) + VETOES + WITHHOLDS


def _check_registry(rules: Iterable[Rule]) -> dict[str, Rule]:
    """Names are unique, each stage's functions take its parameters, every rule has an example that fires, and a
    withhold rule's examples say which of their programs it holds."""
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
        if rule.stage != "withhold" and rule.applies_to != "claim":
            raise ValueError(f"rule {rule.name!r}: only a withhold rule reads questions")
        if rule.stage == "withhold" and any((e.expected == "withhold") != bool(e.held) or not e.programs
                                            or not set(e.held) <= set(range(len(e.programs)))
                                            for e in rule.examples + rule.counter_examples):
            raise ValueError(f"rule {rule.name!r}: a withhold example holds some of its programs, says which, "
                             "and is \"withhold\" exactly then")
        registry[rule.name] = rule
    return registry


REGISTRY: dict[str, Rule] = _check_registry(RULES)
# The rewrite stage's rules are the program readers of tools._program_readers, named after their functions; they
# are not records yet (no examples here: their tests are per module), but they are traced (``rewritten_by``),
# switched off and measured by the same names.
if clash := sorted(set(REGISTRY) & set(REWRITES)):
    raise ValueError(f"a rewrite rule and a settle, veto or withhold rule share the name(s) {', '.join(clash)}")


def parse_off(value: str | Iterable[str]) -> frozenset[str]:
    """The names in ``EVIDENTIA_RULES_OFF`` ("trend-every-period,stated-bound"): settle, veto, withhold and rewrite
    rules. An unknown name is an error, so a typo does not silently leave a rule on."""
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
        lines.append(f"| `{rule.name}` | {stage} | {rule.reads} | {rule.came_from} | {cell} |")
    lines += ["", "## Rewrite rules", "",
              "The program readers of `tools/_program_readers.py`, in the order they apply (questions, then the claims' "
              "own): each rewrites a sampled program to compute what the text states or asks, and returns it "
              "unchanged when its form is absent. Named after their functions; each run records the ones that "
              "changed it (`rewritten_by`). Their examples are still in their modules' tests, not records here.", "",
              "| rule | applies to | module | what it reads |", "|---|---|---|---|"]
    from tools._program_readers import CLAIM_READERS, QUESTION_READERS, reader_name

    for name, reader in REWRITES.items():
        kinds = " and ".join(k for k, readers in (("questions", QUESTION_READERS), ("claims", CLAIM_READERS))
                             if reader in readers)
        source = _wrapped(reader)
        doc = " ".join((source.__doc__ or "").split("\n\n")[0].split()).replace("|", "\\|")
        assert reader_name(reader) == name
        lines.append(f"| `{name}` | {kinds} | `{source.__module__}` | {doc or '(no docstring)'} |")
    return "\n".join(lines) + "\n"
