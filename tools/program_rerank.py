"""An execution-aware reranker of sampled table programs (#77, after LEVER, arXiv 2302.08468): a small learned scorer
that sees what each program computed and how it reads the text, and chooses among the sampled programs instead of
a bare majority plus hand-written withholding rules.

Each program that ran is described by a few features (:data:`FEATURES`): its vote share, its operation, whether the
values it filters on and the value it checks are ones the text states, whether the text names the column it reads,
whether its answer is the kind the question asks for, how many rows it selected, how long it is, how many rewrite
rules changed it. A logistic regression gives each the probability that it is right; a verdict's score is the sum
over the programs that gave it (LEVER's aggregation), and the highest wins. The coefficients are fitted on tuning
logs only (assistant.evals.program_rerank, ``evidentia kb programs rerank``) and ship as a small file beside this
module. The features of a sampled or logged program are computed here (:func:`run_features`), for the live path
(tools._table_program's vote) and the fitting (tools.program_replay.replayed_features) alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Protocol, get_args

import numpy as np

from tools._cells import TypedTable, norm_text
from tools._claim_grounding import check_stated, stated_numbers
from tools._claim_grounding import _stated as value_stated
from tools._grounding import expected_answer, fits
from tools._program_readers import Kind, header_of
from tools._table_ops_model import Execution, Fn, Program
from tools.lang.reading import read_against


class Sampled(Protocol):
    """What the features read of one sampled program (tools._table_program._Sampled)."""

    program: Program | None
    execution: Execution | None
    raw: dict
    rewritten_by: list[str]
    logprob: float | None


RERANKER_FILE = Path(__file__).with_name("program_reranker.npz")
FUNCTIONS: tuple[str, ...] = get_args(Fn)
FEATURES: tuple[str, ...] = (
    "vote_share",  # the share of the programs that ran which gave its answer
    "plurality",  # its answer has the most votes (ties count)
    "filters",  # how many conditions select its rows
    "filter_values_stated",  # the share of its filter values the text states (1 with no filter)
    "check_stated",  # a claim's check compares with what the claim states (questions: 1)
    "column_named",  # the text names the column it reads
    "answer_kind_fits",  # its answer is the kind a question's form asks for (a number, a name); 1 when none
    "log_rows_selected",
    "all_rows_selected",
    "empty_result",
    "rewrites",  # how many rewrite rules changed it
    "program_chars_per_100",
    "mean_logprob",  # the mean log-probability of its tokens as sampled (LEVER's p_LM); 0 when unknown
    "logprob_known",
) + tuple(f"fn_{name}" for name in FUNCTIONS)


@dataclass
class ScoredRun:
    """A program that ran, with its answer, its features and (when fitted) the probability that it is right."""

    index: int  # its place among the sampled programs
    verdict: str
    features: np.ndarray
    p_right: float | None = None


def run_features(sampled: list[Sampled], verdicts: list[str], typed: TypedTable, kind: Kind, text: str
                 ) -> list[ScoredRun]:
    """The features of each sampled program that ran (in sampled order); ``verdicts``: each one's answer as voted."""
    ran = [i for i, s in enumerate(sampled) if s.execution is not None and s.program is not None]
    if not ran:
        return []
    votes: dict[str, int] = {}
    for i in ran:
        votes[verdicts[i]] = votes.get(verdicts[i], 0) + 1
    top = max(votes.values())
    named = {m.ident for m in read_against(text, typed).columns}
    numbers = stated_numbers(text)
    asked = expected_answer(text) if kind == "question" else None
    normal_text = norm_text(text)
    out = []
    for i in ran:
        s = sampled[i]
        program, execution = s.program, s.execution
        assert program is not None and execution is not None
        values = [f.value for f in program.filters if not f.than_column]
        stated = [value_stated(v, text, numbers) or (norm_text(v) and norm_text(v) in normal_text) for v in values]
        result = str(execution.result_text or "")
        row = {
            "vote_share": votes[verdicts[i]] / len(ran),
            "plurality": float(votes[verdicts[i]] == top),
            "filters": float(len(program.filters)),
            "filter_values_stated": sum(map(bool, stated)) / len(stated) if stated else 1.0,
            "check_stated": float(kind != "claim" or check_stated(program, text)),
            "column_named": float(program.column in named
                                  or norm_text(header_of(typed, program.column)) in normal_text),
            "answer_kind_fits": float(fits(verdicts[i], asked)),
            "log_rows_selected": math.log1p(len(execution.selected)),
            "all_rows_selected": float(len(execution.selected) >= typed.table.n_rows),
            "empty_result": float(not verdicts[i].strip()),
            "rewrites": float(len(s.rewritten_by)),
            "program_chars_per_100": len(str(s.raw)) / 100,
            "mean_logprob": s.logprob if s.logprob is not None else 0.0,
            "logprob_known": float(s.logprob is not None),
            **{f"fn_{name}": float(program.fn == name) for name in FUNCTIONS},
        }
        out.append(ScoredRun(i, verdicts[i], np.array([row[f] for f in FEATURES], dtype=np.float64)))
    return out


@dataclass
class Reranker:
    """A fitted scorer: standardisation, logistic coefficients, and what it was fitted on."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    fitted_on: str = ""

    def score(self, runs: list[ScoredRun]) -> list[ScoredRun]:
        for run in runs:
            z = float(((run.features - self.mean) / self.scale) @ self.coef + self.intercept)
            run.p_right = 1 / (1 + math.exp(-z))
        return runs

    def choose(self, runs: list[ScoredRun]) -> str | None:
        """The answer whose programs' probabilities sum highest (None when none ran)."""
        return choose_by(self.score(runs))

    def save(self, path: Path = RERANKER_FILE) -> None:
        np.savez(path, features=np.array(FEATURES), mean=self.mean, scale=self.scale, coef=self.coef,
                 intercept=np.array([self.intercept]), fitted_on=np.array([self.fitted_on]))

    @classmethod
    def load(cls, path: Path = RERANKER_FILE) -> Reranker:
        with np.load(path) as data:
            if tuple(data["features"]) != FEATURES:
                raise ValueError(f"{path} was fitted on other features; refit it (evidentia kb programs rerank)")
            return cls(data["mean"], data["scale"], data["coef"], float(data["intercept"][0]),
                       str(data["fitted_on"][0]))


def choose_by(runs: list[ScoredRun], weight: Callable[[ScoredRun], float] = lambda r: r.p_right or 0.0
              ) -> str | None:
    """The answer with the highest summed ``weight`` over its programs; ties go to the answer seen first."""
    totals: dict[str, float] = {}
    for run in runs:
        totals[run.verdict] = totals.get(run.verdict, 0.0) + weight(run)
    return max(totals, key=lambda v: totals[v]) if totals else None


@lru_cache(maxsize=4)
def load_reranker(path: Path = RERANKER_FILE) -> Reranker:
    """The shipped (or given) fitted reranker, read once; a missing file is an error that says what to do."""
    if not Path(path).exists():
        raise ValueError(f"No fitted program reranker at {path}: fit one with `evidentia kb programs rerank`, or "
                         "set EVIDENTIA_TABLE_CHOOSER=vote.")
    return Reranker.load(path)
