"""Grammar-bound answers (#14): the schema, the streaming render of partial JSON, the support check, the pool."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from assistant.answer.answering import (DOES_NOT_ANSWER_TEXT, ProseStream, answer_adapter, answer_schema, check_support,
                                 is_yes_no_question, parse_answer, render_prose)
from tools.contracts import EvidenceLedger, cited_ids
from assistant.answer.pool import build_pool, rank_pool
from assistant.answer.small_talk import is_small_talk
from assistant.answer.support import check_statement, names, numbers

IDS = ["S1", "S2", "T1:R2C3", "P1"]


def enum_values(schema: dict) -> set[str]:
    found: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            if "enum" in node:
                found.update(node["enum"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return found


# -- the schema -------------------------------------------------------------------------------------------
def test_the_schema_admits_exactly_the_given_ids():
    schema = answer_schema(IDS, yes_no=False)
    assert enum_values(schema) == set(IDS)
    assert "verdict" not in json.dumps(schema)
    adapter = answer_adapter(IDS, yes_no=False)
    ok = json.dumps({"statements": [{"text": "x", "cite": ["S1", "T1:R2C3"]}]})
    assert parse_answer(ok, adapter).cited == ["S1", "T1:R2C3"]
    for bad in ({"statements": [{"text": "x", "cite": ["S9"]}]},   # an id that is not this turn's
                {"statements": [{"text": "x", "cite": []}]},       # a statement citing nothing
                {"statements": [{"text": "x", "cite": ["T1"]}]},   # a whole table
                {"statements": []}):
        assert parse_answer(json.dumps(bad), adapter) is None, bad


def test_a_yes_no_question_gets_a_verdict_first():
    assert is_yes_no_question("Does aspirin reduce mortality after stroke?")
    assert is_yes_no_question("Is levodopa used for Parkinson's disease?")
    assert not is_yes_no_question("What drugs treat Parkinson's disease?")
    assert not is_yes_no_question("Is it A or B?")
    # a choice between the last words is not yes/no; an "or" earlier in the question leaves it one
    assert not is_yes_no_question("Is the patient male or female?")
    assert not is_yes_no_question("Risk factors in women with and without depression: the same or different?")
    assert is_yes_no_question("Does surgery or radiation therapy impact survival for patients with small cell cancers?")
    assert is_yes_no_question("Does transverse apex match coronal apex levels (regional or global) in scoliosis?")
    # a spaced hyphen and ", is it" open the asking clause too
    assert is_yes_no_question("Fast foods - are they a risk factor for asthma?")
    assert is_yes_no_question("Suturing of the nasal septum after septoplasty, is it an effective alternative?")
    assert not is_yes_no_question("Fast foods - which ones raise the risk of asthma?")
    # Titled questions: the clause after the colon or full stop asks, or names what is asked about.
    assert is_yes_no_question("Colorectal cancer with liver metastases: does same-centre care improve results?")
    assert is_yes_no_question("Necrotizing fasciitis: an indication for hyperbaric oxygenation therapy?")
    assert is_yes_no_question("Shigellosis in Barcelona 1988-2012. Is it sexually transmitted?")
    assert is_yes_no_question("Diabetes among art glass workers--an effect of arsenic exposure?")
    assert not is_yes_no_question("Necrotizing fasciitis: which antibiotics come first?")
    assert not is_yes_no_question("Levodopa for Parkinson's disease?")  # no title: too little to go on
    assert not is_yes_no_question("Necrotizing fasciitis: an indication for surgery.")  # not a question
    schema = answer_schema(IDS, yes_no=True)
    answer = schema["$defs"]["Answer"]
    assert list(answer["properties"])[0] == "verdict" and answer["properties"]["verdict"]["enum"] == ["yes", "no", "maybe"]
    adapter = answer_adapter(IDS, yes_no=True)
    assert parse_answer(json.dumps({"statements": [{"text": "x", "cite": ["S1"]}]}), adapter) is None  # verdict needed


def test_the_does_not_answer_path_lists_the_closest_evidence():
    adapter = answer_adapter(IDS, yes_no=True)
    answer = parse_answer(json.dumps({"does_not_answer": True, "closest": ["S2", "P1"]}), adapter)
    assert answer.does_not_answer and answer.cited == ["S2", "P1"] and answer.verdict is None
    assert render_prose(answer.model_dump(), complete=True) == f"{DOES_NOT_ANSWER_TEXT} The closest evidence: [S2][P1]."
    assert parse_answer(json.dumps({"does_not_answer": True, "closest": ["S8"]}), adapter) is None


def test_a_cut_off_answer_keeps_its_finished_statements():
    adapter = answer_adapter(IDS, yes_no=False)
    raw = json.dumps({"statements": [{"text": "Levodopa treats it.", "cite": ["S1"]},
                                     {"text": "Amantadine does too.", "cite": ["P1"]}]})
    cut = raw[:raw.index("Amantadine") + 5]
    answer = parse_answer(cut, adapter)
    assert [s.text for s in answer.statements] == ["Levodopa treats it."]


# -- streaming ----------------------------------------------------------------------------------------------
STREAMED = json.dumps({"verdict": "yes", "statements": [
    {"text": "Levodopa treats Parkinson's disease.", "cite": ["S1", "P1"]},
    {"text": "The dose in the trial was 300 mg/day", "cite": ["T1:R2C3"]}]})


@pytest.mark.parametrize("step", [1, 2, 3, 7])
def test_the_streaming_render_only_grows_and_never_shows_half_an_id(step):
    stream = ProseStream()
    shown = []
    for i in range(0, len(STREAMED), step):
        delta = stream.feed(STREAMED[i:i + step])
        if delta:
            shown.append(stream.shown)
    adapter = answer_adapter(IDS, yes_no=True)
    final = render_prose(parse_answer(stream.raw, adapter).model_dump(), complete=True)
    assert final == ("**Yes.** Levodopa treats Parkinson's disease [S1][P1]. "
                     "The dose in the trial was 300 mg/day [T1:R2C3].")
    assert len(shown) > 5  # it grew piece by piece, not at the end
    for text in shown:
        assert final.startswith(text)
        assert not re.search(r"\[[^\]]*$", text), text  # never an open bracket: no half-written id
        assert set(cited_ids(text)) <= set(IDS)
    # The first statement's chips appear as soon as the second statement begins, before the stream ends.
    assert any("[S1][P1]" in t and "[T1:R2C3]" not in t for t in shown)
    assert stream.advance(final) == final[len(stream.shown) - len(final):] or stream.shown == final


def test_a_repeated_statement_streams_once_and_the_shown_text_only_grows():
    """Seen on "What diseases is ibuprofen used to treat?": the same statement streamed three times."""
    said = {"text": "Ibuprofen is used to treat osteoarthritis.", "cite": ["P1"]}
    streamed = json.dumps({"statements": [said, said, {"text": "Ibuprofen is used", "cite": ["P1"]}, said,
                                          {"text": "Ibuprofen resembles fenoprofen.", "cite": ["P2"]}]})
    stream = ProseStream()
    shown = []
    for i in range(0, len(streamed), 3):
        if stream.feed(streamed[i:i + 3]):
            shown.append(stream.shown)
    final = render_prose(json.loads(streamed), complete=True)
    assert final == ("Ibuprofen is used to treat osteoarthritis [P1]. Ibuprofen is used [P1]. "
                     "Ibuprofen resembles fenoprofen [P2].")
    assert stream.shown == final[:len(stream.shown)] and all(final.startswith(t) for t in shown)
    assert final.count("osteoarthritis") == 1


def test_partial_json_that_is_not_an_object_yet_shows_nothing():
    stream = ProseStream()
    assert stream.feed('{"statem') == "" and stream.feed('ents": [') == "" and stream.feed('{"text": "A') == "A"


# -- the support check on hand-made statements ----------------------------------------------------------------
EVIDENCE = "Levodopa 250 mg three times daily improved motor scores in patients with Parkinson's disease in 2011."


def test_a_number_not_in_the_evidence_is_flagged():
    result = check_statement("Levodopa 500 mg daily improved motor scores.", [EVIDENCE])
    assert not result.ok and "500" in result.missing


def test_a_date_not_in_the_evidence_is_flagged():
    assert not check_statement("Levodopa improved motor scores in 2015.", [EVIDENCE]).ok


def test_a_name_not_in_the_evidence_is_flagged():
    result = check_statement("Amantadine improved motor scores in Parkinson's disease.", [EVIDENCE])
    assert not result.ok and result.missing == ["amantadine"]


def test_a_paraphrase_with_the_same_entities_and_numbers_is_kept():
    assert check_statement("In 2011, patients with Parkinson's disease given 250 mg of levodopa three times a day "
                           "had better motor scores.", [EVIDENCE]).ok
    assert check_statement("Amantadine is used for Parkinson disease.", ["Amantadine treats Parkinson's disease"]).ok
    assert check_statement("The total was 1000 cases.", ["There were 1,000 cases in all."]).ok


def test_a_statement_without_names_or_numbers_must_share_a_content_word():
    assert not check_statement("it is safe and effective.", ["Magnets attract iron objects."]).ok
    assert check_statement("it helped motor scores.", [EVIDENCE]).ok


def test_a_statement_mostly_of_words_its_evidence_lacks_is_flagged():
    # Seen on the chat bench: no name and no number, "plants" and "food" shared, and it passed as verified.
    cited = ["food is a source of energy for plants", "Usually plants store the food they produce for future use."]
    result = check_statement("Plants make their food by converting sunlight, water, and carbon dioxide into glucose "
                             "through photosynthesis", cited)
    assert not result.ok and {"photosynthesis", "glucose", "sunlight"} <= set(result.missing)
    # A paraphrase adds a word or two, and a long statement may add a few among many it shares.
    assert check_statement("Plants keep the food they make for later use.", cited).ok
    assert check_statement("Mitochondria are organelles that produce energy for the cell",
                           ["The mitochondria are the powerhouse organelles of the cell"]).ok
    assert check_statement("In 2011, patients with Parkinson's disease who took levodopa 250 mg three times daily "
                           "showed clearly better motor scores over the whole study period.", [EVIDENCE]).ok


def test_a_statement_naming_the_asked_subject_must_cite_evidence_that_names_it():
    # Seen as a new user: "What is an example of a fossil fuel?" came back verified with this statement.
    cited = ["An example of creating an alternative fuel is turning plant material into fuel"]
    statement = "An example of a fossil fuel is turning plant material into fuel"
    assert check_statement(statement, cited).ok  # no name, no number, few added words: only the subject catches it
    result = check_statement(statement, cited, subjects=["fossil fuel"])
    assert not result.ok and result.missing == ["fossil fuel"]
    # Evidence that names the subject passes, inflected or not; a statement that does not name it is not held to it.
    assert check_statement("Coal is a fossil fuel", ["coal is a kind of fossil fuels"], subjects=["fossil fuel"]).ok
    assert check_statement("Plant material can be turned into fuel", cited, subjects=["fossil fuel"]).ok
    # One-word subjects are the subject check's business (assistant.answer.support.unnamed_subjects), not this one's.
    assert check_statement("Wind is a renewable source of energy", ["wind is a source of energy"],
                           subjects=["renewable"]).ok


def test_a_statement_naming_what_the_question_asks_its_relation_of_must_cite_evidence_that_names_it():
    """Found as a new user: "Which vitamin deficiency causes rickets?" was answered, verified, "Vitamin D deficiency
    causes rickets [S5]", S5 a sentence on vitamin D deficiency in the elderly that never mentions rickets."""
    from assistant.answer.support import relation_object

    s5 = ("It is now recognized that vitamin D insufficiency and vitamin D deficiency are common in elderly people, "
          "especially in those who are not exposed to sunlight-mediated cholecalciferol during the winter months.")
    statement = "Vitamin D deficiency causes rickets"
    asked = relation_object("Which vitamin deficiency causes rickets?", "causes")
    assert asked == "rickets"
    assert check_statement(statement, [s5], subjects=["vitamin deficiency", "rickets"]).ok  # before: verified
    result = check_statement(statement, [s5], subjects=["vitamin deficiency", "rickets"], asked_object=asked)
    assert not result.ok and result.missing == ["rickets"] and result.names_only
    # evidence that names it passes; a statement that does not name it is not held to it
    assert check_statement(statement, [s5, "Rickets is caused by a lack of vitamin D."], asked_object=asked).ok
    assert check_statement("Vitamin D deficiency is common in the elderly", [s5], asked_object=asked).ok
    # one word of a longer object will do ("lung cancer" named by "cancer")
    assert check_statement("Smoking increases the risk of lung cancer", ["Smoking increases the risk of cancer."],
                           asked_object="lung cancer").ok


def test_the_check_uses_every_cited_item_but_only_those():
    assert check_statement("Levodopa and Amantadine are used.", [EVIDENCE, "Amantadine treats it."]).ok
    assert not check_statement("Levodopa and Amantadine are used.", [EVIDENCE]).ok
    # Known limit (documented in assistant/answer/support.py): a lower-case name mid-sentence reads as a common word.
    assert check_statement("Levodopa and amantadine are used.", [EVIDENCE]).ok


def test_a_negation_the_cited_evidence_does_not_carry_is_flagged():
    # Seen as a new user: four statements like this one, each passed and the answer showed "verified".
    result = check_statement("A plastic spoon is not a kind of utensil.",
                             ["wooden has property spaghetti spoon", "spoon is a kind of utensil"])
    assert not result.ok and result.missing == ["not"] and "negates" in result.reason
    assert not check_statement("Levodopa never improved motor scores.", [EVIDENCE]).ok
    assert not check_statement("Parkinson's disease isn't treated by levodopa.", [EVIDENCE]).ok
    # a negative finding said in other words is kept, and "not only" negates nothing
    assert check_statement("Vitamin D did not lower fractures.", ["Vitamin D failed to lower fractures."]).ok
    assert check_statement("Coal is not renewable.", ["coal is a nonrenewable resource"]).ok
    assert check_statement("There was no effect of levodopa on motor scores.",
                           ["Levodopa had no effect on motor scores."]).ok
    assert check_statement("Levodopa not only improved motor scores but also sleep.", [EVIDENCE]).ok


def test_a_cause_the_cited_evidence_does_not_state_is_flagged():
    # Found as a new user: "What causes malaria?" came back verified with this statement.
    result = check_statement("Falciparum malaria in endemic areas causes malaria.",
                             ["falciparum malaria in endemic areas.", "malaria —localizes to→ immune system",
                              "malaria —associates with→ ICAM1 —participates in→ Immune System"])
    assert not result.ok and result.missing == ["causes"] and "states a cause" in result.reason
    assert not check_statement("Smoking leads to lung cancer.", ["smoking is associated with lung cancer"]).ok
    # a cause or mechanism the evidence states in other words is kept
    assert check_statement("Malaria is caused by Plasmodium parasites.",
                           ["Malaria is transmitted by mosquitoes carrying Plasmodium parasites."]).ok
    assert check_statement("Tobacco causes lung cancer.", ["tobacco causes lung cancer"]).ok
    assert check_statement("The tilt of the Earth's axis causes seasons.",
                           ["Seasons are a result of the tilt of the Earth's axis."]).ok
    assert check_statement("Levodopa improved motor scores.", [EVIDENCE]).ok  # no cause stated, none needed


def test_key_content_extraction():
    assert numbers("Take 500 mg (2.50 ml), 1,000 patients, 45% in 2011; S1 and IL-6.") == {
        "500", "2.5", "1000", "45", "2011", "6"}
    assert names("Levodopa treats Parkinson's disease. The WHO lists IL-6.") == {"levodopa", "parkinson", "who",
                                                                                  "il-6"}


def test_check_support_reports_each_flagged_statement():
    adapter = answer_adapter(["S1", "S2"], yes_no=False)
    answer = parse_answer(json.dumps({"statements": [{"text": "Levodopa 250 mg helped.", "cite": ["S1"]},
                                                     {"text": "Levodopa 900 mg helped.", "cite": ["S1"]}]}), adapter)
    report = check_support(answer, {"S1": EVIDENCE, "S2": "Other."})
    assert [c.statement for c in report.flagged] == ["Levodopa 900 mg helped."]
    assert "900" in report.problem()


# -- small talk by rule -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("message,small", [
    ("hello", True), ("Hi, thanks!", True), ("How are you?", True), ("good morning", True),
    ("What dose of warfarin should I take?", False), ("thanks, what treats Parkinson's disease?", False),
    ("Tell me about levodopa", False), ("Is aspirin safe in pregnancy", False),
])
def test_a_message_asking_for_facts_or_advice_is_never_small_talk(message, small):
    assert is_small_talk(message) is small


# -- one pool, one ranking ---------------------------------------------------------------------------------------
def test_the_pool_verbalises_every_source():
    led = EvidenceLedger()
    led.add_sentence("Levodopa helps.", source="PubMed 1", doc_id="pubmed:1")
    led.add_sentence("My notes say rest.", source="notes.txt", doc_id="upload:notes.txt")
    led.add_path("Amantadine —treats→ Parkinson's disease", triples=[("Amantadine", "treats", "Parkinson's disease")],
                 source="hetionet", sentence="Amantadine treats Parkinson's disease.")
    led.add_cell("trial.csv", 2, 3, "250", source="trial.csv", header="Dose (mg)", row_label="Levodopa")
    pool = build_pool(led.citable())
    assert [(c.source_kind, c.text) for c in pool] == [
        ("text", "Levodopa helps."), ("upload", "My notes say rest."), ("kg", "Amantadine treats Parkinson's disease."),
        ("table", "trial.csv / row Levodopa / Dose (mg): 250")]
    ranked = rank_pool(pool, "anything", k=10)
    assert not ranked.ranked and ranked.summary()["pool"] == {"text": 1, "upload": 1, "kg": 1, "table": 1}


class BagOfWordsEncoder:
    """A deterministic stand-in for the sentence encoder: one dimension per word, tokens = words."""

    def __init__(self, texts):
        vocab = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
        self.index = {w: i for i, w in enumerate(vocab)}

    def __call__(self, texts):
        out = []
        for t in texts:
            words = [w for w in re.findall(r"\w+", t.lower()) if w in self.index]
            z = np.zeros((len(words), len(self.index)), np.float32)
            for j, w in enumerate(words):
                z[j, self.index[w]] = 1.0
            v = z.sum(axis=0) if len(words) else np.zeros(len(self.index), np.float32)
            v = v / max(np.linalg.norm(v), 1e-9)
            out.append((v, z, np.array([self.index[w] for w in words], np.int64)))
        return out


def test_one_ranking_across_sources_not_quotas():
    led = EvidenceLedger()
    for i in range(6):  # many off-topic KG facts gathered first
        led.add_path(f"Gene{i} —interacts→ Gene{i + 1}", triples=[(f"Gene{i}", "interacts", f"Gene{i + 1}")],
                     source="hetionet", sentence=f"Gene{i} interacts with Gene{i + 1}.")
    led.add_sentence("Levodopa treats the motor symptoms of Parkinson disease.", source="MedQuAD")
    led.add_sentence("Amantadine treats Parkinson disease dyskinesia.", source="PubMed")
    led.add_path("Apomorphine —treats→ Parkinson disease", triples=[("Apomorphine", "treats", "Parkinson disease")],
                 source="hetionet", sentence="Apomorphine treats Parkinson disease.")
    pool = build_pool(led.citable())
    query = "What drugs treat Parkinson disease?"
    ranked = rank_pool(pool, query, k=3, encoder=BagOfWordsEncoder([query] + [c.text for c in pool]))
    assert ranked.ranked and ranked.pool_size == 9
    assert {c.id for c in ranked.top} == {"S1", "S2", "P7"}
    assert ranked.summary()["sent_to_answer"] == {"text": 2, "kg": 1} and ranked.summary()["pool"] == {"kg": 7, "text": 2}


# -- yes/no decided in code (assistant/answer/verdicts.py) ----------------------------------------------------------
def test_the_verdict_rule_reads_negated_findings_only():
    from assistant.answer.verdicts import verdict_from_evidence

    assert verdict_from_evidence({"S1": "Levodopa improved motor scores."}).verdict == "yes"
    decided = verdict_from_evidence({"S1": "Patients were older.", "S4": "Mortality did not differ between arms."})
    assert (decided.verdict, decided.cue, decided.evidence_id) == ("no", "did not", "S4")
    assert verdict_from_evidence({"S1": "There was no significant association with age."}).cue == "no significant"
    assert verdict_from_evidence({"S1": "The trial failed to show a benefit."}).verdict == "no"
    # found as a new user: "Is there a cure?" over this sentence was "Yes"
    assert verdict_from_evidence({"S1": "No cure exists; infected trees are removed."}).cue == "No cure"
    # "not" without a negated finding, and words that only contain a cue, do not flip the verdict
    assert verdict_from_evidence({"S1": "Not only mortality but also stays fell."}).verdict == "yes"
    assert verdict_from_evidence({"S1": "Snore and no-reflow were notable; cannotated."}).verdict == "yes"
    assert verdict_from_evidence({}).verdict == "yes"
    # the cited document's conclusion, when known, decides over the cited sentences
    concl = verdict_from_evidence({"S1": "Mortality did not differ."}, {"S7": "Results.", "S8": "Drug X helps."})
    assert concl.verdict == "yes" and concl.cited == ("S7", "S8")
    concl = verdict_from_evidence({"S1": "Drug X helps."}, {"S8": "Drug X was not superior to placebo."})
    assert (concl.verdict, concl.cue, concl.cited) == ("no", "was not", ("S8",))


def test_a_question_about_sameness_is_answered_by_a_stated_sameness():
    from assistant.answer.verdicts import verdict_from_evidence

    asked = "Are endometrial polyps from pre-menopausal women similar to post-menopausal women?"
    differ = {"S3": "Pre- and post-menopausal polyps exhibit differing hormone receptor markers."}
    alike = {"S3": "Patients were older.", "S4": "Long-term outcomes did not differ between the groups."}
    # the negation rule alone reads these the wrong way round
    assert verdict_from_evidence(differ).verdict == "yes" and verdict_from_evidence(alike).verdict == "no"
    decided = verdict_from_evidence(differ, question=asked)
    assert decided.verdict == "no" and "none of it says they are similar" in decided.explain()
    decided = verdict_from_evidence(alike, question=asked)
    assert (decided.verdict, decided.cue, decided.evidence_id) == ("yes", "did not differ", "S4")
    assert "[S4]" in decided.explain()
    decided = verdict_from_evidence({}, {"S9": "Outcomes were comparable."}, question="Is A the same as B?")
    assert (decided.verdict, decided.cited) == ("yes", ("S9",))
    # a question that does not ask about sameness keeps the negation rule
    assert verdict_from_evidence(alike, question="Does surgery lower mortality?").verdict == "no"
    # "the same" after a preposition places the question; it does not ask about sameness
    from assistant.answer.verdicts import asks_sameness

    assert not asks_sameness("Does management at the same centre improve results?")
    assert not asks_sameness("Should all patients be optimized to the same preoperative hemoglobin level?")
    assert asks_sameness("Juvenile ankylosing spondylitis--is it the same disease as adult ankylosing spondylitis?")
    assert asks_sameness("Are patients receiving the same message from dietitians and nurses?")
    assert asks_sameness("Is ultrasound equal to X-ray in pediatric fracture diagnosis?")


def test_question_coverage_is_the_best_single_sentence_share():
    from assistant.answer.verdicts import content_words, must_answer, question_coverage

    assert content_words("Does the drug reduce mortality?") == {"drug", "reduce", "mortality"}
    q = "Does aspirin reduce mortality after stroke?"  # aspirin, reduce, mortality, stroke
    assert question_coverage(q, ["Aspirin is cheap.", "Mortality after stroke fell."]) == 0.5
    assert question_coverage(q, ["Aspirin reduced mortality."]) == 0.5  # no stemming: "reduced" is not "reduce"
    assert question_coverage(q, []) == 0.0 and question_coverage("Is it?", ["It is."]) == 0.0
    assert must_answer(q, ["Mortality after stroke fell in aspirin users."])  # 3 of 4
    assert not must_answer(q, ["Mortality after stroke fell."]) and not must_answer(q, ["Aspirin is cheap."])


def test_without_the_abstain_branch_only_an_answer_parses():
    adapter = answer_adapter(IDS, yes_no=True, allow_abstain=False)
    assert parse_answer(json.dumps({"does_not_answer": True, "closest": ["S2"]}), adapter) is None
    ok = parse_answer(json.dumps({"verdict": "no", "statements": [{"text": "x", "cite": ["S1"]}]}), adapter)
    assert ok.verdict == "no" and "DoesNotAnswer" not in json.dumps(adapter.json_schema())
    # the streamed prose leaves the slot out when code decides it
    stream = ProseStream(show_verdict=False)
    shown = stream.feed('{"verdict": "no", "statements": [{"text": "Mortality fell", "cite": ["S1"]}]}')
    assert shown.startswith("Mortality fell") and "No" not in shown


# -- echoed evidence lines and the subject check ------------------------------------------------------------
def test_strip_echo_removes_only_this_turns_labels_and_sources():
    from assistant.answer.answering import strip_echo

    sources = {"S1": "OpenBookQA fact 1058", "P2": "hetionet"}
    assert strip_echo("S1: solar energy is a renewable resource (OpenBookQA fact 1058)", sources) == \
        "solar energy is a renewable resource"
    assert strip_echo("[P2] - Levodopa treats Parkinson's disease (hetionet).", sources) == \
        "Levodopa treats Parkinson's disease."
    assert strip_echo("S9: not shown this turn", sources) == "S9: not shown this turn"
    assert strip_echo("HbA1c (glycated haemoglobin) fell by 1.2%", sources) == "HbA1c (glycated haemoglobin) fell by 1.2%"
    assert strip_echo("S1 - ", sources) == "S1 - "  # nothing would be left: kept as written


def test_strip_echo_removes_parentheses_of_ids_and_several_sources():
    from assistant.answer.answering import strip_echo

    # Both seen on the chat bench, each withdrawn by the support check for names no evidence says.
    sources = {"S1": "OpenBookQA fact 660", "S3": "WorldTree ACTION 9f6b-7d55-4edf-3f0b", "S4": "OpenBookQA fact 1313"}
    assert strip_echo("Wind is a renewable resource (S1)", sources) == "Wind is a renewable resource"
    assert strip_echo("Wind is a source of energy ([S4]).", sources) == "Wind is a source of energy."
    assert strip_echo("Plants make food (OpenBookQA fact 660, WorldTree ACTION 9f6b-7d55-4edf-3f0b)", sources) == \
        "Plants make food"
    assert strip_echo("Plants make food (S1 and S3)", sources) == "Plants make food"
    # Parentheses that say something of their own stay: an id not shown, an id beside a word, a source beside text.
    assert strip_echo("Wind (S9) is renewable", sources) == "Wind (S9) is renewable"
    assert strip_echo("Wind (see S1) is renewable", sources) == "Wind (see S1) is renewable"
    assert strip_echo("Wind (OpenBookQA fact 660, 2004)", sources) == "Wind (OpenBookQA fact 660, 2004)"
    assert strip_echo("Wind ()", sources) == "Wind ()"


def test_the_subject_check_fires_only_when_no_subject_word_is_in_the_evidence():
    from assistant.answer.support import mentions, unnamed_subjects

    facts = ["something is at location of risk", "glass is used for person with poor sight"]
    assert unnamed_subjects(["glaucoma"], facts) == ["glaucoma"]
    assert unnamed_subjects(["glaucoma", "risk"], facts) == []
    assert mentions("lung cancer", ["Smoking causes direct damage to the lungs."])  # lenient: one word suffices
    assert mentions("Parkinson's disease", ["Amantadine palliates Parkinson disease"])
    # a singular in -us/-is is not a plural: "fetus" is named by "fetuses", "virus" by "viruses"
    assert mentions("fetus", ["Outcomes for fetuses with anomalies."]) and mentions("viruses", ["A virus spread."])
    assert mentions("lungs", ["The lung was scanned."]) and not mentions("fetus", ["The fetal heart rate."])
    assert unnamed_subjects([], facts) == [] and unnamed_subjects(["it"], facts) == []


def test_statements_about_none_of_the_subjects_are_picked_out_only_beside_one_that_is():
    from assistant.answer.support import off_subject

    on = ("Timolol lowers eye pressure in glaucoma.", ["Timolol is used to treat glaucoma."])
    off = ("Cataract surgery is common.", ["Cataract surgery is a common operation in older adults."])
    own_words = ("Glaucoma damages the optic nerve.", ["The optic nerve carries signals to the brain."])
    shown = [on[1][0], off[1][0], own_words[1][0]]
    assert off_subject([on, off, own_words], ["glaucoma"], shown) == [1]
    assert off_subject([off, on], ["glaucoma", "timolol"], shown) == [0]
    assert off_subject([off], ["glaucoma"], shown) == []  # all off: the whole answer is, which is said apart
    assert off_subject([on, off], [], shown) == [] and off_subject([on, off], ["it"], shown) == []


def test_cited_evidence_linked_to_the_subject_by_a_shown_item_is_about_it():
    from assistant.answer.support import unnamed_subjects

    cited = ["A renewable resource can be replaced."]
    shown = ["solar energy is a renewable resource", "wind is a renewable resource"] + cited
    assert unnamed_subjects(["energy"], cited) == ["energy"]
    assert unnamed_subjects(["energy"], cited, shown=shown) == []  # "renewable resource" links them
    # one shared word is no link, a pair split by a stop word is none, nor one formed across two items
    assert unnamed_subjects(["energy"], cited, shown=["solar energy is renewable"] + cited) == ["energy"]
    assert unnamed_subjects(["energy"], cited, shown=["energy from a renewable source of resource"]) == ["energy"]
    assert unnamed_subjects(["energy"], ["Wind is renewable", "Resource use can be measured."],
                            shown=["energy is a renewable resource"]) == ["energy"]
    # a shown item that names no subject links nothing
    assert unnamed_subjects(["glaucoma"], ["something is at location of risk"],
                            shown=["people at risk of falls", "something is at location of risk"]) == ["glaucoma"]


def test_a_repeated_statement_is_said_once_citing_what_its_copies_cited():
    from assistant.answer.answering import GroundedAnswer, merge_repeats

    answer = GroundedAnswer.model_validate({"statements": [
        {"text": "A renewable resource can be replaced.", "cite": ["S4"]},
        {"text": "Solar energy is renewable.", "cite": ["S1"]},
        {"text": "a renewable  resource can be replaced", "cite": ["S5", "S4"]},
        {"text": "A renewable resource can be replaced!", "cite": ["S4"]}]})
    merged = merge_repeats(answer)
    assert [(s.text, s.cite) for s in merged.statements] == [
        ("A renewable resource can be replaced.", ["S4", "S5"]), ("Solar energy is renewable.", ["S1"])]
    distinct = GroundedAnswer.model_validate({"statements": [{"text": "A is B.", "cite": ["S1"]},
                                                             {"text": "A is C.", "cite": ["S1"]}]})
    assert merge_repeats(distinct) is distinct
    assert [s.cite for s in answer.statements][0] == ["S4"]  # the input is not changed


def test_chips_name_each_id_once():
    from assistant.answer.answering import chips

    assert chips(["P2", "P5", "P5", "P5", "S1", "bogus"]) == "[P2][P5][S1]"


def test_code_re_cites_only_to_an_item_that_holds_most_of_the_statement():
    """Found as a new user: "Regular exercise increases a body's strength" (no names, no numbers) was cited by code
    to sentences on outpatient visits and arterial compliance, which share three of its five words."""
    from assistant.answer.answering import StatementSupport, carriers_of
    from assistant.answer.support import Support

    texts = {"S1": "Regular exercise increased central arterial compliance in older men.",
             "S2": "Specifically, people with regular exercise habits have an increased number of outpatient visits.",
             "S3": "Regular exercise increases the strength of the body."}
    flagged = StatementSupport("Regular exercise increases a body's strength.", ["S9"], Support(ok=False))
    assert carriers_of(flagged, texts) == ["S3"]
    assert carriers_of(flagged, {k: v for k, v in texts.items() if k != "S3"}) == []


@pytest.mark.parametrize("question, relation, expected", [
    ("Does pramipexole cause nausea?", "causes", "nausea"),
    ("Does smoking increase the risk of lung cancer?", "increase the risk of", "lung cancer"),
    ("Is aspirin used to prevent heart attacks?", "prevents", "heart attacks"),
    ("Does pramipexole cause nausea?", "", ""),  # no relation named
    ("What treats Parkinson's disease?", "treats", "Parkinson's disease"),
    ("Is nausea a side effect?", "causes", ""),  # the relation's words are not in the question
    ("Does it cause that?", "causes", ""),  # nothing with content after it
])
def test_the_relations_object_is_the_words_after_it(question, relation, expected):
    from assistant.answer.support import relation_object

    assert relation_object(question, relation) == expected


def test_citations_that_do_not_say_what_their_statement_says_are_removed():
    from assistant.answer.answering import GroundedAnswer, without_idle_citations

    texts = {"P12": "Metformin treats type 2 diabetes mellitus.", "P11": "Metformin treats metabolic syndrome X.",
             "P17": "Metformin treats polycystic ovary syndrome.", "P3": "Insulin Human treats type 1 diabetes mellitus.",
             "S1": "Patients received 500 mg of levodopa twice a day.", "S2": "Levodopa is a dopamine precursor."}
    ends = {"P12": ("Metformin", "type 2 diabetes mellitus"), "P11": ("Metformin", "metabolic syndrome X"),
            "P17": ("Metformin", "polycystic ovary syndrome"), "P3": ("Insulin Human", "type 1 diabetes mellitus")}
    answer = GroundedAnswer.model_validate({"statements": [
        {"text": "Metformin treats type 2 diabetes mellitus.", "cite": ["P12", "P11", "P17"]},
        # no number: P11 passes the check alone, but it names another disease
        {"text": "Metformin treats diabetes.", "cite": ["P11", "P12"]},
        # each citation carries half: both stay
        {"text": "Metformin and Insulin Human treat diabetes mellitus.", "cite": ["P12", "P3"]},
        # a sentence stays cited (a yes/no verdict reads the cited documents), though S2 lacks the dose
        {"text": "Patients took 500 mg of levodopa.", "cite": ["S2", "S1"]},
        {"text": "Metformin treats metabolic syndrome X.", "cite": ["P11"]}]})  # a last citation always stays
    trimmed, idle = without_idle_citations(answer, texts, ends)
    assert [s.cite for s in trimmed.statements] == [["P12"], ["P12"], ["P12", "P3"], ["S2", "S1"], ["P11"]]
    assert idle == ["P11", "P17"]
    assert answer.statements[0].cite == ["P12", "P11", "P17"]  # the input is not changed
    exact = GroundedAnswer.model_validate({"statements": [{"text": "Metformin treats type 2 diabetes mellitus.",
                                                            "cite": ["P12"]}]})
    assert without_idle_citations(exact, texts, ends) == (exact, [])


def test_only_names_a_pointing_back_sentence_leaves_out_are_read_in_context():
    from types import SimpleNamespace

    from assistant.answer.answering import GroundedAnswer, Statement, check_support, with_context

    texts = {"S1": "The pathogen is spread by spittlebugs.", "S2": "Spittlebugs feed on xylem sap in 2023."}
    context = {"S1": "Xylella fastidiosa is a bacterium.", "S2": "Xylella fastidiosa kills olive trees."}

    def run(statement: str, cite: str):
        answer = GroundedAnswer(statements=[Statement(text=statement, cite=[cite])])
        support = check_support(answer, texts)
        return with_context(answer, support, dict(texts), lambda i: [SimpleNamespace(text="It is spread."),
                                                                     SimpleNamespace(text=context[i])],
                            lambda hit: "S9")

    answer, support, added, notes = run("Xylella fastidiosa is spread by spittlebugs.", "S1")
    # the nearest sentence that names it, two up (the one between points back too)
    assert answer.statements[0].cite == ["S1", "S9"] and not support.flagged and added == {"S9": context["S1"]}
    assert notes[0].cited == "S1" and notes[0].context == "S9"
    # S2 does not point back: its missing name is not looked for before it
    assert run("Xylella fastidiosa feeds spittlebugs on xylem sap in 2023.", "S2")[3] == []
    # a pronoun among a sentence's first words points back too; a name opening it does not
    from assistant.answer.support import POINTS_BACK as _POINTS_BACK

    assert _POINTS_BACK.match("In Apulia, Italy, it killed an estimated 21 million olive trees.")
    assert not _POINTS_BACK.match("Spittlebugs feed on xylem sap, which carries it.")
    # a missing number is never filled in from context
    assert run("Xylella fastidiosa is spread by 40 spittlebugs.", "S1")[3] == []
    # nor a negation or other words: only names
    texts["S1"] = "The pathogen is spread by spittlebugs."
    context["S1"] = "Xylella fastidiosa is not spread by wind."
    assert run("The pathogen is not spread by spittlebugs.", "S1")[3] == []


def test_what_a_statement_says_of_its_subject_must_come_from_an_item_that_names_it():
    """Seen as a new user: the side effects of metformin answered, verified, with the symptoms of Addison's disease
    (S5) and two KG paths that name metformin (P1, P6). Each word was in some cited item; none said it."""
    from assistant.answer.support import check_statement, joined_subject

    statement = "The side effects of metformin include nausea, vomiting, diarrhea and hypoglycemia."
    symptoms = "- nausea - vomiting - diarrhea - hypoglycemia, or low blood sugar - headache"
    paths = ["Metformin —binds→ ND1 ←binds— Methoxyflurane", "Metformin —downregulates→ TXNDC9"]
    assert check_statement(statement, [symptoms, *paths]).ok  # without the subject, the words are all there
    support = check_statement(statement, [symptoms, *paths], ["metformin"])
    assert not support.ok and "does not mention metformin" in support.reason
    # An item that names the subject and says it passes, with the others cited beside it.
    said = "Common side effects of metformin include nausea, vomiting, diarrhea and hypoglycemia."
    assert check_statement(statement, [said, symptoms], ["metformin"]).ok
    # A cited sentence that points back may be about the subject, with the sentence before it that names it.
    assert check_statement("Xylella fastidiosa is spread by spittlebugs.",
                           ["The pathogen is spread by spittlebugs.", "Xylella fastidiosa killed olive trees."],
                           ["Xylella fastidiosa"]).ok
    # One cited item, or a statement that does not name the subject: nothing to join.
    assert joined_subject(statement, [symptoms], ["metformin"]) == ""
    assert joined_subject("Nausea and vomiting are common.", [symptoms, *paths], ["metformin"]) == ""
