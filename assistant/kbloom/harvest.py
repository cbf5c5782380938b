"""Run a K-Bloom harvest end to end: three stages with progress bars, checkpoints, and the store.

Checkpoints: after every model request that changes the state (paraphrases, a proposal round, a scored
batch) the state is written atomically to ``<kb_dir>/harvest_runs/<key>.json``, where the key hashes
the relation definition, the model and the options. Running the same harvest again continues from it;
only the request that was under way when it stopped is redone. A finished harvest deletes its checkpoint
after the store has committed the tuples.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from assistant.kbloom.paraphrase import candidate_prompts, score_prompts, weighted
from assistant.kbloom.scoring import score_pairs
from assistant.kbloom.search import (UNKNOWN_LOGPROB, ProposalState, ScoredPair, SearchConfig, per_token_score,
                                     propose, replay, score_batch, weighted_score)
from kb.kg_harvest import (HarvestProvenance, PromptWeight, RelationDefinition, TupleScores, harvest_source,
                           store_harvest, template_phrase, today)
from kb.kg_store import KGLoadError, KGStore


@dataclass
class HarvestConfig:
    limit: int = 100  # tuples kept
    prompts: int = 5  # weighted prompts kept after paraphrasing (the thesis keeps 20)
    paraphrase_seeds: int = 2
    paraphrases_per_seed: int = 6
    paraphrase_temperature: float = 0.9
    candidates_per_tuple: float = 3.0  # distinct proposals sought per tuple kept
    min_score: float | None = None  # final-score threshold; None: the limit alone decides
    search: SearchConfig = field(default_factory=SearchConfig)

    def search_config(self) -> SearchConfig:
        cfg = SearchConfig(**asdict(self.search))
        cfg.target = max(cfg.samples_per_request, int(round(self.limit * self.candidates_per_tuple)))
        cfg.heap_capacity = min(cfg.heap_capacity, max(self.limit, 1))
        # A request gave ~9 new pairs at first (PartOf, 8 samples), fewer as repeats grow: allow 3 per round.
        cfg.max_rounds = max(cfg.max_rounds, -(-cfg.target // 3))
        return cfg


class Checkpoint(BaseModel):
    key: str
    prompts: list[PromptWeight] | None = None
    proposals: list[tuple[str, str]] = Field(default_factory=list)
    proposal_counts: list[int] = Field(default_factory=list)
    proposal_logprobs: list[float] = Field(default_factory=list)
    rounds: int = 0
    proposals_done: bool = False
    scored: list[ScoredPair] = Field(default_factory=list)
    timings_s: dict[str, float] = Field(default_factory=dict)


class HarvestResult(BaseModel):
    source: str
    provenance: HarvestProvenance
    tuples: list[TupleScores]  # the K-Bloom selection, best first
    likelihood_only: list[TupleScores]  # the ablation: same candidates ranked by log-likelihood alone
    candidates: int
    pruned: int
    resumed: bool = False
    # Every distinct proposed pair, and those scored under every prompt (not pruned): with the selection they
    # show which stage keeps or loses good tuples (the evaluation's precision by stage).
    proposed: list[tuple[str, str]] = Field(default_factory=list)
    fully_scored: list[tuple[str, str]] = Field(default_factory=list)
    # Every candidate stage 3 scored, with its scores and its line's log-probability (the fluency's input):
    # the evaluation can then compare final scores on the same candidates without asking the model again.
    scored: list[TupleScores] = Field(default_factory=list)
    line_logprobs: list[float] = Field(default_factory=list)


class HarvestError(RuntimeError):
    """The harvest produced nothing usable; the message says why (nothing was stored)."""


def run_key(definition: RelationDefinition, model: str, cfg: HarvestConfig) -> str:
    blob = json.dumps({"def": definition.model_dump(), "model": model, "cfg": asdict(cfg)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class CheckpointFile:
    def __init__(self, folder: Path, key: str):
        self.path = Path(folder) / f"{key}.json"
        self.key = key

    def load(self) -> Checkpoint | None:
        try:
            cp = Checkpoint.model_validate_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cp if cp.key == self.key else None

    def save(self, cp: Checkpoint) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(cp.model_dump_json(), encoding="utf-8")
        os.replace(tmp, self.path)  # atomic: an interruption leaves the old or the new file, never half

    def delete(self) -> None:
        self.path.unlink(missing_ok=True)


def harvest_settings(settings):
    """The settings a harvest runs with: its own, longer request timeout (``harvest_llm_timeout_s``)."""
    return settings.model_copy(update={"llm_timeout_s": settings.harvest_llm_timeout_s})


def _bar(total: int | None, desc: str, show: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=not show, leave=True, dynamic_ncols=True)


async def harvest(definition: RelationDefinition, *, llm, embedder, model: str, cfg: HarvestConfig,
                  checkpoints_dir: Path, progress: bool = False) -> HarvestResult:
    """Run the three stages (resuming from a checkpoint when there is one); nothing is stored here."""
    key = run_key(definition, model, cfg)
    files = CheckpointFile(checkpoints_dir, key)
    cp = files.load()
    resumed = cp is not None
    cp = cp or Checkpoint(key=key)
    scfg = cfg.search_config()

    # -- stage 1: prompts ---------------------------------------------------------------------
    if cp.prompts is None:
        t0 = time.perf_counter()
        from keybert import KeyBERT

        steps = min(cfg.paraphrase_seeds, len(definition.seed_ent_tuples)) * len(definition.init_prompts) + 1
        with _bar(steps, "1/3 paraphrase prompts", progress) as bar:
            cands = await candidate_prompts(definition, llm, KeyBERT(model=embedder.model),
                                            seeds_used=cfg.paraphrase_seeds, per_seed=cfg.paraphrases_per_seed,
                                            temperature=cfg.paraphrase_temperature, on_step=lambda: bar.update(1))
            scored = await score_prompts(definition, cands, llm, embedder)
            bar.update(1)
        cp.prompts = weighted(scored, cfg.prompts, always=definition.init_prompts)
        cp.timings_s["paraphrase"] = time.perf_counter() - t0
        files.save(cp)
    prompts = cp.prompts

    # -- stage 2a: proposals --------------------------------------------------------------------
    if not cp.proposals_done:
        t0 = time.perf_counter()
        state = ProposalState(rounds=cp.rounds)
        lps = cp.proposal_logprobs + [UNKNOWN_LOGPROB] * (len(cp.proposals) - len(cp.proposal_logprobs))
        for pair, count, lp in zip(cp.proposals, cp.proposal_counts, lps):
            state.add(tuple(pair), lp, count)

        def saved(st: ProposalState) -> None:
            cp.proposals = list(st.order)
            cp.proposal_counts = [st.counts[p] for p in st.order]
            cp.proposal_logprobs = [st.best[p] for p in st.order]
            cp.rounds = st.rounds
            bar.n = min(len(st.order), scfg.target)
            bar.refresh()
            files.save(cp)

        with _bar(scfg.target, "2/3 propose pairs", progress) as bar:
            bar.n = min(len(state.order), scfg.target)
            await propose(definition, prompts, llm, scfg, state, on_round=saved)
        cp.proposals = state.ranked()
        cp.proposal_counts = [state.counts[p] for p in cp.proposals]
        cp.proposal_logprobs = [state.best[p] for p in cp.proposals]
        cp.proposals_done = True
        cp.timings_s["propose"] = cp.timings_s.get("propose", 0.0) + time.perf_counter() - t0
        files.save(cp)

    # -- stage 2b: likelihood under the weighted prompts, four heaps -------------------------------
    pairs = [tuple(p) for p in cp.proposals]
    done = len(cp.scored)
    heaps = replay(cp.scored, prompts, scfg)
    t0 = time.perf_counter()
    with _bar(len(pairs), "2/3 score pairs", progress) as bar:
        bar.n = done
        for start in range(done, len(pairs), scfg.batch):
            batch = pairs[start:start + scfg.batch]
            cp.scored.extend(await score_batch(batch, definition, prompts, llm, heaps, scfg))
            cp.timings_s["score"] = cp.timings_s.get("score", 0.0) + time.perf_counter() - t0
            t0 = time.perf_counter()
            files.save(cp)
            bar.update(len(batch))

    # -- stage 3: semantic + fluency, selection --------------------------------------------------
    t0 = time.perf_counter()
    kept = {p for p, _ in heaps.items()}
    recs = [r for r in cp.scored if r.pair in kept]
    if not recs:
        files.delete()
        raise HarvestError(f"No usable pairs for {definition.name}: the model proposed {len(pairs)} distinct pairs "
                           f"in {cp.rounds} requests and none filled the prompt with one- or two-word entities.")
    with _bar(len(recs), "3/3 semantic + fluency", progress) as bar:
        scores = score_pairs(embedder, definition.prompt, list(definition.seed_ent_tuples), [r.pair for r in recs],
                             [r.line_logprob for r in recs])
        bar.update(len(recs))
    scored_tuples = [TupleScores(head=r.head, tail=r.tail, loglik=weighted_score(r.logliks, prompts),
                                 loglik_per_token=per_token_score(r, prompts), **s) for r, s in zip(recs, scores)]
    ranked = sorted(scored_tuples, key=lambda t: (-t.final, t.head, t.tail))
    if cfg.min_score is not None:
        ranked = [t for t in ranked if t.final >= cfg.min_score]
    selection = ranked[:cfg.limit]
    ablation = sorted(scored_tuples, key=lambda t: (-t.loglik_per_token, t.head, t.tail))[:cfg.limit]
    cp.timings_s["select"] = time.perf_counter() - t0
    files.save(cp)
    prov = HarvestProvenance(
        relation=definition.name, template=template_phrase(definition.name, definition.prompt),
        initial_prompts=definition.init_prompts, prompts=prompts, seeds=list(definition.seed_ent_tuples),
        model=model, date=today(), threshold=selection[-1].final if selection else cfg.min_score,
        settings={**{k: v for k, v in asdict(cfg).items() if k != "search"}, "search": asdict(scfg)},
        timings_s={k: round(v, 2) for k, v in cp.timings_s.items()})
    return HarvestResult(source=harvest_source(model, definition.name), provenance=prov, tuples=selection,
                         likelihood_only=ablation, candidates=len(pairs),
                         pruned=sum(1 for r in cp.scored if r.pruned_after is not None), resumed=resumed,
                         proposed=pairs, fully_scored=[r.pair for r in cp.scored if r.pruned_after is None],
                         scored=scored_tuples, line_logprobs=[r.line_logprob for r in recs])


def save(store: KGStore, result: HarvestResult, checkpoints_dir: Path, key: str) -> dict[str, int]:
    """Store the selection as its graph (one transaction), then drop the checkpoint."""
    if not result.tuples:
        raise KGLoadError(f"{result.source}: no tuple reached the threshold; nothing was stored")
    counts = store_harvest(store, result.source, result.provenance, result.tuples)
    CheckpointFile(checkpoints_dir, key).delete()
    return counts
