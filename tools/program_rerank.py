"""An execution-aware reranker of sampled table programs (#77, after LEVER, arXiv 2302.08468): a small learned scorer
that sees what each program computed and how it reads the text, and chooses among the sampled programs instead of
a bare majority plus hand-written withholding rules.

Each program that ran is described by a few features (:data:`FEATURES`): its vote share, its operation, whether the
values it filters on and the value it checks are ones the text states, whether the text names the column it reads,
whether its answer is the kind the question asks for, how many rows it selected, how long it is, how many rewrite
rules changed it. A logistic regression gives each the probability that it is right; a verdict's score is the sum
over the programs that gave it (LEVER's aggregation), and the highest wins. The coefficients are fitted on tuning
logs only (assistant.evals.program_rerank, ``evidentia kb programs rerank``) and ship as a small file beside this
module; the features are computed in tools._rerank, for the live path and the fitting alike.
"""

from __future__ import annotations

from kb.tables import Table
from tools._cells import TypedTable
from tools._program_readers import Kind
from tools._rerank import FEATURES, RERANKER_FILE, Reranker, ScoredRun, choose_by, run_features
from tools._table_program import _Sampled, kept_scope, voted_answers
from tools._table_shape import shape_for_programs
from tools.program_replay import replayed_samples

__all__ = ["FEATURES", "RERANKER_FILE", "Reranker", "ScoredRun", "choose_by", "features_of", "replayed_features"]


def features_of(sampled: list[_Sampled], typed: TypedTable, kind: Kind, text: str) -> list[ScoredRun]:
    """The features of each sampled program that ran, with its answer as the vote counts it."""
    return run_features(sampled, voted_answers(sampled, kind), typed, kind, text)


def replayed_features(table: Table, text: str, runs: list[dict], kind: Kind, scope: tuple[int, ...] = (),
                      rules_off: frozenset[str] = frozenset()) -> list[ScoredRun]:
    """The features of logged programs (each run's ``raw``, as the model wrote it) replayed under today's rules."""
    shaped = shape_for_programs(table)
    typed = TypedTable.build(shaped.table, scope=kept_scope(shaped, scope))
    return features_of(replayed_samples(typed, text, runs, kind, rules_off), typed, kind, text)


