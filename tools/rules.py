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

The other stages the reading layer names (rewrite, veto, withhold, annotate) are still code paths in
``tools/_table_program.py`` and ``tools/verify_claim.py``; they become records here as they are moved.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from kb.tables import Table
from tools._claim_association import association_check
from tools._claim_significance import significance_check
from tools._claim_trend import trend_check
from tools._dose_trend import dose_trend_check
from tools._range_cells import range_duration_check
from tools._ratio_reduction import ratio_change_check
from tools._record_claims import record_check
from tools._value_in_range import range_check

log = logging.getLogger(__name__)

Stage = Literal["settle"]
STAGE_PARAMETERS: dict[str, tuple[str, ...]] = {"settle": ("claim", "table")}


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
    expected: str | None

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
             ("Sodium is outside its normal range.", "REFUTES")),
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
)


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


def parse_off(value: str | Iterable[str]) -> frozenset[str]:
    """The names in ``EVIDENTIA_RULES_OFF`` ("trend-every-period,association"); an unknown name is an error, so
    a typo does not silently leave a rule on."""
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value) if n and n.strip()]
    unknown = sorted(set(names) - set(REGISTRY))
    if unknown:
        raise ValueError(f"unknown rule name(s) {', '.join(unknown)}; the rules are: {', '.join(REGISTRY)}")
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
    return "\n".join(lines) + "\n"
