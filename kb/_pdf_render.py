"""Drawing part of a PDF page as PNG: a band of a page with its cited lines highlighted, or a table's box.

The drawing runs in the child process (:func:`kb.pdf_reader.render_page_region` and
:func:`kb.pdf_reader.render_table_image` start it), since it decodes what reading never touches: the page's
images, through pdfium's renderer. It is apart from the reading because it needs none of the parsing or layout,
only the mapping from the reader's coordinates (from the media box's top left, as pdfplumber gives them) to the
page as drawn (turned by its /Rotate, cut to its crop box), and a cap on the size of the bitmap.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

from kb.document_model import DocumentError

MAX_RENDER_PIXELS = 40_000_000  # a page (or region) is drawn smaller rather than as a bigger bitmap than this
HIGHLIGHT_RGBA = (255, 220, 0, 96)  # translucent yellow


def _render_request(path: Path, request: dict) -> bytes:
    """In the child: the PNG a render request asks for."""
    page, scale = int(request["page"]), float(request["scale"])
    with _Shown(path, page) as shown:
        if "table" in request:
            x0, top, x1, bottom = shown.frame(request["table"])
            return shown.png((max(x0, 0.0), max(top, 0.0), min(x1, shown.width), min(bottom, shown.height)), [],
                             scale)
        margin = float(request["margin"])
        if request["band"]:
            band_top, band_bottom = request["band"]
            _x0, top, _x1, bottom = shown.frame([0.0, band_top, 0.0, band_bottom])
            top, bottom = top - margin, bottom + margin
        else:
            top, bottom = 0.0, shown.height
        region = (0.0, max(top, 0.0), shown.width, min(bottom, shown.height))
        return shown.png(region, [shown.frame(b) for b in request["highlight"]], scale)


def _line_runs(boxes: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Word boxes side by side on one line merged into one, so a highlighted sentence reads as a band, not as
    words with gaps between them."""
    runs: list[list[float]] = []
    for x0, top, x1, bottom in boxes:  # in reading order
        if runs:
            r = runs[-1]
            same_line = min(r[3], bottom) - max(r[1], top) > 0.5 * min(r[3] - r[1], bottom - top)
            if same_line and -1 <= x0 - r[2] <= (bottom - top):
                runs[-1] = [r[0], min(r[1], top), max(r[2], x1), max(r[3], bottom)]
                continue
        runs.append([x0, top, x1, bottom])
    return [tuple(r) for r in runs]


class _Shown:
    """A page opened with pdfium to be drawn: its size as shown (turned by its /Rotate), and the shift from the
    reader's coordinates (from the media box's top left, as pdfplumber gives them) to the drawn page's (from the
    crop box's). Closed on exit."""

    def __init__(self, path: Path, page: int) -> None:
        self.path, self.number = Path(path), page

    def __enter__(self) -> "_Shown":
        import pypdfium2 as pdfium

        try:
            self.pdf = pdfium.PdfDocument(str(self.path))
        except pdfium.PdfiumError as exc:
            raise DocumentError(f"{self.path.name} could not be opened to show a page.") from exc
        if not 1 <= self.number <= len(self.pdf):
            self.pdf.close()
            raise DocumentError(f"{self.path.name} has no page {self.number}.")
        self.page = self.pdf[self.number - 1]
        self.width, self.height = self.page.get_size()
        self.shift = (0.0, 0.0)
        if self.page.get_rotation() in (90, 270):
            self.width, self.height = self.height, self.width
        elif self.page.get_rotation() == 0:
            media, crop = self.page.get_mediabox(), self.page.get_cropbox()
            self.shift = (crop[0] - media[0], media[3] - crop[3])
        return self

    def __exit__(self, *exc) -> None:
        self.page.close()
        self.pdf.close()

    def frame(self, box: list[float]) -> tuple[float, float, float, float]:
        """``[x0, top, x1, bottom]`` as the reader gives them, on the page as drawn."""
        dx, dy = self.shift
        x0, top, x1, bottom = box
        return x0 - dx, top - dy, x1 - dx, bottom - dy

    def png(self, region: tuple[float, float, float, float], highlight: list[tuple[float, float, float, float]],
            scale: float) -> bytes:
        from PIL import Image, ImageDraw

        x0, top, x1, bottom = region
        if x1 - x0 < 1 or bottom - top < 1:
            raise DocumentError(f"The region of page {self.number} to show is empty.")
        scale = min(scale, math.sqrt(MAX_RENDER_PIXELS / ((x1 - x0) * (bottom - top))))
        bitmap = self.page.render(scale=scale, crop=(x0, self.height - bottom, self.width - x1, top))
        image = bitmap.to_pil().convert("RGBA")
        if highlight:
            overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
            draw = ImageDraw.Draw(overlay)
            for hx0, htop, hx1, hbottom in highlight:
                draw.rectangle([(hx0 - x0) * scale, (htop - top) * scale, (hx1 - x0) * scale,
                                (hbottom - top) * scale], fill=HIGHLIGHT_RGBA)
            image = Image.alpha_composite(image, overlay)
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG")
        return out.getvalue()
