"""Shared pieces of every evaluation and benchmark: metrics, resumable results, report files.

Formats (the brief's):

- ``docs/bench/<area>.json``: ``{"machine": str, "results": {metric: {"value": float, "unit": str}}}``
- ``docs/eval/<benchmark>.json``: ``{"benchmark", "model", "items", "seed", "variants": {name: {"accuracy": float, ...}}}``

Each JSON gets a ``.md`` (the printed table) and a ``.png`` chart beside it.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable

from kb.cpu import describe_cpu

CODE_ROOT = Path(__file__).resolve().parents[2]
DOCS_DIR = CODE_ROOT / "docs"
# The folders whose code decides an evaluation's answers: a change elsewhere (docs, tests) leaves a result as it was.
CODE_PATHS = ("assistant", "tools", "kb", "memory", "prompts")
NOT_RECORDED = "not recorded"


def machine_description() -> str:
    """The machine a number was measured on, with the CPU's instruction set (AVX-512, AVX2, NEON) named: speed
    on a CPU depends on it more than on anything else."""
    mem_gb = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem_gb = f", {kb / 1024**2:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{describe_cpu()}{mem_gb}, {platform.system()} {platform.release()}"


# -- metrics ------------------------------------------------------------------------------
def classification_metrics(golds: list[str], preds: list[str], labels: Iterable[str]) -> dict[str, Any]:
    """Accuracy, per-label precision/recall/F1, macro F1 and the confusion matrix."""
    labels = list(labels)
    n = len(golds)
    correct = sum(g == p for g, p in zip(golds, preds))
    confusion = {g: {p: 0 for p in labels + (["other"] if any(p not in labels for p in preds) else [])} for g in labels}
    for g, p in zip(golds, preds):
        confusion.setdefault(g, {})
        key = p if p in labels else "other"
        confusion[g][key] = confusion[g].get(key, 0) + 1
    per_label = {}
    for lab in labels:
        tp = sum(1 for g, p in zip(golds, preds) if g == lab and p == lab)
        fp = sum(1 for g, p in zip(golds, preds) if g != lab and p == lab)
        fn = sum(1 for g, p in zip(golds, preds) if g == lab and p != lab)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per_label[lab] = {"precision": prec, "recall": rec, "f1": f1, "support": tp + fn}
    present = [lab for lab in labels if per_label[lab]["support"] > 0] or labels
    macro_f1 = sum(per_label[lab]["f1"] for lab in present) / len(present) if present else 0.0
    return {"accuracy": correct / n if n else 0.0, "macro_f1": macro_f1, "per_label": per_label,
            "confusion": confusion, "n": n}


# -- fallbacks apart, and what a model-free answer would score ---------------------------------
def fallback_scores(records: list[dict]) -> dict[str, Any]:
    """Accuracy with the judge's fallbacks scored as their own outcome.

    ``records`` carry ``correct`` and ``judge_failed`` (the judge's output was unusable and word overlap,
    not the model, chose). Returns ``accuracy`` (a fallback counts as wrong: only the model's own answers
    score), ``accuracy_with_fallback`` (the fallback's choice scored as an answer; labelled as such) and
    ``judge_failed_rate``. When some records lack the flag (logged before it existed), the split is
    unknown: only ``accuracy_with_fallback`` and ``judge_flag_missing`` (their count) are given.
    """
    if not records:
        return {}
    n = len(records)
    out: dict[str, Any] = {"accuracy_with_fallback": sum(bool(r["correct"]) for r in records) / n}
    missing = sum(1 for r in records if "judge_failed" not in r)
    if missing:
        out["judge_flag_missing"] = missing
        return out
    failed = sum(bool(r["judge_failed"]) for r in records)
    out["accuracy"] = sum(bool(r["correct"]) and not r["judge_failed"] for r in records) / n
    out["judge_failed_rate"] = failed / n
    return out


def label_baselines(golds: list[str], first_labels: list[str] | None = None) -> dict[str, Any]:
    """Model-free baselines from the gold labels of the evaluated items only.

    ``majority_baseline``: accuracy of always answering the most frequent gold label (for multiple
    choice, the most frequent gold option letter). With ``first_labels`` (each item's first option
    letter), ``first_option_baseline``: accuracy of always answering the first option.
    """
    if not golds:
        return {}
    counts = Counter(golds)
    label, top = max(sorted(counts.items()), key=lambda kv: kv[1])  # ties: alphabetically first label
    out: dict[str, Any] = {"majority_baseline": top / len(golds), "majority_label": label,
                           "baseline_items": len(golds),
                           # every constant answer, so a variant's accuracy can be matched to one (#18)
                           "constant_label_baselines": {lab: c / len(golds) for lab, c in sorted(counts.items())}}
    if first_labels is not None:
        if len(first_labels) != len(golds):
            raise ValueError("first_labels must give one first option per gold label")
        out["first_option_baseline"] = sum(g == f for g, f in zip(golds, first_labels)) / len(golds)
    return out


def baseline_notes(payload: dict[str, Any]) -> str:
    """One Markdown line on the model-free baselines of a report, or '' when it has none."""
    if payload.get("majority_baseline") is None:  # absent, or None where no label exists (kg-harvest)
        return ""
    text = (f"Baselines without any model, on the same {payload.get('baseline_items', '?')} items: always "
            f"'{payload.get('majority_label', '?')}' (the most frequent gold label) scores "
            f"{payload['majority_baseline']:.3f}")
    if "first_option_baseline" in payload:
        text += f"; always the first option scores {payload['first_option_baseline']:.3f}"
    others = {lab: acc for lab, acc in payload.get("constant_label_baselines", {}).items()
              if lab != payload.get("majority_label")}
    if others and len(others) <= 4:
        text += "; always " + ", always ".join(f"'{lab}' {acc:.3f}" for lab, acc in others.items())
    return text + "."


# -- resumable per-item results ------------------------------------------------------------
def code_version(root: Path = CODE_ROOT) -> str | None:
    """The commit the running code is ("290631c"; "290631c+dirty" when its code differs from it), or None
    outside a git checkout.

    On this project's CPU machines one benchmark outlasts a session, so a run is resumed later, often from a
    worktree of the commit it began at; each logged result carries this stamp so a report can say which code
    produced which of its predictions, instead of mixing commits silently.
    """
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short=7", "HEAD")
    if not commit:
        return None
    changed = git("status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS)
    return commit + ("+dirty" if changed else "")


def provenance(records: Iterable[dict]) -> dict[str, int]:
    """How many of ``records`` each commit produced (:func:`code_version`'s stamp), most first."""
    return dict(Counter(str(r.get("commit") or NOT_RECORDED) for r in records).most_common())


class ResultsLog:
    """Append-only JSONL of per-item results, keyed by (variant, item id), so a run resumes.

    Each record added is stamped with the running code's commit (:func:`code_version`), unless the caller gives one.
    """

    def __init__(self, path: Path, *, commit: str | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._commit = commit
        self._done: dict[tuple[str, str], dict] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut by an interruption: that item is simply redone
                self._done[(rec["variant"], str(rec["id"]))] = rec

    def get(self, variant: str, item_id: str) -> dict | None:
        return self._done.get((variant, str(item_id)))

    def add(self, variant: str, item_id: str, **record: Any) -> dict:
        if self._commit is None:
            self._commit = code_version() or ""
        rec = {"variant": variant, "id": str(item_id), **record}
        if self._commit and "commit" not in rec:
            rec["commit"] = self._commit
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._done[(variant, str(item_id))] = rec
        return rec

    def records(self, variant: str) -> list[dict]:
        return [r for (v, _), r in self._done.items() if v == variant]


# -- writing reports -----------------------------------------------------------------------
def _table(headers: list[str], rows: list[list[Any]]) -> str:
    def fmt(v: Any) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


# A section written by hand after a run ("## Added by hand after the run (not generated)"): a re-run rewrites
# everything above it and keeps it, marked, since it may discuss the numbers it replaced. Before, two re-runs
# (serving, kg-harvest) silently dropped such readings and they were restored from git by hand.
_HAND_HEADING = re.compile(r"^##+ .*\badded by hand\b", re.I | re.M)
KEPT_NOTE = "_Kept from the previous version of this file by the re-run of {date}: it may discuss earlier numbers._"


def with_hand_section(path: Path, generated: str) -> str:
    """``generated`` followed by the hand-written section of the file at ``path``, if it has one."""
    try:
        old = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return generated
    m = _HAND_HEADING.search(old)
    if not m:
        return generated
    hand = old[m.start():].rstrip() + "\n"
    note = KEPT_NOTE.format(date=datetime.date.today().isoformat())
    heading, _, body = hand.partition("\n")
    body = "\n".join(line for line in body.splitlines() if not line.startswith("_Kept from the previous version"))
    return f"{generated.rstrip()}\n\n{heading}\n\n{note}\n{body.rstrip()}\n"


def write_eval(benchmark: str, *, model: str, items: int, seed: int, variants: dict[str, dict[str, Any]],
               notes: str = "", extra: dict[str, Any] | None = None, docs_dir: Path | None = None,
               metric_keys: list[str] | None = None, chart_metric: str = "accuracy") -> Path:
    """Write docs/eval/<benchmark>.{json,md,png}; print the table; return the JSON path.

    ``extra`` should carry the model-free baselines (:func:`label_baselines`); they are stated in the .md.
    """
    out_dir = (docs_dir or DOCS_DIR) / "eval"
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": benchmark, "model": model, "items": items, "seed": seed, "variants": variants}
    if extra:
        payload.update(extra)
    json_path = out_dir / f"{benchmark}.json"
    json_path.write_text(json.dumps(payload, indent=2, default=float) + "\n")
    keys = metric_keys or sorted({k for v in variants.values() for k, val in v.items()
                                  if isinstance(val, (int, float)) and not isinstance(val, bool)})
    table = _table(["variant"] + keys, [[name] + [v.get(k, "") for k in keys] for name, v in variants.items()])
    print(f"\n{benchmark} — model {model}, {items} items, seed {seed}\n{table}\n")
    md = f"# {benchmark}\n\nModel: `{model}`. Items: {items}. Seed: {seed}.\n\n{table}\n"
    if baselines := baseline_notes(payload):
        md += f"\n{baselines}\n"
    if notes:
        md += f"\n{notes.strip()}\n"
    md_path = out_dir / f"{benchmark}.md"
    md_path.write_text(with_hand_section(md_path, md))
    _bar_chart(out_dir / f"{benchmark}.png", benchmark,
               {n: v.get(chart_metric) or 0.0 for n, v in variants.items()}, ylabel=chart_metric)
    return json_path


def write_bench(area: str, results: dict[str, tuple[float, str]], *, notes: str = "",
                docs_dir: Path | None = None, plot: dict[str, Any] | None = None, runs: bool = False) -> Path:
    """Write docs/bench/<area>.{json,md,png}: the latest run of the default configuration.

    ``runs``: another configuration or an older run, written under docs/bench/runs/ instead, so that each area has
    one canonical result. ``results`` maps metric -> (value, unit). ``plot`` is ``{"x": [...], "series":
    {label: [...]}, "xlabel": str, "ylabel": str, "logx": bool}``; without it the chart shows the metrics.
    """
    out_dir = (docs_dir or DOCS_DIR) / "bench" / ("runs" if runs else "")
    out_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_description()
    payload = {"machine": machine,
               "results": {k: {"value": float(v), "unit": u} for k, (v, u) in results.items()}}
    json_path = out_dir / f"{area}.json"
    json_path.write_text(json.dumps(payload, indent=2) + "\n")
    table = _table(["metric", "value", "unit"], [[k, float(v), u] for k, (v, u) in results.items()])
    print(f"\n{area} benchmark on {machine}\n{table}\n")
    md = f"# Benchmark: {area}\n\nMachine: {machine}.\n\n{table}\n"
    if notes:
        md += f"\n{notes.strip()}\n"
    md_path = out_dir / f"{area}.md"
    md_path.write_text(with_hand_section(md_path, md))
    if plot:
        _line_chart(out_dir / f"{area}.png", area, plot)
    else:
        _bar_chart(out_dir / f"{area}.png", area, {k: float(v) for k, (v, _) in results.items()}, ylabel="value")
    return json_path


def _bar_chart(path: Path, title: str, values: dict[str, float], ylabel: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(values) + 2), 3.5))
    bars = ax.bar(list(values), list(values.values()), color="#4C72B0")
    ax.bar_label(bars, fmt="%.3g")
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _line_chart(path: Path, title: str, plot: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, ys in plot["series"].items():
        ax.plot(plot["x"], ys, marker="o", label=label)
    if plot.get("logx"):
        ax.set_xscale("log")
    if plot.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(plot.get("xlabel", ""))
    ax.set_ylabel(plot.get("ylabel", ""))
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def label_counts(labels: Iterable[str]) -> dict[str, int]:
    return dict(Counter(labels))


async def bounded_map(fn: Callable[[Any], Awaitable[None]], items: Iterable[Any], concurrency: int) -> None:
    """Await ``fn(item)`` for every item, at most ``concurrency`` at a time, in item order of start.

    A served model batches concurrent requests (vLLM on these 2 cores: 3.6 tokens/s for one request,
    19 tokens/s aggregate for four), so evaluations keep a few questions in flight. The first error
    cancels the rest and is raised; everything finished before it stays in the results log.
    """
    import asyncio

    sem = asyncio.Semaphore(max(1, concurrency))

    async def one(item):
        async with sem:
            await fn(item)

    tasks = [asyncio.ensure_future(one(it)) for it in items]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()


def best_regularisation(X, y, folds, grid) -> float:
    """The logistic regression's C from ``grid`` with the best accuracy over ``folds`` (pairs of train and test
    indices), ties to the earlier C: the inner cross-validation the learned readers choose C by
    (assistant.evals.pubmedqa_verdicts, assistant.evals.medquad_focus), each with its own folds and grid."""
    from sklearn.linear_model import LogisticRegression

    best, best_acc = grid[0], -1.0
    for c in grid:
        right = 0
        for tr, te in folds:
            model = LogisticRegression(C=c, max_iter=5000).fit(X[tr], y[tr])
            right += int((model.predict(X[te]) == y[te]).sum())
        if right / len(y) > best_acc + 1e-12:
            best, best_acc = c, right / len(y)
    return best


def mcnemar(a: dict[str, bool], b: dict[str, bool]) -> dict[str, float]:
    """Paired comparison of two systems on the items both answered (exact two-sided McNemar test).

    ``a`` and ``b`` map item id -> correct. Returns ``n`` (shared items), ``a_only`` / ``b_only`` (items
    only that system got right) and ``p`` (probability of a split at least this uneven if both were equally
    good). With few discordant items no difference can be shown, which the notes then say.
    """
    from math import comb

    shared = sorted(set(a) & set(b))
    a_only = sum(1 for i in shared if a[i] and not b[i])
    b_only = sum(1 for i in shared if b[i] and not a[i])
    n = a_only + b_only
    k = min(a_only, b_only)
    p = min(1.0, 2 * sum(comb(n, j) for j in range(k + 1)) / 2**n) if n else 1.0
    return {"n": len(shared), "a_only": a_only, "b_only": b_only, "p": p}


def _p_value(p: float) -> str:
    """0.597, 0.012, 1.2e-06: three decimals hide how small a tiny p is."""
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def paired_notes(paired: dict[str, dict[str, float]], unit: str = "items") -> list[str]:
    """Markdown bullets, one per ``"<a> vs <b>"`` comparison from :func:`mcnemar`."""
    lines = []
    for name, r in paired.items():
        first, second = name.split(" vs ")
        verdict = "a real difference at the 5% level" if r["p"] < 0.05 else "no difference this sample can show"
        lines.append(f"- Paired, {name}: on {r['n']} shared {unit} only {first} was right on {r['a_only']}, only "
                     f"{second} on {r['b_only']} (exact McNemar p = {_p_value(r['p'])}: {verdict}).")
    return lines


def read_run_log(path: Path) -> dict[str, dict[str, dict]]:
    """A run log's records by variant and item id; the last record of an item wins, a cut line is skipped, as in
    :class:`~assistant.evals.report.ResultsLog` (read here without it: that class creates its folder)."""
    by_variant: dict[str, dict[str, dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        by_variant.setdefault(rec["variant"], {})[str(rec["id"])] = rec
    return by_variant
