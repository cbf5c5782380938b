"""Claim programs vote only when they check what the claim states (tools/_claim_grounding.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_grounding import claim_numbers, read_superlative, vote_blocker
from tools._table_ops import execute
from tools._table_ops_model import Program, ProgramError

TABLE = Table(name="deaths", title="Deaths by cause", columns=["Cause", "Deaths", "Share"], rows=[
    ["Heart disease", "659,041", "23%"],
    ["Cancer", "599,601", "21%"],
    ["Accidents", "173,040", "6%"],
    ["Stroke", "150,005", "5%"],
])


def run(claim: str, **program) -> str:
    typed = TypedTable.build(TABLE)
    prog = Program.model_validate({"answer_column": "cause", **program})
    return vote_blocker(prog, execute(prog, typed), claim, TABLE.n_rows)


HEART = [{"column": "cause", "op": "=", "value": "Heart disease"}]


@pytest.mark.parametrize("claim, numbers", [
    ("Heart disease killed 659,041 people, 23% of deaths.", {659041.0, 23.0}),
    ("Three causes account for 1.5 million deaths.", {3.0, 1.5}),
    ("No year is given.", {0.0}),
    ("Deaths fell by −2 points.", {-2.0}),
])
def test_claim_numbers(claim, numbers):
    assert claim_numbers(claim) == numbers


def test_a_check_against_a_stated_number_votes_either_way():
    assert run("Heart disease caused 659,041 deaths.", filters=HEART, fn="value", column="deaths",
               check={"op": "=", "against": "value", "value": "659041"}) == ""
    # A refutation with the claim's own number is a reading of the claim: it votes.
    assert run("Heart disease caused 700,000 deaths.", filters=HEART, fn="value", column="deaths",
               check={"op": "=", "against": "value", "value": "700,000"}) == ""
    # Percent and scale words: "23%" meets 23, "1.5 million" meets 1500000.
    assert run("Heart disease was 23 percent of deaths.", filters=HEART, fn="value", column="share",
               check={"op": "=", "against": "value", "value": "23%"}) == ""
    assert run("All causes together killed 1.5 million.", fn="sum", column="deaths",
               check={"op": "=", "against": "value", "value": "1500000"}) == ""


def test_a_refutation_by_a_number_the_claim_does_not_state_does_not_vote():
    why = run("Heart disease is the leading cause of death.", filters=HEART, fn="value", column="deaths",
              check={"op": ">", "against": "value", "value": "700000"})
    assert "does not state" in why and "700000" in why
    # A check that holds is left to vote: only a refutation is held to the claim's own values.
    assert run("Heart disease is the leading cause of death.", filters=HEART, fn="value", column="deaths",
               check={"op": ">", "against": "value", "value": "600000"}) == ""


def test_text_checks_need_the_claims_words():
    assert run("Cancer kills the most.", fn="argmax", column="deaths",
               check={"op": "=", "against": "value", "value": "Cancer"}) == ""
    assert "does not state" in run("The top killer is cancer.", fn="argmax", column="deaths",
                                   check={"op": "=", "against": "value", "value": "Stroke"})


def test_a_count_against_more_rows_than_the_table_has_does_not_vote():
    why = run("Accidents killed more than 50 people.", filters=[{"column": "cause", "op": "=", "value": "Accidents"}],
              fn="count", column="deaths", check={"op": ">", "against": "value", "value": "50"})
    assert "cannot be a number of rows" in why
    assert run("Two causes killed more than 500,000 people.",
               filters=[{"column": "deaths", "op": ">", "value": "500000"}], fn="count", column="deaths",
               check={"op": "=", "against": "value", "value": "2"}) == ""


def test_a_count_over_no_rows_does_not_vote_unless_the_claim_says_none():
    no_rows = [{"column": "deaths", "op": ">", "value": "900000"}]
    why = run("Two causes killed more than 900,000 people.", filters=no_rows, fn="count", column="deaths",
              check={"op": "=", "against": "value", "value": "2"})
    assert "select no row" in why
    assert run("No cause killed more than 900,000 people.", filters=no_rows, fn="count", column="deaths",
               check={"op": "=", "against": "value", "value": "0"}) == ""


def test_row_checks_and_every_are_left_alone():
    assert run("Cancer killed fewer than heart disease.", filters=[{"column": "cause", "op": "=", "value": "Cancer"}],
               fn="value", column="deaths", check={"op": "<", "against": "row", "value": "Heart disease"}) == ""


# -- a superlative's extreme over the one row the claim names (read_superlative) --------------------------
RESERVOIRS = Table(name="reservoirs", title="Reservoirs",
                   columns=["Reservoir", "Country", "Surface area (km²)", "Year completed"], rows=[
                       ["Lake Kariba", "Zambia/Zimbabwe", "5,580", "1959"],
                       ["Lake Volta", "Ghana", "8,502", "1965"],
                       ["Lake Nasser", "Egypt/Sudan", "5,250", "1970"],
                       ["Three Gorges", "China", "1,084", "2006"],
                   ])
PINNED = {"filters": [{"column": "reservoir", "op": "=", "value": "Lake Kariba"}], "fn": "max",
          "column": "surface_area_km2", "answer_column": "reservoir",
          "check": {"op": "=", "against": "value", "value": "5,580"}}


def superlative(claim: str, table: Table = RESERVOIRS, **program) -> tuple[Program, bool | None]:
    typed = TypedTable.build(table)
    prog = read_superlative(Program.model_validate(program), typed, claim)
    return prog, execute(prog, typed).truth


def test_the_largest_over_the_named_row_alone_is_read_as_the_row_with_the_largest():
    # Over Lake Kariba's row alone its maximum is its own area: the claim would always hold. Read as asked,
    # the row with the largest area is Lake Volta, so the claim is false; and true for Lake Volta.
    prog, truth = superlative("Lake Kariba has the largest surface area of all the reservoirs.", **PINNED)
    assert (prog.fn, prog.filters, prog.answer_column) == ("argmax", [], "reservoir")
    assert (prog.check.op, prog.check.value) == ("=", "Lake Kariba") and truth is False
    volta = {**PINNED, "filters": [{"column": "reservoir", "op": "=", "value": "Lake Volta"}]}
    assert superlative("Is it true that Lake Volta has the biggest surface area?", **volta)[1] is True
    # min and the other filters: the smallest among those completed after 1960 is Three Gorges.
    after_1960 = {"column": "year_completed", "op": ">", "value": "1960"}
    gorges = {**PINNED, "fn": "min", "filters": [after_1960, {"column": "reservoir", "op": "=",
                                                              "value": "Three Gorges"}]}
    prog, truth = superlative("Three Gorges has the smallest area of the reservoirs completed after 1960.", **gorges)
    assert prog.fn == "argmin" and prog.filters == [Program.model_validate(gorges).filters[0]] and truth is True


def test_the_named_row_selected_by_another_of_its_cells_is_read_the_same_way():
    # Seen with the real model: the claimed row picked out by its drug (here: its country), not by its name.
    by_country = {**PINNED, "filters": [{"column": "country", "op": "=", "value": "Zambia/Zimbabwe"}]}
    prog, truth = superlative("Lake Kariba has the largest surface area.", **by_country)
    assert (prog.fn, prog.filters, prog.answer_column, prog.check.value) == ("argmax", [], "reservoir", "Lake Kariba")
    assert truth is False
    ghana = {**PINNED, "filters": [{"column": "country", "op": "=", "value": "Ghana"}]}
    assert superlative("Lake Volta has the largest surface area.", **ghana)[1] is True
    # a claim that names neither the selected row nor the filter's value keeps its program
    assert superlative("The largest reservoir is Lake Nasser.", **ghana)[0] == Program.model_validate(ghana)


@pytest.mark.parametrize("claim, program", [
    # not a superlative: the maximum over Kariba's row is just its area, which the claim states
    ("Lake Kariba's surface area is 5,580 km².", PINNED),
    # a superlative over several rows already: nothing to repair
    ("Lake Volta has the largest surface area.", {**PINNED, "filters": [], "fn": "argmax",
                                                  "check": {"op": "=", "against": "value", "value": "Lake Volta"}}),
    # the filter's value is not the claim's subject
    ("The largest reservoir is in Ghana.", {**PINNED, "filters": [{"column": "reservoir", "op": "=",
                                                                   "value": "Lake Nasser"}]}),
])
def test_other_programs_are_left_as_written(claim, program):
    assert superlative(claim, **program)[0] == Program.model_validate(program)


def test_a_name_with_several_rows_is_a_group_whose_maximum_stands():
    # Norway's best year is a maximum over Norway's rows: the filter selects more than one row.
    medals = Table(name="m", title="Medals", columns=["Country", "Year", "Medals"], rows=[
        ["Norway", "2014", "26"], ["Norway", "2018", "39"], ["Germany", "2018", "31"]])
    program = {"filters": [{"column": "country", "op": "=", "value": "Norway"}], "fn": "max", "column": "medals",
               "answer_column": "country", "check": {"op": "=", "against": "value", "value": "39"}}
    prog, truth = superlative("Norway's highest medal count was 39.", medals, **program)
    assert prog == Program.model_validate(program) and truth is True


# -- "than any other": a superlative in comparative form (read_superlative, _read_than_the_others) ---------------
TRIAL_SITES = Table(name="sites", title="sites", columns=["Site", "Country", "Patients enrolled", "Dropouts"], rows=[
    ["Leeds", "UK", "1,204", "37"], ["Porto", "Portugal", "388", "52"], ["Utrecht", "Netherlands", "745", "18"],
    ["Bergen", "Norway", "207", "9"]])


@pytest.mark.parametrize("claim, expected", [
    ("Porto had more dropouts than any other site.", "max"),
    ("Bergen enrolled fewer patients than all the other sites.", "min"),
    ("Leeds has a larger enrolment than each of the others.", "max"),
    ("Porto had more dropouts than Leeds.", None),
    ("Porto had more dropouts than any site in the UK.", None),
])
def test_than_any_other_reads_the_direction(claim, expected):
    from tools._claim_grounding import than_any_other

    assert than_any_other(claim) == expected


def test_the_other_rows_maximum_checked_against_the_named_row_is_read_as_the_claim_means():
    # Found as a new user: "rows where Site != Porto -> max of Dropouts; check: result > Porto's" refuted a true
    # claim (the other sites' maximum, 37, is not above Porto's 52: that is the claim holding).
    written = {"filters": [{"column": "site", "op": "!=", "value": "Porto"}], "fn": "max", "column": "dropouts",
               "answer_column": "site", "check": {"op": ">", "against": "row", "value": "Porto"}}
    assert execute(Program.model_validate(written), TypedTable.build(TRIAL_SITES)).truth is False
    prog, truth = superlative("Porto had more dropouts than any other site.", TRIAL_SITES, **written)
    assert (prog.fn, prog.filters, prog.check.value) == ("argmax", [], "Porto") and truth is True
    leeds = {**written, "filters": [{"column": "site", "op": "!=", "value": "Leeds"}],
             "check": {"op": ">", "against": "row", "value": "Leeds"}}
    assert superlative("Leeds had more dropouts than any other site.", TRIAL_SITES, **leeds)[1] is False
    bergen = {**written, "fn": "min", "column": "patients_enrolled",
              "filters": [{"column": "site", "op": "!=", "value": "Bergen"}],
              "check": {"op": "<", "against": "row", "value": "Bergen"}}
    prog, truth = superlative("Bergen enrolled fewer patients than any other site.", TRIAL_SITES, **bergen)
    assert prog.fn == "argmin" and truth is True


def test_the_named_row_alone_in_a_than_any_other_claim_is_read_as_the_extreme():
    # "rows where Site = Porto -> max of Dropouts; check > Leeds's": true, but for a weaker claim than the one made
    written = {"filters": [{"column": "site", "op": "=", "value": "Utrecht"}], "fn": "max", "column": "dropouts",
               "answer_column": "site", "check": {"op": ">", "against": "row", "value": "Bergen"}}
    assert execute(Program.model_validate(written), TypedTable.build(TRIAL_SITES)).truth is True
    prog, truth = superlative("Utrecht had more dropouts than any other site.", TRIAL_SITES, **written)
    assert prog.fn == "argmax" and truth is False


def test_the_named_row_against_one_other_row_is_read_as_against_every_other():
    # "Utrecht's Patients enrolled < Leeds's" holds, but Bergen and Porto enrolled fewer than Utrecht
    written = {"filters": [{"column": "site", "op": "=", "value": "Utrecht"}], "fn": "value",
               "column": "patients_enrolled", "answer_column": "site",
               "check": {"op": "<", "against": "row", "value": "Leeds"}}
    assert execute(Program.model_validate(written), TypedTable.build(TRIAL_SITES)).truth is True
    prog, truth = superlative("Utrecht enrolled fewer patients than any other site.", TRIAL_SITES, **written)
    assert (prog.fn, prog.check.value, truth) == ("argmin", "Utrecht", False)
    bergen = {**written, "filters": [{"column": "site", "op": "=", "value": "Bergen"}]}
    assert superlative("Bergen enrolled fewer patients than any other site.", TRIAL_SITES, **bergen)[1] is True
    # without "than any other" the comparison with one row is the claim
    assert superlative("Utrecht enrolled fewer patients than Leeds.", TRIAL_SITES, **written)[0] == \
        Program.model_validate(written)


def test_a_than_the_others_program_for_another_claim_is_left_as_written():
    written = {"filters": [{"column": "site", "op": "!=", "value": "Porto"}], "fn": "max", "column": "dropouts",
               "answer_column": "site", "check": {"op": ">", "against": "value", "value": "40"}}
    assert superlative("Porto had more dropouts than any other site.", TRIAL_SITES, **written)[0] == \
        Program.model_validate(written)  # the check is not against Porto's row: another reading


# -- "than A and B combined" (read_combined) ------------------------------------------------------------------
def combined(claim: str, table: Table = TRIAL_SITES, **program) -> tuple[Program, bool | None]:
    from tools._claim_grounding import read_combined

    typed = TypedTable.build(table)
    prog = read_combined(Program.model_validate({"answer_column": "site", **program}), typed, claim)
    return prog, execute(prog, typed).truth


PORTO_PATIENTS = {"filters": [{"column": "site", "op": "=", "value": "Porto"}], "fn": "value",
                  "column": "patients_enrolled", "check": {"op": ">", "against": "row", "value": "Bergen"}}


def test_a_combined_comparison_adds_up_the_rows_the_claim_lists():
    # Found as a new user: Porto's 388 > Bergen's 207 holds, but Bergen and Utrecht together enrolled 952
    assert execute(Program.model_validate({"answer_column": "site", **PORTO_PATIENTS}),
                   TypedTable.build(TRIAL_SITES)).truth is True
    prog, truth = combined("Porto enrolled more patients than Bergen and Utrecht combined.", **PORTO_PATIENTS)
    assert (prog.check.against, prog.check.rows, truth) == ("rows", ["Bergen", "Utrecht"], False)
    leeds = {**PORTO_PATIENTS, "filters": [{"column": "site", "op": "=", "value": "Leeds"}],
             "check": {"op": ">", "against": "row", "value": "Utrecht and Bergen"}}  # no row has that name
    prog, truth = combined("Leeds enrolled more patients than Utrecht, and Bergen put together", **leeds)
    assert truth is True
    ex = execute(prog, TypedTable.build(TRIAL_SITES))
    assert ex.check_text == "> Patients enrolled of Utrecht (745) and Bergen (207) combined, 952"
    assert {(3, 1), (3, 3), (4, 1), (4, 3), (1, 3)} <= set(ex.cells)  # both added rows are cited
    bergen = {**PORTO_PATIENTS, "filters": [{"column": "site", "op": "=", "value": "Bergen"}],
              "check": {"op": "<", "against": "value", "value": "1133"}}
    assert combined("Bergen enrolled fewer patients than Porto and Utrecht together.", **bergen)[1] is True


@pytest.mark.parametrize("written", [
    {"fn": "sum", "check": {"op": ">", "against": "value", "value": "207"}},  # Bergen's value, stated by no one
    {"filters": [], "fn": "sum", "check": {"op": "<", "against": "row", "value": "Bergen"}},  # every row's sum
])
def test_any_program_over_the_claims_column_is_rewritten_as_the_claim_states(written):
    # both seen as a new user on another table; the column the model chose is kept
    prog, truth = combined("Porto enrolled more patients than Bergen and Utrecht combined.",
                           **{**PORTO_PATIENTS, **written})
    assert (prog.fn, [f.value for f in prog.filters], prog.check.op, truth) == ("value", ["Porto"], ">", False)
    text_column = {**PORTO_PATIENTS, "column": "country"}
    assert combined("Porto enrolled more patients than Bergen and Utrecht combined.", **text_column)[0] == \
        Program.model_validate({"answer_column": "site", **text_column})


@pytest.mark.parametrize("claim", [
    "Porto enrolled more patients than Bergen and Utrecht.",  # may mean "than each": left as written
    "Porto and Leeds enrolled more patients than Bergen and Utrecht combined.",  # two rows before the comparison
    "Porto enrolled more patients than Bergen and the weather combined.",  # not a list of rows
    "Porto enrolled more patients than Bergen combined.",  # one row
    "Porto enrolled no more patients than Bergen and Utrecht combined.",
    "Porto enrolled more patients than Porto and Bergen combined.",  # the subject among the added rows
])
def test_a_comparison_that_is_not_a_sum_of_other_rows_is_left_as_written(claim):
    assert combined(claim, **PORTO_PATIENTS)[0] == Program.model_validate({"answer_column": "site", **PORTO_PATIENTS})


def test_more_rows_than_a_check_holds_are_left_as_written():
    many = Table(name="m", title="m", columns=["Site", "Patients"], rows=[[f"S{i}", str(i)] for i in range(1, 9)])
    written = {"filters": [{"column": "site", "op": "=", "value": "S8"}], "fn": "value", "column": "patients",
               "answer_column": "site", "check": {"op": ">", "against": "row", "value": "S1"}}
    claim = "S8 has more patients than S1, S2, S3, S4, S5 and S6 combined."  # six rows: no crash, as written
    assert combined(claim, many, **written)[0] == Program.model_validate(written)


def test_a_row_name_with_and_in_it_is_one_row():
    table = Table(name="c", title="c", columns=["Country", "Medals"], rows=[
        ["Trinidad and Tobago", "30"], ["Jamaica", "20"], ["Tobago", "99"], ["Cuba", "5"]])
    written = {"filters": [{"column": "country", "op": "=", "value": "Jamaica"}], "fn": "value",
               "column": "medals", "answer_column": "country",
               "check": {"op": ">", "against": "row", "value": "Cuba"}}
    prog, truth = combined("Jamaica won more medals than Trinidad and Tobago and Cuba combined", table, **written)
    assert prog.check.rows == ["Trinidad and Tobago", "Cuba"] and truth is False  # 20 against 30 + 5


@pytest.mark.parametrize("written, blocked", [
    ({"fn": "argmax", "column": "dropouts", "check": {"op": "!=", "against": "value", "value": "20%"}}, True),
    ({"fn": "value", "column": "country", "check": {"op": "!=", "against": "value", "value": "20"}}, True),
    ({"fn": "value", "column": "country", "check": {"op": "!=", "against": "value", "value": "UK"}}, False),
    ({"fn": "value", "column": "dropouts", "check": {"op": "!=", "against": "value", "value": "20"}}, False),
    # seen as a new user: "… stored at a colder temperature than Moderna's?" answered yes by "Storage temp !=
    # 'Moderna'", a value of another column, which the checked one never holds
    ({"fn": "value", "column": "country", "check": {"op": "!=", "against": "value", "value": "Porto"}}, True),
    ({"fn": "argmax", "column": "dropouts", "answer_column": "country",
      "check": {"op": "!=", "against": "value", "value": "Leeds"}}, True),
    ({"fn": "value", "column": "country", "check": {"op": "!=", "against": "value", "value": "Spain"}}, False),
    ({"fn": "value", "column": "country", "check": {"op": "=", "against": "value", "value": "Porto"}}, False),
])
def test_a_check_not_equal_to_what_the_column_never_holds_does_not_vote(written, blocked):
    # seen as a new user: "Riverside has about 20% of all doctors" supported by "the clinic with the most doctors
    # != '20%'", which holds of any table (a name is never a number)
    from tools._claim_grounding import tautology_blocker

    prog = Program.model_validate({"answer_column": "site", **written})
    assert bool(tautology_blocker(prog, TypedTable.build(TRIAL_SITES))) is blocked


# -- "every" with a quantifier where the value should be (read_every_filter) -----------------------------------
def every(claim: str, **program) -> tuple[Program, bool | None]:
    from tools._claim_grounding import read_every_filter

    typed = TypedTable.build(TRIAL_SITES)
    prog = read_every_filter(Program.model_validate({"answer_column": "site", **program}), typed, claim)
    return prog, execute(prog, typed).truth


@pytest.mark.parametrize("value", ["every", "All", "site", "Sites"])
def test_every_one_has_a_quantifier_is_read_as_every_row_meets_the_filter(value):
    # Found as a new user: "Every site had fewer than 60 dropouts" written as "rows where Dropouts < 60 -> whether
    # every one has Site = 'every'", false whatever the table says.
    written = {"filters": [{"column": "dropouts", "op": "<", "value": "60"}], "fn": "every", "column": "site",
               "check": {"op": "=", "against": "value", "value": value}}
    prog, truth = every("Every site had fewer than 60 dropouts.", **written)
    assert (prog.filters, prog.column, prog.check.op, prog.check.value) == ([], "dropouts", "<", "60")
    assert truth is True
    fewer_than_40 = {**written, "filters": [{"column": "dropouts", "op": "<", "value": "40"}]}
    assert every("All sites had fewer than 40 dropouts.", **fewer_than_40)[1] is False


@pytest.mark.parametrize("claim, program", [
    # a real value in the check: the model's own reading stands
    ("Every UK site had fewer than 60 dropouts.", {"filters": [{"column": "country", "op": "=", "value": "UK"}],
                                                   "fn": "every", "column": "dropouts",
                                                   "check": {"op": "<", "against": "value", "value": "60"}}),
    # no universal word in the claim
    ("Sites had fewer than 60 dropouts.", {"filters": [{"column": "dropouts", "op": "<", "value": "60"}],
                                           "fn": "every", "column": "site",
                                           "check": {"op": "=", "against": "value", "value": "site"}}),
    # two filters: which is the scope and which the condition is not the form's to say
    ("Every site had fewer than 60 dropouts.", {"filters": [{"column": "dropouts", "op": "<", "value": "60"},
                                                            {"column": "country", "op": "!=", "value": "UK"}],
                                                "fn": "every", "column": "site",
                                                "check": {"op": "=", "against": "value", "value": "every"}}),
])
def test_other_every_programs_are_left_as_written(claim, program):
    from tools._claim_grounding import read_every_filter

    written = Program.model_validate({"answer_column": "site", **program})
    assert read_every_filter(written, TypedTable.build(TRIAL_SITES), claim) == written


@pytest.mark.parametrize("claim, fn, column, blocked", [
    ("Lake Kariba has the largest surface area.", "argmin", "surface_area_km2", True),
    ("Lake Kariba has the largest surface area.", "argmax", "surface_area_km2", False),
    ("Three Gorges has the smallest area.", "max", "surface_area_km2", True),
    ("Lake Volta was the most recently completed, in the most years.", "argmin", "year_completed", True),
    ("Most reservoirs were completed after 1950.", "min", "year_completed", False),  # no extreme claimed
    ("Lake Kariba is the oldest reservoir.", "argmin", "year_completed", False),  # oldest: a year or an age
    ("The largest reservoir has the smallest year.", "argmin", "year_completed", False),  # both directions
])
def test_an_extreme_the_other_way_from_the_claims_does_not_vote(claim, fn, column, blocked):
    from tools._claim_grounding import direction_blocker

    program = Program.model_validate({"fn": fn, "column": column, "answer_column": "reservoir",
                                      "check": {"op": "=", "against": "value", "value": "Lake Kariba"}})
    assert bool(direction_blocker(program, TypedTable.build(RESERVOIRS), claim)) is blocked


def test_an_extreme_over_a_rank_column_may_run_either_way():
    from tools._claim_grounding import direction_blocker

    ranks = Table(name="r", title="r", columns=["Team", "Position"], rows=[["A", "1"], ["B", "2"]])
    program = Program.model_validate({"fn": "argmin", "column": "position", "answer_column": "team",
                                      "check": {"op": "=", "against": "value", "value": "A"}})
    assert direction_blocker(program, TypedTable.build(ranks), "A reached the highest position.") == ""


def test_the_named_row_with_a_check_against_itself_is_still_read_as_the_row_with_the_extreme():
    # Seen: "rows where Trial = 'AWARD-1' -> max; check >= AWARD-1's value" did not run (it compares AWARD-1 with
    # itself), and the repair did not see it because running it raised.
    pinned = {**PINNED, "check": {"op": ">=", "against": "row", "value": "Lake Kariba"}}
    prog, truth = superlative("Lake Kariba has the largest surface area.", **pinned)
    assert (prog.fn, prog.filters, prog.check.value) == ("argmax", [], "Lake Kariba") and truth is False


SITES = Table(name="sites", title="Sites", columns=["Site", "Enrolled", "Target", "Year"], rows=[
    ["Leeds", "120", "150", "2019"], ["Oslo", "90", "80", "2020"], ["Lyon", "45", "100", "2021"]])


@pytest.mark.parametrize("claim, op, truth", [
    ("Is it true that Oslo enrolled more than its target?", ">", True),
    ("Leeds enrolled more than its target.", ">", False),
    ("Lyon enrolled fewer people than its target.", "<", True),
])
def test_a_row_compared_with_itself_is_read_as_two_columns_of_that_row(claim, op, truth):
    from tools._claim_grounding import read_own_row
    from tools._table_shape import describe

    typed = TypedTable.build(SITES)
    site = claim.split()[4] if claim.startswith("Is it") else claim.split()[0]
    written = Program.model_validate({"filters": [{"column": "site", "op": "=", "value": site}], "fn": "value",
                                      "column": "enrolled", "check": {"op": op, "against": "row", "value": site}})
    with pytest.raises(ProgramError, match="compared with itself"):
        execute(written, typed)  # as the model wrote it: decides nothing, so it does not vote
    read = read_own_row(written, typed, claim)
    assert (read.check.against, read.check.value) == ("column", "target")
    ex = execute(read, typed)
    assert ex.truth is truth and (SITES.rows.index(next(r for r in SITES.rows if r[0] == site)) + 1, 3) in ex.cells
    assert describe(read, typed).endswith(f"check: result {op} Target of the same row")


def test_a_claim_naming_no_other_column_keeps_its_program():
    from tools._claim_grounding import read_own_row

    written = Program.model_validate({"filters": [{"column": "site", "op": "=", "value": "Oslo"}], "fn": "value",
                                      "column": "enrolled", "check": {"op": ">", "against": "row", "value": "Oslo"}})
    assert read_own_row(written, TypedTable.build(SITES), "Oslo enrolled more than Leeds.") == written


@pytest.mark.parametrize("claim, op, truth", [
    # 659,041 / 173,040 = 3.81; 599,601 / 150,005 = 4.00
    ("Heart disease killed five times as many people as accidents.", "=", False),
    ("Heart disease killed four times as many people as accidents.", "=", True),  # 4.8% off: within 5%
    ("Heart disease killed nearly four times as many people as accidents.", "=", True),
    ("Heart disease killed more than three times as many people as accidents.", ">", True),
    ("Heart disease killed at least 4-fold the deaths of accidents.", ">=", False),
    ("Accidents killed half as many people as heart disease.", "=", False),
])
def test_a_stated_multiple_scales_the_other_row(claim, op, truth):
    """Found as a new user: "South has twice as many general beds as East" was checked as South = East."""
    from tools._claim_multiples import read_multiplier

    typed = TypedTable.build(TABLE)
    first, other = ("Accidents", "Heart disease") if claim.startswith("Accidents") else ("Heart disease", "Accidents")
    written = Program.model_validate({"filters": [{"column": "cause", "op": "=", "value": first}], "fn": "value",
                                      "column": "deaths", "check": {"op": "=", "against": "row", "value": other}})
    read = read_multiplier(written, claim)
    assert read.check.op == op and read.check.factor in (5.0, 4.0, 3.0, 0.5)
    ex = execute(read, typed)
    assert ex.truth is truth
    assert f"{read.check.factor:g} × {other}'s Deaths" in ex.check_text  # the reason states the scaled value
    # and the range an equality accepts (found as a new user: "= 2 × 9 = 18" read as exact for "roughly twice")
    assert ("(within " in ex.check_text) is (op == "=")


@pytest.mark.parametrize("claim, op, truth", [
    # 1,380,000 / 1,150,000 = 1.20 exactly
    ("March revenue was 20% higher than February revenue.", "=", True),
    ("March revenue was about 22% higher than February revenue.", "=", True),  # within 2.5 points
    ("March revenue was 25% higher than February revenue.", "=", False),
    ("March revenue was more than 10% higher than February revenue.", ">", True),
    ("March revenue was 5% lower than February revenue.", "=", False),
    ("March revenue was more than 30% lower than February revenue.", "<", False),
])
def test_a_stated_difference_in_percent_scales_the_other_row(claim, op, truth):
    """Found as a new user: "about 20% higher than February" could only be checked as March > February."""
    from tools._claim_multiples import multiple_blocker, read_multiplier

    typed = TypedTable.build(Table(name="sales", title="sales", columns=["Month", "Revenue"], rows=[
        ["2024-02", "$1,150,000"], ["2024-03", "$1,380,000"]]))
    written = Program.model_validate({"filters": [{"column": "month", "op": "=", "value": "2024-03"}], "fn": "value",
                                      "column": "revenue", "check": {"op": ">", "against": "row", "value": "2024-02"}})
    read = read_multiplier(written, claim)
    assert read.check.op == op and read.check.factor != 1.0
    assert execute(read, typed).truth is truth
    pct = Program.model_validate({**written.model_dump(), "check": {"op": "=", "against": "value", "value": "20%"}})
    assert "difference in percent" in multiple_blocker(pct, "March revenue was about 20% higher than February.")


def test_a_claim_without_a_multiple_or_a_check_against_a_value_is_left_alone():
    from tools._claim_multiples import read_multiplier

    against_row = Program.model_validate({"filters": HEART, "fn": "value", "column": "deaths",
                                          "check": {"op": ">", "against": "row", "value": "Cancer"}})
    assert read_multiplier(against_row, "Heart disease killed more people than cancer.") == against_row
    against_value = Program.model_validate({"filters": HEART, "fn": "value", "column": "deaths",
                                            "check": {"op": "=", "against": "value", "value": "659041"}})
    assert read_multiplier(against_value, "Heart disease killed twice 329,520 people.") == against_value
    # "the mixed double" names an event, "the first half of" a period: not multiples
    assert read_multiplier(against_row, "In the first half of the year heart disease killed more than cancer.") \
        == against_row
    assert read_multiplier(against_row, "Heart disease won the mixed double against cancer.") == against_row


def test_a_stated_multiple_scales_another_column_of_the_same_row():
    from tools._claim_grounding import read_own_row
    from tools._claim_multiples import read_multiplier

    typed = TypedTable.build(SITES)
    written = Program.model_validate({"filters": [{"column": "site", "op": "=", "value": "Lyon"}], "fn": "value",
                                      "column": "enrolled", "check": {"op": "=", "against": "row", "value": "Lyon"}})
    claim = "Lyon enrolled half as many people as its target."
    read = read_multiplier(read_own_row(written, typed, claim), claim)
    assert (read.check.against, read.check.factor) == ("column", 0.5)
    assert execute(read, typed).truth is False  # 45 is not within 5% of 50
    near = read_multiplier(read_own_row(written, typed, "Lyon enrolled nearly half its target."),
                           "Lyon enrolled nearly half its target.")
    assert execute(near, typed).truth is True  # within 15%


BEDS = Table(name="beds", title="Hospital capacity", columns=["Region", "Hospitals", "ICU beds", "General beds",
                                                              "Occupancy (%)"], rows=[
    ["North", "14", "312", "4,210", "81.5"], ["South", "22", "451", "6,034", "88.2"],
    ["East", "9", "127", "2,118", "92.7"], ["West", "17", "389", "5,377", "76.0"]])


@pytest.mark.parametrize("claim, truth", [
    ("The region with the fewest hospitals has the highest occupancy.", True),  # East both
    ("Is it true that the region with the most hospitals also has the most ICU beds?", True),  # South both
    ("The region with the most ICU beds has the lowest occupancy.", False),  # South 451; West 76.0
    ("The region with the most general beds had the highest occupancy", False),  # South; East
])
def test_a_claim_about_two_extremes_checks_that_one_row_holds_both(claim, truth):
    """Found as a new user: the grammar could not say it, and the one program that ran compared invented values."""
    from tools._claim_grounding import read_two_extremes
    from tools._table_shape import describe

    typed = TypedTable.build(BEDS)
    written = Program.model_validate({"filters": [{"column": "hospitals", "op": "<", "value": "10"}], "fn": "max",
                                      "column": "occupancy", "check": {"op": "=", "against": "row", "value": "South"}})
    read = read_two_extremes(written, typed, claim)
    assert read.check.against == "extreme" and read.filters == []  # the invented threshold is not the claim's
    ex = execute(read, typed)
    assert ex.truth is truth
    assert "check: result = the row with the" in describe(read, typed)
    assert ex.check_text.startswith("to be the row with the")  # the reason reads "the claim needs it to be …"
    named = {BEDS.rows[r - 1][0] for r, _ in ex.cells}
    assert named <= {"North", "South", "East", "West"} and len(named) <= 2


def test_one_extreme_or_an_unnamed_column_keeps_the_program():
    from tools._claim_grounding import read_two_extremes

    typed = TypedTable.build(BEDS)
    written = Program.model_validate({"filters": [], "fn": "argmax", "column": "hospitals", "answer_column": "region",
                                      "check": {"op": "=", "against": "value", "value": "South"}})
    for claim in ("South has the most hospitals.", "The region with the most hospitals has the best staff.",
                  "The region with the most beds has the highest occupancy."):  # "beds": ICU or general?
        assert read_two_extremes(written, typed, claim) == written


def test_a_check_against_the_claims_multiple_does_not_vote():
    """Seen with the real model: "twice as many general beds" checked as a count of rows = 2."""
    from tools._claim_multiples import multiple_blocker

    counted = Program.model_validate({"filters": HEART, "fn": "count", "column": "cause",
                                      "check": {"op": "=", "against": "value", "value": "2"}})
    claim = "Heart disease killed twice as many people as accidents."
    assert "multiple" in multiple_blocker(counted, claim)
    assert "multiple" in multiple_blocker(counted.model_copy(update={"check": counted.check.model_copy(
        update={"value": "0.2"})}), "Accidents killed 5 times fewer people than heart disease.")
    assert "multiple" in multiple_blocker(counted.model_copy(update={"check": counted.check.model_copy(
        update={"value": "5"})}), "Accidents killed 5 times fewer people than heart disease.")
    # Without a multiple, or against another value, it votes as before.
    assert multiple_blocker(counted, "Heart disease and cancer killed 2 groups of people.") == ""
    assert multiple_blocker(counted.model_copy(update={"check": counted.check.model_copy(
        update={"value": "659041"})}), claim) == ""


@pytest.mark.parametrize("claim, truth", [
    ("North has the third highest occupancy.", True),  # East 92.7, South 88.2, North 81.5, West 76.0
    ("West has the third highest occupancy (%).", False),
    ("South has the second highest occupancy.", True),
    ("East had the fewest hospitals.", True),
    ("West has the most ICU beds.", False),
])
def test_a_claim_that_ranks_a_named_row_checks_its_place(claim, truth):
    """Found as a new user: "North has the third highest occupancy" was refuted by comparing North with South, a
    row the claim never names."""
    from tools._claim_grounding import read_ranked_claim

    typed = TypedTable.build(BEDS)
    written = Program.model_validate({"filters": [{"column": "region", "op": "=", "value": "North"}], "fn": "value",
                                      "column": "occupancy", "check": {"op": ">", "against": "row", "value": "South"}})
    read = read_ranked_claim(written, typed, claim)
    assert read.fn in ("argmax", "argmin") and read.filters == [] and read.check.against == "value"
    assert execute(read, typed).truth is truth


def test_a_claim_naming_no_row_or_no_column_keeps_its_program():
    from tools._claim_grounding import read_ranked_claim

    typed = TypedTable.build(BEDS)
    written = Program.model_validate({"filters": [], "fn": "argmax", "column": "hospitals", "answer_column": "region",
                                      "check": {"op": "=", "against": "value", "value": "South"}})
    for claim in ("Atlantis has the most hospitals.", "South has the most staff.",
                  "The region with the most hospitals has the most ICU beds."):
        assert read_ranked_claim(written, typed, claim) == written


# -- "every" written as "only" (read_quantifier) -------------------------------------------------------------------
HOSPITALS = Table(name="h", title="hospitals", columns=["Hospital", "City", "Opened"], rows=[
    ["St Mary's", "Leeds", "1962"], ["Riverside", "Hull", "2004"], ["Castle Hill", "Hull", "1998"],
    ["Quayside", "Leeds", "2010"]])
IN_HULL_ONLY = {"filters": [{"column": "city", "op": "=", "value": "Hull"}], "fn": "only", "column": "opened",
                "answer_column": "hospital", "check": {"op": ">", "against": "value", "value": "1990"}}


@pytest.mark.parametrize("claim, fn, truth", [
    # Found as a new user: written 5 of 5 as "the only rows with Opened > 1990", true of that table by chance;
    # here Leeds's Quayside (2010) makes the "only" reading false.
    ("Every hospital in Hull opened after 1990.", "every", True),
    ("Is it true that all the hospitals in Hull opened after 1990", "every", True),
    ("Only the hospitals in Hull opened after 1990.", "only", False),  # it says "only": the model's reading stands
    ("Every hospital that opened after 1990 is the only one in Hull.", "only", False),
    ("Hull's hospitals opened later than all the others.", "only", False),  # compared with all: left as written
    ("Hull has hospitals that all opened after 1990.", "only", False),  # the quantifier does not open the claim
])
def test_every_written_as_only_is_read_as_every(claim, fn, truth):
    from tools._claim_grounding import read_quantifier

    typed = TypedTable.build(HOSPITALS)
    prog = read_quantifier(Program.model_validate(IN_HULL_ONLY), claim)
    assert prog.fn == fn and execute(prog, typed).truth is truth


STATINS = Table(name="statins", title="", columns=["Drug", "Class", "LDL reduction (%)"], rows=[
    ["Atorvastatin", "Synthetic", "50"], ["Rosuvastatin", "Synthetic", "55"], ["Simvastatin", "Fungal-derived", "41"],
    ["Pravastatin", "Fungal-derived", "34"], ["Pitavastatin", "Synthetic", "43"], ["Lovastatin", "Fungal-derived", "40"]])
STATIN_CLAIM = "Is it true that every synthetic statin lowers LDL by more than 40%?"


def _statin(filters: list[dict], fn: str) -> dict:
    return {"filters": filters, "fn": fn, "column": "ldl_reduction", "answer_column": "drug",
            "check": {"op": ">", "against": "value", "value": "40"}}


SYNTHETIC = [{"column": "class", "op": "=", "value": "Synthetic"}]


@pytest.mark.parametrize("claim, fn, truth", [
    (STATIN_CLAIM, "every", True),
    ("All synthetic statins lower LDL by more than 40%.", "every", True),
    ("Only synthetic statins lower LDL by more than 40%.", "value", None),  # "only": left as written (refused)
    ("Atorvastatin, a synthetic statin, lowers LDL by more than 40%.", "value", None),  # no quantifier opens it
])
def test_a_value_check_for_an_every_claim_is_read_as_every(claim, fn, truth):
    from tools._claim_grounding import read_quantifier

    typed = TypedTable.build(STATINS)
    prog = read_quantifier(Program.model_validate(_statin(SYNTHETIC, "value")), claim)
    assert prog.fn == fn
    if truth is None:
        with pytest.raises(ProgramError, match="a value check needs the one row"):
            execute(prog, typed)
    else:
        assert execute(prog, typed).truth is truth


def test_a_title_that_opens_with_all_is_not_a_quantifier():
    """TabFact: "all about christmas eve be the title for season 11" checks a title, not every row."""
    from tools._claim_grounding import read_quantifier

    raw = {"filters": [{"column": "season", "op": "=", "value": "11"}], "fn": "value", "column": "title",
           "answer_column": "title", "check": {"op": "=", "against": "value", "value": "All About Christmas Eve"}}
    claim = "all about christmas eve be the title for season 11"
    assert read_quantifier(Program.model_validate(raw), claim).fn == "value"


def test_the_statin_claims_vote_end_to_end():
    """The five programs the model wrote for STATIN_CLAIM (seen as a new user): 1 of 5 voted. The value checks
    over the synthetic rows are read as "every"; the two over every row are run over the synthetic rows, the
    category the claim names (tools._claim_counts.restricted_to_category)."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    typed = TypedTable.build(STATINS)
    not_fungal = [{"column": "class", "op": "!=", "value": "Fungal-derived"}]
    written = [_statin(not_fungal, "value"), _statin([], "every"), _statin(SYNTHETIC, "value"),
               _statin([], "value"), _statin(SYNTHETIC, "every")]
    sampled = [run_sampled(raw, typed, "claim", STATIN_CLAIM) for raw in written]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", STATIN_CLAIM)
    assert outcome.winner == "SUPPORTS" and outcome.votes == {"SUPPORTS": 5}, outcome.votes
    assert outcome.confidence == 1.0


FINANCE = Table(name="finance", title="finance", columns=["Quarter", "Net income ($k)"], rows=[
    ["Q1 2023", "(60)"], ["Q2 2023", "185"], ["Q3 2023", "(25)"], ["Q4 2023", "215"]])


@pytest.mark.parametrize("claim, zero_stated", [
    ("Was net income positive in every quarter of 2023?", True),
    ("Q1 2023 was a loss.", True),
    ("All balances were non-negative.", True),
    ("The OASI balance is less negative than the OASDI one.", False),  # a comparison of two values
    ("The views have both a positive and a negative tone.", False),  # two labels
])
def test_a_sign_the_claim_states_is_a_comparison_with_zero(claim, zero_stated):
    """Found as a new user: "Was net income positive in every quarter of 2023?" was written as "every Net income
    > 0" by all 5 programs, each held out of the vote for comparing with a 0 the claim does not state; the
    fallback judge then supported it with invented figures (Q1 and Q3 were losses)."""
    from tools._claim_grounding import stated_numbers
    from tools._table_program import run_sampled

    assert (0.0 in stated_numbers(claim)) is zero_stated
    every = {"filters": [], "fn": "every", "column": "net_income_k", "answer_column": "quarter",
             "check": {"op": ">", "against": "value", "value": "0"}}
    ran = run_sampled(every, TypedTable.build(FINANCE), "claim", "Net income was positive in every quarter of 2023.")
    assert ran.execution is not None and ran.execution.truth is False, ran.error
    assert ran.execution.cells == [(1, 2), (3, 2)]  # the two losses


@pytest.mark.parametrize("check, result, op, held", [
    ("53", "53", "=", True),  # the computed value copied into the check
    ("53", "54", "=", False),  # not the computed value: a wrong guess, which a failing check shows anyway
    ("53", "53", ">=", False),  # a bound, not a copy
    ("530", "53", "=", False),  # the claim's own number
    ("Ontario", "Ontario", "=", False),  # text is not a number the claim could state
])
def test_a_copied_check_is_held_only_beside_the_claims_own_number(check, result, op, held):
    from tools._claim_grounding import copied_beside_stated
    from tools._table_ops_model import Execution

    claim = "Ontario had 530 cases of measles in 2008."

    def run(value: str, computed: str) -> tuple[Program, Execution, bool]:
        program = Program.model_validate({"fn": "value", "column": "cases", "check": {"op": op if value == check
                                                                                       else "=", "value": value}})
        return program, Execution(selected=[1], result=computed, result_text=computed, decisive_rows=[1], cells=[]), \
            True

    why = copied_beside_stated([run(check, result), run("530", "53")], claim)
    assert bool(why[0]) == held and why[1] == ""
    assert copied_beside_stated([run(check, result)], claim) == [""]  # no program checks the claim's number
    # a check a rule set (the intervals holding 75 number "0") is the claim's reading, not a copy
    assert copied_beside_stated([run(check, result)[:2] + (False,), run("530", "53")], claim)[0] == ""


@pytest.mark.parametrize("claim, month, verdict", [
    ("Admissions peaked in March 2024.", "2024-03", "SUPPORTS"),
    ("Admissions peaked in April 2024.", "2024-04", "REFUTES"),
])
def test_a_month_named_in_words_is_the_row_a_superlative_names(claim, month, verdict):
    """Found as a new user: "Admissions peaked in March 2024." split between the row with the most admissions
    (March) and "rows where Month = '2024-03' → max of Admissions; check: result = 2024"; the fallback judge
    refuted it. "Peaked" is a superlative, "March 2024" names the row "2024-03", and "April 2024" states
    "2024-04", so a refutation by it votes."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    admissions = Table(name="a", title="", columns=["Month", "Admissions"], rows=[
        ["2024-01", "512"], ["2024-02", "498"], ["2024-03", "561"], ["2024-04", "530"]])
    typed = TypedTable.build(admissions)
    raw = {"filters": [{"column": "month", "op": "=", "value": month}], "fn": "max", "column": "admissions",
           "check": {"op": "=", "value": "2024"}}
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, [run_sampled(raw, typed, "claim", claim)], typed, "claim", claim)
    assert outcome.winner == verdict and outcome.program.startswith("all rows → Month of the row with the largest")
