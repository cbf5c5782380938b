"""Hostile and careless CSV, TSV and text uploads beyond the first 68 cases (#79): each a right load checked cell by
cell (and its assumptions named in the notes), or a refusal that names what is wrong."""

from __future__ import annotations

from tests.hostile_uploads import Case


def delimited_cases() -> list[Case]:
    cases: list[Case] = []
    return cases
