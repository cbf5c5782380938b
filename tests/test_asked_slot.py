"""The asked slot (#78): what a question asks for, typed in code, and whether a statement fills it with a value its
cited evidence holds; typed KG facts; template filler."""

from __future__ import annotations

import pytest

from assistant.answer.slots import (AskedSlot, asked_slot, defines, is_filler, kg_types, mistyped, type_claim,
                                    unfilled_reply)
from tools.contracts import EvidenceLedger
from tools.intent import answer_type_of


def slot_of(question: str) -> AskedSlot | None:
    return asked_slot(question, answer_type_of(question))


@pytest.mark.parametrize("question, kind, what, units", [
    ("What is the melting point of gold?", "quantity", "melting point", ("temperature",)),
    ("What is the boiling point of water?", "quantity", "boiling point", ("temperature",)),
    ("What is the half-life of carbon-14?", "quantity", "half-life", ("time",)),
    ("How tall is Mount Everest?", "quantity", "height", ("length",)),
    ("How fast does sound travel in water?", "quantity", "speed", ("speed",)),
    ("How heavy is an elephant?", "quantity", "weight", ("mass",)),
    ("How many legs does a spider have?", "quantity", "number", ()),
    ("What dose of warfarin should I take?", "quantity", "dose", ()),
    ("In what year did the Berlin Wall fall?", "date", "year", ()),
    ("When was aspirin invented?", "date", "date", ()),
    ("When do female insects lay eggs?", "time", "time", ()),
    ("Where is it?", "place", "place", ()),
    ("Where are most chloroplasts found in a plant?", "place", "place", ()),
    ("What causes malaria?", "cause", "cause", ()),
    ("What drugs treat glaucoma?", "kind", "drug", ()),
    ("Which genes are associated with asthma?", "kind", "gene", ()),
])
def test_the_question_form_names_the_slot(question, kind, what, units):
    assert slot_of(question) == AskedSlot(kind, what, units)


@pytest.mark.parametrize("question", [
    "What is bronchitis?", "How is soil formed?", "What do plants use chlorophyll for?", "Is wood an insulator?",
    "Who wrote Pride and Prejudice?", "What is the function of the mitochondria?", "Why is the sky blue?",
    "During which stage of its life cycle does a female insect lay eggs?",
])
def test_questions_of_other_forms_have_no_slot(question):
    assert slot_of(question) is None


def ledger_with(*items):
    """A ledger of sentences ("text") and KG facts ((head, template, tail) or with kinds)."""
    ledger = EvidenceLedger()
    for item in items:
        if isinstance(item, str):
            ledger.add_sentence(item, source="doc", doc_id="doc")
        else:
            (head, template, tail), kinds = (item[0], item[1]) if isinstance(item[0], tuple) else (item, None)
            ledger.add_path(f"{head} {template} {tail}", triples=[(head, template, tail)], source="kg",
                            sentence=f"{head} {template} {tail}.", fact=True, **({"kinds": kinds} if kinds else {}))
    return ledger


def fills(question: str, statement: str, ledger: EvidenceLedger, cite: list[str]) -> bool:
    from assistant.answer.pool import verbalise
    from assistant.answer.slots import turn_kinds

    texts = {e.id: verbalise(e) for e in ledger.citable()}
    return slot_of(question).fills(statement, [ledger.get(c) for c in cite], texts, turn_kinds(ledger.citable()))


def test_a_quantity_needs_a_number_with_a_unit_of_its_kind_that_the_evidence_holds():
    ledger = ledger_with("Gold melts at 1,064 °C.", "Gold jewellery weighs about 1,064 grams.",
                         "Melting point is the temperature at which a solid changes into a liquid.")
    q = "What is the melting point of gold?"
    assert fills(q, "Gold melts at 1064 degrees Celsius", ledger, ["S1"])  # same number, same kind of unit
    assert not fills(q, "Gold melts at 1,064 grams", ledger, ["S2"])  # a mass is no temperature
    assert not fills(q, "Gold melts at 1,100 °C", ledger, ["S1"])  # a number the evidence does not hold
    assert not fills(q, "Melting point is the temperature at which a solid changes into a liquid", ledger, ["S3"])
    # A count takes any number, in digits or words.
    ledger = ledger_with("Spiders have eight legs.")
    assert fills("How many legs does a spider have?", "A spider has 8 legs", ledger, ["S1"])
    assert not fills("How many legs does a spider have?", "A spider is an arachnid", ledger, ["S1"])


def test_a_date_and_a_time():
    ledger = ledger_with("The Berlin Wall fell on 9 November 1989.",
                         "A female insect lays eggs during the adult stage.")
    assert fills("In what year did the Berlin Wall fall?", "It fell in 1989", ledger, ["S1"])
    assert not fills("In what year did the Berlin Wall fall?", "It fell in 1991", ledger, ["S1"])
    assert fills("When do female insects lay eggs?", "During the adult stage", ledger, ["S2"])
    assert not fills("When do female insects lay eggs?", "Female insects lay eggs", ledger, ["S2"])


def test_a_place_is_a_place_phrase_or_a_location_fact_never_a_type():
    ledger = ledger_with("Algae is found in bodies of water.", ("algae", "is at location of", "pond"),
                         ("algae", "is a kind of", "plant"))
    q = "Where is algae found?"
    assert fills(q, "Algae is found in bodies of water", ledger, ["S1"])
    assert fills(q, "Algae is at location of pond", ledger, ["P1"])  # the relation touches the slot
    assert not fills(q, "Algae is a kind of plant", ledger, ["P2"])  # true, cited, and no place
    assert not fills(q, "Algae lives in the sea", ledger, ["S1"])  # a place the evidence does not hold
    assert not fills(q, "Algae is at location of lake", ledger, ["P1"])  # the relation, but another place
    ledger = ledger_with("Rain falls from clouds.")
    assert fills("Where does rain come from?", "Rain comes from clouds", ledger, ["S1"])


def test_a_kind_of_node_is_typed_by_the_facts_kinds():
    ledger = ledger_with((("L-DOPA", "palliates", "Parkinson's disease"), ["Compound", "Disease"]),
                         (("Parkinson's disease", "presents", "Tremor"), ["Disease", "Symptom"]),
                         "Levodopa is the most used treatment.")
    q = "What drugs treat Parkinson's disease?"
    assert fills(q, "L-DOPA palliates Parkinson's disease", ledger, ["P1"])
    assert not fills(q, "Parkinson's disease presents tremor", ledger, ["P2"])  # a symptom is no drug
    assert fills(q, "Levodopa is the most used treatment", ledger, ["S1"])  # a sentence's names are not typed


def test_could_fill_needs_a_value_about_the_subject():
    ledger = ledger_with("Iron melts at 1,538 °C.", "Gold is a soft metal.", ("gold", "is a kind of", "metal"))
    slot = slot_of("What is the melting point of gold?")
    items = ledger.citable()
    assert not any(slot.could_fill(ev, ev.text, ["gold"]) for ev in items)  # iron's melting point is not gold's
    assert slot.could_fill(items[0], items[0].text, ["iron"])


def test_a_kg_type_claim_needs_a_fact_that_says_it():
    ledger = ledger_with(("mount everest", "is a kind of", "mountain"))
    path = ledger.add_path("mount everest is a kind of place. pacific ocean is a kind of place.",
                           triples=[("mount everest", "is a kind of", "place"), ("pacific ocean", "is a kind of",
                                                                                "place")],
                           source="conceptnet", sentence="mount everest is a kind of place. pacific ocean is a kind "
                                                         "of place.")
    shown = ledger.citable()
    assert type_claim("Mount Everest is a kind of ocean.") == ("Mount Everest", "ocean")
    assert type_claim("Mount Everest is a mountain") == ("Mount Everest", "mountain")
    assert type_claim("Gold melts at 1,064 °C") is None
    assert mistyped("Mount Everest is a kind of mountain", [ledger.get("P1")], shown) == ""
    assert mistyped("Mount Everest is a mountain", [ledger.get("P1")], shown) == ""
    why = mistyped("Mount Everest is a kind of ocean", [path], shown)
    assert why == ("no fact it cites gives Mount Everest the type it states; the knowledge graph types Mount Everest "
                   "as mountain, place") and "ocean" not in why
    assert kg_types("Mount Everest", shown) == ["mountain", "place"]
    # A sentence's definition is the support check's, not this one's.
    ledger.add_sentence("Mount Everest is an ocean of ice.", source="doc")
    assert mistyped("Mount Everest is an ocean of ice", [ledger.get("S1")], shown) == ""


def test_what_the_evidence_does_say_is_named_and_cited():
    ledger = ledger_with(("gold", "is a kind of", "precious metal"), "Gold is used in jewellery.",
                         "Melting point is the temperature at which a solid melts.")
    items = {e.id: e for e in ledger.citable()}
    texts = {i: e.meta.get("sentence") or e.text for i, e in items.items()}
    slot = slot_of("What is the melting point of gold?")
    assert defines(items["P1"], texts["P1"], "gold") and not defines(items["S1"], texts["S1"], "gold")
    assert unfilled_reply(slot, items, texts, ["gold"]) == (
        "The evidence I found does not answer this: it defines gold [P1] and mentions it in [S1], but gives no "
        "melting point.")
    assert unfilled_reply(slot, items, texts, ["platinum"]) == (
        "The evidence I found does not answer this: none of it gives a melting point. The closest evidence: "
        "[P1][S1][S2].")
    assert unfilled_reply(slot_of("Where is it?"), items, texts, ["gold"], stating=["S1"]) == (
        "I could not answer this from the evidence: no statement I could check says where. The evidence that may: "
        "[S1].")


def test_template_filler_is_no_evidence():
    ledger = EvidenceLedger()
    filler = ledger.add_path("something is at location of gold", triples=[("something", "is at location of", "gold"),
                                                                          ("something", "is at location of",
                                                                           "mountain")],
                             source="conceptnet", sentence="something is at location of gold.")
    fact = ledger.add_path("gold is a kind of metal", triples=[("gold", "is a kind of", "metal")], source="conceptnet")
    assert is_filler(filler) and not is_filler(fact)


def test_a_prevalence_the_evidence_says_is_unknown_or_rare_answers_how_many_people():
    # MedQuAD: 227 of the 1,117 answers to "How many people are affected by …?" state no number.
    ledger = ledger_with("The prevalence of myofibrillar myopathy is unknown.", "CADASIL is a rare condition.",
                         "Spiders are common in houses.")
    assert slot_of("How many people are affected by CADASIL?").prevalence
    assert fills("How many people are affected by myofibrillar myopathy?", "Its prevalence is unknown", ledger, ["S1"])
    assert fills("How many people are affected by CADASIL?", "CADASIL is rare", ledger, ["S2"])
    assert not fills("How many legs does a spider have?", "Spiders are common", ledger, ["S3"])  # no prevalence asked


def test_what_an_abstention_says_is_mentioned_is_named_in_full():
    # Seen on the default KB: "What is the half-life of carbon-14?" would have said the evidence "defines carbon-14"
    # citing "In the respiration process carbon dioxide is a waste product" (5-letter stems: "carbo").
    ledger = ledger_with("In the respiration process carbon dioxide is a waste product.",
                         "Carbon dioxide can be found in the air.", "Mountains are found on every continent.")
    items = {e.id: e for e in ledger.citable()}
    texts = {i: e.text for i, e in items.items()}
    assert not defines(items["S1"], texts["S1"], "carbon-14")
    assert unfilled_reply(slot_of("What is the half-life of carbon-14?"), items, texts, ["carbon-14"]) == (
        "The evidence I found does not answer this: none of it gives a half-life. The closest evidence: [S1][S2][S3].")
    assert unfilled_reply(slot_of("How tall is Mount Everest?"), items, texts, ["Mount Everest"]).endswith(
        "none of it gives a height. The closest evidence: [S1][S2][S3].")
