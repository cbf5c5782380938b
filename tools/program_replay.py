"""Replay logged table programs under the current vote rules: measure a rule without asking the model again.

Each table evaluation logs every sampled program as the model wrote it (``runs[].raw``). Replaying runs those
programs again through :func:`tools._table_program.run_sampled` and :func:`tools._table_program.decide`, so a
change to how programs are read, run or voted is measured on the same samples, paired, in seconds.

A question is replayed as the chat asks it (tools.table_qa): with the options its form offers ("above or
below …?"), over the rows those name, and the computed answer is then matched to an option in code; the vote
alone would leave "5" where the run answered "above".

A logged question whose split vote had a second batch sampled (``batches``: [5, 5]) is replayed as the chat would
run it: the first batch alone, and both only where the first splits. One logged with a single batch that now
splits cannot have its second batch replayed (it was never sampled).

The reranker's features (tools.program_rerank) are computed here for sampled and for logged programs alike
(:func:`features_of`, :func:`replayed_features`), since both need the vote, which lives above the reranker.

What a replay cannot know: the model's own answer for a question whose logged vote was decided by the programs
but whose replayed vote splits (the fallback was never asked). Such questions are counted apart
(``needs_model``) and scored as wrong, so the replayed accuracy is a lower bound.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from kb.tables import Table
from tools._cells import TypedTable
from tools._program_readers import Kind
from tools._table_program import ProgramOutcome, _Sampled, decide, decided_by_form, kept_scope, run_sampled, \
    split_vote, to_original, voted_answers
from tools.program_rerank import ScoredRun, run_features
from tools._table_shape import shape_for_programs
from tools.table_qa import answer_from_program, program_task, question_options


@dataclass
class ReplayResult:
    items: int = 0
    logged_correct: int = 0
    replayed_correct: int = 0
    needs_model: int = 0
    changed: list[dict] = field(default_factory=list)  # {"id", "question", "gold", "logged", "replayed", ...}
    held: dict[str, Counter] = field(default_factory=dict)  # by item id: programs each veto rule held
    withheld: dict[str, Counter] = field(default_factory=dict)  # by item id: programs each withhold rule held
    rewritten: dict[str, Counter] = field(default_factory=dict)  # by item id: programs each rewrite rule changed
    predictions: dict[str, str | None] = field(default_factory=dict)  # by item id: the replayed answer (_tally)
    what: str = "questions"

    def echo_changes(self, echo) -> None:
        """Each changed answer, marked gained, lost or same score, then the summary line."""
        for ch in self.changed:
            mark = {(True, False): "lost", (False, True): "gained"}.get(
                (ch["logged_correct"], ch["replayed_correct"]), "same score")
            echo(f"  {ch['id']} [{mark}] {str(ch['question'])[:90]!r}: {ch['logged']!r} -> {ch['replayed']!r} "
                 f"(gold {ch['gold']}); votes {ch['votes']}")
        echo(self.summary())

    def summary(self) -> str:
        n = max(self.items, 1)
        return (f"{self.items} logged {self.what} with ops programs: accuracy as logged {self.logged_correct / n:.3f} "
                f"({self.logged_correct}), replayed under the current rules {self.replayed_correct / n:.3f} "
                f"({self.replayed_correct}); {self.needs_model} now split with no logged model answer (scored wrong); "
                f"{len(self.changed)} answers changed")


def replay_runs(table, text: str, runs: list[dict], kind: str = "question",
                scope: tuple[int, ...] = (), batches: list[int] | None = None,
                rules_off: frozenset[str] = frozenset()) -> ProgramOutcome:
    """The vote the logged ``runs`` (each with the model's ``raw`` program) give under the current rules;
    ``kind`` is "question" (table QA) or "claim" (verification); ``scope``: the rows the programs range over, as
    in :func:`tools._table_program.solve`; ``batches``: the logged samples per request, of which the first is
    voted alone and the rest join it only where it splits (module docstring); ``rules_off``: veto, withhold and
    rewrite rules switched off (tools/rules.py), to measure what one is worth."""
    shaped = shape_for_programs(table)
    typed = TypedTable.build(shaped.table, scope=kept_scope(shaped, scope))
    if (settled := decided_by_form(typed, kind, text, rules_off)) is not None:  # as the live path: none is voted
        outcome = ProgramOutcome(kind=kind, form=shaped.form, by_form=True)
        decide(outcome, [settled], typed, kind, text, rules_off)
        outcome.batches = [1]
        return to_original(outcome, shaped)
    sampled = replayed_samples(typed, text, runs, kind, rules_off)
    first = batches[0] if batches and len(batches) > 1 else len(sampled)
    outcome = ProgramOutcome(kind=kind, form=shaped.form)
    decide(outcome, sampled[:first], typed, kind, text, rules_off)
    outcome.batches = [first]
    if split_vote(outcome) and len(sampled) > first:
        outcome = ProgramOutcome(kind=kind, form=shaped.form)
        decide(outcome, sampled, typed, kind, text, rules_off)
        outcome.batches = [first, len(sampled) - first]
    return to_original(outcome, shaped)


def replayed_samples(typed: TypedTable, text: str, runs: list[dict], kind: str = "question",
                     rules_off: frozenset[str] = frozenset()) -> list[_Sampled]:
    """The logged ``runs`` (each with the model's ``raw`` program and, when logged, its log-probability) read and run
    again under the current rules, as sampled programs."""
    return [replace(run_sampled(r["raw"], typed, kind, text, rules_off), logprob=r.get("logprob")) if r.get("raw")
            else _Sampled(None, error=r.get("error") or "no program") for r in runs]


def replay_question(table, question: str, runs: list[dict], batches: list[int] | None = None
                    ) -> tuple[str | None, ProgramOutcome]:
    """The answer the logged ``runs`` (sampled in ``batches``) give today, asked as the chat asks (module
    docstring), and the vote; the answer is None where the model would answer (the vote splits, or matches none of
    the options)."""
    options, rows_named = question_options(question, table)
    outcome = replay_runs(table, program_task(question, options), runs, "question", tuple(sorted(rows_named)),
                          batches)
    computed = answer_from_program(table, question, options, outcome, 0.0, rows_named)
    return (computed.answer if computed is not None else None), outcome


def _tally(out: ReplayResult, rec: dict, outcome: ProgramOutcome, *, item_id: str, text: str, gold,
           logged_ok: bool, match, answer: str | None) -> None:
    """Score one replayed record: the ``answer`` computed today, else (None) the logged fallback answer, else
    counted as needing the model (a record the programs decided that now splits: its fallback was never asked)."""
    out.items += 1
    out.logged_correct += logged_ok
    if answer is not None:
        pred = answer
    elif rec.get("decided_by") == "program":
        out.needs_model += 1
        pred = None
    else:
        pred = rec["pred"]  # the model's (or the judge's) answer, which the logged run fell back to as well
    out.predictions[item_id] = pred
    correct = pred is not None and match(pred, gold)
    out.replayed_correct += correct
    if pred != rec["pred"]:
        out.changed.append({"id": item_id, "question": text, "gold": gold, "logged": rec["pred"], "replayed": pred,
                            "logged_correct": logged_ok, "replayed_correct": correct, "votes": outcome.votes})


def replay_claims(items, records: list[dict], rules_off: frozenset[str] = frozenset()) -> ReplayResult:
    """Replay the logged claim checks of a program variant; a claim the programs decided before and that now
    splits would go to the CCoE fallback, which a replay cannot ask: counted in ``needs_model``, scored wrong.
    A claim decided by the fallback before keeps its logged label when the replay splits too."""
    by_id = {it.id: it for it in items}
    out = ReplayResult(what="claims")
    for rec in records:
        item = by_id.get(str(rec["id"]))
        programs = rec.get("programs") or {}
        if item is None or not programs.get("runs") or programs.get("program_form", "ops") != "ops":
            continue
        outcome = replay_runs(item.table, item.claim, programs["runs"], "claim", rules_off=rules_off)
        out.held[item.id] = Counter(name for run in outcome.runs for name in run.vetoed_by)
        out.withheld[item.id] = Counter(name for run in outcome.runs for name in run.withheld_by)
        out.rewritten[item.id] = Counter(name for run in outcome.runs for name in run.rewritten_by)
        _tally(out, rec, outcome, item_id=item.id, text=item.claim, gold=rec["gold"],
               logged_ok=rec["pred"] == rec["gold"], match=lambda pred, gold: pred == gold, answer=outcome.winner)
    return out


def replay_wtq(items, records: list[dict], match) -> ReplayResult:
    """Replay the logged ``records`` of the ``program`` variant; ``match(pred, gold)`` scores an answer."""
    by_id = {it.id: it for it in items}
    out = ReplayResult()
    for rec in records:
        item = by_id.get(rec["id"])
        programs = rec.get("programs") or {}
        if item is None or programs.get("program_form", "ops") != "ops" or programs.get("not_in_table"):
            continue
        answer, outcome = replay_question(item.table, item.question, programs.get("runs") or [],
                                          programs.get("batches"))
        _tally(out, rec, outcome, item_id=item.id, text=item.question, gold=item.answers,
               logged_ok=bool(rec["correct"]), match=match, answer=answer)
    return out


def features_of(sampled: list[_Sampled], typed: TypedTable, kind: Kind, text: str) -> list[ScoredRun]:
    """The reranker's features of each sampled program that ran, with its answer as the vote counts it."""
    return run_features(sampled, voted_answers(sampled, kind), typed, kind, text)


def replayed_features(table: Table, text: str, runs: list[dict], kind: Kind, scope: tuple[int, ...] = (),
                      rules_off: frozenset[str] = frozenset()) -> list[ScoredRun]:
    """The reranker's features of logged programs (each run's ``raw``, as the model wrote it) replayed under
    today's rules."""
    shaped = shape_for_programs(table)
    typed = TypedTable.build(shaped.table, scope=kept_scope(shaped, scope))
    return features_of(replayed_samples(typed, text, runs, kind, rules_off), typed, kind, text)
