"""``evidentia eval kg-harvest``: K-Bloom on BertNet's 20 ConceptNet relations (#16, methods.md §5).

Each relation is harvested with its own initial prompt and seed pairs (``relation_info/conceptnet.json``)
and measured as:

- ``tuples`` and ``distinct_entities`` (heads and tails, a diversity measure);
- ``precision_cn100k``: the share of tuples found in CN-100K (train + valid + test) under the same
  relation, after normalising case, underscores, articles and plurals. CN-100K is a small sample of
  ConceptNet, so a tuple missing from it is not thereby wrong: this is a **lower bound** on precision;
- ``novelty``: the share not in CN-100K (1 - the above);
- the same figures for BertNet's published RoBERTa-large tuples in the reference summary file beside the
  relation definitions (its top 20 and 20 random samples of its top 200 per relation);
- the ablation ``likelihood-only``: the same candidates ranked by log-likelihood alone, no OT/fluency;
- the baseline ``shuffled-pairs``: K-Bloom's own heads and tails paired at random (seeded), which shows how
  much of the confirmed precision comes from the pairing rather than from naming common entities;
- time per relation on this machine.

The harvest of each relation is checkpointed (``assistant.kbloom.harvest``) and each finished relation is
logged in ``docs/eval/kg-harvest.relations.jsonl``, beside the report, so an interrupted evaluation resumes,
on another machine too once the log is committed. Nothing is written to the KG store.
"""

from __future__ import annotations

import ast
import asyncio
import json
import random
import re
import time
from pathlib import Path

import click

from assistant.evals.report import DOCS_DIR, ResultsLog, write_bench, write_eval

BENCHMARK = "kg-harvest"
RELATION_FILE = "lm_kg_extraction/bertnet_relation_info_conceptnet.json"
REFERENCE_FILE = "lm_kg_extraction/bertnet_reference_summary_conceptnet_roberta-large_top20prompts.txt"
CN100K_FILES = ("conceptnet/cn100k_train.txt", "conceptnet/cn100k_valid.txt", "conceptnet/cn100k_test.txt")
_ARTICLES = {"a", "an", "the"}


# -- matching against CN-100K ----------------------------------------------------------------------
def singular(word: str) -> str:
    """A plural English noun's singular by suffix rules (applied to both sides, so a miss is symmetric)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and re.search(r"(ss|x|ch|sh)es$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not re.search(r"(ss|us|is)$", word):
        return word[:-1]
    return word


def norm_entity(text: str) -> str:
    """Lower case, underscores and punctuation to spaces, leading articles dropped, each word singular."""
    words = re.sub(r"[^0-9a-z]+", " ", text.lower().replace("_", " ")).split()
    while words and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(singular(w) for w in words)


def norm_relation(name: str) -> str:
    return name.lower()  # BertNet's HasSubEvent is CN-100K's HasSubevent


def load_cn100k(eval_dir: Path) -> set[tuple[str, str, str]]:
    out = set()
    for name in CN100K_FILES:
        for line in (eval_dir / name).read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) >= 3:
                out.add((norm_relation(parts[0]), norm_entity(parts[1]), norm_entity(parts[2])))
    return out


def measure(relation: str, pairs: list[tuple[str, str]], cn: set[tuple[str, str, str]]) -> dict:
    """tuples, distinct entities, confirmed (count), precision_cn100k and novelty of one relation's tuples."""
    rel = norm_relation(relation)
    confirmed = sum((rel, norm_entity(h), norm_entity(t)) in cn for h, t in pairs)
    n = len(pairs)
    return {"tuples": n, "distinct_entities": len({norm_entity(e) for p in pairs for e in p}),
            "confirmed": confirmed, "precision_cn100k": confirmed / n if n else 0.0,
            "novelty": (n - confirmed) / n if n else 0.0}


def overall(per_relation: dict[str, dict]) -> dict:
    """Micro-averaged over all tuples; entities counted per relation and summed."""
    n = sum(m["tuples"] for m in per_relation.values())
    c = sum(m["confirmed"] for m in per_relation.values())
    p = c / n if n else 0.0
    return {"accuracy": p, "precision_cn100k": p, "novelty": (n - c) / n if n else 0.0, "tuples": n,
            "distinct_entities": sum(m["distinct_entities"] for m in per_relation.values()), "confirmed": c,
            "relations": len(per_relation)}


# -- BertNet's reference tuples ----------------------------------------------------------------------
def reference_tuples(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Relation -> BertNet's listed tuples (top 20 and random samples of the top 200), without repeats."""
    out: dict[str, list[tuple[str, str]]] = {}
    relation = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("Relation:"):
            relation = line.split(":", 1)[1].strip()
            out[relation] = []
            continue
        if relation is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for cell in cells[1:]:  # the first column holds the seeds
            if cell.startswith("["):
                try:
                    pair = ast.literal_eval(cell)
                except (ValueError, SyntaxError):
                    continue
                if len(pair) == 2 and tuple(pair) not in out[relation]:
                    out[relation].append((str(pair[0]), str(pair[1])))
    return out


def shuffled(pairs: list[tuple[str, str]], seed: int) -> list[tuple[str, str]]:
    tails = [t for _, t in pairs]
    random.Random(seed).shuffle(tails)
    return [(h, t) for (h, _), t in zip(pairs, tails)]


# -- the run -----------------------------------------------------------------------------------------
def run(relations: list[str] | None, limit: int, prompts_kept: int, seed: int, docs_dir: Path | None = None,
        candidates_per_tuple: float = 3.0) -> Path:
    from assistant.deps import Deps
    from assistant.kbloom.harvest import HarvestConfig, harvest, harvest_settings
    from assistant.kbloom.search import SearchConfig
    from assistant.settings import Settings
    from kb.kg_harvest import load_bertnet

    settings = Settings()
    if settings.eval_data_dir is None:
        raise click.ClickException("Set EVIDENTIA_EVAL_DATA_DIR to the benchmark folder (../shared/eval-data).")
    eval_dir = Path(settings.eval_data_dir)
    rel_path = eval_dir / RELATION_FILE
    names = list(json.loads(rel_path.read_text(encoding="utf-8")))
    chosen = relations or names
    unknown = [r for r in chosen if r not in names]
    if unknown:
        raise click.ClickException(f"Unknown relation(s) {', '.join(unknown)}; the file defines: {', '.join(names)}")
    cn = load_cn100k(eval_dir)
    refs = reference_tuples(eval_dir / REFERENCE_FILE)
    cfg = HarvestConfig(limit=limit, prompts=prompts_kept, candidates_per_tuple=candidates_per_tuple,
                        search=SearchConfig(seed=seed))
    deps = Deps(harvest_settings(settings))
    # The per-relation log sits beside the report, not in the data dir: the full 20-relation run takes
    # longer than one machine's lifetime here, so the finished relations must travel with the repository
    # (they are this model's own output, a few KB each) and a later machine resumes from them.
    log = ResultsLog(relations_log(docs_dir))
    run_id = f"limit{limit}-prompts{prompts_kept}-seed{seed}-cand{candidates_per_tuple:g}"

    async def harvest_all() -> str:
        model = await deps.llm.resolved_model()
        try:
            for name in chosen:
                if log.get(run_id, name):
                    continue
                click.echo(f"— {name}")
                t0 = time.perf_counter()
                result = await harvest(load_bertnet(rel_path, name), llm=deps.llm, embedder=deps.embedder,
                                       model=model, cfg=cfg, checkpoints_dir=settings.kb_dir / "harvest_runs",
                                       progress=True)
                log.add(run_id, name, seconds=time.perf_counter() - t0,
                        stage_seconds=result.provenance.timings_s, resumed=result.resumed,
                        kbloom=[(t.head, t.tail) for t in result.tuples],
                        likelihood_only=[(t.head, t.tail) for t in result.likelihood_only],
                        proposed=result.proposed, fully_scored=result.fully_scored,
                        threshold=result.provenance.threshold, candidates=result.candidates,
                        pruned=result.pruned,
                        scored=[[t.head, t.tail, round(t.semantic, 5), round(t.fluency, 6), round(t.loglik, 4),
                                 round(t.loglik_per_token, 5), round(lp, 5)]
                                for t, lp in zip(result.scored, result.line_logprobs)],
                        prompts=[w.model_dump() for w in result.provenance.prompts],
                        weights=served_weights(settings))
        finally:
            await deps.aclose()
        return model

    model = asyncio.run(harvest_all())
    records = {name: reselected(log.get(run_id, name), load_bertnet(rel_path, name).seed_ent_tuples, limit)
               for name in chosen}
    variants_per_rel = {"kbloom": {}, "likelihood-only": {}, "shuffled-pairs": {}, "bertnet-reference": {}}
    for name, rec in records.items():
        variants_per_rel["kbloom"][name] = measure(name, [tuple(p) for p in rec["kbloom"]], cn)
        variants_per_rel["likelihood-only"][name] = measure(name, [tuple(p) for p in rec["likelihood_only"]], cn)
        variants_per_rel["shuffled-pairs"][name] = measure(name, shuffled([tuple(p) for p in rec["kbloom"]], seed), cn)
        variants_per_rel["bertnet-reference"][name] = measure(name, refs.get(name, []), cn)
    variants = {v: {**overall(per), "per_relation": per} for v, per in variants_per_rel.items()}
    stages = stage_precision(records, cn)
    seconds = {name: harvest_seconds(rec) for name, rec in records.items()}
    per_rel_s = sum(seconds.values()) / len(seconds)
    notes = _notes(records, variants, seconds, limit, stages)
    path = write_eval(BENCHMARK, model=model, items=len(chosen), seed=seed, variants=variants, notes=notes,
                      docs_dir=docs_dir, chart_metric="precision_cn100k",
                      metric_keys=["precision_cn100k", "novelty", "tuples", "distinct_entities", "relations"],
                      extra={"majority_baseline": None, "limit": limit, "prompts_kept": prompts_kept,
                             "relations": chosen, "seconds_per_relation": seconds,
                             "thresholds": {n: r["threshold"] for n, r in records.items()},
                             "weights_per_relation": {n: weights_of(r) for n, r in records.items()},
                             "precision_by_stage": stages,
                             "precision_note": "precision_cn100k is a lower bound: CN-100K is a small sample of "
                                               "ConceptNet, and a tuple absent from it is not thereby wrong."})
    stage_keys = sorted({k for r in records.values() for k in r["stage_seconds"]})
    results = {"harvest_s_per_relation": (per_rel_s, "s")}
    for k in stage_keys:
        results[f"{k}_s_per_relation"] = (sum(r["stage_seconds"].get(k, 0.0) for r in records.values()) / len(records), "s")
    results["tuples_per_relation"] = (variants["kbloom"]["tuples"] / len(records), "tuples")
    write_bench(BENCHMARK, results, docs_dir=docs_dir,
                notes=f"K-Bloom harvest of {len(records)} ConceptNet relation(s), --limit {limit}, "
                      f"{prompts_kept} weighted prompts, against the shared served model `{model}`. Stage times "
                      "are wall-clock seconds on this machine (the server may have been serving others too).")
    return path


def reselected(record: dict, seeds, limit: int) -> dict:
    """The record with its K-Bloom and likelihood-only selections made again from its logged candidates, after
    today's entity cleaning and seed filter (``assistant.kbloom.text``); records logged without candidates are
    returned as they are.

    Why: relations harvested before a cleaning fix ("2. suitcase", a seed's plural "flotation devices") would
    otherwise be measured with pairs the current harvest no longer keeps. Stage 3's scores do not depend on
    the other candidates' entities (BM25 weights aside), so the logged scores are reused.
    """
    from assistant.kbloom.scoring import final_score
    from assistant.kbloom.search import usable
    from assistant.kbloom.text import clean_entity

    if not record.get("scored"):
        return record
    best: dict[tuple[str, str], list] = {}
    for head, tail, sem, flu, ll, lpt, line in record["scored"]:
        h, t = clean_entity(head), clean_entity(tail)
        if not h or not t or h == t or not usable((h, t), [tuple(s) for s in seeds]):
            continue
        row = [h, t, sem, flu, ll, lpt, line]
        if (h, t) not in best or final_score(sem, flu) > final_score(*best[(h, t)][2:4]):
            best[(h, t)] = row
    rows = list(best.values())
    kbloom = sorted(rows, key=lambda r: (-final_score(r[2], r[3]), r[0], r[1]))[:limit]
    likelihood = sorted(rows, key=lambda r: (-r[5], r[0], r[1]))[:limit]
    return {**record, "kbloom": [r[:2] for r in kbloom], "likelihood_only": [r[:2] for r in likelihood],
            "threshold": final_score(kbloom[-1][2], kbloom[-1][3]) if kbloom else record.get("threshold", 0.0),
            "cleaned_away": len(record["scored"]) - len(rows)}


STAGES = (("proposed", "every distinct pair the model proposed (stage 2a)"),
          ("fully_scored", "pairs scored under every prompt, not pruned by the heaps (stage 2b)"),
          ("kbloom", "the selection by the final score (stage 3)"))


def harvest_seconds(record: dict) -> float:
    """A relation's harvest time: the run's wall clock, or, for a relation resumed from a checkpoint, the sum of
    its stages' seconds (the checkpoint adds them up across runs, while the wall clock saw only the last run)."""
    return max(float(record["seconds"]), sum(record.get("stage_seconds", {}).values()))


def relations_log(docs_dir: Path | None) -> Path:
    """The JSONL of finished relations (tuples, stage lists, prompts, timings) the report is computed from."""
    return (docs_dir or DOCS_DIR) / "eval" / f"{BENCHMARK}.relations.jsonl"


def stage_precision(records: dict, cn: set[tuple[str, str, str]]) -> dict | None:
    """CN-100K-confirmed precision of the candidates at each stage, pooled over relations: where good tuples
    are lost. None when a logged relation predates the per-stage lists."""
    if not all("proposed" in r for r in records.values()):
        return None
    out = {}
    for key, _ in STAGES:
        pooled = overall({name: measure(name, [tuple(p) for p in rec[key]], cn) for name, rec in records.items()})
        out[key] = {k: pooled[k] for k in ("tuples", "confirmed", "precision_cn100k")}
    return out


def served_weights(settings) -> str:
    """The weights the local server is configured to serve; "external" for another endpoint (unknown here)."""
    return "external" if settings.llm_base_url else settings.model_format


def weights_of(record: dict) -> str:
    # Results written before the field existed were all harvested on bf16 (the default until #15).
    return record.get("weights", "bf16")


def weights_line(records: dict) -> str:
    """Which served weights harvested which relations; says so when they differ."""
    by_weights: dict[str, list[str]] = {}
    for name, rec in records.items():
        by_weights.setdefault(weights_of(rec), []).append(name)
    mixed = " (mixed: the default changed from bf16 to W4A16 in #15, between relations)" if len(by_weights) > 1 else ""
    return "Served weights: " + "; ".join(f"{w} for {', '.join(n)}" for w, n in by_weights.items()) + mixed + "."


def _notes(records: dict, variants: dict, seconds: dict, limit: int, stages: dict | None = None) -> str:
    k, lo, ref = variants["kbloom"], variants["likelihood-only"], variants["bertnet-reference"]
    lines = [
        weights_line(records),
        "**precision_cn100k is a lower bound on precision**: CN-100K holds about 100k of ConceptNet's millions of "
        "assertions, so a harvested tuple missing from it may still be true (novelty counts those).",
        "No label exists here, so there is no majority-label baseline; the model-free baseline is "
        "`shuffled-pairs` (K-Bloom's own heads and tails paired at random).",
        f"K-Bloom {k['precision_cn100k']:.3f} vs likelihood-only {lo['precision_cn100k']:.3f} (the OT + fluency "
        f"step's effect, same candidates) vs BertNet's RoBERTa-large reference {ref['precision_cn100k']:.3f} "
        f"(only the {ref['tuples']} tuples its summary lists, measured identically).",
        f"Time per relation: mean {sum(seconds.values()) / len(seconds):.0f} s, --limit {limit} (a relation "
        "resumed after an interruption is timed by its stages' seconds, which its checkpoint adds up across runs).",
    ]
    cleaned = [r["cleaned_away"] for r in records.values() if "cleaned_away" in r]
    if cleaned:
        lines.append(f"The K-Bloom and likelihood-only selections of {len(cleaned)} relation(s) were made again from "
                     f"their logged candidates under the current entity cleaning (list markers such as '2. ' dropped, "
                     f"a seed's plural counted as the seed): {sum(cleaned)} candidates were left out.")
    lines.append("")
    if stages:
        lines += ["Precision by stage (all relations pooled): where confirmed tuples are kept or lost.", "",
                  "| stage | what | tuples | confirmed | precision_cn100k |", "|---|---|---|---|---|"]
        lines += [f"| {key} | {what} | {stages[key]['tuples']} | {stages[key]['confirmed']} | "
                  f"{stages[key]['precision_cn100k']:.3f} |" for key, what in STAGES]
        lines.append("")
    lines += [
        "| relation | tuples | K-Bloom | likelihood-only | BertNet ref. | threshold | seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rec in records.items():
        lines.append(f"| {name} | {k['per_relation'][name]['tuples']} | {k['per_relation'][name]['precision_cn100k']:.3f} "
                     f"| {lo['per_relation'][name]['precision_cn100k']:.3f} "
                     f"| {ref['per_relation'][name]['precision_cn100k']:.3f} | {rec['threshold']:.3f} "
                     f"| {seconds[name]:.0f}{' (resumed)' if rec.get('resumed') else ''} |")
    return "\n".join(lines)


def register(group) -> None:
    @group.command(BENCHMARK)
    @click.option("--relations", default="", help="Comma-separated subset (default: all 20), e.g. PartOf,AtLocation.")
    @click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 5000),
                  help="Tuples kept per relation (10 for a quick run).")
    @click.option("--prompts-kept", "prompts_kept", default=5, show_default=True, type=click.IntRange(1, 20),
                  help="Weighted prompts kept after paraphrasing (the thesis keeps 20).")
    @click.option("--candidates-per-tuple", default=3.0, show_default=True, type=click.FloatRange(1.0, 20.0),
                  help="Distinct proposals sampled per tuple kept (sampling is the slowest stage on CPU).")
    @click.option("--seed", default=0, show_default=True)
    def cmd(relations: str, limit: int, prompts_kept: int, candidates_per_tuple: float, seed: int) -> None:
        """K-Bloom harvest on BertNet's ConceptNet relations: CN-100K-confirmed precision (a lower bound)."""
        from kb.errors import LLMResponseError, LLMUnavailable

        chosen = [r.strip() for r in relations.split(",") if r.strip()] or None
        try:
            path = run(chosen, limit, prompts_kept, seed, candidates_per_tuple=candidates_per_tuple)
        except (LLMUnavailable, LLMResponseError) as exc:
            # Seen when the server died mid-harvest: one message, not a traceback; nothing finished is lost.
            raise click.ClickException(f"{exc} Finished relations are in {relations_log(None)} and the one in "
                                       "progress is checkpointed; run the same command again to resume.") from None
        click.echo(f"Wrote {path}")
