"""The Chainlit UI: a thin shell over :class:`assistant.answer.loop.Assistant`.

Run with ``evidentia run`` (or ``chainlit run assistant/ui/app.py``). Steps show the intent frame and
each tool call; cited evidence is attached as side elements whose names are the citation ids, so
``[S1]`` in the answer is a clickable chip that opens the sentence, cell or path.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
import sys
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.input_widget import Slider, Switch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # chainlit runs this file as a script

from assistant.ui.auth import (  # noqa: E402
    LoginLimiter,
    check_login,
    login_mode,
    local_ui_key,
    login_still_valid,
    private_secret,
    single_user_password_since,
    start_url,
)
from assistant.deps import Deps  # noqa: E402
from tools.contracts import CITATION_GROUP_RE, CITATION_RE, Evidence  # noqa: E402
from assistant.answer.loop import Assistant  # noqa: E402
from assistant.answer.turn import Step, TurnHooks, TurnResult  # noqa: E402
from tools.contracts import Session  # noqa: E402
from assistant.settings import Settings  # noqa: E402
from assistant.model.supervisor import read_status, status_path  # noqa: E402
from assistant.ui.access import (  # noqa: E402
    HostCheck,
    LocalKeyGate,
    NoRemoteContent,
    OwnedFeedbackDataLayer,
    account_gate,
    allowed_hosts,
    holds_local_key,
    refuse_exposed_local_mode,
    refuse_token_exchange,
    revoke_token,
    socket_origin_check,
    token_from_request,
    token_id,
    token_issued_at,
)
from assistant.ui.upload_registry import UploadRegistry  # noqa: E402
from assistant.ui.preview import preview_columns  # noqa: E402
from assistant.ui.uploads import (  # noqa: E402
    add_document_file, add_table_file, add_text_file, describe_document, looks_like_table, other_sheets,
    presents_upload)
from assistant.ui.page_images import ROUTE as PAGE_IMAGE_ROUTE, PageImages, sentence_picture, table_picture  # noqa: E402
from kb.documents import DOCUMENT_SUFFIXES  # noqa: E402
from kb.instructions import instructions_warning  # noqa: E402
from kb.kg_harvest import extraction_note  # noqa: E402
from kb.tables import TableError  # noqa: E402
from memory.accounts import Accounts  # noqa: E402
from memory.errors import ConversationAccessError  # noqa: E402

TABLE_SUFFIXES = {".csv", ".tsv", ".xlsx", ".xlsm", ".json", ".md", ".txt", ".html", ".htm"}
TEXT_SUFFIXES = {".txt", ".md"}


log = logging.getLogger(__name__)


@lru_cache(maxsize=1)
def app_deps() -> Deps:
    """Built once per process at first use: settings, LLM client, memory, lazy models."""
    deps = Deps(Settings())
    deps.memory  # runs the memory migrations now rather than inside the first turn
    # The encoder and the KB load while the user types, off the event loop, not in the first question.
    threading.Thread(target=deps.warm_up, name="warm-up", daemon=True).start()
    return deps


def _auth_secret(settings: Settings) -> str:
    """This install's secret for signing logins: made once, readable by its owner only from the start."""
    return private_secret(settings.data_dir / "chainlit_auth_secret")


os.environ.setdefault("CHAINLIT_AUTH_SECRET", _auth_secret(app_deps().settings))


def _restrict_cors() -> None:
    """Never "*": Chainlit's API allows credentials, so any site could act as the logged-in user.

    Applied in place, because Chainlit's CORS middleware holds this very list (it is built on the first
    request, after this module is loaded), and whatever config.toml the working directory has is replaced.
    """
    from chainlit.config import config
    from chainlit.server import sio

    config.project.allow_origins[:] = app_deps().settings.cors_origins
    # The chat socket is not covered by CORS (browsers do not apply it to WebSockets): Chainlit leaves its
    # origin check off; engineio reads this option on every request (see assistant/ui/access.py).
    sio.eio.cors_allowed_origins = socket_origin_check(app_deps().settings.cors_origins)


_restrict_cors()


@cl.data_layer
def get_data_layer():
    from assistant.ui.storage import LocalElementStorage

    threads = app_deps().memory.ui_db_path
    # Without a storage client Chainlit drops element contents: a reopened chat lost its evidence panels.
    # Feedback is written only to the requesting user's own messages (see assistant/ui/access.py).
    return OwnedFeedbackDataLayer(conninfo=f"sqlite+aiosqlite:///{threads}",
                                  storage_provider=LocalElementStorage(threads.with_name("ui-elements")))


_accounts = Accounts(app_deps().memory.ui_db_path)
_login_limiter = LoginLimiter()
LOGIN_MODE = login_mode(app_deps().settings, _accounts)
LOCAL_KEY = local_ui_key(app_deps().settings) if LOGIN_MODE == "local" else None


def _login_metadata(provider: str) -> dict:
    """A new login's user metadata, which Chainlit signs into its token: with an id of its own, so two logins in the
    same second are two tokens (Chainlit's tokens hold whole seconds), and logging one out (which revokes that
    token) leaves the other valid; without it, the local mode's login right after a logout would be the revoked
    token again."""
    return {"provider": provider, "login": secrets.token_urlsafe(12)}


if LOGIN_MODE != "local":
    @cl.password_auth_callback
    async def password_login(username: str, password: str):
        # argon2 takes tens of milliseconds on purpose: off the event loop.
        name = await asyncio.to_thread(check_login, app_deps().settings, _accounts, _login_limiter, LOGIN_MODE,
                                       username, password)
        return cl.User(identifier=name, metadata=_login_metadata(LOGIN_MODE)) if name else None
else:
    # Without a password there is one user, the local one (Chainlit needs a user to list and resume threads), for
    # a browser that holds this install's key (assistant/ui/access.py: LocalKeyGate lets no other request this far).
    @cl.header_auth_callback
    def local_user(headers):
        if not holds_local_key(headers.get("cookie"), LOCAL_KEY.value):
            return None
        return cl.User(identifier="local", metadata=_login_metadata("local"))


# Noted once per start: the single-user password comes from the environment, read at start-up.
SINGLE_USER_SINCE = single_user_password_since(app_deps().settings) if LOGIN_MODE == "single_user" else 0.0


def _login_still_valid(name: str, token: str | None) -> bool:
    return login_still_valid(app_deps().settings, _accounts, LOGIN_MODE, name, token_issued_at(token),
                             single_user_since=SINGLE_USER_SINCE, token_id=token_id(token),
                             local_since=LOCAL_KEY.since if LOCAL_KEY else 0.0)


@cl.on_logout
async def end_login(request, response):
    """Logging out ends the token itself, not only the browser's cookie: a copy of it is refused from now on
    (#79; it would otherwise stay valid for 15 days)."""
    await asyncio.to_thread(revoke_token, await token_from_request(request), _accounts.revoke_login)
    return {"success": True}


def _gate_api_to_current_logins() -> None:
    """Every API route re-checks its login token's name (a removed account's token is refused).

    FastAPI's own mechanism for replacing a dependency; like the CORS list above, it is read per request.
    """
    from chainlit.auth import get_current_user
    from chainlit.server import app as server

    server.dependency_overrides[get_current_user] = account_gate(_login_still_valid)
    refuse_token_exchange(server)  # a logged-out token must not be traded for a fresh one


_gate_api_to_current_logins()


def _keep_the_local_mode_local() -> None:
    """Without a login, the UI is for the person who started it: start only on loopback, answer only requests
    addressed to this machine (a DNS-rebinding page's requests name its own host), and only a browser that opened
    the printed address, which holds this install's key (assistant/ui/access.py)."""
    if LOGIN_MODE != "local":
        return
    from chainlit.config import config
    from chainlit.server import app as server

    # Where Chainlit really listens (`chainlit run --host/--port`, set before this module loads), else the settings'.
    settings = app_deps().settings
    host, port = config.run.host or settings.chainlit_host, int(config.run.port or settings.chainlit_port)
    if (why := refuse_exposed_local_mode(LOGIN_MODE, host)) is not None:
        print(why, file=sys.stderr)
        raise SystemExit(2)
    server.add_middleware(LocalKeyGate, key=LOCAL_KEY.value)
    # Added last, so it runs first: a request for another host is refused before the key is looked at.
    server.add_middleware(HostCheck, allowed=allowed_hosts(host, port, settings.cors_origins))
    print(f"Evidentia runs without accounts, for you only: open {start_url(settings, _accounts, host, port)}",
          file=sys.stderr, flush=True)


_keep_the_local_mode_local()


def _no_remote_content() -> None:
    """Rendered text (uploads, KB, the model's answers) never makes the browser load from another host."""
    from chainlit.server import app as server

    server.add_middleware(NoRemoteContent)


_no_remote_content()


@lru_cache(maxsize=1)
def page_images() -> PageImages:
    return PageImages(app_deps().settings.memory_path.parent / "page-images")


def _serve_page_images() -> None:
    """Pictures of a cited page (assistant/ui/page_images.py), for their owner's login only. Put ahead of
    Chainlit's catch-all route, which would otherwise answer every path with the app's page."""
    from chainlit.auth import get_current_user
    from chainlit.server import app as server
    from fastapi import Depends, HTTPException
    from fastapi.responses import FileResponse
    from fastapi.routing import APIRoute

    async def page_image(token: str, user=Depends(get_current_user)):
        path = page_images().find(getattr(user, "identifier", None), token)
        if path is None:
            raise HTTPException(status_code=404, detail="No such picture.")
        return FileResponse(path, media_type="image/png", headers={"Cache-Control": "private, max-age=86400"})

    server.router.routes.insert(0, APIRoute(PAGE_IMAGE_ROUTE + "/{token}.png", page_image, methods=["GET"]))


_serve_page_images()


@cl.set_starters
async def starters(user=None, language=None):
    return [
        cl.Starter(label="What treats Parkinson's disease?",
                   message="What drugs treat Parkinson's disease, and what are its symptoms?"),
        cl.Starter(label="A science question", message="Why does a metal spoon feel colder than a wooden one?"),
        cl.Starter(label="Multiple choice",
                   message="Which of these is a mammal? A) shark B) whale C) trout D) octopus"),
        cl.Starter(label="Check a claim", message="Upload a CSV, then ask: Is it true that ...?"),
    ]


# --- session ----------------------------------------------------------------------------------
def _assistant() -> Assistant:
    bot = cl.user_session.get("assistant")
    if bot is None:
        deps = app_deps()
        thread_id = cl.context.session.thread_id
        user = cl.user_session.get("user")
        name = getattr(user, "identifier", "local")
        # A socket whose login token outlived its account or password opens no conversation.
        if not _login_still_valid(name, cl.context.session.token):
            raise ConversationAccessError("This login is no longer valid; log out and log in again.")
        session = Session(thread_id, user=name)
        from assistant.cli.chat_cli import restore_session

        restore_session(deps, session)
        bot = Assistant(deps, session)
        cl.user_session.set("assistant", bot)
    return bot


async def _send_settings() -> None:
    s = app_deps().settings
    await cl.ChatSettings([
        Slider(id="evidence_k", label="Evidence pieces per source", initial=s.evidence_k, min=1, max=20, step=1),
        Switch(id="show_steps", label="Show reasoning steps", initial=s.show_steps),
    ]).send()


async def _refuse_foreign_conversation(exc: ConversationAccessError) -> None:
    # A thread id is chosen by the browser; one that names another user's conversation opens nothing.
    await cl.Message(content=f"⚠ {exc}").send()


@cl.on_chat_start
async def on_chat_start():
    try:
        _assistant()
    except ConversationAccessError as exc:
        await _refuse_foreign_conversation(exc)
        return
    await _send_settings()


@cl.on_chat_resume
async def on_chat_resume(thread):
    cl.user_session.set("assistant", None)
    try:
        bot = _assistant()
    except ConversationAccessError as exc:
        await _refuse_foreign_conversation(exc)
        return
    await _send_settings()
    if bot.session.tables:
        await cl.Message(content="Tables in this conversation: " + ", ".join(bot.session.tables)).send()
    failed = await asyncio.to_thread(bot.deps.memory.last_failed_turn, bot.session.conversation_id)
    if failed:  # e.g. the app or the model server stopped mid-turn: the question was kept
        await cl.Message(content=f"⚠ Your last question did not finish: “{failed['user_text']}”. "
                                 f"{failed['error']}", actions=[retry_action(failed["id"])]).send()
    await close_evidence_panel()  # the restored answers' evidence would open it


@cl.on_settings_update
async def on_settings_update(values: dict):
    cl.user_session.set("ui_settings", values)


# --- hooks: steps and streaming ------------------------------------------------------------------
class ChainlitHooks(TurnHooks):
    def __init__(self, show_steps: bool):
        self.show_steps = show_steps
        self.steps: dict[str, cl.Step] = {}
        self.message: cl.Message | None = None

    async def step_start(self, step: Step) -> None:
        if not self.show_steps:
            return
        ui = cl.Step(name=step.name, type="tool" if step.kind != "intent" else "llm", show_input="json")
        ui.input = step.input
        await ui.send()
        self.steps[step.id] = ui

    async def step_end(self, step: Step) -> None:
        ui = self.steps.get(step.id)
        if ui is None:
            return
        if step.error:
            ui.is_error = True
            ui.output = step.error
        else:
            data = step.output.model_dump(mode="json") if hasattr(step.output, "model_dump") else step.output
            ui.output = data
            ui.language = "json"
        await ui.update()

    async def answer_start(self) -> None:
        if self.message is None:
            self.message = cl.Message(content="")
            await self.message.send()

    async def answer_token(self, token: str) -> None:
        await self.answer_start()
        await self.message.stream_token(token)

    async def answer_discard(self, reason: str) -> None:
        if self.message is not None:
            self.message.content = ""
            await self.message.update()
        if self.show_steps:
            async with cl.Step(name="answer withdrawn", type="tool") as s:
                s.output = reason


def ui_id(evidence_id: str) -> str:
    """The id as the UI shows it. Chainlit's Markdown reads ``T1:R2C2`` as a URL with scheme ``T1:``
    and the chip never forms, so cells show as ``T1-R2C2``; stored ids keep the colon."""
    return evidence_id.replace(":", "-")


# One or more adjacent citation groups: "[T1:R3C1][T1:R3C4]", "[S1, S2]", "(S3)".
_CITATION_RUN_RE = re.compile(rf"(?:{CITATION_GROUP_RE.pattern})(?:\s*(?:{CITATION_GROUP_RE.pattern}))*")


def ui_text(answer: str, cited: list[str]) -> str:
    """The answer as the UI shows it: each cited id a chip, without the brackets around it.

    Chainlit turns every element name in the text into a link, so "[S1]" showed as a chip inside literal
    brackets, and "[T1:R3C1][T1:R3C4]" as "[chip][chip]" (seen as a new user). A group whose ids are all cited
    becomes the chips alone, separated by spaces; a group with an id not cited stays as written, and so does one
    the check marked ("S9⚠" is not an id, so the group pattern never matches it): what failed stays visible."""
    shown = set(cited)

    def chips(run: re.Match) -> str:
        ids = CITATION_RE.findall(run.group(0))  # a group holds at least one id by its pattern
        if any(cid not in shown for cid in ids):
            return run.group(0)
        return " ".join(ui_id(cid) for cid in ids)

    answer = _CITATION_RUN_RE.sub(chips, answer)
    for cid in cited:
        if ":" in cid:
            answer = answer.replace(cid, ui_id(cid))
    return answer


def evidence_element(ev: Evidence, result: TurnResult, picture: str = "") -> cl.Element:
    """A side element named by the evidence id, so the id in the answer becomes a link; ``picture``: the URL
    of its page region (a PDF's sentence or table), shown under the text."""
    content = evidence_markdown(ev, result)
    if picture:
        content += f"\n\n![{'the table as printed' if ev.kind == 'cell' else 'on the page'}]({picture})"
    return cl.Text(name=ui_id(ev.id), content=content, display="side")


def document_pictures(bot: Assistant, cited: list[Evidence]) -> tuple[dict[str, str], list[cl.Element]]:
    """Pictures for cited evidence from an uploaded PDF: each sentence's page region with it highlighted, and
    each table the verdict cites cropped from its page (also shown inline, beside the verdict), by URL."""
    urls: dict[str, str] = {}
    inline: list[cl.Element] = []
    by_table: dict[str, str] = {}
    owner = bot.session.user
    for ev in cited:
        try:
            if ev.kind == "sentence" and ev.meta.get("upload") in bot.session.documents:
                start, end = ev.meta.get("offsets") or [0, 0]
                png = sentence_picture(bot.session.documents[ev.meta["upload"]], int(start), int(end))
                if png:
                    urls[ev.id] = page_images().put(owner, png)
            elif ev.kind == "cell" and (table := ev.meta.get("table")):
                if table not in by_table:
                    stored = next((d for d in bot.session.documents.values() if d.table_of(table)), None)
                    png = table_picture(stored, table) if stored is not None else None
                    by_table[table] = page_images().put(owner, png) if png else ""
                    if png:
                        inline.append(cl.Image(name=f"{table} (as printed)", content=png, display="inline",
                                               size="medium"))
                if by_table[table]:
                    urls[ev.id] = by_table[table]
        except Exception:  # noqa: BLE001 - a picture that cannot be drawn leaves the text of the evidence
            log.warning("no page picture for %s", ev.id, exc_info=True)
    return urls, inline


def source_markdown(source: str) -> str:
    """A source name as Markdown that shows it whole: the UI's Markdown reads ":name" as a directive and drops
    it, so "harvest:evidentia-qwen2.5-coder-1.5b-instruct:MadeOf" showed without its relation. Colons escaped."""
    return source.replace(":", "\\:")


def evidence_markdown(ev: Evidence, result: TurnResult) -> str:
    """What the side panel shows for one piece of evidence."""
    if ev.kind == "cell":
        table = next((e for e in result.evidence if e.kind == "table" and e.id == ev.id.split(":")[0]), None)
        body = f"**{ev.meta.get('header', '')}** = **{ev.text}**"
        if ev.meta.get("row_label"):
            body += f" (row: {ev.meta['row_label']})"
        body += f"\n\nTable: {source_markdown(ev.source)}, row {ev.meta.get('row')}, column {ev.meta.get('col')}"
        if ev.meta.get("where") and ev.meta["where"] != ev.source:  # the file, and a document's page
            body += f" ({source_markdown(ev.meta['where'])})"
        if table is not None:
            body += "\n\n" + highlight_table(table, result.cited)
        return body
    if ev.kind == "path":
        triples = ev.meta.get("triples") or []
        extracted = ev.meta.get("extracted_scores") or [None] * len(triples)
        lines = "\n".join(f"- {h} —{r}→ {t}" + (f" ({extraction_note(x)})" if x is not None else "")
                          for (h, r, t), x in zip(triples, extracted))
        origin = "; ".join(x for x in (ev.meta.get("provenance"), ev.meta.get("license") and
                                       f"license {ev.meta['license']}") if x)
        return f"**{ev.text}**\n\n{lines}\n\nSource: {source_markdown(ev.source)}{(' · ' + origin) if origin else ''}"
    meta = ev.meta
    if meta.get("paragraph") and meta.get("in_paragraph"):  # a document's sentence, shown in its paragraph
        a, b = meta["in_paragraph"]
        para = meta["paragraph"]
        body = f"{para[:a]}**{para[a:b].strip()}**{para[b:]}".replace("\n", " ")
        section = f" · section “{meta['section']}”" if meta.get("section") else ""
        return f"{body}\n\n— {source_markdown(ev.source)}{section}"
    where = ", ".join(str(x) for x in (meta.get("title") or "", meta.get("url") or meta.get("path") or "",
                                       meta.get("license") and f"license {meta['license']}") if x)
    return f"{ev.text}\n\n— {source_markdown(ev.source)}{(' · ' + where) if where else ''}"


def highlight_table(table: Evidence, cited: list[str]) -> str:
    """The collapsed table as Markdown, cited cells in bold."""
    cols: list[str] = table.meta.get("columns") or []
    rows: list[list[Any]] = table.meta.get("rows") or []
    if not cols or not rows:
        return table.text
    marked = {c.split(":")[1] for c in cited if c.startswith(table.id + ":")}
    row_numbers = table.meta.get("row_numbers") or list(range(1, len(rows) + 1))
    col_numbers = table.meta.get("col_numbers") or list(range(1, len(cols) + 1))
    out = ["| R | " + " | ".join(str(c) for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for rn, row in zip(row_numbers, rows[:50]):
        cells = [f"**{v}**" if f"R{rn}C{cn}" in marked else str(v) for cn, v in zip(col_numbers, row)]
        out.append(f"| {rn} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# --- uploads ---------------------------------------------------------------------------------------
async def handle_uploads(bot: Assistant, files: list) -> None:
    for f in files:
        path = Path(getattr(f, "path", "") or "")
        name = getattr(f, "name", path.name) or path.name
        suffix = Path(name).suffix.lower()
        if suffix in DOCUMENT_SUFFIXES:
            await add_document(bot, path, name)
            continue
        if suffix not in TABLE_SUFFIXES:
            await cl.Message(content=f"I can't read **{name}**: upload a table as CSV, TSV, XLSX, JSON, "
                                     "Markdown or an HTML page (one of its tables), a .txt/.md text, or a PDF or "
                                     "DOCX document.").send()
            continue
        if suffix in TEXT_SUFFIXES and not looks_like_table(path):
            try:
                text_notes: list[str] = []  # what reading the bytes assumed (encoding, bytes not UTF-8)
                text = await asyncio.to_thread(add_text_file, bot.deps, bot.session, path, name=name,
                                               notes=text_notes)
            except TableError as exc:
                await cl.Message(content=f"I could not add **{name}**: {exc}").send()
                continue
            warning = instructions_warning(name, text)
            await cl.Message(content=f"Added the text **{name}** ({len(text):,} characters) to this chat's "
                                     "search." + "".join(f"\n- {n}" for n in text_notes)
                                     + (f"\n\n⚠ {warning}" if warning else "")).send()
            continue
        try:
            table = await asyncio.to_thread(add_table_file, bot.deps, bot.session, path, name=name)
        except Exception as exc:  # noqa: BLE001 - every load problem is shown, nothing is lost
            await cl.Message(content=f"I could not load **{name}**: {exc}").send()
            continue
        await acknowledge_table(table, path, name)


def progress_bar(done: int, total: int, width: int = 20) -> str:
    filled = round(width * done / total) if total else 0
    return "▰" * filled + "▱" * (width - filled)


async def add_document(bot: Assistant, path: Path, name: str) -> None:
    """Read a PDF or DOCX upload (off the event loop, with a progress line), then say what was found: pages,
    text, each table with its page and a picture of it, and every assumption the reader made."""
    msg = cl.Message(content=f"Reading **{name}** …")
    await msg.send()
    loop = asyncio.get_running_loop()
    shown = {"at": 0.0}

    def progress(done: int, total: int) -> None:  # called from the reading thread
        now = time.monotonic()
        if done < total and now - shown["at"] < 0.5:
            return
        shown["at"] = now
        msg.content = f"Reading **{name}**: page {done:,} of {total:,} {progress_bar(done, total)}"
        asyncio.run_coroutine_threadsafe(msg.update(), loop)

    try:
        stored = await asyncio.to_thread(add_document_file, bot.deps, bot.session, path, name=name,
                                         progress=progress)
    except TableError as exc:  # DocumentError: one sentence; nothing was added
        msg.content = f"I could not read **{name}**: {exc}"
        await msg.update()
        return
    except Exception as exc:  # noqa: BLE001 - an unexpected failure is shown, the chat goes on
        msg.content = f"I could not read **{name}**: {type(exc).__name__}: {exc}"
        await msg.update()
        return
    lines = describe_document(stored).split("\n")
    content = lines[0].replace(name, f"**{name}**", 1) + "".join(f"\n- {n.strip()}" for n in lines[1:])
    tables = [t for t in stored.table_names if t]
    warning = instructions_warning(name, stored.document.text) if stored.document.text else ""
    if warning:
        content += f"\n\n⚠ {warning}"
    content += ("\n\nAsk about its text, or check a claim against " +
                (f"**{tables[0]}**" if len(tables) == 1 else "one of its tables") + ", e.g. “Is it true that …?”"
                if tables else "\n\nAsk me about its text; answers cite its pages.")
    elements = []
    for table_name in tables[:MAX_TABLE_PICTURES]:
        png = await asyncio.to_thread(table_picture, stored, table_name)
        if png:
            elements.append(cl.Image(name=f"{table_name} (as printed)", content=png, display="inline",
                                     size="medium"))
    msg.content = content
    msg.elements = elements
    await msg.update()


MAX_TABLE_PICTURES = 4


def _uploads() -> UploadRegistry:
    registry = cl.user_session.get("uploads")
    if registry is None:
        registry = UploadRegistry()
        cl.user_session.set("uploads", registry)
    return registry


async def acknowledge_table(table, path: Path, file_name: str) -> None:
    """The upload's reply: size, notes, a preview, and one button per other sheet of a workbook (or table of a page)."""
    import pandas as pd

    preview = pd.DataFrame(table.rows[:8], columns=preview_columns(table.columns))
    notes = "".join(f"\n- {n}" for n in table.notes)
    sheets = other_sheets(table)
    # A workbook's sheets, or an HTML page's or Markdown file's tables ("table 2 (Year, Cases)"): chosen alike.
    kind, holder = ("sheet", "workbook") if getattr(table, "sheet_kind", "sheet") != "table" else (
        "table", "page" if Path(file_name).suffix.lower() in (".html", ".htm") else "file")
    sheet_line = (f"\n{kind.capitalize()} **{table.sheet}** is loaded; the {holder} also has {', '.join(sheets)} "
                  "(the buttons below switch)." if sheets else "")
    # The browser gets an opaque id, never the server path: see assistant/ui/upload_registry.py.
    upload_id = _uploads().register(path, file_name, table.name, sheets) if sheets else ""
    actions = [cl.Action(name="choose_sheet", label=f"Use {kind} “{s}”", tooltip=f"Load {kind} {s} instead",
                         payload={"upload": upload_id, "sheet": s})
               for s in sheets]
    # Numbers read with one decimal mark (found in the file, or assumed and said in the notes): a button reads the
    # file again with the other one.
    other_mark = {",": ".", ".": ","}.get(getattr(table, "decimal", None) or "")
    if other_mark:
        decimal_id = upload_id or _uploads().register(path, file_name, table.name)
        word = "commas" if other_mark == "," else "points"
        actions.append(cl.Action(name="choose_decimal", label=f"Read with decimal {word}",
                                 tooltip=f"Load {file_name} again, its numbers read with decimal {word}",
                                 payload={"upload": decimal_id, "decimal": other_mark}))
    await cl.Message(
        content=(f"Loaded **{table.name}** — {table.title}: {len(table.rows):,} rows × {len(table.columns)} "
                 f"columns.{sheet_line}{notes}\n\nAsk me to check a claim against it, e.g. “Is it true that …?”"),
        elements=[cl.Dataframe(name=f"{table.name} preview", data=preview, display="inline")],
        actions=actions,
    ).send()


async def _read_upload_again(action, resolve, load_kwargs, failed: str) -> None:
    """A button that reads an upload again another way (another sheet or table, the other decimal mark): the
    button's payload resolved by ``resolve`` into (upload, choice), the file loaded with ``load_kwargs(bot, upload,
    choice)`` under the same table name. A forged or stale button reads nothing; a failed read keeps the old table."""
    try:
        bot = _assistant()
    except ConversationAccessError as exc:
        await _refuse_foreign_conversation(exc)
        return
    p = action.payload if isinstance(action.payload, dict) else {}
    try:
        upload, choice = resolve(p)
    except TableError as exc:
        await cl.Message(content=f"I could not {failed}: {exc}").send()
        return
    try:
        table = await asyncio.to_thread(add_table_file, bot.deps, bot.session, upload.path, name=upload.file_name,
                                        replace=upload.table, **load_kwargs(bot, upload, choice))
    except Exception as exc:  # noqa: BLE001 - e.g. the upload was cleaned up; the old reading stays loaded
        await cl.Message(content=f"I could not read **{upload.file_name}** again: {exc}. "
                                 f"The table **{upload.table}** is unchanged.").send()
        return
    await acknowledge_table(table, upload.path, upload.file_name)


@cl.action_callback("choose_sheet")
async def on_choose_sheet(action) -> None:
    await _read_upload_again(action, lambda p: _uploads().resolve(p.get("upload"), p.get("sheet")),
                             lambda bot, upload, sheet: {"sheet": sheet}, "switch sheets")


def _kept_part(bot, upload) -> dict:
    """The sheet or table the user is looking at: reading another table of a page again with the other decimal mark
    must not go back to the first one."""
    current = bot.session.tables.get(upload.table)
    return {"sheet": getattr(current, "sheet", None) if getattr(current, "sheet_names", None) else None}


@cl.action_callback("choose_decimal")
async def on_choose_decimal(action) -> None:
    await _read_upload_again(action, lambda p: _uploads().reading(p.get("upload"), p.get("decimal")),
                             lambda bot, upload, decimal: {**_kept_part(bot, upload), "decimal": decimal},
                             "read the file again")


@cl.on_message
async def on_message(message: cl.Message):
    try:
        bot = _assistant()
    except ConversationAccessError as exc:
        await _refuse_foreign_conversation(exc)
        return
    files = [e for e in (message.elements or []) if getattr(e, "path", None)]
    if files:
        await handle_uploads(bot, files)
    if not message.content.strip() or (files and presents_upload(message.content)):
        return  # "Here is my table": the acknowledgement answers it
    await answer(bot, message.content)


async def answer(bot: Assistant, text: str) -> None:
    """Run one turn and show it; a failed turn gets a Retry button (the question is already stored)."""
    ui = cl.user_session.get("ui_settings") or {}
    if "evidence_k" in ui:
        # Per conversation: the settings object is shared by every chat in this process.
        bot.session.evidence_k = int(ui["evidence_k"])
    await wait_for_model_server(bot.deps.settings)
    hooks = ChainlitHooks(show_steps=bool(ui.get("show_steps", bot.deps.settings.show_steps)))
    result = await bot.run_turn(text, hooks)
    await hooks.answer_start()
    msg = hooks.message
    cited = result.cited_evidence
    pictures, printed = await asyncio.to_thread(document_pictures, bot, cited)
    msg.elements = [evidence_element(ev, result, pictures.get(ev.id, "")) for ev in cited] + printed
    if result.status == "error":
        msg.content = f"⚠ {result.answer}"
        msg.actions = [retry_action(result.turn_id)]
    else:
        msg.content = ui_text(result.answer, result.cited)
    await msg.update()
    await close_evidence_panel()


async def close_evidence_panel() -> None:
    """Leave the evidence panel to the chips. Since Chainlit 2.11 the UI opens it by itself whenever side elements
    arrive, showing every side element of the conversation under the title of the last (Chainlit issue #2979, fix
    not released). Seen as a new user: after a second answer it listed the first answer's cells under the new
    answer's chip. 2.10 did not do this, but 2.12 fixes CVE-2026-45018 and -45019, so the pin stays and the panel
    is closed here; a chip still opens its own item."""
    await cl.ElementSidebar.set_elements([])


async def wait_for_model_server(settings: Settings, poll_s: float = 2.0) -> None:
    """While `evidentia run` restarts a crashed model server: say so, and hold the question until it is back."""
    path = status_path(settings.data_dir)
    status = await asyncio.to_thread(read_status, path)
    if status is None or status.state not in ("restarting", "failed"):
        return
    banner = cl.Message(content=f"⏳ {status.banner()}")
    await banner.send()
    deadline = time.monotonic() + settings.vllm_startup_timeout_s
    while status is not None and status.state == "restarting" and time.monotonic() < deadline:
        await asyncio.sleep(poll_s)
        status = await asyncio.to_thread(read_status, path)
    if status is not None and status.state == "failed":
        banner.content = f"⚠ {status.banner()}"
    else:
        banner.content = "✓ The model server is back; answering now."
    await banner.update()


def retry_action(turn_id: str | None) -> cl.Action:
    return cl.Action(name="retry", label="Retry", tooltip="Ask this question again", payload={"turn": turn_id or ""})


@cl.action_callback("retry")
async def on_retry(action) -> None:
    try:
        bot = _assistant()
    except ConversationAccessError as exc:
        await _refuse_foreign_conversation(exc)
        return
    turn_id = (action.payload or {}).get("turn") if isinstance(action.payload, dict) else None
    # Looked up in this conversation only: a forged id from another chat finds nothing.
    turns = await asyncio.to_thread(bot.deps.memory.turns, bot.session.conversation_id)
    turn = next((t for t in turns if t["id"] == turn_id), None)
    if turn is None:
        await cl.Message(content="That question is not in this conversation any more; ask it again.").send()
        return
    await cl.Message(content=turn["user_text"], author="You", type="user_message").send()
    await answer(bot, turn["user_text"])
