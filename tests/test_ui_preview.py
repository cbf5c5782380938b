"""The browser preview's column names: read as written by its table component (assistant.ui.preview)."""

from assistant.ui.preview import ONE_DOT_LEADER, preview_columns


def test_dots_repeats_and_blanks_become_readable_names():
    shown = preview_columns(["City", "PM2.5 (µg/m³)", "Note", "Note", "", "Note"])
    assert shown == ["City", f"PM2{ONE_DOT_LEADER}5 (µg/m³)", "Note", "Note (2)", "Column 5", "Note (3)"]
    assert all("." not in s for s in shown) and len(set(shown)) == len(shown)


def test_plain_names_are_kept():
    assert preview_columns(["Year", "Cases"]) == ["Year", "Cases"]
