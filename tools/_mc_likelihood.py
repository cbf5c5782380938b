"""Multiple choice decided by the model's probabilities, computed in code (no judgement written in prose).

Asked to *write* which option is right (chains, then a judge), the 1.5B code model is no better than a constant:
over the default KB it was right on 6 of the first 24 OpenBookQA dev questions. Its *probabilities* carry more:
each option is scored by how much the retrieved facts and the question raise its log-probability over the option
on its own (pointwise mutual information, which cancels the prior of short, common words),

    score(o) = log P(o | facts, question) - log P(o | "Answer:")

and the highest score wins: right on 14 of the same 24 (McNemar p = 0.02), and on 0.60 of the first 60, where
always giving the most frequent letter scores 0.30. A stem ending in "?" is read as "Question: …\nAnswer: <option>"
(right on 18 of 27 such dev questions, against 9 as a continuation); a fragment as the sentence the option
completes. The measurements are in docs/eval/obqa-dev-mc-decider.md.

The citation is computed too: a fact is cited when, shown alone, it makes the chosen option likelier than the
question alone does (``gain``). An option no single fact raises is chosen without support, and says so.

Public entry point: :func:`choose_by_likelihood`; it returns :class:`tools._mc.MCResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tools.contracts import Evidence
from prompts import render
from tools._mc import MAX_EVIDENCE_IN_PROMPT, MCResult, evidence_support

# Facts shown when scoring (all options see the same ones, so their scores compare). The evidence comes option by
# option, so the cap must hold every option's share (5 options x 3 sentences), or the last option's facts are cut.
MAX_FACTS = 20
MAX_FACT_CHARS = 240
# Options whose scores are this close (nats) are a tie: the probabilities do not separate them.
TIE_MARGIN = 0.1
# At most this many facts are cited, and each must raise the chosen option by more than MIN_GAIN nats.
MAX_CITED = 2
MIN_GAIN = 0.0


@dataclass
class OptionScore:
    """One option's log-probabilities (sums over its tokens)."""

    with_facts: float
    prior: float

    @property
    def pmi(self) -> float:
        return self.with_facts - self.prior


def _asks(question: str) -> bool:
    # A full question is scored as "Question: …\nAnswer: <option>"; a stem that the option completes ("The sun is
    # responsible for") as the sentence it makes.
    return question.rstrip().endswith("?")


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_FACT_CHARS else text[:MAX_FACT_CHARS - 1] + "…"


def _option_logprob(tl, start: int) -> float:
    """Sum of the log-probabilities of the tokens from character ``start`` on (the appended option)."""
    return sum(lp for lp, off in zip(tl.logprobs, tl.offsets) if off >= start and lp is not None)


async def _score(llm, prefixes_options: list[tuple[str, str]]) -> list[float]:
    """log P(option | prefix) for each pair, in one request (the server batches the prompts)."""
    prompts = [f"{prefix} {option}" for prefix, option in prefixes_options]
    scored = await llm.prompt_logprobs(prompts)
    # The option's first token carries the joining space (" copper"), so it starts at len(prefix).
    return [_option_logprob(tl, len(prefix)) for tl, (prefix, _) in zip(scored, prefixes_options)]


async def option_scores(llm, question: str, options: dict[str, str], facts: list[str]) -> dict[str, OptionScore]:
    """Each option's log-probability after the facts and the question, and on its own."""
    asks = _asks(question)
    prefix = render("mc_likelihood", facts=[_one_line(f) for f in facts], question=question.strip(), asks=asks)
    prior = render("mc_prior")
    labels = list(options)
    values = await _score(llm, [(prefix, options[lab]) for lab in labels] + [(prior, options[lab]) for lab in labels])
    return {lab: OptionScore(values[i], values[len(labels) + i]) for i, lab in enumerate(labels)}


async def fact_gains(llm, question: str, option: str, facts: list[str]) -> list[float]:
    """How much each fact, shown alone, raises ``option``'s log-probability over the question alone (nats)."""
    asks = _asks(question)
    q = question.strip()
    prefixes = [render("mc_likelihood", facts=[], question=q, asks=asks)]
    prefixes += [render("mc_likelihood", facts=[_one_line(f)], question=q, asks=asks) for f in facts]
    values = await _score(llm, [(p, option) for p in prefixes])
    return [v - values[0] for v in values[1:]]


def _confidence(scores: dict[str, OptionScore], choice: str) -> float:
    """The chosen option's share of exp(score) over all options (a softmax of the PMI scores)."""
    top = max(s.pmi for s in scores.values())
    weights = {lab: math.exp(s.pmi - top) for lab, s in scores.items()}
    return weights[choice] / sum(weights.values())


async def choose_by_likelihood(llm, question: str, options: dict[str, str], evidence: list[Evidence]) -> MCResult:
    """Pick the option the facts make likeliest (module docstring) and cite the facts that raise it.

    Parameters
    ----------
    llm : assistant.llm.LLMClient
        Needs :meth:`~assistant.llm.LLMClient.prompt_logprobs` (a server with text completions, ``echo`` and
        ``logprobs``, as vLLM has).
    question : str
        The question stem.
    options : dict[str, str]
        Option letter -> option text.
    evidence : list[Evidence]
        Evidence in the turn's ledger; the first ``MAX_FACTS`` are scored and may be cited.

    Returns
    -------
    MCResult
        ``decided_by="likelihood"``; ``cited`` holds the facts with a positive gain for the choice (best first),
        ``citation_by="likelihood"``, or nothing (``"none"``) when no fact raises it.
    """
    if not options:
        raise ValueError("choose_by_likelihood needs at least one option")
    shown = evidence[:MAX_FACTS]
    facts = [e.text for e in shown]
    scores = await option_scores(llm, question, options, facts)
    labels = list(options)
    choice = max(labels, key=lambda lab: (scores[lab].pmi, -labels.index(lab)))
    best = scores[choice].pmi
    tied = [lab for lab in labels if best - scores[lab].pmi < TIE_MARGIN]
    gains = await fact_gains(llm, question, options[choice], facts) if facts else []
    ranked = sorted(range(len(gains)), key=lambda i: (-gains[i], i))
    cited = [shown[i].id for i in ranked if gains[i] > MIN_GAIN][:MAX_CITED]
    return MCResult(choice=choice, cited=cited, confidence=round(_confidence(scores, choice), 3),
                    tied=tied if len(tied) > 1 else [], support=evidence_support(options, evidence),
                    decided_by="likelihood", citation_by="likelihood" if cited else "none",
                    scores={lab: round(s.pmi, 3) for lab, s in scores.items()},
                    fact_gains={shown[i].id: round(gains[i], 3) for i in ranked[:MAX_EVIDENCE_IN_PROMPT]})
