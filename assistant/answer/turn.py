"""What a turn reports to the shell that runs it (Chainlit or the CLI): its steps, the hooks a front end
overrides to show them, and the result; plus the few words a connection failure is explained by."""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass, field
from typing import Any

from assistant.answer.citations import CitationCheck
from tools.contracts import Evidence
from kb.errors import LLMUnavailable
from assistant.answer.verdicts import CodeVerdict

RETRY_HINT = "Your question is saved: retry it with the Retry button, or /retry in `evidentia chat`."


@dataclass
class Step:
    """One visible step of a turn (intent, a tool call, the answer check)."""

    name: str
    kind: str  # intent | tool | check
    input: dict[str, Any]
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    output: Any = None
    error: str | None = None
    duration_s: float = 0.0
    origin: str = "plan"  # plan | model


class StepLLMUnavailable(LLMUnavailable):
    """The model server failed while a step ran; carries that step so the turn can say where."""

    def __init__(self, message: str, step: Step):
        super().__init__(message)
        self.step = step


class TurnHooks:
    """Override what a front end wants to show; every method is optional."""

    async def step_start(self, step: Step) -> None: ...

    async def step_end(self, step: Step) -> None: ...

    async def answer_start(self) -> None: ...

    async def answer_token(self, token: str) -> None: ...

    async def answer_discard(self, reason: str) -> None: ...


class EndedSteps(TurnHooks):
    """Forwards to the front end's hooks and keeps every step that ended, in order.

    A turn that fails part-way stores these, so the tool calls that did run (earlier model rounds,
    siblings of the call that failed) are kept with their evidence.
    """

    def __init__(self, inner: TurnHooks):
        self.inner = inner
        self.ended: list[Step] = []

    async def step_start(self, step: Step) -> None:
        await self.inner.step_start(step)

    async def step_end(self, step: Step) -> None:
        self.ended.append(step)
        await self.inner.step_end(step)

    async def answer_start(self) -> None:
        await self.inner.answer_start()

    async def answer_token(self, token: str) -> None:
        await self.inner.answer_token(token)

    async def answer_discard(self, reason: str) -> None:
        await self.inner.answer_discard(reason)


@dataclass
class TurnResult:
    answer: str
    status: str  # verified | cited_by_code | unverified | no_evidence | chit_chat | error
    intent: dict[str, Any] | None
    evidence: list[Evidence]
    cited: list[str]
    invalid: list[str]
    steps: list[Step]
    timings: dict[str, float]
    first_try_valid: bool | None = None
    turn_id: str | None = None
    error_kind: str | None = None  # llm_unavailable | internal, when status is "error"
    # Grammar-bound answers (#14): how often the support check flagged a statement, whether the answer was
    # regenerated for it, whether the citation regex (the guard behind the grammar) fired, the pool's makeup.
    support_flagged: int = 0
    regenerated: bool = False
    guard_fired: bool = False
    verdict: str | None = None  # yes | no | maybe, for a yes/no question
    generated_tokens: int = 0  # completion tokens of every LLM request the turn made (server usage)
    prompt_tokens: int = 0  # prompt tokens of those requests, cached ones included
    cached_prompt_tokens: int = 0  # of which vLLM's prefix cache served (0 unless the server reports it)
    model_requests: int = 0
    model_verdict: str | None = None  # the model's own verdict slot (verdict_by="code" replaces it)
    required_answer: bool = False  # code left "does not answer" out of the schema (assistant/answer/verdicts.py)
    abstained: bool = False  # the model said the evidence does not answer the question
    pool: dict[str, Any] | None = None
    # What the code verdict line cites (the cited document's conclusion), apart from the answer's own
    # citations so that measures of what the model cited (PubMedQA's citation precision) stay about the model.
    verdict_cited: list[str] = field(default_factory=list)
    # The subject check: the turn's subjects that the evidence shown (answer not generated) or cited (answer
    # unverified) never names; empty when the check passed.
    unnamed_subjects: list[str] = field(default_factory=list)
    # The focus check (assistant/answer/focus_check.py): the subjects of the pages the answer cited when none of them
    # is what the question asks about, so the reply abstained; empty when the check did not fire.
    off_focus: list[str] = field(default_factory=list)
    # The rule's verdict before the model's reading of the conclusion could turn it (assistant/answer/verdicts.py), and
    # that reading's log-probabilities ({"yes": …, "no": …}), when it was asked.
    rule_verdict: str | None = None
    reading: dict[str, float] | None = None

    @property
    def reply_cited(self) -> list[str]:
        """Every id the reply cites: the answer's citations, then the verdict line's."""
        return list(dict.fromkeys(self.cited + self.verdict_cited))

    @property
    def cited_evidence(self) -> list[Evidence]:
        by_id = {e.id: e for e in self.evidence}
        return [by_id[c] for c in self.reply_cited if c in by_id]


@dataclass
class AnswerOutcome:
    text: str
    status: str
    check: CitationCheck | None = None
    first_ok: bool | None = None
    support_flagged: int = 0
    regenerated: bool = False
    guard_fired: bool = False
    verdict: str | None = None
    abstained: bool = False
    pool: dict[str, Any] | None = None
    model_verdict: str | None = None  # the grammar slot's value, whoever decided ``verdict``
    verdict_line: str = ""  # how code decided the verdict, shown after the statements
    verdict_cited: tuple[str, ...] = ()  # ids the verdict line cites
    required_answer: bool = False  # "does not answer" was not offered (the evidence is plainly on topic)
    unnamed_subjects: list[str] = field(default_factory=list)  # see TurnResult
    off_focus: list[str] = field(default_factory=list)  # see TurnResult
    decided: CodeVerdict | None = None  # what the code verdict was read from, when code decided it
    reading: dict[str, float] | None = None  # that reading's log-probabilities, when it was asked


def failure_reason(exc: BaseException) -> str:
    """What went wrong underneath a connection failure, in a few words ("connection refused"), or "".

    The client library's own message ("Connection error.") does not tell a server that is not running
    from one that died mid-answer; the OS error at the bottom of the exception chain does.
    """
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            return "the connection was dropped"
        if isinstance(cause, socket.gaierror):
            return "host name not found"
        if isinstance(cause, TimeoutError):
            return "timed out"
        if type(cause).__name__ == "RemoteProtocolError":  # httpx: the server closed the connection mid-request
            return "the server closed the connection"
        cause = cause.__cause__ or cause.__context__
    return ""
