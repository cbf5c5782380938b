"""An uploaded PDF read for evidence: body text with the page, section and box of every word, and its tables.

A PDF is a program of sorts for a parser: it can claim two billion pages, inflate a 1 MB stream to gigabytes, nest
arrays until a recursive reader falls over, or loop its own object tree. So the parsing runs in a child process
(``python -m kb.pdf_reader PATH ...``) under an address-space and CPU limit, and the parent kills it at a
wall-clock deadline; the child streams ``{"progress": [i, n]}`` lines and ends with one line holding the result
(``ReadDocument`` as JSON) or the sentence that says why the file cannot be read. Every failure, including a crash
of the child, reaches the caller as a :class:`DocumentError` that names the file.

In the child, pypdfium2 opens the file first (it refuses passwords, counts pages and characters cheaply, and
finds embedded JavaScript and attachments, which are never run or opened), then pdfplumber gives the words with
their boxes and the tables. The body text is built from those words, so every word keeps its box: lines,
columns (left column first), paragraphs, headings, running headers and footers and page numbers dropped,
hyphenated line ends joined, and the reference list left out. Pages with no text layer are read by tesseract
when it is installed.

:func:`render_page_region` and :func:`render_table_image` draw a stretch of a page (a cited sentence,
highlighted, or a table) as PNG, so a user can check a citation against the page itself; they too run in a child
process, since drawing decodes images that reading the text never touched.

This module is the public face and the orchestration: the limits, the child process and its protocol, the ways a
reading fails mapped to a DocumentError, and the reading of one page after another. The work is done in private
modules with one job each: :mod:`kb._pdf_checks` (the file and its pages before parsing; JavaScript and
attachments), :mod:`kb._pdf_words` (words with boxes from pdfplumber, pdfium's text layer or OCR, grouped into
lines), :mod:`kb._pdf_tables` (tables and their grids), :mod:`kb._pdf_layout` (running lines, columns,
paragraphs and headings), :mod:`kb._pdf_text` (the text with its spans, and the document with its notes) and
:mod:`kb._pdf_render` (drawing part of a page).
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import math
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from kb._pdf_checks import (_active_content, _active_note, _check_file, _check_with_pdfium, _encrypted,
                            _open_pdfium, _open_plumber)
from kb._pdf_render import _line_runs, _render_request
from kb._pdf_tables import _find_tables
from kb._pdf_text import _assemble
from kb._pdf_words import _Page, _contains, _extract_words, _ocr, _pdfium_words, _take_words
from kb.document_model import Box, DocTable, DocumentError, ReadDocument

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PdfLimits:
    """What one reading may take: file size, pages, characters on a page (a denser page is skipped), wall-clock
    seconds, and address space of the child process in MB."""

    max_bytes: int = 50 * 1024**2
    max_pages: int = 500
    max_chars_per_page: int = 60_000
    timeout_s: float = 120.0
    max_memory_mb: int = 1500


# -- thresholds -----------------------------------------------------------------------------------------------
# The child process
CPU_GRACE_S = 2  # the CPU limit is the wall-clock limit plus this: the deadline normally fires first
POLL_S = 0.25  # how often the parent looks at the deadline while the child is quiet
STDERR_TAIL = 4000  # characters of the child's stderr kept for the log when it dies
RESULT_PREFIX = b'{"result": '  # the child's last line: this, the reading as JSON, "}"
RENDER_TIMEOUT_S = 30.0  # a person is waiting for the picture


# == the parent: the child process, and its answer ============================================================

def read_pdf(path: Path, *, name: str | None = None, limits: PdfLimits = PdfLimits(),
             progress: Callable[[int, int], None] | None = None) -> ReadDocument:
    """Read the PDF at ``path`` in a child process under ``limits``; ``progress(i, n)`` after each page.

    Raises :class:`DocumentError` (a sentence for the user, naming the file as ``name``) for anything it cannot
    read: not a PDF, too big, password-protected, too many pages, damaged, too slow, too greedy, no text."""
    path = Path(path)
    name = name or path.name
    _check_file(path, name, limits.max_bytes)
    tesseract = shutil.which("tesseract")
    final = _run_child(path, name, ["--tesseract", tesseract] if tesseract else [], limits, "read", progress)
    try:
        return ReadDocument.model_validate_json(final["result"])
    except (KeyError, ValueError) as exc:  # pragma: no cover - the child wrote something else
        raise _stopped(name, limits) from exc


def _run_child(path: Path, name: str, extra: list[str], limits: PdfLimits, verb: str,
               progress: Callable[[int, int], None] | None = None) -> dict:
    """Run ``python -m kb.pdf_reader`` on ``path`` under ``limits``, forward its progress lines, and return its
    last line (a dict holding "result" or "png"); every way it can fail is raised as a DocumentError."""
    root = Path(__file__).resolve().parent.parent  # the directory holding the kb package
    # "--name=..." keeps a name that starts with "-" a value; a NUL cannot travel in an argument at all
    cmd = [sys.executable, "-m", "kb.pdf_reader", str(path.resolve()), f"--name={name.replace(chr(0), '')}",
           "--max-pages", str(limits.max_pages), "--max-chars-per-page", str(limits.max_chars_per_page),
           "--timeout", repr(float(limits.timeout_s)), "--max-memory-mb", str(limits.max_memory_mb), *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p))
    # A session of its own: the kill at the deadline takes tesseract, if running, with it.
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(root), env=env, start_new_session=True)
    lines: queue.Queue[bytes | None] = queue.Queue()
    tail = _Tail()
    pumps = [threading.Thread(target=_pump_lines, args=(proc.stdout, lines), daemon=True),
             threading.Thread(target=tail.pump, args=(proc.stderr,), daemon=True)]
    for pump in pumps:
        pump.start()
    deadline = time.monotonic() + limits.timeout_s
    final: dict | None = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _too_slow(name, limits, verb)
            try:
                line = lines.get(timeout=min(left, POLL_S))
            except queue.Empty:
                continue
            if line is None:  # the child closed its output: it is done, or dead
                break
            if line.startswith(RESULT_PREFIX):  # parsed later, once, straight into the model
                final = {"result": line.rstrip()[len(RESULT_PREFIX):-1]}
                continue
            message = _decode(line)
            if message and "progress" in message:
                if progress is not None:
                    done, total = message["progress"]
                    progress(int(done), int(total))
            elif message:
                final = message
        try:
            rc = proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            raise _too_slow(name, limits, verb) from None
    finally:
        _kill(proc, pumps)
    return _outcome(final, rc, tail.text(), name, limits, verb)


def _pump_lines(stream, out: queue.Queue) -> None:
    try:
        for line in stream:
            out.put(line)
    finally:
        out.put(None)


class _Tail:
    """The last few thousand characters of a stream (the child's stderr), read to its end so it never blocks."""

    def __init__(self) -> None:
        self._buf = b""

    def pump(self, stream) -> None:
        for chunk in iter(lambda: stream.read(4096), b""):
            self._buf = (self._buf + chunk)[-STDERR_TAIL:]

    def text(self) -> str:
        return self._buf.decode("utf-8", "replace")


def _decode(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _kill(proc: subprocess.Popen, pumps: list[threading.Thread]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a killed process that will not go
        log.warning("the PDF reader process %s did not exit after SIGKILL", proc.pid)
    for pump in pumps:  # they end at the pipes' end of file, once the process group is gone
        pump.join(timeout=2)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _too_slow(name: str, limits: PdfLimits, verb: str = "read") -> DocumentError:
    return DocumentError(f"{name} took longer than {limits.timeout_s:g} s to {verb}, so it was stopped "
                         "(EVIDENTIA_DOCUMENT_TIMEOUT_S); it may be very large or damaged.")


def _too_greedy(name: str, limits: PdfLimits, verb: str = "read") -> DocumentError:
    return DocumentError(f"{name} needs more than {limits.max_memory_mb:,} MB of memory to {verb}, so it was "
                         "stopped; it may be damaged or built to exhaust readers.")


def _stopped(name: str, limits: PdfLimits) -> DocumentError:
    return DocumentError(f"{name} could not be read: the PDF reader stopped on it, so the file is probably damaged "
                         f"or needs more than the {limits.max_memory_mb:,} MB of memory a reading may take.")


def _outcome(final: dict | None, rc: int, stderr: str, name: str, limits: PdfLimits, verb: str) -> dict:
    """The child's answer, or the DocumentError that says why there is none, from its last line and exit."""
    if final and ("result" in final or "png" in final):  # written whole, whatever happened at exit
        return final
    if final and isinstance(final.get("error"), str):
        raise DocumentError(final["error"])
    if (final and final.get("failure") == "memory") or re.search(r"MemoryError|bad_alloc|[Oo]ut of memory", stderr):
        raise _too_greedy(name, limits, verb)
    if rc in (-signal.SIGXCPU, -signal.SIGKILL):  # the CPU limit (soft, then hard)
        raise _too_slow(name, limits, verb)
    log.warning("the PDF reader stopped on %s (exit %s): %s", name, rc, stderr[-1000:])
    raise _stopped(name, limits)


# == the child: limits, protocol, and the whole reading =======================================================

def _child_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Read a PDF under limits, or draw part of a page; print JSON "
                                                 "lines: progress, then the result.")
    parser.add_argument("path")
    parser.add_argument("--name")
    parser.add_argument("--max-pages", type=int, default=PdfLimits.max_pages)
    parser.add_argument("--max-chars-per-page", type=int, default=PdfLimits.max_chars_per_page)
    parser.add_argument("--timeout", type=float, default=PdfLimits.timeout_s)
    parser.add_argument("--max-memory-mb", type=int, default=PdfLimits.max_memory_mb)
    parser.add_argument("--tesseract", help="the tesseract program, to read pages without a text layer")
    parser.add_argument("--render", help="JSON: the region of a page to draw as PNG, instead of reading")
    args = parser.parse_args(argv)
    limits = PdfLimits(max_pages=args.max_pages, max_chars_per_page=args.max_chars_per_page,
                       timeout_s=args.timeout, max_memory_mb=args.max_memory_mb)
    name = args.name or Path(args.path).name
    _limit_self(limits)
    out = _protocol_stream()
    try:  # the libraries load under the memory limit too: a limit too low to load them is a memory failure
        import pdfplumber  # noqa: F401
        import pypdfium2  # noqa: F401
    except (ImportError, OSError, MemoryError):
        traceback.print_exc()
        out.write(json.dumps({"failure": "memory"}) + "\n")
        return 0
    logging.basicConfig(level=logging.ERROR)  # pdfminer warns on every oddity of a damaged file

    def emit(message: dict) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    try:
        if args.render:
            emit({"png": base64.b64encode(_render_request(Path(args.path), json.loads(args.render))).decode()})
        else:
            doc = _parse(Path(args.path), name, limits, args.tesseract, lambda i, n: emit({"progress": [i, n]}))
            out.write(RESULT_PREFIX.decode() + doc.model_dump_json() + "}\n")
    except DocumentError as exc:
        emit({"error": str(exc)})
    except MemoryError:
        emit({"failure": "memory"})
    except RecursionError:
        emit({"error": f"{name} could not be read: its structure is nested too deeply, so it is probably damaged."})
    except Exception:  # noqa: BLE001 - anything else a damaged file provokes is a refusal, not a crash
        traceback.print_exc()
        emit({"error": f"{name} could not be read; it looks damaged or is not a valid PDF."})
    out.flush()
    return 0


def _limit_self(limits: PdfLimits) -> None:
    import resource

    def cap(kind: int, soft: int, hard: int) -> None:
        _, current_hard = resource.getrlimit(kind)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        try:
            resource.setrlimit(kind, (soft, hard))
        except (ValueError, OSError):  # pragma: no cover - a platform that will not lower it
            log.warning("could not set resource limit %s", kind)

    memory = limits.max_memory_mb * 1024**2
    cap(resource.RLIMIT_AS, memory, memory)
    cpu = math.ceil(limits.timeout_s) + CPU_GRACE_S
    cap(resource.RLIMIT_CPU, cpu, cpu + CPU_GRACE_S)
    cap(resource.RLIMIT_CORE, 0, 0)  # a crash on a hostile file leaves no core file behind


def _protocol_stream():
    """A private copy of stdout for the JSON lines; fd 1 then points at stderr, so a library that prints (or
    C code that writes to fd 1) cannot corrupt the protocol."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", encoding="utf-8")


def _parse(path: Path, name: str, limits: PdfLimits, tesseract: str | None,
           progress: Callable[[int, int], None]) -> ReadDocument:
    import pypdfium2 as pdfium

    notes: list[str] = []
    pdf = _open_pdfium(path, name)
    try:
        count = len(pdf)
        if count == 0:
            raise DocumentError(f"{name} has no pages.")
        if count > limits.max_pages:
            raise DocumentError(f"{name} has {count:,} pages; the limit is {limits.max_pages:,} "
                                "(EVIDENTIA_PDF_MAX_PAGES). Upload the part you need.")
        if _encrypted(pdf):
            notes.append("the PDF is encrypted but opens without a password; it was read as it opens")
        plumber = _open_plumber(path, name)
        try:
            active = _active_content(pdf, plumber)
            pages = []
            for i in range(count):
                pages.append(_read_page(pdf, plumber, i, limits, tesseract))
                progress(i + 1, count)
        finally:
            if plumber is not None:
                plumber.close()
    except pdfium.PdfiumError as exc:
        raise DocumentError(f"{name} could not be read; it looks damaged.") from exc
    finally:
        pdf.close()
    if active:
        notes.append(_active_note(active))
    return _assemble(pages, name, tesseract, limits.max_chars_per_page, notes)


# -- one page ------------------------------------------------------------------------------------------------

def _read_page(pdf, plumber, index: int, limits: PdfLimits, tesseract: str | None) -> _Page:
    """Check the page with pdfium (area, character count, images), then read its words and tables with
    pdfplumber, or its words alone with pdfium where pdfminer fails on it, or by OCR. A page that fails is marked
    damaged; the others are still read."""
    page = _Page(number=index + 1)
    try:
        pdfium_page = pdf[index]
    except Exception:  # noqa: BLE001 - pdfium cannot load this page; pdfplumber may still
        pdfium_page = None
    try:
        has_images = _check_with_pdfium(pdfium_page, page, limits.max_chars_per_page)
        if page.status != "ok":
            return page
        _read_text_layer(plumber, index, pdfium_page, page, limits)
        if not page.words and not page.tables and page.status == "ok":
            page.status = "image" if has_images else "blank"
        if page.status == "image" and tesseract and pdfium_page is not None:
            _ocr(pdfium_page, page, tesseract, limits.timeout_s)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - a damaged page (RecursionError included) is skipped with a note
        log.debug("page %s could not be read", page.number, exc_info=True)
        page.status, page.words, page.tables = "damaged", [], []
    finally:
        if pdfium_page is not None:
            pdfium_page.close()
    return page


def _read_text_layer(plumber, index: int, pdfium_page, page: _Page, limits: PdfLimits) -> None:
    try:
        if plumber is None or index >= len(plumber.pages):
            raise LookupError("pdfminer cannot reach this page")
        _read_words_and_tables(plumber.pages[index], page, limits)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - pdfminer failed on this page: pdfium's text layer, without tables
        if pdfium_page is None:
            raise
        log.debug("pdfplumber failed on page %s; reading it with pdfium", page.number, exc_info=True)
        page.status, page.words, page.tables, page.plain = "ok", [], [], True
        width, height = pdfium_page.get_size()
        _take_words(_pdfium_words(pdfium_page), page, width, height)


def _read_words_and_tables(plumber_page, page: _Page, limits: PdfLimits) -> None:
    try:
        if len(plumber_page.chars) > limits.max_chars_per_page:  # pdfium could not count them
            page.status = "chars"
            return
        width, height = float(plumber_page.width), float(plumber_page.height)
        if width < 1 or height < 1:
            page.status = "no_area"
            return
        if plumber_page.rotation in (90, 270):  # pdfplumber's words are placed on the page as shown
            width, height = height, width
        _take_words(_extract_words(plumber_page), page, width, height)
        if page.direction == "ltr":
            page.tables = _find_tables(plumber_page, page)
            inside = [bbox for _grid, bbox in page.tables]
            in_table = [any(_contains(bbox, w.middle) for bbox in inside) for w in page.words]
            page.table_words = [w for w, t in zip(page.words, in_table) if t]
            page.words = [w for w, t in zip(page.words, in_table) if not t]
    finally:
        plumber_page.close()  # frees pdfplumber's caches of this page's objects


# == rendering =================================================================================================

def render_page_region(path: Path, page: int, boxes: list[Box], *, highlight: list[Box] = (), margin: float = 12,
                       scale: float = 2.0, limits: PdfLimits = PdfLimits()) -> bytes:
    """PNG of the part of ``page`` that holds ``boxes``: their union, ``margin`` points above and below, across
    the page's whole width (so a sentence is seen in its lines), with ``highlight`` boxes in translucent yellow.

    Drawn in a child process under ``limits`` like a reading: a page can hold an image built to exhaust memory
    that reading its text never decoded."""
    own = [b for b in boxes if b.page == page]
    band = [min(b.top for b in own), max(b.bottom for b in own)] if own else None
    marked = _line_runs([(b.x0, b.top, b.x1, b.bottom) for b in highlight if b.page == page])
    request = {"page": page, "band": band, "margin": margin, "scale": scale, "highlight": marked}
    return _render_in_child(Path(path), request, limits)


def render_table_image(path: Path, table: DocTable, *, scale: float = 2.0,
                       limits: PdfLimits = PdfLimits()) -> bytes:
    """PNG of the table's box on its page (drawn in a child process, as :func:`render_page_region`)."""
    if table.bbox is None or table.page is None:
        raise DocumentError(f"{table.label} has no place on a page to show.")
    b = table.bbox
    return _render_in_child(Path(path), {"page": table.page, "table": [b.x0, b.top, b.x1, b.bottom],
                                         "scale": scale}, limits)


def _render_in_child(path: Path, request: dict, limits: PdfLimits) -> bytes:
    """The request travels on the command line: a band, a few line boxes (word boxes merged) and numbers."""
    _check_file(path, path.name, limits.max_bytes)
    limits = replace(limits, timeout_s=min(limits.timeout_s, RENDER_TIMEOUT_S))
    final = _run_child(path, path.name, ["--render", json.dumps(request)], limits, "draw")
    return base64.b64decode(final["png"])


if __name__ == "__main__":
    sys.exit(_child_main())
