"""Terminal front ends over the same loop as the UI: ``evidentia ask``, ``evidentia chat``, ``evidentia run``."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import click

from assistant.answer.loop import Assistant
from assistant.answer.turn import Step, TurnHooks, TurnResult
from tools.contracts import Session
from assistant.settings import Settings

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]


class TerminalHooks(TurnHooks):
    """Steps as one-line summaries on stderr; the reply once, as checked, on stdout.

    What the model writes is a draft until the support check has read it: the check may leave statements out, re-cite
    them or abstain. Printed text cannot be taken back, so the draft is not printed: on a terminal, stderr counts its
    words as it grows, and :meth:`finish` prints the reply as checked. Seen as a new user: a reply the check had
    changed was printed twice, the second time under "Final answer:" (#78).
    """

    def __init__(self, show_steps: bool = True):
        self.show_steps = show_steps
        self.streamed = ""  # the draft of the current answer attempt
        self._counting = False  # stderr's last line is the draft's word count, rewritten in place

    def _end_line(self) -> None:
        """A step that starts while the draft is counted begins on a line of its own."""
        if self._counting:
            click.echo("", err=True)
            self._counting = False

    async def step_start(self, step: Step) -> None:
        if self.show_steps:
            self._end_line()
            click.secho(f"→ {step.name} …", fg="cyan", err=True)

    async def step_end(self, step: Step) -> None:
        if not self.show_steps:
            return
        self._end_line()
        if step.error:
            click.secho(f"  ✗ {step.name}: {step.error} ({step.duration_s:.1f} s)", fg="red", err=True)
        else:
            click.secho(f"  ✓ {step.name} ({step.duration_s:.1f} s): {summarize_output(step.output)}",
                        fg="cyan", err=True)

    async def answer_start(self) -> None:
        self.streamed = ""

    async def answer_token(self, token: str) -> None:
        self.streamed += token
        if self.show_steps and sys.stderr.isatty():  # a live count where one can be rewritten in place
            click.secho(f"\r  writing the answer: {len(self.streamed.split())} words", fg="cyan", err=True, nl=False)
            self._counting = True

    async def answer_discard(self, reason: str) -> None:
        if self.show_steps:
            self._end_line()
            click.secho(f"  [draft withdrawn: {reason}]", fg="yellow", err=True)
        self.streamed = ""

    def finish(self, answer: str) -> None:
        """Print the reply as checked, once."""
        self._end_line()
        if answer.strip():
            click.echo("\n" + answer.strip())
        self.streamed = answer


def summarize_output(output) -> str:
    """One line for a step: what decided it first (a named rule, the programs, the judge), then its output."""
    if output is None:
        return "nothing"
    data = output.model_dump(mode="json") if hasattr(output, "model_dump") else output
    text = json.dumps(data, ensure_ascii=False, default=str)
    text = text if len(text) < 240 else text[:237] + "…"
    decided = data.get("decided_by") if isinstance(data, dict) else None
    if not decided:
        return text
    fired = [r for r in data.get("rules_fired") or [] if f"rule:{r}" != decided]
    also = f" ({', '.join(fired)} also fired)" if fired else ""
    rewritten = data.get("rewritten_by") or []
    read_as = f", read by {', '.join(rewritten)}" if rewritten else ""
    annotated = data.get("annotated_by") or []
    noted = f", annotated by {', '.join(annotated)}" if annotated else ""
    return f"decided by {decided}{also}{read_as}{noted}; {text}"


def print_evidence(result: TurnResult, hooks: TerminalHooks | None = None) -> None:
    if hooks is not None and result.status != "error":
        hooks.finish(result.answer)
    click.echo("")
    status_colour = {"verified": "green", "unverified": "yellow", "cited_by_code": "yellow",
                     "error": "red"}.get(result.status, "white")
    click.secho(f"[{result.status}] {result.timings.get('total_s', 0):.1f} s", fg=status_colour, err=True)
    if result.status == "error":  # the same sentence the UI shows: what failed, where, what to do
        click.secho(result.answer, fg="red", err=True)
    cited = result.cited_evidence
    if cited:
        click.echo("\nEvidence cited:")
        for ev in cited:
            where = ev.meta.get("where") if ev.kind == "cell" else ""  # a cell's file, and a document's page
            source = ", ".join(x for x in (ev.source, where if where != ev.source else "") if x)
            click.echo(f"  [{ev.id}] {ev.text}" + (f"  — {source}" if source else ""))


def build(settings: Settings, conversation: str | None):
    from assistant.deps import Deps

    from memory.errors import ConversationAccessError

    deps = Deps(settings)
    user = os.environ.get("USER", "local")
    if conversation and deps.memory.conversation_user(conversation) == "local":
        # A chat from the UI's local mode (no accounts, no password) is the terminal user's too.
        from assistant.ui.auth import login_mode
        from memory.accounts import Accounts

        if login_mode(settings, Accounts(deps.memory.ui_db_path)) == "local":
            user = "local"
    session = Session(conversation or uuid.uuid4().hex, user=user)
    try:
        restore_session(deps, session)
        return deps, Assistant(deps, session)
    except ConversationAccessError as exc:
        raise click.ClickException(f"Conversation {session.conversation_id}: {exc}") from None


def refuse_exposed_ui(settings: Settings) -> None:
    """One clear message, and nothing started, when the UI would listen beyond this machine with no login (#79)."""
    from memory.store import Memory
    from assistant.ui.access import refuse_exposed_local_mode
    from assistant.ui.auth import login_mode
    from memory.accounts import Accounts

    mode = login_mode(settings, Accounts(Memory(settings.memory_path).ui_db_path))
    if (why := refuse_exposed_local_mode(mode, settings.chainlit_host)) is not None:
        raise click.ClickException(why)


def restore_session(deps, session: Session) -> None:
    """Uploaded tables and texts and the last table answer are part of the conversation: bring them back after a
    restart or in a new process (its owner's only)."""
    deps.memory.check_owner(session.conversation_id, session.user)
    session.texts = deps.memory.texts(session.conversation_id)
    from kb.document_model import StoredDocument

    for name, document_json, _path in deps.memory.documents(session.conversation_id):
        try:
            session.documents[name] = StoredDocument.model_validate_json(document_json)
        except ValueError:  # written by another version: its text is still searched, without pages
            log.warning("conversation %s: the reading of %s could not be restored", session.conversation_id, name)
    stored = deps.memory.tables(session.conversation_id)
    if not stored:
        return
    from kb.tables import Table
    from tools.contracts import TableAnswer

    for _name, table_json in stored:
        session.add_table(Table.model_validate_json(table_json))
    answer_json = deps.memory.table_answer(session.conversation_id)
    if answer_json:
        try:
            session.last_table_answer = TableAnswer.model_validate_json(answer_json)
        except ValueError:  # written by an older version: a follow-up then reads the question alone
            log.warning("conversation %s: its last table answer could not be read", session.conversation_id)


DECIMAL_MARKS = {"comma": ",", "point": "."}


def add_table_file(deps, session: Session, path: Path, sheet: str | None = None, decimal: str | None = None,
                   *, in_chat: bool = True) -> str:
    """Load a table file; the lines to show. ``decimal``: "comma" or "point" (None: read from the file). ``in_chat``:
    the hints name the chat's ``/table`` command, else ``evidentia ask``'s options."""
    from assistant.ui.uploads import add_table_file as add, describe

    replace = None
    if sheet is not None or decimal is not None:  # another sheet, or another reading, replaces it under its name
        replace = next((n for n, t in session.tables.items() if t.source == path.name), None)  # source: file name
    table = add(deps, session, path, sheet=sheet, replace=replace, decimal=DECIMAL_MARKS.get(decimal or ""))
    text = describe(table, how_to_switch=f'/table "{path}" SHEET loads another' if in_chat else
                    "--sheet SHEET loads another")
    if getattr(table, "decimal", None):  # its numbers were read with one decimal mark: say how to get the other
        other = "point" if table.decimal == "," else "comma"
        how = f'/table "{path}" --decimal {other}' if in_chat else f"--decimal {other}"
        text += f"\n  ({how} reads its numbers with decimal {other}s)"
    return text


def add_text(deps, session: Session, path: Path) -> str:
    """Add a text file to the conversation's search; the line to show (with the warning about text written as
    instructions to an AI system, as the web UI gives it)."""
    from assistant.ui.uploads import add_text_file
    from kb.instructions import instructions_warning

    notes: list[str] = []
    text = add_text_file(deps, session, path, notes=notes)
    warning = instructions_warning(path.name, text)
    return f"Added the text {path.name} ({len(text):,} characters) to this conversation's search." + "".join(
        f"\n  {n}" for n in notes) + (f"\nwarning: {warning}" if warning else "")


def add_doc(deps, session: Session, path: Path) -> str:
    """Read a PDF or DOCX into the conversation (its text searched with pages, its tables loaded); the lines to
    show. Long files show their progress on stderr."""
    from assistant.ui.uploads import add_document_file, describe_document
    from kb.instructions import instructions_warning

    shown = {"at": 0.0}

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if total >= PROGRESS_PAGES and (done == total or now - shown["at"] >= 0.5):
            shown["at"] = now
            click.echo(f"\rreading {path.name}: page {done:,} of {total:,}", err=True, nl=done == total)

    stored = add_document_file(deps, session, path, progress=progress)
    warning = instructions_warning(path.name, stored.document.text) if stored.document.text else ""
    return describe_document(stored) + (f"\nwarning: {warning}" if warning else "")


PROGRESS_PAGES = 10  # a shorter file is read before a progress line would help


def _command_arguments(line: str, command: str) -> list[str]:
    """The words after a ``/command`` (shell quoting: a quoted name may hold spaces)."""
    try:
        return shlex.split(line.split(" ", 1)[1] if " " in line else "")
    except ValueError as exc:
        raise click.ClickException(f"Could not read the /{command} command: {exc}") from exc


def parse_file_command(line: str, command: str) -> Path:
    """``/text PATH`` or ``/doc PATH`` (quote a path with spaces) -> the path of an existing file."""
    parts = _command_arguments(line, command)
    if len(parts) != 1:
        raise click.ClickException(f"Use /{command} PATH (quote a path with spaces).")
    if not Path(parts[0]).is_file():
        raise click.ClickException(f"No file {parts[0]}.")
    return Path(parts[0])


_DECIMAL_OPTION = re.compile(r"\s--decimal(?:=|\s+)(\S+)")


def split_decimal_option(line: str) -> tuple[str, str | None]:
    """``/table PATH [SHEET] --decimal comma|point`` -> the command without the option, and the mark's name."""
    m = _DECIMAL_OPTION.search(line)
    if m is None:
        return line, None
    if m.group(1) not in DECIMAL_MARKS:
        raise click.ClickException("Use --decimal comma or --decimal point.")
    return line[:m.start()] + line[m.end():], m.group(1)


def parse_table_command(line: str) -> tuple[Path, str | None]:
    """``/table PATH [SHEET]`` (quote a path or sheet with spaces) -> (path, sheet)."""
    parts = _command_arguments(line, "table")
    if not parts or len(parts) > 2:
        raise click.ClickException('Use /table PATH or /table PATH SHEET (quote names with spaces).')
    return Path(parts[0]), (parts[1] if len(parts) == 2 else None)


def load_table_command(deps, session: Session, line: str) -> str:
    """``/table PATH [SHEET] [--decimal comma|point]``: the lines to show."""
    rest, decimal = split_decimal_option(line)
    return add_table_file(deps, session, *parse_table_command(rest), decimal=decimal)


def server_problem(base_url: str) -> str | None:
    """None when the server lists its models; else what went wrong, in a few words ("" if unknown)."""
    import httpx

    from assistant.answer.turn import failure_reason

    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=3)
    except httpx.HTTPError as exc:
        return failure_reason(exc)
    return None if response.status_code == 200 else f"HTTP {response.status_code} from /models"


EXIT_MODEL_UNREACHABLE = 2


def ensure_llm(settings: Settings) -> None:
    """Reuse a running server; start nothing here (``evidentia run`` / ``model serve`` start it).

    No model: the UI's sentence, and exit code 2, so scripts can tell it from a bad question or file.
    """
    from assistant.llm import unreachable_message

    problem = server_problem(settings.effective_base_url)
    if problem is not None:
        detail = f" (Checked before asking: {problem}.)" if problem else ""
        click.secho(unreachable_message(settings.effective_base_url) + detail, fg="red", err=True)
        sys.exit(EXIT_MODEL_UNREACHABLE)


def exit_code(result: TurnResult) -> int:
    if result.status != "error":
        return 0
    return EXIT_MODEL_UNREACHABLE if result.error_kind == "llm_unavailable" else 1


def held_tables_line(session: Session) -> str:
    """The tables (and texts) a continued conversation already holds, which its questions may be routed to or
    searched in, or ``""``.

    Found as a new user: ``ask -c nu3`` answered from a trial-sites table loaded in an earlier session, and nothing
    on the screen said the conversation held it (chats survive a restart, so old ids keep their tables)."""
    parts = []
    if session.tables:
        held = "; ".join(f"{name} ({len(t.rows):,} rows × {len(t.columns)} columns)"
                         for name, t in session.tables.items())
        parts.append(f"{len(session.tables)} table{'s' * (len(session.tables) > 1)}: {held}")
    if session.texts:
        parts.append(f"{len(session.texts)} uploaded text{'s' * (len(session.texts) > 1)}, searched beside the "
                     f"knowledge base: {', '.join(name for name, _ in session.texts)}")
    return f"This conversation already holds {' and '.join(parts)}." if parts else ""


def print_history(deps, session: Session, last: int = 3) -> None:
    """On continuing a conversation: its last turns, and what to do about one that did not finish."""
    turns = deps.memory.turns(session.conversation_id, limit=last)
    for t in turns:
        click.secho(f"you> {t['user_text']}", dim=True)
        shown = t["error"] if t["status"] in ("error", "interrupted") else t["answer"]
        click.secho(f"[{t['status']}] {shown}", dim=True, fg="red" if t["status"] in ("error", "interrupted")
                    else None)
    if turns and turns[-1]["status"] in ("error", "interrupted"):
        click.secho("The last question did not finish. Type /retry to ask it again.", fg="yellow")
    if held := held_tables_line(session):
        click.secho(held + " /tables lists them.", dim=True)


def chat_turns(runner: asyncio.Runner, deps, bot) -> None:
    """Read and answer lines until /quit or end of input, every turn on ``runner``'s one event loop."""
    while True:
        try:
            line = click.prompt("you", prompt_suffix="> ", default="", show_default=False)
        except (EOFError, click.Abort):
            break
        line = line.strip()
        if not line:
            continue
        if line in ("/quit", "/exit"):
            break
        loaders = {"/table": lambda: load_table_command(deps, bot.session, line),
                   "/doc": lambda: add_doc(deps, bot.session, parse_file_command(line, "doc")),
                   "/text": lambda: add_text(deps, bot.session, parse_file_command(line, "text"))}
        if (load := loaders.get(line.partition(" ")[0])) is not None:
            try:
                click.echo(load())
            except Exception as exc:  # noqa: BLE001 - show any load problem and keep chatting
                click.secho(str(exc), fg="red")
            continue
        if line == "/tables":
            click.echo(", ".join(bot.session.tables) or "no tables")
            continue
        if line == "/retry":
            failed = deps.memory.last_failed_turn(bot.session.conversation_id)
            if failed is None:
                click.echo("Nothing to retry: the last turn finished.")
                continue
            line = failed["user_text"]
            click.secho(f"retrying: {line}", fg="cyan", err=True)
        hooks = TerminalHooks()
        result = runner.run(bot.run_turn(line, hooks))
        print_evidence(result, hooks)


def register(main: click.Group) -> None:
    @main.command()
    @click.argument("question")
    @click.option("--conversation", "-c", help="Continue this conversation id.")
    @click.option("--table", "tables", multiple=True, type=click.Path(exists=True, path_type=Path),
                  help="A table file to check claims against (CSV, TSV, XLSX, JSON, Markdown, HTML).")
    @click.option("--sheet", help="The workbook sheet, or the HTML page's or Markdown file's table, to load from "
                                  "--table (its name, 'table N', or a 0-based number).")
    @click.option("--decimal", type=click.Choice(sorted(DECIMAL_MARKS)),
                  help="The decimal mark of --table's numbers (CSV, TSV): by default read from the file, and the "
                       "notes say what was assumed.")
    @click.option("--text", "texts", multiple=True, type=click.Path(exists=True, path_type=Path),
                  help="A .txt or .md text to search beside the knowledge base (kept with the conversation).")
    @click.option("--doc", "docs", multiple=True, type=click.Path(exists=True, path_type=Path),
                  help="A PDF or DOCX: its text is searched with pages, its tables checked (kept with the "
                       "conversation).")
    @click.option("--quiet", is_flag=True, help="Do not show the steps.")
    def ask(question: str, conversation: str | None, tables: tuple[Path, ...], sheet: str | None,
            decimal: str | None, texts: tuple[Path, ...], docs: tuple[Path, ...], quiet: bool) -> None:
        """Ask one question; print the cited answer and its evidence.

        Exit codes: 0 answered, 1 a bad table or a failed turn, 2 no language model answers.
        """
        from kb.tables import TableError

        settings = Settings()
        deps, bot = build(settings, conversation)
        if conversation and (held := held_tables_line(bot.session)):
            click.echo(held, err=True)
        # The tables first: a broken file is reported at once, whether or not a model is running.
        for path in tables:
            try:
                click.echo(add_table_file(deps, bot.session, path, sheet=sheet, decimal=decimal, in_chat=False),
                           err=True)
            except TableError as exc:
                raise click.ClickException(f"{path.name}: {exc}") from None
        for path in texts:
            try:
                click.echo(add_text(deps, bot.session, path), err=True)
            except TableError as exc:
                raise click.ClickException(f"{path.name}: {exc}") from None
        for path in docs:
            try:
                click.echo(add_doc(deps, bot.session, path), err=True)
            except TableError as exc:  # DocumentError: the message names the file
                raise click.ClickException(str(exc)) from None
        ensure_llm(settings)
        hooks = TerminalHooks(show_steps=not quiet)
        result = asyncio.run(bot.run_turn(question, hooks))
        print_evidence(result, hooks)
        click.echo(f"\n(conversation {bot.session.conversation_id})", err=True)
        sys.exit(exit_code(result))

    @main.command()
    @click.option("--conversation", "-c", help="Continue this conversation id.")
    def chat(conversation: str | None) -> None:
        """Chat in the terminal. Commands: /table PATH [SHEET] [--decimal comma|point], /text PATH, /doc PATH,
        /tables, /retry, /quit."""
        settings = Settings()
        deps, bot = build(settings, conversation)
        if conversation:  # shown even with no model: what was asked, and what did not finish
            print_history(deps, bot.session)
        ensure_llm(settings)
        click.echo(f"Evidentia — conversation {bot.session.conversation_id}. /quit to leave.")
        # One event loop for every turn: the LLM client's pooled connections belong to the loop that opened them
        # (a loop per turn failed every turn after the first with "Event loop is closed").
        with asyncio.Runner() as runner:
            chat_turns(runner, deps, bot)

    @main.command()
    @click.option("--no-kb", is_flag=True, help="Skip building the default knowledge base.")
    def run(no_kb: bool) -> None:
        """Install what is missing, start the model server and the UI, and print the URL."""
        from assistant.model.provision import ProvisionError
        from assistant.model.serving import ServingError, ensure_server
        from assistant.model.supervisor import Supervisor, status_path
        from assistant.ui.auth import start_url
        from memory.accounts import Accounts
        from memory.store import Memory

        settings = Settings()
        refuse_exposed_ui(settings)  # before anything is installed or started
        if not no_kb:
            ensure_default_kb(settings)
        try:  # installs the model (and a chosen quantized format) first if needed; reuses a running server
            server = ensure_server(settings)
        except (ServingError, ProvisionError) as exc:
            raise click.ClickException(str(exc)) from exc
        # Only a server this command started is ours to watch and restart.
        supervisor = (Supervisor(server.server, status_path(settings.data_dir),
                                 say=lambda m: click.secho(m, fg="yellow", err=True)).start()
                      if server.server else None)
        proc = None
        try:
            env = dict(os.environ)
            env["EVIDENTIA_LLM_BASE_URL"] = server.base_url
            env["EVIDENTIA_LLM_MODEL"] = server.model
            cmd = [sys.executable, "-m", "chainlit", "run", str(ROOT / "assistant" / "ui" / "app.py"), "--headless",
                   "--host", settings.chainlit_host, "--port", str(settings.chainlit_port)]
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
            url = start_url(settings, Accounts(Memory(settings.memory_path).ui_db_path))  # local mode: with its key
            click.secho(f"\nEvidentia is starting at {url}  (Ctrl-C stops the UI and the model server)\n",
                        fg="green", bold=True)
            proc.wait()
        except KeyboardInterrupt:
            pass
        finally:  # also on SIGTERM, which arrives as SystemExit
            shut_down(proc, server, supervisor)


def shut_down(ui: subprocess.Popen | None, server, supervisor=None) -> None:
    """Stop the UI and the model server together, within 10 s even if either ignores SIGTERM.

    The supervisor goes first, so the server's exit is not taken for a crash and restarted; the UI is
    signalled before the model server is stopped, so the two wait at the same time, not one after the other.
    ``server`` is the ``ServerHandle`` of ``ensure_server``: it stops only a server this command started.
    """
    from assistant.model.serving import STOP_GRACE_S

    t0 = time.monotonic()
    if supervisor is not None:
        supervisor.stop(join_s=0.0)
    if ui is not None and ui.poll() is None:
        ui.terminate()
    server.stop()  # SIGTERM to vLLM's process group, STOP_GRACE_S, then SIGKILL
    if ui is not None and ui.poll() is None:
        try:
            ui.wait(timeout=max(0.5, STOP_GRACE_S - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            ui.kill()
            ui.wait(timeout=5)


def ensure_default_kb(settings: Settings) -> None:
    """Build the default text KB and KGs once, from the configured mirror (or upstream).

    Stops with one message, before building anything, when a source can be had neither from the mirror nor by
    download: a KB built from none or some of them would answer as if it were whole ("KB: 0 sentences").
    """
    from assistant.deps import Deps
    from kb.default_corpus import KG_MIRROR_FOLDERS, missing_default_sources, missing_sources_message

    empty = Deps(settings).empty_sources()
    if not empty:
        return
    missing = missing_default_sources(settings, text="text" in empty, kgs="kg" in empty)
    if missing:
        raise click.ClickException(missing_sources_message(missing))
    # (what to say first, or None; the `evidentia` command) for each store still empty
    steps: list[tuple[str | None, list[str]]] = []
    if "text" in empty:
        steps.append(("Building the default knowledge base (first run only)…", ["kb", "build", "--default"]))
    if "kg" in empty:
        say = "Loading the default knowledge graphs (first run only)…"
        for name in KG_MIRROR_FOLDERS:
            steps.append((say, ["kb", "kg", "load", name]))
            say = None
    for say, args in steps:
        if say:
            click.echo(say, err=True)
        if subprocess.run([sys.executable, "-m", "assistant.cli", *args], check=False).returncode != 0:
            raise click.ClickException(f"`evidentia {' '.join(args)}` failed (its message is above); "
                                       "fix that, or start with --no-kb.")