"""``mc_answer``: answer a multiple-choice question from the knowledge base.

Stage 1 retrieves evidence for every (question, option) pair with the text search. Then, by default
(``Settings.mc_decider = "likelihood"``), code compares the model's probabilities of the options after that
evidence and cites the sentences that raise the chosen one (``tools._mc``). The thesis's USCRaKE
stages 2–3 (``"judge"``: one reasoning chain per option, then a schema-constrained judge that writes one letter and
the ids) stay as the other decider; they are used as well where the server gives no prompt log-probabilities.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from kb.errors import LLMResponseError
from kb.instructions import instruction_cue
from tools._mc import CitationBy, DecidedBy, MCResult, choose_by_likelihood, choose_option
from tools.registry import ToolContext, ToolError, tool
from tools.intent import question_stem
from tools.text_search import DEFAULT_METHOD, EMPTY_KB_MESSAGE, Method, rank_kb


class Input(BaseModel):
    question: str = Field(description="The question stem.")
    options: dict[str, str] = Field(description='Option letter -> option text, e.g. {"A": "flowers", "B": "rocks"}.')
    k_per_option: int = Field(default=3, ge=1, le=10, description="Evidence sentences per option.")
    method: Method = Field(default=DEFAULT_METHOD, description="Retrieval method.")
    chains: bool = Field(default=True, description="Write one reasoning chain per option before judging.")


class Output(BaseModel):
    choice: str
    answer: str = Field(description="The chosen option's text.")
    cited: list[str] = Field(default_factory=list, description="Sentence ids supporting the choice.")
    evidence: list[str] = Field(default_factory=list, description="All sentence ids retrieved.")
    chains: dict[str, str] = Field(default_factory=dict)
    confidence: float = 0.0
    tied: list[str] = Field(default_factory=list)
    judge_failed: bool = Field(default=False, description="The judge's output was unusable; evidence overlap chose.")
    rejected_citations: list[str] = Field(default_factory=list, description="Ids the judge cited that were not retrieved.")
    decided_by: DecidedBy = Field(default="model", description="'fallback': word overlap, not the model, chose.")
    citation_by: CitationBy = Field(default="model", description="'code': word overlap, not the model, chose the "
                                                                 "citation; 'none': nothing cited.")
    scores: dict[str, float] = Field(
        default_factory=dict, description="Likelihood decider: per option, how much the evidence raises it (nats).")
    fact_gains: dict[str, float] = Field(default_factory=dict,
                                         description="Likelihood decider: per sentence id, how much it alone raises "
                                                     "the chosen option (nats).")

    def reply(self) -> str:
        """The cited reply shown to the user (the loop still checks its citations)."""
        if self.decided_by == "likelihood":
            return self._likelihood_reply()
        cites = "".join(f"[{c}]" for c in self.cited)
        text = f"**{self.choice}) {self.answer}** {cites}".strip()
        if self.tied:
            # The tie is word overlap: the evidence names these options equally, which is not support (seen:
            # "supports options A, C, D about equally well" where it said wood and rubber are insulators).
            text += (f"\n\nThe evidence names options {', '.join(self.tied)} equally often, so word overlap cannot "
                     "separate them: this choice rests on the model's reading of it and is uncertain.")
        if self.decided_by == "fallback":
            text += ("\n\n(Answer chosen by word overlap, not by the model: the model's judgement could not be "
                     "read, so the option whose evidence overlaps it most was chosen; treat this answer as "
                     "unverified by the model.)")
        if self.citation_by == "code":
            text += ("\n\n(Citation chosen by word overlap, not by the model: the model cited no retrieved "
                     "sentence, so the one sharing the most words with the answer is shown.)")
        return text

    def _likelihood_reply(self) -> str:
        if not self.cited:
            # One sentence that says the evidence does not settle it: the lean is not an answer.
            return (f"The evidence I found does not settle this: no sentence in it makes option {self.choice}) "
                    f"{self.answer} likelier to the model than the question alone does.")
        cites = "".join(f"[{c}]" for c in self.cited)
        ranked = sorted(self.scores.items(), key=lambda kv: -kv[1])
        cited_say = "the cited sentences each" if len(self.cited) > 1 else "the cited sentence"
        text = (f"**{self.choice}) {self.answer}** {cites}\n\nHow it was chosen: after this evidence the model finds "
                f"option {self.choice} likeliest, relative to how likely each option is on its own ("
                + ", ".join(f"{lab} {val:+.1f}" for lab, val in ranked)
                + f" nats); {cited_say} alone makes it likelier.")
        if self.tied:
            text += (f" Options {', '.join(self.tied)} score within a tenth of a nat of each other, so the evidence "
                     "hardly separates them: treat this choice as uncertain.")
        return text


def retrieve_for_options(ctx: ToolContext, question: str, options: dict[str, str], k: int, method: Method):
    """Evidence for every (question, option) pair, registered in the ledger, deduplicated, in order."""
    store = ctx.deps.text_kb
    store.attach_embedder(ctx.deps.embedder)
    if store.is_empty:
        raise ToolError(EMPTY_KB_MESSAGE)
    evidence, seen = [], set()
    for label, option in options.items():
        ranked = rank_kb(store, f"{question} {option}", k, method)
        for h in store.hits(ranked.rows, ranked.scores):
            if instruction_cue(h.text):  # written to an AI system, not evidence (kb.instructions)
                continue
            ev = ctx.evidence.add_kb_sentence(h, score=h.score, option=label)
            if ev.id not in seen:
                seen.add(ev.id)
                evidence.append(ev)
    return evidence


@tool("mc_answer", cpu_bound=False)
async def mc_answer(ctx: ToolContext, args: Input) -> Output:
    """Answer a multiple-choice question: retrieve evidence per option, reason per option, judge, cite."""
    options = {k.strip(): v.strip() for k, v in args.options.items() if k.strip() and v.strip()}
    if len(options) < 2:
        raise ToolError("A multiple-choice question needs at least two non-empty options.")
    # The stem alone: a question that still lists its options ("… best? A) wood B) copper …", as the chat's rewrite
    # does) was scored as a sentence the option continues after the list, and its retrieval mixed every option in.
    question = question_stem(args.question)
    if not question:
        raise ToolError("The question is empty.")
    ctx.report(f"retrieving evidence for {len(options)} options")
    evidence = await asyncio.to_thread(retrieve_for_options, ctx, question, options, args.k_per_option, args.method)
    result = await decide(ctx, question, options, evidence, chains=args.chains)
    return Output(choice=result.choice, answer=options[result.choice], cited=result.cited,
                  evidence=[e.id for e in evidence], chains=result.chains, confidence=result.confidence,
                  tied=result.tied, judge_failed=result.judge_failed, rejected_citations=result.rejected_citations,
                  decided_by=result.decided_by, citation_by=result.citation_by, scores=result.scores,
                  fact_gains=result.fact_gains)


async def decide(ctx: ToolContext, question: str, options: dict[str, str], evidence, *, chains: bool) -> MCResult:
    """The configured decider (``Settings.mc_decider``); the judge where the server gives no log-probabilities."""
    if ctx.deps.settings.mc_decider == "likelihood":
        ctx.report("scoring each option's likelihood after the evidence")
        try:
            return await choose_by_likelihood(ctx.deps.llm, question, options, evidence)
        except LLMResponseError as exc:
            ctx.report(f"no log-probabilities from the server ({exc}); the judge decides instead")
    ctx.report("reasoning per option and judging")
    return await choose_option(ctx.deps.llm, question, options, evidence, chains=chains)
