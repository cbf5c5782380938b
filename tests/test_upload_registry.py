"""The sheet-choice button: the browser names an upload by an opaque id, never by a server path (#17).

The handler test runs in a subprocess because Chainlit's config is process-global (see test_app_handlers.py).
"""

from __future__ import annotations

import json

import pytest

from assistant.ui.upload_registry import UploadRegistry
from kb.tables import TableError
from tests.ui_button_probe import run_probe


def test_registry_resolves_only_its_own_ids_and_sheets(tmp_path):
    reg = UploadRegistry()
    book = tmp_path / "book.xlsx"
    uid = reg.register(book, "book.xlsx", "table1", ["Q1", "Q2"])
    upload, sheet = reg.resolve(uid, "Q2")
    assert (upload.path, upload.file_name, upload.table, sheet) == (book, "book.xlsx", "table1", "Q2")
    assert len(uid) >= 16 and str(book) not in uid
    for forged_id, forged_sheet in [("/etc/os-release", "Q2"), ("nope", "Q2"), (None, "Q2"), ({"path": "/x"}, "Q2"),
                                    (uid, "/etc/os-release"), (uid, "Q3"), (uid, None)]:
        with pytest.raises(TableError):
            reg.resolve(forged_id, forged_sheet)
    # Another chat's registry does not know this id.
    with pytest.raises(TableError, match="upload the file again"):
        UploadRegistry().resolve(uid, "Q2")


PROBE = r"""
import openpyxl

book = Path(sys.argv[1])
wb = openpyxl.Workbook()
wb.active.title = "Q1"
wb.active.append(["Year", "Cases"]); wb.active.append(["2010", "63"])
q2 = wb.create_sheet("Q2"); q2.append(["Year", "Deaths"]); q2.append(["2010", "7"])
wb.save(book)

async def main():
    table = load_table(book, name="book.xlsx")
    await app.acknowledge_table(table, book, "book.xlsx")
    payload = sent[-1]["payloads"][0]
    forged = [{"path": "/etc/os-release", "file": "x", "table": "table1", "sheet": "Q2"},
              {"upload": "/etc/os-release", "sheet": "Q2"},
              {"upload": payload["upload"], "sheet": "../../etc/os-release"},
              "not a dict"]
    for p in forged:
        await app.on_choose_sheet(Action(p))
    refusals = [m["content"] for m in sent[1:]]
    loads_after_forgery = list(loads)
    await app.on_choose_sheet(Action(payload))
    print("JSON" + json.dumps({"first_payloads": sent[0]["payloads"], "refusals": refusals,
                               "loads_after_forgery": loads_after_forgery, "loads": loads,
                               "last": sent[-1]["content"]}))

asyncio.run(main())
"""


def test_a_forged_sheet_payload_reads_nothing(tmp_path):
    book = tmp_path / "book.xlsx"
    out = run_probe(PROBE, book, tmp_path)

    # The button carries an opaque id and a sheet name, nothing that names a file on the server.
    assert out["first_payloads"] and all(set(p) == {"upload", "sheet"} for p in out["first_payloads"])
    assert not any(str(book) in json.dumps(p) or "/" in p["upload"] for p in out["first_payloads"])
    # Every forged click is refused with one message and loads nothing.
    assert out["loads_after_forgery"] == []
    assert len(out["refusals"]) == 4 and all(r.startswith("I could not switch sheets:") for r in out["refusals"])
    assert not any("os-release" in r and "ID=" in r for r in out["refusals"])
    # The genuine click still switches to the other sheet of the uploaded workbook.
    assert [(ld["path"], ld["sheet"]) for ld in out["loads"]] == [(str(book), "Q2")]
    assert out["last"].startswith("Loaded ")


def test_a_page_with_no_such_table_is_named_as_a_page_not_a_workbook(tmp_path):
    reg = UploadRegistry()
    page = reg.register(tmp_path / "u.bin", "beds.html", "beds", ["table 1 (Home)", "table 2 (Beds)"])
    book = reg.register(tmp_path / "w.bin", "cases.xlsx", "cases", ["Cases", "Deaths"])
    with pytest.raises(TableError, match=r"The file beds.html has no such table; its tables are: table 1 \(Home\)"):
        reg.resolve(page, "table 9")
    with pytest.raises(TableError, match="The workbook cases.xlsx has no such sheet; its sheets are: Cases, Deaths"):
        reg.resolve(book, "Q3")


def test_the_terminal_hints_name_the_chat_command_or_the_ask_options(tmp_path):
    from assistant.cli.chat_cli import add_table_file
    from assistant.settings import Settings
    from memory.store import Memory
    from tools.contracts import Session

    class Deps:
        settings = Settings(_env_file=None, data_dir=tmp_path)
        memory = Memory(tmp_path / "memory.db")

    path = tmp_path / "einwohner.csv"
    path.write_text("Region;Einwohner\nNord;248.960\nSued;120.500\n", encoding="utf-8")
    chat = add_table_file(Deps(), Session("a"), path)
    assert f'(/table "{path}" --decimal point reads its numbers with decimal points)' in chat
    ask = add_table_file(Deps(), Session("b"), path, in_chat=False)
    assert "(--decimal point reads its numbers with decimal points)" in ask and "/table" not in ask
    page = tmp_path / "beds.html"
    page.write_text("<table><tr><td><a href='/'>Home</a></td></tr></table><table><tr><th>Hospital</th><th>Beds</th>"
                    "</tr><tr><td>St Mary</td><td>310</td></tr></table>")
    assert "(--sheet SHEET loads another)" in add_table_file(Deps(), Session("c"), page, in_chat=False)
    assert f'(/table "{page}" SHEET loads another)' in add_table_file(Deps(), Session("d"), page)
