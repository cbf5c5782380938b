"""The turn's task grounded in code (issue 14 §5) and the compact intent frame (issue 15 §3)."""

from __future__ import annotations

import json

import pytest

from tests.fake_openai import Reply
from tools.intent import (IntentFrame, answer_type_of, asks_for_information, asks_for_list, contextualize,
                          extract_options, looks_elliptical, settled_task, time_cue)


# -- options come from the message only ----------------------------------------------------------
@pytest.mark.parametrize("message,options", [
    ("Which conducts best? A) wood B) copper C) rubber", ["wood", "copper", "rubber"]),
    ("Which is a mammal?\n1) shark\n2) whale\n3) trout", ["shark", "whale", "trout"]),
    ("Pick one: 1. iron 2. wood", ["iron", "wood"]),
    ("Which is larger, the sun or the moon?", ["the sun", "the moon"]),
    ("Which conducts electricity best: wood, copper, rubber or glass?", ["wood", "copper", "rubber", "glass"]),
    ("Is it a virus or a bacterium?", ["a virus", "a bacterium"]),
    ("Which of aspirin, ibuprofen or paracetamol is an NSAID?", ["aspirin", "ibuprofen", "paracetamol"]),
    # a contrast asks how they differ, not which one (found as a new user: "What is the difference in beds between
    # Surgery and the ICU?" was answered "Surgery")
    ("What is the difference between a virus and a bacterium?", []),
    ("What is the difference in beds between Surgery and the ICU?", []),
    ("How do type 1 and type 2 diabetes differ?", []),
    ("What drugs treat anxiety, depression or insomnia?", []),
    ("Now tell me about epilepsy.", []),
    ("I take 2. Then I stop.", []),
    ("Should I take aspirin or ibuprofen?", []),
    ("Deaths in Ghana fell between 2020 and 2021.", []),  # a statement (found as a new user: went to table QA)
    ("Pick between tea, coffee or water", []),  # no question: the model's to label
    ("which is larger between the sun and the moon", ["the sun", "the moon"]),  # a question without its "?"
    ("How much did coverage in Kenya change between 2022 and 2023?", []),  # a span of years (found as a new user)
    ("Was Kenya's coverage between 80% and 90%?", []),
    ("Which is larger, 2022 or 2023?", ["2022", "2023"]),  # a choice of years is still one
    # an amount over a span, or a span of periods, offers no choice (found as a new user: the options March and
    # May, and the answer "May")
    ("How many units were sold between March and May?", []),
    ("What were total sales between Q1 2023 and Q3 2023?", []),
    ("Which product sold the most between Jan 2024 and Jun 2024?", []),
    ("Which month sold more, between March and May?", ["March", "May"]),  # two periods compared
])
def test_options_are_read_from_the_message(message, options):
    assert extract_options(message) == options


# -- answer type and time, by form (the model is not asked for them) --------------------------------
@pytest.mark.parametrize("message,answer_type", [
    ("What drugs treat Parkinson's disease?", ["drug"]),
    ("Which countries border Spain?", ["country"]),
    ("Who discovered penicillin?", ["person"]),
    ("When did Wang Zhizhi join the NBA?", ["date"]),
    ("In what year was aspirin first sold?", ["date"]),
    ("Where is the Dead Sea?", ["place"]),
    ("How many participants did it have?", ["number"]),
    ("Does smoking increase the risk of lung cancer?", ["yes/no"]),
    ("What is the function of the mitochondria?", []),  # "is" names no type
    ("Tell me about epilepsy.", []),
])
def test_answer_type_is_read_from_the_question(message, answer_type):
    assert answer_type_of(message) == answer_type


@pytest.mark.parametrize("message,cue", [
    ("Quebec had 678 measles cases in 2011.", "2011"),
    ("and in March 2020?", "March 2020"),
    ("What happened in the 1990s and in 2003?", "1990s, 2003"),
    ("When did Wang Zhizhi join the NBA?", ""),  # asks for a time, writes none: nothing is invented
    ("BETA-2 enrolled 4,512 participants.", ""),
])
def test_time_cue_is_what_the_message_writes(message, cue):
    assert time_cue(message) == cue


# -- the task, by form ---------------------------------------------------------------------------
@pytest.mark.parametrize("message,has_table,task", [
    ("hello", False, "chit_chat"), ("Thanks!", False, "chit_chat"), ("great, thanks", False, "chit_chat"),
    ("/tables", False, "command"),
    ("Now tell me about epilepsy.", False, "question"),
    ("What dose of warfarin should I take?", False, "question"),
    ("hi, what dose of warfarin should I take", False, "question"),
    ("I need advice on my dosage", False, "question"),
    ("Which is larger, the sun or the moon?", False, "multiple_choice"),
    ("Is it true that smoking causes cancer?", False, "claim_check"),
    ("BETA-2 enrolled 4,512 participants.", True, "claim_check"),
    ("Deaths in Ghana fell between 2020 and 2021.", True, "claim_check"),
    ("List the trials from 2021.", True, "question"),
    ("Which row of the table has the most?", True, "table_question"),
    ("Aspirin cures headaches.", False, None),  # a statement: the model's to label
    ("I feel tired today", False, None),
])
def test_rules_settle_the_task_where_the_form_does(message, has_table, task):
    assert settled_task(message, extract_options(message), has_table) == task


def test_a_request_for_facts_or_advice_is_never_chit_chat():
    for message in ("What dose of warfarin should I take?", "Is it safe to drink alcohol on metformin",
                    "how much paracetamol is too much"):
        assert asks_for_information(message)
        out = contextualize(IntentFrame(task="chit_chat", entities=["warfarin"], rewrite=message), message, [],
                            has_table=False, source="model")
        assert out.task == "question"
    # What is left to the model: a statement it may call chit-chat, but never multiple choice without options.
    out = contextualize(IntentFrame(task="chit_chat", rewrite="x"), "I feel tired today", [], has_table=False,
                        source="model")
    assert out.task == "chit_chat"
    out = contextualize(IntentFrame(task="multiple_choice", options=["a", "b"], rewrite="x"),
                        "Aspirin cures headaches.", [], has_table=False, source="model")
    assert out.task == "question" and out.options == []


HISTORY = [{"user_text": "What drugs treat Parkinson's disease?", "rewrite": "",
            "intent": {"entities": ["Parkinson's disease"]}}]


def test_now_tell_me_about_x_is_a_question_about_x():
    # What the 1.5B model once produced for this turn: multiple choice, five invented options, entity "Now".
    frame = IntentFrame(task="multiple_choice", entities=["Now", "epilepsy", "Parkinson's disease"],
                        options=["seizures", "tremor", "migraine", "stroke", "dementia"],
                        rewrite="Now tell me about epilepsy.")
    out = contextualize(frame, "Now tell me about epilepsy.", HISTORY, has_table=False, source="model")
    assert out.task == "question" and out.options == []
    assert out.entities == ["epilepsy"]  # "Now" is no entity, and the old topic is not carried into a switch
    assert not out.follow_up and out.carried_over == []


def test_a_pronoun_follow_up_carries_only_the_latest_topic():
    # Seen as a new user: the model's frame for "Which drugs treat it?" after a switch to asthma, with the
    # topic of two turns back copied in; the reply listed drugs joined to both diseases.
    history = [
        {"user_text": "What drugs treat multiple sclerosis?", "rewrite": "",
         "intent": {"entities": ["multiple sclerosis"]}},
        {"user_text": "What are its symptoms?", "rewrite": "What are the symptoms of multiple sclerosis?",
         "intent": {"entities": ["multiple sclerosis"]}},
        {"user_text": "Now tell me about asthma.", "rewrite": "", "intent": {"entities": ["asthma"]}},
    ]
    frame = IntentFrame(task="question", entities=["multiple sclerosis", "asthma"], relation="treats",
                        rewrite="What drugs treat multiple sclerosis and asthma?")
    out = contextualize(frame, "Which drugs treat it?", history, has_table=False, source="model")
    assert out.follow_up and out.entities == ["asthma"] and out.carried_over == ["asthma"]
    assert "multiple sclerosis" not in out.rewrite and "asthma" in out.rewrite
    # A turn with no entities in between ("Thanks!") does not cut the thread: "it" is still asthma.
    history.append({"user_text": "Thanks!", "rewrite": "", "intent": {"entities": []}})
    out = contextualize(frame, "Which drugs treat it?", history, has_table=False, source="model")
    assert out.entities == ["asthma"]
    # A frame that carried an earlier entity passes it on (frames chain).
    chained = history[:2]
    out = contextualize(IntentFrame(task="question", entities=["multiple sclerosis"], rewrite="x"),
                        "And who is at risk?", chained, has_table=False, source="model")
    assert out.entities == ["multiple sclerosis"]


@pytest.mark.parametrize("message,rewrite,expected", [
    # Rewrites the 1.5B model wrote on the bench: each mixes in the previous question.
    ("How is it treated?", "What are the symptoms of glaucoma? How is it treated?",
     "How is it treated? (regarding glaucoma)"),
    ("And after that?", "When did Wang Zhizhi join the NBA? And after that?",
     "And after that? (regarding Wang Zhizhi, NBA)"),
    ("Who is at risk?", "Who is at risk of glaucoma?", "Who is at risk of glaucoma?"),  # adds only the entity
])
def test_a_follow_up_rewrite_adds_only_the_entities(message, rewrite, expected):
    history = [{"user_text": "x", "rewrite": "", "intent": {"entities": ["glaucoma"] if "glaucoma" in rewrite
                                                                   else ["Wang Zhizhi", "NBA"]}}]
    out = contextualize(IntentFrame(task="question", rewrite=rewrite), message, history, has_table=False,
                        source="model")
    assert out.follow_up and out.rewrite == expected


def test_a_modified_one_names_the_noun_the_earlier_entities_share():
    # Seen on the chat bench: the turn kept only the spoons it did not ask about, and found plastic knives.
    history = [{"user_text": "Why does a metal spoon feel colder than a wooden spoon?", "rewrite": "",
                "intent": {"entities": ["metal spoon", "wooden spoon"]}}]
    out = contextualize(IntentFrame(task="question", entities=["metal spoon", "wooden spoon"],
                                    rewrite="And what about a plastic one?"),
                        "And what about a plastic one?", history, has_table=False, source="model")
    assert out.follow_up and out.entities == ["plastic spoon", "metal spoon", "wooden spoon"]
    assert out.rewrite == "And what about a plastic spoon? (regarding plastic spoon, metal spoon, wooden spoon)"
    assert out.carried_over == ["metal spoon", "wooden spoon"]


@pytest.mark.parametrize("message,earlier,expected", [
    ("And the red ones?", ["green apples"], ("red apples", "And the red apples?")),
    ("What about an electric one?", ["car"], ("electric car", "What about an electric car?")),
    ("And the other one?", ["metal spoon", "wooden spoon"], None),        # which one, not a new kind
    ("What about a cheaper one?", ["aspirin", "ibuprofen"], None),       # no noun shared to stand for
    ("Is this one safe?", ["aspirin"], None),
])
def test_noun_for_one(message, earlier, expected):
    from tools.intent import noun_for_one

    assert noun_for_one(message, earlier) == expected


@pytest.mark.parametrize("message,relation,expected", [
    ("What are its symptoms?", "treats", ""),               # seen: carried from "What drugs treat…?"
    ("Which of those drugs also treats restless legs?", "treats", "treats"),
    ("And what treats it?", "treatment", "treatment"),      # the same word by its stem
    ("Why is it warmer in summer?", "causes", ""),
])
def test_a_follow_ups_relation_is_kept_only_when_the_message_says_it(message, relation, expected):
    history = [{"user_text": "x", "rewrite": "", "intent": {"entities": ["Parkinson's disease"]}}]
    out = contextualize(IntentFrame(task="question", relation=relation, rewrite=message), message, history,
                        has_table=False, source="model")
    assert out.follow_up and out.relation == expected


def test_a_self_contained_turns_relation_is_the_models():
    out = contextualize(IntentFrame(task="question", entities=["glaucoma"], relation="treats", rewrite="x"),
                        "Which drugs are used for glaucoma?", [], has_table=False, source="model")
    assert out.relation == "treats"  # inferred, not written: the kg-relations eval relies on it


@pytest.mark.parametrize("message", ["Now tell me about asthma.", "Tell me more about asthma", "Describe asthma."])
def test_a_request_for_a_description_asks_no_relation(message):
    # Seen as a new user: "Now tell me about asthma." came back with the relation "treats", and drugs were listed.
    out = contextualize(IntentFrame(task="question", entities=["asthma"], relation="treats", rewrite=message),
                        message, [], has_table=False, source="model")
    assert out.relation == ""


def test_a_self_contained_turn_is_its_own_rewrite():
    out = contextualize(IntentFrame(task="question", entities=["epilepsy"],
                                    rewrite="What drugs treat epilepsy? What are its symptoms?"),
                        "Now tell me about epilepsy.", HISTORY, has_table=False, source="model")
    assert out.rewrite == "Now tell me about epilepsy."


def test_the_kind_asked_for_is_no_entity():
    out = contextualize(IntentFrame(task="question", entities=["drugs", "Parkinson's disease"], rewrite="x"),
                        "What drugs treat Parkinson's disease?", [], has_table=False, source="model")
    assert out.entities == ["Parkinson's disease"]
    out = contextualize(IntentFrame(task="question", entities=["Paris"], rewrite="x"),
                        "What is the capital of France? Paris?", [], has_table=False, source="model")
    assert out.entities == ["Paris"]


def test_topic_switch_marker_and_follow_ups():
    assert not looks_elliptical("Now tell me about epilepsy.", ["epilepsy"])
    assert not looks_elliptical("Next, what about Wang Zhizhi?", ["Wang Zhizhi"])
    assert looks_elliptical("What are its symptoms?", [])
    assert looks_elliptical("Who is at risk?", ["risk"])
    assert looks_elliptical("Did he play for the Clippers?", ["Clippers"])
    # Measured on the bench (before this rule): both carried the previous turns' entities.
    assert not looks_elliptical("Is it true that smoking increases the risk of lung cancer?",
                                ["smoking", "lung cancer"])
    assert not looks_elliptical("How do plants make their food?", ["plants"])


# -- the compact frame on the wire ----------------------------------------------------------------
def intent_requests(srv) -> list[dict]:
    return [r for r in srv.requests if r.get("response_format")]


def schema_keys(request: dict) -> set[str]:
    return set(request["response_format"]["json_schema"]["schema"]["properties"])


async def run_intents(tmp_settings, fake_llm_server, messages, reply, tables=None):
    from assistant.deps import Deps
    from tools.contracts import EvidenceLedger
    from assistant.llm import LLMClient
    from tools.contracts import Session
    from tools.registry import ToolContext
    from tools.intent import Input, intent

    outs = []
    with fake_llm_server(lambda req: Reply(content=reply(req))) as srv:
        deps = Deps(tmp_settings, llm=LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model"))
        session = Session("c")
        for t in tables or []:
            session.add_table(t)
        deps.memory.ensure_conversation("c", user="t")
        try:
            for message in messages:
                turn = deps.memory.begin_turn("c", message)
                ctx = ToolContext(deps=deps, evidence=EvidenceLedger(), session=session)
                out = await intent(ctx, Input(message=message))
                deps.memory.finish_turn(turn, answer="a", status="verified", intent=out.model_dump(), evidence=[],
                                        cited=[], valid_ids=set(), tool_calls=[], timings={})
                outs.append(out)
        finally:
            await deps.aclose()
    return outs, srv


async def test_greetings_thanks_and_commands_make_no_model_call(tmp_settings, fake_llm_server):
    outs, srv = await run_intents(tmp_settings, fake_llm_server, ["Hello!", "thanks", "/tables"],
                                  reply=lambda req: pytest.fail("no model call expected"))
    assert [o.task for o in outs] == ["chit_chat", "chit_chat", "command"]
    assert intent_requests(srv) == [] and all(o.source == "rules" for o in outs)


async def test_the_frame_asks_only_what_rules_leave_open(tmp_settings, fake_llm_server):
    replies = iter(['{"e": ["Parkinson\'s disease"], "r": "treats"}',
                    '{"e": ["Parkinson\'s disease"], "w": "What are the symptoms of Parkinson\'s disease?"}',
                    '{"e": ["aspirin", "headaches"], "r": "cures", "t": "claim_check"}'])
    outs, srv = await run_intents(tmp_settings, fake_llm_server,
                                  ["What drugs treat Parkinson's disease?", "What are its symptoms?",
                                   "Aspirin cures headaches."], reply=lambda req: next(replies))
    first, follow, statement = intent_requests(srv)
    # A question: the task is settled by its form, and a first turn needs no rewrite.
    assert schema_keys(first) == {"e", "r"}  # answer type and time are the rules' (below)
    # A follow-up may need a rewrite; its task is still settled.
    assert schema_keys(follow) == {"e", "r", "w"}
    assert "What drugs treat Parkinson's disease?" in follow["messages"][-1]["content"]
    # A statement: only here the model labels the task, from an enum without multiple_choice or command.
    assert "t" in schema_keys(statement) and "w" not in schema_keys(statement)
    assert statement["response_format"]["json_schema"]["schema"]["properties"]["t"]["enum"] == [
        "question", "claim_check", "chit_chat"]
    assert [o.task for o in outs] == ["question", "question", "claim_check"]
    assert outs[0].relation == "treats" and outs[0].answer_type == ["drug"]
    assert outs[1].rewrite == "What are the symptoms of Parkinson's disease?" and outs[1].follow_up
    assert outs[2].entities == ["aspirin", "headaches"]


async def test_a_table_turn_needs_no_task_label(tmp_settings, fake_llm_server):
    from kb.tables import Table

    table = Table(name="trials", title="Vaccine trials", columns=["Trial", "Participants"],
                  rows=[["ALPHA-1", "1,200"], ["BETA-2", "4,512"]])
    outs, srv = await run_intents(tmp_settings, fake_llm_server, ["BETA-2 enrolled 4,512 participants."],
                                  reply=lambda req: json.dumps({"e": ["BETA-2"]}), tables=[table])
    assert "t" not in schema_keys(intent_requests(srv)[0]) and outs[0].task == "claim_check"


async def test_the_model_cannot_add_options_or_the_entity_now(tmp_settings, fake_llm_server):
    # Long keys (a server that ignores the short aliases) still fill the frame; invented options do not count.
    long_frame = json.dumps({"task": "multiple_choice", "entities": ["Now", "epilepsy"], "options": ["a", "b"],
                             "rewrite": "Now tell me about epilepsy."})
    outs, _ = await run_intents(tmp_settings, fake_llm_server, ["Now tell me about epilepsy."],
                                reply=lambda req: long_frame)
    assert outs[0].task == "question" and outs[0].options == [] and outs[0].entities == ["epilepsy"]


# -- "it" after a question that asked for one thing ------------------------------------------------------------
def _after(question: str, answer: str, status: str = "verified", entities=("energy", "source")):
    return [{"user_text": question, "rewrite": "", "answer": answer, "status": status,
             "intent": {"entities": list(entities)}}]


def test_it_after_a_one_thing_question_is_the_thing_the_answer_named():
    # Seen on the chat bench: searched as "(regarding energy, source)", the pool held solar energy and oil.
    history = _after("What is an example of a renewable energy source?", "Wind is a renewable energy source [S5][S6].")
    out = contextualize(IntentFrame(task="question", entities=["energy", "source"], rewrite="Why is it renewable?"),
                        "Why is it renewable?", history, has_table=False, source="model")
    assert out.follow_up and out.entities == ["wind"] and out.carried_over == ["wind"]
    assert out.rewrite == "Why is wind renewable?"
    its = contextualize(IntentFrame(task="question", rewrite="x"), "What is its main drawback?", history,
                        has_table=False, source="model")
    assert its.rewrite == "What is wind's main drawback?"


@pytest.mark.parametrize("question,answer,status", [
    # a list question: "its" is still the disease asked about
    ("What drugs treat Parkinson's disease?", "Levodopa is a drug that treats Parkinson's disease [P1].", "verified"),
    ("What is an example of a renewable energy source?", "Wind is a renewable energy source [S5].", "no_evidence"),
    ("What is an example of a renewable energy source?", "A renewable energy source is wind [S5].", "verified"),
    ("What is an example of a renewable energy source?", "The evidence I found does not answer this.", "verified"),
    ("What is an example of a renewable energy source?", "Solar panels on the roofs of many houses are common [S1].",
     "verified"),
])
def test_it_keeps_its_old_reading_unless_one_named_thing_answered_a_one_thing_question(question, answer, status):
    history = _after(question, answer, status, entities=["Parkinson's disease"] if "Parkinson" in question
                     else ["energy", "source"])
    out = contextualize(IntentFrame(task="question", rewrite="What are its symptoms?"), "What are its symptoms?",
                        history, has_table=False, source="model")
    assert out.follow_up and "levodopa" not in out.rewrite.lower() and "wind" not in out.rewrite.lower()
    assert out.entities == history[0]["intent"]["entities"]


def test_one_thing_questions_and_answer_subjects():
    from tools._grounding import EXPLETIVE_IT, answer_subject, asks_for_one, with_subject

    assert asks_for_one("What is an example of a renewable energy source?")
    assert asks_for_one("Name a mammal that lays eggs.") and asks_for_one("Which planet is the largest?")
    assert not asks_for_one("What are the symptoms of glaucoma?") and not asks_for_one("Which drugs treat COPD?")
    # a sentence's first capital says nothing about a name, so the subject is lower-cased (search ignores case)
    jupiter = answer_subject("Which planet is the largest?", "Jupiter is the largest planet [S2].", "verified")
    assert jupiter == "jupiter"
    assert answer_subject("Which agency is it?", "WHO is the agency [S2].", "verified") == "WHO"
    assert answer_subject("Name a mammal that lays eggs.", "The platypus is a mammal that lays eggs [S1].",
                          "verified") == "platypus"
    # "it" in "is it true" points at nothing: the pronoun after it is the one replaced
    assert with_subject("Is it true that it is renewable?", "wind", EXPLETIVE_IT) == \
        "Is it true that wind is renewable?"
    assert with_subject("Why so?", "wind", EXPLETIVE_IT) is None


def test_it_after_a_swapped_one_thing_question_is_that_answers_subject():
    # "What about a fossil fuel?" was searched as "What is an example of a fossil fuel?": its verified answer named
    # coal, so "it" in the next turn is coal, as after the question asked in full.
    history = [{"user_text": "What about a fossil fuel?", "rewrite": "What is an example of a fossil fuel?",
                "answer": "Coal is a fossil fuel [S2].", "status": "verified", "intent": {"entities": ["fossil fuel"]}}]
    out = contextualize(IntentFrame(task="question", rewrite="Why is it nonrenewable?"), "Why is it nonrenewable?",
                        history, has_table=False, source="model")
    assert out.rewrite == "Why is coal nonrenewable?" and out.entities[0] == "coal"


# -- "And of X?" / "What about X?": the previous question of X ---------------------------------------------------
@pytest.mark.parametrize("previous,entities,message,expected,thing", [
    # both seen on the chat bench, searched as "(regarding mitochondria, ribosomes)" and "(regarding coal, wind)"
    ("What is the function of the mitochondria?", ["mitochondria"], "And of the ribosomes?",
     "What is the function of the ribosomes?", "ribosomes"),
    ("Why is wind renewable?", ["wind"], "What about coal?", "Why is coal renewable?", "coal"),
    ("What drugs treat Parkinson's disease?", ["Parkinson's disease"], "And for restless legs syndrome?",
     "What drugs treat restless legs syndrome?", "restless legs syndrome"),
    ("What drugs treat Parkinson's disease?", ["Parkinson's disease"], "How about epilepsy.",
     "What drugs treat epilepsy?", "epilepsy"),
])
def test_a_short_follow_up_asks_the_previous_question_of_its_new_thing(previous, entities, message, expected, thing):
    history = [{"user_text": previous, "rewrite": previous, "answer": "x", "status": "verified",
                "intent": {"entities": entities}}]
    out = contextualize(IntentFrame(task="question", entities=entities, rewrite=message), message, history,
                        has_table=False, source="model")
    assert out.follow_up and out.rewrite == expected and out.carried_over == [] and out.entities == [thing]


@pytest.mark.parametrize("previous,entities,message", [
    ("Why does a metal spoon feel colder than a wooden spoon?", ["metal spoon", "wooden spoon"],
     "What about glass?"),  # two things asked: which one glass replaces is a guess
    ("What is the function of the mitochondria?", ["mitochondria"], "What about it?"),
    ("What is the function of the mitochondria?", ["mitochondria"], "And what about them?"),
    ("What is the function of the mitochondria?", ["organelle"], "And of the ribosomes?"),  # entity not in it
    ("What is the function of the mitochondria?", ["mitochondria"], "And of the mitochondria?"),
    # a time, a place or a group is a new condition, not a new subject
    ("Which teams did Yao Ming play for?", ["Yao Ming"], "and in 2011?"),
    ("Which teams did Yao Ming play for?", ["Yao Ming"], "What about after 2015?"),
    ("What drugs treat Parkinson's disease?", ["Parkinson's disease"], "What about in children?"),
    ("Which teams did Yao Ming play for?", ["Yao Ming"], "And for the season of 2011?"),
    ("What is the function of the mitochondria?", ["mitochondria"], "What about the role they play in cells "
     "that divide quickly?"),
])
def test_no_swap_where_it_would_be_a_guess(previous, entities, message):
    from tools._question_rules import swapped_question

    assert swapped_question(message, previous, entities) is None


def test_a_swapped_question_keeps_the_previous_relation():
    # Seen as a new user: "And for epilepsy?" after "What drugs treat asthma?" came back with no relation, so no
    # list of facts was made.
    history = [{"user_text": "What drugs treat asthma?", "rewrite": "What drugs treat asthma?", "answer": "x",
                "status": "verified", "intent": {"entities": ["asthma"], "relation": "treats"}}]
    frame = IntentFrame(task="question", entities=["epilepsy"], relation="", rewrite="x")
    out = contextualize(frame, "And for epilepsy?", history, has_table=False, source="model")
    assert out.rewrite == "What drugs treat epilepsy?" and out.relation == "treats"
    assert asks_for_list(out.rewrite, out.relation)


def test_the_swap_reads_the_previous_question_as_searched():
    from tools.intent import previous_question

    assert previous_question({"user_text": "Why is it renewable?", "rewrite": "Why is wind renewable?"}) == \
        "Why is wind renewable?"
    assert previous_question({"user_text": "Why is it renewable?",
                              "rewrite": "Why is it renewable? (regarding energy, source)"}) == "Why is it renewable?"


# -- a question in a loaded table's own column words is whole ------------------------------------------
EGFR_COLUMNS = [["drug", "trial", "patients", "response rate", "median PFS (months)", "grade 3+ AE"]]
AFTER_A_CLAIM = [{"user_text": "Is it true that dacomitinib had more grade 3 adverse events than gefitinib?",
                  "rewrite": "", "intent": {"entities": ["dacomitinib", "gefitinib"]}}]


@pytest.mark.parametrize("message,whole", [
    ("Which trial enrolled the most patients?", True),  # two headers
    ("What is the median PFS of the trial with the most patients?", True),
    ("Which trial had the fewest?", True),  # one header and a superlative
    ("What was its response rate?", False),  # a pronoun points back
    ("Which of them had the most patients?", False),
    ("And which trial had the most patients?", False),  # opens like a follow-up
    ("What was the response rate?", False),  # one header, no superlative: the row is the earlier answer's
    ("How many patients?", False),
    ("Who is at risk?", False),
])
def test_a_question_in_the_tables_column_words_inherits_nothing(message, whole):
    # Found as a new user: after the claim, "Which trial enrolled the most patients?" was searched "(regarding
    # dacomitinib, gefitinib)"; the table program kept those two rows and named FLAURA-comp (277), not FLAURA (279).
    frame = IntentFrame(task="question", entities=["dacomitinib", "gefitinib"], rewrite=message)
    out = contextualize(frame, message, AFTER_A_CLAIM, has_table=True, source="model",
                        table_columns=EGFR_COLUMNS)
    assert out.follow_up is not whole
    if whole:
        assert out.carried_over == [] and out.rewrite == message
        assert not {"dacomitinib", "gefitinib"} & {e.lower() for e in out.entities}
    else:
        assert out.follow_up  # it leans on the claim, with or without the table


def test_a_turn_that_named_nothing_moves_the_conversation_on():
    """Found as a new user: after a claim about VaxB and VaxE, a question about every vaccine and a claim about
    every vaccine, "How many participants were there in total?" carried VaxB and VaxE, and the table program
    summed their two rows (1,830 of 5,070)."""
    history = [
        {"user_text": "VaxB's efficacy is higher than VaxE's.", "rewrite": "",
         "intent": {"task": "claim_check", "entities": ["VaxB", "VaxE"]}},
        {"user_text": "Which vaccine had the lowest rate of fever?", "rewrite": "",
         "intent": {"task": "question", "entities": []}},
    ]
    frame = IntentFrame(task="question", entities=["VaxB", "VaxE"], rewrite="How many participants were there in "
                                                                          "total for VaxB and VaxE?")
    out = contextualize(frame, "How many participants were there in total?", history, has_table=True,
                        source="model")
    assert out.entities == [] and out.carried_over == []
    assert out.rewrite == "How many participants were there in total?"
    # the same question straight after the claim still leans on it
    out = contextualize(frame, "How many participants were there in total?", history[:1], has_table=True,
                        source="model")
    assert out.carried_over == ["VaxB", "VaxE"]
