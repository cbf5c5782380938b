"""``evidentia kb programs rerank``: fit the execution-aware reranker of table programs (tools.program_rerank) on
tuning logs only, and measure it against the vote, out of fold.

The data are the logged programs of items whose answer is known and which are never test items: the mining logs
(``<data>/programs/mined-<source>.jsonl``: WikiTableQuestions training questions, the claim benchmarks' tuning
splits) and the claim benchmarks' dev-split evaluation logs (``<data>/eval/tables-<benchmark>-<model>-dev.jsonl``).
Each logged program is replayed under today's rules, described by its features and labelled right or wrong.

Folds are by table (an item's table never in its own fold's training part), C is chosen by an inner
cross-validation (:func:`assistant.evals.report.best_regularisation`), and every item is decided with probabilities
from a model that never saw its table. Arms, per item, scored as right only when the decision equals the gold
(an undecided item is wrong; the live path would fall back to the model there):
- ``plurality``: the answer most programs gave;
- ``majority``: a strict majority of the programs that ran, else undecided;
- ``majority+rules``: today's vote (withhold rules, tools/rules.py), else undecided;
- ``reranker``: the answer whose programs' probabilities sum highest;
- ``any program right``: an upper bound no chooser can pass.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import click
import numpy as np

GRID = (0.01, 0.1, 1.0, 10.0)
FOLDS = 5


@dataclass
class LoggedItem:
    id: str
    source: str
    kind: str
    gold: list[str]
    table_key: str
    runs: list  # ScoredRun, features of the programs that ran
    labels: list[bool]  # each run right
    rules_winner: str | None  # today's vote with the withhold rules
    arms: dict[str, bool] = field(default_factory=dict)


def _match(kind: str, gold: list[str]):
    from assistant.evals.tables_eval import denotation_match

    return (lambda v: denotation_match(v, gold)) if kind == "question" else (lambda v: v == gold[0])


def _logged(settings, echo) -> list[tuple[str, str, str, object, str, list[str], dict]]:
    """(item id, source, kind, table, text, gold, programs) of every logged tuning item with programs."""
    from assistant.evals.program_mining import SOURCES, load_items, mining_log_path
    from assistant.evals.report import read_run_log
    from assistant.evals.tables_eval import load_split, select_items

    out = []
    for source, spec in SOURCES.items():
        path = mining_log_path(settings, source)
        if not path.exists():
            continue
        records = read_run_log(path).get(source, {})
        items = {it.id: it for it in load_items(settings, source)}
        n = 0
        for item_id, rec in records.items():
            if rec.get("programs") and item_id in items:
                it = items[item_id]
                out.append((item_id, source, spec.kind, it.table, it.text, it.gold, rec["programs"]))
                n += 1
        echo(f"  {source}: {n} mined items with programs ({path})")
    eval_dir = Path(settings.data_dir) / "eval"
    for bench in ("tabfact", "scitab", "pubhealthtab"):
        for path in sorted(eval_dir.glob(f"tables-{bench}-*-dev.jsonl")):
            if settings.eval_data_dir is None:
                raise click.ClickException("Set EVIDENTIA_EVAL_DATA_DIR to read the dev logs' claims.")
            dev = select_items(bench, load_split(bench, Path(settings.eval_data_dir), "dev"), seed=0, limit=None,
                               split="dev")
            items = {str(it.id): it for it in dev}
            n = 0
            for item_id, rec in read_run_log(path).get("program", {}).items():
                programs = rec.get("programs") or {}
                if item_id in items and programs.get("runs") and programs.get("program_form", "ops") == "ops" \
                        and rec["gold"] in ("SUPPORTS", "REFUTES"):
                    it = items[item_id]
                    out.append((item_id, f"{bench}-dev-log", "claim", it.table, it.claim, [rec["gold"]], programs))
                    n += 1
            echo(f"  {bench} dev log: {n} claims with programs ({path})")
    return out


def collect(settings, echo=print) -> list[LoggedItem]:
    """Every logged tuning item, its programs replayed and described (module docstring)."""
    from tools.program_replay import replay_runs, replayed_features

    items = []
    for item_id, source, kind, table, text, gold, programs in _logged(settings, echo):
        runs = replayed_features(table, text, programs["runs"], kind)
        if not runs:
            continue
        match = _match(kind, gold)
        winner = replay_runs(table, text, programs["runs"], kind).winner
        items.append(LoggedItem(f"{source}:{item_id}", source, kind, gold, table.fingerprint(), runs,
                                [bool(match(r.verdict)) for r in runs], winner))
    return items


def evaluate(items: list[LoggedItem], echo=print) -> dict:
    """Out-of-fold decisions of every arm (module docstring); returns the fitted coefficients' inputs too."""
    from sklearn.model_selection import GroupKFold

    from assistant.evals.report import best_regularisation
    from tools.program_rerank import choose_by

    X = np.vstack([r.features for it in items for r in it.runs])
    y = np.array([lab for it in items for lab in it.labels], dtype=int)
    owner = np.array([i for i, it in enumerate(items) for _ in it.runs])
    groups = np.array([items[i].table_key for i in owner])
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    Z = (X - mean) / scale
    n_folds = min(FOLDS, len(set(groups)))
    if n_folds < 2 or len(set(y)) < 2:
        raise click.ClickException(f"Too little to fit on: {len(items)} items, {len(X)} programs, "
                                   f"{int(y.sum())} right. Mine more first.")
    from sklearn.linear_model import LogisticRegression

    p = np.zeros(len(y))
    for tr, te in GroupKFold(n_folds).split(Z, y, groups):
        inner = list(GroupKFold(min(n_folds, len(set(groups[tr])))).split(Z[tr], y[tr], groups[tr])) \
            if len(set(groups[tr])) >= 2 else [(np.arange(len(tr)), np.arange(len(tr)))]
        c = best_regularisation(Z[tr], y[tr], inner, GRID)
        model = LogisticRegression(C=c, max_iter=5000).fit(Z[tr], y[tr])
        p[te] = model.predict_proba(Z[te])[:, 1]
    at = 0
    for it in items:
        for r in it.runs:
            r.p_right = float(p[at])
            at += 1
        match = _match(it.kind, it.gold)
        votes = Counter(r.verdict for r in it.runs)
        top, count = votes.most_common(1)[0]
        majority = top if count * 2 > len(it.runs) else None
        chosen = {"plurality": choose_by(it.runs, lambda r: 1.0), "majority": majority,
                  "majority+rules": it.rules_winner, "reranker": choose_by(it.runs)}
        it.arms = {arm: v is not None and bool(match(v)) for arm, v in chosen.items()}
        it.arms["any program right"] = any(it.labels)
    c_all = best_regularisation(Z, y, list(GroupKFold(n_folds).split(Z, y, groups)), GRID)
    final = LogisticRegression(C=c_all, max_iter=5000).fit(Z, y)
    return {"mean": mean, "scale": scale, "coef": final.coef_[0], "intercept": float(final.intercept_[0]), "C": c_all,
            "programs": len(y), "programs_right": int(y.sum())}


REPORT = "program-reranker-dev"  # fitted and measured on tuning data only
ARMS = ("plurality", "majority", "majority+rules", "reranker", "any program right")


def summarise(records: list[dict]) -> dict[str, dict]:
    """Each arm's accuracy per kind from the per-item log (what the report publishes, recomputed)."""
    out = {}
    for arm in ARMS:
        for kind in ("claim", "question"):
            chosen = [r for r in records if r["kind"] == kind]
            if chosen:
                out[f"{arm} ({kind}s)"] = {"accuracy": sum(bool(r["arms"][arm]) for r in chosen) / len(chosen),
                                           "n": len(chosen)}
    return out


def read_log(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def run(settings, *, docs_dir: Path | None = None, save: bool = True, echo=print) -> Path:
    from assistant.evals.report import label_baselines, mcnemar, paired_notes, write_eval
    from tools.program_rerank import FEATURES, RERANKER_FILE, Reranker

    echo("Reading the tuning logs:")
    items = collect(settings, echo)
    fitted = evaluate(items, echo)
    records = [{"id": it.id, "source": it.source, "kind": it.kind, "programs": len(it.runs), "arms": it.arms}
               for it in items]
    variants = summarise(records)
    correct = {arm: {it.id: it.arms[arm] for it in items} for arm in ARMS}
    paired = {"reranker vs majority+rules": mcnemar(correct["reranker"], correct["majority+rules"]),
              "reranker vs plurality": mcnemar(correct["reranker"], correct["plurality"])}
    claims = [it for it in items if it.kind == "claim"]
    baselines = label_baselines([it.gold[0] for it in claims]) if claims else {}
    sources = Counter(it.source for it in items)
    coef = dict(zip(FEATURES, map(float, fitted["coef"])))
    top = sorted(coef.items(), key=lambda kv: -abs(kv[1]))[:8]
    notes = ("Out-of-fold decisions over the tuning logs only (folds by table; C by inner cross-validation): "
             + ", ".join(f"{s} {n}" for s, n in sorted(sources.items())) + f" items, {fitted['programs']} programs "
             f"that ran ({fitted['programs_right']} right). An undecided item counts as wrong. The majority baseline "
             "is over the claims' gold labels; a question's constant baseline is near 0 and not shown.\n\n"
             + "\n".join(paired_notes(paired, "items"))
             + "\n\nLargest standardised coefficients of the model fitted on all of it: "
             + ", ".join(f"{name} {value:+.2f}" for name, value in top) + f" (C = {fitted['C']}).")
    path = write_eval(REPORT, model=settings.llm_model, items=len(items), seed=0, variants=variants,
                      notes=notes, docs_dir=docs_dir, metric_keys=["accuracy", "n"],
                      extra={**baselines, "paired": paired, "sources": dict(sources), "coefficients": coef,
                             "split": "dev", "log": f"{REPORT}.jsonl"})
    path.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    if save:
        Reranker(fitted["mean"], fitted["scale"], fitted["coef"], fitted["intercept"],
                 fitted_on=", ".join(f"{s} {n}" for s, n in sorted(sources.items()))).save(RERANKER_FILE)
        echo(f"Saved the reranker fitted on all {len(items)} items to {RERANKER_FILE}")
    return path


def register(group) -> None:
    @group.command("rerank")
    @click.option("--no-save", is_flag=True, help="Measure only; keep the shipped coefficients.")
    def rerank_cmd(no_save: bool) -> None:
        """Fit the reranker of table programs on the tuning logs and measure it against the vote, out of fold."""
        from assistant.settings import Settings

        click.echo(f"Wrote {run(Settings(), save=not no_save, echo=click.echo)}")
