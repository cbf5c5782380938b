"""The turn loop and planner against a scripted fake OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from assistant.deps import Deps
from assistant.llm import LLMClient
from assistant.answer.loop import Assistant
from assistant.answer.turn import TurnHooks
from tools.contracts import Session
from tests.fake_openai import Reply, first_token_reply, tool_reply
from tools.registry import REGISTRY, Tool, ToolError


class SearchIn(BaseModel):
    query: str
    k: int = 5


class SearchOut(BaseModel):
    ids: list[str]


CORPUS = {
    "wang": ["Wang Zhizhi joined the Dallas Mavericks in 2001, the first Chinese player in the NBA.",
             "Wang Zhizhi later played for the Los Angeles Clippers and the Miami Heat."],
    "measles": ["Measles cases in 2011 rose to 220 in the United States."],
    "boil": ["Boiling is when a liquid such as water is heated above its boiling point.",
             "Water boils faster in a covered pot."],
    "times": ["Eggs are a good source of iron."],
    "steam": ["Boiling is when steam rises from a heated liquid.", "Steam is water above 100 degrees celsius."],  # found for "times", about something else
    "malaria": ["Malaria presents fever.", "Malaria localizes to the liver.", "Other causes include infections."],
    "influenza": ["Flu season peaks in winter for influenza.", "Influenza is caused by influenza viruses."],
    "vitamin": ["Vitamin D levels were measured in 400 older adults.",
                "Vitamin D supplementation did not reduce fracture risk in older adults."],
}


DOC_IDS = {"vitamin": "pubmed:vitamin"}  # an abstract: its conclusion may decide a yes/no verdict


FACTS = {"metformin": [("Metformin", "treats", "type 2 diabetes mellitus"),
                       ("Metformin", "treats", "metabolic syndrome X"),
                       ("Metformin", "treats", "polycystic ovary syndrome")]}


def fake_search(ctx, args: SearchIn) -> SearchOut:
    ids = []
    low = args.query.lower()
    for key, triples in FACTS.items():  # one-hop KG facts, registered as kg_paths does
        if key in low:
            for head, template, tail in triples:
                ids.append(ctx.evidence.add_path(f"{head} {template} {tail}", triples=[(head, template, tail)],
                                                 source="hetionet", sentence=f"{head} {template} {tail}.",
                                                 fact=True).id)
    for key, sents in CORPUS.items():
        if key in low:
            for s in sents:
                ids.append(ctx.evidence.add_sentence(s, source=f"doc-{key}", doc_id=DOC_IDS.get(key, key)).id)
    return SearchOut(ids=ids)


def raising_tool(ctx, args: SearchIn) -> SearchOut:
    raise RuntimeError("disk on fire")


def failing_tool(ctx, args: SearchIn) -> SearchOut:
    raise ToolError("the knowledge base is empty")


def _tool(name, fn, cpu_bound=False):
    return Tool(name=name, description=f"{name} for tests", fn=fn, input_model=SearchIn, output_model=SearchOut,
                cpu_bound=cpu_bound)


@pytest.fixture
def patched_tools(monkeypatch):
    from tools.registry import load_all

    load_all()
    # Replace evidence tools by deterministic doubles; keep the real intent tool.
    for name in list(REGISTRY):
        if name != "intent":
            monkeypatch.delitem(REGISTRY, name)
    monkeypatch.setitem(REGISTRY, "text_search", _tool("text_search", fake_search, cpu_bound=True))
    monkeypatch.setitem(REGISTRY, "exploding", _tool("exploding", raising_tool))
    monkeypatch.setitem(REGISTRY, "failing", _tool("failing", failing_tool))
    return REGISTRY


def frame(task="question", entities=(), rewrite="", options=(), relation=""):
    return json.dumps({"task": task, "answer_type": [], "entities": list(entities), "relation": relation, "time": "",
                       "location": "", "options": list(options), "rewrite": rewrite})


class Router:
    """Routes requests by kind: structured (intent), tools (model rounds), stream (answer)."""

    def __init__(self, intents=(), tool_turns=(), answers=(), readings=()):
        self.intents, self.tool_turns, self.answers = list(intents), list(tool_turns), list(answers)
        self.readings = list(readings)  # the model's reading of a conclusion: first-token log-probabilities

    def __call__(self, req):
        if req.get("logprobs"):  # unscripted: the code model's usual leaning, "yes" far ahead
            return first_token_reply(self.readings.pop(0) if self.readings else {"Yes": -0.1, "No": -4.0})
        if req.get("stream"):  # the answer (grammar-bound, streamed) and chit-chat
            return Reply(content=self.answers.pop(0))
        if req.get("response_format"):
            return Reply(content=self.intents.pop(0))
        if req.get("tools"):
            return self.tool_turns.pop(0)
        return Reply(content=self.answers.pop(0))


def said(*statements: tuple[str, list[str]], verdict: str | None = None) -> str:
    """A grammar-bound answer as the model writes it: statements with the ids they cite."""
    body = {"verdict": verdict} if verdict else {}
    body["statements"] = [{"text": text, "cite": cite} for text, cite in statements]
    return json.dumps(body)


def not_answered(*closest: str) -> str:
    return json.dumps({"does_not_answer": True, "closest": list(closest)})


class Recorder(TurnHooks):
    def __init__(self):
        self.events = []

    async def step_start(self, step):
        self.events.append(("start", step.name))

    async def step_end(self, step):
        self.events.append(("end", step.name, step.error))

    async def answer_token(self, token):
        self.events.append(("token", token))

    async def answer_discard(self, reason):
        self.events.append(("discard", reason))


class FakeSourcesDeps(Deps):
    """The doubles above stand in for the stores, so no store counts as empty."""

    def empty_sources(self):
        return set()


def make_assistant(settings, server, conversation="c1"):
    deps = FakeSourcesDeps(settings, llm=LLMClient(settings, base_url=server.base_url, model="fake-model"))
    return Assistant(deps, Session(conversation)), deps


async def test_question_is_planned_searched_and_answer_cited(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi", "NBA"], rewrite="When did Wang Zhizhi join the NBA?")],
                    answers=[said(("Wang Zhizhi joined the NBA in 2001.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        hooks = Recorder()
        result = await bot.run_turn("When did Wang Zhizhi join the NBA?", hooks)
    assert result.status == "verified"
    assert result.cited == ["S1"] and result.first_try_valid is True
    assert ("start", "intent") in hooks.events and ("start", "text_search") in hooks.events
    assert any(e[0] == "token" for e in hooks.events)  # streamed
    # The deterministic plan needed no tool-choice request.
    assert not any(r.get("tools") for r in srv.requests)
    # The answer prompt carried the evidence with its id.
    answer_req = [r for r in srv.requests if r.get("stream")][0]
    assert "[S1] Wang Zhizhi joined" in answer_req["messages"][-1]["content"]


def schema_ids(req: dict) -> set[str]:
    """Every id the answer's JSON schema admits (statement citations and closest evidence)."""
    from tests.test_answering import enum_values

    return {v for v in enum_values(req["response_format"]["json_schema"]["schema"]) if v[:1] in "STP"}


async def test_the_answer_schema_holds_exactly_this_turns_ids(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Which teams did Wang Zhizhi play for?")],
                    answers=[said(("He played for Dallas and the Clippers.", ["S1", "S2"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Which teams did Wang Zhizhi play for?", Recorder())
    answer_req = [r for r in srv.requests if r.get("stream")][0]
    assert schema_ids(answer_req) == {"S1", "S2"} == {e.id for e in result.evidence}
    assert answer_req["response_format"]["type"] == "json_schema"
    assert result.status == "verified" and result.cited == ["S1", "S2"] and result.first_try_valid is True
    assert result.answer == "He played for Dallas and the Clippers [S1][S2]."
    assert not result.guard_fired and result.support_flagged == 0


async def test_an_id_outside_the_schema_is_never_shown(tmp_settings, fake_llm_server, patched_tools):
    # A real server cannot write S7 under the grammar; the fake can, and the reply must still not show it.
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Wang Zhizhi teams?")],
                    answers=[said(("He played for Dallas.", ["S7"])),
                             said(("He played for Dallas and the Clippers.", ["S1", "S2"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        hooks = Recorder()
        result = await bot.run_turn("Which teams did Wang Zhizhi play for?", hooks)
    assert result.status == "verified" and result.cited == ["S1", "S2"]
    assert result.first_try_valid is False and result.regenerated
    assert "S7" not in "".join(e[1] for e in hooks.events if e[0] == "token")


async def test_an_unsupported_statement_is_dropped_and_the_rest_kept(tmp_settings, fake_llm_server, patched_tools):
    bad = said(("Wang Zhizhi joined the NBA in 2001.", ["S1"]), ("He scored 40 points for Miami.", ["S2"]))
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Tell me about Wang Zhizhi")], answers=[bad])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        hooks = Recorder()
        result = await bot.run_turn("Tell me about Wang Zhizhi", hooks)
    assert result.support_flagged == 1 and not result.regenerated
    assert len([r for r in srv.requests if r.get("stream")]) == 1
    assert result.status == "verified" and "40 points" not in result.answer
    assert result.answer.startswith("Wang Zhizhi joined the NBA in 2001 [S1].") and "Removed 1 statement" in result.answer
    check = [e for e in hooks.events if e[:2] == ("end", "support check")]
    assert check  # the check is a visible step


async def test_a_citation_that_does_not_say_the_statement_is_removed_and_the_reply_says_so(
        tmp_settings, fake_llm_server, patched_tools):
    # Seen with the real model: "Metformin treats type 2 diabetes mellitus [P12][P11][P17]", P11 and P17 being
    # facts about other diseases.
    answer = said(("Metformin treats type 2 diabetes mellitus.", ["P1", "P2", "P3"]))
    router = Router(intents=[frame(entities=["metformin"], rewrite="What does metformin treat?")], answers=[answer])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("What does metformin treat?", Recorder())
    assert result.status == "verified"
    assert result.answer.startswith("Metformin treats type 2 diabetes mellitus [P1].")
    assert "Code removed citations P2, P3: they do not say what their statement says." in result.answer
    assert [ev.id for ev in result.cited_evidence] == ["P1"]


async def test_nothing_supported_is_regenerated_once(tmp_settings, fake_llm_server, patched_tools):
    bad = said(("He scored 40 points in 1999.", ["S2"]))
    good = said(("Wang Zhizhi later played for the Miami Heat.", ["S2"]))
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Tell me about Wang Zhizhi")],
                    answers=[bad, good])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        hooks = Recorder()
        result = await bot.run_turn("Tell me about Wang Zhizhi", hooks)
    assert result.support_flagged == 1 and result.regenerated and result.status == "verified"
    assert any(e[0] == "discard" and "40" in e[1] for e in hooks.events)
    retry_req = [r for r in srv.requests if r.get("stream")][1]
    assert "40" in retry_req["messages"][-1]["content"]
    assert result.answer == "Wang Zhizhi later played for the Miami Heat [S2]."


async def test_nothing_supported_twice_is_marked_unverified(tmp_settings, fake_llm_server, patched_tools):
    bad = said(("He scored 40 points in 1999.", ["S2"]))
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Wang Zhizhi?")], answers=[bad, bad])
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Tell me about Wang Zhizhi", Recorder())
    assert result.status == "unverified" and "Unverified" in result.answer and "40" in result.answer
    cits = deps.memory.turn_citations(result.turn_id)
    assert cits == [{"turn_id": result.turn_id, "evidence_id": "S2", "valid": 1}]


async def test_the_evidence_does_not_answer_path(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="What is Wang Zhizhi's shoe size?")],
                    answers=[not_answered("S2")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("What is Wang Zhizhi's shoe size?", Recorder())
    assert result.status == "no_evidence" and result.abstained
    assert result.answer == "The evidence I found does not answer this. The closest evidence: [S2]."
    assert result.cited == ["S2"]  # the closest evidence is listed, with a working chip


async def test_a_yes_no_question_gets_its_verdict_from_code_not_the_slot(tmp_settings, fake_llm_server,
                                                                          patched_tools):
    # The model's slot says "no"; the cited sentence states the finding without negation, so code says yes,
    # and the slot's "no" is never shown, not even while the answer streams.
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Did Wang Zhizhi play for Miami?")],
                    answers=[said(("Wang Zhizhi later played for the Miami Heat.", ["S2"]), verdict="no")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        rec = Recorder()
        result = await bot.run_turn("Did Wang Zhizhi play for Miami?", rec)
    schema = [r for r in srv.requests if r.get("stream")][0]["response_format"]["json_schema"]["schema"]
    assert result.required_answer  # S2 carries wang, zhizhi and miami: 3 of the 4 content words
    assert schema["properties"]["verdict"]["enum"] == ["yes", "no", "maybe"]  # the slot stays, for verdict_by=model
    assert result.verdict == "yes" and result.model_verdict == "no" and result.status == "verified"
    assert result.answer.startswith("Wang Zhizhi later played for the Miami Heat [S2].")
    assert result.answer.endswith("**Verdict: Yes.** Read in code from the cited evidence: none of it negates "
                                  "the finding.")
    streamed = "".join(e[1] for e in rec.events if e[0] == "token")
    assert streamed == result.answer and "**No.**" not in streamed


async def test_no_verdict_is_read_from_evidence_that_does_not_mention_a_subject(tmp_settings, fake_llm_server,
                                                                                patched_tools):
    """Found as a new user: "Is aspirin used to prevent heart attacks?" answered from sentences about aspirin alone
    was "Verdict: Yes ... none of it negates the finding"."""
    question = "Did Wang Zhizhi play for the Boston Celtics?"
    router = Router(intents=[frame(entities=["Wang Zhizhi", "Boston Celtics", "Celtics"], rewrite=question)],
                    answers=[said(("Wang Zhizhi later played for the Miami Heat.", ["S2"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(question, Recorder())
    assert result.verdict is None and result.status == "no_evidence"
    assert result.answer.startswith("Wang Zhizhi later played for the Miami Heat [S2].")
    assert result.answer.endswith("**No verdict.** The evidence this answer cites does not mention “Boston Celtics”, "
                                  "so it cannot say yes or no.")
    assert "Verdict: Yes" not in result.answer


async def test_a_follow_ups_verdict_needs_one_of_the_subjects_it_leans_on(tmp_settings, fake_llm_server,
                                                                           patched_tools):
    # Found as a new user: "Is there a cure? (regarding olive trees, Apulia, Xylella fastidiosa)" over "No cure
    # exists" ended "No verdict … does not mention Apulia".
    router = Router(intents=[frame(entities=["Wang Zhizhi", "NBA"], rewrite="When did Wang Zhizhi join the NBA?"),
                             frame(entities=["Wang Zhizhi", "NBA"], rewrite="x")],
                    answers=[said(("Wang Zhizhi joined the NBA in 2001.", ["S1"])),
                             said(("Wang Zhizhi later played for the Miami Heat.", ["S2"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        await bot.run_turn("When did Wang Zhizhi join the NBA?", Recorder())
        result = await bot.run_turn("Did he play for Miami?", Recorder())
    assert result.intent["rewrite"] == "Did he play for Miami? (regarding Wang Zhizhi, NBA)"
    assert result.verdict == "yes" and "No verdict" not in result.answer  # Wang Zhizhi is named; the NBA need not be


@pytest.mark.parametrize("question, relation, verdict", [
    ("Did Wang Zhizhi play basketball in Boston?", "played", None),  # the relation's object, not in the evidence
    ("Did Wang Zhizhi play for Miami?", "plays for", "yes"),  # its object is: the verdict stands
    ("Did Wang Zhizhi play basketball in Boston?", "", "yes"),  # no relation named: only the entities count
])
async def test_no_verdict_when_the_evidence_never_mentions_the_relations_object(tmp_settings, fake_llm_server,
                                                                               patched_tools, question, relation,
                                                                               verdict):
    """Found as a new user: "Does pramipexole cause nausea?" (entities ["pramipexole"], relation "causes") got
    "Verdict: Yes ... none of it negates the finding" from three facts about a receptor pramipexole binds."""
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite=question, relation=relation)],
                    answers=[said(("Wang Zhizhi later played for the Miami Heat.", ["S2"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(question, Recorder())
    assert result.verdict == verdict
    if verdict is None:
        assert result.status == "no_evidence"
        assert result.answer.endswith("**No verdict.** The evidence this answer cites does not mention “basketball in "
                                      "Boston”, so it cannot say yes or no.")


async def test_a_negated_finding_in_the_cited_evidence_answers_no(tmp_settings, fake_llm_server, patched_tools):
    question = "Does vitamin D supplementation reduce fracture risk?"
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Vitamin D supplementation did not reduce fracture risk.", ["S2"]),
                                  verdict="yes")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(question, Recorder())
    assert result.verdict == "no" and result.model_verdict == "yes"
    assert result.answer.endswith("**Verdict: No.** Read in code from the cited evidence: it says “did not” [S2].")
    assert result.cited == ["S2"] and result.invalid == []
    # One sentence carries every content word of the question: "does not answer" is not offered.
    schema = [r for r in srv.requests if r.get("stream")][0]["response_format"]["json_schema"]["schema"]
    assert result.required_answer and "DoesNotAnswer" not in json.dumps(schema) and "anyOf" not in json.dumps(schema)


class KBWithConclusions:
    """A text KB double that knows only each document's closing sentences (what the code verdict reads)."""

    def __init__(self, closing: dict[str, list[str]]):
        self.closing = closing

    def closing_sentences(self, doc_id, n=2):
        from kb.text_store import SentenceHit

        texts = self.closing.get(doc_id, [])[-n:]
        return [SentenceHit(row=i, sent_id=f"{doc_id}:end{i}", text=t, doc_id=doc_id, title=f"doc-{doc_id}",
                            source="fixture", url="", license="CC0", start=0, end=len(t), chunk="")
                for i, t in enumerate(texts)]


@pytest.fixture
def rule_verdicts(monkeypatch):
    """The negation rule with the model's reading (the verdict path before #78's learned reader, still switchable)."""
    monkeypatch.setenv("EVIDENTIA_VERDICT_READER", "rule")


class ConclusionDeps(FakeSourcesDeps):
    def __init__(self, settings, closing: dict[str, list[str]], **kwargs):
        super().__init__(settings, **kwargs)
        self.closing = closing

    @property
    def text_kb(self):
        return KBWithConclusions(self.closing)


@pytest.mark.parametrize("cite, conclusion, verdict, line", [
    # the model cites a results sentence with no negation; the document's conclusion negates: no
    ("S1", ["Fractures were counted for five years.", "Supplementation did not lower the fracture rate."], "no",
     "**Verdict: No.** Read in code from the conclusion of the cited document [S3, S4]: it says “did not” [S4]."),
    # the cited sentence negates, the conclusion does not: the conclusion decides
    ("S2", ["Fractures were counted for five years.", "Supplementation lowered fractures in deficient adults."],
     "yes", "**Verdict: Yes.** Read in code from the conclusion of the cited document [S3, S4]: none of it "
            "negates the finding."),
])
async def test_the_verdict_is_read_from_the_cited_documents_conclusion(tmp_settings, fake_llm_server,
                                                                        patched_tools, cite, conclusion, verdict,
                                                                        line, rule_verdicts):
    question = "Does vitamin D supplementation reduce fracture risk?"
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Vitamin D was studied in older adults.", [cite]), verdict="maybe")])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": conclusion},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict == verdict and result.answer.endswith(line)
    # the model's citations stay its own; the conclusion is cited by the verdict line and is in the evidence
    assert result.cited == [cite] and result.verdict_cited[:2] == ["S3", "S4"]
    assert [e.text for e in result.cited_evidence][1:3] == conclusion
    assert all(e.meta["role"] == "conclusion" for e in result.cited_evidence[1:])


async def test_a_conclusion_that_does_not_mention_a_subject_gives_no_verdict(tmp_settings, fake_llm_server,
                                                                             patched_tools):
    """Found as a new user: "Does regular exercise lower blood pressure?" got "Yes" from the conclusion of an
    abstract on lifestyles and healthcare use."""
    question = "Does vitamin D supplementation reduce hip pain?"
    router = Router(intents=[frame(entities=["vitamin D", "hip pain"], rewrite=question)],
                    answers=[said(("Vitamin D was studied in older adults.", ["S1"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": ["Fractures were counted for five years.",
                                                                "Supplementation lowered fractures."]},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict is None and result.status == "no_evidence"
    assert result.answer.endswith("**No verdict.** The conclusion of the cited abstract [S3, S4], which would decide "
                                  "it, does not mention “hip pain”, so it cannot say yes or no.")


async def test_a_subject_the_question_does_not_name_does_not_withhold_the_verdict(tmp_settings, fake_llm_server,
                                                                                   patched_tools):
    """Seen on PubMedQA: the intent model's entity "faulty" (for "faculty") withheld the verdict, since no
    conclusion mentions it. Only subjects the question names must be in the conclusion."""
    question = "Does vitamin D supplementation reduce fracture risk?"
    router = Router(intents=[frame(entities=["vitamin D", "faulty"], rewrite=question)],
                    answers=[said(("Vitamin D supplementation did not reduce fracture risk.", ["S2"]),
                                  verdict="yes")])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": ["Fractures were counted for five years.",
                                                                "Supplementation did not lower fractures."]},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict == "no" and result.status == "verified"


async def test_a_question_about_sameness_reads_the_conclusion_the_other_way_round(tmp_settings, fake_llm_server,
                                                                                   patched_tools):
    # "did not differ" negates, but the question asks whether the two are alike: it answers yes.
    question = "Is fracture risk similar with and without vitamin D?"
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Vitamin D was studied in older adults.", ["S1"]), verdict="no")])
    conclusion = ["Fractures were counted for five years.", "Fracture rates did not differ between the arms."]
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": conclusion},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict == "yes"
    assert result.answer.endswith("**Verdict: Yes.** Read in code from the conclusion of the cited document [S3, S4]: "
                                  "the question asks whether they are alike, and it says “did not differ” [S4].")


@pytest.mark.parametrize("reading, verdict", [
    ({"Yes": -0.9, "No": -1.5, "Maybe": -2.0}, "no"),   # "no" within 1.5 nats of "yes": the reading turns it
    ({"Yes": -0.2, "No": -2.5, "Maybe": -2.6}, "yes"),  # 2.3 nats behind: the rule's "yes" stands
    ({"Maybe": -0.5, "Yes": -1.2}, "yes"),              # "no" not among the alternatives: the rule stands
])
async def test_the_models_reading_of_the_conclusion_may_turn_yes_into_no(tmp_settings, fake_llm_server,
                                                                          patched_tools, reading, verdict,
                                                                          rule_verdicts):
    question = "Does vitamin D supplementation reduce fracture risk?"
    conclusion = ["Fractures were counted for five years.", "Supplementation offered little over placebo."]
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Vitamin D was studied in older adults.", ["S1"]), verdict="yes")],
                    readings=[reading])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": conclusion},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    asked = [r for r in srv.requests if r.get("logprobs")]
    assert len(asked) == 1 and asked[0]["max_tokens"] == 1
    assert " ".join(conclusion) in asked[0]["messages"][-1]["content"] and question in asked[0]["messages"][-1]["content"]
    assert result.rule_verdict == "yes" and result.verdict == verdict
    assert set(result.reading) == {"yes", "no"}
    if verdict == "no":
        assert result.answer.endswith(
            "**Verdict: No.** Read from the conclusion of the cited document [S3, S4]: none of it negates the finding "
            "in so many words, but the model, asked the question over it, leans no (P(no) 0.22 against P(yes) 0.41; "
            "no wins above 0.22 × P(yes), the level tuned on PubMedQA dev questions).")
    else:
        assert result.answer.endswith("**Verdict: Yes.** Read in code from the conclusion of the cited document "
                                      "[S3, S4]: none of it negates the finding.")


async def test_a_rule_no_a_sameness_question_or_a_server_without_logprobs_asks_no_reading_or_keeps_the_rule(
        tmp_settings, fake_llm_server, patched_tools, rule_verdicts):
    question = "Does vitamin D supplementation reduce fracture risk?"
    negated = ["Fractures were counted for five years.", "Supplementation did not lower the fracture rate."]
    plain = ["Fractures were counted for five years.", "Supplementation lowered the fracture rate."]
    same_q = "Is fracture risk similar with and without vitamin D?"
    for q, conclusion, reading_reply, expected in [
            (question, negated, None, "no"),     # the rule said no: nothing to turn
            (same_q, plain, None, "no"),         # a sameness question keeps the rule's reading
            (question, plain, Reply(status=400, error_body='{"error": {"message": "logprobs not supported"}}'),
             "yes")]:                            # the endpoint refuses log-probabilities: the rule stands
        router = Router(intents=[frame(entities=["vitamin D"], rewrite=q)],
                        answers=[said(("Vitamin D was studied in older adults.", ["S1"]), verdict="yes")])
        if reading_reply is not None:
            plain_call = router.__call__
            router = (lambda req, _r=reading_reply, _c=plain_call: _r if req.get("logprobs") else _c(req))
        with fake_llm_server(router) as srv:
            deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": conclusion},
                                  llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
            result = await Assistant(deps, Session("c1")).run_turn(q, Recorder())
        assert result.verdict == expected, q
        assert sum(bool(r.get("logprobs")) for r in srv.requests) == (1 if reading_reply is not None else 0)
        assert result.reading is None


async def test_by_default_the_learned_reader_reads_three_closing_sentences_and_asks_the_model_nothing(
        tmp_settings, fake_llm_server, patched_tools, monkeypatch):
    """#78: a negated results sentence before a conclusion that restates the question is a "yes" to the learned
    reader (assistant/answer/verdict_reader.py), where the rule reads "no"; no reading is asked of the model."""
    monkeypatch.delenv("EVIDENTIA_VERDICT_READER", raising=False)
    question = "Does vitamin D supplementation reduce fracture risk?"
    conclusion = ["Fractures were counted for five years.", "Falls did not differ between the groups.",
                  "Vitamin D supplementation reduces fracture risk in older adults."]
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Vitamin D was studied in older adults.", ["S1"]), verdict="no")])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"pubmed:vitamin": conclusion},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert (result.verdict, result.rule_verdict) == ("yes", "no")
    assert not any(r.get("logprobs") for r in srv.requests) and result.reading is None
    assert result.verdict_cited[:3] == ["S3", "S4", "S5"]
    assert "**Verdict: Yes.** Read in code from the conclusion of the cited document [S3, S4, S5] by a reader " \
           "fitted on 700 PubMedQA questions" in result.answer


def two_abstracts(ctx, args: SearchIn) -> SearchOut:
    """Two abstracts on a search: one cited twice about something else, one whose title asks the question."""
    found = [("Calcium intake was recorded in 300 nurses.", "Calcium and blood pressure in nurses", "pubmed:calcium"),
             ("Blood pressure was measured twice a year.", "Calcium and blood pressure in nurses", "pubmed:calcium"),
             ("Vitamin D was given for five years.", "Vitamin D supplementation and fracture risk in nurses",
              "pubmed:vitd")]
    return SearchOut(ids=[ctx.evidence.add_sentence(t, source=src, doc_id=d).id for t, src, d in found])


async def test_the_verdict_comes_from_the_cited_abstract_about_the_question(tmp_settings, fake_llm_server,
                                                                             patched_tools, monkeypatch,
                                                                             rule_verdicts):
    """The abstract cited most is about calcium and blood pressure; the one the question asks about is cited
    once. Its conclusion decides, and its title makes answering required although no sentence's text alone
    carries 60% of the question's words."""
    monkeypatch.setitem(REGISTRY, "text_search", _tool("text_search", two_abstracts, cpu_bound=True))
    question = "Does vitamin D supplementation reduce fracture risk in nurses?"
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Nurses were followed for years.", ["S1", "S2", "S3"]), verdict="yes")])
    closing = {"pubmed:calcium": ["Calcium intake was high.", "Higher calcium intake lowered blood pressure."],
               "pubmed:vitd": ["Fractures were counted.", "Vitamin D supplementation did not reduce fracture risk."]}
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, closing, llm=LLMClient(tmp_settings, base_url=srv.base_url,
                                                                   model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict == "no"
    assert result.answer.endswith("**Verdict: No.** Read in code from the conclusion of the cited document [S4, S5]: "
                                  "it says “did not” [S5].")
    assert [e.text for e in result.cited_evidence if e.meta.get("role") == "conclusion"] == closing["pubmed:vitd"]
    schema = [r for r in srv.requests if r.get("stream")][0]["response_format"]["json_schema"]["schema"]
    assert result.required_answer and "DoesNotAnswer" not in json.dumps(schema)


async def test_without_the_cited_documents_conclusion_the_cited_sentences_decide(tmp_settings, fake_llm_server,
                                                                                  patched_tools):
    question = "Does vitamin D supplementation reduce fracture risk?"
    router = Router(intents=[frame(entities=["vitamin D"], rewrite=question)],
                    answers=[said(("Vitamin D supplementation did not reduce fracture risk.", ["S2"]),
                                  verdict="yes")])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"other-doc": ["Supplementation lowered fractures."]},  # not the cited one
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict == "no" and result.verdict_cited == ["S2"]
    assert result.answer.endswith("Read in code from the cited evidence: it says “did not” [S2].")


async def test_a_page_that_is_not_an_abstract_never_decides_by_its_last_sentences(tmp_settings, fake_llm_server,
                                                                                     patched_tools):
    # The measles document is no abstract (no pubmed:/scifact: id): its closing sentence, which negates, is
    # never read; the cited sentence decides.
    question = "Did measles cases rise in 2011?"
    router = Router(intents=[frame(entities=["measles"], rewrite=question)],
                    answers=[said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        deps = ConclusionDeps(tmp_settings, {"measles": ["Vaccination did not lower the case count."]},
                              llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("c1")).run_turn(question, Recorder())
    assert result.verdict == "yes" and list(result.verdict_cited) == []
    assert result.answer.endswith("Read in code from the cited evidence: none of it negates the finding.")


async def test_a_yes_no_question_off_the_evidence_may_still_be_declined(tmp_settings, fake_llm_server,
                                                                        patched_tools):
    question = "Did Wang Zhizhi win an Olympic medal in fencing?"
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite=question)], answers=[not_answered("S1")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(question, Recorder())
    schema = [r for r in srv.requests if r.get("stream")][0]["response_format"]["json_schema"]["schema"]
    assert not result.required_answer and "does_not_answer" in json.dumps(schema)
    assert result.status == "no_evidence" and result.abstained and result.verdict is None
    assert "Verdict" not in result.answer


async def test_verdict_by_model_keeps_the_slot(tmp_settings, fake_llm_server, patched_tools):
    tmp_settings.verdict_by = "model"
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Did Wang Zhizhi play for Miami?")],
                    answers=[said(("Wang Zhizhi later played for the Miami Heat.", ["S2"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Did Wang Zhizhi play for Miami?", Recorder())
    assert result.verdict == "yes" and result.answer.startswith("**Yes.** Wang Zhizhi later played")
    assert "Verdict:" not in result.answer


async def test_the_answer_prompt_holds_only_the_evidence_and_the_question(tmp_settings, fake_llm_server,
                                                                          patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join the NBA?")],
                    answers=[said(("In 2001.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        await bot.run_turn("When did Wang Zhizhi join the NBA?", Recorder())
    prompt = [r for r in srv.requests if r.get("stream")][0]["messages"][-1]["content"]
    assert "Tool findings" not in prompt and '"ids"' not in prompt and "text_search" not in prompt
    assert "[S1] Wang Zhizhi joined" in prompt and "Question: When did Wang Zhizhi join the NBA?" in prompt


async def test_a_fact_question_labelled_chit_chat_is_answered_from_evidence(tmp_settings, fake_llm_server,
                                                                           patched_tools):
    router = Router(intents=[frame(task="chit_chat", entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join?")],
                    answers=[said(("Wang Zhizhi joined in 2001.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("When did Wang Zhizhi join?", Recorder())
    # Settled by the intent's own rules (a wh-question is never chit_chat) or, failing that, by the loop's.
    assert result.intent["task"] == "question"
    assert result.status == "verified" and [s.name for s in result.steps][:2] == ["intent", "text_search"]


async def test_no_evidence_is_said_honestly_without_generation(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Atlantis"], rewrite="Where is Atlantis?")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Where is Atlantis?")
    assert result.status == "no_evidence"
    assert "does not settle" in result.answer
    assert not any(r.get("stream") for r in srv.requests)


async def test_model_rounds_report_tool_errors_and_finish(tmp_settings, fake_llm_server, patched_tools):
    router = Router(
        intents=[frame(task="command", rewrite="/investigate wang")],
        tool_turns=[
            Reply(tool_calls=[("text_search", '{"query": "wang"')]),        # broken JSON
            tool_reply("no_such_tool", {"query": "x"}),                      # unknown tool
            tool_reply("exploding", {"query": "x"}),                         # a tool that raises
            tool_reply("failing", {"query": "x"}),                           # a tool with a clear failure
            tool_reply("text_search", {"query": "wang", "k": "many"}),       # invalid argument type
            tool_reply("text_search", {"query": "wang"}),                    # works
            tool_reply("answer", {"text": "Wang Zhizhi joined Dallas in 2001 [S1]."}),
        ],
        # The model's own "answer" call ends its rounds; the reply is still written under the grammar.
        answers=[said(("Wang Zhizhi joined Dallas in 2001.", ["S1"]))])
    tmp_settings.max_tool_rounds = 8
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("/investigate wang")
    assert result.status == "verified" and result.cited == ["S1"]
    last_round = [r for r in srv.requests if r.get("tools")][-1]
    tool_msgs = [m["content"] for m in last_round["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in tool_msgs[0] and "text_search" in tool_msgs[0]
    assert "unknown tool 'no_such_tool'" in tool_msgs[1]
    assert "exploding" in tool_msgs[2] and "disk on fire" in tool_msgs[2]
    assert "knowledge base is empty" in tool_msgs[3]
    assert "invalid arguments" in tool_msgs[4] and "k" in tool_msgs[4]
    # tool_choice was grammar-constrained, never "auto"
    assert {r["tool_choice"] for r in srv.requests if r.get("tools")} == {"required"}
    stored = deps.memory.turn_tool_calls(result.turn_id)
    assert [c["origin"] for c in stored if c["name"] != "intent"] == ["model"] * 6
    assert sum(1 for c in stored if c["error"]) == 5


async def test_tool_rounds_are_bounded(tmp_settings, fake_llm_server, patched_tools):
    tmp_settings.max_tool_rounds = 3
    router = Router(intents=[frame(task="command", rewrite="/loop")],
                    tool_turns=[tool_reply("text_search", {"query": "wang"}) for _ in range(10)],
                    answers=[said(("Wang Zhizhi joined Dallas.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("/loop")
    assert sum(1 for r in srv.requests if r.get("tools")) == 3
    assert result.status == "verified"


async def test_empty_knowledge_base_is_explained(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join the NBA?")])
    with fake_llm_server(router) as srv:
        deps = Deps(tmp_settings, llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        result = await Assistant(deps, Session("empty")).run_turn("When did Wang Zhizhi join the NBA?")
    assert result.status == "no_evidence"
    assert "kb build --default" in result.answer
    assert [s.name for s in result.steps] == ["intent"]


async def test_server_down_gives_one_clear_message(tmp_settings, patched_tools):
    deps = FakeSourcesDeps(tmp_settings)  # points at a closed port
    bot = Assistant(deps, Session("down"))
    result = await bot.run_turn("When did Wang Zhizhi join the NBA?")
    assert result.status == "error"
    assert "cannot be reached" in result.answer and "evidentia model serve" in result.answer
    assert "during the intent step: connection refused" in result.answer


async def test_three_turn_follow_ups_carry_entities_and_topic_switch_does_not(
        tmp_settings, fake_llm_server, patched_tools):
    # The "model" here is deliberately weak: it leaves entities out of follow-ups and copies
    # old ones into a new topic. The grounding rules must fix both.
    router = Router(
        intents=[
            frame(entities=["Wang Zhizhi", "NBA"], rewrite="When did Wang Zhizhi join the NBA?"),
            frame(entities=[], rewrite="Which teams?"),
            frame(entities=[], rewrite="And after that?"),
            frame(entities=["measles", "Wang Zhizhi"], rewrite="How many measles cases were there in 2011?"),
        ],
        answers=[said(("In 2001.", ["S1"])), said(("Dallas and the Clippers.", ["S1", "S2"])),
                 said(("The Miami Heat.", ["S2"])), said(("220 cases.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv)
        r1 = await bot.run_turn("When did Wang Zhizhi join the NBA?")
        r2 = await bot.run_turn("Which teams?")
        r3 = await bot.run_turn("And after that?")
        r4 = await bot.run_turn("How many measles cases were there in 2011?")
    assert r1.intent["entities"] == ["Wang Zhizhi", "NBA"]
    for r in (r2, r3):
        assert set(r.intent["entities"]) >= {"Wang Zhizhi", "NBA"}
        assert "Wang Zhizhi" in r.intent["rewrite"]
        assert r.status == "verified"
    assert r2.intent["carried_over"] == ["Wang Zhizhi", "NBA"]
    # Topic switch: nothing carried, the invented old entity is dropped.
    assert r4.intent["carried_over"] == []
    assert "Wang Zhizhi" not in r4.intent["entities"] and "measles" in r4.intent["entities"]
    # The second intent request saw the first turn in its prompt (memory, not UI state).
    second_intent = [r for r in srv.requests if r.get("response_format")][1]
    assert "When did Wang Zhizhi join the NBA?" in second_intent["messages"][-1]["content"]
    assert len(deps.memory.turns("c1")) == 4


async def test_conversation_survives_restart(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi", "NBA"], rewrite="When did Wang Zhizhi join the NBA?"),
                             frame(entities=[], rewrite="Which teams?")],
                    answers=[said(("In 2001.", ["S1"])), said(("Dallas.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv, conversation="persist")
        await bot.run_turn("When did Wang Zhizhi join the NBA?")
        deps.memory.close()
        # A new process: fresh Deps, same data dir.
        bot2, deps2 = make_assistant(tmp_settings, srv, conversation="persist")
        r2 = await bot2.run_turn("Which teams?")
    assert "Wang Zhizhi" in r2.intent["entities"]
    turns = deps2.memory.turns("persist")
    assert [t["user_text"] for t in turns] == ["When did Wang Zhizhi join the NBA?", "Which teams?"]
    ev = deps2.memory.turn_evidence(turns[0]["id"])
    assert ev and ev[0]["evidence_id"] == "S1" and ev[0]["meta"]["doc_id"] == "wang"


async def test_chit_chat_needs_no_evidence(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(task="chit_chat", rewrite="hello")], answers=["Hello! Ask me anything."])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("hello")
    assert result.status == "chit_chat" and result.answer.startswith("Hello")


async def test_malformed_intent_falls_back_to_rules(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=['{"task": "question", "entities": [}'], answers=[said(("Dallas in 2001.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("When did Wang Zhizhi join the NBA?")
    assert result.intent["source"] == "rules"
    assert "Wang Zhizhi" in result.intent["entities"]
    assert result.status == "verified"


class VerdictOut(BaseModel):
    verdict: str
    cells: list[str]

    def reply(self) -> str:
        return f"**{self.verdict}** " + "".join(f"[{c}]" for c in self.cells)


def fake_verify(ctx, args: SearchIn) -> VerdictOut:
    cell = ctx.evidence.add_cell("cases.csv", 2, 2, "220", source="cases.csv", header="Cases")
    return VerdictOut(verdict="SUPPORTS", cells=[cell.id])


async def test_a_tool_reply_is_used_and_still_checked(tmp_settings, fake_llm_server, patched_tools, monkeypatch):
    class ClaimIn(BaseModel):
        claim: str
        table: str | None = None

    monkeypatch.setitem(REGISTRY, "verify_claim", Tool(
        name="verify_claim", description="verify", fn=lambda ctx, a: fake_verify(ctx, a), input_model=ClaimIn,
        output_model=VerdictOut))

    class T:
        name = "cases.csv"

    router = Router(intents=[frame(task="claim_check", entities=["measles"], rewrite="Cases rose to 220 in 2011.")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        bot.session.tables["cases.csv"] = T()
        bot.session.active_table = "cases.csv"
        result = await bot.run_turn("Is it true that cases rose to 220 in 2011?")
    assert result.status == "verified" and result.answer == "**SUPPORTS** [T1:R2C2]"
    assert not any(r.get("stream") for r in srv.requests)  # no generation needed


class CheckedOut(VerdictOut):
    claim: str


@pytest.mark.parametrize("message, checked, shown", [
    # a claim whose "it" the tool named (or a follow-up's claim the planner restated): the reply says which claim
    # it checked
    ("Is it true that it rose to 220 in 2012?", "Cases rose to 220 in 2012.", True),
    ("Is it true that cases rose to 220 in 2011?", "Cases rose to 220 in 2011.", False),  # the user's own words
])
async def test_a_tool_reply_says_which_claim_it_checked_when_the_user_did_not_write_it(
        tmp_settings, fake_llm_server, patched_tools, monkeypatch, message, checked, shown):
    class ClaimIn(BaseModel):
        claim: str
        table: str | None = None

    def verify(ctx, args):
        out = fake_verify(ctx, args)
        return CheckedOut(verdict=out.verdict, cells=out.cells, claim=checked)

    monkeypatch.setitem(REGISTRY, "verify_claim", Tool(
        name="verify_claim", description="verify", fn=lambda ctx, a: verify(ctx, a), input_model=ClaimIn,
        output_model=CheckedOut))

    class T:
        name = "cases.csv"

    router = Router(intents=[frame(task="claim_check", entities=["measles"], rewrite=checked)])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        bot.session.tables["cases.csv"] = T()
        bot.session.active_table = "cases.csv"
        result = await bot.run_turn(message)
    assert result.status == "verified"
    assert result.answer == (f"Claim checked: {checked}\n\n" if shown else "") + "**SUPPORTS** [T1:R2C2]"


async def test_evidence_k_is_per_conversation(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join?")],
                    answers=[said(("Wang Zhizhi joined in 2001.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv)
        bot.session.evidence_k = 3
        result = await bot.run_turn("When did Wang Zhizhi join?")
    search = [s for s in result.steps if s.name == "text_search"][0]
    assert search.input["k"] == 3 and deps.settings.evidence_k == tmp_settings.evidence_k != 3


async def test_a_turn_counts_the_tokens_its_requests_generated(tmp_settings, fake_llm_server, patched_tools):
    # The fake server's usage is one token per word: the intent frame's JSON plus the streamed answer's.
    intent = frame(entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join the NBA?")
    answer = said(("In 2001.", ["S1"]))
    router = Router(intents=[intent, intent], answers=[answer, answer])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        first = await bot.run_turn("When did Wang Zhizhi join the NBA?", Recorder())
        streamed = [r for r in srv.requests if r.get("stream")]
        assert streamed and all(r["stream_options"] == {"include_usage": True} for r in streamed)
        second = await bot.run_turn("When did Wang Zhizhi join the NBA?", Recorder())
        asked = srv.requests
    expected = len(intent.split()) + len(answer.split())
    assert first.generated_tokens == expected and second.generated_tokens == expected  # per turn, not cumulative
    from tests.fake_openai import prompt_words

    half = len(asked) // 2  # the two turns made the same requests
    assert first.model_requests == second.model_requests == half
    assert first.prompt_tokens == sum(prompt_words(r) for r in asked[:half]) > 0
    assert first.cached_prompt_tokens == 0  # the fake reports no prefix-cache details


async def test_concurrent_turns_count_only_their_own_tokens():
    import asyncio

    from assistant.llm import _count, counting_tokens

    class Usage:
        def __init__(self, n):
            self.completion_tokens = n

    async def turn(n):
        with counting_tokens() as c:
            for _ in range(3):
                await asyncio.sleep(0)
                await asyncio.to_thread(_count, Usage(n))  # worker threads inherit the turn's counter
            return c.generated_tokens, c.requests

    assert await asyncio.gather(turn(1), turn(10)) == [(3, 3), (30, 3)]
    _count(Usage(5))  # outside any turn: counted nowhere, no error


def test_token_usage_reads_prompt_cached_and_generated_tokens_and_samples_as_the_server_reports_them():
    from types import SimpleNamespace as NS

    from assistant.llm import TokenUsage

    usage = TokenUsage()
    usage.add(NS(prompt_tokens=900, completion_tokens=40, prompt_tokens_details=NS(cached_tokens=640)), n=5)
    usage.add(NS(prompt_tokens=120, completion_tokens=7, prompt_tokens_details=None))  # vLLM without details
    usage.add(None, fallback=3)  # a stream that sent no usage: its pieces
    assert usage.as_dict() == {"prompt_tokens": 1020, "cached_prompt_tokens": 640, "computed_prompt_tokens": 380,
                               "generated_tokens": 50, "requests": 3, "samples": 7}


# -- the subject check and echoed evidence lines ---------------------------------------------------------
async def test_evidence_that_names_no_subject_is_not_sent_to_the_model(tmp_settings, fake_llm_server, patched_tools):
    # Seen in the chat bench: "Who is at risk?" (of glaucoma) was answered, and verified, from ConceptNet facts
    # about "risk" that never mention glaucoma. Here the search finds only the measles sentence.
    router = Router(intents=[frame(entities=["glaucoma"], rewrite="Who is at risk of glaucoma, as with measles?")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        rec = Recorder()
        result = await bot.run_turn("Who is at risk of glaucoma, as with measles?", rec)
    assert not [r for r in srv.requests if r.get("stream")]  # no answer was generated
    assert result.status == "no_evidence" and result.abstained
    assert result.answer == ("The evidence I found does not answer this: none of it mentions “glaucoma”. "
                             "The closest evidence: [S1].")
    assert result.cited == ["S1"] and result.unnamed_subjects == ["glaucoma"]
    assert "".join(e[1] for e in rec.events if e[0] == "token") == result.answer


async def test_a_quantity_question_with_no_number_in_the_evidence_is_not_answered(tmp_settings, fake_llm_server,
                                                                                  patched_tools):
    # Seen on the chat bench: "At what temperature does water boil at sea level?" cited four sentences defining
    # boiling (the KB holds no boiling point) and ended unverified; no shown item states any number.
    router = Router(intents=[frame(entities=["water"], rewrite="At what temperature does water boil at sea level?")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        rec = Recorder()
        result = await bot.run_turn("At what temperature does water boil at sea level?", rec)
    assert not [r for r in srv.requests if r.get("stream")]  # no answer was generated
    assert result.status == "no_evidence" and result.abstained
    # What the evidence does say of the subject, cited, and what it does not give (#78).
    assert result.answer == ("The evidence I found does not answer this: it mentions water [S1][S2] but gives no "
                             "temperature.")
    assert "".join(e[1] for e in rec.events if e[0] == "token") == result.answer

    # The same form with a number in the evidence is answered by the model as usual.
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="In what year did Wang Zhizhi join the NBA?")],
                    answers=[said(("Wang Zhizhi joined the NBA in 2001.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("In what year did Wang Zhizhi join the NBA?", Recorder())
    assert result.status == "verified" and [r for r in srv.requests if r.get("stream")]


async def test_a_cause_question_with_no_cause_of_its_subject_in_the_evidence_is_not_answered(
        tmp_settings, fake_llm_server, patched_tools):
    # Found as a new user: "What causes malaria?" came back verified with "Malaria presents Fever. Malaria localizes
    # to immune system. Malaria localizes to liver." The one shown item that states a cause is about something else.
    router = Router(intents=[frame(entities=["malaria"], rewrite="What causes malaria?")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("What causes malaria?", Recorder())
    assert not [r for r in srv.requests if r.get("stream")]  # no answer was generated
    assert result.status == "no_evidence" and result.abstained
    assert result.answer == ("The evidence I found does not answer this: it mentions malaria [S1][S2] but states no "
                             "cause.")


@pytest.mark.parametrize("q, entity, off, on, what, thing, said_text", [
    ("At what temperature does steam form from water?", "steam",
     ("Boiling is when steam rises from a heated liquid.", ["S1"]), ("Steam is water above 100 degrees celsius.", ["S2"]),
     "temperature", "number", "100 degrees"),
    ("What causes influenza?", "influenza", ("Flu season peaks in winter for influenza.", ["S1"]),
     ("Influenza is caused by influenza viruses.", ["S2"]), "cause", "cause", "caused by influenza viruses"),
])
async def test_an_answer_that_gives_nothing_of_what_is_asked_is_regenerated_once(
        tmp_settings, fake_llm_server, patched_tools, q, entity, off, on, what, thing, said_text):
    router = Router(intents=[frame(entities=[entity], rewrite=q)], answers=[said(off), said(on)])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(q, Recorder())
    streamed = [r for r in srv.requests if r.get("stream")]
    assert len(streamed) == 2 and f"asks for a {what}, and no statement gives one; the items that state a {thing} " \
        "are S2" in streamed[1]["messages"][-1]["content"]
    assert result.status == "verified" and said_text in result.answer
    # Twice without it: not shown as the answer (#78). The reply abstains and cites the item that may answer.
    router = Router(intents=[frame(entities=[entity], rewrite=q)], answers=[said(off), said(off)])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn(q, Recorder())
    assert result.status == "no_evidence" and result.abstained and off[0] not in result.answer
    verb = "states a cause" if what == "cause" else f"gives a {what}"
    assert result.answer == (f"I could not answer this from the evidence: no statement I could check {verb}. "
                             "The evidence that may: [S2].")


@pytest.mark.parametrize("question, cause", [
    ("What causes malaria?", True), ("What can cause nausea?", True), ("What are the main causes of anemia?", True),
    ("what is the cause of the seasons?", True), ("And what triggers migraines?", True),
    ("Why do objects fall to the ground?", False), ("Does smoking cause lung cancer?", False),
    ("What drugs treat malaria?", False), ("What is malaria?", False),
])
def test_questions_that_ask_for_a_cause(question, cause):
    from assistant.answer.slots import AskedSlot, asked_slot
    from assistant.answer.support import states_cause

    assert (asked_slot(question) == AskedSlot("cause", "cause")) is cause
    assert states_cause("malaria is transmitted by mosquitoes") and states_cause("Seasons result from the tilt") \
        and not states_cause("malaria presents fever")


@pytest.mark.parametrize("question, quantity", [
    ("At what temperature does water boil?", "temperature"), ("How many legs does a spider have?", "number"),
    ("how much does it cost?", "amount"), ("What dose of warfarin should I take?", "dose"),
    ("In what year did he join the NBA?", "year"), ("And how old is she?", "age"),
    ("How does photosynthesis work?", None), ("What causes the seasons?", None), ("When is it warm?", None),
])
def test_questions_that_ask_for_a_quantity(question, quantity):
    from assistant.answer.slots import asks_for_quantity, states_quantity

    assert asks_for_quantity(question) == quantity
    assert states_quantity("spiders have eight legs") and states_quantity("take 2.5 mg") and \
        states_quantity("twice daily") and not states_quantity("boiling is when a liquid is hot")


async def test_with_no_entity_the_question_words_must_be_in_the_evidence(tmp_settings, fake_llm_server,
                                                                          patched_tools):
    # Found as a new user: "Who won the most times?" (no entity) was answered, verified, with unrelated sentences.
    # Here the search finds only a sentence about eggs, which shares no word with the question.
    router = Router(intents=[frame(entities=[], rewrite="Who won the most times?")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Who won the most times?", Recorder())
    assert not [r for r in srv.requests if r.get("stream")]  # no answer was generated
    assert result.status == "no_evidence" and result.abstained
    assert result.answer == ("The evidence I found does not answer this: none of it mentions “times” or “won”. "
                             "The closest evidence: [S1].")
    # A question sharing a word with the evidence is answered as usual.
    router = Router(intents=[frame(entities=[], rewrite="Which vitamin levels were measured?")],
                    answers=[said(("Vitamin D levels were measured in 400 older adults.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Which vitamin levels were measured?", Recorder())
    assert result.status == "verified" and [r for r in srv.requests if r.get("stream")]


async def test_an_answer_citing_only_evidence_about_something_else_is_unverified(tmp_settings, fake_llm_server,
                                                                                 patched_tools):
    # The vitamin sentences were shown too, so the model was asked; it cited only the measles one.
    router = Router(intents=[frame(entities=["Vitamin D"], rewrite="How did vitamin D and measles figures change?")],
                    answers=[said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("How did vitamin D and measles figures change?", Recorder())
    assert [r for r in srv.requests if r.get("stream")]
    assert result.status == "unverified"
    assert "none of the evidence this answer cites mentions “Vitamin D”" in result.answer
    assert result.unnamed_subjects == ["Vitamin D"]


async def test_a_true_statement_about_something_else_is_left_out(tmp_settings, fake_llm_server, patched_tools):
    # Support is not relevance statement by statement: the vitamin D sentence is true and well cited, and says
    # nothing about measles, which the question asks about.
    router = Router(intents=[frame(entities=["measles"], rewrite="How did measles and vitamin figures change?")],
                    answers=[said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"]),
                                  ("Vitamin D levels were measured in 400 older adults.", ["S2"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("How did measles and vitamin figures change?", Recorder())
    assert result.status == "verified" and result.cited == ["S1"]
    assert "Vitamin D levels" not in result.answer
    assert "(Left out 1 statement that, like the evidence it cites, does not mention “measles”.)" in result.answer


async def test_a_statement_citing_a_sentence_of_a_document_about_the_subject_is_kept(tmp_settings, fake_llm_server,
                                                                                   patched_tools):
    # The second sentence does not name measles, its document does (source "doc-measles"): about the subject.
    CORPUS_EXTRA = {"measles": ["Measles cases in 2011 rose to 220 in the United States.",
                                "Most cases were in unvaccinated children."]}
    router = Router(intents=[frame(entities=["measles"], rewrite="How did measles figures change?")],
                    answers=[said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"]),
                                  ("Most cases were in unvaccinated children.", ["S2"]))])
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CORPUS, "measles", CORPUS_EXTRA["measles"])
        with fake_llm_server(router) as srv:
            bot, _ = make_assistant(tmp_settings, srv)
            result = await bot.run_turn("How did measles figures change?", Recorder())
    assert result.status == "verified" and result.cited == ["S1", "S2"] and "Left out" not in result.answer


async def test_a_follow_ups_own_words_count_as_its_subject_too(tmp_settings, fake_llm_server, patched_tools):
    # Seen on the chat bench: "Why is it warmer in summer?" carried "seasons" and "Earth"; the answer's statement
    # on summer named neither and was left out. The follow-up's own words are what it asks about.
    router = Router(intents=[frame(entities=["measles"], rewrite="How many measles cases were there in 2011?"),
                             frame(entities=[], rewrite="And what vitamin levels were measured?")],
                    answers=[said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"])),
                             said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"]),
                                  ("Vitamin D levels were measured in 400 older adults.", ["S2"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        await bot.run_turn("How many measles cases were there in 2011?", Recorder())
        result = await bot.run_turn("And what vitamin levels were measured?", Recorder())
    assert result.intent["carried_over"] == ["measles"]
    assert "Left out" not in result.answer and result.cited == ["S1", "S2"]


async def test_cited_evidence_linked_to_the_subject_by_a_shown_item_passes(tmp_settings, fake_llm_server,
                                                                           patched_tools):
    # Seen: "Why is it renewable?" (it: energy) cited "A renewable resource can be replaced", and the subject
    # check called it unverified, though the shown "solar energy is a renewable resource" links the two.
    # Here S2 does not name the NBA, and S1, shown beside it, links it by "Wang Zhizhi" (written in lower case
    # in the message, so the grounding does not make him a subject too).
    router = Router(intents=[frame(entities=["NBA"], rewrite="Which NBA teams did wang play for?")],
                    answers=[said(("Wang Zhizhi later played for the Los Angeles Clippers and the Miami Heat.",
                                   ["S2"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Which NBA teams did wang play for?", Recorder())
    assert result.cited == ["S2"] and result.status == "verified" and result.unnamed_subjects == []


async def test_a_subject_named_by_any_of_its_words_passes(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["vitamin D deficiency"], rewrite="Does vitamin D reduce fractures?")],
                    answers=[said(("Vitamin D supplementation did not reduce fracture risk in older adults.", ["S2"]),
                                  verdict="no")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Does vitamin D reduce fractures?", Recorder())
    assert result.status == "verified" and result.unnamed_subjects == []


async def test_an_evidence_line_copied_whole_is_stripped_to_its_statement(tmp_settings, fake_llm_server,
                                                                          patched_tools):
    # Seen with the 1.5B model: "S1: solar energy is a renewable resource (OpenBookQA fact 1058)" for each
    # statement. The label and the source are the prompt's, and the support check flagged their numbers.
    router = Router(intents=[frame(entities=["measles"], rewrite="How many measles cases were there in 2011?")],
                    answers=[said(("S1: Measles cases in 2011 rose to 220 in the United States. (doc-measles)",
                                   ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("How many measles cases were there in 2011?", Recorder())
    assert result.status == "verified" and result.support_flagged == 0
    assert result.answer == "Measles cases in 2011 rose to 220 in the United States [S1]."


async def test_a_statement_written_three_times_is_shown_once(tmp_settings, fake_llm_server, patched_tools):
    # Seen: "A renewable resource can be replaced [S4][S5]" three times in one answer of the 1.5B model.
    said_thrice = said(*[("Measles cases in 2011 rose to 220 in the United States.", ["S1"])] * 3)
    router = Router(intents=[frame(entities=["measles"], rewrite="How many measles cases were there in 2011?")],
                    answers=[said_thrice])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("How many measles cases were there in 2011?", Recorder())
    assert result.status == "verified"
    assert result.answer == "Measles cases in 2011 rose to 220 in the United States [S1]."


async def test_the_retry_names_the_item_that_says_a_mis_cited_statement(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Did Wang Zhizhi play in Miami?")],
                    answers=[said(("Wang Zhizhi played for the Miami Heat.", ["S1", "S1"]), verdict="yes"),
                             said(("Wang Zhizhi played for the Miami Heat.", ["S2"]), verdict="yes")])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Did Wang Zhizhi play in Miami?", Recorder())
    retry = [r for r in srv.requests if r.get("stream")][1]["messages"][-1]["content"]
    assert "“Wang Zhizhi played for the Miami Heat.” cites S1, but names heat, miami not in the cited evidence; " \
           "S2 says it" in retry
    assert result.status == "verified" and result.regenerated and result.cited == ["S2"]


async def test_a_statement_mis_cited_twice_is_re_cited_by_code_and_says_so(tmp_settings, fake_llm_server,
                                                                           patched_tools):
    wrong = said(("Wang Zhizhi played for the Miami Heat.", ["S1"]), ("He joined Dallas in 2001.", ["S1"]),
                 verdict="yes")
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="Did Wang Zhizhi play in Miami?")],
                    answers=[said(("Wang Zhizhi played for the Miami Heat.", ["S1"]), verdict="yes"), wrong])
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv)
        result = await bot.run_turn("Did Wang Zhizhi play in Miami?", Recorder())
    assert result.status == "cited_by_code" and result.regenerated
    assert result.answer.startswith("Wang Zhizhi played for the Miami Heat [S2]. He joined Dallas in 2001 [S1].")
    assert ("(Cited by code: [S2] says “Wang Zhizhi played for the Miami Heat.”; the model had cited S1, "
            "which does not.)") in result.answer
    assert set(result.cited) == {"S1", "S2"}  # S1 for the second statement, which it does support


async def test_table_routing_is_given_the_encoder_when_a_table_is_loaded(tmp_settings, fake_llm_server,
                                                                         patched_tools, monkeypatch):
    """The router matches messages to tables by embedding too; the loop had never passed it the encoder."""
    from kb.tables import Table

    import assistant.answer.loop as loop_module

    seen = []
    real_plan = loop_module.plan

    def recording_plan(*args, **kwargs):
        seen.append(kwargs.get("embedder"))
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(loop_module, "plan", recording_plan)
    encoder = object()
    router = Router(intents=[frame(entities=["Wang Zhizhi"], rewrite="When did Wang Zhizhi join the NBA?")] * 2,
                    answers=[said(("Wang Zhizhi joined the NBA in 2001.", ["S1"]))] * 2)
    with fake_llm_server(router) as srv:
        bot, deps = make_assistant(tmp_settings, srv)
        deps.__dict__["embedder"] = encoder
        await bot.run_turn("When did Wang Zhizhi join the NBA?", Recorder())
        assert seen == [None]  # no table: nothing to match, the encoder is not even loaded
        bot.session.add_table(Table(name="t", title="t", columns=["Team", "Year"], rows=[["Heat", "2001"]]))
        monkeypatch.setattr(loop_module, "plan", lambda *a, **k: seen.append(k.get("embedder")) or [])
        await bot.run_turn("When did Wang Zhizhi join the NBA?", Recorder())
    assert seen[-1] is encoder


def test_a_missing_encoder_leaves_routing_to_words(tmp_settings):
    from assistant.answer.loop import Assistant
    from kb.tables import Table

    class NoEncoderDeps(FakeSourcesDeps):
        @property
        def embedder(self):
            raise OSError("model files missing")

    bot = Assistant(NoEncoderDeps(tmp_settings), Session("c"))
    bot.session.add_table(Table(name="t", title="t", columns=["Team", "Year"], rows=[["Heat", "2001"]]))
    assert bot._routing_embedder() is None


BRIEFING = ["Xylella fastidiosa is a bacterium that blocks the vessels of olive trees.",
            "The pathogen is spread by spittlebugs, mainly Philaenus spumarius."]


def _briefing_hit(i: int):
    from kb.text_store import SentenceHit

    return SentenceHit(row=i, sent_id=f"brief-{i}", text=BRIEFING[i], doc_id="doc:brief", title="Plant briefing",
                       source="upload", url="", license="", start=0, end=0, chunk="")


class BriefingKB:
    """The text KB as far as the loop reads it here: the sentence before a sentence of the briefing."""

    is_empty = True

    def sentences_before(self, sent_id, n=1):
        i = int(sent_id.rsplit("-", 1)[1])
        return [_briefing_hit(j) for j in range(i - 1, max(-1, i - 1 - n), -1)]

    def closing_sentences(self, doc_id, n=2):
        return []


async def test_a_cited_sentence_that_points_back_is_read_with_the_one_before_it(tmp_settings, fake_llm_server,
                                                                               patched_tools, monkeypatch):
    # Found as a new user with an ingested briefing: the statement below cited "The pathogen is spread by …" and was
    # dropped for naming Xylella fastidiosa, which only the sentence before names.
    def search(ctx, args):  # both found, as in that turn; the model cited the second alone
        return SearchOut(ids=[ctx.evidence.add_kb_sentence(_briefing_hit(i)).id for i in (0, 1)])

    monkeypatch.setitem(REGISTRY, "text_search", _tool("text_search", search, cpu_bound=True))
    q = "How is Xylella fastidiosa spread?"
    router = Router(intents=[frame(entities=["Xylella fastidiosa"], rewrite=q)],
                    answers=[said(("Xylella fastidiosa is spread by spittlebugs, mainly Philaenus spumarius.",
                                   ["S2"]))])
    with fake_llm_server(router) as srv:
        deps = FakeSourcesDeps(tmp_settings, llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"),
                               text_kb=lambda d: BriefingKB())
        result = await Assistant(deps, Session("c1")).run_turn(q, Recorder())
    assert result.status == "cited_by_code" and result.cited == ["S2", "S1"]
    assert result.answer.startswith("Xylella fastidiosa is spread by spittlebugs, mainly Philaenus spumarius [S2][S1]")
    assert "(Cited by code: [S1], shortly before [S2] in the same document, names “Xylella fastidiosa”, " \
           "which [S2] refers back to.)" in result.answer
    assert len(result.evidence) == 2  # the sentence before was found already: its own id, no new item


async def test_a_follow_up_searches_what_the_last_answer_cited_and_keeps_to_what_it_asks(tmp_settings,
                                                                                         fake_llm_server,
                                                                                         patched_tools):
    # Seen as a new user, after questions on one trial: "And how many clinics took part?" searched the whole KB and
    # cited another study; once it found the trial's sentence, the reply also restated the trial's funding and its
    # title, all verified. A follow-up now looks in the documents the last verified answer cited first, and one
    # that names what it asks keeps only statements about that.
    trial = ["The Riverton trial was funded by the county health department.",
             "The Riverton trial enrolled adults at 14 community clinics."]
    router = Router(intents=[frame(entities=["Riverton trial"], rewrite="Who funded the Riverton trial?"),
                             frame(entities=["clinics"], rewrite="And how many clinics took part?")],
                    answers=[said(("The county health department funded the Riverton trial.", ["S1"])),
                             said(("14 community clinics took part.", ["S2"]),
                                  ("The Riverton trial was funded by the county health department.", ["S1"]))])
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CORPUS, "trial", trial)
        with fake_llm_server(router) as srv:
            bot, _ = make_assistant(tmp_settings, srv)
            first = await bot.run_turn("Who funded the Riverton trial?", Recorder())
            assert first.status == "verified" and bot.session.followed_documents == []
            result = await bot.run_turn("And how many clinics took part?", Recorder())
    assert result.intent["follow_up"] and result.intent["carried_over"] == ["Riverton trial"]
    assert bot.session.followed_documents == ["trial"]  # the document turn 1 cited
    assert result.status == "verified" and result.cited == ["S2"]
    assert "funded" not in result.answer.split("(Left out")[0]
    assert "(Left out 1 statement that, like the evidence it cites, does not mention “clinics”.)" in result.answer


async def test_an_unverified_answer_is_not_followed(tmp_settings, fake_llm_server, patched_tools):
    router = Router(intents=[frame(entities=["measles"], rewrite="How many measles cases were there in 2011?"),
                             frame(entities=[], rewrite="And in 2012?")],
                    answers=[said(("Measles cases in 2011 rose to 999 in the United States.", ["S1"]))] * 2
                    + [said(("Measles cases in 2011 rose to 220 in the United States.", ["S1"]))])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        first = await bot.run_turn("How many measles cases were there in 2011?", Recorder())
        assert first.status != "verified"  # 999 is not in its evidence, nor in the regenerated answer
        await bot.run_turn("And in 2012?", Recorder())
    assert bot.session.followed_documents == []


async def test_a_follow_up_follows_the_opening_statements_documents_only(tmp_settings, fake_llm_server, patched_tools):
    # Seen as a new user: a reply opened with the study's sentence and went on with a padding statement citing
    # another abstract; the next question then searched that abstract first.
    trial = ["The Riverton trial was funded by the county health department.",
             "The Riverton trial enrolled adults at 14 community clinics."]
    router = Router(intents=[frame(entities=["Riverton trial", "measles"],
                                   rewrite="Who funded the Riverton trial of measles?"),
                             frame(entities=["clinics"], rewrite="And how many clinics took part?")],
                    answers=[said(("The county health department funded the Riverton trial.", ["S2"]),
                                  ("Measles cases in 2011 rose to 220 in the United States.", ["S1"])),
                             said(("14 community clinics took part.", ["S3"]))])
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CORPUS, "trial", trial)
        with fake_llm_server(router) as srv:
            bot, _ = make_assistant(tmp_settings, srv)
            first = await bot.run_turn("Who funded the Riverton trial of measles?", Recorder())
            assert first.status == "verified" and first.cited == ["S2", "S1"]
            await bot.run_turn("And how many clinics took part?", Recorder())
    assert bot.session.followed_documents == ["trial"]  # not "measles", which only the second statement cited
