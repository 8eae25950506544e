"""The page looked at in a real browser (issue 28): verl 2026-W16 compared with the weeks before and a
quiet week of axolotl (PRs mostly without descriptions), in Chinese and English, rendered by Debian's
Chromium at 1280 and 390 px wide and printed to PDF. The layout facts are measured in the browser and
on the printed pages (``page_layout.py``):

- no table cell narrower than 8 characters of its own font, at either width;
- no horizontal scroll on a phone outside the tables;
- every chart's text at least 11 px high on a phone;
- no literal ``**`` or backtick pair in the visible text;
- every printed page but the last at least half full, and no repeated table header printed empty;
- no request at all and no Content-Security-Policy violation;
- verl's desktop page, its long sections collapsed, under 6,000 px tall.

The screenshots (desktop and phone, whole and in part, and every PDF page) are written to
``$PRHUB_PAGE_SHOTS`` when set (a developer looks at them; ``verl-W16-zh-desktop-top.png`` and
``verl-W16-zh-phone-key-prs.png`` are the pictures of ``docs/``), else to a temporary folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from page_layout import CSP_WATCH, measure, pdf_facts, pdf_images, save_pdf_pages
from page_support import browser, chromium_path, compared_w16, quiet_axolotl

from bot.cards.html import render_html
from bot.cards.pdf import print_pdf
from bot.models import Digest

MIN_CELL_CHARS = 8.0
MIN_CHART_TEXT_PX = 11.0
MAX_DESKTOP_PX = 6000
MIN_PAGE_FILL = 0.5

CASES: dict[str, tuple[Callable[..., Digest], str, str]] = {
    "verl-W16-zh": (compared_w16, "verl_settings", "zh"),
    "verl-W16-en": (compared_w16, "verl_settings", "en"),
    "axolotl-W11-zh": (quiet_axolotl, "default_settings", "zh"),
    "axolotl-W11-en": (quiet_axolotl, "default_settings", "en"),
}


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("PRHUB_PAGE_SHOTS", "").strip()
    folder = Path(configured) if configured else tmp_path_factory.mktemp("page-shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(context: Any, path: Path, width: int) -> tuple[Any, list[str]]:
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    problems: list[str] = []
    page.add_init_script(CSP_WATCH)
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith(("file:", "data:"))
            else None)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems


@pytest.mark.parametrize("case", list(CASES))
def test_the_page_reads_at_desktop_and_phone_width_and_prints(case: str, shots: Path,
                                                              request: pytest.FixtureRequest) -> None:
    build, settings_fixture, language = CASES[case]
    digest = build(request.getfixturevalue(settings_fixture), language)
    html = render_html(digest)
    path = shots / f"{case}.html"
    path.write_text(html, encoding="utf-8")
    with browser() as context:
        desktop, problems = _open(context, path, 1280)
        desktop.screenshot(path=str(shots / f"{case}-desktop.png"), full_page=True)
        desktop.set_viewport_size({"width": 1280, "height": 1600})
        desktop.screenshot(path=str(shots / f"{case}-desktop-top.png"))  # docs/verl-2026-W16-page.png
        wide = measure(desktop, 1280, context=context)
        csp = desktop.evaluate("window.__csp")
        phone, phone_problems = _open(context, path, 390)
        phone.screenshot(path=str(shots / f"{case}-phone.png"), full_page=True)
        narrow = measure(phone, 390, context=context)
        phone.set_viewport_size({"width": 390, "height": 1100})
        phone.evaluate("document.getElementById('key-prs').scrollIntoView()")
        phone.screenshot(path=str(shots / f"{case}-phone-key-prs.png"))  # docs/verl-2026-W16-phone.png
        csp += phone.evaluate("window.__csp")
    printed = pdf_images(print_pdf(render_html(digest, expanded=True), chromium=chromium_path()))
    save_pdf_pages(printed, shots, case)
    paper = pdf_facts(printed)
    print(f"\n{case}: desktop {wide.height}px, narrowest cell {wide.narrowest_cell} / phone {narrow.narrowest_cell}, "
          f"phone scroll width {narrow.scroll_width}, chart text on a phone "
          f"{[(c.name, c.smallest_px) for c in narrow.charts]}, PDF {paper.pages} pages filled {paper.fill}; "
          f"shots in {shots}")

    assert problems == []
    assert phone_problems == []
    assert csp == []
    assert wide.markdown == []
    assert narrow.markdown == []
    for facts in (wide, narrow):
        assert facts.narrowest_cell[0] >= MIN_CELL_CHARS, f"{facts.viewport}px: {facts.narrowest_cell}"
    assert narrow.scroll_width <= 390
    assert narrow.outside == []
    assert [c.name for c in narrow.charts] == ["chart-weekly", "chart-labels", "chart-verdicts"]
    for chart in narrow.charts:
        assert chart.smallest_px >= MIN_CHART_TEXT_PX, chart
    assert paper.empty_header_bars == []
    assert all(fill >= MIN_PAGE_FILL for fill in paper.fill[:-1]), paper.fill
    if case.startswith("verl"):
        assert len(digest.key_prs) >= 10  # the table, its phone cards and its printed header are exercised
        assert wide.height < MAX_DESKTOP_PX
        assert paper.pages >= 10
