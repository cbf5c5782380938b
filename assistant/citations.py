"""Citations are data: check that every id an answer cites was gathered in this turn."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assistant.evidence import CITATION_RE, EvidenceLedger, cited_ids

NO_EVIDENCE_TEXT = "The evidence I found does not settle this."
_NO_EVIDENCE_PATTERNS = re.compile(
    r"(evidence (i found )?does not settle|no (relevant )?evidence|not enough (information|evidence)|"
    r"cannot be (determined|answered) from the evidence|the evidence does not (say|mention|contain|answer))", re.I)


@dataclass
class CitationCheck:
    cited: list[str]
    valid: list[str]
    invalid: list[str]
    substantive: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def is_no_evidence_answer(text: str) -> bool:
    return bool(_NO_EVIDENCE_PATTERNS.search(text))


_PAREN_IDS = re.compile(r"\((\s*(?:T\d+:R\d+C\d+|S\d+|P\d+)(?:\s*[,;]\s*(?:T\d+:R\d+C\d+|S\d+|P\d+))*\s*)\)")
_LEADING_NO_EVIDENCE = re.compile(r"^\s*the evidence (i found )?does not settle this\.?\s*", re.I)


def normalize_answer(text: str) -> str:
    """Small models write ``(S1, S2)`` or open with the fallback line and then answer anyway.

    Rewrite citations as ``[S1][S2]`` and drop a leading fallback line when the rest cites
    evidence, so the citation check judges what the answer actually says.
    """
    text = _PAREN_IDS.sub(lambda m: "".join(f"[{i.strip()}]" for i in re.split(r"[,;]", m.group(1))), text)
    rest = _LEADING_NO_EVIDENCE.sub("", text, count=1)
    if rest != text and cited_ids(rest) and len(rest.strip()) > 20:
        text = rest
    return text.strip()


def check_citations(answer: str, ledger: EvidenceLedger, *, require_citation: bool = True) -> CitationCheck:
    """Every cited id must exist in ``ledger``; a substantive answer must cite at least one."""
    cited = cited_ids(answer)
    valid = [c for c in cited if c in ledger]
    invalid = [c for c in cited if c not in ledger]
    substantive = bool(answer.strip()) and not is_no_evidence_answer(answer)
    problems = []
    if invalid:
        problems.append(f"these ids are not in the evidence: {', '.join(invalid)}")
    if require_citation and substantive and not valid:
        problems.append("the answer cites no evidence id; cite the ids of the evidence it rests on, "
                        "like [S1], or say that the evidence does not settle the question")
    return CitationCheck(cited=cited, valid=valid, invalid=invalid, substantive=substantive, problems=problems)


def mark_invalid(answer: str, invalid: list[str]) -> str:
    """Flag ids that point at nothing, so a reader is never sent to missing evidence."""
    if not invalid:
        return answer
    bad = set(invalid)
    return CITATION_RE.sub(lambda m: f"{m.group(1)}⚠" if m.group(1) in bad else m.group(1), answer)
