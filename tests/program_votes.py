"""What the real-model tests assert about the programs' vote, and what they print when it fails.

The samples are unseeded on a local CPU server (vLLM dies on some seeded requests; Settings.llm_request_seeds), so
one check's vote can split and fall back to CCoE, as the design allows: measured 2026-12-07 on this machine, 1 of
3 checks of "Ontario had more cases than Alberta in 2011." had one dissenting program (3 to 1, still decided), and
CI's run of 2026-12-07 fell back to CCoE once (right label) where "decided by the programs" was asserted on a
single check. So a test asserts what holds on every run unless the programs are wrong or broken: no check's
programs out-vote the right label, the programs decide at least one of the test's checks, and over all of them
the right label has more program votes than every wrong one together. A constant answer, programs that never run,
or programs that vote the wrong way each fail it."""

from __future__ import annotations

from collections.abc import Sequence


def work(check) -> str:
    """What decided a check, program by program: the message a failed assertion shows."""
    runs = check.programs.runs if check.programs else []
    votes = dict(check.programs.votes) if check.programs else {}
    said = getattr(check, "label", None) or getattr(check, "answer", "")  # a claim check's label, a question's answer
    return f"{said} by {check.decided_by}, votes {votes}: " + "; ".join(
        f"{r.program} -> {r.verdict or r.error}" for r in runs)


def vote_problems(checks: Sequence, right: Sequence[str], *, decide_one: bool = True) -> list[str]:
    """Why these checks' programs do not stand behind the right labels (empty when they do). ``decide_one=False``
    for a test of one check: there a split vote that fell back would be the only check, so the programs are held
    to their votes alone."""
    problems: list[str] = []
    right_votes = wrong_votes = 0
    for check, label in zip(checks, right, strict=True):
        votes = dict(check.programs.votes) if check.programs else {}
        winner = check.programs.winner if check.programs else None
        if winner is not None and winner != label:
            problems.append(f"the programs voted {winner!r} where {label!r} is right: {work(check)}")
        right_votes += votes.get(label, 0)
        wrong_votes += sum(v for lab, v in votes.items() if lab != label)
    every_check = " | ".join(work(c) for c in checks)
    if decide_one and not any(check.decided_by == "program" for check in checks):
        problems.append(f"the programs decided none of the checks: {every_check}")
    if right_votes <= wrong_votes:
        problems.append(f"{right_votes} program votes for the right labels, {wrong_votes} for wrong ones: "
                        f"{every_check}")
    return problems
