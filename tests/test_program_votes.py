"""The real-model tests' vote assertion (tests/program_votes.py) flags each way the programs can be wrong, and lets
a single split vote that fell back to CCoE through."""

from tests.program_votes import vote_problems
from tools._table_program import ProgramOutcome
from tools.verify_claim import ClaimCheck


def check(label: str, decided_by: str, votes: dict[str, int], samples: int | None = None) -> ClaimCheck:
    """A check whose programs voted ``votes`` out of ``samples`` (the rest did not run); a strict majority wins."""
    samples = sum(votes.values()) if samples is None else samples
    leader = max(votes, key=votes.get) if votes else None
    winner = leader if leader is not None and votes[leader] * 2 > samples else None
    return ClaimCheck(claim="c", table="t", variant="program", label=label, cells=[], citations_valid=True,
                      reason="", cols=[], rows=[], collapsed="", decided_by=decided_by,
                      programs=ProgramOutcome(kind="claim", votes=votes, samples=samples, winner=winner))


RIGHT = ["SUPPORTS", "REFUTES"]


def test_both_decided_by_programs_passes():
    assert vote_problems([check("SUPPORTS", "program", {"SUPPORTS": 5}),
                          check("REFUTES", "program", {"REFUTES": 3, "SUPPORTS": 1})], RIGHT) == []


def test_one_split_vote_that_fell_back_passes():
    assert vote_problems([check("SUPPORTS", "program", {"SUPPORTS": 5}),
                          check("REFUTES", "ccoe", {"REFUTES": 2, "SUPPORTS": 2})], RIGHT) == []


def test_programs_voting_the_wrong_way_fail_even_when_the_label_is_right():
    problems = vote_problems([check("SUPPORTS", "program", {"SUPPORTS": 5}),
                              check("REFUTES", "program+ccoe", {"SUPPORTS": 4, "REFUTES": 1})], RIGHT)
    assert len(problems) == 1 and "voted 'SUPPORTS' where 'REFUTES' is right" in problems[0]


def test_programs_that_never_decide_or_never_run_fail():
    assert any("decided none" in p for p in vote_problems(
        [check("SUPPORTS", "ccoe", {"SUPPORTS": 2, "REFUTES": 2}), check("REFUTES", "ccoe", {})], RIGHT))
    none_ran = vote_problems([check("SUPPORTS", "ccoe", {}), check("REFUTES", "ccoe", {})], RIGHT)
    assert any("0 program votes for the right labels, 0" in p for p in none_ran)


def test_more_wrong_votes_than_right_over_the_checks_fails():
    problems = vote_problems([check("SUPPORTS", "program", {"SUPPORTS": 3, "REFUTES": 2}),
                              check("REFUTES", "ccoe", {"SUPPORTS": 2, "REFUTES": 1, "NOT ENOUGH INFO": 2})], RIGHT)
    assert len(problems) == 1 and problems[0].startswith("4 program votes for the right labels, 6 for wrong ones")


def test_a_single_check_may_fall_back_when_told_but_not_vote_wrong():
    split = check("SUPPORTS", "ccoe", {"SUPPORTS": 2, "REFUTES": 1}, samples=5)  # two programs did not run
    assert vote_problems([split], ["SUPPORTS"]) and not vote_problems([split], ["SUPPORTS"], decide_one=False)
    wrong = check("SUPPORTS", "ccoe", {"REFUTES": 3, "SUPPORTS": 2})
    assert len(vote_problems([wrong], ["SUPPORTS"], decide_one=False)) == 2
