"""Layout facts of the report page measured in a real browser, and of its PDF measured on the
printed pages (issue 28): the helpers of ``tests/cards/test_page_layout.py``.

Every fact is a number or a list the test asserts on and prints, so a failure says what was
measured: the narrowest table cell in characters of its own font, what sticks out of a phone's
width, the rendered size of the charts' text, literal Markdown left in the visible text, how full
each printed page is and whether a repeated table header is an empty bar.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

CSP_WATCH = ("window.__csp = []; document.addEventListener('securitypolicyviolation', "
             "e => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));")
"""An init script: every Content-Security-Policy violation of the page, collected in ``window.__csp``."""

OPEN_ALL = "document.querySelectorAll('details').forEach(d => { d.open = true; })"
"""Opens every collapsed section (what printing does), so the measures see all the text."""

_CELLS = """() => {
  const canvas = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const cell of document.querySelectorAll('td, th')) {
    const box = cell.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (!cell.textContent.trim()) continue;
    const style = getComputedStyle(cell);
    canvas.font = style.font;
    const ch = canvas.measureText('0').width;
    const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const table = cell.closest('table');
    out.push({table: table.id || table.className, chars: inner / ch,
              text: cell.textContent.trim().slice(0, 30)});
  }
  return out;
}"""

_OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.closest('table, .scroll, nav.toc, script, style, head')) continue;
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.right > width + 0.5 || box.left < -0.5) {
      if (getComputedStyle(el).position === 'absolute' && box.right < 0) continue;  // the skip link, off screen
      out.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + el.className : '')
               + ' ' + Math.round(box.left) + '..' + Math.round(box.right));
    }
  }
  return {scrollWidth: document.documentElement.scrollWidth, width: width, offenders: out.slice(0, 20)};
}"""

_VISIBLE_MARKDOWN = r"""() => {
  const text = document.body.innerText;
  const found = [];
  for (const m of text.matchAll(/\*\*|`[^`\n]*`/g)) found.push(text.slice(Math.max(0, m.index - 30), m.index + 40));
  return found.slice(0, 10);
}"""

_CHART_BOXES = """() => Array.from(document.querySelectorAll('figure.chart img')).map(img => ({
  name: img.closest('figure').id, src: img.getAttribute('src'), width: img.getBoundingClientRect().width,
  natural: img.naturalWidth}))"""

_SVG_TEXT = """() => {
  const svg = document.documentElement;
  const width = svg.getBoundingClientRect().width;
  const sizes = [];
  for (const text of svg.querySelectorAll('text')) {
    if (!text.textContent.trim()) continue;
    const m = text.getScreenCTM();
    const scale = Math.sqrt(m.a * m.a + m.b * m.b);
    sizes.push({text: text.textContent.trim().slice(0, 20),
                px: parseFloat(getComputedStyle(text).fontSize) * scale});
  }
  return {width: width, sizes: sizes};
}"""


@dataclass
class ChartText:
    """The smallest text of one chart as shown: its font size in CSS pixels on the page."""

    name: str
    shown_width: float
    smallest_px: float
    smallest_text: str


@dataclass
class PageFacts:
    """What one page measured at one viewport width."""

    viewport: int
    height: int = 0
    narrowest_cell: tuple[float, str, str] = (999.0, "", "")
    """Characters (of ``0`` in the cell's font) of the narrowest table cell, its table and its text."""
    scroll_width: int = 0
    outside: list[str] = field(default_factory=list)
    """Elements outside tables that stick out of the viewport."""
    charts: list[ChartText] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)
    """Literal ``**`` or backtick pairs in the visible text (with some context)."""


def measure(page: Any, viewport: int, *, context: Any) -> PageFacts:
    """Measure the open page (Playwright) at ``viewport`` px wide; sections collapsed for the height,
    opened for the rest. ``context`` draws each SVG chart alone to read its text sizes."""
    page.set_viewport_size({"width": viewport, "height": 900})
    facts = PageFacts(viewport=viewport)
    facts.height = page.evaluate("document.documentElement.scrollHeight")
    page.evaluate(OPEN_ALL)
    cells = page.evaluate(_CELLS)
    if cells:
        narrow = min(cells, key=lambda c: c["chars"])
        facts.narrowest_cell = (round(narrow["chars"], 1), narrow["table"], narrow["text"])
    overflow = page.evaluate(_OVERFLOW)
    facts.scroll_width, facts.outside = overflow["scrollWidth"], overflow["offenders"]
    facts.markdown = page.evaluate(_VISIBLE_MARKDOWN)
    facts.charts = [_chart_text(box, context) for box in page.evaluate(_CHART_BOXES)]
    return facts


def _chart_text(box: dict[str, Any], context: Any) -> ChartText:
    """The chart's text sizes as the page shows it: an SVG is opened alone in the browser and its
    text sizes scaled by the width the page gives it; a PNG's text is known from how it was drawn
    (9 pt at 120 dpi, the card charts' smallest)."""
    src: str = box["src"]
    if src.startswith("data:image/svg+xml;base64,"):
        svg = base64.b64decode(src.split(",", 1)[1])
        page = context.new_page()
        try:
            page.set_content("")
            page.goto("data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii"))
            drawn = page.evaluate(_SVG_TEXT)
        finally:
            page.close()
        scale = box["width"] / drawn["width"]
        smallest = min(drawn["sizes"], key=lambda s: s["px"])
        return ChartText(box["name"], box["width"], round(smallest["px"] * scale, 1), smallest["text"])
    scale = box["width"] / max(box["natural"], 1)
    return ChartText(box["name"], box["width"], round(9 / 72 * 120 * scale, 1), "(png, 9 pt)")


@dataclass
class PdfFacts:
    """The printed pages: how far down each is filled, and repeated table headers without text."""

    pages: int
    fill: list[float]
    """Per page: the share of the printable height above the lowest ink."""
    empty_header_bars: list[int]
    """Pages holding a header-coloured bar with no text in it."""


HEADER_GREY = (0xF6, 0xF8, 0xFA)
"""``--soft`` of page.css, the key-PR table's header background."""
EMPTY_BAR_ROWS = 12
"""At 80 dpi: a header row's padding above its text is about 6 rows; an empty header about 30."""
MARGIN_MM = 14.0
"""The top and bottom page margins of page.css's ``@page``."""


def pdf_images(pdf: bytes, *, dpi: int = 80) -> list[Image.Image]:
    """Every page of ``pdf`` as an RGB image (PDFium)."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        return [document[i].render(scale=dpi / 72).to_pil().convert("RGB") for i in range(len(document))]
    finally:
        document.close()


def pdf_facts(images: list[Image.Image]) -> PdfFacts:
    """How full each printed page is and which pages hold an empty header bar (see :class:`PdfFacts`)."""
    import numpy as np

    fill = []
    bars = []
    for number, image in enumerate(images, 1):
        pixels = np.asarray(image, dtype=np.int16)
        height = pixels.shape[0]
        margin = round(height * MARGIN_MM / 297)
        ink = np.flatnonzero((pixels.sum(axis=2) < 3 * 200).any(axis=1))
        lowest = int(ink.max()) if ink.size else margin
        fill.append(round((lowest - margin) / (height - 2 * margin), 2))
        if _empty_bar(pixels):
            bars.append(number)
    return PdfFacts(pages=len(images), fill=fill, empty_header_bars=bars)


def _empty_bar(pixels: Any) -> bool:
    """A band of header grey across the middle half of the page, :data:`EMPTY_BAR_ROWS` rows or more
    high, with nothing written in it (a header with its text has rows where the text breaks the grey)."""
    import numpy as np

    width = pixels.shape[1]
    middle = pixels[:, width // 4: 3 * width // 4]
    grey = (np.abs(middle - np.array(HEADER_GREY, dtype=np.int16)) <= 3).all(axis=2).mean(axis=1) > 0.97
    run = 0
    for row in grey:
        run = run + 1 if row else 0
        if run >= EMPTY_BAR_ROWS:
            return True
    return False


def save_pdf_pages(images: list[Image.Image], folder: Path, stem: str) -> list[Path]:
    paths = []
    for number, image in enumerate(images, 1):
        path = folder / f"{stem}-pdf-{number:02d}.png"
        image.save(path)
        paths.append(path)
    return paths

