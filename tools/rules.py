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

The other stages the reading layer names (rewrite, withhold, annotate) are still code paths in
``tools/_table_program.py`` and ``tools/verify_claim.py``; they become records here as they are moved.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import comparison_blocker, unnamed_row_blocker
from tools._claim_counts import fraction_of_rows_blocker, ignored_category_blocker, named_rows_blocker, \
    quantity_count_blocker
from tools._claim_grounding import direction_blocker, negated_count_blocker, tautology_blocker, vote_blocker
from tools._claim_multiples import multiple_blocker, ratio_change_check
from tools._program_readers import REWRITES, header_of
from tools._settle_rules import association_check, dose_trend_check, range_check, range_duration_check, record_check, \
    significance_check, trend_check
from tools._table_ops import execute
from tools._table_ops_model import Execution, Program

log = logging.getLogger(__name__)

Stage = Literal["settle", "veto"]
STAGE_PARAMETERS: dict[str, tuple[str, ...]] = {"settle": ("claim", "table"),
                                                "veto": ("program", "execution", "typed", "text")}


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
) + VETOES


def _check_registry(rules: Iterable[Rule]) -> dict[str, Rule]:
    """Names are unique, each stage's functions take its parameters, and every rule has an example that fires."""
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
        registry[rule.name] = rule
    return registry


REGISTRY: dict[str, Rule] = _check_registry(RULES)
# The rewrite stage's rules are the program readers of tools._program_readers, named after their functions; they
# are not records yet (no examples here: their tests are per module), but they are traced (``rewritten_by``),
# switched off and measured by the same names.
if clash := sorted(set(REGISTRY) & set(REWRITES)):
    raise ValueError(f"a rewrite rule and a settle or veto rule share the name(s) {', '.join(clash)}")


def parse_off(value: str | Iterable[str]) -> frozenset[str]:
    """The names in ``EVIDENTIA_RULES_OFF`` ("trend-every-period,stated-bound"): settle, veto and rewrite rules. An
    unknown name is an error, so a typo does not silently leave a rule on."""
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
        lines.append(f"| `{rule.name}` | {rule.stage} | {rule.reads} | {rule.came_from} | {cell} |")
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
