"""A message sent with an upload that only presents it gets the upload's acknowledgement, not a turn."""

import pytest

from assistant.ui.uploads import presents_upload


@pytest.mark.parametrize("message", [
    "Here are 2022 death figures",  # found as a new user: checked as a claim and "Refuted"
    "Here is my table",
    "here's the ward audit.",
    "Attached is our trial data",
    "I've uploaded the 2023 dialysis figures",
    "This is my spreadsheet of vaccine prices",
    "Please find the results attached",
])
def test_a_message_that_only_presents_the_upload(message):
    assert presents_upload(message)


@pytest.mark.parametrize("message", [
    "Here is my table: is it true that stroke caused 29,800 deaths?",  # a claim to check rides along
    "Here are the figures. Which cause killed the most?",
    "I've uploaded the audit, can you check that every ward scored above 80%?",
    "This is the highest death toll on record.",  # a claim, not "this is my/our"
    "Stroke caused 29,800 deaths in 2022.",
    "Here are 2022 death figures, please verify that dementia leads",
    "Here's my table. Stroke caused 29,800 deaths in 2022.",  # a claim in a second sentence
    "Attached: dementia killed more people than heart disease",
])
def test_a_message_that_asks_something_is_answered(message):
    assert not presents_upload(message)
