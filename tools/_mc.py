"""Multiple-choice answering over evidence (USCRaKE stages 2–3).

Stage 2 writes one short reasoning chain per option ("link the question to this candidate using the
evidence; do not say whether it is correct"); the chains are requested concurrently. Stage 3 is a judge
whose output is schema-constrained to one of the option letters, plus the evidence ids it relies on.

Citations are data: every id the chains or the judge cite is checked against the evidence given, and
unknown ids are dropped (and reported in ``MCResult.rejected_citations``).

Public entry point: :func:`choose_option` (also used by the KG and MedQA code).
"""

from __future__ import annotations

import asyncio
import re
from typing import Literal

from pydantic import BaseModel, Field, create_model

from tools.contracts import Evidence, cited_ids
from prompts import render

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
# "likelihood": code compared the model's probabilities of the options (tools._mc_likelihood), and cited the facts
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
