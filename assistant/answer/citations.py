"""Citations are data: check that every id an answer cites was gathered in this turn."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tools.contracts import CITATION_GROUP_RE, CITATION_RE, TABLE_ID_RE, EvidenceLedger, cited_ids

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


_SENTENCE_END = re.compile(r"(?<=[.!?…;])\s+|\n+|,\s+but\s+")
_WORD = re.compile(r"[^\W\d_]{2,}")


def is_no_evidence_answer(text: str) -> bool:
    """True when the answer only says that the evidence does not settle the question.

    A hedge somewhere does not make a claim honest: "Take 500 mg of levodopa twice a day. If symptoms persist,
    there is not enough information…" still advises a dose, so it must cite. Every sentence other than the
    hedging ones is counted; more than a few words of them make the answer substantive.
    """
    if not _NO_EVIDENCE_PATTERNS.search(text):
        return False
    other = [s for s in _SENTENCE_END.split(text.strip()) if s and not _NO_EVIDENCE_PATTERNS.search(s)]
    return sum(len(_WORD.findall(s)) for s in other) <= 3


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
    whole_tables = [c for c in cited if TABLE_ID_RE.fullmatch(c)]
    valid = [c for c in cited if c in ledger and c not in whole_tables]
    invalid = [c for c in cited if c not in ledger and c not in whole_tables]
    substantive = bool(answer.strip()) and not is_no_evidence_answer(answer)
    problems = []
    if invalid:
        problems.append(f"these ids are not in the evidence: {', '.join(invalid)}")
    if whole_tables:
        # A table is a container: a reader can only check the cells a statement rests on.
        problems.append(f"a whole table is not citable ({', '.join(whole_tables)}); cite its cells, "
                        "like [T1:R2C3]")
        invalid += whole_tables
    if require_citation and substantive and not valid:
        problems.append("the answer cites no evidence id; cite the ids of the evidence it rests on, "
                        "like [S1], or say that the evidence does not settle the question")
    return CitationCheck(cited=cited, valid=valid, invalid=invalid, substantive=substantive, problems=problems)


def mark_invalid(answer: str, invalid: list[str]) -> str:
    """Flag ids that point at nothing, so a reader is never sent to missing evidence."""
    if not invalid:
        return answer
    bad = set(invalid)

    def mark_group(group: re.Match) -> str:
        return CITATION_RE.sub(lambda m: f"{m.group(1)}⚠" if m.group(1) in bad else m.group(1), group.group(0))

    return CITATION_GROUP_RE.sub(mark_group, answer)
