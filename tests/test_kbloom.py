"""K-Bloom (#16): paraphrase scoring, the four-heap search, OT scoring, harvest -> store -> kg_paths, resume,
and bad relation definitions. The language model is scripted (tests/kbloom_fake.py) with known log-probs."""

from __future__ import annotations

import asyncio
import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assistant.kbloom.heaps import TupleHeaps  # noqa: E402
from assistant.kbloom.search import SearchConfig, context, replay, score_batch  # noqa: E402
from assistant.kbloom.text import fill_spans  # noqa: E402
from kb.kg_harvest import PromptWeight, parse_definition  # noqa: E402
from tests.kbloom_fake import ScriptedLM  # noqa: E402

PART_OF = {"init_prompts": ["<ENT0> is a part of <ENT1> ."],
           "seed_ent_tuples": [["wheel", "car"], ["petal", "flower"], ["keyboard", "computer"]]}


@pytest.fixture(scope="module")
def embedder():
    from kb.embeddings import Embedder

    return Embedder()


def definition():
    return parse_definition(PART_OF, name="PartOf")


# -- stage 1: the paraphrase scorer -----------------------------------------------------------------
def test_paraphrase_scorer_identical_prompts_score_highest_and_bleu_penalises_copies(embedder):
    from assistant.kbloom.paraphrase import bertscore_f1, bleu, diversity_term

    ref = "wheel is a part of car ."
    others = ["a car has a wheel as one of its parts .", "the wheel belongs to the car .",
              "petal is a part of flower ."]
    (_, z_ref), *rest = embedder.token_embeddings([ref] + others)
    assert bertscore_f1(z_ref, z_ref) == pytest.approx(1.0, abs=1e-6)
    for _, z in rest:
        assert bertscore_f1(z_ref, z) < 0.999  # anything else scores below the identical prompt
    assert bleu(ref, ref) == pytest.approx(1.0)
    copy_term = diversity_term(bleu(ref, ref))
    assert copy_term == pytest.approx(1 / (1 + np.exp(-1.0)))  # sigmoid(1.01 / 1.01)
    for o in others[:2]:
        assert diversity_term(bleu(ref, o)) > copy_term + 0.1  # new wording is rewarded, a copy is not


def test_prompt_scores_and_weights(embedder, run_async):
    """The initial prompt's filled sentences match themselves; a paraphrase gains on diversity; weights sum to 1."""
    from assistant.kbloom.paraphrase import score_prompts, to_template, weighted

    assert to_template("A car has a wheel .", "wheel", "car") == "A <ENT1> has a <ENT0> ."
    assert to_template("wheel of a car wheel", "wheel", "car") is None  # the head occurs twice
    # a name inside the other (BertNet's PartOf seeds egg_white/egg, mountain_peak/mountain) still counts once
    assert to_template("The egg white is part of the egg.", "egg white", "egg") == "The <ENT0> is part of the <ENT1>."
    d = definition()
    lm = ScriptedLM()
    scored = run_async(score_prompts(d, [d.prompt, "A <ENT1> has a <ENT0> ."], lm, embedder))
    assert {w.prompt for w in scored} == {d.prompt, "A <ENT1> has a <ENT0> ."}
    kept = weighted(scored, 2)
    assert sum(w.weight for w in kept) == pytest.approx(1.0)
    assert all(w.weight > 0 for w in kept)


# -- stage 2: heaps, pruning, entity cap ------------------------------------------------------------
PROMPTS = [PromptWeight(prompt="<ENT0> is a part of <ENT1> .", weight=0.7),
           PromptWeight(prompt="A <ENT1> has a <ENT0> .", weight=0.3)]
# Entity words with known log-probabilities; under the second prompt "has" shifts some of them.
WORDS = {"engine": -1.0, "door": -1.5, "seat": -2.0, "leaf": -2.5, "branch": -3.0, "root": -3.5, "tree": -0.5,
         "car": -0.5, "house": -1.0, "roof": -4.0, "wall": -4.5, "window": -5.0, "boat": -6.0, "sail": -6.5}
BIAS = {"has a": {"leaf": -3.0, "door": +1.0}}


def pairs_and_lm():
    pairs = [("engine", "car"), ("leaf", "tree"), ("door", "car"), ("roof", "house"), ("seat", "car"),
             ("branch", "tree"), ("wall", "house"), ("root", "tree"), ("window", "house"), ("sail", "boat"),
             ("engine", "boat"), ("door", "house")]
    return pairs, ScriptedLM(word_logprobs=dict(WORDS), prompt_bias=BIAS)


def full_score(lm: ScriptedLM, pair, seeds) -> float:
    total = 0.0
    for pw in PROMPTS:
        ctx = context(pw.prompt, seeds)
        text, spans = fill_spans(pw.prompt, *pair)
        total += pw.weight * sum(lm.logprob(ctx + text, w) for w in text.split()
                                 if w.strip().lower() in pair)
    return total


def run_search(pairs, lm, cfg, prune=True):
    heaps = TupleHeaps(capacity=cfg.heap_capacity, entity_cap=cfg.entity_cap)
    if not prune:
        heaps.can_prune = lambda shape, running: False  # the reference: every pair fully scored
    d = definition()
    records = []
    for i in range(0, len(pairs), cfg.batch):
        records += asyncio.run(score_batch(pairs[i:i + cfg.batch], d, PROMPTS, lm, heaps, cfg))
    return heaps, records


def test_heap_search_prunes_exactly_the_pairs_below_the_bound():
    pairs, lm = pairs_and_lm()
    cfg = SearchConfig(heap_capacity=3, entity_cap=100, batch=1, context_seeds=2)
    heaps, records = run_search(pairs, lm, cfg)
    seeds = definition().seed_ent_tuples[:2]
    expected = sorted(((p, full_score(lm, p, seeds)) for p in pairs), key=lambda x: -x[1])[:3]
    got = heaps.items()
    assert [p for p, _ in got] == [p for p, _ in expected]  # the exact top 3 of the one-word heap
    assert [s for _, s in got] == pytest.approx([s for _, s in expected])
    pruned = [r for r in records if r.pruned_after is not None]
    assert pruned, "the scripted scores are chosen so that some pairs are pruned"
    bound = min(s for _, s in got)
    for r in pruned:
        assert full_score(lm, r.pair, seeds) < bound  # only pairs that could never enter were pruned
        second = fill_spans(PROMPTS[1].prompt, *r.pair)[0]
        assert not any(t.endswith(second) for t in lm.scored_texts)  # and their second prompt was never asked
    # Without pruning the heaps end the same, at the cost of more scoring requests.
    ref_lm = pairs_and_lm()[1]
    ref_heaps, _ = run_search(pairs, ref_lm, cfg, prune=False)
    assert ref_heaps.items() == got
    assert len(ref_lm.scored_texts) > len(lm.scored_texts)
    # The checkpoint's records rebuild exactly these heaps.
    assert replay(records, PROMPTS, cfg).items() == got


def test_entity_cap_and_shapes():
    heaps = TupleHeaps(capacity=3, entity_cap=2)
    assert heaps.push(("engine", "car"), -1.0)
    assert heaps.push(("door", "car"), -2.0)
    assert not heaps.push(("seat", "car"), -0.5)  # "car" is at its cap, however good the score
    assert heaps.push(("ice cream", "freezer"), -3.0)  # a two-word head goes to its own heap
    assert heaps.push(("leaf", "tree"), -4.0)
    assert heaps.push(("root", "tree"), -0.1)
    assert heaps.push(("petal", "flower"), -0.2)  # full one-word heap: evicts the worst, (leaf, tree)
    kept = [p for p, _ in heaps.items()]
    assert ("leaf", "tree") not in kept and heaps.counts["tree"] == 1
    assert heaps.push(("branch", "tree"), -0.3)  # the eviction freed a place for "tree"
    assert not heaps.push(("a b c", "tree"), 0.0)  # three-word entities have no heap
    for entity in {e for p, _ in heaps.items() for e in p}:
        assert sum(entity in p for p, _ in heaps.items()) <= 2
    assert len(heaps.heaps[(1, 1)]) == 3 and len(heaps.heaps[(2, 1)]) == 1


def test_entity_cap_holds_in_the_search():
    lm = ScriptedLM(word_logprobs=dict(WORDS))
    pairs = [(w, "car") for w in ("engine", "door", "seat", "roof", "wall", "window")]
    heaps, records = run_search(pairs, lm, SearchConfig(heap_capacity=10, entity_cap=2, batch=2, context_seeds=2))
    assert sum("car" in p for p, _ in heaps.items()) == 2
    assert [p for p, _ in heaps.items()] == [("engine", "car"), ("door", "car")]


# -- stage 3: OT semantic score against POT ---------------------------------------------------------
def test_ot_semantic_score_matches_pot_emd2():
    import ot
    from scipy.spatial.distance import cdist

    from assistant.kbloom.scoring import final_score, ot_similarity
    from kb._ot import cosine_cost

    rng = np.random.default_rng(7)
    for _ in range(20):
        seeds = [(rng.normal(size=(rng.integers(2, 6), 8)), rng.random(rng.integers(2, 6)))
                 for _ in range(3)]
        seeds = [(z, rng.random(len(z))) for z, _ in seeds]
        cand = (rng.normal(size=(4, 8)), rng.random(4))
        ref = sum(1 - ot.emd2(w / w.sum(), cand[1] / cand[1].sum(), cdist(z, cand[0], "cosine"))
                  for z, w in seeds)
        assert ot_similarity(seeds, cand) == pytest.approx(ref, abs=1e-9)
        assert np.allclose(cosine_cost(seeds[0][0], cand[0]), cdist(seeds[0][0], cand[0], "cosine"))
    z, w = rng.normal(size=(5, 8)), rng.random(5)
    assert ot_similarity([(z, w), (z, w)], (z, w)) == pytest.approx(2.0, abs=1e-9)  # zero distance to each
    # hand-worked: two tokens at right angles, all mass moves at cost 1 -> similarity 0
    assert ot_similarity([(np.array([[1.0, 0.0]]), np.array([1.0]))],
                         (np.array([[0.0, 1.0]]), np.array([1.0]))) == pytest.approx(0.0)
    assert final_score(0.0, 0.0) == 0.0
    assert final_score(2.0, 0.0) == pytest.approx(2.0 / (1 + np.exp(-2.0)))


def test_template_words_carry_no_transport_mass():
    from assistant.kbloom.scoring import bm25_token_weights

    texts = [["wheel", "is", "part", "of", "car"], ["petal", "is", "part", "of", "flower"],
             ["engine", "is", "part", "of", "car"]]
    w = bm25_token_weights(texts)
    for ws in w:
        assert ws[1] == ws[2] == ws[3] == 0.0  # "is", "part", "of" are in every filled prompt
        assert ws[0] > 0


# -- end to end with the fake server ----------------------------------------------------------------
SAMPLES = ["engine is a part of car .\npiston is a part of engine .\nleaf is a part of tree .\nnot a match\n"
           "petal is a part of car .\n",
           "door is a part of car .\nbranch is a part of tree .\nwheel is a part of car .\nsail is a part of bo",
           "the roof is a part of a house .\npiston is a part of engine .\n"]


def scripted_lm() -> ScriptedLM:
    return ScriptedLM(word_logprobs=dict(WORDS) | {"piston": -1.0}, samples=SAMPLES,
                      paraphrases=["A car has a wheel .", "The wheel of the car .", "wheel wheel car"])


def harvest_cfg():
    from assistant.kbloom.harvest import HarvestConfig

    return HarvestConfig(limit=10, prompts=2, paraphrase_seeds=1, paraphrases_per_seed=3,
                         search=SearchConfig(samples_per_request=2, max_rounds=4, batch=2, context_seeds=2))


def test_harvest_store_and_kg_paths_show_provenance(tmp_settings, fake_llm_server, embedder, run_async):
    from assistant.deps import Deps
    from tools.contracts import EvidenceLedger
    from assistant.kbloom.harvest import harvest, run_key, save
    from assistant.llm import LLMClient
    from tools.contracts import Session
    from kb.kg_harvest import harvested_sources, provenance, tuple_scores
    from kb.kg_store import KGStore
    from tools.registry import ToolContext
    from tools.kg_paths import Input, kg_paths

    lm = scripted_lm()
    srv = fake_llm_server(lm.handler)
    srv.__enter__()
    settings = tmp_settings.model_copy(update={"llm_base_url": srv.base_url})
    llm = LLMClient(settings)
    d = definition()
    cfg = harvest_cfg()
    runs = settings.kb_dir / "harvest_runs"

    async def go():
        try:
            model = await llm.resolved_model()
            return model, await harvest(d, llm=llm, embedder=embedder, model=model, cfg=cfg, checkpoints_dir=runs)
        finally:
            await llm.aclose()

    model, result = run_async(go())
    assert model == "fake-model"
    assert any(r.get("echo") for r in srv.requests), "scores come from echoed prompt log-probabilities"
    pairs = [(t.head, t.tail) for t in result.tuples]
    assert ("engine", "car") in pairs and ("piston", "engine") in pairs
    assert ("wheel", "car") not in pairs  # a seed is given, not harvested
    assert ("petal", "car") not in pairs  # nor are seed entities recombined
    assert ("roof", "house") in pairs  # articles dropped
    assert all(t.final == pytest.approx(t.semantic / (1 + np.exp(-t.semantic)) + t.fluency / (1 + np.exp(-t.fluency)))
               for t in result.tuples)
    store = KGStore(settings.kb_dir / "kg.db")
    save(store, result, runs, run_key(d, model, cfg))
    assert not list(runs.glob("*.json")), "a stored harvest leaves no checkpoint"
    source = "harvest:fake-model:PartOf"
    assert harvested_sources(store) == [source]
    prov = provenance(store, source)
    assert prov.model == "fake-model" and prov.seeds == d.seed_ent_tuples and prov.date
    assert prov.prompts[0].prompt and sum(w.weight for w in prov.prompts) == pytest.approx(1.0)
    assert prov.threshold == pytest.approx(min(t.final for t in result.tuples))
    assert len(tuple_scores(store, source)) == len(result.tuples)

    deps = Deps(settings)
    deps.__dict__["kg"] = store
    deps.__dict__["embedder"] = embedder
    ctx = ToolContext(deps=deps, evidence=EvidenceLedger(), session=Session("kbloom"))
    out = kg_paths(ctx, Input(question="Which part of a car holds the piston?", options=["engine", "leaf"]))
    # The harvested edge comes back as a one-hop fact or as a path; either way it says where it came from.
    shown = [(p.id, p.chain) for p in out.paths] + [(f.id, f.sentence) for f in out.facts]
    path_id, text = next((i, t) for i, t in shown if "piston" in t and "engine" in t)
    score = next(t.final for t in result.tuples if (t.head, t.tail) == ("piston", "engine"))
    assert f"extracted from the language model, score {score:.2f}" in text
    ev = ctx.evidence.get(path_id)
    assert ev.source == source and "extracted from the language model" in ev.text

    from assistant.ui.app import evidence_markdown

    panel = evidence_markdown(ev, result=None)
    assert f"piston —is part of→ engine (extracted from the language model, score {score:.2f})" in panel

    assert store.remove_graph(source)
    assert harvested_sources(store) == [] and tuple_scores(store, source) == {} and provenance(store, source) is None


def test_resume_after_interruption(tmp_path, embedder, run_async):
    from assistant.kbloom.harvest import harvest
    from kb.errors import LLMUnavailable

    d, cfg = definition(), harvest_cfg()
    ref_lm = scripted_lm()
    reference = run_async(harvest(d, llm=ref_lm, embedder=embedder, model="m", cfg=cfg,
                                  checkpoints_dir=tmp_path / "ref"))
    lm = scripted_lm()
    # Call 1 scores the prompts (stage 1), calls 2-3 score the first batch under both prompts; call 4 fails.
    lm.fail_after_scoring_calls = 3
    with pytest.raises(LLMUnavailable):
        run_async(harvest(d, llm=lm, embedder=embedder, model="m", cfg=cfg, checkpoints_dir=tmp_path / "cp"))
    assert list((tmp_path / "cp").glob("*.json")), "the interrupted run left its checkpoint"
    lm2 = scripted_lm()
    lm2.sample_calls = 10**6  # resuming must not sample again: proposals are in the checkpoint
    resumed = run_async(harvest(d, llm=lm2, embedder=embedder, model="m", cfg=cfg, checkpoints_dir=tmp_path / "cp"))
    assert resumed.resumed and not reference.resumed
    assert [t.model_dump() for t in resumed.tuples] == [t.model_dump() for t in reference.tuples]
    assert lm2.sample_calls == 10**6
    # Together the two runs asked for exactly what one uninterrupted run asks for: nothing was redone.
    assert sorted(lm.scored_texts + lm2.scored_texts) == sorted(ref_lm.scored_texts)
    assert lm.scored_texts and lm2.scored_texts


# -- bad relation definitions -------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--relation", "PartOf", "--prompt", "<ENT0> is a part of", "--seed", "wheel,car"], "must contain <ENT1>"),
    (["--relation", "PartOf", "--prompt", "<ENT0> in <ENT1>", "--seed", "wheelcar"], "head,tail"),
    (["--relation", "Part Of!", "--prompt", "<ENT0> in <ENT1>", "--seed", "a,b"], "name"),
    (["--relation", "PartOf", "--prompt", "<ENT0> in <ENT1>", "--seed", "car,car"], "same head and tail"),
    (["--from-bertnet", "conceptnet:NoSuchRelation"], "No relation 'NoSuchRelation'"),
])
def test_bad_relation_definition_is_one_clear_error_and_stores_nothing(tmp_path, monkeypatch, args, message):
    from click.testing import CliRunner

    from assistant.cli import main
    from tests.conftest import EVAL_DATA

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("EVIDENTIA_EVAL_DATA_DIR", str(EVAL_DATA))
    monkeypatch.setenv("EVIDENTIA_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    res = CliRunner().invoke(main, ["kb", "kg", "harvest", *args])
    assert res.exit_code != 0
    assert message in res.output and "Traceback" not in res.output
    assert res.output.count("Error:") == 1
    assert not (tmp_path / "data" / "kb" / "kg.db").exists() and not (tmp_path / "data" / "kb" / "harvest_runs").exists()


def test_bertnet_definitions_all_load():
    import json

    from kb.kg_harvest import load_bertnet
    from tests.conftest import EVAL_DATA

    path = EVAL_DATA / "lm_kg_extraction" / "bertnet_relation_info_conceptnet.json"
    names = list(json.loads(path.read_text()))
    assert len(names) == 20
    for n in names:
        d = load_bertnet(path, n)
        assert d.seed_ent_tuples and "<ENT0>" in d.prompt
    assert ("flotation device", "boat") in load_bertnet(path, "AtLocation").seed_ent_tuples


# -- the evaluation's measures ------------------------------------------------------------------------
def test_cn100k_matching_and_reference_tuples():
    from assistant.evals.kg_harvest_eval import (REFERENCE_FILE, measure, norm_entity, overall, reference_tuples,
                                                 shuffled)
    from tests.conftest import EVAL_DATA

    assert norm_entity("The Giraffes") == norm_entity("giraffe") == "giraffe"
    assert norm_entity("soft_drinks") == "soft drink" and norm_entity("boxes") == "box"
    assert norm_entity("berries") == "berry" and norm_entity("glass") == "glass" and norm_entity("bus") == "bus"
    cn = {("partof", "wheel", "car"), ("hassubevent", "sleep", "dream")}
    m = measure("PartOf", [("wheels", "cars"), ("car", "wheel"), ("door", "house")], cn)
    assert m == {"tuples": 3, "distinct_entities": 4, "confirmed": 1, "precision_cn100k": 1 / 3, "novelty": 2 / 3}
    assert measure("HasSubEvent", [("sleep", "dream")], cn)["confirmed"] == 1  # BertNet's spelling of the name
    total = overall({"a": m, "b": measure("PartOf", [("wheel", "car")], cn)})
    assert total["tuples"] == 4 and total["precision_cn100k"] == pytest.approx(0.5) == total["accuracy"]
    refs = reference_tuples(EVAL_DATA / REFERENCE_FILE)
    assert len(refs) == 20 and all(30 <= len(v) <= 40 for v in refs.values())
    assert ("red wine", "cellar") in refs["AtLocation"] and ("flotation_device", "boat") not in refs["AtLocation"]
    pairs = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")]
    mixed = shuffled(pairs, seed=0)
    assert sorted(t for _, t in mixed) == ["1", "2", "3", "4"] and [h for h, _ in mixed] == ["a", "b", "c", "d"]


def test_eval_writes_report_and_bench_in_the_project_formats(tmp_path, monkeypatch, fake_llm_server):
    import json
    import shutil

    from assistant.evals.kg_harvest_eval import run
    from tests.conftest import EVAL_DATA

    lm = scripted_lm()
    srv = fake_llm_server(lm.handler)
    srv.__enter__()
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("EVIDENTIA_EVAL_DATA_DIR", str(EVAL_DATA))
    monkeypatch.setenv("EVIDENTIA_LLM_BASE_URL", srv.base_url)
    path = run(["PartOf"], limit=4, prompts_kept=2, seed=0, docs_dir=tmp_path / "docs")
    report = json.loads(path.read_text())
    assert report["benchmark"] == "kg-harvest" and report["items"] == 1 and "majority_baseline" in report
    assert set(report["variants"]) == {"kbloom", "likelihood-only", "shuffled-pairs", "bertnet-reference"}
    for v in report["variants"].values():
        assert {"precision_cn100k", "tuples", "distinct_entities", "novelty", "accuracy"} <= set(v)
    assert report["variants"]["kbloom"]["tuples"] == 4
    assert report["variants"]["bertnet-reference"]["tuples"] == 40
    assert "lower bound" in (tmp_path / "docs" / "eval" / "kg-harvest.md").read_text()
    assert (tmp_path / "docs" / "eval" / "kg-harvest.png").exists()
    # Precision by stage: each stage keeps a subset of the one before, and the last is the selection.
    stages = report["precision_by_stage"]
    assert list(stages) == ["proposed", "fully_scored", "kbloom"]
    assert stages["proposed"]["tuples"] >= stages["fully_scored"]["tuples"] >= stages["kbloom"]["tuples"] == 4
    assert stages["kbloom"]["precision_cn100k"] == report["variants"]["kbloom"]["precision_cn100k"]
    assert "Precision by stage" in (tmp_path / "docs" / "eval" / "kg-harvest.md").read_text()
    # the served weights are recorded per relation (an external endpoint's are unknown here)
    assert report["weights_per_relation"] == {"PartOf": "external"}
    assert "Served weights: external for PartOf." in (tmp_path / "docs" / "eval" / "kg-harvest.md").read_text()
    bench = json.loads((tmp_path / "docs" / "bench" / "kg-harvest.json").read_text())
    assert bench["results"]["harvest_s_per_relation"]["unit"] == "s" and bench["machine"]
    requests = len(srv.requests)
    # resumes from the log beside the report, even on a new machine (an empty data dir): nothing is asked again
    logged = json.loads((tmp_path / "docs" / "eval" / "kg-harvest.relations.jsonl").read_text().splitlines()[-1])
    # every candidate stage 3 scored is logged with its scores, so final scores can be compared offline
    assert len(logged["scored"]) >= 4 and all(len(row) == 7 for row in logged["scored"])
    assert {tuple(row[:2]) for row in logged["scored"]} >= {tuple(p) for p in logged["kbloom"]}
    shutil.rmtree(tmp_path / "data")
    again = run(["PartOf"], limit=4, prompts_kept=2, seed=0, docs_dir=tmp_path / "docs")
    assert len(srv.requests) == requests
    assert json.loads(again.read_text())["variants"]["kbloom"]["tuples"] == 4


def test_kg_stats_lists_harvested_sources_and_remove_drops_one(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from assistant.cli import main
    from kb.kg_harvest import HarvestProvenance, PromptWeight as PW, TupleScores, store_harvest
    from kb.kg_store import KGStore

    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    store = KGStore(tmp_path / "data" / "kb" / "kg.db")
    prov = HarvestProvenance(relation="PartOf", template="is part of", initial_prompts=["<ENT0> is a part of <ENT1> ."],
                             prompts=[PW(prompt="<ENT0> is a part of <ENT1> .", weight=1.0)], seeds=[("wheel", "car")],
                             model="m", date="2026-11-23", threshold=0.5)
    tuples = [TupleScores(head="engine", tail="car", final=0.9, semantic=1.0, fluency=0.1, loglik=-3.0,
                          loglik_per_token=-1.5)]
    store_harvest(store, "harvest:m:PartOf", prov, tuples)
    store.close()
    runner = CliRunner()
    out = runner.invoke(main, ["kb", "kg", "stats"]).output
    assert "Harvested from a language model (not curated facts)" in out
    assert "harvest:m:PartOf: 1 tuples, 2 entities; relation PartOf, model m, 2026-11-23" in out
    assert runner.invoke(main, ["kb", "kg", "remove", "harvest:m:PartOf"]).exit_code == 0
    assert "No knowledge graph loaded" in runner.invoke(main, ["kb", "kg", "stats"]).output
    res = runner.invoke(main, ["kb", "kg", "remove", "harvest:m:PartOf"])
    assert res.exit_code != 0 and "No graph named" in res.output


def test_proposals_ranked_by_count_then_sampled_line_logprob(run_async):
    from assistant.kbloom.search import ProposalState, propose

    lm = ScriptedLM(word_logprobs={"engine": -0.1, "door": -3.0}, default=-1.0,
                    samples=["door is a part of car .\nengine is a part of car .\nleaf is a part of tree .\n",
                             "leaf is a part of tree .\n"])
    d = definition()
    state = run_async(propose(d, [PromptWeight(prompt=d.prompt, weight=1.0)], lm,
                              SearchConfig(target=3, samples_per_request=2), ProposalState()))
    # leaf/tree was sampled twice; engine's line is likelier than door's (known token log-probs)
    assert state.ranked() == [("leaf", "tree"), ("engine", "car"), ("door", "car")]
    assert state.best[("engine", "car")] > state.best[("door", "car")]


def test_harvest_notes_say_when_relations_were_harvested_on_different_weights():
    from assistant.evals.kg_harvest_eval import weights_line

    records = {"PartOf": {}, "IsA": {"weights": "w4a16"}}  # an old record (no field) was harvested on bf16
    assert weights_line(records).startswith("Served weights: bf16 for PartOf; w4a16 for IsA (mixed")
    assert weights_line({"IsA": {"weights": "w4a16"}}) == "Served weights: w4a16 for IsA."


def test_list_markers_and_seed_plurals_are_not_harvested():
    from assistant.kbloom.search import usable
    from assistant.kbloom.text import clean_entity

    # Seen in the 20-relation harvest: the model numbers or letters its lines, and repeats a seed in the plural.
    assert [clean_entity(t) for t in ("2. suitcase", "a. africa", "b,scuba gear", "1) boat", "the red wine")] == \
        ["suitcase", "africa", "scuba gear", "boat", "red wine"]
    assert clean_entity("e. coli") == "e. coli"  # a letter past d is no list marker
    seeds = [("flotation_device", "boat"), ("giraffes", "africa")]
    assert not usable(("flotation devices", "boat"), seeds) and not usable(("giraffe", "africa"), seeds)
    assert usable(("boat", "river"), seeds) and usable(("giraffe", "zoo"), seeds)


def test_the_eval_selects_again_from_logged_candidates_under_the_current_cleaning():
    from assistant.evals.kg_harvest_eval import reselected
    from assistant.kbloom.scoring import final_score

    # head, tail, semantic, fluency, loglik, loglik per token, line log-prob
    scored = [["2. suitcase", "closet", 0.9, 0.5, -10, -3.0, -2.0],  # cleaned to suitcase/closet
              ["suitcase", "closet", 0.8, 0.4, -11, -3.5, -2.1],  # the same pair: the better scores are kept
              ["flotation devices", "boat", 1.3, 0.6, -9, -2.0, -1.5],  # a seed in the plural: left out
              ["sand", "beach", 0.2, 0.3, -8, -1.0, -1.2],
              ["milk", "fridge", 0.5, 0.1, -12, -4.0, -2.5]]
    rec = reselected({"scored": scored, "kbloom": [["flotation devices", "boat"]], "threshold": 9.0},
                     [("flotation_device", "boat")], limit=2)
    assert rec["kbloom"] == [["suitcase", "closet"], ["milk", "fridge"]]  # by the final score
    assert rec["likelihood_only"] == [["sand", "beach"], ["suitcase", "closet"]]  # by log-likelihood per token
    assert rec["threshold"] == pytest.approx(final_score(0.5, 0.1)) and rec["cleaned_away"] == 2
    assert reselected({"kbloom": [["a", "b"]]}, [], limit=2) == {"kbloom": [["a", "b"]]}  # older records as logged


def test_a_resumed_relation_is_timed_by_its_stages_across_runs():
    from assistant.evals.kg_harvest_eval import harvest_seconds

    # Seen in the 20-relation run: DefinedAs resumed at its scoring stage, and its run's clock said 92 s.
    resumed = {"seconds": 91.8, "resumed": True,
               "stage_seconds": {"paraphrase": 23.3, "propose": 530.6, "score": 503.5, "select": 1.1}}
    assert harvest_seconds(resumed) == pytest.approx(1058.5)
    whole = {"seconds": 733.0, "stage_seconds": {"paraphrase": 29.0, "propose": 359.0, "score": 343.0}}
    assert harvest_seconds(whole) == 733.0  # a whole run: its clock, which also counts loading


def test_the_eval_says_in_one_message_when_the_server_dies_and_that_the_run_resumes(monkeypatch):
    from click.testing import CliRunner

    import assistant.evals.kg_harvest_eval as harvest_eval
    from assistant.cli import main
    from kb.errors import LLMUnavailable

    def dies(*args, **kwargs):  # seen mid-run: vLLM's engine died and every request failed
        raise LLMUnavailable("The language model server at http://127.0.0.1:8008/v1 cannot be reached.")

    monkeypatch.setattr(harvest_eval, "run", dies)
    res = CliRunner().invoke(main, ["eval", "kg-harvest", "--relations", "PartOf"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "cannot be reached" in res.output and "run the same command again to resume" in res.output
