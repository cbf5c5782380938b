"""The grounded answer of a turn (step 4 of :mod:`assistant.answer.loop`): one pool, one ranking, an answer under the grammar
of this turn's evidence ids, support-checked in code, and the yes/no verdict read from the cited conclusion.

:class:`GroundedAnswering` holds these steps of :class:`assistant.answer.loop.Assistant`, which inherits them; it uses the
assistant's ``deps`` and ``session`` and its ``_generate``. Split out of the loop module, which had grown to 800
lines with two jobs: running the turn, and composing and checking its answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter

from assistant.answer.answering import (ANSWER_MAX_TOKENS, DOES_NOT_ANSWER_TEXT, MAX_CLOSEST, GroundedAnswer, ProseStream,
                                 Statement, SupportReport, answer_adapter, carriers_of, check_support, chips,
                                 is_yes_no_question, merge_repeats, parse_answer, render_prose, strip_echoes,
                                 with_context, without_idle_citations)
from assistant.answer.citations import NO_EVIDENCE_TEXT, check_citations, mark_invalid
from assistant.answer.focus_check import judged_focus, load_check
from tools.contracts import Evidence, EvidenceLedger, evidence_for_prompt
from assistant.answer.pool import RankedPool, build_pool, rank_pool
from prompts import render
from assistant.answer.slots import (AskedSlot, asked_slot, is_filler, mistyped, turn_kinds, unfilled_reply,
                                    with_article)
from assistant.answer.support import content_words, mentions, off_subject, relation_object, repeats, unnamed_subjects
from assistant.answer.verdicts import (CONCLUSION_SENTENCES, has_conclusion, must_answer, question_coverage,
                               reading_from, verdict_from_evidence)
from assistant.answer.turn import AnswerOutcome, Step, TurnHooks
from kb.errors import LLMResponseError, LLMUnavailable
from kb.instructions import instruction_cue
from tools.registry import ToolContext
from tools.intent import without_regarding_note

log = logging.getLogger(__name__)
# How far back a cited sentence that points back ("The pathogen …") is read for the name it means: the briefing
# that showed it named Xylella fastidiosa two sentences up, with "it killed …" between.
CONTEXT_SENTENCES = 3


class GroundedAnswering:
    """The answer steps of :class:`assistant.answer.loop.Assistant` (module docstring)."""

    async def _grounded(self, ctx: ToolContext, hooks: TurnHooks, frame, citable: list[Evidence],
                        message: str = "", subjects: list[str] | None = None) -> AnswerOutcome:
        """One pool, one ranking, then an answer under the grammar of this turn's ids, support-checked in code.

        ``subjects`` are what the turn asks about (its entities and the KG names they were linked to): evidence
        that names none of them cannot answer it, so the model is not asked (:func:`assistant.answer.support.unnamed_subjects`).
        """
        settings = self.deps.settings
        # Template filler ("something is at location of …") is no evidence: kept out of the pool (#78).
        citable = [e for e in citable if not is_filler(e)]
        if not citable:
            text = (f"{NO_EVIDENCE_TEXT} I found no evidence for “{frame.rewrite}” (only knowledge-graph template "
                    "filler).")
            await hooks.answer_start()
            await hooks.answer_token(text)
            return AnswerOutcome(text, "no_evidence")
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
        # What the question asks to fill (assistant.answer.slots): a temperature, a year, a place, a cause, a drug.
        asked = asked_slot(message or frame.rewrite, frame.answer_type, frame.relation or "")
        items = {c.id: c.evidence for c in ranked.top if c.id in texts}
        kinds = turn_kinds(list(items.values()))
        if asked and texts and not any(asked.could_fill(items[i], t, subjects or [], kinds) for i, t in texts.items()):
            # No shown item states a value of the asked type (nor is a KG fact of a relation that touches it):
            # nothing here can answer it. The reply says what the evidence does say, and what it does not.
            outcome = self._unfilled(asked, items, texts, subjects or [], ctx.evidence)
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
        # declined 9 of 20 PubMedQA questions it was shown the abstract of (assistant/answer/verdicts.py).
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
        # what the question asks its relation of ("rickets" in "Which vitamin deficiency causes rickets?"): a
        # statement that names it must cite evidence that does (assistant.answer.support.check_statement)
        asked_object = relation_object(message or frame.rewrite, frame.relation or "")
        support = check_support(answer, texts, subjects or [], asked_object) if answer is not None else None
        flagged = len(support.flagged) if support else 0
        answer, support, in_context = await asyncio.to_thread(self._read_in_context, answer, support, ctx.evidence,
                                                              texts, subjects or [], asked_object)
        regenerated = False
        # Some statements supported: the others are dropped (in _finish_grounded), nothing is regenerated. Measured
        # on "What drugs treat Parkinson's disease?": regenerating for one mis-cited statement of three gave an
        # abstention, losing the two good ones, after minutes of CPU generation. Regenerate only when nothing holds.
        none_holds = flagged and len(support.flagged) == len(support.checked)
        gives_none = (asked is not None and answer is not None and not answer.does_not_answer
                      and not _fills_any(asked, answer, ctx.evidence, texts, kinds))
        if answer is None or none_holds or gives_none:
            if gives_none and not none_holds:
                # Seen on the chat bench: "At what temperature does water boil?" answered with four definitions of
                # boiling, while a shown item said "steam is a kind of water above 100 degrees celsius".
                stating = [i for i, t in texts.items() if asked.could_fill(items[i], t, (), kinds)]
                problem = (f"the question asks for {with_article(asked.what)}, and no statement gives one"
                           + (f"; the items that state {with_article(asked.thing)} are {', '.join(stating)}"
                              if stating else ""))
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
                support = check_support(answer, texts, subjects or [], asked_object)
                flagged += len(support.flagged)
                answer, support, in_context = await asyncio.to_thread(self._read_in_context, answer, support,
                                                                      ctx.evidence, texts, subjects or [],
                                                                      asked_object)
        check_step = Step(name="support check", kind="check", input={"statements": len(answer.statements) if answer
                                                                     else 0})
        await hooks.step_start(check_step)
        # Off the event loop: the code verdict reads the cited document's conclusion from the text KB.
        outcome = await asyncio.to_thread(self._finish_grounded, answer, support, ctx.evidence, texts,
                                          sources=sources, focus=_follow_up_focus(frame, message),
                                          asked_entities=_follow_up_entities(frame, message),
                                          entities=list(frame.entities),
                                          code_verdict=code_verdict, subjects=subjects or [], asked=asked,
                                          in_context=in_context, kinds=kinds,
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
                         asked: AskedSlot | None = None, question: str = "", in_context: list | None = None,
                         sources: dict[str, str] | None = None, focus: list[str] | None = None,
                         asked_entities: list[str] | None = None, entities: list[str] | None = None,
                         relation: str = "", kinds: set[str] | None = None) -> AnswerOutcome:
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
        if self.deps.settings.focus_check and not answer.does_not_answer:
            # Every sentence the answer cites is from a page on another subject than the question's: a related page
            # answered as if it were the focus (MedQuAD dev, every page on the focus hidden: "Chromosome 7q
            # deletion" for a 7q duplication). Said plainly instead, with what the knowledge base does have (#78).
            elsewhere = self._elsewhere(answer.cited, ledger, question, entities or [])
            if elsewhere:
                return _off_focus_abstention(elsewhere, ledger, question, entities or [])
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
        if answered:
            answer, left_out, typed_notes = _typed_and_filled(answer, ledger, texts, asked, kinds or set())
            if not answer.statements:
                # Nothing the model said fills what the question asks for: not padded with what it did say, but an
                # abstention that says what the evidence does say and does not (#78).
                return _unfilled_abstention(asked, ledger, texts, subjects or [], left_out, kinds or set(),
                                            typed_notes)
            note += typed_notes
        elif (asked is not None and not answer.does_not_answer
              and not _fills_any(asked, answer, ledger, texts, kinds or set())):
            # Unsupported and giving nothing the question asks for: no "Unverified" answer made of it either.
            return _unfilled_abstention(asked, ledger, texts, subjects or [], answer.cited, kinds or set())
        unnamed = [] if not answered else unnamed_subjects(
            subjects or [], [texts.get(c, "") for c in answer.cited], shown=list(texts.values()))
        if unnamed:  # true of its citations, but about something else (the evidence shown did name the subject)
            status = "unverified"
            note += (f"\n\n⚠ Unverified: none of the evidence this answer cites mentions {_join_names(unnamed)}, "
                     "so it does not answer the question about it. The evidence list shows what was found.")
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
        when its reading leans no (:class:`assistant.answer.verdicts.Reading`). Returns the reading's log-probabilities,
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
    def _elsewhere(cited: list[str], ledger: EvidenceLedger, question: str, entities: list[str]) -> dict[str, str]:
        """The cited sentences' page subjects ({id: focus}) when every cited sentence is from a page whose title
        names a subject and none of those is what ``question`` (naming ``entities``) asks about
        (:mod:`assistant.answer.focus_check`);
        {} otherwise: a cited sentence from a page that names no subject (an abstract, a fact, an upload) is not
        judged, so it keeps the answer, and so does a missing check."""
        sentences = [ev for ev in map(ledger.get, cited) if ev is not None and ev.kind == "sentence"]
        foci = {ev.id: judged_focus(str(ev.meta.get("doc_id", "")), ev.source) for ev in sentences}
        if not foci or not all(foci.values()) or not question.strip():
            return {}
        check = load_check()
        if check is None:
            return {}
        distinct = list(dict.fromkeys(foci.values()))
        if any(check.about(question, distinct, entities)):
            return {}
        return foci

    @staticmethod
    def _not_about(unnamed: list[str], closest: list[str], ledger: EvidenceLedger) -> AnswerOutcome:
        """The reply when the evidence shown names none of the turn's subjects: composed in code, no model call."""
        text = (f"{DOES_NOT_ANSWER_TEXT[:-1]}: none of it mentions {_join_names(unnamed)}. "
                f"The closest evidence: {chips(closest)}.")
        check = check_citations(text, ledger)
        return AnswerOutcome(text, "no_evidence", check, check.ok, abstained=True, unnamed_subjects=unnamed)

    @staticmethod
    def _unfilled(asked: AskedSlot, items: dict[str, Evidence], texts: dict[str, str], subjects: list[str],
                  ledger: EvidenceLedger) -> AnswerOutcome:
        """The reply when no evidence shown can fill the asked slot: what the evidence says of the subject and
        what it does not give, composed in code (:func:`assistant.answer.slots.unfilled_reply`)."""
        text = unfilled_reply(asked, items, texts, subjects)
        check = check_citations(text, ledger)
        return AnswerOutcome(text, "no_evidence", check, check.ok, abstained=True)

    def _read_in_context(self, answer: GroundedAnswer | None, support: SupportReport | None, ledger: EvidenceLedger,
                         texts: dict[str, str], subjects: list[str], asked_object: str = ""
                         ) -> tuple[GroundedAnswer | None, SupportReport | None, list]:
        """:func:`assistant.answer.answering.with_context` over the text KB: a cited KB sentence that points back ("The
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

        answer, support, added, notes = with_context(answer, support, texts, before, register, subjects,
                                                     asked_object)
        texts.update(added)
        return answer, support, notes

    def _cited_conclusion(self, cited: list[str], ledger: EvidenceLedger, question: str = "") -> dict[str, str]:
        """The closing sentences of the cited abstract most about the question, added to the turn's evidence so the
        verdict line can cite them; {} when no cited sentence is from a KB abstract
        (:func:`assistant.answer.verdicts.has_conclusion`): then the cited sentences themselves decide.

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


def _cited(statement: Statement, ledger: EvidenceLedger) -> list[Evidence]:
    return [ev for ev in map(ledger.get, statement.cite) if ev is not None]


def _fills_any(asked: AskedSlot, answer: GroundedAnswer, ledger: EvidenceLedger, texts: dict[str, str],
               kinds: set[str]) -> bool:
    """Whether a statement of the answer fills the asked slot with a value its citations hold."""
    return any(asked.fills(st.text, _cited(st, ledger), texts, kinds) for st in answer.statements)


def _unfilled_abstention(asked: AskedSlot | None, ledger: EvidenceLedger, texts: dict[str, str], subjects: list[str],
                         cited: list[str], kinds: set[str], notes: str = "") -> AnswerOutcome:
    """The reply when no statement of the answer fills the asked slot (or none was left): what the evidence does
    say, and does not, cited (:func:`assistant.answer.slots.unfilled_reply`); the items that could fill it, if the
    model missed them; ``notes`` on the statements left out."""
    shown = {i: ev for i in texts if (ev := ledger.get(i)) is not None}
    stating = [i for i, ev in shown.items() if asked is not None and asked.could_fill(ev, texts[i], subjects, kinds)]
    text = unfilled_reply(asked, shown, texts, subjects, first=cited, stating=stating) + notes
    check = check_citations(text, ledger)
    return AnswerOutcome(text, "no_evidence", check, None, abstained=True)


def _off_focus_abstention(elsewhere: dict[str, str], ledger: EvidenceLedger, question: str,
                          entities: list[str]) -> AnswerOutcome:
    """The reply when every page the answer cited is on another subject than the question's: what the knowledge
    base has pages on, each with the ids that cite it, and what it has none on (the entities the question names)."""
    by_focus: dict[str, list[str]] = {}
    for i, focus in elsewhere.items():
        by_focus.setdefault(focus, []).append(i)
    pages = [f"“{focus}” {chips(ids)}" for focus, ids in by_focus.items()]
    listed = pages[0] if len(pages) == 1 else ", ".join(pages[:-1]) + " and " + pages[-1]
    bare = without_regarding_note(question)
    named = _distinct_names([e for e in entities if content_words(e) and mentions(e, [bare])])
    asked = _join_names(named) if named else "what the question asks about"
    text = f"{DOES_NOT_ANSWER_TEXT} The knowledge base has pages on {listed}, not on {asked}."
    check = check_citations(text, ledger)
    return AnswerOutcome(text, "no_evidence", check, check.ok, abstained=True,
                         off_focus=list(by_focus))


def _typed_and_filled(answer: GroundedAnswer, ledger: EvidenceLedger, texts: dict[str, str], asked: AskedSlot | None,
                      kinds: set[str]) -> tuple[GroundedAnswer, list[str], str]:
    """The answer without the statements that type their subject as no cited fact does, and (with ``asked``)
    without those that fill no asked slot; the ids the answer cited before; the notes that say what was left out.

    Seen as a new user: "<the place> is a kind of mountain [P1] … <the place> is a kind of ocean [P2]" answered
    "Where is it?": the second cites a path through two types, the first gives no place (assistant.answer.slots).
    """
    shown = [ev for ev in map(ledger.get, texts) if ev is not None]
    wrong = {i: why for i, st in enumerate(answer.statements) if (why := mistyped(st.text, _cited(st, ledger), shown))}
    unfilled = {i for i, st in enumerate(answer.statements) if i not in wrong and asked is not None
                and not asked.fills(st.text, _cited(st, ledger), texts, kinds)}
    if not wrong and not unfilled:
        return answer, answer.cited, ""
    kept = [st for i, st in enumerate(answer.statements) if i not in wrong and i not in unfilled]
    notes = "".join(f"\n\n(Left out a statement: {why}.)" for why in dict.fromkeys(wrong.values()))
    if unfilled and kept:  # when nothing is kept, the abstention says what is missing
        n = len(unfilled)
        notes += (f"\n\n(Left out {n} statement{'s' if n > 1 else ''} that {asked.missing(plural=n > 1)}, which the "
                  "question asks for.)")
    return answer.model_copy(update={"statements": kept}), answer.cited, notes


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
