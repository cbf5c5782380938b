"""The turn loop: intent -> plan -> tool calls -> cited answer, bounded and UI-agnostic.

The same loop runs in Chainlit and in the CLI; they differ only in the :class:`TurnHooks` they
pass. Per turn:

1. the ``intent`` tool builds a frame contextualized with memory;
2. the planner routes clear intents to tools; otherwise the model picks tools under
   ``tool_choice="required"`` with an ``answer`` tool to finish, for at most
   ``settings.max_tool_rounds`` rounds;
3. independent tool calls run concurrently, CPU-bound ones in worker threads;
4. the turn's evidence is verbalised into one pool and ranked by one ranker (``assistant.pool``); the top
   ``answer_evidence_k`` go to an answer generated under a JSON schema whose citation ids are an enum of
   exactly those ids (``assistant.answering``), streamed as prose; each statement's names and numbers are
   checked against what it cites (``assistant.support``): unsupported statements are dropped when others
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
from collections import Counter
from typing import Any

from assistant.answering import (ANSWER_MAX_TOKENS, DOES_NOT_ANSWER_TEXT, MAX_CLOSEST, GroundedAnswer, ProseStream,
                                 Statement, SupportReport, answer_adapter, carriers_of, check_support, chips,
                                 is_yes_no_question, merge_repeats, parse_answer, render_prose, strip_echoes,
                                 with_context, without_idle_citations)
from assistant.citations import NO_EVIDENCE_TEXT, check_citations, mark_invalid, normalize_answer
from assistant.deps import Deps
from assistant.evidence import CITATION_GROUP_RE, CITATION_RE, Evidence, EvidenceLedger, evidence_for_prompt
from assistant.llm import ToolCall, counting_generated_tokens
from assistant.planner import PlannedCall, plan
from assistant.pool import RankedPool, build_pool, rank_pool
from assistant.prompts import render
from assistant.routing import restated_claim
from assistant.session import Session
from assistant.small_talk import is_small_talk
from assistant.support import AskedFor, asked_for, content_words, mentions, off_subject, relation_object, repeats, \
    unnamed_subjects
from assistant.verdicts import (CONCLUSION_SENTENCES, has_conclusion, must_answer, question_coverage,
                               reading_from, verdict_from_evidence)
from assistant.tool_calls import (ANSWER_TOOL, answer_tool_schema, dump_output, execute_tool, fit_arguments,
                                  gather_all, tool_message_content)
from assistant.turn import RETRY_HINT, AnswerOutcome, EndedSteps, Step, StepLLMUnavailable, TurnHooks, TurnResult, \
    failure_reason
from kb.errors import LLMResponseError, LLMUnavailable
from kb.instructions import instruction_cue
from tools._registry import REGISTRY, ToolContext, load_all
from tools.intent import without_regarding_note
from tools.text_search import Output as TextSearchOutput, withheld_notice

log = logging.getLogger(__name__)
# How far back a cited sentence that points back ("The pathogen …") is read for the name it means: the briefing
# that showed it named Xylella fastidiosa two sentences up, with "it killed …" between.
CONTEXT_SENTENCES = 3



# --- the loop --------------------------------------------------------------------------------
class Assistant:
    """Runs turns for one conversation (``Session``) with shared ``Deps``."""

    def __init__(self, deps: Deps, session: Session):
        self.deps = deps
        self.session = session
        load_all()
        deps.memory.ensure_conversation(session.conversation_id, user=session.user)

    async def run_turn(self, message: str, hooks: TurnHooks | None = None) -> TurnResult:
        with counting_generated_tokens() as generated:
            result = await self._turn(message, hooks)
        result.generated_tokens = generated.tokens
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
                            unnamed_subjects=list(outcome.unnamed_subjects),
                            rule_verdict=outcome.decided.rule_verdict if outcome.decided else outcome.verdict,
                            reading=outcome.reading)
        # SQLite writes are blocking: keep them off the event loop.
        await asyncio.to_thread(self._store, turn_id, answer=answer, status=status, frame_dict=frame_dict,
                                ledger=ledger, steps=steps, timings=timings, cited=result.reply_cited)
        if self.session.tables:  # what a follow-up's "it" refers to survives a restart (assistant.chat_cli)
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

    async def _grounded(self, ctx: ToolContext, hooks: TurnHooks, frame, citable: list[Evidence],
                        message: str = "", subjects: list[str] | None = None) -> AnswerOutcome:
        """One pool, one ranking, then an answer under the grammar of this turn's ids, support-checked in code.

        ``subjects`` are what the turn asks about (its entities and the KG names they were linked to): evidence
        that names none of them cannot answer it, so the model is not asked (:func:`assistant.support.unnamed_subjects`).
        """
        settings = self.deps.settings
        pool_step = Step(name="evidence pool", kind="check", input={"query": frame.query(),
                                                                     "k": settings.answer_evidence_k})
        await hooks.step_start(pool_step)
        t0 = time.perf_counter()
        try:
            ranked = await asyncio.to_thread(self._rank, build_pool(citable), frame.query(), settings.answer_evidence_k)
            pool_step.output = ranked.summary()
        except Exception as exc:
            pool_step.error = f"ranking the evidence failed: {type(exc).__name__}: {exc}"
            raise
        finally:
            pool_step.duration_s = time.perf_counter() - t0
            await hooks.step_end(pool_step)
        shown = evidence_for_prompt([c.evidence for c in ranked.top], texts={c.id: c.text for c in ranked.top})
        texts = {e["id"]: e["text"] for e in shown}
        sources = {e["id"]: e["source"] for e in shown}
        unnamed = unnamed_subjects(subjects or [], list(texts.values()))
        asked = asked_for(message or frame.rewrite)
        if asked and texts and not any(asked.stated_about(t, subjects or []) for t in texts.values()):
            # The question asks for a number (or a cause of its subject) and no shown item states one: nothing
            # here can answer it.
            outcome = self._not_given(asked, list(texts)[:MAX_CLOSEST], ctx.evidence)
            outcome.pool = ranked.summary()
            await hooks.answer_start()
            await hooks.answer_token(outcome.text)
            return outcome
        if not unnamed and not subjects and not (message or "").lstrip().startswith("/"):
            # No entity to check the evidence against: the question's own content words stand in for them
            # (found as a new user: "Who won the most times?" was answered, verified, with "Eggs").
            terms = sorted(content_words(message or frame.rewrite))
            if terms and not mentions(" ".join(terms), list(texts.values())):
                unnamed = terms
        if unnamed:
            outcome = self._not_about(unnamed, list(texts)[:MAX_CLOSEST], ctx.evidence)
            outcome.pool = ranked.summary()
            await hooks.answer_start()
            await hooks.answer_token(outcome.text)
            return outcome
        # The form of the question, as typed or as rewritten, decides the verdict slot (not the model).
        yes_no = is_yes_no_question(message) or is_yes_no_question(frame.rewrite)
        # A yes/no question whose terms one evidence sentence plainly carries must be answered: the model
        # declined 9 of 20 PubMedQA questions it was shown the abstract of (assistant/verdicts.py).
        # An item's document title counts with its text: a paper titled with the question is about it.
        required = yes_no and must_answer(message or frame.rewrite,
                                          [f"{t}\n{sources.get(i, '')}" for i, t in texts.items()])
        code_verdict = yes_no and settings.verdict_by == "code"
        adapter = answer_adapter(list(texts), yes_no, allow_abstain=not required)
        schema = adapter.json_schema()
        messages = [
            {"role": "system", "content": render("answer_system")},
            {"role": "user", "content": render("answer_user", question=frame.rewrite, evidence=shown, yes_no=yes_no)},
        ]
        answer, raw = await self._generate_grounded(hooks, messages, schema, adapter, show_verdict=not code_verdict)
        answer = strip_echoes(answer, sources) if answer is not None else None
        first_ok = answer is not None and check_citations(render_prose(answer.model_dump(), True), ctx.evidence).ok
        support = check_support(answer, texts, subjects or []) if answer is not None else None
        flagged = len(support.flagged) if support else 0
        answer, support, in_context = await asyncio.to_thread(self._read_in_context, answer, support, ctx.evidence,
                                                              texts, subjects or [])
        regenerated = False
        # Some statements supported: the others are dropped (in _finish_grounded), nothing is regenerated. Measured
        # on "What drugs treat Parkinson's disease?": regenerating for one mis-cited statement of three gave an
        # abstention, losing the two good ones, after minutes of CPU generation. Regenerate only when nothing holds.
        none_holds = flagged and len(support.flagged) == len(support.checked)
        gives_none = asked is not None and answer is not None and not asked.given_by(answer)
        if answer is None or none_holds or gives_none:
            if gives_none and not none_holds:
                # Seen on the chat bench: "At what temperature does water boil?" answered with four definitions of
                # boiling, while a shown item said "steam is a kind of water above 100 degrees celsius".
                stating = [i for i, t in texts.items() if asked.stated_in(t)]
                problem = (f"the question asks for a {asked.what}, and no statement gives one"
                           + (f"; the items that state a {asked.thing} are {', '.join(stating)}" if stating else ""))
                retry_prompt = render("answer_retry_asked", problem=problem, thing=asked.thing)
            else:
                problem = (support.problem(texts) if answer is not None else
                           "the reply was cut off before it was complete; write fewer, shorter statements")
                retry_prompt = render("answer_retry", problem=problem)
            await hooks.answer_discard(f"Support check: {problem}; regenerating once.")
            retry = messages + [{"role": "assistant", "content": raw},
                                {"role": "user", "content": retry_prompt}]
            second, _ = await self._generate_grounded(hooks, retry, schema, adapter, show_verdict=not code_verdict)
            regenerated = True
            if second is not None:
                answer = strip_echoes(second, sources)
                support = check_support(answer, texts, subjects or [])
                flagged += len(support.flagged)
                answer, support, in_context = await asyncio.to_thread(self._read_in_context, answer, support,
                                                                      ctx.evidence, texts, subjects or [])
        check_step = Step(name="support check", kind="check", input={"statements": len(answer.statements) if answer
                                                                     else 0})
        await hooks.step_start(check_step)
        # Off the event loop: the code verdict reads the cited document's conclusion from the text KB.
        outcome = await asyncio.to_thread(self._finish_grounded, answer, support, ctx.evidence, texts,
                                          sources=sources, focus=_follow_up_focus(frame, message),
                                          asked_entities=_follow_up_entities(frame, message),
                                          code_verdict=code_verdict, subjects=subjects or [], asked=asked,
                                          in_context=in_context,
                                          question=frame.rewrite or message or "", relation=frame.relation or "")
        outcome.reading = await self._read_conclusion(outcome, ctx.evidence, frame.rewrite or message or "")
        outcome.required_answer = required
        outcome.first_ok, outcome.support_flagged, outcome.regenerated = first_ok, flagged, regenerated
        outcome.pool = ranked.summary()
        check_step.output = {"flagged": flagged, "regenerated": regenerated, "status": outcome.status,
                             "unsupported": [c.statement for c in support.flagged] if support else []}
        await hooks.step_end(check_step)
        if outcome.verdict_line:  # after the statements and the check: what was shown only ever grows
            await hooks.answer_token("\n\n" + outcome.verdict_line)
        return outcome

    def _finish_grounded(self, answer: GroundedAnswer | None, support: SupportReport | None,
                         ledger: EvidenceLedger, texts: dict[str, str], *,
                         code_verdict: bool = False, subjects: list[str] | None = None,
                         asked: AskedFor | None = None, question: str = "", in_context: list | None = None,
                         sources: dict[str, str] | None = None, focus: list[str] | None = None,
                         asked_entities: list[str] | None = None,
                         relation: str = "") -> AnswerOutcome:
        if answer is None:
            text = f"{NO_EVIDENCE_TEXT} (The model's answer could not be read twice; the evidence list shows what was found.)"
            return AnswerOutcome(text, "unverified")
        note, status = "", "verified"
        if support is not None and support.flagged:
            # A flagged statement that another shown item says on its own was mis-cited, not invented (seen:
            # S3's words citing two KG facts, twice, the retry hint naming S3 notwithstanding). Code re-cites it,
            # and says so: the status is cited_by_code, never verified.
            recited = {i: carriers_of(c, texts) for i, c in enumerate(support.checked) if not c.support.ok}
            recited = {i: ids for i, ids in recited.items() if ids}
            kept = [Statement(text=c.statement, cite=recited.get(i, c.cite)) for i, c in enumerate(support.checked)
                    if c.support.ok or i in recited]
            dropped = len(support.checked) - len(kept)
            if kept:  # drop what no evidence carries, keep the rest
                answer = answer.model_copy(update={"statements": kept})
                if dropped:
                    note = (f"\n\n(Removed {dropped} statement{'s' if dropped > 1 else ''} "
                            "whose names or numbers are not in the evidence it cited.)")
                if recited:
                    status = "cited_by_code"
                    for i, ids in recited.items():  # the wrong ids as plain text: they are not citations
                        wrong = list(dict.fromkeys(support.checked[i].cite))
                        note += (f"\n\n(Cited by code: {chips(ids)} {'says' if len(ids) == 1 else 'say'} "
                                 f"“{support.checked[i].statement}”; the model had cited {', '.join(wrong)}, which "
                                 f"{'does' if len(wrong) == 1 else 'do'} not.)")
            else:
                status = "unverified"
                note = ("\n\n⚠ Unverified: " + support.problem() +
                        ". Treat this answer with care; the evidence list shows what was found.")
        fact_ends = {i: (ev.meta["triples"][0][0], ev.meta["triples"][0][2]) for i in texts
                     if (ev := ledger.get(i)) is not None and ev.meta.get("fact") and ev.meta.get("triples")}
        answer, idle = without_idle_citations(answer, texts, fact_ends)
        if idle:
            note += (f"\n\n(Code removed citation{'s' if len(idle) > 1 else ''} {', '.join(idle)}: "
                     f"{'it does' if len(idle) == 1 else 'they do'} not say what {'its' if len(idle) == 1 else 'their'}"
                     " statement says.)")
        answer = merge_repeats(answer)
        # A cited sentence is about a subject when it or its document's title names it: "Tremor is the most common
        # symptom" from the page "Parkinson's Disease" is about Parkinson's disease.
        titled = {i: f"{t}\n{(sources or {}).get(i, '').replace('-', ' ')}" for i, t in texts.items()}  # words
        about = (subjects or []) + (focus or [])
        # The subject checks below judge an answer that states something the evidence supports; neither leaving
        # statements out nor an "unverified" mark changes what this says.
        answered = not answer.does_not_answer and status in ("verified", "cited_by_code")
        stated = [(st.text, [titled.get(c, "") for c in st.cite]) for st in answer.statements]
        off = off_subject(stated, about, list(titled.values())) if answered else []
        if not off and asked_entities and answered:
            # A follow-up that names what it asks ("And how many clinics took part?" after questions on one trial):
            # a statement about the trial alone ("The trial was funded by …") answers an earlier question. Seen as
            # a new user: three such statements beside the one about the clinics, all verified.
            # Named directly, not linked through a phrase the shown items share: every sentence of the trial's
            # document shares "Riverton trial" with the one about the clinics.
            about = asked_entities
            off = off_subject(stated, about, [])
        if off:  # true and cited, but about something the question did not ask: left out, and said so
            answer = answer.model_copy(update={"statements": [st for i, st in enumerate(answer.statements)
                                                              if i not in off]})
            # Named as checked: off_subject only fires for subjects with content words, so the list is not empty.
            note += (f"\n\n(Left out {len(off)} statement{'s' if len(off) > 1 else ''} that, like the evidence "
                     f"{'they cite, do' if len(off) > 1 else 'it cites, does'} not mention "
                     f"{_join_names([s for s in about if content_words(s)])}.)")
        unnamed = [] if not answered else unnamed_subjects(
            subjects or [], [texts.get(c, "") for c in answer.cited], shown=list(texts.values()))
        if unnamed:  # true of its citations, but about something else (the evidence shown did name the subject)
            status = "unverified"
            note += (f"\n\n⚠ Unverified: none of the evidence this answer cites mentions {_join_names(unnamed)}, "
                     "so it does not answer the question about it. The evidence list shows what was found.")
        elif asked and answered and not asked.given_by(answer):
            status = "unverified"
            note += (f"\n\n⚠ Unverified: the question asks for a {asked.what}, and this answer gives none. "
                     "The evidence list shows what was found.")
        kept_in_context = [c for c in in_context or [] if not answer.does_not_answer and any(
            st.text == c.statement and c.context in st.cite for st in answer.statements)]
        for c in kept_in_context:  # code added a citation: said, and the status is never verified
            status = "cited_by_code" if status == "verified" else status
            note += "\n\n" + c.note(texts.get(c.context, ""))
        text = render_prose(answer.model_dump(), complete=True, show_verdict=not code_verdict)
        check = check_citations(text, ledger)  # the guard behind the grammar: it must never fire
        guard_fired = not check.ok
        if guard_fired:
            log.error("citation guard fired on a grammar-bound answer: %s", check.problems)
            status = "unverified"
            text = mark_invalid(text, check.invalid)
            note += "\n\n⚠ Unverified: " + "; ".join(check.problems) + "."
        if answer.does_not_answer and status in ("verified", "cited_by_code"):
            status = "no_evidence"
        verdict, verdict_line, decided = answer.verdict, "", None
        if code_verdict and not answer.does_not_answer:
            # Read from the statements that survived the support check, in the order they cite.
            cited = {c: texts.get(c, "") for c in answer.cited}
            conclusion = self._cited_conclusion(answer.cited, ledger, question)
            # "Is aspirin used to prevent heart attacks?" answered from "aspirin is a kind of medicine" and "aspirin
            # relieves headache" (found as a new user) was "Yes: none of it negates the finding". Evidence that
            # never mentions one of the question's subjects says nothing about it either way. When a cited
            # abstract's conclusion decides, that conclusion and its title must mention them: "Does regular
            # exercise lower blood pressure?" got "Yes" from the conclusion of an abstract on lifestyles and the
            # use of healthcare, which one cited result sentence linked to exercise.
            read = ([f"{t}\n{getattr(ledger.get(i), 'source', '')}" for i, t in conclusion.items()] if conclusion
                    else [titled.get(c, "") for c in answer.cited])
            # Only subjects the question itself names: the intent model's entities can be its own inventions or
            # misspellings ("yam" for Nd:YAG, "faulty" for faculty, seen on PubMedQA), which no abstract mentions.
            # The relation's object counts too when the intent left it out ("nausea" in "Does pramipexole cause
            # nausea?", seen as a new user: "Yes" from facts about a receptor pramipexole binds).
            whom = list(subjects or [])
            bare = without_regarding_note(question)
            obj = relation_object(question, relation)
            if obj and not any(repeats(obj, s) or mentions(s, [obj]) for s in whom if content_words(s)):
                whom.append(obj)
            unsaid = _distinct_names([s for s in whom if content_words(s) and mentions(s, [bare])
                                      and not mentions(s, read)])
            # What a follow-up leans on ("Is there a cure? (regarding olive trees, Apulia, Xylella fastidiosa)") is
            # context: one of those named will do. Found as a new user: "No verdict … does not mention Apulia" over
            # "No cure exists" from the Xylella briefing.
            carried = [s for s in whom if content_words(s) and not mentions(s, [bare]) and mentions(s, [question])]
            if carried and not any(mentions(s, read) for s in carried):
                unsaid += _distinct_names(carried)
            if unsaid:
                verdict = None
                where = (f"The conclusion of the cited abstract [{', '.join(conclusion)}], which would decide it,"
                         if conclusion else "The evidence this answer cites")
                verdict_line = (f"**No verdict.** {where} does not mention {_join_names(unsaid)}, so it cannot say "
                                "yes or no.")
                if status in ("verified", "cited_by_code"):
                    status = "no_evidence"
            else:
                decided = verdict_from_evidence(cited, conclusion, question)
                verdict, verdict_line = decided.verdict, decided.explain()
        return AnswerOutcome(text + note + ("\n\n" + verdict_line if verdict_line else ""), status, check, None,
                             guard_fired=guard_fired, verdict=verdict, abstained=answer.does_not_answer,
                             model_verdict=answer.verdict, verdict_line=verdict_line,
                             verdict_cited=decided.cited if decided else (), unnamed_subjects=unnamed,
                             decided=decided)

    async def _read_conclusion(self, outcome: AnswerOutcome, ledger: EvidenceLedger, question: str) -> dict | None:
        """Ask the model the question over the conclusion the rule said "yes" from, and turn the verdict to "no"
        when its reading leans no (:class:`assistant.verdicts.Reading`). Returns the reading's log-probabilities,
        or None when none was asked or the server gave none (then the rule's verdict stands)."""
        decided = outcome.decided
        if decided is None or not decided.wants_reading or not question:
            return None
        conclusion = " ".join(ev.text for ev in map(ledger.get, decided.conclusion_ids) if ev is not None)
        messages = [{"role": "system", "content": render("verdict_reading_system")},
                    {"role": "user", "content": render("verdict_reading_user", conclusion=conclusion,
                                                       question=question)}]
        try:
            reading = reading_from(await self.deps.llm.first_token_logprobs(messages))
        except (LLMResponseError, LLMUnavailable) as exc:
            # An endpoint without log-probabilities, or a server gone after the answer was written: the rule's
            # verdict stands, and the answer already shown is kept.
            log.warning("no reading of the conclusion: %s", exc)
            return None
        if reading is None:
            return None
        revised = decided.read_as(reading)
        if revised is not decided and outcome.text.endswith(outcome.verdict_line):
            line = revised.explain()
            outcome.text = outcome.text[:len(outcome.text) - len(outcome.verdict_line)] + line
            outcome.verdict, outcome.verdict_line, outcome.decided = revised.verdict, line, revised
        return {"yes": reading.yes, "no": reading.no}

    @staticmethod
    def _not_about(unnamed: list[str], closest: list[str], ledger: EvidenceLedger) -> AnswerOutcome:
        """The reply when the evidence shown names none of the turn's subjects: composed in code, no model call."""
        text = (f"{DOES_NOT_ANSWER_TEXT[:-1]}: none of it mentions {_join_names(unnamed)}. "
                f"The closest evidence: {chips(closest)}.")
        check = check_citations(text, ledger)
        return AnswerOutcome(text, "no_evidence", check, check.ok, abstained=True, unnamed_subjects=unnamed)

    @staticmethod
    def _not_given(asked: AskedFor, closest: list[str], ledger: EvidenceLedger) -> AnswerOutcome:
        """The reply when the question asks for a quantity or a cause and no evidence shown states one: composed in
        code."""
        text = (f"{DOES_NOT_ANSWER_TEXT[:-1]}: {asked.none_given()}. "
                f"The closest evidence: {chips(closest)}.")
        check = check_citations(text, ledger)
        return AnswerOutcome(text, "no_evidence", check, check.ok, abstained=True)

    def _read_in_context(self, answer: GroundedAnswer | None, support: SupportReport | None, ledger: EvidenceLedger,
                         texts: dict[str, str], subjects: list[str]) -> tuple[GroundedAnswer | None,
                                                                             SupportReport | None, list]:
        """:func:`assistant.answering.with_context` over the text KB: a cited KB sentence that points back ("The
        pathogen …") is read with one of the few sentences before it in its document. ``texts`` gains the sentences
        cited so."""
        if answer is None or support is None or not support.flagged:
            return answer, support, []

        def before(cited_id: str) -> list:
            ev = ledger.get(cited_id)
            key = ev.meta.get("sent_key") if ev is not None and ev.kind == "sentence" else ""
            if not key:
                return []  # an upload's or a test's sentence: no document order to read
            try:  # a sentence written to an AI system is never evidence, as in text search (kb.instructions)
                return [h for h in self.deps.text_kb.sentences_before(key, CONTEXT_SENTENCES)
                        if not instruction_cue(h.text)]
            except Exception as exc:  # noqa: BLE001 - an unreadable KB leaves the statement flagged
                log.warning("could not read the sentences before %s: %s", key, exc)
                return []

        def register(hit) -> str:
            return ledger.add_kb_sentence(hit, chunk=hit.chunk, role="context").id

        answer, support, added, notes = with_context(answer, support, texts, before, register, subjects)
        texts.update(added)
        return answer, support, notes

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

    def _cited_conclusion(self, cited: list[str], ledger: EvidenceLedger, question: str = "") -> dict[str, str]:
        """The closing sentences of the cited abstract most about the question, added to the turn's evidence so the
        verdict line can cite them; {} when no cited sentence is from a KB abstract
        (:func:`assistant.verdicts.has_conclusion`): then the cited sentences themselves decide.

        "Most about the question": the largest share of the question's content words in the abstract's title and
        conclusion; ties go to the abstract cited most, then to the first cited. An answer that also cites a
        related study must not take its verdict from that study's conclusion."""
        sentences = [ev for ev in map(ledger.get, cited) if ev is not None and ev.kind == "sentence"]
        docs = Counter(d for d in (ev.meta.get("doc_id", "") for ev in sentences) if d and has_conclusion(d))
        if not docs:
            return {}
        titles = {ev.meta.get("doc_id", ""): ev.source for ev in sentences}
        try:
            closings = {d: self.deps.text_kb.closing_sentences(d, CONCLUSION_SENTENCES) for d in docs}
        except Exception as exc:  # noqa: BLE001 - an unreadable KB falls back to the cited sentences
            log.warning("could not read the conclusions of %s: %s", ", ".join(docs), exc)
            return {}
        order = list(docs)  # Counter keeps first-cited order

        def about(doc_id: str) -> tuple[float, int, int]:
            read = titles.get(doc_id, "") + "\n" + " ".join(h.text for h in closings[doc_id])
            return question_coverage(question, [read]), docs[doc_id], -order.index(doc_id)

        hits = closings[max(docs, key=about)]
        return {ev.id: ev.text for ev in (ledger.add_kb_sentence(h, chunk=h.chunk, role="conclusion") for h in hits)}

    def _rank(self, pool: list, query: str, k: int) -> RankedPool:
        """Rank the pool with the KB's encoder (and its corpus statistics for the OT marginals, when built)."""
        if len(pool) <= k:
            return rank_pool(pool, query, k)
        store = self.deps.text_kb
        store.attach_embedder(self.deps.embedder)
        weights = None if store.is_empty else store.bm25
        return rank_pool(pool, query, k, encoder=store.encode_texts, weights_index=weights)

    async def _generate_grounded(self, hooks: TurnHooks, messages: list[dict], schema: dict,
                                 adapter, show_verdict: bool = True) -> tuple[GroundedAnswer | None, str]:
        """Stream one answer under ``schema``, rendering prose as the JSON arrives; (parsed answer or None, raw)."""
        await hooks.answer_start()
        prose = ProseStream(show_verdict)
        async for piece in self.deps.llm.stream_structured(messages, schema, name="GroundedAnswer",
                                                           max_tokens=ANSWER_MAX_TOKENS):
            delta = prose.feed(piece)
            if delta:
                await hooks.answer_token(delta)
        answer = parse_answer(prose.raw, adapter)
        if answer is not None:
            rest = prose.advance(render_prose(answer.model_dump(), complete=True, show_verdict=show_verdict))
            if rest:
                await hooks.answer_token(rest)
        return answer, prose.raw

    async def _generate(self, hooks: TurnHooks, messages: list[dict], max_tokens: int | None = None) -> str:
        await hooks.answer_start()
        parts: list[str] = []
        async for token in self.deps.llm.stream(messages, max_tokens=max_tokens or 220):
            parts.append(token)
            await hooks.answer_token(token)
        return "".join(parts).strip()


def _follow_up_entities(frame, message: str) -> list[str]:
    """The entities a follow-up names itself, when it also carried some over: what its statements must be about
    (the carried ones only place it). [] for a turn that names nothing of its own ("How long did it run?")."""
    if not frame.follow_up or not frame.carried_over:
        return []
    carried = {c.lower() for c in frame.carried_over}
    return [e for e in frame.entities if e.lower() not in carried and e.lower() in (message or "").lower()]


def _follow_up_focus(frame, message: str) -> list[str]:
    """A follow-up's own content words, beside the entities it carried over: "Why is it warmer in summer?" after
    a question on the seasons is about summer too (the bench's answer "Summer is when a hemisphere is tilted
    towards the sun" names neither "seasons" nor "Earth", the carried entities)."""
    if not frame.carried_over:
        return []
    return sorted(content_words(message or ""))


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


def _distinct_names(names: list[str]) -> list[str]:
    """``names`` less those that repeat an earlier one ("cold" after "colds"), in order."""
    out: list[str] = []
    for name in names:
        if not any(repeats(name, earlier) for earlier in out):
            out.append(name)
    return out


def _join_names(names: list[str]) -> str:
    quoted = [f"“{n}”" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


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
