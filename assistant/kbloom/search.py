"""Stage 2 of K-Bloom (methods.md §5): find entity pairs the model finds likely under the weighted prompts.

1. **Propose.** For each weighted prompt, the seed pairs filled into it form a short list; the model
   continues the list by sampling (``n`` samples in one request), and every complete line that fills
   the prompt yields a candidate pair. Pairs are proposed until ``target`` distinct ones are found or
   ``max_rounds`` requests have gone by.
2. **Score and keep.** A pair's score under prompt ``p`` is the sum of the log-probabilities of its
   entity tokens in ``context(p) + fill(p, pair)``, from the server's prompt log-probabilities; the
   context is ``context_seeds`` seed pairs filled into ``p``, one per line. The heap score is
   ``sum_p w_p * score_p`` over the prompts in weight order. Each term is <= 0, so the running sum only
   falls: after each prompt a pair that can no longer enter its heap is pruned (:mod:`.heaps`) and its
   remaining prompts are never scored.

Pairs are scored in batches (one request per prompt per batch), best-proposed first, so the heaps fill
with likely pairs early and later ones are pruned sooner. Each batch's outcome is a record; replaying
the records rebuilds the heaps exactly, which is what a resumed harvest does.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel

from assistant.kbloom.heaps import TupleHeaps, shape_of
from assistant.kbloom.text import fill_spans, line_pattern, pairs_in_lines, seed_form
from kb.kg_harvest import PromptWeight, RelationDefinition


class ScoredPair(BaseModel):
    """One pair's outcome: its score under each prompt it reached (weight order), and its line's log-probs."""

    head: str
    tail: str
    logliks: list[float]  # entity log-likelihood per scored prompt
    tokens: list[int]  # entity tokens per scored prompt
    line_logprob: float  # mean log-probability of the whole filled line under the first prompt
    pruned_after: int | None = None  # prompts scored before pruning; None if all were

    @property
    def pair(self) -> tuple[str, str]:
        return (self.head, self.tail)


@dataclass
class SearchConfig:
    target: int = 300  # distinct proposals wanted
    samples_per_request: int = 8
    sample_tokens: int = 64
    temperature: float = 1.0
    max_rounds: int = 60
    context_seeds: int = 2
    batch: int = 16
    heap_capacity: int = 1000
    entity_cap: int = 10
    seed: int = 0


def context(template: str, seeds: list[tuple[str, str]]) -> str:
    return "".join(fill_spans(template, h, t)[0] + "\n" for h, t in seeds)


def weighted_score(logliks: list[float], prompts: list[PromptWeight]) -> float:
    return sum(w.weight * ll for w, ll in zip(prompts, logliks))


def per_token_score(rec: ScoredPair, prompts: list[PromptWeight]) -> float:
    """Weighted mean log-probability per entity token over the prompts reached (likelihood-only ranking)."""
    ws = [w.weight for w in prompts[:len(rec.logliks)]]
    total = sum(ws) or 1.0
    return sum(w * ll / max(n, 1) for w, ll, n in zip(ws, rec.logliks, rec.tokens)) / total


def entity_loglik(token_lp, spans: list[tuple[int, int]], line_start: int) -> tuple[float, int, float]:
    """(sum of log-probs of tokens overlapping ``spans``, their count, mean log-prob of the line's tokens)."""
    total, count, line = 0.0, 0, []
    ends = token_lp.offsets[1:] + [len(token_lp.text)]
    for start, end, lp in zip(token_lp.offsets, ends, token_lp.logprobs):
        if lp is None or end <= line_start:
            continue
        line.append(lp)
        if any(start < b and end > a for a, b in spans):
            total += lp
            count += 1
    return total, count, (sum(line) / len(line) if line else 0.0)


UNKNOWN_LOGPROB = -1e9  # finite, so checkpoints stay valid JSON


@dataclass
class ProposalState:
    """Distinct proposed pairs: how often each was sampled, the best mean log-probability of a line that
    proposed it (from the sampled tokens' log-probabilities), and how many requests were made."""

    counts: Counter = field(default_factory=Counter)
    best: dict[tuple[str, str], float] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)
    rounds: int = 0

    def add(self, pair: tuple[str, str], line_logprob: float = UNKNOWN_LOGPROB, count: int = 1) -> None:
        if pair not in self.counts:
            self.order.append(pair)
        self.counts[pair] += count
        self.best[pair] = max(self.best.get(pair, UNKNOWN_LOGPROB), line_logprob)

    def ranked(self) -> list[tuple[str, str]]:
        """Most often sampled first, then the likelier line, then the order of first proposal: the heaps then
        fill with likely pairs early, and the later, weaker ones are pruned sooner."""
        first = {p: i for i, p in enumerate(self.order)}
        return sorted(self.order, key=lambda p: (-self.counts[p], -self.best[p], first[p]))


def line_logprob(sample, start: int, end: int) -> float:
    """Mean log-probability of the sampled tokens overlapping ``[start, end)`` (UNKNOWN_LOGPROB if none)."""
    ends = sample.offsets[1:] + [len(sample.text)]
    lps = [lp for a, b, lp in zip(sample.offsets, ends, sample.logprobs) if a < end and b > start and lp is not None]
    return sum(lps) / len(lps) if lps else UNKNOWN_LOGPROB


def usable(pair: tuple[str, str], seeds: list[tuple[str, str]]) -> bool:
    """One- or two-word entities, and not the seeds again: neither a seed pair nor two seed entities recombined.

    Seen with the 1.5B model on PartOf: the few-shot list's own entities came back swapped ("dead sea is a part
    of movie"), and the semantic score, which compares with the seeds, ranked such pairs near the top.
    """
    seed_entities = {seed_form(e) for s in seeds for e in s}
    return shape_of(*pair) is not None and not (seed_form(pair[0]) in seed_entities
                                                and seed_form(pair[1]) in seed_entities)


async def propose(definition: RelationDefinition, prompts: list[PromptWeight], llm, cfg: SearchConfig,
                  state: ProposalState, on_round=None) -> ProposalState:
    """Sample until ``cfg.target`` distinct usable pairs (or ``cfg.max_rounds`` requests), continuing ``state``."""
    seeds = list(definition.seed_ent_tuples)
    patterns = [line_pattern(p.prompt) for p in prompts]
    while len(state.order) < cfg.target and state.rounds < cfg.max_rounds:
        template = prompts[state.rounds % len(prompts)].prompt
        shuffled = seeds[:]
        random.Random(cfg.seed * 100_003 + state.rounds).shuffle(shuffled)
        samples = await llm.sample_text(context(template, shuffled), n=cfg.samples_per_request,
                                        max_tokens=cfg.sample_tokens, temperature=cfg.temperature,
                                        seed=cfg.seed * 100_003 + state.rounds)
        for s in samples:
            for pattern in patterns:  # a line may fill any of the prompts, not only the one shown
                for pair, start, end in pairs_in_lines(s.text, pattern):
                    if usable(pair, seeds):
                        state.add(pair, line_logprob(s, start, end))
        state.rounds += 1
        if on_round:
            on_round(state)
    return state


def replay(records: list[ScoredPair], prompts: list[PromptWeight], cfg: SearchConfig) -> TupleHeaps:
    """The heaps as they stand after ``records`` (fully scored ones are offered in order)."""
    heaps = TupleHeaps(capacity=cfg.heap_capacity, entity_cap=cfg.entity_cap)
    for rec in records:
        if rec.pruned_after is None:
            heaps.push(rec.pair, weighted_score(rec.logliks, prompts))
    return heaps


async def score_batch(pairs: list[tuple[str, str]], definition: RelationDefinition, prompts: list[PromptWeight],
                      llm, heaps: TupleHeaps, cfg: SearchConfig) -> list[ScoredPair]:
    """Score one batch prompt by prompt, pruning between prompts; push survivors; return the records."""
    seeds = [s for s in definition.seed_ent_tuples][:cfg.context_seeds]
    recs = {p: ScoredPair(head=p[0], tail=p[1], logliks=[], tokens=[], line_logprob=0.0) for p in pairs}
    alive = [p for p in pairs if shape_of(*p) is not None and not heaps.at_cap(p)]
    for p in pairs:
        if p not in alive:
            recs[p].pruned_after = 0
    for j, pw in enumerate(prompts):
        if not alive:
            break
        ctx = context(pw.prompt, seeds)
        filled = [fill_spans(pw.prompt, *p) for p in alive]
        lps = await llm.prompt_logprobs([ctx + text for text, _ in filled])
        survivors = []
        for p, (_, spans), lp in zip(alive, filled, lps):
            ll, n, line = entity_loglik(lp, [(a + len(ctx), b + len(ctx)) for a, b in spans], len(ctx))
            rec = recs[p]
            rec.logliks.append(ll)
            rec.tokens.append(n)
            if j == 0:
                rec.line_logprob = line
            running = weighted_score(rec.logliks, prompts)
            if j + 1 < len(prompts) and heaps.can_prune(shape_of(*p), running):
                rec.pruned_after = j + 1
            else:
                survivors.append(p)
        alive = survivors
    for p in alive:
        heaps.push(p, weighted_score(recs[p].logliks, prompts))
    return [recs[p] for p in pairs]
