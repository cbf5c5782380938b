"""Multiple-choice answering over evidence: the judge's choice (USCRaKE stages 2-3), and the choice decided by the
model's probabilities, computed in code.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass
from typing import Literal

from prompts import render
from pydantic import BaseModel, Field, create_model

from tools.contracts import Evidence, cited_ids


# ======================================================================================================================
# Multiple-choice answering over evidence (USCRaKE stages 2–3).
#
# Stage 2 writes one short reasoning chain per option ("link the question to this candidate using the
# evidence; do not say whether it is correct"); the chains are requested concurrently. Stage 3 is a judge
# whose output is schema-constrained to one of the option letters, plus the evidence ids it relies on.
#
# Citations are data: every id the chains or the judge cite is checked against the evidence given, and
# unknown ids are dropped (and reported in ``MCResult.rejected_citations``).
#
# Public entry point: :func:`choose_option` (also used by the KG and MedQA code).
# ======================================================================================================================

# Small prompts for a 1.5B CPU model: the evidence shown per prompt and its length are capped.
MAX_EVIDENCE_IN_PROMPT = 8
MAX_EVIDENCE_CHARS = 240
CHAIN_MAX_TOKENS = 90
JUDGE_MAX_TOKENS = 60
CONFIDENCE_VALUE = {"low": 0.4, "medium": 0.65, "high": 0.85}

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of to in on at for and or is are was were be been it its this that these those with by from as "
    "which what who whom whose when where why how do does did not no can could would should will may might "
    "has have had they them their there than then so if but into about".split())


# Who made a decision: a fallback choice must never be scored or shown as the model's own.
# "likelihood": code compared the model's probabilities of the options (tools._mc), and cited the facts
# that raise the chosen one; "model": the judge wrote the letter and the ids.
DecidedBy = Literal["model", "likelihood", "fallback"]
CitationBy = Literal["model", "likelihood", "code", "none"]


class MCResult(BaseModel):
    """The outcome of one multiple-choice question."""

    choice: str = Field(description="The chosen option letter.")
    chains: dict[str, str] = Field(default_factory=dict, description="Reasoning chain per option letter.")
    cited: list[str] = Field(default_factory=list, description="Evidence ids cited, all present in the evidence.")
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    tied: list[str] = Field(default_factory=list,
                            description="Option letters equally supported by the evidence, when several are.")
    support: dict[str, float] = Field(default_factory=dict,
                                      description="Lexical evidence support per option (0..1), model-free.")
    rejected_citations: list[str] = Field(default_factory=list, description="Cited ids not in the evidence.")
    judge_failed: bool = Field(default=False, description="The judge's output was unusable; support decided.")
    cited_by_support: bool = Field(default=False,
                                   description="The model cited nothing valid; the best-overlapping evidence is cited.")
    decided_by: DecidedBy = Field(default="model",
                                  description="'fallback' when word overlap, not the model, chose the option.")
    citation_by: CitationBy = Field(default="model",
                                    description="'code' when word overlap, not the model, chose the citation; "
                                                "'none' when nothing is cited.")
    scores: dict[str, float] = Field(
        default_factory=dict, description="Per option, the likelihood decider's score (nats; higher is likelier).")
    fact_gains: dict[str, float] = Field(
        default_factory=dict, description="Per evidence id, how much it alone raises the chosen option (nats).")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def evidence_support(options: dict[str, str], evidence: list[Evidence]) -> dict[str, float]:
    """Per option: the best fraction of the option's content words found in one evidence text.

    Model-free and deterministic; it breaks ties and backs up the judge when its output is unusable.
    """
    texts = [_content_words(e.text) for e in evidence]
    support: dict[str, float] = {}
    for label, option in options.items():
        words = _content_words(option)
        if not words or not texts:
            support[label] = 0.0
            continue
        support[label] = max(len(words & t) / len(words) for t in texts)
    return support


def _prompt_evidence(evidence: list[Evidence]) -> list[dict[str, str]]:
    shown = []
    for e in evidence[:MAX_EVIDENCE_IN_PROMPT]:
        text = e.text if len(e.text) <= MAX_EVIDENCE_CHARS else e.text[:MAX_EVIDENCE_CHARS - 1] + "…"
        shown.append({"id": e.id, "text": text})
    return shown


def _judge_schema(labels: list[str]) -> type[BaseModel]:
    # The letter is an enum in the JSON schema, so constrained decoding can only produce a valid option.
    return create_model(
        "MCJudgement",
        answer=(Literal[tuple(labels)], ...),
        evidence=(list[str], Field(default_factory=list, max_length=5)),
        confidence=(Literal["low", "medium", "high"], "medium"),
    )


async def _chain(llm, question: str, label: str, option: str, shown: list[dict[str, str]]) -> str:
    prompt = render("mc_chain", question=question, label=label, option=option, evidence=shown)
    text = await llm.complete([{"role": "user", "content": prompt}], max_tokens=CHAIN_MAX_TOKENS)
    return text.strip()


def _split_citations(ids: list[str], known: set[str]) -> tuple[list[str], list[str]]:
    valid, invalid = [], []
    for i in ids:
        i = i.strip().strip("[]")
        (valid if i in known else invalid).append(i)
    return list(dict.fromkeys(valid)), list(dict.fromkeys(invalid))


async def choose_option(llm, question: str, options: dict[str, str], evidence: list[Evidence], *,
                        chains: bool = True) -> MCResult:
    """Pick one option for a multiple-choice question, citing evidence.

    Parameters
    ----------
    llm : assistant.llm.LLMClient
        The client (``ctx.deps.llm``).
    question : str
        The question stem.
    options : dict[str, str]
        Option letter -> option text, e.g. ``{"A": "flowers", "B": "rocks"}``.
    evidence : list[Evidence]
        Evidence already registered in the turn's ledger (their ids are what may be cited).
    chains : bool
        Write one reasoning chain per option first (USCRaKE); False asks the judge directly.

    Returns
    -------
    MCResult
        ``choice`` is always one of ``options``' keys. ``cited`` holds only ids present in ``evidence``.

    Raises
    ------
    ValueError
        With no options.
    kb.errors.LLMUnavailable
        When the server cannot be reached (a structured-output failure falls back to the support score).
    """
    from kb.errors import LLMResponseError

    if not options:
        raise ValueError("choose_option needs at least one option")
    labels = list(options)
    known = {e.id for e in evidence}
    shown = _prompt_evidence(evidence)
    support = evidence_support(options, evidence)

    chain_texts: dict[str, str] = {}
    if chains:
        texts = await asyncio.gather(*(_chain(llm, question, lab, options[lab], shown) for lab in labels))
        chain_texts = dict(zip(labels, texts))

    judge_prompt = render("mc_judge", question=question, evidence=shown,
                          options=[{"label": lab, "text": options[lab], "chain": chain_texts.get(lab, "")}
                                   for lab in labels])
    judge_failed = False
    judged_ids: list[str] = []
    try:
        verdict = await llm.structured([{"role": "user", "content": judge_prompt}], _judge_schema(labels),
                                       max_tokens=JUDGE_MAX_TOKENS)
        choice = verdict.answer
        judged_ids = list(verdict.evidence)
        confidence = CONFIDENCE_VALUE[verdict.confidence]
    except LLMResponseError:
        # Unusable output (also any HTTP 4xx from the server): fall back to the model-free support score
        # (first best option wins), marked decided_by="fallback" so nobody counts it as the model's answer.
        judge_failed = True
        choice = max(labels, key=lambda lab: support[lab])
        confidence = 0.25

    chain_ids = cited_ids(chain_texts.get(choice, ""))
    cited, rejected = _split_citations(judged_ids + chain_ids, known)
    for lab in labels:  # ids invented in the other chains are rejected as well
        rejected += [i for i in cited_ids(chain_texts.get(lab, "")) if i not in known and i not in rejected]

    cited_by_support = False
    if not cited and evidence:
        # The model cited nothing usable: cite the evidence that shares the most words with the chosen
        # option (ties: question words, then order), so the answer still points at its support.
        opt_words, q_words = _content_words(options[choice]), _content_words(question)
        scored = [(len(opt_words & (w := _content_words(e.text))), len(q_words & w), -i, e.id)
                  for i, e in enumerate(evidence)]
        top = max(scored)
        if top[0] > 0:
            cited, cited_by_support = [top[3]], True
    best = max(support.values())
    tied = [lab for lab in labels if support[lab] == best] if best > 0 else []
    if len(tied) < 2:
        tied = []
    citation_by: CitationBy = "code" if cited_by_support else ("model" if cited else "none")
    return MCResult(choice=choice, chains=chain_texts, cited=cited, confidence=confidence, tied=tied,
                    support=support, rejected_citations=rejected, judge_failed=judge_failed,
                    cited_by_support=cited_by_support, decided_by="fallback" if judge_failed else "model",
                    citation_by=citation_by)


# ======================================================================================================================
# Multiple choice decided by the model's probabilities, computed in code (no judgement written in prose).
#
# Asked to *write* which option is right (chains, then a judge), the 1.5B code model is no better than a constant:
# over the default KB it was right on 6 of the first 24 OpenBookQA dev questions. Its *probabilities* carry more:
# each option is scored by how much the retrieved facts and the question raise its log-probability over the option
# on its own (pointwise mutual information, which cancels the prior of short, common words),
#
#     score(o) = log P(o | facts, question) - log P(o | "Answer:")
#
# and the highest score wins: right on 14 of the same 24 (McNemar p = 0.02), and on 0.60 of the first 60, where
# always giving the most frequent letter scores 0.30. A stem ending in "?" is read as "Question: …\nAnswer: <option>"
# (right on 18 of 27 such dev questions, against 9 as a continuation); a fragment as the sentence the option
# completes. The measurements are in docs/eval/obqa-dev-mc-decider.md.
#
# The citation is computed too: a fact is cited when, shown alone, it makes the chosen option likelier than the
# question alone does (``gain``). An option no single fact raises is chosen without support, and says so.
#
# Public entry point: :func:`choose_by_likelihood`; it returns :class:`MCResult`.
# ======================================================================================================================

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
    """Pick the option the facts make likeliest (section comment) and cite the facts that raise it.

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
