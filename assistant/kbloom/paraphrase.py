"""Stage 1 of K-Bloom (methods.md §5): paraphrase the initial prompt and weight the prompts.

For each of a few seed pairs the initial prompt is filled (``wheel is a part of car .``), KeyBERT picks
its keywords, and the served model writes sentences that keep them (reordered, synonyms allowed, both
entity names verbatim). Writing the entities back as slots turns each sentence into a candidate prompt.

Each candidate ``c`` is scored against the initial prompt ``s``, both filled with the same seeds:

    BERTScore(s, c) + sigmoid((1 + 0.01) / (BLEU(s, c) + 0.01)) + 1 / entropy

BERTScore is the greedy-matching F1 of the packaged sentence encoder's contextual token embeddings
(BERTScore's recipe with our encoder); BLEU is sacrebleu's sentence BLEU in [0, 1], so the middle term
rewards wording that differs from ``s`` (a copy gets sigmoid(1) = 0.73, a wholly new wording nearly 1);
the entropy is the model's, over its top-k next tokens at the entity positions of the filled prompt,
averaged over seeds (a prompt that makes the model sure of the entities is a better probe). The top
prompts are kept with weights proportional to their scores.
"""

from __future__ import annotations

import math
import re

import numpy as np
from pydantic import BaseModel, Field

from assistant.kbloom.text import fill_spans
from prompts import render
from kb.kg_harvest import PromptWeight, RelationDefinition, SLOTS

ENTROPY_FLOOR = 0.05  # nats: a prompt the model is all but certain about would otherwise score infinity


class Paraphrase(BaseModel):
    sentence: str = Field(description="The rewritten sentence.", max_length=300)


# -- the score's three terms --------------------------------------------------------------------
def bertscore_f1(ref: np.ndarray, cand: np.ndarray) -> float:
    """Greedy-matching F1 of token embeddings ref (n, d) and cand (m, d); 1.0 for identical bags."""
    if len(ref) == 0 or len(cand) == 0:
        return 0.0
    r = ref / np.maximum(np.linalg.norm(ref, axis=1, keepdims=True), 1e-12)
    c = cand / np.maximum(np.linalg.norm(cand, axis=1, keepdims=True), 1e-12)
    sim = r @ c.T
    recall, precision = float(sim.max(axis=1).mean()), float(sim.max(axis=0).mean())
    return 0.0 if recall + precision <= 0 else 2 * recall * precision / (recall + precision)


def bleu(ref: str, cand: str) -> float:
    """Sentence BLEU of ``cand`` against ``ref`` in [0, 1] (sacrebleu, orders above the length skipped)."""
    from sacrebleu.metrics import BLEU

    return BLEU(effective_order=True).sentence_score(cand, [ref]).score / 100.0


def diversity_term(bleu_score: float) -> float:
    """``sigmoid((1 + 0.01) / (BLEU + 0.01))``: 0.73 for a copy, approaching 1 as the wording departs."""
    return 1.0 / (1.0 + math.exp(-(1.01 / (bleu_score + 0.01))))


def topk_entropy(top: dict[str, float]) -> float:
    """Entropy (nats) of the renormalised top-k next-token distribution given as token -> log-probability."""
    if not top:
        return float("nan")
    lp = np.array(list(top.values()), dtype=np.float64)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    return float(-(p * np.log(np.clip(p, 1e-300, None))).sum())


def certainty(entropies: list[float]) -> float:
    """``1 / entropy``, the entropy averaged over the given positions and floored at ENTROPY_FLOOR."""
    vals = [e for e in entropies if not math.isnan(e)]
    return 1.0 / max(float(np.mean(vals)) if vals else 1.0, ENTROPY_FLOOR)


def entity_entropies(token_lp, spans: list[tuple[int, int]]) -> list[float]:
    """Entropies at the tokens of ``token_lp`` (a TokenLogprobs) that overlap the entity ``spans``."""
    out = []
    ends = token_lp.offsets[1:] + [len(token_lp.text)]
    for start, end, top in zip(token_lp.offsets, ends, token_lp.top):
        if top and any(start < b and end > a for a, b in spans):
            out.append(topk_entropy(top))
    return out


# -- candidates -----------------------------------------------------------------------------
def to_template(sentence: str, head: str, tail: str) -> str | None:
    """The sentence with the seed's head and tail written back as slots; None unless each occurs once.

    The longer name is found first and masked, so a name inside the other ("egg" in "egg white") still
    counts once.
    """
    text = " ".join(sentence.split())
    masked = text
    found = []
    for name, slot in sorted(((head, SLOTS[0]), (tail, SLOTS[1])), key=lambda x: -len(x[0])):
        hits = list(re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", masked, flags=re.IGNORECASE))
        if len(hits) != 1:
            return None
        a, b = hits[0].span()
        masked = masked[:a] + "\0" * (b - a) + masked[b:]
        found.append((a, b, slot))
    for start, end, slot in sorted(found, reverse=True):
        text = text[:start] + slot + text[end:]
    return text


def keywords(kw_model, sentence: str, top_n: int = 5) -> list[str]:
    try:
        return [k for k, _ in kw_model.extract_keywords(sentence, keyphrase_ngram_range=(1, 1),
                                                        stop_words="english", top_n=top_n)]
    except ValueError:  # nothing but stop words
        return []


async def candidate_prompts(definition: RelationDefinition, llm, kw_model, *, seeds_used: int, per_seed: int,
                            temperature: float, on_step=None) -> list[str]:
    """The initial prompts plus the model's paraphrases of them, as templates, without repeats."""
    prompts = list(definition.init_prompts)
    seen = {p.lower() for p in prompts}
    for head, tail in definition.seed_ent_tuples[:seeds_used]:
        for init in definition.init_prompts:
            sentence, _ = fill_spans(init, head, tail)
            kws = keywords(kw_model, sentence) or [head, tail]
            kws = list(dict.fromkeys([head, tail] + kws))
            messages = [{"role": "user", "content": render("kbloom_paraphrase", sentence=sentence, keywords=kws,
                                                           head=head, tail=tail)}]
            samples = await llm.structured_samples(messages, Paraphrase, n=per_seed, max_tokens=80,
                                                   temperature=temperature)
            for s in samples:
                if isinstance(s, Exception):
                    continue
                template = to_template(s.sentence, head, tail)
                if template and template.lower() not in seen:
                    seen.add(template.lower())
                    prompts.append(template)
            if on_step:
                on_step()
    return prompts


async def score_prompts(definition: RelationDefinition, prompts: list[str], llm, embedder,
                        top_k_logprobs: int = 5) -> list[PromptWeight]:
    """Score every candidate prompt against the initial prompt (module docstring), best first."""
    seeds = definition.seed_ent_tuples
    ref = definition.prompt
    filled = {(p, s): fill_spans(p, *s) for p in prompts for s in seeds}
    texts = [filled[(p, s)][0] for p in prompts for s in seeds]
    ref_texts = {s: fill_spans(ref, *s)[0] for s in seeds}
    tok = embedder.token_embeddings(list(dict.fromkeys(texts + list(ref_texts.values()))))
    emb = dict(zip(list(dict.fromkeys(texts + list(ref_texts.values()))), (z for _, z in tok)))
    lps = await llm.prompt_logprobs(texts, top_k=top_k_logprobs)
    by_text = dict(zip(texts, lps))
    out = []
    for p in prompts:
        sims, divs, ents = [], [], []
        for s in seeds:
            text, spans = filled[(p, s)]
            sims.append(bertscore_f1(emb[ref_texts[s]], emb[text]))
            divs.append(diversity_term(bleu(ref_texts[s], text)))
            ents.extend(entity_entropies(by_text[text], spans))
        score = float(np.mean(sims) + np.mean(divs) + certainty(ents))
        out.append(PromptWeight(prompt=p, weight=0.0, score=score))
    return sorted(out, key=lambda w: -w.score)


def weighted(scored: list[PromptWeight], keep: int, always: list[str] = ()) -> list[PromptWeight]:
    """The ``keep`` best prompts, ``always`` (the initial prompts) among them, weights proportional to scores.

    The initial prompts stay because they are the user's definition of the relation; a paraphrase can
    outscore them (a copy gets the lowest diversity term) without being a better probe.
    """
    fixed = [w for w in scored if w.prompt in always]
    rest = [w for w in scored if w.prompt not in always]
    top = sorted(fixed + rest[:max(0, keep - len(fixed))], key=lambda w: -w.score)
    total = sum(max(w.score, 0.0) for w in top) or 1.0
    return [PromptWeight(prompt=w.prompt, score=w.score, weight=max(w.score, 0.0) / total) for w in top]
