"""The turn loop: intent -> plan -> tool calls -> cited answer, bounded and UI-agnostic.

The same loop runs in Chainlit and in the CLI; they differ only in the :class:`TurnHooks` they
pass. Per turn:

1. the ``intent`` tool builds a frame contextualized with memory;
2. the planner routes clear intents to tools; otherwise the model picks tools under
   ``tool_choice="required"`` with an ``answer`` tool to finish, for at most
   ``settings.max_tool_rounds`` rounds;
3. independent tool calls run concurrently, CPU-bound ones in worker threads;
4. the turn's evidence is verbalised into one pool and ranked by one ranker (``assistant.answer.pool``); the top
   ``answer_evidence_k`` go to an answer generated under a JSON schema whose citation ids are an enum of
   exactly those ids (``assistant.answer.answering``), streamed as prose; each statement's names and numbers are
   checked against what it cites (``assistant.answer.support``): unsupported statements are dropped when others
   hold, the answer is regenerated once when none holds, and marked unverified if none holds again. Tool-composed replies (claim checks, table QA,
   multiple choice) cite by construction and are only checked;
5. everything is recorded in memory with the turn: the message when the turn starts, its outcome
   (answered, error with the reason, or interrupted) and its evidence when it ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from assistant.answer.citations import NO_EVIDENCE_TEXT, check_citations, mark_invalid, normalize_answer
from assistant.deps import Deps
from assistant.answer.grounded_answer import GroundedAnswering
from tools.contracts import CITATION_GROUP_RE, CITATION_RE, EvidenceLedger
from assistant.llm import ToolCall, counting_tokens
from assistant.answer.planner import PlannedCall, plan
from prompts import render
from tools.lang.routing import restated_claim
from tools.contracts import Session
from assistant.answer.small_talk import is_small_talk
from assistant.answer.support import repeats
from assistant.answer.tool_calls import (ANSWER_TOOL, answer_tool_schema, dump_output, execute_tool, fit_arguments,
                                  gather_all, tool_message_content)
from assistant.answer.turn import RETRY_HINT, AnswerOutcome, EndedSteps, Step, StepLLMUnavailable, TurnHooks, TurnResult, \
    failure_reason
from kb.errors import LLMUnavailable
from tools.registry import REGISTRY, ToolContext, load_all
from tools.text_search import Output as TextSearchOutput, withheld_notice

log = logging.getLogger(__name__)



# --- the loop --------------------------------------------------------------------------------
class Assistant(GroundedAnswering):
    """Runs turns for one conversation (``Session``) with shared ``Deps``."""

    def __init__(self, deps: Deps, session: Session):
        self.deps = deps
        self.session = session
        load_all()
        deps.memory.ensure_conversation(session.conversation_id, user=session.user)

    async def run_turn(self, message: str, hooks: TurnHooks | None = None) -> TurnResult:
        with counting_tokens() as usage:
            result = await self._turn(message, hooks)
        result.generated_tokens = usage.generated_tokens
        result.prompt_tokens = usage.prompt_tokens
        result.cached_prompt_tokens = usage.cached_prompt_tokens
        result.model_requests = usage.requests
        return result

    async def _turn(self, message: str, hooks: TurnHooks | None) -> TurnResult:
        hooks = EndedSteps(hooks or TurnHooks())
        ledger = EvidenceLedger()
        steps: list[Step] = []
        timings = {"intent_s": 0.0, "retrieval_s": 0.0, "generation_s": 0.0}
        t_start = time.perf_counter()
        ctx = ToolContext(deps=self.deps, evidence=ledger, session=self.session)
        frame_dict: dict | None = None
        # Stored before any work: if the model server (or this process) dies mid-turn, the question stays.
        turn_id = await asyncio.to_thread(self.deps.memory.begin_turn, self.session.conversation_id, message)
        where = "intent"
        try:
            frame, step = await self._run_step(ctx, hooks, "intent", {"message": message}, kind="intent")
            steps.append(step)
            timings["intent_s"] = step.duration_s
            if frame is None:  # the intent tool itself failed: treat the message as a plain question
                from tools.intent import rules_frame, contextualize

                frame = contextualize(rules_frame(message, bool(self.session.tables)), message, [],
                                      has_table=bool(self.session.tables), source="rules")
            if frame.task == "chit_chat" and not is_small_talk(message):
                # The model's chit_chat label would skip retrieval and the citation contract: a message asking for
                # facts or advice is answered from evidence whatever the label says.
                frame = frame.model_copy(update={"task": "question", "note": (frame.note + " " if frame.note else "")
                                                 + "chit_chat overruled: the message asks for facts or advice"})
            frame_dict = frame.model_dump()
            self.session.followed_documents = (await asyncio.to_thread(self._cited_documents)
                                               if frame.follow_up else [])

            where = "tools"
            t_tools = time.perf_counter()
            available = await self._available_tools()
            # Routing to an uploaded table matches the message by embedding too, off the event loop (the encoder
            # may load on first use). It had never been given the encoder: two tables tied on words alone.
            planned = await asyncio.to_thread(lambda: plan(frame, self.session, available, self.deps.settings,
                                                           embedder=self._routing_embedder()))
            final_text: str | None = None
            if planned:
                steps += await self._run_calls(ctx, hooks, planned)
            if planned is None:
                final_text, model_steps = await self._model_rounds(ctx, hooks, frame)
                steps += model_steps
            timings["retrieval_s"] = time.perf_counter() - t_tools

            where = "answer"
            t_gen = time.perf_counter()
            outcome = await self._answer(ctx, hooks, frame, steps, final_text, message)
            answer, status, check, first_ok = outcome.text, outcome.status, outcome.check, outcome.first_ok
            withheld = [w for s in steps if isinstance(s.output, TextSearchOutput) for w in s.output.withheld]
            if withheld:  # said in the reply, not only in the step: the user should know the source tried this
                notice = "\n\n⚠ " + withheld_notice(withheld)
                await hooks.answer_token(notice)
                answer += notice
            timings["generation_s"] = time.perf_counter() - t_gen
        except LLMUnavailable as exc:
            failed_step = getattr(exc, "step", None)
            stage = failed_step.name if isinstance(failed_step, Step) else where
            reason = failure_reason(exc)
            error = f"{exc} (It happened during the {stage} step{': ' + reason if reason else ''}.) {RETRY_HINT}"
            return await self._end_with_error(turn_id, error, "llm_unavailable", frame_dict, ledger, hooks.ended,
                                              timings, t_start)
        except asyncio.CancelledError:
            # The front end went away (tab closed, Ctrl-C): keep the question and what ran, marked as cut off.
            timings["total_s"] = time.perf_counter() - t_start
            self._store(turn_id, answer="", status="interrupted", frame_dict=frame_dict, ledger=ledger,
                        steps=hooks.ended, cited=[], timings=timings,
                        error=f"The turn was interrupted during the {where} step.")
            raise
        except Exception as exc:  # noqa: BLE001 - a bug must not lose the question or crash the chat
            log.exception("turn failed")
            error = (f"Something went wrong during the {where} step ({type(exc).__name__}: {exc}). "
                     f"{RETRY_HINT}")
            return await self._end_with_error(turn_id, error, "internal", frame_dict, ledger, hooks.ended, timings,
                                              t_start)
        timings["total_s"] = time.perf_counter() - t_start
        result = TurnResult(answer=answer, status=status, intent=frame_dict, evidence=ledger.items(),
                            cited=check.cited if check else [], invalid=check.invalid if check else [],
                            steps=steps, timings=timings, first_try_valid=first_ok, turn_id=turn_id,
                            support_flagged=outcome.support_flagged, regenerated=outcome.regenerated,
                            guard_fired=outcome.guard_fired, verdict=outcome.verdict, abstained=outcome.abstained,
                            model_verdict=outcome.model_verdict, required_answer=outcome.required_answer,
                            pool=outcome.pool, verdict_cited=list(outcome.verdict_cited),
                            unnamed_subjects=list(outcome.unnamed_subjects), off_focus=list(outcome.off_focus),
                            rule_verdict=outcome.decided.rule_verdict if outcome.decided else outcome.verdict,
                            reading=outcome.reading)
        # SQLite writes are blocking: keep them off the event loop.
        await asyncio.to_thread(self._store, turn_id, answer=answer, status=status, frame_dict=frame_dict,
                                ledger=ledger, steps=steps, timings=timings, cited=result.reply_cited)
        if self.session.tables:  # what a follow-up's "it" refers to survives a restart (assistant.cli.chat_cli)
            last = self.session.last_table_answer
            await asyncio.to_thread(self.deps.memory.save_table_answer, self.session.conversation_id,
                                    last.model_dump_json() if last is not None else None)
        return result

    def _cited_documents(self, turns: int = 3) -> list[str]:
        """The KB documents the opening statement of the most recent verified answer cited (of the last ``turns``
        ended turns): what a follow-up is about (:func:`tools.text_search.search_followed`). An unverified
        answer's citations are not followed (they were off the question), nor a later statement's: a reply that
        opened with the uploaded study's sentence and went on with "Three northern California family planning
        clinics [S13]" made the next question search that abstract first (seen as a new user)."""
        memory = self.deps.memory
        for turn in reversed(memory.turns(self.session.conversation_id, limit=turns, finished=True)):
            if turn.get("status") != "verified":
                continue
            opening = CITATION_GROUP_RE.search(turn.get("answer") or "")
            first = set(CITATION_RE.findall(opening.group(1))) if opening else set()
            cited = {c["evidence_id"] for c in memory.turn_citations(turn["id"]) if c.get("valid", 1)} & first
            docs = [e["meta"].get("doc_id") for e in memory.turn_evidence(turn["id"])
                    if e["evidence_id"] in cited and e["kind"] == "sentence"]
            return list(dict.fromkeys(d for d in docs if d and not str(d).startswith("upload:")))
        return []

    async def _end_with_error(self, turn_id: str, error: str, kind: str, frame_dict: dict | None,
                              ledger: EvidenceLedger, steps: list[Step], timings: dict[str, float],
                              t_start: float) -> TurnResult:
        """Store the failed turn with its error and the evidence of the tools that did run."""
        timings["total_s"] = time.perf_counter() - t_start
        await asyncio.to_thread(self._store, turn_id, answer=error, status="error", frame_dict=frame_dict,
                                ledger=ledger, steps=steps, cited=[], timings=timings, error=error)
        return TurnResult(answer=error, status="error", intent=frame_dict, evidence=ledger.items(), cited=[],
                          invalid=[], steps=steps, timings=timings, turn_id=turn_id, error_kind=kind)

    def _store(self, turn_id: str, *, answer: str, status: str, frame_dict: dict | None, ledger: EvidenceLedger,
               steps: list[Step], cited: list[str], timings: dict[str, float], error: str = "") -> None:
        self.deps.memory.finish_turn(
            turn_id, answer=answer, status=status, intent=frame_dict,
            evidence=[e.model_dump() for e in ledger.items()], cited=cited, valid_ids={e.id for e in ledger.items()},
            tool_calls=[{"name": s.name, "arguments": s.input, "result": dump_output(s.output), "error": s.error,
                         "duration_s": s.duration_s, "origin": s.origin} for s in steps if s.kind != "check"],
            timings=timings, error=error)

    async def _available_tools(self) -> set[str]:
        """Registered tools minus those whose store is empty (an empty KG is not an error)."""
        empty = await asyncio.to_thread(self.deps.empty_sources)
        available = set(REGISTRY)
        if "kg" in empty:
            available.discard("kg_paths")
        if "text" in empty and not self.session.texts:
            available -= {"text_search", "mc_answer"}
        return available

    # -- steps ----------------------------------------------------------------------------------
    async def _run_step(self, ctx: ToolContext, hooks: TurnHooks, name: str, arguments: dict | None, *,
                        kind: str = "tool", origin: str = "plan", parse_error: str | None = None):
        step = Step(name=name, kind=kind, input=arguments or {}, origin=origin)
        await hooks.step_start(step)
        t0 = time.perf_counter()
        try:
            step.output, step.error = await execute_tool(ctx, name, arguments, parse_error=parse_error)
        except LLMUnavailable as exc:
            # Shown as failed (never "✓ … nothing"), and the turn's error names this step.
            step.error = str(exc)
            raise StepLLMUnavailable(str(exc), step) from exc
        except asyncio.CancelledError:
            step.error = "interrupted before it finished"
            raise
        finally:
            step.duration_s = time.perf_counter() - t0
            await hooks.step_end(step)
        return step.output, step

    async def _run_calls(self, ctx, hooks, calls: list[PlannedCall]) -> list[Step]:
        results = await gather_all([
            self._run_step(ctx, hooks, c.name, fit_arguments(c.name, c.arguments)) for c in calls])
        return [step for _, step in results]

    async def _model_rounds(self, ctx: ToolContext, hooks: TurnHooks, frame) -> tuple[str | None, list[Step]]:
        """Let the model choose tools (grammar-constrained), bounded by ``max_tool_rounds``."""
        settings = self.deps.settings
        schemas = [t.openai_schema() for t in REGISTRY.values() if t.offer_to_model] + [answer_tool_schema()]
        messages: list[dict] = [
            {"role": "system", "content": render("tools_system")},
            {"role": "user", "content": frame.rewrite},
        ]
        steps: list[Step] = []
        for _ in range(settings.max_tool_rounds):
            turn = await self.deps.llm.call_tools(messages, schemas, tool_choice="required", max_tokens=200)
            if not turn.tool_calls:
                break
            messages.append({"role": "assistant", "content": turn.content or None, "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_raw}}
                for c in turn.tool_calls]})
            finishing = [c for c in turn.tool_calls if c.name == ANSWER_TOOL]
            others = [c for c in turn.tool_calls if c.name != ANSWER_TOOL]
            outcomes = await gather_all([self._model_call(ctx, hooks, c) for c in others])
            for call, (output, step) in zip(others, outcomes):
                steps.append(step)
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": tool_message_content(output, step.error)})
            if finishing:
                call = finishing[0]
                text = (call.arguments or {}).get("text") if not call.error else None
                if isinstance(text, str) and text.strip():
                    return text.strip(), steps
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(
                    {"error": f"tool {ANSWER_TOOL!r}: {call.error or 'the text argument is missing or empty'}"})})
        return None, steps

    async def _model_call(self, ctx, hooks, call: ToolCall):
        return await self._run_step(ctx, hooks, call.name, call.arguments, origin="model", parse_error=call.error)

    # -- the answer ---------------------------------------------------------------------------
    async def _answer(self, ctx: ToolContext, hooks: TurnHooks, frame, steps: list[Step],
                      model_text: str | None, message: str = "") -> AnswerOutcome:
        # ``model_text`` (the model's own "answer" call after its tool rounds) is free text: the reply is
        # generated under the grammar below like every other answer, from the evidence the rounds gathered.
        ledger = ctx.evidence
        if frame.task == "chit_chat":
            text = await self._generate(hooks, [
                {"role": "system", "content": render("chit_chat_system")},
                {"role": "user", "content": frame.rewrite}], max_tokens=80)
            return AnswerOutcome(text, "chit_chat")
        ready = _ready_reply(steps)
        if ready is not None:  # composed by a tool (claim check, table QA, multiple choice): it cites by construction
            text, output = ready
            checked = getattr(output, "claim", "")
            if isinstance(checked, str) and restated_claim(checked, message):
                text = f"Claim checked: {checked}\n\n{text}"
            return await self._tool_reply(hooks, ledger, text, output)
        citable = ledger.citable()
        if not citable:
            failed = [s for s in steps if s.error]
            if failed:
                reason = "; ".join(s.error for s in failed)
            elif not any(s.kind == "tool" for s in steps):
                reason = ("the knowledge base is empty and no table or text was uploaded; build it with "
                          "`evidentia kb build --default` or upload a file")
            else:
                reason = "no tool returned evidence"
            text = f"{NO_EVIDENCE_TEXT} I found no evidence for “{frame.rewrite}” ({reason})."
            await hooks.answer_start()
            await hooks.answer_token(text)
            return AnswerOutcome(text, "no_evidence")
        return await self._grounded(ctx, hooks, frame, citable, message, subjects=subject_names(frame.entities, steps))

    async def _tool_reply(self, hooks: TurnHooks, ledger: EvidenceLedger, text: str, output: Any) -> AnswerOutcome:
        """A tool's composed reply: shown as is, checked, never rewritten by the model."""
        await hooks.answer_start()
        await hooks.answer_token(text)
        text = normalize_answer(text)
        check = check_citations(text, ledger)
        if not check.ok:
            marked = mark_invalid(text, check.invalid)
            note = ("\n\n⚠ Unverified: " + "; ".join(check.problems) +
                    ". Treat this answer with care; the evidence list shows what was found.")
            await hooks.answer_token(note)
            return AnswerOutcome(marked + note, "unverified", check, False)
        if not check.substantive:
            return AnswerOutcome(text, "no_evidence", check, True)
        if getattr(output, "unstated_numbers", None):
            # The model's reason gives numbers the table lacks (its own figures): the reply says which; the
            # cited cells do not back them, so it is not "verified" (seen as a new user: "older", with two
            # invented opening years, citing another clinic's name).
            return AnswerOutcome(text, "unverified", check, True)
        if getattr(output, "unpicked_rows", None):
            # The question asks about some rows ("the European cities") and the answer is over all of them, as the
            # reply says: it does not answer what was asked (seen as a new user, shown as verified before).
            return AnswerOutcome(text, "unverified", check, True)
        if getattr(output, "decided_by", None) == "fallback":
            # Word overlap, not the model, chose the answer; the reply says so, and so does the status.
            return AnswerOutcome(text, "unverified", check, True)
        if getattr(output, "citation_by", None) == "code":
            # The citation was picked by word overlap because the model cited nothing: not the model's.
            return AnswerOutcome(text, "cited_by_code", check, True)
        return AnswerOutcome(text, "verified", check, True)

    def _routing_embedder(self):
        """The KB's sentence encoder for matching a message against uploaded tables, or None when no table is
        loaded (nothing to match) or it cannot load (the words and values still route)."""
        if not self.session.tables:
            return None
        try:
            return self.deps.embedder
        except Exception as exc:  # noqa: BLE001 - a missing encoder degrades routing, it does not fail the turn
            log.warning("table routing without embeddings: %s", exc)
            return None

    async def _generate(self, hooks: TurnHooks, messages: list[dict], max_tokens: int | None = None) -> str:
        await hooks.answer_start()
        parts: list[str] = []
        async for token in self.deps.llm.stream(messages, max_tokens=max_tokens or 220):
            parts.append(token)
            await hooks.answer_token(token)
        return "".join(parts).strip()


def subject_names(entities: list[str], steps: list[Step]) -> list[str]:
    """The turn's entities and the KG concepts they were linked to (so "heart attack" is also named by
    "myocardial infarction"); a concept linked from other words of the question does not count.

    A concept whose name only adds words to the mention, or drops some ("mitochondria" linked to the GO process
    "mitochondrion organization"), is not another name of it: it is left out, because any one of its words
    would make evidence count as naming the subject. Seen as a new user: "What is the function of the
    mitochondria?" was answered, verified, with "Basic life functions occur in the cells of organisms" (whose
    "organisms" matched "organization")."""
    names = [e.strip() for e in entities if e and e.strip()]
    wanted = {n.lower() for n in names}
    for step in steps:
        links = (getattr(step.output, "linked", None) or []) if step.kind == "tool" else []
        for link in links:
            if (link.mention.strip().lower() in wanted and link.name.lower() not in {n.lower() for n in names}
                    and not repeats(link.name, link.mention)):
                names.append(link.name)
    return names


def _ready_reply(steps: list[Step]) -> tuple[str, Any] | None:
    """A tool whose output already is the cited reply (claim verification, table QA, multiple choice).

    Such an Output defines ``reply() -> str | None``; it is used when exactly one tool offers one, and
    it still goes through the citation check. Returns (reply, the tool's output).
    """
    replies = []
    for s in steps:
        compose = getattr(s.output, "reply", None) if s.kind == "tool" else None
        text = compose() if callable(compose) else None
        if isinstance(text, str) and text.strip():
            replies.append((text.strip(), s.output))
    return replies[0] if len(replies) == 1 else None
