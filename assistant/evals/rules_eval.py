"""``evidentia eval rules``: each settle rule of tools/rules.py measured on its own, on the table-disjoint dev splits.

Settle rules need no model, so every dev claim of TabFact, SciTab and PubHealthTab is read by every rule: how often
each fires, how often the verdict it gives is the gold label, how often two rules disagree (then none decides), and
what the always-majority label scores on the same claims, beside it. A claim whose main verb is negated is read
as the settle stage reads it (its positive form, the verdict turned round: tools.verify_claim via
tools.verify_claim.negated_claim_form); a claim made of two parts is read whole (the chat reads each part).

Veto rules hold a sampled program that ran but does not check what the claim states. They are measured by replaying
the committed dev run logs (docs/eval/runs/<benchmark>-dev-<commit>.jsonl: the programs the model wrote, run and
voted again under today's rules, no model call; tools/program_replay.py), once with every rule and once with each
veto rule switched off: how many programs each holds, and the paired effect of switching it off (claims gained and
lost). A replay cannot ask the model, so a claim whose vote now splits where the programs decided before counts as
wrong (a lower bound, the same in both arms). Withhold rules (a program held from the vote beside the others of its
sampling) are measured the same way, with each claim withhold rule off; the question ones read no claim, and no
dev log of table questions with programs is committed, so they are listed as not measured.

The paired effect of switching a settle rule off cannot come from a log: a claim a settle rule decides never reaches
the programs. ``--examples`` measures it where the rules' own cases are, with the model: each settle rule's own
examples are checked end to end (the product's claim check) with that rule switched off, so the programs decide
them. A rule whose examples the programs get right without it, and that decides no dev claim, adds nothing
(the pruning test of the reading-layer issue). Log: docs/eval/rules-examples.jsonl (rule, example, expected,
the verdict without the rule, what decided, seconds); the run keeps it when ``--examples`` is not given.

Writes docs/eval/rules.{json,md,png} and the per-item logs docs/eval/rules-dev.jsonl (settle: ids, gold, what
fired) and docs/eval/rules-veto-dev.jsonl (veto, withhold and rewrite: ids, gold, the replayed verdict with every
rule and with each of those off, the programs each held or changed); no benchmark text. Runs only on dev splits:
test splits are sealed (assistant/evals/sealed.py).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import click

BENCHMARKS = ("tabfact", "scitab", "pubhealthtab")
LOG_NAME = "rules-dev.jsonl"
VETO_LOG_NAME = "rules-veto-dev.jsonl"
EXAMPLES_LOG_NAME = "rules-examples.jsonl"


def read_item(claim: str, table) -> tuple[list[dict], bool]:
    """What the settle stage makes of one claim: each rule that fired with its verdict (turned round for a negated
    claim), and whether the claim was negated."""
    from tools.rules import settle
    from tools.verify_claim import negated_claim_form

    positive = negated_claim_form(claim, table)
    settlement = settle(positive or claim, table)
    flip = {"SUPPORTS": "REFUTES", "REFUTES": "SUPPORTS"}
    return [{"rule": f.rule, "verdict": flip.get(f.verdict, f.verdict) if positive else f.verdict}
            for f in settlement.fired], positive is not None


def measure(eval_dir: Path, seed: int, echo=print) -> list[dict]:
    """One record per dev claim of each benchmark: id, benchmark, gold, the rules that fired and their verdicts."""
    from assistant.evals.tables_eval import load_split, select_items

    records = []
    for benchmark in BENCHMARKS:
        items = select_items(benchmark, load_split(benchmark, eval_dir, "dev"), seed=seed, limit=None, split="dev")
        t0 = time.perf_counter()
        for item in items:
            fired, negated = read_item(item.claim, item.table)
            records.append({"benchmark": benchmark, "id": item.id, "gold": item.label, "fired": fired,
                            "negated": negated})
        echo(f"{benchmark} dev: {len(items)} claims read by every settle rule in {time.perf_counter() - t0:.1f} s")
    return records


def dev_run_logs(runs_dir: Path) -> dict[str, Path]:
    """The committed dev run log of each claim benchmark with the most program checks (``<benchmark>-dev-<commit>``)."""
    from assistant.evals.report import read_run_log

    best: dict[str, tuple[int, Path]] = {}
    for path in sorted(runs_dir.glob("*-dev-*.jsonl")):
        benchmark = path.stem.rsplit("-dev-", 1)[0]
        if benchmark in BENCHMARKS:
            n = len(read_run_log(path).get("program", {}))
            if n > best.get(benchmark, (0, path))[0]:
                best[benchmark] = (n, path)
    return {b: path for b, (_, path) in sorted(best.items())}


def measure_vetoes(eval_dir: Path, seed: int, runs_dir: Path, echo=print) -> list[dict]:
    """One record per replayed dev claim: its verdict replayed with every rule, and with each veto rule and each
    claim withhold rule off, and with each rewrite rule off that changed one of its programs (the others cannot
    change it)."""
    from assistant.evals.report import read_run_log
    from assistant.evals.tables_eval import load_split, select_items
    from tools.program_replay import replay_claims
    from tools.rules import RULES

    vetoes = [r.name for r in RULES if r.stage == "veto"]
    withholds = claim_withholds()
    records = []
    for benchmark, path in dev_run_logs(runs_dir).items():
        items = select_items(benchmark, load_split(benchmark, eval_dir, "dev"), seed=seed, limit=None, split="dev")
        wanted = {it.id for it in items}
        logged = [r for i, r in read_run_log(path).get("program", {}).items() if i in wanted]
        t0 = time.perf_counter()
        base = replay_claims(items, logged)
        rewrites = sorted({name for counts in base.rewritten.values() for name in counts})
        off = {name: replay_claims(items, logged, frozenset({name})) for name in vetoes + withholds + rewrites}
        golds = {str(r["id"]): r["gold"] for r in logged}
        for item_id, pred in base.predictions.items():
            records.append({"benchmark": benchmark, "log": path.name, "id": item_id, "gold": golds[item_id],
                            "replayed": pred, "off": {n: off[n].predictions.get(item_id) for n in off
                                                      if off[n].predictions.get(item_id) != pred},
                            "held": dict(base.held[item_id]), "withheld": dict(base.withheld[item_id]),
                            "rewritten": dict(base.rewritten[item_id])})
        echo(f"{benchmark} dev: {len(base.predictions)} logged claims replayed with every rule and with each of "
             f"{len(vetoes)} veto rules, {len(withholds)} withhold rules and {len(rewrites)} rewrite rules off "
             f"({path.name}) in {time.perf_counter() - t0:.1f} s")
    return records


def claim_withholds() -> list[str]:
    """The withhold rules a claim's replay runs (the question ones never see a claim)."""
    from tools.rules import RULES

    return [r.name for r in RULES if r.stage == "withhold" and r.applies_to == "claim"]


def summarise_rewrites(records: list[dict]) -> dict:
    """Per rewrite rule that changed a replayed program, and benchmark: programs it changed, claims whose verdict
    changes with it off, and of those, lost and gained when off (as for the veto rules)."""
    out: dict = {}
    for name in sorted({n for r in records for n in r.get("rewritten", {})}):
        row = {}
        for benchmark in sorted({r["benchmark"] for r in records}):
            mine = [r for r in records if r["benchmark"] == benchmark]
            changed = [r for r in mine if name in r["off"]]
            row[benchmark] = {
                "claims": len(mine), "programs_changed": sum(r.get("rewritten", {}).get(name, 0) for r in mine),
                "claims_changed": len(changed),
                "lost_when_off": sum(r["replayed"] == r["gold"] and r["off"][name] != r["gold"] for r in changed),
                "gained_when_off": sum(r["replayed"] != r["gold"] and r["off"][name] == r["gold"] for r in changed)}
        out[name] = row
    return out


async def measure_examples(settings, *, concurrency: int = 2, echo=print,
                           stages: tuple[str, ...] = ("settle", "veto")) -> list[dict]:
    """One record per example: a settle rule's, checked end to end (the product's claim check) with that rule
    switched off (``EVIDENTIA_RULES_OFF``), so the programs decide it, against the verdict the rule gives; a veto
    rule's example claim (with its plain verdict over the table), checked with the rule on and with it off."""
    import asyncio

    from assistant.llm import LLMClient
    from kb.embeddings import Embedder
    from tools.rules import RULES
    from tools.verify_claim import check_claim

    from assistant.evals.report import code_version

    commit = code_version()
    embedder = Embedder(settings.embedding_model)
    jobs = []
    for rule in (r for r in RULES if r.stage in stages):
        for i, ex in enumerate(rule.examples):
            gold = ex.expected if rule.stage == "settle" else ex.verdict
            if gold is None:
                continue
            arms = ("without_rule",) if rule.stage == "settle" else ("with_rule", "without_rule")
            jobs += [(rule, i, ex, gold, arm) for arm in arms]
    on = LLMClient(settings)
    clients = {r.name: LLMClient(settings.model_copy(update={"rules_off": r.name})) for r, *_ in jobs}
    gate = asyncio.Semaphore(concurrency)
    results: dict[tuple[str, int], dict] = {}

    async def run_one(rule, i, ex, gold, arm) -> None:
        async with gate:
            t0 = time.perf_counter()
            try:
                check = await check_claim(on if arm == "with_rule" else clients[rule.name], ex.table(), ex.text,
                                          embedder=embedder)
                pred, decided_by = check.label, check.decided_by
            except Exception as exc:  # noqa: BLE001 - a failed check is logged as wrong, with its reason
                pred, decided_by = "ERROR", f"{type(exc).__name__}: {str(exc)[:200]}"
            seconds = time.perf_counter() - t0
        record = results.setdefault((rule.name, i), {"rule": rule.name, "stage": rule.stage, "example": i,
                                                     "expected": gold, "commit": commit})
        record[arm] = pred
        record[f"{arm}_decided_by"] = decided_by
        record[f"{arm}_seconds"] = round(seconds, 1)
        echo(f"  {rule.name} example {i} {arm.replace('_', ' ')}: {pred} (right: {gold}; {decided_by}; "
             f"{seconds:.0f} s)")

    try:
        await asyncio.gather(*(run_one(*job) for job in jobs))
    finally:
        for client in (on, *clients.values()):
            await client.aclose()
    return [results[k] for k in sorted(results)]


def summarise_examples(records: list[dict]) -> dict:
    """Per rule: its examples checked end to end, and how many came out right with the rule switched off, and
    (veto rules) with it on."""
    out: dict = {}
    for r in records:
        row = out.setdefault(r["rule"], {"examples": 0, "right_without_rule": 0})
        row["examples"] += 1
        row["right_without_rule"] += r["without_rule"] == r["expected"]
        if "with_rule" in r:
            row["right_with_rule"] = row.get("right_with_rule", 0) + (r["with_rule"] == r["expected"])
    return out


def summarise_vetoes(records: list[dict]) -> dict:
    """Per veto rule and benchmark: programs held, claims it decides (their verdict changes with it off), and with
    it off: claims gained (wrong with it, right without) and lost (right with it, wrong without)."""
    from tools.rules import RULES

    return _summarise_held(records, [r.name for r in RULES if r.stage == "veto"], "held")


def summarise_withholds(records: list[dict]) -> dict:
    """Per claim withhold rule and benchmark, as for the veto rules: programs it held from the vote, claims whose
    verdict changes with it off, and of those, lost and gained when off."""
    return _summarise_held(records, claim_withholds(), "withheld")


def _summarise_held(records: list[dict], names: list[str], held: str) -> dict:
    """Per rule of ``names`` and benchmark: programs held (the records' ``held`` counts), claims changed with it
    off, and of those, lost and gained."""
    out: dict = {}
    for name in names:
        row = {}
        for benchmark in sorted({r["benchmark"] for r in records}):
            mine = [r for r in records if r["benchmark"] == benchmark]
            changed = [r for r in mine if name in r["off"]]
            row[benchmark] = {
                "claims": len(mine), "programs_held": sum(r.get(held, {}).get(name, 0) for r in mine),
                "claims_changed": len(changed),
                "lost_when_off": sum(r["replayed"] == r["gold"] and r["off"][name] != r["gold"] for r in changed),
                "gained_when_off": sum(r["replayed"] != r["gold"] and r["off"][name] == r["gold"] for r in changed)}
        out[name] = row
    return out


def summarise(records: list[dict]) -> dict:
    """Per rule and benchmark: fired, right (its verdict is the gold label), decided (it settled the claim: no other
    rule disagreed), and the majority label's score on the claims it decided; plus conflicts per benchmark."""
    from tools.rules import RULES

    out: dict = {"rules": {}, "benchmarks": {}}
    for benchmark in BENCHMARKS:
        mine = [r for r in records if r["benchmark"] == benchmark]
        golds = Counter(r["gold"] for r in mine)
        majority, _ = golds.most_common(1)[0] if golds else ("", 0)
        conflicts = [r for r in mine if len({f["verdict"] for f in r["fired"]}) > 1]
        out["benchmarks"][benchmark] = {"claims": len(mine), "majority_label": majority,
                                        "majority_baseline": golds[majority] / len(mine) if mine else None,
                                        "settled": sum(1 for r in mine if r["fired"] and r not in conflicts),
                                        "conflicts": len(conflicts)}
    by_benchmark = {b: [r for r in records if r["benchmark"] == b] for b in BENCHMARKS}
    for rule in (r for r in RULES if r.stage == "settle"):  # the veto rules are summarised apart
        row = {}
        for benchmark, mine in by_benchmark.items():
            majority = out["benchmarks"][benchmark]["majority_label"]
            fired = [(r, f) for r in mine for f in r["fired"] if f["rule"] == rule.name]
            decided = [(r, f) for r, f in fired if len({g["verdict"] for g in r["fired"]}) == 1]
            row[benchmark] = {"fired": len(fired), "right": sum(f["verdict"] == r["gold"] for r, f in fired),
                              "decided": len(decided),
                              "decided_right": sum(f["verdict"] == r["gold"] for r, f in decided),
                              "majority_right_on_decided": sum(r["gold"] == majority for r, _ in decided)}
        out["rules"][rule.name] = row
    return out


def write_report(records: list[dict], docs_dir: Path, commit: str | None, veto_records: list[dict] = (),
                 example_records: list[dict] | None = None) -> Path:
    """``example_records`` None keeps the committed examples log (the model run is not repeated)."""
    eval_dir = docs_dir / "eval"
    eval_dir.mkdir(parents=True, exist_ok=True)
    examples_path = eval_dir / EXAMPLES_LOG_NAME
    if example_records is None:
        example_records = ([json.loads(line) for line in examples_path.read_text(encoding="utf-8").splitlines()
                            if line.strip()] if examples_path.exists() else [])
    else:
        examples_path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in example_records),
                                 encoding="utf-8")
    summary = summarise(records)
    summary["vetoes"] = summarise_vetoes(list(veto_records))
    summary["withholds"] = summarise_withholds(list(veto_records))
    summary["rewrites"] = summarise_rewrites(list(veto_records))
    summary["examples"] = summarise_examples(example_records)
    summary["examples_commits"] = sorted({r["commit"] for r in example_records if r.get("commit")})
    log_path = eval_dir / LOG_NAME
    log_path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records), encoding="utf-8")
    (eval_dir / VETO_LOG_NAME).write_text(
        "".join(json.dumps(r, sort_keys=True) + "\n" for r in veto_records), encoding="utf-8")
    payload = {"benchmark": "rules", "split": "dev", "commit": commit, "items": len(records),
               "log": str(log_path.relative_to(docs_dir.parent)) if docs_dir.parent in log_path.parents
               else str(log_path), **summary}
    json_path = eval_dir / "rules.json"
    json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    (eval_dir / "rules.md").write_text(markdown(payload), encoding="utf-8")
    _chart(summary, eval_dir / "rules.png")
    return json_path



def _held_rows(rules: dict, benchmarks: list[str]) -> list[str]:
    """A veto or withhold table's rows: per rule and benchmark, programs held / claims changed / lost / gained."""
    return [f"| `{rule}` | " + " | ".join(
        f"{row[b]['programs_held']} / {row[b]['claims_changed']} / {row[b]['lost_when_off']} / "
        f"{row[b]['gained_when_off']}" for b in benchmarks) + " |" for rule, row in rules.items()]

def markdown(payload: dict) -> str:
    lines = ["# rules", "",
             f"Every settle rule of `tools/rules.py` (catalogue: `docs/rules.md`) on the table-disjoint dev splits, "
             f"at commit {payload['commit'] or 'unknown'}; {payload['items']} claims; per-item log "
             f"`{payload['log']}`. Generated by `evidentia eval rules`; recomputed by `evidentia eval recompute`.",
             "", "| benchmark | claims | settled by a rule | rules disagreed | always-majority |", "|---|---|---|---|---|"]
    for name, b in payload["benchmarks"].items():
        lines.append(f"| {name} | {b['claims']} | {b['settled']} | {b['conflicts']} | "
                     f"{b['majority_baseline']:.3f} ({b['majority_label']}) |")
    lines += ["", "Per rule: fired / its verdict was the gold label; in brackets, on the claims it decided, how "
              "many the always-majority label gets right (a rule is worth keeping where it beats that).", "",
              "| rule | " + " | ".join(BENCHMARKS) + " |", "|---|" + "---|" * len(BENCHMARKS)]
    for rule, row in payload["rules"].items():
        cells = []
        for benchmark in BENCHMARKS:
            c = row[benchmark]
            cells.append(f"{c['fired']} / {c['right']} right ({c['majority_right_on_decided']} by majority)"
                         if c["fired"] else "0")
        lines.append(f"| `{rule}` | " + " | ".join(cells) + " |")
    vetoes = payload.get("vetoes") or {}
    benchmarks = sorted({b for row in vetoes.values() for b in row})
    if benchmarks:
        lines += ["", "Veto rules, by replaying the committed dev run logs (the model's programs run again, no model "
                  f"call; per-item log `docs/eval/{VETO_LOG_NAME}`): programs held; claims whose replayed verdict "
                  "changes with the rule off; of those, lost (right with the rule, wrong without) and gained.", "",
                  "| rule | " + " | ".join(f"{b}: held / changed / lost / gained" for b in benchmarks) + " |",
                  "|---|" + "---|" * len(benchmarks)]
        lines += _held_rows(vetoes, benchmarks)
        withholds = payload.get("withholds") or {}
        if withholds:
            lines += ["", "Withhold rules (a program that ran held from the vote beside the others of its sampling), "
                      "the claim ones, measured the same way: programs held; claims whose replayed verdict changes "
                      "with the rule off; of those, lost and gained. The question ones ("
                      + ", ".join(f"`{n}`" for n in question_withholds()) + ") read no claim, and no dev log of "
                      "table questions with programs is committed: not measured here.", "",
                      "| rule | " + " | ".join(f"{b}: held / changed / lost / gained" for b in benchmarks) + " |",
                      "|---|" + "---|" * len(benchmarks)]
            lines += _held_rows(withholds, benchmarks)
        rewrites = payload.get("rewrites") or {}
        if rewrites:
            lines += ["", "Rewrite rules (the program readers of `tools/_program_readers.py`) that changed a replayed "
                      "program, measured the same way: programs changed; claims whose replayed verdict changes with "
                      "the rule off; of those, lost and gained. A rewrite that changed no replayed program is not "
                      "listed (it cannot change a verdict here).", "",
                      "| rule | " + " | ".join(f"{b}: changed / verdicts changed / lost / gained" for b in benchmarks)
                      + " |", "|---|" + "---|" * len(benchmarks)]
            for rule, row in rewrites.items():
                lines.append(f"| `{rule}` | " + " | ".join(
                    f"{row[b]['programs_changed']} / {row[b]['claims_changed']} / {row[b]['lost_when_off']} / "
                    f"{row[b]['gained_when_off']}" for b in benchmarks) + " |")
        claims = {b: next(iter(vetoes.values()))[b]["claims"] for b in benchmarks}
        lines += ["", "Claims replayed: " + ", ".join(f"{b} {n}" for b, n in claims.items()) + " (the dev claims "
                  "whose logged checks hold programs; the only committed dev logs with programs)."]
    examples = payload.get("examples") or {}
    if examples:
        lines += ["", "Rules on their own examples, checked end to end (`evidentia eval rules --examples`: the "
                  "product's claim check with the served model; `EVIDENTIA_RULES_OFF=<rule>` for the arm without it; "
                  f"per-item log `docs/eval/{EXAMPLES_LOG_NAME}`). A settle rule decides its examples in code (right "
                  "with it by its tests); a veto rule's example claim is checked with it on and off, once each (the "
                  "programs are sampled: one run per arm is a small, noisy measure). A rule the programs replace on "
                  "its own examples, and that decides no dev claim, adds nothing.", "",
                  "| rule | examples | right with the rule | right without |", "|---|---|---|---|"]
        for rule, row in examples.items():
            with_rule = row.get("right_with_rule", "by its tests")
            lines.append(f"| `{rule}` | {row['examples']} | {with_rule} | {row['right_without_rule']} |")
        commits = payload.get("examples_commits") or []
        if commits:
            lines += ["", f"Examples checked at commit {', '.join(commits)} (the log's records say which)."]
    decisions = pruning(payload)
    if decisions:
        lines += ["", "Pruning, by the reading-layer issue's test: a rule goes when switching it off loses nothing on "
                  "the dev splits *and* nothing on its own examples. Decided only where every dev split was "
                  "measured.", "", "| rule | stage | decision |", "|---|---|---|"]
        lines += [f"| `{rule}` | {stage} | {decision} |" for rule, stage, decision in decisions]
    else:
        lines += ["", "Not measured here: what switching a settle rule off costs. A claim a settle rule decides never "
                  "reaches the programs, so their verdict is not in any log; `evidentia eval rules --examples` "
                  "measures it on the rules' own examples with the model."]
    lines.append("")
    return "\n".join(lines)


def question_withholds() -> list[str]:
    from tools.rules import RULES

    return [r.name for r in RULES if r.stage == "withhold" and r.applies_to == "question"]


def pruning(payload: dict) -> list[tuple[str, str, str]]:
    """(rule, stage, decision in words) for every settle, veto and withhold rule, from the report's figures."""
    examples = payload.get("examples") or {}
    out = []
    for rule, row in (payload.get("rules") or {}).items():
        fired = sum(c["fired"] for c in row.values())
        right = sum(c["right"] for c in row.values())
        ex = examples.get(rule)
        if fired:
            out.append((rule, "settle", f"keeps: decides {fired} dev claim(s), {right} right"))
        elif ex is None:
            out.append((rule, "settle", "undecided: its examples were not checked without it"))
        elif ex["right_without_rule"] < ex["examples"]:
            out.append((rule, "settle", f"keeps: without it the programs miss {ex['examples'] - ex['right_without_rule']}"
                                        f" of its {ex['examples']} examples (no dev claim fires it)"))
        else:
            out.append((rule, "settle", "goes: no dev claim fires it and the programs get its examples right "
                                        "without it"))
    vetoes = payload.get("vetoes") or {}
    for rule, row in vetoes.items():
        measured = sorted(row)
        missing = [b for b in BENCHMARKS if b not in measured]
        lost = sum(c["lost_when_off"] for c in row.values())
        gained = sum(c["gained_when_off"] for c in row.values())
        ex = examples.get(rule)
        if missing:
            there = [f"lost {lost}" if lost else "", f"gained {gained}" if gained else ""]
            out.append((rule, "veto", f"undecided: dev measured on {', '.join(measured)} only (no "
                                      f"{'/'.join(missing)} dev log with programs)"
                                      + (f"; {' and '.join(t for t in there if t)} there when off"
                                         if lost or gained else "")))
        elif lost:
            out.append((rule, "veto", f"keeps: {lost} dev claim(s) lost when off"))
        elif ex is None or ex["right_without_rule"] < ex["examples"]:
            out.append((rule, "veto", "keeps: its examples need it" if ex else "undecided: its examples unchecked"))
        else:
            out.append((rule, "veto", "goes: nothing lost on the dev splits or its examples when off"))
    for rule, row in (payload.get("withholds") or {}).items():
        # its examples are unit-tested (tests/test_rules.py), not checked end to end with the model
        missing = [b for b in BENCHMARKS if b not in row]
        lost = sum(c["lost_when_off"] for c in row.values())
        gained = sum(c["gained_when_off"] for c in row.values())
        there = " and ".join(t for t in (f"lost {lost}" if lost else "", f"gained {gained}" if gained else "") if t)
        if missing:
            out.append((rule, "withhold", f"undecided: dev measured on {', '.join(sorted(row))} only (no "
                                          f"{'/'.join(missing)} dev log with programs)"
                                          + (f"; {there} there when off" if there else "")))
        elif lost:
            out.append((rule, "withhold", f"keeps: {lost} dev claim(s) lost when off"))
        else:
            out.append((rule, "withhold", "undecided: nothing lost on the dev splits when off; its examples were "
                                          "not checked end to end"))
    if payload.get("withholds") is not None:
        out += [(rule, "withhold", "undecided: no dev log of table questions with programs")
                for rule in question_withholds()]
    return out


def _chart(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary["rules"])
    fired = [sum(summary["rules"][n][b]["fired"] for b in BENCHMARKS) for n in names]
    right = [sum(summary["rules"][n][b]["right"] for b in BENCHMARKS) for n in names]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.barh(names, fired, color="#bbb", label="fired")
    ax.barh(names, right, color="#2a7", label="right")
    ax.set_xlabel("dev claims (TabFact + SciTab + PubHealthTab)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def register(group) -> None:
    @group.command("rules", help="Each settle rule measured on the dev splits (no model): fired, right, conflicts; "
                                 "veto, withhold and rewrite rules switched off one at a time in replays of the dev "
                                 "logs; writes docs/eval/rules.*")
    @click.option("--seed", type=int, default=None, help="Item selection seed (default: the benchmarks' own).")
    @click.option("--examples", is_flag=True,
                  help="Also check the rules' own examples end to end with the served model (minutes): a settle "
                       "rule's with it off, a veto rule's claim with it on and off; without it the committed "
                       "examples log is kept.")
    @click.option("--concurrency", type=int, default=2, show_default=True, help="Example checks at once.")
    @click.option("--stage", "stages", type=click.Choice(["settle", "veto"]), multiple=True,
                  help="With --examples: only these stages' examples (repeatable; default both). The other rules' "
                       "records in the committed examples log are kept.")
    def rules_command(seed: int | None, examples: bool, concurrency: int, stages: tuple[str, ...]) -> None:
        from assistant.evals.report import DOCS_DIR, code_version
        from assistant.evals.tables_eval import DEFAULT_SEED
        from assistant.settings import Settings

        settings = Settings()
        if settings.eval_data_dir is None or not Path(settings.eval_data_dir).exists():
            raise click.ClickException("The dev splits come from the benchmark data: set EVIDENTIA_EVAL_DATA_DIR "
                                       "(e.g. ../shared/eval-data).")
        chosen = DEFAULT_SEED if seed is None else seed
        records = measure(Path(settings.eval_data_dir), chosen, echo=click.echo)
        veto_records = measure_vetoes(Path(settings.eval_data_dir), chosen, DOCS_DIR / "eval" / "runs",
                                      echo=click.echo)
        example_records = None
        if examples:
            import asyncio

            chosen_stages = stages or ("settle", "veto")
            fresh = asyncio.run(measure_examples(settings, concurrency=concurrency, echo=click.echo,
                                                 stages=chosen_stages))
            measured = {r["rule"] for r in fresh}
            log_path = DOCS_DIR / "eval" / EXAMPLES_LOG_NAME
            kept = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()
                    if line.strip()] if log_path.exists() else []
            example_records = sorted([r for r in kept if r["rule"] not in measured] + fresh,
                                     key=lambda r: (r["rule"], r["example"]))
        path = write_report(records, DOCS_DIR, code_version(), veto_records, example_records)
        click.echo(markdown(json.loads(path.read_text())))
        click.echo(f"wrote {path}")
