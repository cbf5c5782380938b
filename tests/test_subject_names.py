"""The turn's subjects: its entities and the KG names they were linked to (assistant.answer.loop.subject_names)."""

from types import SimpleNamespace

from assistant.answer.loop import subject_names
from assistant.answer.support import unnamed_subjects
from assistant.answer.turn import Step
from tools.kg_paths import Linked


def _kg_step(*links: tuple[str, str]) -> Step:
    linked = [Linked(mention=m, name=n, rule="embedding", score=0.8, role="entity") for m, n in links]
    return Step(name="kg_paths", kind="tool", input={}, output=SimpleNamespace(linked=linked))


def test_a_linked_synonym_is_a_subject():
    names = subject_names(["heart attack"], [_kg_step(("heart attack", "myocardial infarction"))])
    assert names == ["heart attack", "myocardial infarction"]


def test_a_linked_concept_that_only_adds_words_is_not_another_name():
    # Seen as a new user: "mitochondria" linked to the GO process "mitochondrion organization", whose
    # "organization" made "Basic life functions occur in the cells of organisms" count as naming the subject.
    steps = [_kg_step(("mitochondria", "mitochondrion organization"))]
    names = subject_names(["mitochondria"], steps)
    assert names == ["mitochondria"]
    assert unnamed_subjects(names, ["Basic life functions occur in the cells of organisms."]) == ["mitochondria"]
    # the check this guards: with the extended name kept, the off-topic sentence passes
    assert unnamed_subjects(["mitochondria", "mitochondrion organization"],
                            ["Basic life functions occur in the cells of organisms."]) == []


def test_a_linked_concept_that_drops_words_is_not_another_name():
    assert subject_names(["lung cancer"], [_kg_step(("lung cancer", "cancer"))]) == ["lung cancer"]


def test_a_concept_linked_from_other_words_does_not_count():
    assert subject_names(["aspirin"], [_kg_step(("headache", "Headache disorders"))]) == ["aspirin"]
