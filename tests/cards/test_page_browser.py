"""The page in a real headless browser (Debian's Chromium through Playwright): it loads with no
console error, draws something (the screenshot is not blank), sorts the key-PR table, leads to a
PR's entry (links, the jump box, a URL's fragment) opening what is collapsed, fits a phone, keeps
hostile PR text inert, and prints to PDF with every collapsed section open. (The layout facts are
measured in ``test_page_layout.py``.)"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from page_support import browser, chromium_path, compared_w16
from PIL import Image

from bot.cards.html import render_html
from bot.cards.pdf import print_pdf
from bot.config import Settings
from bot.models import Digest
from cards.test_html import HOSTILE_TITLE, HOSTILE_URL


@pytest.fixture(scope="module")
def w16(verl_settings: Settings) -> Digest:
    return compared_w16(verl_settings)


def _open(context, path: Path):  # type: ignore[no-untyped-def]
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith(("file:", "data:"))
            else None)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, problems


def test_the_page_loads_clean_and_is_not_blank(w16: Digest, tmp_path: Path) -> None:
    path = tmp_path / "w16.html"
    path.write_text(render_html(w16), encoding="utf-8")
    with browser() as context:
        page, problems = _open(context, path)
        shot = page.screenshot(full_page=True)
        assert page.title().startswith("2026 第 16 周")
        images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth])")
        assert images
        assert all(done and width > 0 for done, width in images)
        # Sort the key-PR table by importance, ascending then descending.
        header = page.locator("#key-pr-table th button", has_text="重要性 / 洞察")
        header.click()
        ascending = page.eval_on_selector_all("#key-pr-table tbody tr td:nth-child(2)",
                                              "els => els.map(e => Number(e.dataset.sort))")
        header.click()
        descending = page.eval_on_selector_all("#key-pr-table tbody tr td:nth-child(2)",
                                               "els => els.map(e => Number(e.dataset.sort))")
        assert ascending == sorted(ascending)
        assert descending == sorted(ascending, reverse=True)
        assert len(ascending) == w16.stats.key_pr_count
        assert problems == []
    image = Image.open(io.BytesIO(shot)).convert("RGB")
    assert image.height > 3000
    histogram = image.convert("L").histogram()
    ink = sum(histogram[:128]) / (image.width * image.height)
    colours = image.resize((300, 3000)).getcolors(maxcolors=1 << 20) or []
    assert ink > 0.01, f"the screenshot looks blank ({ink:.2%} ink)"
    assert len(colours) > 500, f"the screenshot looks blank ({len(colours)} colours)"


def test_links_and_the_jump_box_lead_to_a_pr_and_open_its_section(w16: Digest, tmp_path: Path) -> None:
    path = tmp_path / "w16.html"
    path.write_text(render_html(w16, charts=()), encoding="utf-8")
    number = w16.key_prs[0]
    with browser() as context:
        page, problems = _open(context, path)
        opened = "() => Array.from(document.querySelectorAll('details.part')).map(d => d.open)"
        assert page.evaluate(opened) == [False, False]  # the label view and every PR's entry start collapsed
        page.locator(f"#key-pr-table a[href='#pr-{number}']").click()
        assert page.evaluate("document.getElementById('all-prs').open")
        assert page.evaluate("location.hash") == f"#pr-{number}"
        assert page.locator(f"#pr-{number}").is_visible()
        page.evaluate("document.getElementById('all-prs').open = false")
        page.fill("#jump-pr", f"#{number}")
        page.press("#jump-pr", "Enter")
        assert page.evaluate("document.getElementById('all-prs').open")
        assert page.locator(f"#pr-{number}").is_visible()
        page.fill("#jump-pr", "99999")
        page.press("#jump-pr", "Enter")
        assert page.inner_text("#jump-note") == "本报告中没有 #99999"
        fresh = context.new_page()
        fresh.goto(path.as_uri() + f"#pr-{w16.prs[-1].number}")
        fresh.wait_for_load_state("load")
        assert fresh.locator(f"#pr-{w16.prs[-1].number}").is_visible()
        assert problems == []


def test_the_page_fits_a_phone(w16: Digest, tmp_path: Path) -> None:
    path = tmp_path / "w16.html"
    path.write_text(render_html(w16, charts=()), encoding="utf-8")
    with browser() as context:
        page, problems = _open(context, path)
        page.set_viewport_size({"width": 390, "height": 844})
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
        assert problems == []


def test_hostile_pr_text_stays_inert_in_the_browser(w16: Digest, tmp_path: Path) -> None:
    first = w16.prs[0]
    assert first.analysis is not None
    analysis = first.analysis.model_copy(update={
        "summary": HOSTILE_TITLE + " ![tracker](https://evil.test/pixel.png) [click](javascript:window.pwned=4)",
        "key_points": ('<img src="https://evil.test/x.png" onerror="window.pwned = 5">', "`code` **bold**"),
        "recommendation": first.analysis.recommendation.model_copy(update={"reason": HOSTILE_TITLE})})
    prs = (first.model_copy(update={"title": HOSTILE_TITLE, "url": HOSTILE_URL, "analysis": analysis}),
           *w16.prs[1:])
    hostile = w16.model_copy(update={"prs": prs, "headline": HOSTILE_TITLE,
                                     "highlights": (f'<a href="{HOSTILE_URL}">click</a>', *w16.highlights)})
    path = tmp_path / "hostile.html"
    path.write_text(render_html(hostile, charts=()), encoding="utf-8")
    with browser() as context:
        page, problems = _open(context, path)
        page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("script").count() == 1
        handlers = page.evaluate("Array.from(document.querySelectorAll('*')).flatMap(e => "
                                 "Array.from(e.attributes).map(a => a.name)).filter(n => n.startsWith('on'))")
        assert handlers == []
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
        assert hrefs
        assert not [h for h in hrefs if not h.startswith(("https://", "#"))]
        assert page.locator("img").count() == 0
        assert HOSTILE_TITLE in page.inner_text("h1 ~ p.headline")
        page.locator("#key-pr-table th button").first.click()
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert problems == []


def test_the_page_prints_to_pdf_with_its_collapsed_sections_open(w16: Digest) -> None:
    """The browser's own print (CSS ``::details-content``) prints what is collapsed, as the PDF does."""
    import pypdfium2

    def pages(pdf: bytes) -> tuple[int, str]:
        document = pypdfium2.PdfDocument(pdf)
        try:
            text = "".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
            return len(document), text
        finally:
            document.close()

    browser_print = print_pdf(render_html(w16, charts=()), chromium=chromium_path())
    expanded = print_pdf(render_html(w16, charts=(), expanded=True), chromium=chromium_path())
    assert browser_print.startswith(b"%PDF-")
    count, text = pages(browser_print)
    open_count, open_text = pages(expanded)
    assert count == open_count > 10
    assert " ".join(text.split()) == " ".join(open_text.split())
    entry = w16.prs[-1]  # the last entry of the collapsed list of every PR
    assert entry.analysis is not None
    assert f"#{entry.number}" in text
    assert "".join(entry.analysis.recommendation.reason.split())[:12] in "".join(text.split())
