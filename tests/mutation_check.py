"""Deliberately broken builds (#18): each mutant breaks one thing a test claims to check; the test must fail.

Run on demand (not collected by pytest)::

    .venv/bin/python tests/mutation_check.py                 # every mutant
    .venv/bin/python tests/mutation_check.py gat judge       # only mutants whose key contains these words

Each mutant is applied to a scratch ``git worktree`` of HEAD (this checkout is never touched), the tests it
names run there with ``EVIDENTIA_REQUIRE_REAL_MODEL=1`` (so a real-model test cannot pass by skipping; those
need the served model), and the worktree is removed. A mutant *survives* when its tests still pass: then the
test does not check what its name says. Results go to ``docs/mutation_check.md``; the run exits 1 if any
mutant survived.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    key: str
    breaks: str  # what the broken build gets wrong, in words
    path: str
    old: str  # must occur exactly once in ``path``
    new: str
    tests: tuple[str, ...]


# The judge's output made unusable (word overlap then decides): two tests must each catch it, so two mutants.
_JUDGE_CALL = "        verdict = await llm.structured("
_JUDGE_UNUSABLE = ("tools/_mc.py", _JUDGE_CALL,
                   "        raise LLMResponseError('mutant: judge output unusable')\n" + _JUDGE_CALL)

MUTANTS = [
    Mutant("judge", "the multiple-choice judge's output is always unusable, so word overlap decides",
           *_JUDGE_UNUSABLE, ("tests/test_text_search.py::test_real_model_answers_from_tiny_kb_with_valid_citation",)),
    Mutant("judge-kg", "the same broken judge, under the real-model KG question",
           *_JUDGE_UNUSABLE, ("tests/test_kg_e2e.py",)),
    Mutant("likelihood-prior", "the multiple-choice likelihood decider forgets each option's prior (raw likelihood)",
           "tools/_mc.py", "        return self.with_facts - self.prior", "        return self.with_facts",
           ("tests/test_mc_likelihood.py::test_the_option_the_evidence_raises_most_wins_over_the_likeliest_word",)),
    Mutant("gat", "the GAT is never trained (its node scores stay the untrained ones)",
           "tools/_gat.py", "    for _ in range(epochs):", "    for _ in range(0):",
           ("tests/test_kg_gat.py",)),
    Mutant("verdict", "table programs' verdicts are inverted",
           "tools/_table_program.py",
           'return "SUPPORTS" if ex.truth else "REFUTES"', 'return "REFUTES" if ex.truth else "SUPPORTS"',
           ("tests/test_tables_verify.py::test_real_model_default_verdicts_on_unambiguous_claims",)),
    Mutant("password", "an account's name alone logs in, whatever the password",
           "memory/accounts.py",
           "            _hasher.verify(stored, password)\n",
           "            return bool(rows)  # mutant\n",
           ("tests/test_app_handlers.py::test_accounts_separate_users",)),
    Mutant("author", "every chat reads as the requesting user's own (the thread-author check is void)",
           "assistant/ui/access.py",
           "    async def _author_of_step(self, step_id: str | None) -> str | None:",
           "    async def get_thread_author(self, thread_id: str) -> str:\n        return _request_user.get()\n\n"
           "    async def _author_of_step(self, step_id: str | None) -> str | None:",
           ("tests/test_api_isolation.py",)),
    Mutant("embedder", "the embedding model cannot load (the filter test must fail, not skip)",
           "assistant/embeddings.py",
           "        self.model = SentenceTransformer(resolve_model_path(name), device=device)",
           "        raise OSError('mutant: the embedding model files are missing')",
           ("tests/test_tables_filter.py::test_measles_example_keeps_year_cases_and_row_label",)),
]


def run_mutant(m: Mutant, worktree: Path) -> dict:
    target = worktree / m.path
    source = target.read_text()
    if source.count(m.old) != 1:  # the code moved: say so rather than report a meaningless pass
        return {"key": m.key, "outcome": "stale", "detail": f"{m.path}: the mutated line is not there once"}
    target.write_text(source.replace(m.old, m.new))
    t0 = time.perf_counter()
    try:
        proc, lines = _pytest(worktree, m.tests)
    finally:
        target.write_text(source)
    # rc 1: tests failed (killed); 0: they passed (survived); anything else (2-5) is a broken run, not a result.
    outcome = {0: "SURVIVED", 1: "killed"}.get(proc.returncode, f"error (pytest rc {proc.returncode})")
    return {"key": m.key, "outcome": outcome, "detail": lines[-1] if lines else proc.stderr[-300:],
            "seconds": round(time.perf_counter() - t0)}


def _pytest(worktree: Path, tests, *options: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run ``tests`` in ``worktree`` with real models required; the process and its non-blank output lines."""
    # ``-p no:cacheprovider``: the scratch tree's pytest cache must not reorder anything here.
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, *tests],
                          cwd=worktree, env=dict(os.environ, EVIDENTIA_REQUIRE_REAL_MODEL="1"),
                          capture_output=True, text=True)
    return proc, [ln for ln in proc.stdout.splitlines() if ln.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("only", nargs="*", help="run only mutants whose key contains one of these")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "mutation_check.md")
    args = ap.parse_args()
    chosen = [m for m in MUTANTS if not args.only or any(o in m.key for o in args.only)]
    results = []
    with tempfile.TemporaryDirectory(prefix="evidentia-mutants-") as tmp:
        worktree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), "HEAD"], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            # The unmutated build first: a test that already fails proves nothing by failing on a mutant.
            tests = list(dict.fromkeys(t for m in chosen for t in m.tests))
            base, base_lines = _pytest(worktree, tests, "-rx")
            baseline = f"unmutated build: pytest rc {base.returncode}, {base_lines[-1] if base_lines else ''}"
            xfails = [ln for ln in base_lines if ln.startswith("XFAIL")]
            print(baseline, *xfails, sep="\n", flush=True)
            for m in chosen:
                res = run_mutant(m, worktree)
                print(f"{m.key:9} {res['outcome']:8} {res['detail']}", flush=True)
                results.append((m, res))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    rows = "\n".join(f"| `{m.key}` | {m.breaks} | {', '.join(f'`{t}`' for t in m.tests)} | {r['outcome']} | "
                     f"{r['detail']} |" for m, r in results)
    args.out.write_text(
        "# Mutation check\n\n"
        f"`{' '.join(['.venv/bin/python tests/mutation_check.py', *args.only])}` at `{head}`: each "
        "mutant breaks the build in one place, in a scratch worktree; its tests must fail (killed). The "
        "real-model tests ran against the served model with `EVIDENTIA_REQUIRE_REAL_MODEL=1`.\n\n"
        f"All the tests below, on the {baseline}" + "".join(f"\n- {x}" for x in xfails) + "\n\n"
        "| mutant | the broken build | tests | outcome | pytest says |\n|---|---|---|---|---|\n" + rows + "\n")
    print(f"wrote {args.out}")
    return 0 if base.returncode == 0 and all(r["outcome"] == "killed" for _, r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
